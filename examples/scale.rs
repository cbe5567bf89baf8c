//! Scale test of the operator against a local API server (not run in CI):
//!
//!   KUBECONFIG=$(tests/testenv/up.sh) cargo run --release --example scale [CRDS] [OBJECTS]
//!
//! Creates CRDS CRDs (default 200) and OBJECTS objects (default 100,000; a tenth of them in
//! the first CRD), starts the release `crd-audit controller`, and reports its peak RSS, the
//! time to the first complete audit, the time from a tightening CRD update to the updated
//! report of the big CRD, the write requests per second it issued, and its thread count.

use futures::StreamExt;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

#[path = "operator_run/mod.rs"]
mod operator_run;
use operator_run::{condition, cpu_at_rest, metrics, proc_status, report_api, start_operator};

fn crd(i: usize, sizes: &[&str]) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("s{i}s.scale.crd-audit.dev")},
        "spec": {"group": "scale.crd-audit.dev", "scope": "Namespaced",
            "names": {"plural": format!("s{i}s"), "kind": format!("S{i}")},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
                    "properties": {"size": {"type": "string", "enum": sizes}, "n": {"type": "integer", "maximum": 1000000}}}}}}}]}})
}

fn crd_api(client: &kube::Client) -> Api<DynamicObject> {
    Api::all_with(
        client.clone(),
        &crd_audit::cluster::resources::crd_resource(),
    )
}

async fn apply(api: &Api<DynamicObject>, name: &str, v: &Value) {
    let obj: DynamicObject = serde_json::from_value(v.clone()).unwrap();
    api.patch(
        name,
        &PatchParams::apply("scale").force(),
        &Patch::Apply(&obj),
    )
    .await
    .unwrap();
}

#[tokio::main]
async fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let crds = args.first().copied().unwrap_or(200);
    let objects = args.get(1).copied().unwrap_or(100_000);
    let client = kube::Client::try_default().await.expect("KUBECONFIG");
    let crd_api = crd_api(&client);
    let report_crd: Value =
        serde_json::from_str(&crd_audit::audit::schema_audit::crd_manifest()).unwrap();
    apply(&crd_api, "schemaaudits.crd-audit.dev", &report_crd).await;
    for i in 0..crds {
        apply(
            &crd_api,
            &format!("s{i}s.scale.crd-audit.dev"),
            &crd(i, &["small", "large"]),
        )
        .await;
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    let big = objects / 10;
    let per_crd = (objects - big) / (crds - 1).max(1);
    let started = Instant::now();
    let jobs = (0..crds).flat_map(|i| {
        let n = if i == 0 { big } else { per_crd };
        (0..n).map(move |j| (i, j))
    });
    futures::stream::iter(jobs)
        .for_each_concurrent(16, |(i, j)| {
            let client = client.clone();
            async move {
                let gvk = GroupVersionKind::gvk("scale.crd-audit.dev", "v1", &format!("S{i}"));
                let ar = kube::api::ApiResource::from_gvk_with_plural(&gvk, &format!("s{i}s"));
                let api: Api<DynamicObject> = Api::namespaced_with(client, "default", &ar);
                let obj: DynamicObject = serde_json::from_value(
                    json!({"apiVersion": "scale.crd-audit.dev/v1", "kind": format!("S{i}"),
                    "metadata": {"name": format!("o{j}"), "namespace": "default"},
                    "spec": {"size": if j % 2 == 0 { "small" } else { "large" }, "n": j}}),
                )
                .unwrap();
                let _ = api.create(&PostParams::default(), &obj).await;
            }
        })
        .await;
    println!(
        "created {crds} CRDs and {objects} objects in {:?}",
        started.elapsed()
    );
    let port = 18099;
    let mut child = start_operator(port);
    let t0 = Instant::now();
    let reports = report_api(&client);
    loop {
        let list = reports
            .list(&Default::default())
            .await
            .map(|l| l.items)
            .unwrap_or_default();
        let done = list
            .iter()
            .filter(|r| {
                r.metadata
                    .name
                    .as_deref()
                    .is_some_and(|n| n.ends_with(".scale.crd-audit.dev"))
            })
            .filter(|r| condition(r, "InstancesValid").as_deref() == Some("True"))
            .count();
        if done == crds {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let first_audit = t0.elapsed();
    let settled_rss = proc_status(child.id(), "VmRSS:");
    let t1 = Instant::now();
    apply(&crd_api, "s0s.scale.crd-audit.dev", &crd(0, &["small"])).await;
    loop {
        if let Ok(r) = reports.get("s0s.scale.crd-audit.dev").await
            && r.data["status"]["observedGeneration"] == 2
            && condition(&r, "InstancesValid").as_deref() == Some("False")
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let revalidation = t1.elapsed();
    let busy = t0.elapsed();
    // At rest: once nothing has been written for 10 s, the CPU of the next 60 s.
    let at_rest = cpu_at_rest(
        child.id(),
        port,
        Duration::from_secs(10),
        Duration::from_secs(60),
    )
    .await;
    let metrics = metrics(port);
    let writes: f64 = metrics
        .lines()
        .filter(|l| l.starts_with("crd_audit_api_writes_total"))
        .filter_map(|l| l.split_whitespace().last()?.parse::<f64>().ok())
        .sum();
    let watches = metrics
        .lines()
        .find(|l| l.starts_with("crd_audit_watches "))
        .unwrap_or("")
        .to_string();
    let sockets = std::fs::read_dir(format!("/proc/{}/fd", child.id()))
        .map(|d| {
            d.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .filter(|l| l.to_string_lossy().starts_with("socket:"))
                .count()
        })
        .unwrap_or(0);
    let rss = proc_status(child.id(), "VmHWM:");
    let threads = proc_status(child.id(), "Threads:");
    let _ = child.kill();
    let _ = child.wait();
    println!(
        "peak RSS {:.1} MiB (after the first audit {:.1} MiB); {threads} threads; {sockets} sockets; {watches}; first complete audit {:?}; tightening of a {big}-object CRD reflected in {:?}; {:.1} write requests/s; CPU at rest {:.3} % of a core over 60 s",
        rss as f64 / 1024.0,
        settled_rss as f64 / 1024.0,
        first_audit,
        revalidation,
        writes / busy.as_secs_f64(),
        at_rest * 100.0
    );
    // The goals of the operator at this size (issue: at most 128 MiB, a tightening of the big
    // CRD reflected within 10 s).
    let mut missed = Vec::new();
    if rss > 128 * 1024 {
        missed.push(format!("peak RSS {:.1} MiB > 128 MiB", rss as f64 / 1024.0));
    }
    if revalidation > Duration::from_secs(10) {
        missed.push(format!(
            "tightening reflected after {revalidation:?} > 10 s"
        ));
    }
    if !missed.is_empty() {
        eprintln!("goals missed: {}", missed.join("; "));
        std::process::exit(1);
    }
}
