//! The PolicyReports (wgpolicyk8s.io and OpenReports) following the audit.

use super::*;
use serde_json::{Value, json};
use std::time::Duration;

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
    let Some(s) = Scenario::shared("policy") else {
        return;
    };
    let admin = s.admin();
    install(&s);
    let crd = s.crd();
    let planets_crd = format!("planets.{}", s.group);
    let api_version = format!("{}/v1", s.group);
    let planets = |revision: u8| {
        let mut c = things_crd(&planets_crd, &s.group, revision);
        c["spec"]["scope"] = json!("Cluster");
        c
    };
    // Revision 3 knows spec.tier (revision 1 would prune it); revision 2 requires it.
    things(&s, 3);
    apply(admin, &planets(3));
    for ns in ["team-a", "team-b"] {
        apply(
            admin,
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        );
    }
    wait_for("the CRDs to be served", || {
        admin.get(&format!("/apis/{api_version}/planets")).ok()?;
        admin
            .get(&format!("/apis/{api_version}/namespaces/team-a/things"))
            .ok()
    });
    let thing = |ns: &str, name: &str, size: &str, tier: Option<&str>| {
        let mut spec = json!({"size": size});
        if let Some(t) = tier {
            spec["tier"] = json!(t);
        }
        json!({"apiVersion": api_version, "kind": "Thing",
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

    let config = s.config("policy-reports.yaml", "policyReports: true\n");
    let kc = s
        .env
        .service_account_kubeconfig(&s.dir)
        .display()
        .to_string();
    let c = s.controller("policy", &["--kubeconfig", &kc, "--config", &config]);
    // No PolicyReport CRDs yet: a warning, SchemaAudit reports as usual.
    wait_for("the warning about missing PolicyReport CRDs", || {
        c.log_text()
            .contains("PolicyReport CRDs (wgpolicyk8s.io/v1alpha2 policyreports and clusterpolicyreports) are not installed")
            .then_some(())
    });
    wait_for("clean SchemaAudit reports", || {
        [&crd, &planets_crd]
            .iter()
            .all(|n| clean_report(admin, n).is_some())
            .then_some(())
    });
    // Said once, not again at each retry while the CRDs stay missing (the first retries come
    // within seconds).
    std::thread::sleep(std::time::Duration::from_secs(4));
    let said = c
        .log_text()
        .matches("PolicyReport CRDs (wgpolicyk8s.io/v1alpha2 policyreports and clusterpolicyreports) are not installed")
        .count();
    assert_eq!(said, 1, "{}", c.log_text());
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
    things(&s, 2);
    apply(admin, &planets(2));
    let team_a = wait_for("the team-a PolicyReport", || {
        policy_report(admin, "team-a")
            .ok()
            .filter(|r| result_names(r) == ["b", "e"])
    });
    let sa = wait_for("the tightened SchemaAudit report", || {
        report(admin, &crd)
            .ok()
            .filter(|r| r["status"]["crdGeneration"] == 2 && invalid_names(r).len() == 3)
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
        .get(&format!("/apis/{api_version}/namespaces/team-a/things/b"))
        .unwrap();
    let r = &team_a["results"][0];
    assert_eq!(r["policy"], "crd-audit");
    assert_eq!(r["source"], "crd-audit");
    assert_eq!(r["rule"], crd);
    assert_eq!(r["result"], "fail");
    assert_eq!(r["scored"], true);
    assert_eq!(r["category"], "CRD Schema");
    // kube-apiserver 1.20 has no validation ratcheting: an invalid object is stuck.
    assert_eq!(r["severity"], "critical");
    assert_eq!(
        r["resources"],
        json!([{"apiVersion": api_version, "kind": "Thing", "namespace": "team-a",
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
    assert_eq!(cluster["results"][0]["rule"], planets_crd);
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
        .delete(&format!("/apis/{api_version}/planets/p1"))
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
        report(admin, &crd)
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
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"
        ))
        .unwrap();
    wait_for("the team-a report to be deleted with the CRD", || {
        matches!(open_report(admin, "team-a"), Err(e) if e.status == 404).then_some(())
    });
    assert!(matches!(policy_report(admin, "team-a"), Err(e) if e.status == 404));
    let log = c.stop_cleanly();
    assert!(error_lines(&log).is_empty(), "{log}");
}
