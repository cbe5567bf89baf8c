//! `crd-audit migrate` against real API servers, checked in etcd itself: every object's
//! stored `apiVersion` read with the etcd v3 API (its JSON gateway) of the harness's etcd.
//!
//! - On kube-apiserver 1.20 (no ratcheting: every invalid object is stuck): 2,000 objects
//!   stored at `v1alpha1`, then a storage version `v1` whose schema refuses some of them.
//!   `--dry-run` names exactly the objects whose rewrite then fails and writes nothing (etcd
//!   unchanged); the run rewrites the others and leaves `storedVersions` unpruned; once those
//!   objects are fixed a second run prunes it; then the API server accepts the CRD without
//!   `v1alpha1`, which it refused before.
//! - On the apiextensions-apiserver 1.36, where ratcheting tolerates some invalid objects:
//!   they migrate, and only the stuck ones block.
//! - Faults: the API server restarted mid-run; the CRD changed mid-run (no prune); a writer
//!   that keeps writing every object meanwhile (its writes migrate them: none is sent again).

use crate::support::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The stored objects under an etcd key prefix: key -> (mod revision, stored apiVersion).
pub(crate) fn stored(etcd: &str, prefix: &str) -> BTreeMap<String, (i64, String)> {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let mut end = prefix.as_bytes().to_vec();
    *end.last_mut().unwrap() += 1;
    let body = json!({"key": b64.encode(prefix), "range_end": b64.encode(&end)}).to_string();
    let addr = etcd.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "POST /v3/kv/range HTTP/1.0\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let (_, json) = response.split_once("\r\n\r\n").unwrap();
    let v: Value = serde_json::from_str(json).unwrap();
    v["kvs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|kv| {
            let key = String::from_utf8(b64.decode(kv["key"].as_str().unwrap()).unwrap()).unwrap();
            let value: Value =
                serde_json::from_slice(&b64.decode(kv["value"].as_str().unwrap()).unwrap())
                    .unwrap();
            let rev = kv["mod_revision"].as_str().unwrap().parse().unwrap();
            (
                key,
                (rev, value["apiVersion"].as_str().unwrap().to_string()),
            )
        })
        .collect()
}

pub(crate) fn count_at(stored: &BTreeMap<String, (i64, String)>, api_version: &str) -> usize {
    stored.values().filter(|(_, v)| v == api_version).count()
}

/// A CRD `gizmos.<group>` with `v1alpha1` (anything goes) and, from `revision` 2, `v1`: the
/// storage version, whose schema refuses a size over `max_size` and (with `list_map`) a
/// port without a name (a list-map key: ratcheting never tolerates that).
pub(crate) fn gizmos(
    group: &str,
    revision: u8,
    max_size: i64,
    list_map: bool,
    old_served: bool,
) -> Value {
    let mut versions = Vec::new();
    if old_served {
        versions.push(
            json!({"name": "v1alpha1", "served": true, "storage": revision == 1,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                "type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}),
        );
    }
    if revision >= 2 {
        let mut spec = json!({"type": "object", "properties": {
            "size": {"type": "integer", "maximum": max_size}}});
        if list_map {
            spec["properties"]["ports"] = json!({"type": "array",
                "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string"}, "port": {"type": "integer"}}}});
        } else {
            spec["x-kubernetes-preserve-unknown-fields"] = json!(true);
        }
        versions.push(json!({"name": "v1", "served": true, "storage": true,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}));
    }
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("gizmos.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
            "versions": versions}})
}

pub(crate) fn create_gizmos(
    admin: &Rest,
    group: &str,
    namespace: &str,
    n: usize,
    spec: &dyn Fn(usize) -> Value,
) {
    let path = format!("/apis/{group}/v1alpha1/namespaces/{namespace}/gizmos");
    wait_for("gizmos to be served", || admin.get(&path).ok());
    for i in 1..=n {
        admin
            .create(
                &path,
                &json!({"apiVersion": format!("{group}/v1alpha1"), "kind": "Gizmo",
                    "metadata": {"name": format!("g{i:04}"), "namespace": namespace},
                    "spec": spec(i)}),
            )
            .unwrap_or_else(|e| panic!("creating g{i:04}: {e}"));
    }
}

pub(crate) fn stored_versions(admin: &Rest, crd: &str) -> Value {
    admin
        .get(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"
        ))
        .unwrap()["status"]["storedVersions"]
        .clone()
}

/// `crd-audit migrate` as a process: (exit code, JSON lines, stderr).
fn migrate(kubeconfig: &std::path::Path, args: &[&str]) -> (Option<i32>, Vec<Value>, String) {
    let mut all = vec![
        "migrate",
        "--kubeconfig",
        kubeconfig.to_str().unwrap(),
        "-o",
        "json",
    ];
    all.extend_from_slice(args);
    let (code, out, err) = cli(&all, &[]);
    let lines = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}\n{err}")))
        .collect();
    (code, lines, err)
}

/// The refused objects' names and messages of a run's JSON lines, and its summary.
fn refused(lines: &[Value]) -> (Vec<(String, String)>, Value) {
    let objects = lines
        .iter()
        .filter(|l| l["record"] == "object")
        .map(|l| {
            (
                format!(
                    "{}/{}",
                    l["namespace"].as_str().unwrap(),
                    l["name"].as_str().unwrap()
                ),
                l["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let summary = lines
        .iter()
        .find(|l| l["record"] == "summary")
        .cloned()
        .unwrap_or(Value::Null);
    (objects, summary)
}

#[test]
fn migrating_2000_objects_on_kube_apiserver_1_20_checked_in_etcd() {
    let _turn = shared_turn();
    let Some(env) = shared() else { return };
    let admin = &env.admin;
    let etcd = env.env_var("KUBE_TESTENV_ETCD");
    let (group, ns) = ("migrate.e2e.crd-audit.dev", "migrate");
    let crd = format!("gizmos.{group}");
    let prefix = format!("/registry/{group}/gizmos/");
    apply(
        admin,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
    );
    apply(admin, &gizmos(group, 1, 0, false, true));
    create_gizmos(admin, group, ns, 2000, &|i| json!({"size": i}));
    // The new storage version refuses sizes over 1990: g1991..g2000 are stuck (1.20 has no
    // ratcheting).
    apply(admin, &gizmos(group, 2, 1990, false, true));
    assert_eq!(stored_versions(admin, &crd), json!(["v1alpha1", "v1"]));
    let before = stored(&etcd, &prefix);
    assert_eq!(count_at(&before, &format!("{group}/v1alpha1")), 2000);
    let expected: Vec<String> = (1991..=2000).map(|i| format!("{ns}/g{i:04}")).collect();

    // --dry-run: exactly the objects whose rewrite will fail, and nothing written.
    let (code, lines, err) = migrate(&env.kubeconfig, &[&crd, "--dry-run"]);
    let (predicted, summary) = refused(&lines);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(
        predicted.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
        expected
    );
    assert_eq!(
        summary,
        json!({"record": "summary", "crd": crd, "version": "v1", "objects": 2000,
            "rewritten": 0, "stuck": 10, "storedVersions": ["v1alpha1", "v1"],
            "pruned": false, "dryRun": true})
    );
    assert_eq!(stored(&etcd, &prefix), before, "a dry run wrote to etcd");

    // The run: every other object rewritten at v1, storedVersions not pruned; each refusal
    // is the server's, and the dry run said the same.
    let (code, lines, err) = migrate(&env.kubeconfig, &[&crd, "--qps", "0"]);
    let (refusals, summary) = refused(&lines);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(
        refusals, predicted,
        "the server refused what the dry run predicted"
    );
    assert_eq!(summary["rewritten"], 1990);
    assert_eq!(summary["pruned"], false);
    assert_eq!(stored_versions(admin, &crd), json!(["v1alpha1", "v1"]));
    let after = stored(&etcd, &prefix);
    assert_eq!(count_at(&after, &format!("{group}/v1")), 1990);
    for name in &expected {
        let key = format!("{prefix}{name}");
        assert_eq!(after[&key], before[&key], "{key} was written");
    }

    // Before the prune, the server keeps v1alpha1 in the CRD.
    let refused_crd = admin.apply(
        &format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"),
        &gizmos(group, 2, 1990, false, false),
    );
    let message = refused_crd.expect_err("v1alpha1 left while stored").message;
    assert!(
        message.contains("status.storedVersions[0]") && message.contains("spec.versions"),
        "{message}"
    );

    // The stuck objects fixed (a write that makes them valid), a second run prunes.
    for i in 1991..=2000 {
        admin
            .send_patch_merge(
                &format!("/apis/{group}/v1/namespaces/{ns}/gizmos/g{i:04}"),
                &json!({"spec": {"size": 1}}),
            )
            .unwrap();
    }
    let (code, lines, err) = migrate(&env.kubeconfig, &[&crd]);
    let (refusals, summary) = refused(&lines);
    assert_eq!(code, Some(0), "{err}");
    assert!(refusals.is_empty(), "{refusals:?}");
    assert_eq!(summary["pruned"], true);
    assert_eq!(summary["storedVersions"], json!(["v1"]));
    assert_eq!(stored_versions(admin, &crd), json!(["v1"]));
    let done = stored(&etcd, &prefix);
    assert_eq!(count_at(&done, &format!("{group}/v1")), 2000);
    // Objects already at v1 cost a request and no write: their revisions did not move.
    for (key, (rev, _)) in &after {
        if after[key].1.ends_with("/v1") {
            assert_eq!(done[key].0, *rev, "{key} was written again");
        }
    }

    // Now the CRD goes without v1alpha1.
    apply(admin, &gizmos(group, 2, 1990, false, false));
    // And a run finds nothing to do.
    let (code, lines, _) = migrate(&env.kubeconfig, &[&crd]);
    assert_eq!(code, Some(0));
    assert_eq!(refused(&lines).1["pruned"], true);
    admin
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"
        ))
        .unwrap();
}

#[test]
fn on_a_ratcheting_1_36_server_only_stuck_objects_block() {
    let Some(server) = crate::operator::shared_apiext() else {
        return;
    };
    let admin = Rest::new(&server.kubeconfig, None);
    let etcd = std::fs::read_to_string(server.run_dir.join("env"))
        .unwrap()
        .lines()
        .find_map(|l| {
            l.strip_prefix("KUBE_TESTENV_ETCD=")
                .map(|v| v.trim_matches('\'').to_string())
        })
        .expect("KUBE_TESTENV_ETCD in the env file of apiext-up.sh");
    let (group, ns) = ("migrate136.e2e.crd-audit.dev", "default");
    let crd = format!("gizmos.{group}");
    // The standalone apiextensions-apiserver's etcd prefix.
    let prefix = format!("/registry/apiextensions.kubernetes.io/{group}/gizmos/");
    apply(&admin, &gizmos(group, 1, 0, true, true));
    // 200 objects: every 10th too large (tolerated: ratcheting), every 50th with a port
    // without a name (stuck: a list-map key is never ratcheted).
    create_gizmos(&admin, group, ns, 200, &|i| {
        let mut spec = json!({"size": if i % 10 == 0 { 99 } else { 1 }});
        if i % 50 == 0 {
            spec["ports"] = json!([{"port": 80}]);
        }
        spec
    });
    apply(&admin, &gizmos(group, 2, 10, true, true));
    let stuck: Vec<String> = (1..=200)
        .filter(|i| i % 50 == 0)
        .map(|i| format!("{ns}/g{i:04}"))
        .collect();

    let (code, lines, err) = migrate(&server.kubeconfig, &[&crd, "--dry-run"]);
    let (predicted, summary) = refused(&lines);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("judged as Kubernetes 1.36 (ratcheting)"),
        "{err}"
    );
    assert_eq!(
        predicted.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
        stuck
    );
    assert_eq!(summary["stuck"], 4);

    let (code, lines, err) = migrate(&server.kubeconfig, &[&crd, "--qps", "0"]);
    let (refusals, summary) = refused(&lines);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(
        refusals, predicted,
        "the server refused what the dry run predicted"
    );
    assert_eq!(
        summary["rewritten"], 196,
        "the tolerated invalid objects migrate too"
    );
    let after = stored(&etcd, &prefix);
    assert_eq!(count_at(&after, &format!("{group}/v1")), 196);
    assert_eq!(count_at(&after, &format!("{group}/v1alpha1")), 4);
    assert_eq!(stored_versions(&admin, &crd), json!(["v1alpha1", "v1"]));

    // The stuck ones given their key: the next run prunes.
    for name in &stuck {
        let name = name.split('/').nth(1).unwrap();
        admin
            .send_patch_merge(
                &format!("/apis/{group}/v1/namespaces/{ns}/gizmos/{name}"),
                &json!({"spec": {"ports": [{"name": "http", "port": 80}]}}),
            )
            .unwrap();
    }
    let (code, lines, err) = migrate(&server.kubeconfig, &[&crd, "--qps", "0"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(refused(&lines).1["pruned"], true);
    assert_eq!(
        count_at(&stored(&etcd, &prefix), &format!("{group}/v1")),
        200
    );
    apply(&admin, &gizmos(group, 2, 10, true, false));
    admin
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"
        ))
        .unwrap();
}

/// A migration started in the background: `migrate --qps N -o json` of `crd`.
fn background(kubeconfig: &std::path::Path, crd: &str, qps: &str) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_crd-audit"))
        .args([
            "migrate",
            crd,
            "--kubeconfig",
            kubeconfig.to_str().unwrap(),
            "-o",
            "json",
            "--qps",
            qps,
        ])
        .env_remove("KUBECONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finished(child: std::process::Child) -> (Option<i32>, Vec<Value>, String) {
    let out = child.wait_with_output().unwrap();
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (
        out.status.code(),
        lines,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_migration_goes_on_through_an_api_server_restart() {
    let turn = own_server();
    let Some(env) = start() else { return };
    let _turn = turn;
    let admin = &env.admin;
    let etcd = env.env_var("KUBE_TESTENV_ETCD");
    let group = "restart.e2e.crd-audit.dev";
    let crd = format!("gizmos.{group}");
    apply(admin, &gizmos(group, 1, 0, false, true));
    create_gizmos(admin, group, "default", 300, &|i| json!({"size": i}));
    apply(admin, &gizmos(group, 2, 1000, false, true));
    // 100 writes a second: about 3 s of writing, with the server away for 2 s in the middle.
    let child = background(&env.kubeconfig, &crd, "100");
    std::thread::sleep(Duration::from_millis(1200));
    env.restart_apiserver(Duration::from_secs(2));
    let (code, lines, err) = finished(child);
    assert_eq!(code, Some(0), "{err}");
    let (refusals, summary) = refused(&lines);
    assert!(refusals.is_empty(), "{refusals:?}");
    assert_eq!(summary["rewritten"], 300);
    assert_eq!(summary["pruned"], true);
    let stored = stored(&etcd, &format!("/registry/{group}/gizmos/"));
    assert_eq!(count_at(&stored, &format!("{group}/v1")), 300);
}

#[test]
fn a_crd_changed_during_the_migration_is_not_pruned() {
    let _turn = shared_turn();
    let Some(env) = shared() else { return };
    let admin = &env.admin;
    let group = "changed.e2e.crd-audit.dev";
    let crd = format!("gizmos.{group}");
    apply(admin, &gizmos(group, 1, 0, false, true));
    create_gizmos(admin, group, "default", 100, &|i| json!({"size": i}));
    apply(admin, &gizmos(group, 2, 1000, false, true));
    let child = background(&env.kubeconfig, &crd, "50");
    std::thread::sleep(Duration::from_millis(700));
    // A new revision while it runs (a new generation).
    apply(admin, &gizmos(group, 2, 2000, false, true));
    let (code, lines, err) = finished(child);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("changed during the migration"), "{err}");
    assert_eq!(refused(&lines).1["pruned"], false);
    assert_eq!(stored_versions(admin, &crd), json!(["v1alpha1", "v1"]));
    // Run again: pruned.
    let (code, lines, err) = migrate(&env.kubeconfig, &[&crd, "--qps", "0"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(refused(&lines).1["pruned"], true);
    admin
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"
        ))
        .unwrap();
}

#[test]
fn objects_a_concurrent_writer_keeps_writing_are_migrated_by_its_writes() {
    let _turn = shared_turn();
    let Some(env) = shared() else { return };
    let admin = &env.admin;
    let etcd = env.env_var("KUBE_TESTENV_ETCD");
    let group = "storm.e2e.crd-audit.dev";
    let crd = format!("gizmos.{group}");
    apply(admin, &gizmos(group, 1, 0, false, true));
    create_gizmos(admin, group, "default", 40, &|i| json!({"size": i}));
    apply(admin, &gizmos(group, 2, 1000, false, true));
    // A writer that changes every object again and again while the migration runs.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        let kubeconfig = env.kubeconfig.clone();
        std::thread::spawn(move || {
            let rest = Rest::new(&kubeconfig, None);
            let mut writes = 0;
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                n += 1;
                for i in 1..=40 {
                    if rest
                        .send_patch_merge(
                            &format!("/apis/{group}/v1/namespaces/default/gizmos/g{i:04}"),
                            &json!({"spec": {"round": n}}),
                        )
                        .is_ok()
                    {
                        writes += 1;
                    }
                }
            }
            writes
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    // Paced to 5 requests a second, the run lasts some 8 s: the writer goes round all the
    // objects many times while it does, on a slow machine too.
    let (code, lines, err) = migrate(&env.kubeconfig, &[&crd, "--qps", "5"]);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let writes = writer.join().unwrap();
    assert!(writes > 40, "the writer wrote {writes} times");
    assert_eq!(code, Some(0), "{err}{lines:#?}");
    assert!(
        err.contains("written by another writer after they were listed"),
        "no conflict while another writer wrote {writes} times: {err}"
    );
    let (refusals, summary) = refused(&lines);
    assert!(refusals.is_empty(), "{refusals:?}");
    assert_eq!(
        (summary["rewritten"].as_u64(), summary["pruned"].as_bool()),
        (Some(40), Some(true))
    );
    // Every object at v1 in etcd: the ones another writer wrote too.
    let stored = stored(&etcd, &format!("/registry/{group}/gizmos/"));
    assert_eq!(count_at(&stored, &format!("{group}/v1")), 40);
    admin
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"
        ))
        .unwrap();
}
