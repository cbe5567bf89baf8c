//! The shipped alerts (`manifests/prometheusrule.yaml`): `promtool check rules` and `promtool
//! test rules tests/prometheus/alerts.test.yaml` pass (each alert fires when it should and not
//! otherwise), every alert is tested and links a runbook section of `docs/runbooks.md`, and
//! every metric an alert reads is one the operator exports. promtool comes from Debian's
//! `prometheus` package (`scripts/install-promtool.sh`, run by `.ci/run`).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The PrometheusRule's rule groups.
fn groups() -> Value {
    let path = root().join("manifests/prometheusrule.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let doc = crd_audit_engine::load::parse_str("manifests/prometheusrule.yaml", &text)
        .into_iter()
        .next()
        .unwrap()
        .unwrap();
    doc.value["spec"]["groups"].clone()
}

fn alerts(groups: &Value) -> Vec<Value> {
    groups
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["rules"].as_array().unwrap().clone())
        .collect()
}

/// promtool on PATH; under CI its absence is a failure, elsewhere a notice.
fn promtool() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("promtool"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        let required = std::env::var("CRD_AUDIT_E2E").is_ok_and(|m| m == "required");
        assert!(
            !required,
            "promtool is not installed: run scripts/install-promtool.sh"
        );
        eprintln!("NOTICE: promtool not found (scripts/install-promtool.sh); rule tests skipped");
    }
    found
}

#[test]
fn promtool_checks_and_unit_tests_pass() {
    let Some(promtool) = promtool() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("crd-audit-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rules = dir.join("rules.yaml");
    std::fs::write(&rules, serde_json::json!({"groups": groups()}).to_string()).unwrap();
    let tests = std::fs::read_to_string(root().join("tests/prometheus/alerts.test.yaml"))
        .unwrap()
        .replace("RULES_FILE", "rules.yaml");
    let test_file = dir.join("alerts.test.yaml");
    std::fs::write(&test_file, tests).unwrap();
    for args in [
        vec!["check", "rules", rules.to_str().unwrap()],
        vec!["test", "rules", test_file.to_str().unwrap()],
    ] {
        let out = Command::new(&promtool)
            .args(&args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "promtool {}:\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn every_alert_is_tested_and_has_a_runbook() {
    let tests = std::fs::read_to_string(root().join("tests/prometheus/alerts.test.yaml")).unwrap();
    let runbooks = std::fs::read_to_string(root().join("docs/runbooks.md")).unwrap();
    let anchors: Vec<String> = runbooks
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(|h| h.trim().to_lowercase())
        .collect();
    let all = alerts(&groups());
    assert!(all.len() >= 9, "{all:?}");
    for a in all {
        let name = a["alert"].as_str().unwrap();
        assert!(
            tests.contains(&format!("alertname: {name},"))
                || tests.contains(&format!("alertname: {name}\n")),
            "{name} has no promtool test"
        );
        let url = a["annotations"]["runbook_url"].as_str().unwrap_or_default();
        let anchor = url
            .strip_prefix("https://github.com/crd-audit/crd-audit/blob/main/docs/runbooks.md#")
            .unwrap_or_else(|| panic!("{name}: runbook_url {url:?}"));
        assert_eq!(anchor, name.to_lowercase(), "{name}");
        assert!(
            anchors.iter().any(|h| h == anchor),
            "{name}: no section in docs/runbooks.md"
        );
    }
}

#[test]
fn the_alerts_read_metrics_the_operator_exports() {
    // The names the operator registers (a family without series is not encoded, so the
    // registrations are read).
    let source = std::fs::read_to_string(root().join("src/operator/metrics/mod.rs")).unwrap();
    let families: Vec<&str> = source
        .split('"')
        .filter(|s| s.starts_with("crd_audit_") && !s.contains(' '))
        .collect();
    assert!(families.len() >= 15, "{families:?}");
    for a in alerts(&groups()) {
        let expr = a["expr"].as_str().unwrap();
        let mut rest = expr;
        while let Some(at) = rest.find("crd_audit_") {
            let name: String = rest[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            rest = &rest[at + name.len()..];
            let family = ["_total", "_bucket", "_sum", "_count"]
                .iter()
                .find_map(|s| name.strip_suffix(s))
                .unwrap_or(&name);
            assert!(
                families.contains(&family),
                "{}: {name} is not exported (families: {families:?})",
                a["alert"]
            );
        }
    }
}
