# crd-audit developer recipes (https://github.com/casey/just). Plain cargo works too.

# The main job on the bundled examples (no cluster needed).
demo:
    -cargo run --release -- validate --crd examples/crds examples/objects
    -cargo run --release -- check examples/crds
    -cargo run --release -- diff examples/crds/widgets.yaml examples/revisions/widgets-v2.yaml
    -cargo run --release -- plan examples/revisions/widgets-v2.yaml --current examples/crds/widgets.yaml --objects examples/objects

# The whole test suite (what CI runs; starts a local kube-apiserver for the e2e test).
test:
    cargo test

# Only the end-to-end test against the local kube-apiserver + etcd (tests/testenv).
e2e:
    CRD_AUDIT_E2E=required cargo test --test e2e operator:: -- --nocapture

lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings
    bash scripts/install-cargo-deny.sh
    cargo deny check bans licenses sources

build:
    cargo build --release

# Install the release binary as the kubectl plugin `kubectl crd-audit` (kubectl-crd_audit in
# DIR, default ~/.local/bin).
install-plugin dir="":
    bash scripts/install-kubectl-plugin.sh {{dir}}

# The static binary the Docker image ships (same steps as the Dockerfile).
static:
    bash scripts/build-static.sh

# Run the operator from a laptop against the current kubeconfig context (apply
# manifests/schemaaudit-crd.yaml first; no leader election outside a pod).
run:
    cargo run --release -- controller --config config/crd-audit.yaml --metrics-addr 127.0.0.1:8080

# Regenerate the report CRD in the chart, and manifests/ from the chart (helm template).
manifests:
    cargo run --release -- manifests > charts/crd-audit/crds/schemaaudit-crd.yaml
    CRD_AUDIT_UPDATE_MANIFESTS=1 cargo test --test chart manifests_are_what_the_chart_renders

# Regenerate the command-line reference (docs/cli) and the man pages (docs/man) from clap.
docs:
    CRD_AUDIT_UPDATE_DOCS=1 cargo test --test cli_reference

# Schema and CEL validation throughput (compare with `oracle bench`).
bench:
    cargo bench -p crd-audit-engine --bench schema_validation

# Whole-process throughput against `oracle validate` (needs ../shared/oracle/build.sh once).
bench-process case="gateway-api-standard-httproutes":
    benches/whole_process.sh {{case}}

# Crossplane-scale test against the standalone apiextensions-apiserver 1.36 (not in CI):
# 2,000 generated CRDs (129 MiB of YAML) and 10,000 objects.
crossplane-scale:
    cargo build --release --features system-allocator
    python3 scripts/crossplane-crds.py 2000 target/crossplane 5
    KUBECONFIG=$(bash tests/testenv/apiext-up.sh) cargo run --release --features system-allocator --example crossplane_scale -- target/crossplane

# Where the bytes of compiled CRDs go (the generated set of `crossplane-scale`).
footprint:
    python3 scripts/crossplane-crds.py 2000 target/crossplane 5
    cargo bench -p crd-audit-engine --bench compiled_footprint -- target/crossplane/crds

ci:
    bash .ci/run

# Scale test against the local API server (not in CI): 200 CRDs, 100,000 objects.
scale:
    cargo build --release --features system-allocator
    KUBECONFIG=$(bash tests/testenv/up.sh --authorization-mode AlwaysAllow) cargo run --release --features system-allocator --example scale 200 100000
