//! The controller's life on a kube-apiserver 1.20: start-up, tightening and loosening, a
//! standby taking over, legacy and deleted CRDs, a CRD created again.

use super::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// Start-up on existing CRDs and objects, a tightening (report, annotations refused by 1.20, Events, metrics) and a
/// loosening.
#[test]
fn controller_audits_a_real_api_server() {
    let Some(s) = Scenario::shared("audit") else {
        return;
    };
    let admin = s.admin();
    let crd = s.crd();
    install(&s);
    // 1. Existing CRDs and objects at start-up.
    things(&s, 1);
    create_things(&s);
    let kc = s.env.service_account_kubeconfig(&s.dir);
    let config = operator_config(&s);
    let kc_s = kc.display().to_string();
    let ha = [
        "--kubeconfig",
        kc_s.as_str(),
        "--config",
        config.as_str(),
        "--leader-elect",
        "--namespace",
        &s.namespace,
    ];
    let a = s.controller("replica-a", &ha);
    let r = wait_for("a clean report", || clean_report(admin, &crd));
    assert_eq!(r["status"]["versions"][0]["objects"], 3, "{r}");
    assert_eq!(r["status"]["versions"][0]["structural"], true, "{r}");
    assert_eq!(condition(&r, "NonStructuralSchema").unwrap().0, "False");

    // 2. Tightening: every object lacks the new required field, one has a narrowed value.
    things(&s, 2);
    let r = wait_for("the tightened report", || {
        report(admin, &crd).ok().filter(|r| {
            condition(r, "InstancesValid").is_some_and(|c| c.0 == "False")
                && r["status"]["crdGeneration"] == 2
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
        report(admin, &crd)
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
        let e = s.events("SchemaTightened");
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
        let e = s.events("UpdatesBlocked");
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
                &format!("crd_audit_invalid_objects{{crd=\"{crd}\",version=\"v1\"}}"),
            ) == Some(3.0)
        })
    });
    assert_eq!(
        metric(
            &text,
            &format!("crd_audit_objects{{crd=\"{crd}\",version=\"v1\"}}")
        ),
        Some(3.0),
        "{text}"
    );
    // When the last complete audit ended: a moment ago (what the stale-audit alert reads).
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let last = metric(
        &text,
        &format!("crd_audit_last_audit_timestamp_seconds{{crd=\"{crd}\"}}"),
    )
    .unwrap_or_else(|| panic!("no last-audit time: {text}"));
    assert!((now - 600.0..=now + 1.0).contains(&last), "{last} vs {now}");
    assert_eq!(
        metric(
            &text,
            &format!("crd_audit_blocked_objects{{crd=\"{crd}\",version=\"v1\"}}")
        ),
        Some(3.0),
        "{text}"
    );
    let audited: Vec<Value> = admin
        .list("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        .unwrap()
        .into_iter()
        // The operator audits only the scenario's group (the report CRD is never audited:
        // its objects are the operator's own reports).
        .filter(|c| c["spec"]["group"] == s.group.as_str())
        .collect();
    assert_eq!(
        metric(&text, "crd_audit_watches"),
        Some(audited.len() as f64),
        "{text}"
    );
    assert!(metric(&text, "crd_audit_validations_total").unwrap_or(0.0) >= 6.0);
    assert_eq!(metric(&text, "crd_audit_leader"), Some(1.0));

    // 3. Loosening clears everything.
    things(&s, 3);
    let r = wait_for("the loosened report", || {
        report(admin, &crd).ok().filter(|r| {
            condition(r, "InstancesValid").is_some_and(|c| c.0 == "True")
                && r["status"]["crdGeneration"] == 3
        })
    });
    assert_eq!(condition(&r, "SchemaTightened").unwrap().0, "False", "{r}");
    assert_eq!(r["status"]["versions"][0]["unwritableObjects"], 0, "{r}");
    wait_for("a SchemaAuditClean event", || {
        (!s.events("SchemaAuditClean").is_empty()).then_some(())
    });
    a.stop_cleanly();
}

/// `plan --cluster` with a tightening revision agrees with `validate --stored` on the same
/// objects, read from the cluster.
#[test]
fn plan_on_the_cluster_agrees_with_validate_stored() {
    let Some(s) = Scenario::shared("plan") else {
        return;
    };
    let admin = s.admin();
    let crd = s.crd();
    things(&s, 1);
    create_things(&s);
    // `plan --cluster` with the tightening revision agrees with `validate --stored` on the
    // same objects.
    let rev2 = s.dir.join("things-v2.yaml");
    std::fs::write(&rev2, things_crd(&crd, &s.group, 2).to_string()).unwrap();
    let admin_kc = s.env.kubeconfig.display().to_string();
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
        .list(&format!("/apis/{}/v1/things", s.group))
        .unwrap()
        .into_iter()
        .map(|mut o| {
            o["apiVersion"] = format!("{}/v1", s.group).into();
            o["kind"] = "Thing".into();
            o.to_string()
        })
        .collect();
    let objects = s.dir.join("things.json");
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
}

/// High availability: a second replica waits; when the leader dies it takes over within
/// the lease duration and carries on without lost or duplicated findings; a restarted
/// operator knows the revision it audited last.
#[test]
fn a_standby_takes_over_and_a_restart_knows_the_last_revision() {
    let Some(s) = Scenario::shared("standby") else {
        return;
    };
    let admin = s.admin();
    let crd = s.crd();
    let (a, ha) = leader_with_clean_report(&s, "replica-a");
    let ha: Vec<&str> = ha.iter().map(String::as_str).collect();
    // High availability: a second replica waits; when the leader dies it takes over within
    // the lease duration and carries on without lost or duplicated findings.
    let lease = format!(
        "/apis/coordination.k8s.io/v1/namespaces/{}/leases/crd-audit",
        s.namespace
    );
    let holder = |k: &Rest| {
        k.get(&lease)
            .ok()
            .and_then(|l| l["spec"]["holderIdentity"].as_str().map(str::to_string))
    };
    wait_for("replica-a to hold the Lease", || {
        (holder(admin).as_deref() == Some("replica-a")).then_some(())
    });
    let b = s.controller("replica-b", &ha);
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
    things(&s, 2);
    let r = wait_for("the new leader's report", || {
        report(admin, &crd).ok().filter(|r| {
            r["status"]["crdGeneration"] == 2
                && condition(r, "InstancesValid").is_some_and(|c| c.0 == "False")
        })
    });
    assert_eq!(invalid_names(&r), vec!["a", "b", "c"]);
    // The leader is ready and reports the CRD; the standby of before was ready too (it could
    // read the Lease).
    let invalid = format!("crd_audit_invalid_objects{{crd=\"{crd}\",version=\"v1\"}}");
    wait_for("the new leader's gauges", || {
        b.scrape().filter(|t| metric(t, &invalid) == Some(3.0))
    });
    assert_eq!(http_get(&b.metrics, "/readyz").as_deref(), Some("ok"));
    // Another holder takes the Lease (as after a partition): the replica that lost it
    // stops reporting the CRD (a sum over the pods counts each CRD once) until it leads
    // again, when the other holder lets the Lease expire.
    let mut l = admin.get(&lease).unwrap();
    l["spec"]["holderIdentity"] = json!("intruder");
    l["spec"]["leaseDurationSeconds"] = json!(8);
    admin.send_put(&lease, &l).unwrap();
    let standing_by = wait_for("the replica that lost the Lease to stand by", || {
        b.scrape()
            .filter(|t| metric(t, "crd_audit_leader") == Some(0.0))
    });
    assert_eq!(metric(&standing_by, &invalid), None, "{standing_by}");
    assert!(!standing_by.contains(&crd), "{standing_by}");
    wait_for("replica-b to lead again", || {
        (holder(admin).as_deref() == Some("replica-b")).then_some(())
    });
    wait_for("the gauges back", || {
        b.scrape().filter(|t| metric(t, &invalid) == Some(3.0))
    });
    // SIGTERM releases the Lease at once.
    let (status, _) = b.terminate();
    assert!(status.success());
    assert_eq!(holder(admin).as_deref(), None);
    // A restarted operator knows the revision it audited last: change the CRD while no
    // replica runs, then start one.
    things(&s, 3);
    let c = s.controller("replica-c", &ha);
    let r = wait_for("the restarted operator's report", || {
        report(admin, &crd).ok().filter(|r| {
            r["status"]["crdGeneration"] == 3
                && condition(r, "InstancesValid").is_some_and(|c| c.0 == "True")
        })
    });
    assert_eq!(r["status"]["lastSchemaChange"]["fromGeneration"], 2, "{r}");
    assert_eq!(condition(&r, "SchemaTightened").unwrap().0, "False", "{r}");
    c.stop_cleanly();
}

/// A legacy v1beta1 CRD with a non-structural schema, a report deleted behind the operator's
/// back, and a deleted CRD.
#[test]
fn legacy_crds_deleted_reports_and_deleted_crds() {
    let Some(s) = Scenario::shared("legacy") else {
        return;
    };
    let admin = s.admin();
    let c = audited_things(&s, "legacy");
    let gadgets = format!("gadgets.{}", s.group);
    // 4. A legacy v1beta1 CRD with a non-structural schema (1.20 still accepts it): our
    // condition matches the one the server sets on the CRD.
    let legacy = json!({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition",
        "metadata": {"name": gadgets},
        "spec": {"group": s.group, "scope": "Namespaced", "version": "v1",
            "names": {"plural": "gadgets", "kind": "Gadget"},
            "validation": {"openAPIV3Schema": {"properties": {"spec": {"properties": {
                "port": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}}}}}}});
    apply(admin, &legacy);
    let server_condition = wait_for("the server's NonStructuralSchema condition", || {
        let c = admin
            .get(&format!(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{gadgets}"
            ))
            .ok()?;
        c["status"]["conditions"]
            .as_array()?
            .iter()
            .find(|x| x["type"] == "NonStructuralSchema")
            .map(|x| x["message"].as_str().unwrap_or("").to_string())
    });
    let r = wait_for("the legacy report", || {
        report(admin, &gadgets)
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
        .delete(&format!(
            "/apis/crd-audit.dev/v1alpha1/schemaaudits/{gadgets}"
        ))
        .unwrap();
    wait_for("the deleted report to be written again", || {
        report(admin, &gadgets).ok()
    });

    // 6. Deleting a CRD removes its report.
    admin
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{}",
            s.crd()
        ))
        .unwrap();
    wait_for("the report to go", || {
        matches!(report(admin, &s.crd()), Err(e) if e.status == 404).then_some(())
    });
    c.stop_cleanly();
}

/// A CRD deleted and created again while no operator ran: the new CRD's report starts a
/// history of its own (no `lastSchemaChange` of the deleted CRD, its own generation), although
/// the old report is still there (no garbage collector runs on this control plane).
#[test]
fn a_recreated_crd_starts_a_fresh_report() {
    let Some(s) = Scenario::shared("recreated") else {
        return;
    };
    let admin = s.admin();
    let crd = s.crd();
    let admin_kc = s.env.kubeconfig.display().to_string();
    let c = audited_things(&s, "before");
    things(&s, 2);
    let r = wait_for("the tightened report", || {
        report(admin, &crd)
            .ok()
            .filter(|r| r["status"]["lastSchemaChange"]["toGeneration"] == 2)
    });
    assert_eq!(condition(&r, "SchemaTightened").unwrap().0, "True", "{r}");
    c.stop_cleanly();

    // While no operator runs: the CRD goes and comes back (revision 1 again, no objects).
    admin
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"
        ))
        .unwrap();
    wait_for("the CRD to be gone", || {
        admin
            .get(&format!(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"
            ))
            .err()
            .filter(|e| e.status == 404)
    });
    things(&s, 1);
    let uid = admin
        .get(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"
        ))
        .unwrap()["metadata"]["uid"]
        .clone();
    let config = s.config("after.yaml", "");
    let c = s.controller("after", &["--kubeconfig", &admin_kc, "--config", &config]);
    let r = wait_for("the recreated CRD's report", || {
        report(admin, &crd).ok().filter(|r| {
            r["metadata"]["ownerReferences"][0]["uid"] == uid
                && condition(r, "InstancesValid").is_some_and(|c| c.0 == "True")
        })
    });
    assert_eq!(r["status"]["crdGeneration"], 1, "{r}");
    assert!(r["status"].get("lastSchemaChange").is_none(), "{r}");
    assert_eq!(condition(&r, "SchemaTightened").unwrap().0, "False", "{r}");
    c.stop_cleanly();
}

/// A CRD whose report has a history (a tightening that broke 13 of its 20 objects, more
/// UpdatesBlocked Events than the budget of 10 a minute, then a loosening) loses its report
/// within seconds of its deletion, as a fresh one does: the operator's own promise, which no
/// garbage collector keeps for it on this control plane.
#[test]
fn a_deleted_crds_report_goes_whatever_its_history() {
    let Some(s) = Scenario::shared("history") else {
        return;
    };
    let admin = s.admin();
    let crd = s.crd();
    install(&s);
    things(&s, 1);
    apply(
        admin,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": s.namespace}}),
    );
    wait_for("the things CRD to be served", || {
        admin.get(&s.things_path()).ok()
    });
    // 7 objects that revision 2 accepts (a tier, the one size left), 13 that it does not.
    for i in 0..20 {
        let spec = if i < 7 {
            json!({"size": "small"})
        } else {
            json!({"size": "medium"})
        };
        apply(
            admin,
            &json!({"apiVersion": format!("{}/v1", s.group), "kind": "Thing",
                "metadata": {"name": format!("t{i:02}"), "namespace": s.namespace}, "spec": spec}),
        );
    }
    let admin_kc = s.env.kubeconfig.display().to_string();
    let config = s.config("history.yaml", "");
    let c = s.controller("history", &["--kubeconfig", &admin_kc, "--config", &config]);
    wait_for("a clean report", || clean_report(admin, &crd));
    // Revision 2 without the new required field: only the size narrows.
    let mut tight = things_crd(&crd, &s.group, 1);
    tight["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["size"]["enum"] = json!(["small"]);
    apply(admin, &tight);
    let r = wait_for("13 invalid objects", || {
        report(admin, &crd)
            .ok()
            .filter(|r| r["status"]["versions"][0]["invalidObjects"] == 13)
    });
    assert_eq!(r["status"]["versions"][0]["objects"], 20, "{r}");
    wait_for("the budget's 10 UpdatesBlocked Events", || {
        (s.events("UpdatesBlocked").len() >= 10).then_some(())
    });
    // Loosened again.
    things(&s, 1);
    wait_for("a clean report again", || clean_report(admin, &crd));
    admin
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"
        ))
        .unwrap();
    let deleted = Instant::now();
    wait_for_at_most("the CRD to be gone", Duration::from_secs(60), &mut || {
        admin
            .get(&format!(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"
            ))
            .err()
            .filter(|e| e.status == 404)
    });
    wait_for_at_most(
        "the report of the deleted CRD to go",
        Duration::from_secs(15),
        &mut || matches!(report(admin, &crd), Err(e) if e.status == 404).then_some(()),
    );
    eprintln!("the report went {:?} after the delete", deleted.elapsed());
    c.stop_cleanly();
}
