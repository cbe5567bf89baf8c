//! Scale test of the operator against a local API server (not run in CI):
//!
//!   KUBECONFIG=$(tests/testenv/up.sh) cargo run --release --example scale [CRDS] [OBJECTS]
//!
//! Creates CRDS CRDs (default 200) and OBJECTS objects (default 100,000; a tenth of them in
//! the first CRD), starts the release `crd-audit controller`, and reports its peak RSS, the
//! time to the first complete audit, the time from a tightening CRD update to the updated
//! report of the big CRD, and the API requests per second it issued.

use crd_audit::operator::kube::Kube;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn crd(i: usize, sizes: &[&str]) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("s{i}s.scale.crd-audit.dev")},
        "spec": {"group": "scale.crd-audit.dev", "scope": "Namespaced",
            "names": {"plural": format!("s{i}s"), "kind": format!("S{i}")},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
                    "properties": {"size": {"type": "string", "enum": sizes}, "n": {"type": "integer", "maximum": 1000000}}}}}}}]}})
}

fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let crds = args.first().copied().unwrap_or(200);
    let objects = args.get(1).copied().unwrap_or(100_000);
    let kc = std::env::var("KUBECONFIG").expect("KUBECONFIG");
    let kube = Kube::from_kubeconfig(std::path::Path::new(&kc), None).unwrap();
    let crd_path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    // The operator's namespace (its Lease) and the report CRD, as manifests/ installs them.
    let _ = kube.apply(
        "/api/v1/namespaces/crd-audit",
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "crd-audit"}}),
        "scale",
    );
    let report_crd = crd_audit::operator::manifests::schema_audit_crd();
    let _ = kube.apply(
        &format!("{crd_path}/schemaaudits.crd-audit.dev"),
        &report_crd,
        "scale",
    );
    for i in 0..crds {
        let c = crd(i, &["small", "large"]);
        let _ = kube.apply(
            &format!("{crd_path}/s{i}s.scale.crd-audit.dev"),
            &c,
            "scale",
        );
    }
    std::thread::sleep(Duration::from_secs(5));
    let big = objects / 10;
    let per_crd = (objects - big) / (crds - 1).max(1);
    let started = Instant::now();
    let threads = 8;
    std::thread::scope(|s| {
        for t in 0..threads {
            let kube = kube.clone();
            s.spawn(move || {
                for i in 0..crds {
                    let n = if i == 0 { big } else { per_crd };
                    for j in (t..n).step_by(threads) {
                        let obj = json!({"apiVersion": "scale.crd-audit.dev/v1", "kind": format!("S{i}"),
                            "metadata": {"name": format!("o{j}"), "namespace": "default"},
                            "spec": {"size": if j % 2 == 0 { "small" } else { "large" }, "n": j}});
                        let _ = kube.create(&format!("/apis/scale.crd-audit.dev/v1/namespaces/default/s{i}s"), &obj);
                    }
                }
            });
        }
    });
    println!(
        "created {crds} CRDs and {objects} objects in {:?}",
        started.elapsed()
    );
    let port = 18099;
    let mut child = std::process::Command::new("target/release/crd-audit")
        .args([
            "controller",
            "--kubeconfig",
            &kc,
            "--metrics-addr",
            &format!("127.0.0.1:{port}"),
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("target/release/crd-audit (cargo build --release first)");
    let t0 = Instant::now();
    let report = |i: usize| {
        kube.get(&format!(
            "/apis/crd-audit.dev/v1alpha1/schemaaudits/s{i}s.scale.crd-audit.dev"
        ))
        .ok()
    };
    let done = |r: &Value| {
        r["status"]["conditions"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "InstancesValid" && c["status"] == "True")
        })
    };
    loop {
        if (0..crds).all(|i| report(i).is_some_and(|r| done(&r))) {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let first_audit = t0.elapsed();
    let t1 = Instant::now();
    let _ = kube.apply(
        &format!("{crd_path}/s0s.scale.crd-audit.dev"),
        &crd(0, &["small"]),
        "scale",
    );
    loop {
        if report(0).is_some_and(|r| {
            r["status"]["observedGeneration"] == 2
                && r["status"]["conditions"].as_array().is_some_and(|c| {
                    c.iter()
                        .any(|c| c["type"] == "InstancesValid" && c["status"] == "False")
                })
        }) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let revalidation = t1.elapsed();
    let metrics = ureq::get(&format!("http://127.0.0.1:{port}/metrics"))
        .call()
        .ok()
        .and_then(|r| r.into_string().ok())
        .unwrap_or_default();
    let requests: f64 = metrics
        .lines()
        .find(|l| l.starts_with("crd_audit_api_requests_total"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0.0);
    let rss = peak_rss_kib(child.id());
    let _ = child.kill();
    let _ = child.wait();
    println!(
        "peak RSS {:.1} MiB; first complete audit {:?}; tightening of a {big}-object CRD reflected in {:?}; {:.1} API requests/s",
        rss as f64 / 1024.0,
        first_audit,
        revalidation,
        requests / t0.elapsed().as_secs_f64()
    );
}
