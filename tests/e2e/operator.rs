//! End-to-end: the `crd-audit controller` process against a real kube-apiserver 1.20 and etcd
//! on loopback, started by the project's harness (`tests/testenv/up.sh`; the first run builds
//! kube-apiserver from Debian's source package, later runs reuse the cached binary). The
//! controller runs with a ServiceAccount token bound to the shipped RBAC (`manifests/`).
//!
//! `CRD_AUDIT_E2E=off` skips; `CRD_AUDIT_E2E=required` (what `.ci/run` sets) fails when the
//! API server cannot be started; otherwise the test is skipped with a notice when it cannot.

use crate::support::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const CRD: &str = "things.e2e.crd-audit.dev";
const GROUP: &str = "e2e.crd-audit.dev";

fn install(env: &TestEnv) {
    for f in [
        "manifests/namespace.yaml",
        "manifests/schemaaudit-crd.yaml",
        "manifests/rbac.yaml",
        "manifests/rbac-annotate.yaml",
    ] {
        apply_file(&env.admin, f);
    }
}

/// The things CRD (revision 1) and its three objects, and a controller (named `name`) that
/// has reported them clean.
fn audited_things(env: &TestEnv, name: &str) -> Controller {
    install(env);
    things(env, 1);
    create_things(env);
    let admin_kc = env.kubeconfig.display().to_string();
    let c = controller(&env.run_dir, name, &["--kubeconfig", &admin_kc], &[]);
    wait_for("a clean report", || {
        report(&env.admin, CRD)
            .ok()
            .filter(|r| condition(r, "InstancesValid").is_some_and(|c| c.0 == "True"))
    });
    c
}

fn things(env: &TestEnv, revision: u8) {
    apply(&env.admin, &things_crd(CRD, GROUP, revision));
}

fn create_things(env: &TestEnv) {
    wait_for("the things CRD to be served", || {
        env.admin
            .get("/apis/e2e.crd-audit.dev/v1/namespaces/default/things")
            .ok()
    });
    for (name, size) in [("a", "small"), ("b", "medium"), ("c", "small")] {
        apply(
            &env.admin,
            &json!({"apiVersion": "e2e.crd-audit.dev/v1", "kind": "Thing",
                "metadata": {"name": name, "namespace": "default"}, "spec": {"size": size}}),
        );
    }
}

fn invalid_names(r: &Value) -> Vec<String> {
    r["status"]["invalidObjects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap().to_string())
        .collect()
}

fn operator_config(env: &TestEnv) -> String {
    let config = env.run_dir.join("crd-audit.yaml");
    std::fs::write(
        &config,
        "annotateObjects: true\nexcludeGroups: ['excluded.*']\n",
    )
    .unwrap();
    config.display().to_string()
}

/// Start-up on existing CRDs and objects (and `plan --cluster` agreeing with `validate
/// --stored`), a tightening (report, annotations refused by 1.20, Events, metrics) and a
/// loosening.
#[test]
fn controller_audits_a_real_api_server() {
    let _serial = serial();
    let Some(env) = start() else { return };
    let admin = &env.admin;
    install(&env);
    // 1. Existing CRDs and objects at start-up.
    things(&env, 1);
    create_things(&env);
    let kc = env.service_account_kubeconfig();
    let config = operator_config(&env);
    let kc_s = kc.display().to_string();
    let ha = [
        "--kubeconfig",
        kc_s.as_str(),
        "--config",
        config.as_str(),
        "--leader-elect",
    ];
    let a = controller(&env.run_dir, "replica-a", &ha, &[]);
    let r = wait_for("a clean report", || {
        report(admin, CRD)
            .ok()
            .filter(|r| condition(r, "InstancesValid").is_some_and(|c| c.0 == "True"))
    });
    assert_eq!(r["status"]["versions"][0]["objects"], 3, "{r}");
    assert_eq!(r["status"]["versions"][0]["structural"], true, "{r}");
    assert_eq!(condition(&r, "NonStructuralSchema").unwrap().0, "False");

    // `plan --cluster` with the tightening revision agrees with `validate --stored` on the
    // same objects.
    let rev2 = env.run_dir.join("things-v2.yaml");
    std::fs::write(&rev2, things_crd(CRD, GROUP, 2).to_string()).unwrap();
    let admin_kc = env.kubeconfig.display().to_string();
    let rev2_s = rev2.display().to_string();
    let (code, stdout, stderr) = cli(
        &[
            "plan",
            &rev2_s,
            "--cluster",
            "-o",
            "json",
            "--kubeconfig",
            &admin_kc,
        ],
        &[],
    );
    assert_eq!(code, Some(1), "{stderr}");
    let plan_lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(plan_lines.len(), 3);
    assert!(
        plan_lines
            .iter()
            .all(|l| l["validBefore"] == true && l["valid"] == false)
    );
    let listed: Vec<String> = admin
        .list("/apis/e2e.crd-audit.dev/v1/things")
        .unwrap()
        .into_iter()
        .map(|mut o| {
            o["apiVersion"] = "e2e.crd-audit.dev/v1".into();
            o["kind"] = "Thing".into();
            o.to_string()
        })
        .collect();
    let objects = env.run_dir.join("things.json");
    std::fs::write(&objects, listed.join("\n")).unwrap();
    let objects_s = objects.display().to_string();
    let (_, validate_out, _) = cli(
        &[
            "validate", "--stored", "-o", "json", "--crd", &rev2_s, &objects_s,
        ],
        &[],
    );
    let validate_lines: Vec<Value> = validate_out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(validate_lines.len(), 3);
    for (p, v) in plan_lines.iter().zip(&validate_lines) {
        // validate places each finding in its file (line, column); plan reads the cluster.
        let mut errors = v["errors"].clone();
        for e in errors.as_array_mut().into_iter().flatten() {
            let e = e.as_object_mut().unwrap();
            assert!(e.remove("line").is_some_and(|l| l.as_u64() > Some(0)));
            assert!(e.remove("column").is_some_and(|c| c.as_u64() > Some(0)));
        }
        assert_eq!((&p["name"], &p["errors"]), (&v["name"], &errors));
    }

    // 2. Tightening: every object lacks the new required field, one has a narrowed value.
    things(&env, 2);
    let r = wait_for("the tightened report", || {
        report(admin, CRD).ok().filter(|r| {
            condition(r, "InstancesValid").is_some_and(|c| c.0 == "False")
                && r["status"]["observedGeneration"] == 2
        })
    });
    assert_eq!(condition(&r, "SchemaTightened").unwrap().0, "True", "{r}");
    assert_eq!(invalid_names(&r), vec!["a", "b", "c"]);
    let b_errors = r["status"]["invalidObjects"][1]["errors"].to_string();
    assert!(b_errors.contains("spec.tier: Required value"), "{b_errors}");
    assert!(
        b_errors.contains("spec.size: Unsupported value"),
        "{b_errors}"
    );
    // Values are redacted in reports by default.
    assert!(!b_errors.contains("\"medium\""), "{b_errors}");
    // 1.20 has no validation ratcheting: it refuses the annotation of every invalid object,
    // and the report says so.
    let r = wait_for("unwritable objects in the report", || {
        report(admin, CRD)
            .ok()
            .filter(|r| r["status"]["versions"][0]["unwritableObjects"] == 3)
    });
    assert_eq!(r["status"]["versions"][0]["invalidObjects"], 3);
    // kube-apiserver 1.20 has no validation ratcheting: every invalid object is stuck.
    assert_eq!(r["status"]["versions"][0]["blockedObjects"], 3);
    let accepted = r["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "UpdatesAccepted"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (&accepted["status"], &accepted["reason"]),
        (&json!("False"), &json!("BlockedObjects")),
        "{accepted}"
    );
    assert!(
        r["status"]["invalidObjects"]
            .as_array()
            .is_some_and(|l| l.iter().all(|o| o["updatesBlocked"] == true)),
        "{}",
        r["status"]["invalidObjects"]
    );
    let tightened = wait_for("a SchemaTightened event", || {
        let e = events(admin, "SchemaTightened");
        (!e.is_empty()).then_some(e)
    });
    assert!(
        note(&tightened[0]).starts_with("3 object(s) newly invalid"),
        "{}",
        note(&tightened[0])
    );
    assert!(
        note(&tightened[0]).contains("3 of them stuck"),
        "{}",
        note(&tightened[0])
    );
    // Every object the change broke gets its Event (within the budget): UpdatesBlocked, as
    // the server refuses every update of them (SchemaViolation when ratcheting tolerates them).
    let violations = wait_for("UpdatesBlocked events on the broken objects", || {
        let e = events(admin, "UpdatesBlocked");
        (e.len() >= 3).then_some(e)
    });
    let mut regarding: Vec<String> = violations
        .iter()
        .map(|e| {
            e["regarding"]["name"]
                .as_str()
                .or(e["involvedObject"]["name"].as_str())
                .unwrap_or("")
                .to_string()
        })
        .collect();
    regarding.sort();
    assert_eq!(regarding, vec!["a", "b", "c"]);

    // Metrics: the counts per CRD, one watch per audited CRD.
    let text = wait_for("metrics with the invalid count", || {
        a.scrape().filter(|t| {
            metric(
                t,
                &format!("crd_audit_invalid_objects{{crd=\"{CRD}\",version=\"v1\"}}"),
            ) == Some(3.0)
        })
    });
    assert_eq!(
        metric(
            &text,
            &format!("crd_audit_objects{{crd=\"{CRD}\",version=\"v1\"}}")
        ),
        Some(3.0),
        "{text}"
    );
    assert_eq!(
        metric(
            &text,
            &format!("crd_audit_blocked_objects{{crd=\"{CRD}\",version=\"v1\"}}")
        ),
        Some(3.0),
        "{text}"
    );
    let audited: Vec<Value> = admin
        .list("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        .unwrap()
        .into_iter()
        .filter(|c| c["spec"]["group"] != "excluded.crd-audit.dev")
        // The report CRD is not audited: its objects are the operator's own reports.
        .filter(|c| c["metadata"]["name"] != "schemaaudits.crd-audit.dev")
        .collect();
    assert_eq!(
        metric(&text, "crd_audit_watches"),
        Some(audited.len() as f64),
        "{text}"
    );
    assert!(metric(&text, "crd_audit_validations_total").unwrap_or(0.0) >= 6.0);
    assert_eq!(metric(&text, "crd_audit_leader"), Some(1.0));

    // 3. Loosening clears everything.
    things(&env, 3);
    let r = wait_for("the loosened report", || {
        report(admin, CRD).ok().filter(|r| {
            condition(r, "InstancesValid").is_some_and(|c| c.0 == "True")
                && r["status"]["observedGeneration"] == 3
        })
    });
    assert_eq!(condition(&r, "SchemaTightened").unwrap().0, "False", "{r}");
    assert_eq!(r["status"]["versions"][0]["unwritableObjects"], 0, "{r}");
    wait_for("a SchemaAuditClean event", || {
        (!events(admin, "SchemaAuditClean").is_empty()).then_some(())
    });
    let (status, log_text) = a.terminate();
    assert!(status.success(), "controller exit {status:?}\n{log_text}");
}

/// The shipped RBAC, the things CRD (revision 1) with its objects, and a leader-elected
/// replica (`name`, ServiceAccount kubeconfig, annotations on) that has reported them clean.
fn leader_with_clean_report(env: &TestEnv, name: &str) -> (Controller, Vec<String>) {
    install(env);
    things(env, 1);
    create_things(env);
    let kc = env.service_account_kubeconfig().display().to_string();
    let config = operator_config(env);
    let ha: Vec<String> = ["--kubeconfig", &kc, "--config", &config, "--leader-elect"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let args: Vec<&str> = ha.iter().map(String::as_str).collect();
    let c = controller(&env.run_dir, name, &args, &[]);
    wait_for("a clean report", || {
        report(&env.admin, CRD)
            .ok()
            .filter(|r| condition(r, "InstancesValid").is_some_and(|c| c.0 == "True"))
    });
    (c, ha)
}

/// High availability: a second replica waits; when the leader dies it takes over within
/// the lease duration and carries on without lost or duplicated findings; a restarted
/// operator knows the revision it audited last.
#[test]
fn a_standby_takes_over_and_a_restart_knows_the_last_revision() {
    let _serial = serial();
    let Some(env) = start() else { return };
    let admin = &env.admin;
    let (a, ha) = leader_with_clean_report(&env, "replica-a");
    let ha: Vec<&str> = ha.iter().map(String::as_str).collect();
    // High availability: a second replica waits; when the leader dies it takes over within
    // the lease duration and carries on without lost or duplicated findings.
    let lease = "/apis/coordination.k8s.io/v1/namespaces/crd-audit/leases/crd-audit";
    let holder = |k: &Rest| {
        k.get(lease)
            .ok()
            .and_then(|l| l["spec"]["holderIdentity"].as_str().map(str::to_string))
    };
    wait_for("replica-a to hold the Lease", || {
        (holder(admin).as_deref() == Some("replica-a")).then_some(())
    });
    let b = controller(&env.run_dir, "replica-b", &ha, &[]);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        holder(admin).as_deref(),
        Some("replica-a"),
        "the standby must not take over"
    );
    let standby_metrics = wait_for("the standby's metrics", || b.scrape());
    assert_eq!(metric(&standby_metrics, "crd_audit_leader"), Some(0.0));
    drop(a); // SIGKILL: no release of the Lease
    let took_over = Instant::now();
    wait_for("the standby to take over", || {
        (holder(admin).as_deref() == Some("replica-b")).then_some(())
    });
    assert!(
        took_over.elapsed() < Duration::from_secs(25),
        "failover took {:?}",
        took_over.elapsed()
    );
    things(&env, 2);
    let r = wait_for("the new leader's report", || {
        report(admin, CRD).ok().filter(|r| {
            r["status"]["observedGeneration"] == 2
                && condition(r, "InstancesValid").is_some_and(|c| c.0 == "False")
        })
    });
    assert_eq!(invalid_names(&r), vec!["a", "b", "c"]);
    // SIGTERM releases the Lease at once.
    let (status, _) = b.terminate();
    assert!(status.success());
    assert_eq!(holder(admin).as_deref(), None);
    // A restarted operator knows the revision it audited last: change the CRD while no
    // replica runs, then start one.
    things(&env, 3);
    let c = controller(&env.run_dir, "replica-c", &ha, &[]);
    let r = wait_for("the restarted operator's report", || {
        report(admin, CRD).ok().filter(|r| {
            r["status"]["observedGeneration"] == 3
                && condition(r, "InstancesValid").is_some_and(|c| c.0 == "True")
        })
    });
    assert_eq!(r["status"]["lastSchemaChange"]["fromGeneration"], 2, "{r}");
    assert_eq!(condition(&r, "SchemaTightened").unwrap().0, "False", "{r}");
    let (status, log_text) = c.terminate();
    assert!(status.success(), "controller exit {status:?}\n{log_text}");
}

/// A legacy v1beta1 CRD with a non-structural schema, a report deleted behind the operator's
/// back, and a deleted CRD.
#[test]
fn legacy_crds_deleted_reports_and_deleted_crds() {
    let _serial = serial();
    let Some(env) = start() else { return };
    let admin = &env.admin;
    let c = audited_things(&env, "legacy");
    // 4. A legacy v1beta1 CRD with a non-structural schema (1.20 still accepts it): our
    // condition matches the one the server sets on the CRD.
    let legacy = json!({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.e2e.crd-audit.dev"},
        "spec": {"group": "e2e.crd-audit.dev", "scope": "Namespaced", "version": "v1",
            "names": {"plural": "gadgets", "kind": "Gadget"},
            "validation": {"openAPIV3Schema": {"properties": {"spec": {"properties": {
                "port": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}}}}}}});
    apply(admin, &legacy);
    let server_condition = wait_for("the server's NonStructuralSchema condition", || {
        let c = admin
            .get(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.e2e.crd-audit.dev",
            )
            .ok()?;
        c["status"]["conditions"]
            .as_array()?
            .iter()
            .find(|x| x["type"] == "NonStructuralSchema")
            .map(|x| x["message"].as_str().unwrap_or("").to_string())
    });
    let r = wait_for("the legacy report", || {
        report(admin, "gadgets.e2e.crd-audit.dev")
            .ok()
            .filter(|r| condition(r, "NonStructuralSchema").is_some_and(|c| c.0 == "True"))
    });
    assert_eq!(
        condition(&r, "NonStructuralSchema").unwrap().1,
        server_condition
    );
    assert_eq!(r["status"]["versions"][0]["structural"], false, "{r}");

    // 5. A report deleted behind the operator's back is written again.
    admin
        .delete("/apis/crd-audit.dev/v1alpha1/schemaaudits/gadgets.e2e.crd-audit.dev")
        .unwrap();
    wait_for("the deleted report to be written again", || {
        report(admin, "gadgets.e2e.crd-audit.dev").ok()
    });

    // 6. Deleting a CRD removes its report.
    admin
        .delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.e2e.crd-audit.dev")
        .unwrap();
    wait_for("the report to go", || {
        matches!(report(admin, CRD), Err(e) if e.status == 404).then_some(())
    });
    let (status, log_text) = c.terminate();
    assert!(status.success(), "controller exit {status:?}\n{log_text}");
}

/// RBAC revoked, then narrowed, mid-run: the controller keeps running, reports what it may
/// not read as Forbidden, and shuts down gracefully.
#[test]
fn revoked_and_narrowed_rbac_is_survived() {
    let _serial = serial();
    let Some(env) = start() else { return };
    let admin = &env.admin;
    let admin_kc = env.kubeconfig.display().to_string();
    let (c, _) = leader_with_clean_report(&env, "replica-c");
    // RBAC revoked mid-run: the controller keeps running (backing off), and picks up again
    // when access is restored.
    let binding = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/crd-audit";
    let saved = admin.get(binding).unwrap();
    admin.delete(binding).unwrap();
    apply(
        admin,
        &json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "later.e2e.crd-audit.dev"},
        "spec": {"group": "e2e.crd-audit.dev", "scope": "Cluster", "names": {"plural": "later", "kind": "Later"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object"}}}]}}),
    );
    std::thread::sleep(Duration::from_secs(4));
    let mut c = c;
    assert!(
        c.child.try_wait().unwrap().is_none(),
        "the controller died without RBAC"
    );
    let mut restored = saved.clone();
    if let Some(m) = restored["metadata"].as_object_mut() {
        m.retain(|k, _| k == "name");
    }
    apply(admin, &restored);
    wait_for("the report of a CRD created while forbidden", || {
        report(admin, "later.e2e.crd-audit.dev").ok()
    });

    // With a ClusterRole narrowed to the CRD groups present (what `manifests
    // --rbac-for-cluster` prints), a CRD of another group cannot be read: its report says
    // Forbidden instead of the controller failing.
    let (code, narrowed, stderr) = cli(
        &["manifests", "--rbac-for-cluster", "--kubeconfig", &admin_kc],
        &[],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let mut narrowed: Value = serde_json::from_str(&narrowed).unwrap();
    let mut role = admin
        .get("/apis/rbac.authorization.k8s.io/v1/clusterroles/crd-audit")
        .unwrap();
    let mut rules: Vec<Value> = role["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["apiGroups"] != json!(["*"]))
        .cloned()
        .collect();
    rules.push(narrowed["rules"][0].take());
    role["rules"] = Value::Array(rules);
    if let Some(m) = role["metadata"].as_object_mut() {
        m.retain(|k, _| k == "name");
    }
    apply(admin, &role);
    apply(
        admin,
        &json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "secrets.forbidden.crd-audit.test"},
        "spec": {"group": "forbidden.crd-audit.test", "scope": "Cluster",
            "names": {"plural": "secrets", "kind": "Secret"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object"}}}]}}),
    );
    let r = wait_for("a Forbidden report", || {
        report(admin, "secrets.forbidden.crd-audit.test")
            .ok()
            .filter(|r| {
                r["status"]["conditions"].as_array().is_some_and(|c| {
                    c.iter()
                        .any(|c| c["type"] == "InstancesValid" && c["reason"] == "Forbidden")
                })
            })
    });
    assert_eq!(condition(&r, "InstancesValid").unwrap().0, "Unknown");
    assert!(c.child.try_wait().unwrap().is_none());
    // Graceful shutdown on SIGTERM.
    let (status, log_text) = c.terminate();
    assert!(status.success(), "controller exit {status:?}\n{log_text}");
    assert!(log_text.contains("\"became the leader\""), "{log_text}");
    // Errors are logged only while RBAC was revoked or narrowed.
    for line in error_lines(&log_text) {
        assert!(line.contains("403") || line.contains("orbidden"), "{line}");
    }
}

/// A kubeconfig with an exec credential plugin (`tests/testenv/exec-credential.sh`) whose
/// token is the admin's, split over two files: clusters and users in one, contexts in the
/// other (as `KUBECONFIG=a:b` merges them).
fn split_exec_kubeconfig(env: &TestEnv) -> (String, std::path::PathBuf) {
    let ca = std::fs::read(&env.ca).unwrap();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testenv/exec-credential.sh");
    let calls = env.run_dir.join("exec-calls.log");
    let users = env.run_dir.join("users.kubeconfig");
    let contexts = env.run_dir.join("contexts.kubeconfig");
    let users_doc = json!({"apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "e2e", "cluster": {"server": env.server,
            "certificate-authority-data": base64(&ca)}}],
        "users": [{"name": "plugin", "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "bash", "args": [script.display().to_string()],
            "env": [{"name": "E2E_TOKEN", "value": env.admin_token},
                    {"name": "E2E_EXEC_LOG", "value": calls.display().to_string()}],
            "interactiveMode": "Never"}}}]});
    let contexts_doc = json!({"apiVersion": "v1", "kind": "Config",
        "contexts": [{"name": "via-plugin", "context": {"cluster": "e2e", "user": "plugin"}}],
        "current-context": "via-plugin"});
    std::fs::write(&users, users_doc.to_string()).unwrap();
    std::fs::write(&contexts, contexts_doc.to_string()).unwrap();
    (format!("{}:{}", users.display(), contexts.display()), calls)
}

fn base64(b: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in b.chunks(3) {
        let n = chunk.iter().fold(0u32, |a, &x| (a << 8) | x as u32) << (8 * (3 - chunk.len()));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Client certificates, exec credential plugins and `KUBECONFIG` with two files, for
/// `plan --cluster` and the controller; and the controller started as from a laptop: only
/// the report CRD applied, no operator namespace, no flags.
#[test]
fn every_kind_of_kubeconfig_works_and_a_laptop_start_needs_no_namespace() {
    let _serial = serial();
    let Some(env) = start() else { return };
    let admin = &env.admin;
    apply_file(admin, "manifests/schemaaudit-crd.yaml");
    things(&env, 1);
    create_things(&env);
    let rev2 = env.run_dir.join("things-v2.yaml");
    std::fs::write(&rev2, things_crd(CRD, GROUP, 2).to_string()).unwrap();
    let rev2_s = rev2.display().to_string();
    let admin_kc = env.kubeconfig.display().to_string();
    let plan_breaks_all = |out: &(Option<i32>, String, String), how: &str| {
        assert_eq!(out.0, Some(1), "{how}: {}", out.2);
        let lines: Vec<Value> = out
            .1
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3, "{how}: {}", out.1);
        assert!(
            lines
                .iter()
                .all(|l| l["valid"] == false && l["validBefore"] == true),
            "{how}"
        );
    };
    // 1. A client-certificate user.
    let out = cli(
        &[
            "plan",
            &rev2_s,
            "--cluster",
            "-o",
            "json",
            "--kubeconfig",
            &admin_kc,
            "--context",
            "admin-cert",
        ],
        &[],
    );
    plan_breaks_all(&out, "client certificate");
    // 2 + 3. An exec credential plugin, with KUBECONFIG naming two files.
    let (kubeconfig_env, calls) = split_exec_kubeconfig(&env);
    let out = cli(
        &["plan", &rev2_s, "--cluster", "-o", "json"],
        &[("KUBECONFIG", &kubeconfig_env)],
    );
    plan_breaks_all(&out, "exec plugin, KUBECONFIG=a:b");
    assert!(
        std::fs::read_to_string(&calls)
            .unwrap_or_default()
            .contains("called")
    );
    // A kubeconfig that cannot work says why, naming the file.
    let out = cli(
        &[
            "plan",
            &rev2_s,
            "--cluster",
            "--kubeconfig",
            "/nonexistent/kubeconfig",
        ],
        &[],
    );
    assert_eq!(out.0, Some(2));
    assert!(out.2.contains("/nonexistent/kubeconfig"), "{}", out.2);

    // 4. The controller from a laptop: current kubeconfig, no namespace, no flags.
    assert!(matches!(admin.get("/api/v1/namespaces/crd-audit"), Err(e) if e.status == 404));
    let c = controller(
        &env.run_dir,
        "laptop-cert",
        &["--kubeconfig", &admin_kc, "--context", "admin-cert"],
        &[],
    );
    let r = wait_for("a report from the client-certificate controller", || {
        report(admin, CRD)
            .ok()
            .filter(|r| condition(r, "InstancesValid").is_some_and(|c| c.0 == "True"))
    });
    assert_eq!(r["status"]["versions"][0]["objects"], 3, "{r}");
    let (status, log) = c.terminate();
    assert!(status.success(), "{log}");
    assert!(error_lines(&log).is_empty(), "{log}");
    admin
        .delete(&format!("/apis/crd-audit.dev/v1alpha1/schemaaudits/{CRD}"))
        .unwrap();
    let c = controller(
        &env.run_dir,
        "laptop-plugin",
        &[],
        &[("KUBECONFIG", &kubeconfig_env)],
    );
    wait_for("a report from the exec-plugin controller", || {
        report(admin, CRD)
            .ok()
            .filter(|r| condition(r, "InstancesValid").is_some_and(|c| c.0 == "True"))
    });
    let (status, log) = c.terminate();
    assert!(status.success(), "{log}");
    assert!(error_lines(&log).is_empty(), "{log}");
    // A token file is read again when it changes (kube re-reads it after a minute): the
    // controller starts with a wrong token and works once the file holds a right one.
    admin
        .delete(&format!("/apis/crd-audit.dev/v1alpha1/schemaaudits/{CRD}"))
        .unwrap();
    let token_file = env.run_dir.join("token");
    std::fs::write(&token_file, "not-a-valid-token").unwrap();
    let token_kc = env.run_dir.join("token-file.kubeconfig");
    std::fs::write(
        &token_kc,
        json!({"apiVersion": "v1", "kind": "Config", "current-context": "t",
            "clusters": [{"name": "t", "cluster": {"server": env.server,
                "certificate-authority-data": base64(&std::fs::read(&env.ca).unwrap())}}],
            "users": [{"name": "t", "user": {"tokenFile": token_file.display().to_string()}}],
            "contexts": [{"name": "t", "context": {"cluster": "t", "user": "t"}}]})
        .to_string(),
    )
    .unwrap();
    let token_kc_s = token_kc.display().to_string();
    let c = controller(
        &env.run_dir,
        "token-file",
        &["--kubeconfig", &token_kc_s],
        &[],
    );
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        report(admin, CRD).is_err(),
        "a report written with a wrong token"
    );
    std::fs::write(&token_file, &env.admin_token).unwrap();
    wait_for_at_most(
        "a report once the token file holds a valid token",
        Duration::from_secs(120),
        &mut || report(admin, CRD).ok(),
    );
    let (status, log) = c.terminate();
    assert!(status.success(), "{log}");

    // Leader election asked for where its namespace does not exist: one clear line, exit 2.
    let mut c = controller(
        &env.run_dir,
        "laptop-elect",
        &["--kubeconfig", &admin_kc, "--leader-elect"],
        &[],
    );
    let status = wait_for("the controller to refuse", || c.child.try_wait().unwrap());
    assert_eq!(status.code(), Some(2));
    let log = c.log_text();
    let line = log.lines().find(|l| l.starts_with("error:")).unwrap_or("");
    assert!(
        line.contains("\"crd-audit\"") && line.contains("create"),
        "{log}"
    );
}

/// The API server killed while a schema tightens and started again: the report converges
/// without restarting the operator, and no finding is lost or duplicated.
#[test]
fn the_report_converges_across_an_api_server_restart() {
    let _serial = serial();
    let Some(env) = start() else { return };
    let admin = &env.admin;
    install(&env);
    things(&env, 1);
    create_things(&env);
    let admin_kc = env.kubeconfig.display().to_string();
    let mut c = controller(&env.run_dir, "survivor", &["--kubeconfig", &admin_kc], &[]);
    wait_for("a clean report", || {
        report(admin, CRD)
            .ok()
            .filter(|r| condition(r, "InstancesValid").is_some_and(|c| c.0 == "True"))
    });
    things(&env, 2);
    env.restart_apiserver(Duration::from_secs(3));
    let r = wait_for("the tightened report after the restart", || {
        report(admin, CRD).ok().filter(|r| {
            r["status"]["observedGeneration"] == 2
                && condition(r, "InstancesValid").is_some_and(|c| c.0 == "False")
        })
    });
    assert_eq!(invalid_names(&r), vec!["a", "b", "c"]);
    assert_eq!(r["status"]["versions"][0]["invalidObjects"], 3, "{r}");
    assert_eq!(r["status"]["versions"][0]["objects"], 3, "{r}");
    assert_eq!(condition(&r, "SchemaTightened").unwrap().0, "True");
    let tightened = wait_for("the SchemaTightened event", || {
        let e = events(admin, "SchemaTightened");
        (!e.is_empty()).then_some(e)
    });
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(events(admin, "SchemaTightened").len(), 1, "{tightened:?}");
    assert!(note(&tightened[0]).starts_with("3 object(s) newly invalid"));
    // A new object written after the restart is counted once.
    apply(
        admin,
        &json!({"apiVersion": "e2e.crd-audit.dev/v1", "kind": "Thing",
            "metadata": {"name": "d", "namespace": "default"}, "spec": {"size": "small", "tier": "gold"}}),
    );
    wait_for("the new object counted", || {
        report(admin, CRD)
            .ok()
            .filter(|r| r["status"]["versions"][0]["objects"] == 4)
    });
    assert!(
        c.child.try_wait().unwrap().is_none(),
        "the controller exited"
    );
    let (status, log) = c.terminate();
    assert!(status.success(), "{log}");
}

/// The standalone apiextensions-apiserver 1.36 (`tests/testenv/apiext-up.sh`), stopped on
/// drop.
struct ApiExt {
    run_dir: std::path::PathBuf,
    kubeconfig: std::path::PathBuf,
}

impl Drop for ApiExt {
    fn drop(&mut self) {
        let _ = std::process::Command::new("bash")
            .arg("tests/testenv/apiext-down.sh")
            .arg(&self.run_dir)
            .status();
    }
}

/// Starts the standalone apiextensions-apiserver 1.36; `None` (the test is skipped) only when
/// end-to-end tests are off or not required and the server cannot be had.
fn start_apiext() -> Option<ApiExt> {
    let mode = std::env::var("CRD_AUDIT_E2E").unwrap_or_default();
    if mode == "off" {
        eprintln!("NOTICE: CRD_AUDIT_E2E=off: end-to-end tests skipped");
        return None;
    }
    let out = std::process::Command::new("bash")
        .arg("tests/testenv/apiext-up.sh")
        .stderr(std::process::Stdio::inherit())
        .output()
        .unwrap();
    if !out.status.success() {
        assert_ne!(
            mode, "required",
            "the apiextensions-apiserver could not be started (../shared/oracle/build.sh with WITH_SERVER=1 builds it)"
        );
        eprintln!("NOTICE: no apiextensions-apiserver 1.36 here; this end-to-end test is skipped");
        return None;
    }
    let kubeconfig = std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    Some(ApiExt {
        run_dir: kubeconfig.parent().unwrap().to_path_buf(),
        kubeconfig,
    })
}

fn widgets_crd(max: u32) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.cel.crd-audit.dev"},
        "spec": {"group": "cel.crd-audit.dev", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object",
                    "properties": {"replicas": {"type": "integer"}},
                    "x-kubernetes-validations": [{"rule": format!("self.replicas <= {max}"),
                        "message": format!("at most {max} replicas")}]}}}}}]}})
}

/// CEL on live data: `plan --cluster` and the controller against the standalone
/// apiextensions-apiserver 1.36 (which 1.20 cannot do: it drops CEL rules). That server has
/// no Events and no Leases; the controller says so once and carries on.
#[test]
fn cel_rules_tighten_on_a_1_36_apiextensions_server() {
    let _serial = serial();
    let Some(server) = start_apiext() else {
        return;
    };
    let admin = Rest::new(&server.kubeconfig, None);
    apply_file(&admin, "manifests/schemaaudit-crd.yaml");
    apply(&admin, &widgets_crd(10));
    wait_for("the widgets CRD to be served", || {
        admin
            .get("/apis/cel.crd-audit.dev/v1/namespaces/default/widgets")
            .ok()
    });
    for (name, replicas) in [("w3", 3), ("w7", 7), ("w9", 9)] {
        apply(
            &admin,
            &json!({"apiVersion": "cel.crd-audit.dev/v1", "kind": "Widget",
                "metadata": {"name": name, "namespace": "default"}, "spec": {"replicas": replicas}}),
        );
    }
    // The server itself enforces the rule: this is live CEL.
    let refused = admin.apply(
        "/apis/cel.crd-audit.dev/v1/namespaces/default/widgets/w11",
        &json!({"apiVersion": "cel.crd-audit.dev/v1", "kind": "Widget",
            "metadata": {"name": "w11", "namespace": "default"}, "spec": {"replicas": 11}}),
    );
    assert!(
        matches!(&refused, Err(e) if e.status == 422 && e.message.contains("at most 10 replicas")),
        "{refused:?}"
    );
    let kc = server.kubeconfig.display().to_string();
    let c = controller(
        &server.run_dir,
        "apiext",
        &["--kubeconfig", &kc, "--leader-elect"],
        &[],
    );
    let crd = "widgets.cel.crd-audit.dev";
    wait_for("a clean report", || {
        report(&admin, crd)
            .ok()
            .filter(|r| condition(r, "InstancesValid").is_some_and(|c| c.0 == "True"))
    });
    let rev = server.run_dir.join("widgets-5.yaml");
    std::fs::write(&rev, widgets_crd(5).to_string()).unwrap();
    let rev_s = rev.display().to_string();
    let (code, stdout, stderr) = cli(
        &[
            "plan",
            &rev_s,
            "--cluster",
            "-o",
            "json",
            "--kubeconfig",
            &kc,
        ],
        &[],
    );
    assert_eq!(code, Some(1), "{stderr}");
    let broken: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["valid"] == false)
        .collect();
    let names: Vec<&str> = broken.iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["w7", "w9"], "{stdout}");
    assert!(
        broken[0]["errors"]
            .to_string()
            .contains("at most 5 replicas"),
        "{stdout}"
    );
    apply(&admin, &widgets_crd(5));
    let r = wait_for("the tightened report", || {
        report(&admin, crd).ok().filter(|r| {
            r["status"]["observedGeneration"] == 2
                && condition(r, "InstancesValid").is_some_and(|c| c.0 == "False")
        })
    });
    assert_eq!(invalid_names(&r), vec!["w7", "w9"]);
    assert!(
        r["status"]["invalidObjects"][0]["errors"]
            .to_string()
            .contains("at most 5 replicas"),
        "{r}"
    );
    assert_eq!(condition(&r, "SchemaTightened").unwrap().0, "True", "{r}");
    let (status, log) = c.terminate();
    assert!(status.success(), "{log}");
    let said = |needle: &str| log.lines().filter(|l| l.contains(needle)).count();
    assert_eq!(said("serves no coordination.k8s.io/v1 Leases"), 1, "{log}");
    assert_eq!(said("serves no Events"), 1, "{log}");
    assert!(error_lines(&log).is_empty(), "{log}");
}

/// The report named crd-audit of `namespace` (`""`: the cluster-wide one) in the API
/// `group_version`, whose resources are `plural` and `cluster_plural`.
fn crd_audit_report(
    rest: &Rest,
    group_version: &str,
    (plural, cluster_plural): (&str, &str),
    namespace: &str,
) -> Result<Value, ApiError> {
    if namespace.is_empty() {
        rest.get(&format!("/apis/{group_version}/{cluster_plural}/crd-audit"))
    } else {
        rest.get(&format!(
            "/apis/{group_version}/namespaces/{namespace}/{plural}/crd-audit"
        ))
    }
}

fn policy_report(rest: &Rest, namespace: &str) -> Result<Value, ApiError> {
    let plurals = ("policyreports", "clusterpolicyreports");
    crd_audit_report(rest, "wgpolicyk8s.io/v1alpha2", plurals, namespace)
}

fn open_report(rest: &Rest, namespace: &str) -> Result<Value, ApiError> {
    let plurals = ("reports", "clusterreports");
    crd_audit_report(rest, "openreports.io/v1alpha1", plurals, namespace)
}

fn result_names(r: &Value) -> Vec<String> {
    r["results"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|x| x["resources"][0]["name"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// `policyReports: true`: the operator finds the PolicyReport CRDs missing (and says so),
/// picks them up once installed, and keeps one PolicyReport per namespace with invalid
/// objects and a ClusterPolicyReport in step with the audit: results appear when a schema
/// tightens, go when objects are fixed or deleted, and a report without results is deleted.
/// Once OpenReports is installed, the results move there.
#[test]
fn policy_reports_follow_the_audit() {
    let _serial = serial();
    let Some(env) = start() else { return };
    let admin = &env.admin;
    install(&env);
    const PLANETS: &str = "planets.e2e.crd-audit.dev";
    let planets = |revision: u8| {
        let mut c = things_crd(PLANETS, GROUP, revision);
        c["spec"]["scope"] = json!("Cluster");
        c
    };
    // Revision 3 knows spec.tier (revision 1 would prune it); revision 2 requires it.
    things(&env, 3);
    apply(admin, &planets(3));
    for ns in ["team-a", "team-b"] {
        apply(
            admin,
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        );
    }
    wait_for("the CRDs to be served", || {
        admin.get("/apis/e2e.crd-audit.dev/v1/planets").ok()?;
        admin
            .get("/apis/e2e.crd-audit.dev/v1/namespaces/team-a/things")
            .ok()
    });
    let thing = |ns: &str, name: &str, size: &str, tier: Option<&str>| {
        let mut spec = json!({"size": size});
        if let Some(t) = tier {
            spec["tier"] = json!(t);
        }
        json!({"apiVersion": "e2e.crd-audit.dev/v1", "kind": "Thing",
            "metadata": {"name": name, "namespace": ns}, "spec": spec})
    };
    let planet = |name: &str, size: &str, tier: Option<&str>| {
        let mut o = thing("", name, size, tier);
        o["kind"] = json!("Planet");
        o["metadata"].as_object_mut().unwrap().remove("namespace");
        o
    };
    for o in [
        thing("team-a", "a", "small", Some("gold")),
        thing("team-a", "b", "medium", None),
        thing("team-a", "e", "large", Some("gold")),
        thing("team-b", "c", "medium", None),
        thing("default", "d", "small", Some("gold")),
        planet("p1", "medium", None),
        planet("p2", "small", Some("gold")),
    ] {
        apply(admin, &o);
    }

    let config = env.run_dir.join("policy-reports.yaml");
    std::fs::write(&config, "policyReports: true\n").unwrap();
    let kc = env.service_account_kubeconfig().display().to_string();
    let config_s = config.display().to_string();
    let c = controller(
        &env.run_dir,
        "policy",
        &["--kubeconfig", &kc, "--config", &config_s],
        &[],
    );
    // No PolicyReport CRDs yet: a warning, SchemaAudit reports as usual.
    wait_for("the warning about missing PolicyReport CRDs", || {
        c.log_text()
            .contains("PolicyReport CRDs (wgpolicyk8s.io/v1alpha2 policyreports and clusterpolicyreports) are not installed")
            .then_some(())
    });
    wait_for("clean SchemaAudit reports", || {
        [CRD, PLANETS]
            .iter()
            .all(|n| {
                report(admin, n)
                    .ok()
                    .is_some_and(|r| condition(&r, "InstancesValid").is_some_and(|c| c.0 == "True"))
            })
            .then_some(())
    });
    for f in [
        "tests/data/policyreport/policyreport-crd.yaml",
        "tests/data/policyreport/clusterpolicyreport-crd.yaml",
    ] {
        apply_file(admin, f);
    }
    wait_for("the PolicyReport CRDs to be served", || {
        admin
            .get("/apis/wgpolicyk8s.io/v1alpha2/clusterpolicyreports")
            .ok()
    });
    // Everything valid: no report.
    wait_for("the operator to pick up the PolicyReport CRDs", || {
        c.log_text()
            .contains("\"writing PolicyReports\"")
            .then_some(())
    });
    for ns in ["", "team-a", "team-b", "default"] {
        assert!(
            matches!(policy_report(admin, ns), Err(e) if e.status == 404),
            "a report in {ns:?} while everything is valid"
        );
    }

    // Tightening: b, e (team-a), c (team-b) and p1 (cluster-scoped) become invalid.
    things(&env, 2);
    apply(admin, &planets(2));
    let team_a = wait_for("the team-a PolicyReport", || {
        policy_report(admin, "team-a")
            .ok()
            .filter(|r| result_names(r) == ["b", "e"])
    });
    let sa = wait_for("the tightened SchemaAudit report", || {
        report(admin, CRD)
            .ok()
            .filter(|r| r["status"]["observedGeneration"] == 2 && invalid_names(r).len() == 3)
    });
    assert_eq!(team_a["kind"], "PolicyReport");
    assert_eq!(
        team_a["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "crd-audit"
    );
    assert!(team_a.get("scope").is_none(), "{team_a}");
    assert_eq!(
        team_a["summary"],
        json!({"pass": 0, "fail": 2, "warn": 0, "error": 0, "skip": 0})
    );
    assert_eq!(
        team_a["metadata"]["annotations"]["crd-audit.dev/invalid-objects"],
        "2"
    );
    let b = admin
        .get("/apis/e2e.crd-audit.dev/v1/namespaces/team-a/things/b")
        .unwrap();
    let r = &team_a["results"][0];
    assert_eq!(r["policy"], "crd-audit");
    assert_eq!(r["source"], "crd-audit");
    assert_eq!(r["rule"], CRD);
    assert_eq!(r["result"], "fail");
    assert_eq!(r["scored"], true);
    assert_eq!(r["category"], "CRD Schema");
    // kube-apiserver 1.20 has no validation ratcheting: an invalid object is stuck.
    assert_eq!(r["severity"], "critical");
    assert_eq!(
        r["resources"],
        json!([{"apiVersion": "e2e.crd-audit.dev/v1", "kind": "Thing", "namespace": "team-a",
            "name": "b", "uid": b["metadata"]["uid"]}])
    );
    assert_eq!(r["timestamp"]["nanos"], 0);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let seconds = r["timestamp"]["seconds"].as_i64().unwrap();
    assert!((now - 300..=now + 5).contains(&seconds), "{r}");
    assert_eq!(r["properties"], json!({"version": "v1", "errorCount": "2"}));
    // The message is the SchemaAudit report's first one for b (values redacted).
    let sa_b = sa["status"]["invalidObjects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "b")
        .unwrap();
    assert_eq!(r["message"], sa_b["errors"][0], "{r}\n{sa_b}");
    assert!(!r["message"].to_string().contains("\"medium\""), "{r}");
    let team_b = wait_for("the team-b PolicyReport", || {
        policy_report(admin, "team-b")
            .ok()
            .filter(|r| result_names(r) == ["c"])
    });
    assert_eq!(team_b["summary"]["fail"], 1);
    let cluster = wait_for("the ClusterPolicyReport", || {
        policy_report(admin, "")
            .ok()
            .filter(|r| result_names(r) == ["p1"])
    });
    assert_eq!(cluster["kind"], "ClusterPolicyReport");
    assert_eq!(cluster["results"][0]["rule"], PLANETS);
    assert_eq!(cluster["results"][0]["resources"][0]["kind"], "Planet");
    assert!(
        cluster["results"][0]["resources"][0]
            .get("namespace")
            .is_none()
    );
    assert!(matches!(policy_report(admin, "default"), Err(e) if e.status == 404));

    // Written only when the content changes.
    let version = team_a["metadata"]["resourceVersion"].clone();
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(
        policy_report(admin, "team-a").unwrap()["metadata"]["resourceVersion"],
        version
    );

    // Fixing e removes its result; fixing c empties team-b's report, which is deleted;
    // deleting p1 empties the ClusterPolicyReport.
    apply(admin, &thing("team-a", "e", "small", Some("gold")));
    apply(admin, &thing("team-b", "c", "small", Some("gold")));
    admin
        .delete("/apis/e2e.crd-audit.dev/v1/planets/p1")
        .unwrap();
    let team_a = wait_for("e's result to go", || {
        policy_report(admin, "team-a")
            .ok()
            .filter(|r| result_names(r) == ["b"])
    });
    assert_eq!(team_a["summary"]["fail"], 1);
    assert_eq!(
        team_a["metadata"]["annotations"]["crd-audit.dev/invalid-objects"],
        "1"
    );
    // b's result was not found again: same timestamp.
    assert_eq!(team_a["results"][0]["timestamp"]["seconds"], seconds);
    wait_for("the empty team-b report to be deleted", || {
        matches!(policy_report(admin, "team-b"), Err(e) if e.status == 404).then_some(())
    });
    wait_for("the empty ClusterPolicyReport to be deleted", || {
        matches!(policy_report(admin, ""), Err(e) if e.status == 404).then_some(())
    });
    // The SchemaAudit report went on alongside.
    wait_for("the SchemaAudit report with b only", || {
        report(admin, CRD)
            .ok()
            .filter(|r| invalid_names(r) == ["b"])
    });
    // OpenReports installed (`policyReportsApi: auto`): the results move to a Report, with
    // the same results, and the PolicyReport goes.
    for f in [
        "tests/data/openreports/report-crd.yaml",
        "tests/data/openreports/clusterreport-crd.yaml",
    ] {
        apply_file(admin, f);
    }
    let open = wait_for("the team-a OpenReports Report", || {
        open_report(admin, "team-a")
            .ok()
            .filter(|r| result_names(r) == ["b"])
    });
    assert_eq!(open["apiVersion"], "openreports.io/v1alpha1");
    assert_eq!(open["kind"], "Report");
    assert_eq!(open["source"], "crd-audit");
    // The same results; their timestamps are those of the new report.
    let without_timestamps = |r: &Value| {
        let mut results = r["results"].clone();
        for x in results.as_array_mut().unwrap() {
            x.as_object_mut().unwrap().remove("timestamp");
        }
        results
    };
    assert_eq!(without_timestamps(&open), without_timestamps(&team_a));
    assert_eq!(open["summary"], team_a["summary"]);
    wait_for("the PolicyReport to go once OpenReports is used", || {
        matches!(policy_report(admin, "team-a"), Err(e) if e.status == 404).then_some(())
    });
    // The CRD goes: its results go, and the report with them.
    admin
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD}"
        ))
        .unwrap();
    wait_for("the team-a report to be deleted with the CRD", || {
        matches!(open_report(admin, "team-a"), Err(e) if e.status == 404).then_some(())
    });
    assert!(matches!(policy_report(admin, "team-a"), Err(e) if e.status == 404));
    let (status, log) = c.terminate();
    assert!(status.success(), "{log}");
    assert!(error_lines(&log).is_empty(), "{log}");
}

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
    let _serial = serial();
    let Some(server) = start_apiext() else {
        return;
    };
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
    let dir = server.run_dir.join("ratchet");
    std::fs::create_dir_all(&dir).unwrap();
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
    let c = controller(&server.run_dir, "ratchet", &["--kubeconfig", &kc], &[]);
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
    let (status, log) = c.terminate();
    assert!(status.success(), "{log}");
}

/// A CRD deleted and created again while no operator ran: the new CRD's report starts a
/// history of its own (no `lastSchemaChange` of the deleted CRD, its own generation), although
/// the old report is still there (no garbage collector runs on this control plane).
#[test]
fn a_recreated_crd_starts_a_fresh_report() {
    let _serial = serial();
    let Some(env) = start() else { return };
    let admin = &env.admin;
    let admin_kc = env.kubeconfig.display().to_string();
    let c = audited_things(&env, "before");
    things(&env, 2);
    let r = wait_for("the tightened report", || {
        report(admin, CRD)
            .ok()
            .filter(|r| r["status"]["lastSchemaChange"]["toGeneration"] == 2)
    });
    assert_eq!(condition(&r, "SchemaTightened").unwrap().0, "True", "{r}");
    let (status, log) = c.terminate();
    assert!(status.success(), "{log}");

    // While no operator runs: the CRD goes and comes back (revision 1 again, no objects).
    admin
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD}"
        ))
        .unwrap();
    wait_for("the CRD to be gone", || {
        admin
            .get(&format!(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD}"
            ))
            .err()
            .filter(|e| e.status == 404)
    });
    things(&env, 1);
    let uid = admin
        .get(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD}"
        ))
        .unwrap()["metadata"]["uid"]
        .clone();
    let c = controller(&env.run_dir, "after", &["--kubeconfig", &admin_kc], &[]);
    let r = wait_for("the recreated CRD's report", || {
        report(admin, CRD).ok().filter(|r| {
            r["metadata"]["ownerReferences"][0]["uid"] == uid
                && condition(r, "InstancesValid").is_some_and(|c| c.0 == "True")
        })
    });
    assert_eq!(r["status"]["observedGeneration"], 1, "{r}");
    assert!(r["status"].get("lastSchemaChange").is_none(), "{r}");
    assert_eq!(condition(&r, "SchemaTightened").unwrap().0, "False", "{r}");
    let (status, log) = c.terminate();
    assert!(status.success(), "{log}");
}

/// After a 20 s outage the watches relist as soon as the API server is back (a `410 Gone` is
/// not answered with the backoff that climbed during the outage): a CRD change made right
/// after the recovery reaches its report within seconds, not after half a minute.
#[test]
fn a_change_right_after_an_outage_is_seen_at_once() {
    let _serial = serial();
    let Some(env) = start() else { return };
    let admin = &env.admin;
    let c = audited_things(&env, "outage");
    env.restart_apiserver(Duration::from_secs(20));
    wait_for("the API server back", || admin.get("/version").ok());
    things(&env, 2);
    let started = Instant::now();
    wait_for_at_most(
        "the change in the report within 15 s of the recovery",
        Duration::from_secs(15),
        &mut || {
            report(admin, CRD).ok().filter(|r| {
                r["status"]["observedGeneration"] == 2
                    && condition(r, "InstancesValid").is_some_and(|c| c.0 == "False")
            })
        },
    );
    eprintln!("report updated {:?} after the change", started.elapsed());
    let (status, log) = c.terminate();
    assert!(status.success(), "{log}");
}
