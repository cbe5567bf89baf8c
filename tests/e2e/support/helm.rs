//! Helm for the chart tests: the binary, and what it renders.

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// Helm 3 (`scripts/install-helm.sh` builds it from its Go module the first time and caches it).
pub fn helm_binary() -> PathBuf {
    let out = Command::new("bash")
        .arg("scripts/install-helm.sh")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "scripts/install-helm.sh: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// The objects `helm template` renders of the chart in `namespace` with these arguments.
pub fn chart_objects(namespace: &str, args: &[&str]) -> Vec<Value> {
    let out = Command::new(helm_binary())
        .args([
            "template",
            "crd-audit",
            "charts/crd-audit",
            "--namespace",
            namespace,
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "helm template {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    crd_audit_engine::load::parse_str("helm template", &text)
        .into_iter()
        .map(|d| d.unwrap().value)
        .filter(|v| !v.is_null())
        .collect()
}
