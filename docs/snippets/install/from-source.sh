# needs: cargo
cargo install --locked --path .
