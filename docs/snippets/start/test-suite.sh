# needs: cargo
cargo test
