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

/// The CPU time (user and system) a process has used, in seconds, from `/proc/PID/stat`.
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command (which may hold spaces) start after its ')'.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of stat(5), 12 and 13 after the command.
    // SAFETY: sysconf reads a constant of the system.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    (ticks(11) + ticks(12)) / per_second
}

/// Waits until the operator has written nothing for `quiet` (its `crd_audit_api_writes_total`
/// series unchanged), then measures its CPU over `window`: the share of one core it used.
pub async fn cpu_at_rest(
    pid: u32,
    port: u16,
    quiet: std::time::Duration,
    window: std::time::Duration,
) -> f64 {
    let writes = || {
        metrics(port)
            .lines()
            .filter(|l| l.starts_with("crd_audit_api_writes_total"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut last = writes();
    let mut since = std::time::Instant::now();
    while since.elapsed() < quiet {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        let now = writes();
        if now != last {
            last = now;
            since = std::time::Instant::now();
        }
    }
    let before = cpu_seconds(pid);
    tokio::time::sleep(window).await;
    (cpu_seconds(pid) - before) / window.as_secs_f64()
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
/// KUBECONFIG, serving its metrics on 127.0.0.1:PORT, with the configuration file
/// `$CRD_AUDIT_OPERATOR_CONFIG` when it is set.
pub fn start_operator(port: u16) -> std::process::Child {
    let kc = std::env::var("KUBECONFIG").unwrap_or_default();
    let bin = std::env::var("CRD_AUDIT_BIN").unwrap_or_else(|_| "target/release/crd-audit".into());
    let mut args = vec![
        "controller".to_string(),
        "--kubeconfig".into(),
        kc,
        "--metrics-addr".into(),
        format!("127.0.0.1:{port}"),
    ];
    if let Some(config) = std::env::var_os("CRD_AUDIT_OPERATOR_CONFIG") {
        args.push("--config".into());
        args.push(config.to_string_lossy().into_owned());
    }
    std::process::Command::new(&bin)
        .args(&args)
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
