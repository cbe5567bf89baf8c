//! `apiQps` and `apiBurst` are one limit on every write the operator sends, counted by the API
//! server itself: a kube-apiserver 1.20 that writes its audit log, and an operator with every
//! writer busy at once (two storage migrations, annotations, policy reports, reports and
//! Events). In no window of time does the server receive more of the operator's writes than
//! the budget allows.

use super::*;
use crate::migrate::{create_gizmos, gizmos, stored_versions};
use std::collections::BTreeMap;
use std::time::Duration;

const QPS: f64 = 8.0;
const BURST: u32 = 8;

/// Seconds since the Unix epoch of an RFC 3339 UTC timestamp as the audit log writes them
/// (`2026-12-02T03:10:11.123456Z`).
fn unix_seconds(ts: &str) -> f64 {
    let num = |r: std::ops::Range<usize>| ts[r].parse::<i64>().unwrap();
    let (y, m, d) = (num(0..4), num(5..7), num(8..10));
    let (hh, mm) = (num(11..13), num(14..16));
    let secs: f64 = ts[17..ts.len() - 1].parse().unwrap();
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    (days * 86_400 + hh * 3600 + mm * 60) as f64 + secs
}

/// The operator's write requests in the audit log: when the server received each, and the
/// resource written.
fn writes(audit_log: &std::path::Path, user: &str) -> Vec<(f64, String)> {
    let text = std::fs::read_to_string(audit_log).unwrap();
    let mut out: Vec<(f64, String)> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["user"]["username"] == user)
        .filter(|e| {
            matches!(
                e["verb"].as_str(),
                Some("create" | "update" | "patch" | "delete")
            )
        })
        // The Lease's renewals are not written within the budget (none here: no election).
        .filter(|e| e["objectRef"]["resource"] != "leases")
        .map(|e| {
            let resource = e["objectRef"]["resource"]
                .as_str()
                .unwrap_or("")
                .to_string();
            let sub = e["objectRef"]["subresource"].as_str().unwrap_or("");
            let what = if sub.is_empty() {
                resource
            } else {
                format!("{resource}/{sub}")
            };
            (
                unix_seconds(e["requestReceivedTimestamp"].as_str().unwrap()),
                what,
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// The most writes received within any window of `secs` seconds.
fn busiest(times: &[f64], secs: f64) -> usize {
    let mut most = 0;
    let mut from = 0;
    for to in 0..times.len() {
        while times[to] - times[from] >= secs {
            from += 1;
        }
        most = most.max(to - from + 1);
    }
    most
}

#[test]
fn every_writer_together_stays_within_the_write_budget() {
    let turn = own_server();
    let Some(env) = start_audited() else { return };
    let s = Scenario::on_own(&env, "budget", turn);
    let admin = s.admin();
    install(&s);
    for f in [
        "tests/data/policyreport/policyreport-crd.yaml",
        "tests/data/policyreport/clusterpolicyreport-crd.yaml",
    ] {
        apply_file(admin, f);
    }
    // The operator's identity, allowed all it writes (migrations need update on the
    // objects and on the CRDs' status).
    apply(
        admin,
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "crd-audit-e2e-everything"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"kind": "ServiceAccount", "name": "crd-audit", "namespace": "crd-audit"}]}),
    );
    // Two CRDs whose 120 objects each are stored at v1alpha1 while v1 is the storage version:
    // two migrations, nothing stuck.
    let groups = [
        "one.budget.e2e.crd-audit.dev",
        "two.budget.e2e.crd-audit.dev",
    ];
    for group in groups {
        apply(admin, &gizmos(group, 1, 0, false, true));
        create_gizmos(admin, group, &s.namespace, 120, &|i| json!({"size": i}));
        apply(admin, &gizmos(group, 2, 1_000_000, false, true));
    }
    // Forty objects the things CRD makes invalid: their annotations (refused by 1.20, but
    // each a write), their Events, their policy report results, a report with findings.
    things(&s, 1);
    wait_for("the things CRD to be served", || {
        admin.get(&s.things_path()).ok()
    });
    for i in 0..40 {
        apply(
            admin,
            &json!({"apiVersion": format!("{}/v1", s.group), "kind": "Thing",
                "metadata": {"name": format!("t{i:02}"), "namespace": s.namespace},
                "spec": {"size": "medium"}}),
        );
    }
    things(&s, 2);
    let kc = env.service_account_kubeconfig(&s.dir).display().to_string();
    let config = s.config(
        "budget.yaml",
        &format!(
            "apiQps: {QPS}\napiBurst: {BURST}\nmigrateStoredVersions: true\nannotateObjects: true\n\
             policyReports: true\npolicyReportsApi: wgpolicyk8s\n"
        ),
    );
    let c = s.controller("budget", &["--kubeconfig", &kc, "--config", &config]);
    for group in groups {
        wait_for_at_most(
            "both migrations done",
            Duration::from_secs(180),
            &mut || {
                (stored_versions(admin, &format!("gizmos.{group}")) == json!(["v1"])).then_some(())
            },
        );
    }
    std::thread::sleep(Duration::from_secs(5));
    c.stop_cleanly();

    let writes = writes(
        &env.run_dir.join("audit.log"),
        "system:serviceaccount:crd-audit:crd-audit",
    );
    let mut by_resource: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, r) in &writes {
        *by_resource.entry(r.as_str()).or_default() += 1;
    }
    eprintln!("{} writes: {by_resource:?}", writes.len());
    // Every writer was busy.
    for resource in [
        "gizmos",
        "things",
        "events",
        "schemaaudits",
        "schemaaudits/status",
        "policyreports",
        "customresourcedefinitions/status",
    ] {
        assert!(
            by_resource.get(resource).is_some_and(|n| *n > 0),
            "no write of {resource}: {by_resource:?}"
        );
    }
    assert!(by_resource["gizmos"] >= 240, "{by_resource:?}");
    let times: Vec<f64> = writes.iter().map(|(t, _)| *t).collect();
    for secs in [1.0, 5.0, 20.0] {
        let most = busiest(&times, secs);
        // A token bucket lets `burst` go at once and `qps` a second after; one more for the
        // server's and the client's clocks reading the same instant apart.
        let allowed = f64::from(BURST) + QPS * secs + 1.0;
        eprintln!("at most {most} writes in {secs} s (allowed {allowed})");
        assert!(
            most as f64 <= allowed,
            "{most} writes within {secs} s: more than apiQps {QPS} and apiBurst {BURST} allow"
        );
    }
    // And the budget was what held them back: the busiest 20 s used most of it.
    let most = busiest(&times, 20.0);
    assert!(
        most as f64 >= 0.8 * QPS * 20.0,
        "only {most} writes in the busiest 20 s: the writers were not busy enough to test the budget"
    );
}

#[test]
fn timestamps_are_read_as_the_audit_log_writes_them() {
    assert_eq!(unix_seconds("1970-01-01T00:00:00.000000Z"), 0.0);
    assert_eq!(unix_seconds("2026-12-02T03:10:11.500000Z"), 1_796_181_011.5);
    // [0.5, 1.5) holds four.
    assert_eq!(busiest(&[0.0, 0.5, 0.9, 1.0, 1.2, 5.0], 1.0), 4);
    assert_eq!(busiest(&[0.0, 1.0, 2.0], 1.0), 1);
}
