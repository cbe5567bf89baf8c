//! The verdicts a review can end with, on a mock API server: `/version` says 1.20, and the
//! LIST of objects answers (an empty list) or never does.

use super::*;
use crate::audit::config::GateMode;
use http::{Request, Response};
use kube::client::Body;
use serde_json::{Value, json};

fn crd(maximum: Option<i64>) -> Value {
    let mut n = json!({"type": "integer"});
    if let Some(m) = maximum {
        n["maximum"] = json!(m);
    }
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.gate.test"},
        "spec": {"group": "gate.test", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
                    "properties": {"n": n}}}}}}]},
        "status": {"storedVersions": ["v1"]}})
}

fn review_of(operation: &str, old: Option<Value>, new: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "u1", "operation": operation, "name": "widgets.gate.test",
            "kind": {"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition"},
            "resource": {"group": "apiextensions.k8s.io", "version": "v1", "resource": "customresourcedefinitions"},
            "userInfo": {"username": "admin"}, "object": new, "oldObject": old}}))
    .unwrap()
}

/// A client of a mock server: `/version` is 1.20 (or, `silent`, nothing ever answers); LISTs
/// get an empty list, or no answer.
fn client(lists_answer: bool, silent: bool) -> kube::Client {
    let (svc, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    tokio::spawn(async move {
        let mut unanswered = Vec::new();
        while let Some((req, send)) = handle.next_request().await {
            let body = if silent {
                unanswered.push(send);
                continue;
            } else if req.uri().path() == "/version" {
                json!({"major": "1", "minor": "20", "gitVersion": "v1.20.2"})
            } else if lists_answer {
                json!({"apiVersion": "gate.test/v1", "kind": "WidgetList", "metadata": {}, "items": []})
            } else {
                unanswered.push(send);
                continue;
            };
            send.send_response(Response::new(Body::from(
                serde_json::to_vec(&body).unwrap(),
            )));
        }
    });
    kube::Client::new(svc, "default")
}

fn gate(lists_answer: bool, budget_ms: u64) -> Gate {
    gate_of(client(lists_answer, false), budget_ms)
}

fn gate_of(client: kube::Client, budget_ms: u64) -> Gate {
    let config = Config {
        gate: GateMode::Deny,
        gate_budget: Duration::from_millis(budget_ms),
        ..Config::default()
    };
    Gate::new(
        client,
        config,
        GateMetrics::default(),
        crate::judging_pool::JudgingPool::new(2),
    )
}

fn counted(g: &Gate, verdict: &str) -> u64 {
    g.metrics
        .requests
        .get_or_create(&VerdictLabels {
            verdict: verdict.into(),
        })
        .get()
}

#[tokio::test]
async fn each_verdict_is_answered_and_counted() {
    // Not a review: an error, allowed by the API server's failure policy.
    let g = gate(true, 1000);
    let (r, v) = g.review(b"{not json").await;
    assert_eq!(v, Verdict::Error);
    assert!(
        r.response
            .unwrap()
            .result
            .message
            .contains("not an AdmissionReview")
    );
    assert_eq!(counted(&g, "error"), 1);

    // A create: allowed at once.
    let (r, v) = g.review(&review_of("CREATE", None, crd(Some(3)))).await;
    assert_eq!(v, Verdict::Allowed);
    let r = r.response.unwrap();
    assert!(r.allowed && r.warnings.is_none());

    // A tightening of a CRD without objects: judged, nothing to say.
    let (r, v) = g
        .review(&review_of("UPDATE", Some(crd(None)), crd(Some(3))))
        .await;
    assert_eq!(v, Verdict::Allowed);
    assert!(r.response.unwrap().warnings.is_none());
    assert_eq!(counted(&g, "allowed"), 2);
    let mut registry = prometheus_client::registry::Registry::default();
    registry.register("gate_seconds", "", g.metrics.duration.clone());
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
    assert!(
        text.contains("gate_seconds_count 3\n"),
        "every answer is timed: {text}"
    );

    // A CRD the engine cannot read: allowed, with a warning that says so.
    let mut broken = crd(Some(3));
    broken["spec"] = json!("none");
    let (r, v) = g
        .review(&review_of("UPDATE", Some(crd(None)), broken))
        .await;
    assert_eq!(v, Verdict::Error);
    let r = r.response.unwrap();
    assert!(r.allowed);
    assert!(
        r.warnings.unwrap()[0]
            .starts_with("crd-audit: the stored objects could not be judged: the proposed CRD"),
    );
}

#[tokio::test]
async fn a_list_that_outlasts_the_budget_is_a_timeout_never_a_denial() {
    let g = gate(false, 200);
    let started = Instant::now();
    let (r, v) = g
        .review(&review_of("UPDATE", Some(crd(None)), crd(Some(3))))
        .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(v, Verdict::Timeout);
    let r = r.response.unwrap();
    assert!(r.allowed, "deny mode refuses only for objects judged stuck");
    assert_eq!(
        r.warnings.unwrap(),
        [
            "crd-audit: judged 0 stored objects before the deadline; the rest are audited after the change"
        ]
    );
    assert_eq!(counted(&g, "timeout"), 1);
}

#[tokio::test]
async fn a_server_that_does_not_say_its_release_in_time_is_an_error_not_a_guess() {
    let g = gate_of(client(false, true), 200);
    let (r, v) = g
        .review(&review_of("UPDATE", Some(crd(None)), crd(Some(3))))
        .await;
    assert_eq!(v, Verdict::Error);
    let r = r.response.unwrap();
    assert!(r.allowed);
    assert_eq!(
        r.warnings.unwrap(),
        [
            "crd-audit: the stored objects could not be judged: the API server's /version did not answer in time"
        ]
    );
}
