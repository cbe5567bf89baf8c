//! Where CI and GitOps look (`action.yml`, `.pre-commit-hooks.yaml`, `scripts/ci/`): the
//! shell tests of `tests/ci_integrations/`, each run with bash and the binary under test in
//! `CRD_AUDIT`. A test prints one line a check and `N passed, N failed`; it exits 0 when
//! every check passed, 77 when a tool it needs is missing (under CI, `CI` set, or
//! `CRD_AUDIT_E2E=required`, the tests fail instead, as `tests/chart.rs` does for Helm).
//! Run one by hand: `CRD_AUDIT=target/debug/crd-audit bash tests/ci_integrations/NAME.sh`.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Whether a tool the tests need must be there.
fn tools_required() -> bool {
    std::env::var("CRD_AUDIT_E2E").is_ok_and(|v| v == "required")
        || std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// Runs `tests/ci_integrations/<script>`; fails with its output unless it passed (or was
/// skipped for a missing tool where that is allowed).
fn run(script: &str) {
    let path = root().join("tests/ci_integrations").join(script);
    let out = Command::new("bash")
        .arg(&path)
        .env("CRD_AUDIT", env!("CARGO_BIN_EXE_crd-audit"))
        .current_dir(root())
        .output()
        .expect("bash runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    match out.status.code() {
        Some(0) => println!("{text}"),
        Some(77) if !tools_required() => {
            eprintln!("NOTICE: tests/ci_integrations/{script} skipped:\n{text}")
        }
        _ => panic!(
            "tests/ci_integrations/{script} failed ({}):\n{text}",
            out.status
        ),
    }
}

/// scripts/ci/crd-changes.sh, the action's logic, on a scratch repository.
#[test]
fn action_script() {
    run("action-script.sh");
}

/// The pre-commit hooks, run by pre-commit (scripts/install-pre-commit.sh).
#[test]
fn pre_commit_hooks() {
    run("pre-commit.sh");
}

/// action.yml and .pre-commit-hooks.yaml as GitHub and pre-commit read them; actionlint and
/// shellcheck.
#[test]
fn metadata() {
    run("metadata.sh");
}

/// scripts/ci/install-crd-audit.sh on a release laid out as the release workflow makes it.
#[test]
fn install_script() {
    run("install.sh");
}
