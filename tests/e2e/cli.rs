//! End-to-end: the one-shot commands that read a cluster (`crd-audit audit`, `validate
//! --crds-from-cluster`) against a real kube-apiserver 1.20 and etcd on loopback, started by
//! the project's harness (`tests/testenv/up.sh`).
//!
//! `CRD_AUDIT_E2E=off` skips; `CRD_AUDIT_E2E=required` (what `.ci/run` sets) fails when the
//! API server cannot be started.

use crate::support::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::process::{Command, Output};

const GROUP: &str = "cli.e2e.crd-audit.dev";
const WIDGETS: &str = "widgets.cli.e2e.crd-audit.dev";
const GIZMOS: &str = "gizmos.cli.e2e.crd-audit.dev";
const LEGACY: &str = "gadgets.example.crd-audit.dev";
/// More than one page of the LISTs (500), so that paging is exercised.
const MANY: usize = 520;

fn widgets_crd(maximum: u32) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": WIDGETS},
        "spec": {"group": GROUP, "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "replicas": {"type": "integer", "maximum": maximum}}}}}}}]}})
}

fn gizmos_crd(sizes: &[&str]) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": GIZMOS},
        "spec": {"group": GROUP, "scope": "Cluster",
            "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "string", "enum": sizes}}}}}}}]}})
}

fn widget(ns: &str, name: &str, replicas: u32) -> Value {
    json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Widget",
        "metadata": {"name": name, "namespace": ns}, "spec": {"replicas": replicas}})
}

fn crd_audit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_crd-audit"))
        .args(args)
        .env_remove("KUBECONFIG")
        .output()
        .expect("run crd-audit")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The JSON lines of `audit -o json`, by record type.
fn records(out: &Output) -> BTreeMap<String, Vec<Value>> {
    let mut by = BTreeMap::<String, Vec<Value>>::new();
    for l in text(&out.stdout).lines() {
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
        by.entry(v["record"].as_str().unwrap().to_string())
            .or_default()
            .push(v);
    }
    by
}

fn summary_of<'a>(r: &'a BTreeMap<String, Vec<Value>>, crd: &str) -> &'a Value {
    r["crdSummary"]
        .iter()
        .find(|s| s["crd"] == crd)
        .unwrap_or_else(|| panic!("no summary for {crd}: {r:?}"))
}

/// `namespace/name` of every object record of a CRD, with its messages.
fn invalid_objects(r: &BTreeMap<String, Vec<Value>>, crd: &str) -> BTreeMap<String, Vec<String>> {
    r.get("object")
        .into_iter()
        .flatten()
        .filter(|o| o["crd"] == crd)
        .map(|o| {
            let key = format!(
                "{}/{}",
                o["namespace"].as_str().unwrap(),
                o["name"].as_str().unwrap()
            );
            let msgs = o["errors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["message"].as_str().unwrap().to_string())
                .collect();
            (key, msgs)
        })
        .collect()
}

/// The resourceVersion of every object of a collection.
fn versions(env: &TestEnv, path: &str) -> BTreeMap<String, String> {
    env.admin
        .list(path)
        .unwrap()
        .into_iter()
        .map(|o| {
            let m = &o["metadata"];
            (
                format!("{}/{}", m["namespace"].as_str().unwrap_or(""), m["name"]),
                m["resourceVersion"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn audit_and_validate_read_a_real_cluster() {
    // A server of its own: the test restarts it, and audits the whole cluster.
    let _turn = own_server();
    let Some(env) = start() else { return };
    let kc = env.kubeconfig.display().to_string();

    // Objects written under loose schemas, then the schemas tighten.
    apply(&env.admin, &widgets_crd(100));
    apply(&env.admin, &gizmos_crd(&["small", "large"]));
    apply_file(&env.admin, "examples/crds/gadgets-legacy.yaml");
    wait_for("the widgets to be served", || {
        env.admin
            .get(&format!("/apis/{GROUP}/v1/namespaces/default/widgets"))
            .ok()
    });
    wait_for("the gizmos to be served", || {
        env.admin.get(&format!("/apis/{GROUP}/v1/gizmos")).ok()
    });
    for ns in ["team-a", "kube-team"] {
        apply(
            &env.admin,
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        );
    }
    let path = |ns: &str| format!("/apis/{GROUP}/v1/namespaces/{ns}/widgets");
    for i in 0..MANY {
        env.admin
            .create(&path("default"), &widget("default", &format!("w{i:03}"), 3))
            .unwrap();
    }
    env.admin
        .create(&path("default"), &widget("default", "big", 50))
        .unwrap();
    env.admin
        .create(&path("team-a"), &widget("team-a", "bigger", 60))
        .unwrap();
    env.admin
        .create(&path("kube-team"), &widget("kube-team", "biggest", 70))
        .unwrap();
    for (name, size) in [("g1", "small"), ("g2", "large")] {
        apply(
            &env.admin,
            &json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Gizmo",
                "metadata": {"name": name}, "spec": {"size": size}}),
        );
    }
    apply(&env.admin, &widgets_crd(10));
    apply(&env.admin, &gizmos_crd(&["small"]));
    let widgets_before = versions(&env, &format!("/apis/{GROUP}/v1/widgets"));
    let gizmos_before = versions(&env, &format!("/apis/{GROUP}/v1/gizmos"));
    assert_eq!(widgets_before.len(), MANY + 3);

    // The whole cluster, as JSON lines.
    let out = crd_audit(&["audit", "--kubeconfig", &kc, "-o", "json"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}'),
        "no progress bar off a terminal: {stderr}"
    );
    let r = records(&out);
    let max = |v: u32| {
        format!(
            "spec.replicas: Invalid value: {v}: spec.replicas in body should be less than or equal to 10"
        )
    };
    assert_eq!(
        invalid_objects(&r, WIDGETS),
        BTreeMap::from([
            ("default/big".to_string(), vec![max(50)]),
            ("kube-team/biggest".to_string(), vec![max(70)]),
            ("team-a/bigger".to_string(), vec![max(60)]),
        ])
    );
    assert_eq!(
        invalid_objects(&r, GIZMOS),
        BTreeMap::from([(
            "/g2".to_string(),
            vec![r#"spec.size: Unsupported value: "large": supported values: "small""#.to_string()]
        )])
    );
    let w = summary_of(&r, WIDGETS);
    assert_eq!(
        (&w["objects"], &w["invalid"], &w["storageVersion"]),
        (&json!(MANY + 3), &json!(3), &json!("v1"))
    );
    let g = summary_of(&r, GIZMOS);
    assert_eq!((&g["objects"], &g["invalid"]), (&json!(2), &json!(1)));
    let legacy = r["crd"].iter().find(|c| c["crd"] == LEGACY).unwrap();
    assert!(
        legacy["nonStructural"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["message"]
                == "spec.preserveUnknownFields: Invalid value: true: must be false"),
        "{legacy}"
    );
    assert!(summary_of(&r, LEGACY)["crdFindings"].as_u64().unwrap() > 0);
    let total = &r["summary"][0];
    assert_eq!(total["invalid"], json!(4), "{total}");
    assert_eq!(total["errors"], json!(0), "{total}");

    // Nothing was written: every object is at the version it had.
    assert_eq!(
        versions(&env, &format!("/apis/{GROUP}/v1/widgets")),
        widgets_before
    );
    assert_eq!(
        versions(&env, &format!("/apis/{GROUP}/v1/gizmos")),
        gizmos_before
    );

    // Filters: the operator's, from the command line and from its configuration file.
    let out = crd_audit(&[
        "audit",
        "--kubeconfig",
        &kc,
        "-o",
        "json",
        "--include-group",
        GROUP,
        "--exclude-namespace",
        "kube-*",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let r = records(&out);
    assert!(r["crd"].iter().all(|c| c["crd"] != LEGACY));
    assert_eq!(summary_of(&r, WIDGETS)["objects"], json!(MANY + 2));
    assert!(!invalid_objects(&r, WIDGETS).contains_key("kube-team/biggest"));
    let config = env.run_dir.join("audit-config.yaml");
    std::fs::write(
        &config,
        format!("excludeGroups: ['{GROUP}', 'example.*']\nredactValues: true\n"),
    )
    .unwrap();
    let out = crd_audit(&[
        "audit",
        "--kubeconfig",
        &kc,
        "--config",
        config.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("audited 0 CRD(s) and 0 object(s) in "),
        "{}",
        text(&out.stdout)
    );

    // Text: findings, then the table, then the totals; values redacted on request.
    let out = crd_audit(&[
        "audit",
        "--kubeconfig",
        &kc,
        "--include-group",
        GROUP,
        "--redact-values",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "{WIDGETS} Widget default/big: spec.replicas: Invalid value: <number>: spec.replicas in body should be less than or equal to 10\n"
        )),
        "{stdout}"
    );
    let table: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("CRD "))
        .collect();
    assert!(table[0].split_whitespace().eq([
        "CRD",
        "STORAGE",
        "OBJECTS",
        "INVALID",
        "BLOCKED",
        "UNKNOWN-FIELDS",
        "CRD-FINDINGS",
        "CRD-WARNINGS",
        "ERROR"
    ]));
    let row = |crd: &str| -> Vec<String> {
        table
            .iter()
            .find(|l| l.starts_with(crd))
            .unwrap()
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    // kube-apiserver 1.20 has no validation ratcheting: every invalid object is stuck.
    assert_eq!(row(GIZMOS), [GIZMOS, "v1", "2", "1", "1", "0", "0", "0"]);
    assert_eq!(
        row(WIDGETS),
        [
            WIDGETS,
            "v1",
            &(MANY + 3).to_string(),
            "3",
            "3",
            "0",
            "0",
            "0"
        ]
    );
    assert!(
        table
            .last()
            .unwrap()
            .starts_with(&format!("audited 2 CRD(s) and {} object(s) in ", MANY + 5)),
        "{stdout}"
    );

    // On a terminal (a pseudo-terminal from util-linux's `script`), stderr shows the
    // progress: objects read of the servers' count, and the CRD under way; stdout stays
    // clean. The terminal's type is the test's, not the runner's: on a `dumb` terminal, or
    // with TERM unset, there is no bar (it moves the cursor), whatever the runner has.
    let json_out = env.run_dir.join("audit.json");
    let command = format!(
        "{} audit --kubeconfig {kc} --include-group {GROUP} -o json > {}",
        env!("CARGO_BIN_EXE_crd-audit"),
        json_out.display()
    );
    let on_terminal = |term: Option<&str>| {
        let mut script = Command::new("script");
        script
            .args(["-qec", &command, "/dev/null"])
            .env("COLUMNS", "200");
        match term {
            Some(t) => script.env("TERM", t),
            None => script.env_remove("TERM"),
        };
        script.output().expect("util-linux script")
    };
    let plain: Vec<_> = [Some("dumb"), None]
        .map(|term| (term, on_terminal(term)))
        .into();
    let tty = on_terminal(Some("xterm-256color"));
    for (term, out) in plain {
        assert_eq!(out.status, tty.status, "TERM={term:?}: {out:?}");
        let screen = text(&out.stdout);
        assert!(!screen.contains(" objects, "), "TERM={term:?}: {screen}");
    }
    let screen = text(&tty.stdout);
    assert!(
        screen.contains(&format!("{}/{} objects", MANY + 5, MANY + 5)),
        "{screen}"
    );
    assert!(
        screen.contains(&format!("CRDs 1/2 done, auditing {WIDGETS}")),
        "{screen}"
    );
    let r = records(&Output {
        status: tty.status,
        stdout: std::fs::read(&json_out).unwrap(),
        stderr: Vec::new(),
    });
    assert_eq!(r["summary"][0]["invalid"], json!(4));

    // JUnit: a suite per CRD, a failure per invalid object.
    let out = crd_audit(&["audit", "--kubeconfig", &kc, "-o", "junit"]);
    assert_eq!(out.status.code(), Some(1));
    let xml = text(&out.stdout);
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}: {xml}"));
    let suite = |name: &str| {
        doc.descendants()
            .find(|n| n.has_tag_name("testsuite") && n.attribute("name") == Some(name))
            .unwrap_or_else(|| panic!("no suite {name}: {xml}"))
    };
    assert_eq!(suite(WIDGETS).attribute("failures"), Some("3"));
    assert_eq!(suite(GIZMOS).attribute("failures"), Some("1"));
    assert_eq!(suite(LEGACY).attribute("failures"), Some("1"));

    // SARIF: valid against the SARIF 2.1.0 schema; CRD findings and objects named by
    // logical locations (there is no file), one result per finding.
    let out = crd_audit(&["audit", "--kubeconfig", &kc, "-o", "sarif"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string("tests/data/sarif/sarif-schema-2.1.0.json").unwrap(),
    )
    .unwrap();
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft4)
        .should_validate_formats(true)
        .build(&schema)
        .unwrap();
    let errors: Vec<String> = validator.iter_errors(&log).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let results = log["runs"][0]["results"].as_array().unwrap();
    let named = |r: &Value| {
        r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let objects: Vec<(String, String)> = results
        .iter()
        .filter(|r| r["ruleId"] != "NonStructuralSchema" && r["ruleId"] != "CRDInvalid")
        .map(|r| (r["ruleId"].as_str().unwrap().to_string(), named(r)))
        .collect();
    assert_eq!(
        objects,
        [
            (
                "FieldValueNotSupported".to_string(),
                format!("{GIZMOS}//g2/spec.size")
            ),
            (
                "FieldValueInvalid".to_string(),
                format!("{WIDGETS}/default/big/spec.replicas")
            ),
            (
                "FieldValueInvalid".to_string(),
                format!("{WIDGETS}/kube-team/biggest/spec.replicas")
            ),
            (
                "FieldValueInvalid".to_string(),
                format!("{WIDGETS}/team-a/bigger/spec.replicas")
            ),
        ]
    );
    assert!(
        results
            .iter()
            .any(|r| r["ruleId"] == "NonStructuralSchema" && named(r).starts_with(LEGACY)),
        "{log}"
    );

    // A read-only user is all the audit needs; without list on a CRD's objects, that CRD
    // is reported as unreadable (exit code 2) and the others are still audited.
    let read_all = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "e2e-audit-reader"},
        "rules": [
            {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["get", "list"]},
            {"apiGroups": [GROUP], "resources": ["gizmos"], "verbs": ["get", "list"]}]});
    apply(&env.admin, &read_all);
    apply(
        &env.admin,
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "e2e-audit-reader"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "e2e-audit-reader"},
            "subjects": [{"kind": "User", "name": "testuser", "apiGroup": "rbac.authorization.k8s.io"}]}),
    );
    let as_user = |extra: &[&str]| {
        let mut args = vec![
            "audit",
            "--kubeconfig",
            &kc,
            "--context",
            "user",
            "--include-group",
            GROUP,
            "-o",
            "json",
        ];
        args.extend_from_slice(extra);
        wait_for("the reader's permissions", || {
            let out = crd_audit(&args);
            let r = records(&out);
            r.get("crdSummary")
                .is_some_and(|s| {
                    s.iter()
                        .any(|s| s["crd"] == GIZMOS && s.get("error").is_none())
                })
                .then_some(out)
        })
    };
    let out = as_user(&[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let r = records(&out);
    let w = summary_of(&r, WIDGETS);
    assert!(w["error"].as_str().unwrap().contains("HTTP 403"), "{w}");
    assert_eq!(summary_of(&r, GIZMOS)["invalid"], json!(1));
    let mut full = read_all.clone();
    full["rules"][1]["resources"] = json!(["gizmos", "widgets"]);
    apply(&env.admin, &full);
    let out = wait_for("the reader's permissions on widgets", || {
        let out = as_user(&[]);
        (out.status.code() == Some(1)).then_some(out)
    });
    assert_eq!(summary_of(&records(&out), WIDGETS)["invalid"], json!(3));

    // An API server that goes away while the audit starts: requests are tried again until
    // it is back, and the audit completes with the same findings.
    std::thread::scope(|scope| {
        let restart = scope.spawn(|| env.restart_apiserver(std::time::Duration::from_secs(2)));
        // restart_apiserver kills the server first; give it a moment to be gone.
        std::thread::sleep(std::time::Duration::from_millis(500));
        let out = crd_audit(&["audit", "--kubeconfig", &kc, "-o", "json"]);
        restart.join().unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        assert_eq!(records(&out)["summary"][0]["invalid"], json!(4));
    });

    // validate --crds-from-cluster: local manifests judged by the installed CRDs; a CRD
    // given with --crd replaces the cluster's one.
    let manifests = env.run_dir.join("widgets.yaml");
    std::fs::write(
        &manifests,
        format!(
            "apiVersion: {GROUP}/v1\nkind: Widget\nmetadata:\n  name: new\n  namespace: default\nspec:\n  replicas: 40\n---\napiVersion: {GROUP}/v1\nkind: Sprocket\nmetadata:\n  name: s\n"
        ),
    )
    .unwrap();
    let manifests = manifests.display().to_string();
    let out = crd_audit(&[
        "validate",
        "--crds-from-cluster",
        "--kubeconfig",
        &kc,
        &manifests,
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        stdout.contains(&format!("{manifests}:7:3: Widget default/new: {}", max(40))),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            r#"Sprocket s: error: no matches for kind "Sprocket" in version "{GROUP}/v1": no CRD in the cluster defines it"#
        )),
        "{stdout}"
    );
    let loose = env.run_dir.join("widgets-crd.json");
    std::fs::write(&loose, widgets_crd(100).to_string()).unwrap();
    let out = crd_audit(&[
        "validate",
        "--crds-from-cluster",
        "--kubeconfig",
        &kc,
        "--crd",
        loose.to_str().unwrap(),
        "-o",
        "json",
        &manifests,
    ]);
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["name"], "new");
    assert_eq!(lines[0]["valid"], json!(true), "{:?}", lines);
    assert!(
        lines[1]["requestError"]
            .as_str()
            .unwrap()
            .ends_with("no CRD in the cluster or given with --crd defines it"),
        "{:?}",
        lines
    );
}
