//! UPDATE judgements (validation ratcheting) against the oracle: every case of
//! `tests/data/update/` (see its README) pairs stored objects (`old.yaml`) with the objects of
//! each scenario (`new-<scenario>.yaml`, or the stored objects themselves for `noop`), sent to
//! the object (`oracle.<scenario>.jsonl`) or to its status (`oracle.<scenario>.status.jsonl`).
//! Each judgement must agree with the oracle's on the code, the request error, the causes (as
//! a multiset of (field, type, message)) and the warnings (as a multiset: upstream's order
//! follows Go's map iteration).

use crate::common;

use crate::common::{request_error_text, status_code};
use common::{Key, multiset_diff};
use crd_audit_engine::crd::Crd;
use crd_audit_engine::testing::key_of_normalized;
use crd_audit_engine::testing::without_self_type_numbers;
use crd_audit_engine::validate::{CrdValidator, Subresource};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/update")
}

fn docs(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path.display().to_string();
    crd_audit_engine::load::parse_str(&name, &text)
        .into_iter()
        .map(|d| d.unwrap_or_else(|e| panic!("{name}: {e}")).value)
        .filter(|v| !v.is_null())
        .collect()
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .collect()
}

#[derive(Default)]
struct Tally {
    stored: usize,
    judgements: usize,
    tolerated: usize,
    stuck: usize,
    differences: Vec<String>,
}

/// Compares one scenario's judgements with the oracle's.
fn scenario(case: &Path, validator: &CrdValidator, old: &[Value], file: &str, t: &mut Tally) {
    let (scenario, status) = match file
        .strip_prefix("oracle.")
        .and_then(|f| f.strip_suffix(".jsonl"))
    {
        Some(s) => match s.strip_suffix(".status") {
            Some(s) => (s.to_string(), true),
            None => (s.to_string(), false),
        },
        None => return,
    };
    let expected = lines(&case.join(file));
    let new = if scenario == "noop" {
        old.to_vec()
    } else {
        docs(&case.join(format!("new-{scenario}.yaml")))
    };
    let id = format!(
        "{}/{file}",
        case.file_name().unwrap_or_default().to_string_lossy()
    );
    if new.len() != old.len() || expected.len() != old.len() {
        t.differences.push(format!(
            "{id}: {} stored objects, {} new ones, {} oracle lines",
            old.len(),
            new.len(),
            expected.len()
        ));
        return;
    }
    let to = if status {
        Subresource::Status
    } else {
        Subresource::Main
    };
    for (i, ((o, n), want)) in old.iter().zip(new).zip(&expected).enumerate() {
        t.judgements += 1;
        let got = validator.validate_update(o.clone(), n, to);
        let got_code = status_code(&got.outcome, true);
        let got_request_error = request_error_text(&got.outcome);
        let label = format!("{id}[{i}] {}", want["name"].as_str().unwrap_or(""));
        let code = want["code"].as_u64().unwrap_or(0);
        if scenario == "noop" && !status && got_code == 200 {
            t.tolerated += 1;
        } else if scenario == "noop" && !status {
            t.stuck += 1;
        }
        if u64::from(got_code) != code {
            t.differences.push(format!(
                "{label}: code {} (oracle {code}): {:?} {:?}",
                got_code,
                got_request_error,
                got.causes().iter().map(|c| c.message()).collect::<Vec<_>>()
            ));
            continue;
        }
        if let Some(e) = want["requestError"].as_str() {
            if got_request_error != Some(e) {
                t.differences.push(format!(
                    "{label}: request error {got_request_error:?}, oracle {e:?}"
                ));
            }
            continue;
        }
        let want_causes: Vec<Key> = want["errors"]
            .as_array()
            .map(|a| a.iter().map(key_of_normalized).collect())
            .unwrap_or_default();
        let got_causes: Vec<Key> = got
            .causes()
            .iter()
            .map(|c| key_of_normalized(&c.to_json()))
            .collect();
        let (missing, extra) = multiset_diff(&want_causes, &got_causes);
        if !missing.is_empty() || !extra.is_empty() {
            t.differences
                .push(format!("{label}: missing {missing:?}, extra {extra:?}"));
        }
        let want_warnings: Vec<String> = want["warnings"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|w| without_self_type_numbers(w.as_str().unwrap_or("")))
                    .collect()
            })
            .unwrap_or_default();
        let mut got_warnings: Vec<String> = got
            .warnings
            .iter()
            .map(|w| without_self_type_numbers(w))
            .collect();
        // Upstream walks the properties of an object in Go's map order: the order of the
        // warnings (like that of the causes) changes from run to run.
        let mut want_warnings = want_warnings;
        want_warnings.sort();
        got_warnings.sort();
        if want_warnings != got_warnings {
            t.differences.push(format!(
                "{label}: warnings {got_warnings:?}, oracle {want_warnings:?}"
            ));
        }
    }
}

#[test]
fn updates_are_judged_as_the_api_server_judges_them() {
    let dir = data_dir();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no cases in {}", dir.display());
    let mut t = Tally::default();
    for case in &cases {
        let crd_doc = docs(&case.join("crd.yaml")).remove(0);
        let crd = Crd::from_value(&crd_doc).unwrap_or_else(|e| panic!("{}: {e}", case.display()));
        let validator = CrdValidator::new(&crd).expect("compiles");
        let old = docs(&case.join("old.yaml"));
        t.stored += old.len();
        let mut files: Vec<String> = std::fs::read_dir(case)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|f| f.starts_with("oracle.") && f.ends_with(".jsonl"))
            .collect();
        files.sort();
        for f in &files {
            scenario(case, &validator, &old, f, &mut t);
        }
    }
    eprintln!(
        "update cases: {} stored objects, {} judgements, no-op updates: {} accepted, {} refused, {} differences",
        t.stored,
        t.judgements,
        t.tolerated,
        t.stuck,
        t.differences.len()
    );
    for d in t.differences.iter().take(60) {
        eprintln!("  {d}");
    }
    // The figures the README quotes.
    assert_eq!(
        (t.stored, t.judgements, t.tolerated, t.stuck),
        (1292, 17183, 1209, 83),
        "stored objects, judgements, accepted and refused no-op updates"
    );
    assert!(
        t.differences.is_empty(),
        "{} of {} update judgements differ from the oracle",
        t.differences.len(),
        t.judgements
    );
}
