# crd-audit developer recipes (https://github.com/casey/just). Plain cargo works too.

# The main job on the bundled examples (no cluster needed).
demo:
    cargo run --release -- check examples/crds

# The whole test suite (what CI runs).
test:
    cargo test

lint:
    cargo fmt --all -- --check
    cargo clippy --all-targets -- -D warnings

build:
    cargo build --release

ci:
    bash .ci/run
