# shellcheck shell=bash
# Sourced by the scripts that run cargo builds. `without_crate_env COMMAND [ARG...]` runs the
# command without the variables cargo sets for a crate it builds or runs (CARGO_PKG_NAME,
# CARGO_MANIFEST_DIR, OUT_DIR, CARGO_BIN_EXE_<name>, ...), which a script started from a test,
# a build script or `cargo run` inherits. Some dependencies' build scripts watch them (ring's
# `rerun-if-env-changed=CARGO_PKG_NAME`, ...), so a build with them set would not match the
# last build without them: most of the dependency tree would be compiled again, and again by
# the next build without them. (`env -u`: a name such as CARGO_BIN_EXE_crd-audit is not one
# the shell can unset.)
without_crate_env() {
    local pattern='^(OUT_DIR|CARGO_(PKG_[A-Z_]+|MANIFEST_(DIR|PATH|LINKS)|CRATE_NAME|BIN_NAME|BIN_EXE_.+|PRIMARY_PACKAGE|TARGET_TMPDIR|RUSTC_CURRENT_DIR))$'
    local removed=() entry name
    while IFS= read -r -d '' entry; do
        name=${entry%%=*}
        if [[ $name =~ $pattern ]]; then
            removed+=(-u "$name")
        fi
    done < <(env -0)
    env "${removed[@]}" "$@"
}
