//! How fast the CRD change gate answers, against a local API server (not run in CI):
//!
//!   KUBECONFIG=$(tests/testenv/up.sh) cargo run --release --example gate_scale [OBJECTS]
//!
//! Creates a CRD with OBJECTS objects (default 10,000; half of them `size: medium`), then
//! times the gate's answer (`crd_audit::gate::review::Gate::review`, the code behind
//! `POST /validate-crd` without TLS) to two AdmissionReviews, each five times:
//! - an UPDATE that narrows the `size` enum to `small`: every object is listed (pages of 500)
//!   and judged, and half of them are stuck (the figure: its median);
//! - an UPDATE that only adds a label: no judging (the figure: its median);
//!
//! and, for comparison, the same objects read in pages of 500 from etcd, nothing judged (the
//! gate reads the rest of the first page from the API server's cache when it is small).
//!
//! It fails when the answers are not what the objects make them.

use futures::StreamExt;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const GROUP: &str = "gatescale.crd-audit.dev";
const NAME: &str = "gauges.gatescale.crd-audit.dev";

fn crd(sizes: &[&str]) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": NAME},
        "spec": {"group": GROUP, "scope": "Namespaced",
            "names": {"plural": "gauges", "singular": "gauge", "kind": "Gauge", "listKind": "GaugeList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
                    "properties": {"size": {"type": "string", "enum": sizes}, "n": {"type": "integer"}}}}}}}]}})
}

fn review(old: &Value, new: &Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": "gate-scale", "operation": "UPDATE", "name": NAME,
            "kind": {"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition"},
            "resource": {"group": "apiextensions.k8s.io", "version": "v1", "resource": "customresourcedefinitions"},
            "userInfo": {"username": "admin"},
            "object": new, "oldObject": old, "dryRun": false
        }
    }))
    .unwrap()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::main]
async fn main() {
    let objects: usize = std::env::args()
        .nth(1)
        .map_or(10_000, |a| a.parse().expect("OBJECTS is a number"));
    let client = kube::Client::try_default().await.expect("a kubeconfig");
    let crds: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &crd_audit::cluster::resources::crd_resource(),
    );
    let loose = crd(&["small", "medium", "large"]);
    let apply = PatchParams::apply("gate-scale").force();
    crds.patch(NAME, &apply, &Patch::Apply(&loose))
        .await
        .unwrap();
    let resource = kube::core::ApiResource {
        group: GROUP.into(),
        version: "v1".into(),
        api_version: format!("{GROUP}/v1"),
        kind: "Gauge".into(),
        plural: "gauges".into(),
    };
    let gauges: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &resource);
    // Served once established.
    let t = Instant::now();
    while gauges.list(&ListParams::default().limit(1)).await.is_err() {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the CRD is not served"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let t = Instant::now();
    futures::stream::iter(0..objects)
        .map(|i| {
            let gauges = gauges.clone();
            let body = json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Gauge",
                "metadata": {"name": format!("g{i:06}")},
                "spec": {"size": if i % 2 == 0 { "small" } else { "medium" }, "n": i}});
            async move {
                let name = format!("g{i:06}");
                gauges
                    .patch(
                        &name,
                        &PatchParams::apply("gate-scale"),
                        &Patch::Apply(&body),
                    )
                    .await
                    .unwrap();
            }
        })
        .buffer_unordered(32)
        .collect::<Vec<()>>()
        .await;
    eprintln!("{objects} objects in place after {:.1?}", t.elapsed());
    let current = serde_json::to_value(crds.get(NAME).await.unwrap()).unwrap();
    let mut tightened = current.clone();
    tightened["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["size"]["enum"] = json!(["small"]);
    let mut relabelled = current.clone();
    relabelled["metadata"]["labels"] = json!({"team": "gauges"});

    let config = crd_audit::audit::config::Config {
        gate: crd_audit::audit::config::GateMode::Warn,
        ..Default::default()
    };
    let gate = crd_audit::gate::review::Gate::new(
        client.clone(),
        config,
        crd_audit::gate::GateMetrics::default(),
        crd_audit::judging_pool::JudgingPool::one_per_core(),
    );
    // For comparison: the objects in pages of 500 from etcd, nothing judged.
    let mut listed = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let mut n = 0;
        let mut params = ListParams::default().limit(500);
        loop {
            let page = gauges.list(&params).await.unwrap();
            n += page.items.len();
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                Some(c) => params = params.continue_token(&c),
                None => break,
            }
        }
        assert_eq!(n, objects);
        listed.push(t.elapsed());
    }
    let (mut judged, mut unjudged) = (Vec::new(), Vec::new());
    let stuck = objects / 2;
    let expected = format!(
        "crd-audit: {stuck} of {objects} stored gauges become invalid under v1: {stuck} stuck (every update refused), 0 tolerated"
    );
    for _ in 0..5 {
        let t = Instant::now();
        let (answer, verdict) = gate.review(&review(&current, &tightened)).await;
        judged.push(t.elapsed());
        let response = answer.response.expect("a response");
        let warnings = response.warnings.unwrap_or_default();
        assert_eq!(verdict.label(), "warned", "{warnings:?}");
        assert_eq!(warnings.first(), Some(&expected), "{warnings:?}");
        let t = Instant::now();
        let (answer, verdict) = gate.review(&review(&current, &relabelled)).await;
        unjudged.push(t.elapsed());
        assert_eq!(verdict.label(), "allowed");
        assert!(answer.response.expect("a response").warnings.is_none());
    }
    println!("{expected}");
    println!(
        "tightening, {objects} objects listed and judged: median {:.2?} (runs {:?})",
        median(judged.clone()),
        judged
    );
    println!(
        "pages of 500 from etcd, nothing judged: median {:.2?} (runs {:?})",
        median(listed.clone()),
        listed
    );
    println!(
        "a change without schema change: median {:.2?} (runs {:?})",
        median(unjudged.clone()),
        unjudged
    );
}
