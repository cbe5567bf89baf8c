//! What the controller survives: RBAC revoked and narrowed, the API server restarted, an
//! outage.

use super::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// RBAC revoked, then narrowed, mid-run: the controller keeps running, reports what it may
/// not read as Forbidden, and shuts down gracefully.
#[test]
fn revoked_and_narrowed_rbac_is_survived() {
    let turn = own_server();
    let Some(env) = start() else { return };
    let s = Scenario::on_own(&env, "rbac", turn);
    let admin = &env.admin;
    let (c, _) = leader_with_clean_report(&s, "replica-c");
    // RBAC revoked mid-run: the controller keeps running (backing off), and picks up again
    // when access is restored.
    let bindings = [
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/crd-audit",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/crd-audit-read",
    ];
    let saved: Vec<Value> = bindings.iter().map(|b| admin.get(b).unwrap()).collect();
    for b in bindings {
        admin.delete(b).unwrap();
    }
    apply(
        admin,
        &json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("later.{}", s.group)},
        "spec": {"group": s.group, "scope": "Cluster", "names": {"plural": "later", "kind": "Later"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object"}}}]}}),
    );
    std::thread::sleep(Duration::from_secs(4));
    let mut c = c;
    assert!(
        c.child.try_wait().unwrap().is_none(),
        "the controller died without RBAC"
    );
    for binding in saved {
        let mut restored = binding.clone();
        if let Some(m) = restored["metadata"].as_object_mut() {
            m.retain(|k, _| k == "name");
        }
        apply(admin, &restored);
    }
    let later = format!("later.{}", s.group);
    wait_for("a clean report of a CRD created while forbidden", || {
        report(admin, &later)
            .ok()
            .filter(|r| condition(r, "InstancesValid").is_some_and(|(status, _)| status == "True"))
    });

    // A CRD whose owner grants nobody `view` of its objects (no ClusterRole aggregating to
    // view names its group): its report says Forbidden, with the rule to add, instead of the
    // controller failing; once the owner's role exists, the report becomes clean.
    let forbidden_group = "forbidden.crd-audit.test";
    apply(
        admin,
        &json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "secrets.forbidden.crd-audit.test"},
        "spec": {"group": forbidden_group, "scope": "Cluster",
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
    let (status, message) = condition(&r, "InstancesValid").unwrap();
    assert_eq!(status, "Unknown");
    assert!(
        message.contains("rbac.authorization.k8s.io/aggregate-to-view: \"true\"")
            && message.contains("{apiGroups: [\"forbidden.crd-audit.test\"], resources: [\"secrets\"], verbs: [get, list, watch]}"),
        "{message}"
    );
    grant_like_a_crd_owner(admin, forbidden_group);
    wait_for("the report clean once the owner grants view", || {
        report(admin, "secrets.forbidden.crd-audit.test")
            .ok()
            .filter(|r| condition(r, "InstancesValid").is_some_and(|(s, _)| s == "True"))
    });
    assert!(c.child.try_wait().unwrap().is_none());
    // Graceful shutdown on SIGTERM.
    let log_text = c.stop_cleanly();
    assert!(log_text.contains("\"became the leader\""), "{log_text}");
    // Errors are logged only while RBAC was revoked or narrowed.
    for line in error_lines(&log_text) {
        assert!(line.contains("403") || line.contains("orbidden"), "{line}");
    }
}

/// The API server killed while a schema tightens and started again: the report converges
/// without restarting the operator, and no finding is lost or duplicated.
#[test]
fn the_report_converges_across_an_api_server_restart() {
    let turn = own_server();
    let Some(env) = start() else { return };
    let s = Scenario::on_own(&env, "restart", turn);
    let admin = &env.admin;
    let crd = s.crd();
    install(&s);
    things(&s, 1);
    create_things(&s);
    let admin_kc = env.kubeconfig.display().to_string();
    let mut c = s.controller("survivor", &["--kubeconfig", &admin_kc]);
    wait_for("a clean report", || clean_report(admin, &crd));
    things(&s, 2);
    env.restart_apiserver(Duration::from_secs(3));
    let r = wait_for("the tightened report after the restart", || {
        report(admin, &crd).ok().filter(|r| {
            r["status"]["crdGeneration"] == 2
                && condition(r, "InstancesValid").is_some_and(|c| c.0 == "False")
        })
    });
    assert_eq!(invalid_names(&r), vec!["a", "b", "c"]);
    assert_eq!(r["status"]["versions"][0]["invalidObjects"], 3, "{r}");
    assert_eq!(r["status"]["versions"][0]["objects"], 3, "{r}");
    assert_eq!(condition(&r, "SchemaTightened").unwrap().0, "True");
    let tightened = wait_for("the SchemaTightened event", || {
        let e = s.events("SchemaTightened");
        (!e.is_empty()).then_some(e)
    });
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(s.events("SchemaTightened").len(), 1, "{tightened:?}");
    assert!(note(&tightened[0]).starts_with("3 object(s) newly invalid"));
    // A new object written after the restart is counted once.
    apply(
        admin,
        &json!({"apiVersion": format!("{}/v1", s.group), "kind": "Thing",
            "metadata": {"name": "d", "namespace": s.namespace}, "spec": {"size": "small", "tier": "gold"}}),
    );
    wait_for("the new object counted", || {
        report(admin, &crd)
            .ok()
            .filter(|r| r["status"]["versions"][0]["objects"] == 4)
    });
    assert!(
        c.child.try_wait().unwrap().is_none(),
        "the controller exited"
    );
    c.stop_cleanly();
}

/// After a 20 s outage the watches relist as soon as the API server is back (a `410 Gone` is
/// not answered with the backoff that climbed during the outage, and the CRD watch backs off
/// to 4.8 s at most, whatever the phase of its backoff when the server returns): a CRD change
/// made right after the recovery reaches its report within 10 s, not after half a minute.
#[test]
fn a_change_right_after_an_outage_is_seen_at_once() {
    let turn = own_server();
    let Some(env) = start() else { return };
    let s = Scenario::on_own(&env, "outage", turn);
    let admin = &env.admin;
    let crd = s.crd();
    let c = audited_things(&s, "outage");
    env.restart_apiserver(Duration::from_secs(20));
    wait_for("the API server back", || admin.get("/version").ok());
    things(&s, 2);
    let started = Instant::now();
    wait_for_at_most(
        "the change in the report within 10 s of the recovery",
        Duration::from_secs(10),
        &mut || {
            report(admin, &crd).ok().filter(|r| {
                r["status"]["crdGeneration"] == 2
                    && condition(r, "InstancesValid").is_some_and(|c| c.0 == "False")
            })
        },
    );
    eprintln!("report updated {:?} after the change", started.elapsed());
    c.stop_cleanly();
}

/// The report CRD deleted while the operator runs: its deletion completes (nothing is written
/// while it goes: each report written back would hold up its finalizer), and when it is
/// applied again, every report is written again within 10 s.
#[test]
fn the_report_crd_can_be_deleted_and_applied_again() {
    let turn = own_server();
    let Some(env) = start() else { return };
    let s = Scenario::on_own(&env, "reportcrd", turn);
    let admin = &env.admin;
    let crd = s.crd();
    let c = audited_things(&s, "reportcrd");
    let report_crd =
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/schemaaudits.crd-audit.dev";
    admin.delete(report_crd).unwrap();
    wait_for_at_most(
        "the report CRD deleted within 30 s",
        Duration::from_secs(30),
        &mut || absent(admin, report_crd).then_some(()),
    );
    std::thread::sleep(Duration::from_secs(3));
    apply_file(admin, "manifests/schemaaudit-crd.yaml");
    let back = Instant::now();
    wait_for_at_most(
        "every report written again within 10 s",
        Duration::from_secs(10),
        &mut || clean_report(admin, &crd),
    );
    eprintln!(
        "report written again {:?} after the report CRD",
        back.elapsed()
    );
    let log = c.stop_cleanly();
    let failed_writes = error_lines(&log)
        .iter()
        .filter(|l| l.contains("writing the report failed"))
        .count();
    assert!(
        failed_writes <= 2,
        "{failed_writes} report writes failed while the report CRD was away"
    );
}
