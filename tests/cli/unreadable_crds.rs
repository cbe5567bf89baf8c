//! A CRD the API server serves but crd-audit cannot read is one policy everywhere: an
//! internal error that names the CRD and the reason, and the other CRDs are used all the
//! same. A real API server validates CRDs and cannot serve such a CRD, so these tests answer
//! the commands' requests with a few canned routes on loopback (plain HTTP).

use super::common::{run_env_within, temp_file, text};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::time::Duration;

/// A CRD the engine cannot read (a version that is no object) and a good one.
fn crds() -> Value {
    let good = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com", "uid": "u1", "generation": 1},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object", "properties": {"size": {"type": "string", "enum": ["small"]}}}}}}}]},
        "status": {"storedVersions": ["v1"]}});
    let broken = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "broken.example.com", "uid": "u2", "generation": 1},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "broken", "kind": "Broken"}, "versions": ["v1"]}});
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinitionList",
        "metadata": {"resourceVersion": "1"}, "items": [broken, good]})
}

/// Answers on loopback until the test ends: `/version`, the CRD list, and an empty list of
/// every CRD's objects. Returns a kubeconfig that points at it.
fn serve() -> std::path::PathBuf {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    return;
                }
                let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
                // Skip the headers (requests have no body here).
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) <= 2 {
                        break;
                    }
                }
                let path = path.split('?').next().unwrap_or("");
                let (code, body) = if path == "/version" {
                    (
                        200,
                        json!({"major": "1", "minor": "33", "gitVersion": "v1.33.0"}),
                    )
                } else if path == "/apis/apiextensions.k8s.io/v1/customresourcedefinitions" {
                    (200, crds())
                } else if path.starts_with("/apis/example.com/v1/") {
                    (
                        200,
                        json!({"apiVersion": "example.com/v1", "kind": "List",
                        "metadata": {"resourceVersion": "1"}, "items": []}),
                    )
                } else {
                    (
                        404,
                        json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                        "reason": "NotFound", "code": 404, "message": "not here"}),
                    )
                };
                let body = serde_json::to_vec(&body).unwrap();
                let head = format!(
                    "HTTP/1.1 {code} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(head.as_bytes());
                let _ = stream.write_all(&body);
                let _ = stream.flush();
                let _ = stream.read(&mut [0u8; 1]);
            });
        }
    });
    let config = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: http://127.0.0.1:{port}\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\ncurrent-context: fake\nusers:\n- name: fake\n  user:\n    token: t\n"
    );
    temp_file(
        &format!("unreadable-crds-{port}/kubeconfig"),
        config.as_bytes(),
    )
}

const SAID: &str = "error: internal error: the CRD broken.example.com cannot be read: spec.versions[0]: must be an object";

/// Runs `crd-audit ARGS --kubeconfig` of a fresh [`serve`], and checks that it said the
/// unreadable CRD as an internal error (exit 2).
fn run_on_the_cluster(args: &[&str]) -> std::process::Output {
    let kc = serve();
    let mut args = args.to_vec();
    args.extend(["--kubeconfig", kc.to_str().unwrap()]);
    let out = run_env_within(&args, &[], None, Duration::from_secs(60));
    let stderr = text(&out.stderr);
    assert!(stderr.contains(SAID), "{stderr}");
    assert_eq!(out.status.code(), Some(2), "an internal error: {stderr}");
    out
}

#[test]
fn audit_reports_an_unreadable_crd_and_audits_the_others() {
    let out = run_on_the_cluster(&["audit", "-o", "json"]);
    let rows: Vec<Value> = text(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let names: Vec<&str> = rows.iter().filter_map(|r| r["crd"].as_str()).collect();
    assert!(names.contains(&"broken.example.com"), "{rows:?}");
    assert!(
        names.contains(&"things.example.com"),
        "the other CRD is audited: {rows:?}"
    );
}

#[test]
fn validate_from_the_cluster_reports_an_unreadable_crd_and_uses_the_others() {
    let obj = temp_file(
        "unreadable-crds-thing.yaml",
        b"apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: a, namespace: ns}\nspec: {size: large}\n",
    );
    let out = run_on_the_cluster(&[
        "validate",
        "--crds-from-cluster",
        "-o",
        "json",
        obj.to_str().unwrap(),
    ]);
    let verdict: Value = serde_json::from_str(text(&out.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(
        verdict["valid"], false,
        "judged by the readable CRD: {verdict}"
    );
}
