//! Validation ratcheting on a live apiextensions-apiserver 1.36: stuck and tolerated objects.

use super::*;
use serde_json::{Value, json};

/// The gadgets CRD: loose at revision 1; revision 2 tightens it in ways ratcheting tolerates
/// (a lower maximum, a narrower enum, a nested CEL rule, a status enum) and in one it cannot
/// (a rule at the root, whose value always differs: its metadata).
fn gadgets_crd(tight: bool) -> Value {
    let mut spec = json!({"type": "object", "properties": {
        "replicas": {"type": "integer"},
        "size": {"type": "string"},
        "owner": {"type": "string"}}});
    let mut status = json!({"type": "object", "properties": {"phase": {"type": "string"}}});
    let mut root = json!({"type": "object", "properties": {}});
    if tight {
        spec["properties"]["replicas"]["maximum"] = json!(5);
        spec["properties"]["size"]["enum"] = json!(["small", "medium"]);
        spec["x-kubernetes-validations"] = json!([{"rule": "!has(self.replicas) || self.replicas % 2 == 1", "message": "replicas must be odd"}]);
        status["properties"]["phase"]["enum"] = json!(["Ready", "Pending"]);
        root["x-kubernetes-validations"] = json!([{"rule": "!has(self.spec.owner) || self.spec.owner != 'nobody'",
            "message": "an owner is required"}]);
    }
    root["properties"] = json!({"spec": spec, "status": status});
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.ratchet.crd-audit.dev"},
        "spec": {"group": "ratchet.crd-audit.dev", "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": root}}]}})
}

/// Validation ratcheting on a live 1.36 server: after a tightening, which stored objects can
/// still be written (tolerated) and which cannot (stuck), as `audit`, `validate --update` and
/// the operator say, against what the server answers to a dry-run PUT of every object as read
/// (a no-op update) and of its status.
#[test]
fn stuck_and_tolerated_objects_agree_with_a_ratcheting_server() {
    let _turn = shared_turn();
    let Some(server) = shared_apiext() else {
        return;
    };
    let (dir, config) = server.scenario("ratchet", "ratchet.crd-audit.dev");
    let admin = Rest::new(&server.kubeconfig, None);
    apply_file(&admin, "manifests/schemaaudit-crd.yaml");
    apply(&admin, &gadgets_crd(false));
    let base = "/apis/ratchet.crd-audit.dev/v1/namespaces/default/gadgets";
    wait_for("the gadgets CRD to be served", || admin.get(base).ok());
    let objects = [
        ("fine", json!({"replicas": 3, "size": "small"}), None),
        ("too-many", json!({"replicas": 9, "size": "small"}), None),
        ("huge", json!({"replicas": 1, "size": "huge"}), None),
        ("even", json!({"replicas": 4}), None),
        ("nobody", json!({"replicas": 1, "owner": "nobody"}), None),
        (
            "nobody-huge",
            json!({"size": "huge", "owner": "nobody"}),
            None,
        ),
        ("broken-status", json!({"replicas": 1}), Some("Broken")),
    ];
    for (name, spec, phase) in &objects {
        apply(
            &admin,
            &json!({"apiVersion": "ratchet.crd-audit.dev/v1", "kind": "Gadget",
                "metadata": {"name": name, "namespace": "default"}, "spec": spec}),
        );
        if let Some(p) = phase {
            let mut o = admin.get(&format!("{base}/{name}")).unwrap();
            o["status"] = json!({"phase": p});
            admin
                .send_put(&format!("{base}/{name}/status"), &o)
                .unwrap();
        }
    }
    apply(&admin, &gadgets_crd(true));
    wait_for("the tightened CRD to be served", || {
        let mut o = admin.get(&format!("{base}/fine")).ok()?;
        o["spec"]["replicas"] = json!(8);
        (admin.put_dry_run(&format!("{base}/fine"), &o).0 == 422).then_some(())
    });

    // What the server does with each stored object, sent back unchanged.
    let stored: Vec<Value> = admin.list(base).unwrap();
    assert_eq!(stored.len(), objects.len());
    let stored_file = dir.join("stored.yaml");
    std::fs::write(
        &stored_file,
        json!({"apiVersion": "v1", "kind": "List", "items": stored}).to_string(),
    )
    .unwrap();
    let crd_file = dir.join("crd.yaml");
    std::fs::write(&crd_file, gadgets_crd(true).to_string()).unwrap();
    let mut server_says = std::collections::BTreeMap::new();
    for o in &stored {
        let name = o["metadata"]["name"].as_str().unwrap().to_string();
        let main = admin.put_dry_run(&format!("{base}/{name}"), o);
        let status = admin.put_dry_run(&format!("{base}/{name}/status"), o);
        server_says.insert(name, (main, status));
    }
    let stuck: Vec<&str> = server_says
        .iter()
        .filter(|(_, (m, _))| m.0 != 200)
        .map(|(n, _)| n.as_str())
        .collect();
    // The root rule cannot ratchet; everything else can.
    assert_eq!(stuck, ["nobody", "nobody-huge"], "{server_says:?}");
    assert!(
        server_says["even"]
            .0
            .1
            .iter()
            .any(|w| w.contains("replicas must be odd")),
        "{server_says:?}"
    );

    // `validate --update` of every stored object sent back unchanged, to the object and to
    // its status: code and warnings as the server's.
    let (crd_s, stored_s) = (
        crd_file.display().to_string(),
        stored_file.display().to_string(),
    );
    for status in [false, true] {
        let mut args = vec![
            "validate", "--update", &stored_s, "--crd", &crd_s, "-o", "json",
        ];
        if status {
            args.extend(["--subresource", "status"]);
        }
        args.push(&stored_s);
        let (_, stdout, stderr) = cli(&args, &[]);
        let lines: Vec<Value> = stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), stored.len(), "{stderr}");
        for l in &lines {
            let name = l["name"].as_str().unwrap();
            let (code, warnings) = if status {
                &server_says[name].1
            } else {
                &server_says[name].0
            };
            assert_eq!(l["code"], json!(code), "{name} (status: {status}): {l}");
            let mut ours: Vec<String> = l["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_str().unwrap().to_string())
                .collect();
            let mut theirs = warnings.clone();
            ours.sort();
            theirs.sort();
            assert_eq!(ours, theirs, "{name} (status: {status})");
        }
    }

    // `audit`: the no-op verdict of each invalid object.
    let kc = server.kubeconfig.display().to_string();
    let (code, stdout, stderr) = cli(
        &[
            "audit",
            "--kubeconfig",
            &kc,
            "-o",
            "json",
            "--include-group",
            "ratchet.crd-audit.dev",
        ],
        &[],
    );
    assert_eq!(code, Some(1), "{stderr}");
    let records: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut audited = std::collections::BTreeMap::new();
    for r in records.iter().filter(|r| r["record"] == "object") {
        let allowed = r["update"]["allowed"].as_bool();
        audited.insert(r["name"].as_str().unwrap().to_string(), allowed);
    }
    for (name, ((code, _), _)) in &server_says {
        if name == "fine" {
            assert!(!audited.contains_key(name), "{stdout}");
            continue;
        }
        assert_eq!(audited[name], Some(*code == 200), "{name}: {stdout}");
    }
    let summary = records
        .iter()
        .find(|r| r["record"] == "crdSummary")
        .unwrap();
    assert_eq!(
        (&summary["invalid"], &summary["blocked"]),
        (&json!(6), &json!(2)),
        "{summary}"
    );

    // The operator's report: the same split, stuck objects first.
    let c = controller(
        &dir,
        "ratchet",
        &["--kubeconfig", &kc, "--config", &config],
        &[],
    );
    let crd = "gadgets.ratchet.crd-audit.dev";
    let r = wait_for("the report with blocked objects", || {
        report(&admin, crd)
            .ok()
            .filter(|r| condition(r, "UpdatesAccepted").is_some_and(|c| c.0 == "False"))
    });
    assert_eq!(r["status"]["versions"][0]["invalidObjects"], 6, "{r}");
    assert_eq!(r["status"]["versions"][0]["blockedObjects"], 2, "{r}");
    let listed: Vec<(String, bool)> = r["status"]["invalidObjects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["name"].as_str().unwrap().to_string(),
                o["updatesBlocked"].as_bool().unwrap(),
            )
        })
        .collect();
    for (name, blocked) in &listed {
        assert_eq!(*blocked, server_says[name].0.0 != 200, "{name}: {r}");
    }
    assert!(listed[0].1 && listed[1].1 && !listed[2].1, "{listed:?}");
    c.stop_cleanly();
}
