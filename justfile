# crd-audit developer recipes (https://github.com/casey/just). Plain cargo works too.

# The main job on the bundled examples (no cluster needed).
demo:
    -cargo run --release -- validate --crd examples/crds examples/objects
    -cargo run --release -- check examples/crds

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

# Schema validation throughput (compare with `oracle bench`).
bench:
    cargo bench --bench schema_validation

# Whole-process throughput against `oracle validate` (needs ../shared/oracle/build.sh once).
bench-process case="gateway-api-standard-httproutes":
    benches/whole_process.sh {{case}}
