//! `crd-audit diff` and `crd-audit plan` on the bundled revision of the example CRD, and
//! agreement of `plan` with `validate --stored` under the new CRD.

use crate::common::{run, text};
use serde_json::Value;

const OLD: &str = "examples/crds/widgets.yaml";
const NEW: &str = "examples/revisions/widgets-v2.yaml";

fn lines(out: &std::process::Output) -> Vec<Value> {
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn diff_lists_classified_changes_sorted_by_path() {
    let out = run(&["diff", "-o", "json", OLD, NEW], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let got: Vec<(String, String, String)> = lines(&out)
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap().to_string(),
                c["kind"].as_str().unwrap().to_string(),
                c["class"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = [
        ("spec.properties[owner]", "fieldRemoved", "tightening"),
        (
            "spec.properties[replicas].maximum",
            "maximumLowered",
            "tightening",
        ),
        (
            "spec.properties[size].enum",
            "enumValueRemoved",
            "tightening",
        ),
        ("spec.properties[tier]", "requiredFieldAdded", "tightening"),
        ("status.properties[phase].enum", "enumAdded", "tightening"),
    ];
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    assert_eq!(got, want);
    // The reverse revision loosens, so the gate passes.
    let back = run(&["diff", NEW, OLD], None);
    let stdout = text(&back.stdout);
    assert!(stdout.contains("loosening (maximumRaised)"), "{stdout}");
    assert!(stdout.contains("loosening (enumValueAdded)"), "{stdout}");
    assert_eq!(run(&["diff", OLD, OLD], None).status.code(), Some(0));
}

#[test]
fn plan_agrees_with_validate_stored_under_the_new_crd() {
    let out = run(
        &[
            "plan",
            NEW,
            "--current",
            OLD,
            "--objects",
            "examples/objects",
            "-o",
            "json",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let plan = lines(&out);
    let validate = run(
        &[
            "validate",
            "--stored",
            "--crd",
            NEW,
            "examples/objects",
            "-o",
            "json",
        ],
        None,
    );
    let validate = lines(&validate);
    assert_eq!(plan.len(), validate.len());
    for (p, v) in plan.iter().zip(&validate) {
        assert_eq!(p["source"], v["source"]);
        assert_eq!(p["valid"], v["valid"]);
        // Both place the object and each finding in the file (line, column).
        assert_eq!((&p["line"], &p["column"]), (&v["line"], &v["column"]));
        for e in v["errors"].as_array().unwrap() {
            assert!(e["line"].as_u64() > Some(0) && e["column"].as_u64() > Some(0));
        }
        assert_eq!(p["errors"], v["errors"]);
    }
    let before: Vec<&Value> = plan.iter().map(|p| &p["validBefore"]).collect();
    assert_eq!(
        before,
        vec![&Value::Bool(true), &Value::Bool(false), &Value::Bool(true)]
    );
    assert!(text(&out.stderr).contains("3 object(s) read, 1 newly invalid, 1 already invalid"));
}

#[test]
fn bad_inputs_exit_two() {
    let out = run(&["diff", OLD, "examples/objects/widgets.yaml"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no CustomResourceDefinition"));
    let out = run(&["diff", OLD, "examples/crds/gadgets-legacy.yaml"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("not revisions of one CRD"));
}

#[test]
fn shipped_report_crd_equals_the_generated_one() {
    let out = run(&["manifests"], None);
    assert_eq!(out.status.code(), Some(0));
    let generated: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The chart's copy; manifests/ renders it (tests/chart.rs keeps the two equal).
    let shipped = std::fs::read_to_string("charts/crd-audit/crds/schemaaudit-crd.yaml").unwrap();
    let shipped = crd_audit_engine::load::parse_str("crd", &shipped)
        .remove(0)
        .unwrap()
        .value;
    assert_eq!(generated, shipped, "regenerate with: just manifests");
}

/// A CRD converted by a webhook whose storage version is `storage`.
fn webhook_crd(storage: &str) -> String {
    let version = |v: &str| {
        format!(
            r#"{{"name": "{v}", "served": true, "storage": {}, "schema": {{"openAPIV3Schema": {{"type": "object"}}}}}}"#,
            v == storage
        )
    };
    format!(
        r#"{{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {{"name": "crontabs.stable.example.com"}},
        "spec": {{"group": "stable.example.com", "scope": "Namespaced",
            "names": {{"plural": "crontabs", "kind": "CronTab"}},
            "versions": [{}, {}],
            "conversion": {{"strategy": "Webhook", "webhook": {{"conversionReviewVersions": ["v1"],
                "clientConfig": {{"url": "https://conv.example.com/convert"}}}}}}}}}}"#,
        version("v1"),
        version("v2")
    )
}

#[test]
fn plan_points_to_roundtrip_when_a_webhook_crd_changes_its_storage_version() {
    let v1 = crate::common::temp_file("plan-webhook/v1.json", webhook_crd("v1").as_bytes());
    let v2 = crate::common::temp_file("plan-webhook/v2.json", webhook_crd("v2").as_bytes());
    let objects = crate::common::temp_file("plan-webhook/objects.yaml", b"");
    let plan = |current: &std::path::Path| {
        let out = run(
            &[
                "plan",
                v2.to_str().unwrap(),
                "--current",
                current.to_str().unwrap(),
                "--objects",
                objects.to_str().unwrap(),
            ],
            None,
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stderr)
    };
    let changed = plan(&v1);
    assert!(
        changed.contains("the storage version changes (v1 -> v2)")
            && changed.contains("`crd-audit roundtrip crontabs.stable.example.com`"),
        "{changed}"
    );
    let same = plan(&v2);
    assert!(!same.contains("roundtrip"), "{same}");
}
