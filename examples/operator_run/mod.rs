//! What the scale examples share: starting the release operator against the current
//! KUBECONFIG, reading its metrics and its process figures, and reading reports.

use kube::api::{Api, ApiResource, DynamicObject};
use kube::core::GroupVersionKind;

/// A field of `/proc/PID/status` in kB (`VmRSS:`, `VmHWM:`, `Threads:`), 0 when unreadable.
pub fn proc_status(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// The SchemaAudit reports of every CRD.
pub fn report_api(client: &kube::Client) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("crd-audit.dev", "v1alpha1", "SchemaAudit");
    Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(&gvk, "schemaaudits"),
    )
}

/// The status of a report's condition.
pub fn condition(r: &DynamicObject, ty: &str) -> Option<String> {
    r.data["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == ty)
        .and_then(|c| c["status"].as_str().map(str::to_string))
}

/// `crd-audit controller` (`$CRD_AUDIT_BIN`, default the release build) against the current
/// KUBECONFIG, serving its metrics on 127.0.0.1:PORT.
pub fn start_operator(port: u16) -> std::process::Child {
    let kc = std::env::var("KUBECONFIG").unwrap_or_default();
    let bin = std::env::var("CRD_AUDIT_BIN").unwrap_or_else(|_| "target/release/crd-audit".into());
    std::process::Command::new(&bin)
        .args([
            "controller",
            "--kubeconfig",
            &kc,
            "--metrics-addr",
            &format!("127.0.0.1:{port}"),
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("target/release/crd-audit (cargo build --release first)")
}

/// The operator's metrics text (empty when they cannot be read).
pub fn metrics(port: u16) -> String {
    std::process::Command::new("curl")
        .args(["-s", &format!("http://127.0.0.1:{port}/metrics")])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}
