//! End-to-end: the `crd-audit controller` process against a real kube-apiserver 1.20 and etcd
//! on loopback, started by the project's harness (`tests/testenv/up.sh`; the first run builds
//! kube-apiserver from Debian's source package, later runs reuse the cached binary). The
//! controller runs with a ServiceAccount token bound to the shipped RBAC (`manifests/`).
//!
//! `CRD_AUDIT_E2E=off` skips; `CRD_AUDIT_E2E=required` (what `.ci/run` sets) fails when the
//! API server cannot be started; otherwise the test is skipped with a notice when it cannot.
//!
//! The tests by area: `lifecycle`, `outages`, `kubeconfigs`, `cel` and `ratcheting` (against
//! the standalone apiextensions-apiserver 1.36), `policy_reports`; their shared helpers here.

use crate::support::*;
use serde_json::{Value, json};

mod cel;
mod kubeconfigs;
mod lifecycle;
mod outages;
mod policy_reports;
mod ratcheting;

const CRD: &str = "things.e2e.crd-audit.dev";
const GROUP: &str = "e2e.crd-audit.dev";

fn install(env: &TestEnv) {
    for f in [
        "manifests/namespace.yaml",
        "manifests/schemaaudit-crd.yaml",
        "manifests/rbac.yaml",
        "manifests/rbac-annotate.yaml",
    ] {
        apply_file(&env.admin, f);
    }
}

/// The things CRD (revision 1) and its three objects, and a controller (named `name`) that
/// has reported them clean.
fn audited_things(env: &TestEnv, name: &str) -> Controller {
    install(env);
    things(env, 1);
    create_things(env);
    let admin_kc = env.kubeconfig.display().to_string();
    let c = controller(&env.run_dir, name, &["--kubeconfig", &admin_kc], &[]);
    wait_for("a clean report", || {
        report(&env.admin, CRD)
            .ok()
            .filter(|r| condition(r, "InstancesValid").is_some_and(|c| c.0 == "True"))
    });
    c
}

fn things(env: &TestEnv, revision: u8) {
    apply(&env.admin, &things_crd(CRD, GROUP, revision));
}

fn create_things(env: &TestEnv) {
    wait_for("the things CRD to be served", || {
        env.admin
            .get("/apis/e2e.crd-audit.dev/v1/namespaces/default/things")
            .ok()
    });
    for (name, size) in [("a", "small"), ("b", "medium"), ("c", "small")] {
        apply(
            &env.admin,
            &json!({"apiVersion": "e2e.crd-audit.dev/v1", "kind": "Thing",
                "metadata": {"name": name, "namespace": "default"}, "spec": {"size": size}}),
        );
    }
}

fn invalid_names(r: &Value) -> Vec<String> {
    r["status"]["invalidObjects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap().to_string())
        .collect()
}

fn operator_config(env: &TestEnv) -> String {
    let config = env.run_dir.join("crd-audit.yaml");
    std::fs::write(
        &config,
        "annotateObjects: true\nexcludeGroups: ['excluded.*']\n",
    )
    .unwrap();
    config.display().to_string()
}

/// The shipped RBAC, the things CRD (revision 1) with its objects, and a leader-elected
/// replica (`name`, ServiceAccount kubeconfig, annotations on) that has reported them clean.
fn leader_with_clean_report(env: &TestEnv, name: &str) -> (Controller, Vec<String>) {
    install(env);
    things(env, 1);
    create_things(env);
    let kc = env.service_account_kubeconfig().display().to_string();
    let config = operator_config(env);
    let ha: Vec<String> = ["--kubeconfig", &kc, "--config", &config, "--leader-elect"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let args: Vec<&str> = ha.iter().map(String::as_str).collect();
    let c = controller(&env.run_dir, name, &args, &[]);
    wait_for("a clean report", || {
        report(&env.admin, CRD)
            .ok()
            .filter(|r| condition(r, "InstancesValid").is_some_and(|c| c.0 == "True"))
    });
    (c, ha)
}

/// The standalone apiextensions-apiserver 1.36 (`tests/testenv/apiext-up.sh`), stopped on
/// drop.
struct ApiExt {
    run_dir: std::path::PathBuf,
    kubeconfig: std::path::PathBuf,
}

impl Drop for ApiExt {
    fn drop(&mut self) {
        let _ = std::process::Command::new("bash")
            .arg("tests/testenv/apiext-down.sh")
            .arg(&self.run_dir)
            .status();
    }
}

/// Starts the standalone apiextensions-apiserver 1.36; `None` (the test is skipped) only when
/// end-to-end tests are off or not required and the server cannot be had.
fn start_apiext() -> Option<ApiExt> {
    let mode = std::env::var("CRD_AUDIT_E2E").unwrap_or_default();
    if mode == "off" {
        eprintln!("NOTICE: CRD_AUDIT_E2E=off: end-to-end tests skipped");
        return None;
    }
    let out = std::process::Command::new("bash")
        .arg("tests/testenv/apiext-up.sh")
        .stderr(std::process::Stdio::inherit())
        .output()
        .unwrap();
    if !out.status.success() {
        assert_ne!(
            mode, "required",
            "the apiextensions-apiserver could not be started (../shared/oracle/build.sh with WITH_SERVER=1 builds it)"
        );
        eprintln!("NOTICE: no apiextensions-apiserver 1.36 here; this end-to-end test is skipped");
        return None;
    }
    let kubeconfig = std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    Some(ApiExt {
        run_dir: kubeconfig.parent().unwrap().to_path_buf(),
        kubeconfig,
    })
}
