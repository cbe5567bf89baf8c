//! Storage version migration by the operator (`migrateStoredVersions: true`) on kube-apiserver
//! 1.20, checked in etcd: the report's `StorageMigrated` condition says what keeps
//! `storedVersions` from being the storage version alone; with stuck objects the leader does
//! not migrate and says so (`MigrationBlocked`, a `StorageMigrationBlocked` Event); once they
//! are fixed it migrates, prunes, and reports `Migrated` (a `StorageMigrated` Event, the
//! metrics). A migration interrupted by a handover resumes on the new leader.

use super::*;
use crate::migrate::{count_at, create_gizmos, gizmos, stored, stored_versions};
use std::time::Duration;

fn storage_condition(r: &Value) -> Option<(String, String, String)> {
    r["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "StorageMigrated")
        .map(|c| {
            (
                c["status"].as_str().unwrap_or("").to_string(),
                c["reason"].as_str().unwrap_or("").to_string(),
                c["message"].as_str().unwrap_or("").to_string(),
            )
        })
}

#[test]
fn the_leader_migrates_once_nothing_is_stuck_and_reports_it() {
    let Some(s) = Scenario::shared("storage") else {
        return;
    };
    install(&s);
    let admin = s.admin();
    let etcd = s.env.env_var("KUBE_TESTENV_ETCD");
    let crd = format!("gizmos.{}", s.group);
    let prefix = format!("/registry/{}/gizmos/", s.group);
    apply(admin, &gizmos(&s.group, 1, 0, false, true));
    apply(
        admin,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": s.namespace}}),
    );
    create_gizmos(admin, &s.group, &s.namespace, 300, &|i| json!({"size": i}));
    let admin_kc = s.env.kubeconfig.display().to_string();
    let config = s.config(
        "storage.yaml",
        "migrateStoredVersions: true\napiQps: 500\napiBurst: 500\n",
    );
    let c = s.controller("storage", &["--kubeconfig", &admin_kc, "--config", &config]);
    // Nothing to migrate yet: one stored version.
    let r = wait_for("the report says Migrated", || {
        report(admin, &crd)
            .ok()
            .filter(|r| storage_condition(r).is_some_and(|c| c.1 == "Migrated"))
    });
    assert_eq!(storage_condition(&r).unwrap().0, "True");

    // A new storage version that refuses sizes over 297: g0298..g0300 are stuck.
    apply(admin, &gizmos(&s.group, 2, 297, false, true));
    let r = wait_for_at_most("MigrationBlocked", Duration::from_secs(60), &mut || {
        report(admin, &crd)
            .ok()
            .filter(|r| storage_condition(r).is_some_and(|c| c.1 == "MigrationBlocked"))
    });
    let (status, _, message) = storage_condition(&r).unwrap();
    assert_eq!(status, "False");
    assert!(
        message.contains("300 stored object(s) to rewrite at v1, 3 stuck")
            && message.contains(&format!("the first {}/g0298: ", s.namespace)),
        "{message}"
    );
    let blocked = wait_for("a StorageMigrationBlocked Event", || {
        let e = s.events("StorageMigrationBlocked");
        (!e.is_empty()).then_some(e)
    });
    assert_eq!(blocked.len(), 1, "{blocked:#?}");
    // The leader does not migrate: nothing was rewritten, storedVersions keeps v1alpha1.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        count_at(&stored(&etcd, &prefix), &format!("{}/v1alpha1", s.group)),
        300
    );
    assert_eq!(stored_versions(admin, &crd), json!(["v1alpha1", "v1"]));

    // The stuck objects fixed: the leader migrates, prunes, and reports it.
    for i in 298..=300 {
        admin
            .send_patch_merge(
                &format!(
                    "/apis/{}/v1/namespaces/{}/gizmos/g{i:04}",
                    s.group, s.namespace
                ),
                &json!({"spec": {"size": 1}}),
            )
            .unwrap();
    }
    let r = wait_for_at_most("Migrated", Duration::from_secs(90), &mut || {
        report(admin, &crd)
            .ok()
            .filter(|r| storage_condition(r).is_some_and(|c| c.1 == "Migrated"))
    });
    assert_eq!(storage_condition(&r).unwrap().0, "True");
    assert_eq!(stored_versions(admin, &crd), json!(["v1"]));
    assert_eq!(
        count_at(&stored(&etcd, &prefix), &format!("{}/v1", s.group)),
        300
    );
    wait_for("a StorageMigrated Event", || {
        (!s.events("StorageMigrated").is_empty()).then_some(())
    });
    let page = c.scrape().unwrap();
    assert_eq!(
        metric(
            &page,
            "crd_audit_storage_migrations_total{result=\"pruned\"}"
        ),
        Some(1.0),
        "{page}"
    );
    assert_eq!(
        metric(
            &page,
            &format!("crd_audit_stored_versions{{crd=\"{crd}\"}}")
        ),
        Some(1.0)
    );
    // Now the CRD goes without v1alpha1.
    apply(admin, &gizmos(&s.group, 2, 297, false, false));
    c.stop_cleanly();
    admin
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"
        ))
        .unwrap();
}

#[test]
fn a_migration_interrupted_by_a_handover_resumes_on_the_new_leader() {
    let Some(s) = Scenario::shared("handover-migration") else {
        return;
    };
    install(&s);
    let admin = s.admin();
    let etcd = s.env.env_var("KUBE_TESTENV_ETCD");
    let crd = format!("gizmos.{}", s.group);
    let prefix = format!("/registry/{}/gizmos/", s.group);
    apply(admin, &gizmos(&s.group, 1, 0, false, true));
    apply(
        admin,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": s.namespace}}),
    );
    create_gizmos(admin, &s.group, &s.namespace, 600, &|i| json!({"size": i}));
    let admin_kc = s.env.kubeconfig.display().to_string();
    // 40 rewrites a second: 15 s for the 600 objects.
    let config = s.config("ha.yaml", "migrateStoredVersions: true\napiQps: 40\n");
    let args = [
        "--kubeconfig",
        admin_kc.as_str(),
        "--config",
        config.as_str(),
        "--leader-elect",
        "--namespace",
        s.namespace.as_str(),
    ];
    let first = s.controller("first", &args);
    wait_for("the first replica to lead", || {
        first.log_text().contains("became the leader").then_some(())
    });
    let second = s.controller("second", &args);
    apply(admin, &gizmos(&s.group, 2, 100_000, false, true));
    // Under way: some objects at v1, not all.
    let v1 = format!("{}/v1", s.group);
    wait_for_at_most(
        "the migration under way",
        Duration::from_secs(60),
        &mut || {
            let n = count_at(&stored(&etcd, &prefix), &v1);
            (n >= 100).then_some(())
        },
    );
    let before = count_at(&stored(&etcd, &prefix), &v1);
    assert!(before < 600, "the migration ended before the handover");
    // The leader stops (SIGTERM: it gives the Lease up, its migration ends with its term).
    first.stop_cleanly();
    wait_for_at_most(
        "the second replica to lead",
        Duration::from_secs(30),
        &mut || {
            second
                .log_text()
                .contains("became the leader")
                .then_some(())
        },
    );
    wait_for_at_most(
        "the migration to end on the new leader",
        Duration::from_secs(90),
        &mut || (stored_versions(admin, &crd) == json!(["v1"])).then_some(()),
    );
    assert_eq!(count_at(&stored(&etcd, &prefix), &v1), 600);
    let log = second.stop_cleanly();
    assert!(
        log.contains("migrating the stored objects to the storage version")
            && log.contains("storage migration done"),
        "{log}"
    );
    admin
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"
        ))
        .unwrap();
}
