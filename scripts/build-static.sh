#!/usr/bin/env bash
# Builds the static crd-audit binary exactly as the Dockerfile's build stage does (CI runs
# this outside Docker to prove those steps), checks that it is static and that it runs.
#   scripts/build-static.sh [--target TRIPLE | --platform OS/ARCH] [OUT]
#   scripts/build-static.sh --list-targets
# Default target: x86_64-unknown-linux-gnu. Default OUT: target/static/crd-audit, or
# target/static/TRIPLE/crd-audit for another target. --platform takes the name Docker and krew
# give a target (linux/arm64); --list-targets prints each supported target and its platform.
# On another host, aarch64-unknown-linux-gnu is cross-compiled with Debian's
# gcc-aarch64-linux-gnu and libc6-dev-arm64-cross (installed when missing, as root; the
# release workflow installs them on its runner), and the built binary is run through QEMU:
# binfmt_misc (docker/setup-qemu-action) or qemu-aarch64(-static) on PATH (Debian's
# qemu-user-static, installed when missing, as root).
set -euo pipefail
cd "$(dirname "$0")/.."

# The supported targets: triple, platform, the cross C compiler, the Debian packages that
# give it (with the target's static glibc), the QEMU machine.
TARGETS=(
    "x86_64-unknown-linux-gnu linux/amd64 x86_64-linux-gnu-gcc gcc-x86-64-linux-gnu,libc6-dev-amd64-cross x86_64"
    "aarch64-unknown-linux-gnu linux/arm64 aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu,libc6-dev-arm64-cross aarch64"
)
default_target=x86_64-unknown-linux-gnu

target=$default_target
platform=
out=
while [ $# -gt 0 ]; do
    case $1 in
    --list-targets)
        for t in "${TARGETS[@]}"; do
            read -r triple plat _ <<<"$t"
            echo "$triple $plat"
        done
        exit 0
        ;;
    --target) [ $# -ge 2 ] || { echo "error: --target needs a triple" >&2; exit 2; }; target=$2; shift 2 ;;
    --platform) [ $# -ge 2 ] || { echo "error: --platform needs OS/ARCH" >&2; exit 2; }; platform=$2; shift 2 ;;
    -*) echo "usage: scripts/build-static.sh [--target TRIPLE | --platform OS/ARCH] [OUT] | --list-targets" >&2; exit 2 ;;
    *) [ -z "$out" ] || { echo "error: one OUT only" >&2; exit 2; }; out=$1; shift ;;
    esac
done
entry=
for t in "${TARGETS[@]}"; do
    read -r triple plat _ <<<"$t"
    if { [ -n "$platform" ] && [ "$plat" = "$platform" ]; } || { [ -z "$platform" ] && [ "$triple" = "$target" ]; }; then
        entry=$t
    fi
done
if [ -z "$entry" ]; then
    if [ -n "$platform" ]; then what="platform $platform"; else what="target $target"; fi
    echo "error: unsupported $what; supported:" >&2
    for t in "${TARGETS[@]}"; do
        read -r triple plat _ <<<"$t"
        echo "  $triple ($plat)" >&2
    done
    exit 2
fi
read -r target _ cross_cc cross_packages machine <<<"$entry"
if [ "$target" = "$default_target" ]; then
    out=${out:-${CARGO_TARGET_DIR:-target}/static/crd-audit}
else
    out=${out:-${CARGO_TARGET_DIR:-target}/static/$target/crd-audit}
fi
host=$(rustc -vV | sed -n 's/^host: //p')

# Packages from Debian's archive, when running as root (the Docker build stage).
apt_install() {
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || return 1
    echo "installing $* (Debian)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1 || {
        apt-get update -qq >/dev/null
        apt-get install -y -qq --no-install-recommends "$@" >/dev/null
    }
}

if [ "$target" != "$host" ]; then
    # A cross build: the target's standard library, and a C toolchain for it (the linker, and
    # the C code of ring and mimalloc) with a static glibc.
    if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
        rustup target add "$target" >&2
    fi
    if ! command -v "$cross_cc" >/dev/null; then
        IFS=, read -r -a packages <<<"$cross_packages"
        apt_install "${packages[@]}" || {
            echo "error: cross-compiling for $target needs $cross_cc: apt-get install ${cross_packages//,/ }" >&2
            exit 1
        }
    fi
    # Unless the environment names other tools: cargo's linker, and the cc crate's C compiler
    # and archiver for the target.
    env_triple=${target//-/_}
    linker_var=CARGO_TARGET_${env_triple^^}_LINKER
    cc_var=CC_$env_triple
    ar_var=AR_$env_triple
    export "$linker_var=${!linker_var:-$cross_cc}" "$cc_var=${!cc_var:-$cross_cc}" "$ar_var=${!ar_var:-${cross_cc%-gcc}-ar}"
fi

# The image runs the operator: glibc's malloc (feature system-allocator, src/allocator.rs).
# Run from a test or a build script, the build matches the ones made outside them.
# shellcheck source=scripts/lib/crate-env.sh
source scripts/lib/crate-env.sh
without_crate_env env RUSTFLAGS="-C target-feature=+crt-static" \
    cargo build --release --locked --target "$target" -p crd-audit --features system-allocator
bin=${CARGO_TARGET_DIR:-target}/$target/release/crd-audit
if [ "$target" = "$host" ]; then
    if ! ldd "$bin" 2>&1 | grep -qE "statically linked|not a dynamic executable"; then
        echo "error: $bin is dynamically linked:" >&2
        ldd "$bin" >&2
        exit 1
    fi
else
    # ldd cannot read another machine's binary: no program interpreter, no needed library.
    if readelf -lW "$bin" | grep -q "INTERP" || readelf -dW "$bin" | grep -q "(NEEDED)"; then
        echo "error: $bin is dynamically linked:" >&2
        readelf -dW "$bin" | grep "(NEEDED)" >&2 || true
        exit 1
    fi
fi
mkdir -p "$(dirname "$out")"
cp "$bin" "$out"
if [ "$target" = "$host" ]; then
    version=$("$out" --version)
elif ! version=$("$out" --version 2>/dev/null); then
    # Not through binfmt_misc: QEMU's user-mode emulator directly.
    qemu=$(command -v "qemu-$machine-static" || command -v "qemu-$machine" || true)
    if [ -z "$qemu" ] && apt_install qemu-user-static; then
        qemu=$(command -v "qemu-$machine-static" || true)
    fi
    [ -n "$qemu" ] || {
        echo "error: cannot run $out ($target) here: register QEMU with binfmt_misc or install qemu-user-static" >&2
        exit 1
    }
    version=$("$qemu" "$out" --version)
fi
echo "$version"
case "$version" in
*", glibc malloc)") ;;
*) echo "error: $out was not built with the system allocator: $version" >&2; exit 1 ;;
esac
echo "static binary: $out ($(du -h "$out" | cut -f1))"
