//! The migration's steps against a scripted API server.

use super::*;
use crate::cluster::write_budget::Priority;
use http::{Request, Response};
use kube::client::Body;
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

const CRD: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com";
const LIST: &str = "/apis/example.com/v1/widgets";

fn crd(generation: i64, stored: &[&str]) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com", "generation": generation,
            "resourceVersion": format!("{generation}0")},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                "listKind": "WidgetList"},
            "versions": [
                {"name": "v1alpha1", "served": true, "storage": false,
                    "schema": {"openAPIV3Schema": {"type": "object",
                        "x-kubernetes-preserve-unknown-fields": true}}},
                {"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {
                            "size": {"type": "integer", "maximum": 5}}}}}}}]},
        "status": {"storedVersions": stored, "acceptedNames": {"plural": "widgets",
            "kind": "Widget"}}})
}

fn widget(name: &str, size: i64) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": "1"},
        "spec": {"size": size}})
}

fn status(code: u16, reason: &str, message: &str) -> Response<Body> {
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(Body::from(
            serde_json::to_vec(&json!({"kind": "Status", "apiVersion": "v1",
                "status": "Failure", "reason": reason, "code": code, "message": message}))
            .unwrap(),
        ))
        .unwrap()
}

fn ok(v: &Value) -> Response<Body> {
    Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .body(Body::from(serde_json::to_vec(v).unwrap()))
        .unwrap()
}

/// A scripted server: the CRD (its generation and storedVersions as `crd` holds them), two
/// pages of widgets, and per-object answers to PUT (a queue of status codes; 200 when
/// empty). Every request is logged as `METHOD path?query`, bodies of PUTs kept.
struct Server {
    crd: Arc<Mutex<Value>>,
    puts: Arc<Mutex<HashMap<String, Vec<u16>>>>,
    log: Arc<Mutex<Vec<String>>>,
    bodies: Arc<Mutex<Vec<(String, Value)>>>,
}

fn serve(crd_now: Value, answers: &[(&str, &[u16])]) -> (kube::Client, Server) {
    let (svc, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let server = Server {
        crd: Arc::new(Mutex::new(crd_now)),
        puts: Arc::new(Mutex::new(
            answers
                .iter()
                .map(|(n, a)| (n.to_string(), a.to_vec()))
                .collect(),
        )),
        log: Arc::default(),
        bodies: Arc::default(),
    };
    let (crd, puts, log, bodies) = (
        server.crd.clone(),
        server.puts.clone(),
        server.log.clone(),
        server.bodies.clone(),
    );
    tokio::spawn(async move {
        let page1: Vec<Value> = ["a", "conflicted", "gone"]
            .iter()
            .map(|n| widget(n, 1))
            .collect();
        let page2: Vec<Value> = vec![widget("invalid", 9), widget("flaky", 2)];
        while let Some((req, send)) = handle.next_request().await {
            let (parts, body) = req.into_parts();
            let bytes = body.collect_bytes().await.unwrap_or_default();
            let path = parts.uri.path().to_string();
            let query = parts.uri.query().unwrap_or("").to_string();
            log.lock()
                .unwrap()
                .push(format!("{} {path}?{query}", parts.method));
            let response = match (parts.method.as_str(), path.as_str()) {
                ("GET", CRD) => ok(&crd.lock().unwrap()),
                ("PUT", p) if p == format!("{CRD}/status") => {
                    let sent: Value = serde_json::from_slice(&bytes).unwrap();
                    bodies.lock().unwrap().push((p.to_string(), sent.clone()));
                    let mut now = crd.lock().unwrap();
                    if sent["metadata"]["resourceVersion"] != now["metadata"]["resourceVersion"] {
                        status(409, "Conflict", "the object has been modified")
                    } else {
                        now["status"]["storedVersions"] = sent["status"]["storedVersions"].clone();
                        ok(&now)
                    }
                }
                ("GET", LIST) => {
                    let items = if query.contains("continue=page2") {
                        page2.clone()
                    } else {
                        page1.clone()
                    };
                    let cont = if query.contains("continue=") {
                        ""
                    } else {
                        "page2"
                    };
                    ok(
                        &json!({"apiVersion": "example.com/v1", "kind": "WidgetList",
                        "metadata": {"resourceVersion": "7", "continue": cont},
                        "items": items}),
                    )
                }
                ("GET", p) if p.starts_with("/apis/example.com/v1/namespaces/ns/widgets/") => {
                    let name = p.rsplit('/').next().unwrap();
                    let mut current = widget(name, 1);
                    current["metadata"]["resourceVersion"] = json!("8");
                    ok(&current)
                }
                ("PUT", p) if p.starts_with("/apis/example.com/v1/namespaces/ns/widgets/") => {
                    let name = p.rsplit('/').next().unwrap().to_string();
                    let sent: Value = serde_json::from_slice(&bytes).unwrap();
                    bodies.lock().unwrap().push((name.clone(), sent.clone()));
                    let code = {
                        let mut puts = puts.lock().unwrap();
                        let queue = puts.entry(name.clone()).or_default();
                        if queue.is_empty() {
                            200
                        } else {
                            queue.remove(0)
                        }
                    };
                    match code {
                        200 => ok(&sent),
                        // The object deleted: a Status that names it.
                        404 => Response::builder()
                            .status(404)
                            .header("content-type", "application/json")
                            .body(Body::from(
                                serde_json::to_vec(&json!({"kind": "Status", "apiVersion": "v1",
                                    "status": "Failure", "reason": "NotFound", "code": 404,
                                    "message": format!("widgets.example.com \"{name}\" not found"),
                                    "details": {"name": name, "group": "example.com", "kind": "widgets"}}))
                                .unwrap(),
                            ))
                            .unwrap(),
                        // Its resource not served (an API server starting): the path's 404.
                        1404 => Response::builder()
                            .status(404)
                            .header("content-type", "text/plain")
                            .body(Body::from(b"404 page not found".to_vec()))
                            .unwrap(),
                        409 => status(409, "Conflict", "the object has been modified"),
                        422 => status(
                            422,
                            "Invalid",
                            &format!(
                                "Widget.example.com \"{name}\" is invalid: spec.size: Invalid value: 9: spec.size in body should be less than or equal to 5"
                            ),
                        ),
                        other => status(other, "InternalError", "etcd is away"),
                    }
                }
                _ => status(404, "NotFound", "not found"),
            };
            send.send_response(response);
        }
    });
    (kube::Client::new(svc, "default"), server)
}

#[tokio::test(start_paused = true)]
async fn every_object_is_sent_back_and_refusals_never_stop_the_rest() {
    let (client, server) = serve(
        crd(3, &["v1alpha1", "v1"]),
        &[
            // Not served for a moment (an API server restarting): not gone, written.
            ("a", &[1404, 1404]),
            ("conflicted", &[409]),
            ("gone", &[404]),
            ("invalid", &[422]),
            ("flaky", &[503, 500]),
        ],
    );
    let target = super::target(&client, "widgets.example.com").await.unwrap();
    assert_eq!(
        (target.storage.as_str(), target.stored_versions.clone()),
        ("v1", vec!["v1alpha1".to_string(), "v1".to_string()])
    );
    assert!(!target.migrated());
    let stop = AtomicBool::new(false);
    let mut refusals = Vec::new();
    let done = rewrite(
        &client,
        &target,
        &Writes::paced(0.0, Priority::Migration),
        &mut |r| refusals.push(r),
        &mut |_| {},
        &stop,
    )
    .await
    .unwrap();
    assert_eq!(
        done,
        Rewrite {
            objects: 5,
            rewritten: 2,
            gone: 1,
            refused: 1,
            written_by_others: 1,
            interrupted: false
        }
    );
    assert!(!done.complete());
    assert_eq!(
        refusals,
        [Refusal {
            namespace: "ns".into(),
            name: "invalid".into(),
            message: "Widget.example.com \"invalid\" is invalid: spec.size: Invalid value: 9: spec.size in body should be less than or equal to 5".into()
        }]
    );
    let log = server.log.lock().unwrap().clone();
    // Pages of 500, the second by its continue token; the conflict was neither read again nor
    // sent again (another writer stored it); the server errors were tried again.
    assert!(
        log.iter()
            .any(|l| l.starts_with("GET /apis/example.com/v1/widgets?") && l.contains("limit=500")),
        "{log:?}"
    );
    assert!(log.iter().any(|l| l.contains("continue=page2")), "{log:?}");
    assert!(
        !log.iter()
            .any(|l| l.starts_with("GET /apis/example.com/v1/namespaces/ns/widgets/")),
        "{log:?}"
    );
    let bodies = server.bodies.lock().unwrap();
    let sent: Vec<(&str, &Value)> = bodies
        .iter()
        .filter(|(n, _)| n == "conflicted")
        .map(|(n, b)| (n.as_str(), &b["metadata"]["resourceVersion"]))
        .collect();
    assert_eq!(
        sent,
        [("conflicted", &json!("1"))],
        "the listed object, once"
    );
    assert_eq!(bodies.iter().filter(|(n, _)| n == "flaky").count(), 3);
    // Sent back unchanged: what was listed.
    let a = bodies.iter().find(|(n, _)| n == "a").unwrap();
    assert_eq!(a.1["spec"], json!({"size": 1}));
    assert_eq!(a.1["apiVersion"], "example.com/v1");
}

#[tokio::test(start_paused = true)]
async fn storedversions_are_pruned_only_at_the_generation_migrated() {
    // Unchanged since the target was read: pruned, with the CRD's resourceVersion as
    // precondition (a conflict is read again and tried again).
    let (client, server) = serve(crd(3, &["v1alpha1", "v1"]), &[]);
    let target = super::target(&client, "widgets.example.com").await.unwrap();
    // Another writer bumps the resourceVersion between the read and the write once.
    {
        let mut now = server.crd.lock().unwrap();
        now["metadata"]["resourceVersion"] = json!("31");
    }
    assert_eq!(
        prune(&client, &target, &Writes::paced(0.0, Priority::Migration))
            .await
            .unwrap(),
        Prune::Pruned
    );
    assert_eq!(
        server.crd.lock().unwrap()["status"]["storedVersions"],
        json!(["v1"])
    );
    assert!(
        server
            .bodies
            .lock()
            .unwrap()
            .iter()
            .all(|(p, b)| p.ends_with("/status") && b["metadata"]["resourceVersion"].is_string())
    );

    // A new generation meanwhile: nothing is written.
    let (client, server) = serve(crd(3, &["v1alpha1", "v1"]), &[]);
    let target = super::target(&client, "widgets.example.com").await.unwrap();
    *server.crd.lock().unwrap() = crd(4, &["v1alpha1", "v1"]);
    assert_eq!(
        prune(&client, &target, &Writes::paced(0.0, Priority::Migration))
            .await
            .unwrap(),
        Prune::CrdChanged {
            generation: 4,
            storage: "v1".into()
        }
    );
    assert!(server.bodies.lock().unwrap().is_empty());
    assert_eq!(
        server.crd.lock().unwrap()["status"]["storedVersions"],
        json!(["v1alpha1", "v1"])
    );
}

#[tokio::test(start_paused = true)]
async fn the_preflight_judges_every_object_and_writes_nothing() {
    let (client, server) = serve(crd(3, &["v1alpha1", "v1"]), &[]);
    let target = super::target(&client, "widgets.example.com").await.unwrap();
    let stop = AtomicBool::new(false);
    let mut stuck = Vec::new();
    let found = preflight(
        &client,
        &target,
        &mut |obj| (obj["spec"]["size"].as_i64() > Some(5)).then(|| "too big".to_string()),
        &mut |r| stuck.push(r.name),
        &stop,
    )
    .await
    .unwrap();
    assert_eq!(
        found,
        Preflight {
            objects: 5,
            stuck: 1
        }
    );
    assert_eq!(stuck, ["invalid"]);
    assert!(
        server
            .log
            .lock()
            .unwrap()
            .iter()
            .all(|l| l.starts_with("GET ")),
        "only reads"
    );
}

#[tokio::test(start_paused = true)]
async fn a_stop_ends_the_rewrite_cleanly() {
    let (client, server) = serve(crd(3, &["v1alpha1", "v1"]), &[]);
    let target = super::target(&client, "widgets.example.com").await.unwrap();
    let stop = AtomicBool::new(false);
    let done = rewrite(
        &client,
        &target,
        &Writes::paced(0.0, Priority::Migration),
        &mut |_| {},
        &mut |d| {
            if d.rewritten >= 1 {
                stop.store(true, Ordering::Relaxed)
            }
        },
        &stop,
    )
    .await
    .unwrap();
    assert!(done.interrupted && !done.complete(), "{done:?}");
    // The second page was never read.
    assert!(
        !server
            .log
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("continue=page2"))
    );
}

#[test]
fn a_crd_already_at_its_storage_version_alone_needs_nothing() {
    let t = target_of(&crd(1, &["v1"])).unwrap();
    assert!(t.migrated());
    let t = target_of(&crd(1, &["v1alpha1", "v1"])).unwrap();
    assert!(!t.migrated());
    assert!(matches!(
        target_of(&json!({"metadata": {"name": "x"}})),
        Err(MigrationError::UnreadableCrd { .. })
    ));
}

/// The server's own migration: a StorageVersionMigration of the CRD's group and resource
/// (with the version for v1alpha1), read until a terminal condition.
#[tokio::test(start_paused = true)]
async fn the_servers_migration_is_created_and_followed_to_its_end() {
    for (group_version, ending) in [
        ("storagemigration.k8s.io/v1beta1", "Succeeded"),
        ("storagemigration.k8s.io/v1alpha1", "Failed"),
    ] {
        let (svc, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let created: Arc<Mutex<Option<Value>>> = Arc::default();
        let sent = created.clone();
        let gv = group_version.to_string();
        tokio::spawn(async move {
            let mut reads = 0;
            while let Some((req, send)) = handle.next_request().await {
                let (parts, body) = req.into_parts();
                let bytes = body.collect_bytes().await.unwrap_or_default();
                let path = parts.uri.path().to_string();
                let collection = format!("/apis/{gv}/storageversionmigrations");
                let response = match parts.method.as_str() {
                    "POST" if path == collection => {
                        let mut v: Value = serde_json::from_slice(&bytes).unwrap();
                        *sent.lock().unwrap() = Some(v.clone());
                        v["metadata"]["name"] = json!("widgets.example.com-x1");
                        ok(&v)
                    }
                    "GET" if path == format!("{collection}/widgets.example.com-x1") => {
                        reads += 1;
                        let mut v = sent.lock().unwrap().clone().unwrap();
                        v["metadata"]["name"] = json!("widgets.example.com-x1");
                        let conditions = if reads < 3 {
                            json!([{"type": "Running", "status": "True", "message": ""}])
                        } else {
                            json!([{"type": ending, "status": "True",
                                "message": "migration encountered unhandled error: refused"}])
                        };
                        v["status"] = json!({"conditions": conditions});
                        ok(&v)
                    }
                    _ => status(404, "NotFound", "not found"),
                };
                send.send_response(response);
            }
        });
        let client = kube::Client::new(svc, "default");
        let target = target_of(&crd(3, &["v1alpha1", "v1"])).unwrap();
        let stop = AtomicBool::new(false);
        let end = server_migration(
            &client,
            &target,
            group_version,
            Duration::from_secs(1),
            &stop,
        )
        .await
        .unwrap();
        let body = created.lock().unwrap().clone().unwrap();
        assert_eq!(body["metadata"]["generateName"], "widgets.example.com-");
        if group_version.ends_with("v1beta1") {
            assert_eq!(
                body["spec"]["resource"],
                json!({"group": "example.com", "resource": "widgets"})
            );
            assert_eq!(
                end,
                Some(ServerMigration::Succeeded {
                    name: "widgets.example.com-x1".into()
                })
            );
        } else {
            assert_eq!(
                body["spec"]["resource"],
                json!({"group": "example.com", "resource": "widgets", "version": "v1"})
            );
            assert_eq!(
                end,
                Some(ServerMigration::Failed {
                    name: "widgets.example.com-x1".into(),
                    message: "migration encountered unhandled error: refused".into()
                })
            );
        }
    }
}

#[test]
fn objects_another_writer_wrote_count_as_migrated() {
    let done = Rewrite {
        objects: 4,
        rewritten: 2,
        written_by_others: 1,
        gone: 1,
        ..Rewrite::default()
    };
    assert!(done.complete());
    assert_eq!((done.migrated(), done.finished()), (3, 4));
    let short = Rewrite {
        written_by_others: 0,
        ..done
    };
    assert!(!short.complete());
}
