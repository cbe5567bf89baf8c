//! `crd-audit validate` on small cases whose expected verdicts come from the oracle
//! (`tests/data/validate/*/oracle.jsonl`, see `regen.sh` there): code, causes (as a
//! multiset), pruned fields and request errors of every object, in order.

use crate::common::{key_of, key_of_normalized, multiset_diff, run, text};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn cases() -> Vec<PathBuf> {
    crate::common::case_dirs("validate")
}

fn lines(text: &str) -> Vec<Value> {
    crate::common::json_lines(text)
}

/// The differences between our verdicts and the oracle's for one case.
fn compare(case: &Path) -> Vec<String> {
    let file = |name: &str| case.join(name).display().to_string();
    let expected = lines(
        &std::fs::read_to_string(case.join("oracle.jsonl"))
            .unwrap_or_else(|e| panic!("{}: {e}", case.display())),
    );
    let out = run(
        &[
            "validate",
            "--crd",
            &file("crd.yaml"),
            &file("objects.yaml"),
            "-o",
            "json",
        ],
        None,
    );
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}: {}",
        case.display(),
        text(&out.stderr)
    );
    let actual = lines(&text(&out.stdout));
    let mut diffs = Vec::new();
    if actual.len() != expected.len() {
        diffs.push(format!(
            "{} verdicts, oracle {}",
            actual.len(),
            expected.len()
        ));
    }
    for (ours, theirs) in actual.iter().zip(&expected) {
        let name = theirs["name"].as_str().unwrap_or("");
        let mut differ = |what: &str, a: &Value, b: &Value| {
            if a != b {
                diffs.push(format!("{name}: {what}: ours {a}, oracle {b}"));
            }
        };
        differ("name", &ours["name"], &theirs["name"]);
        differ("code", &ours["code"], &theirs["code"]);
        let pruned = |v: &Value| {
            let mut p: Vec<String> = v
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            p.sort();
            Value::from(p)
        };
        differ(
            "pruned",
            &pruned(&ours["pruned"]),
            &pruned(&theirs["pruned"]),
        );
        differ(
            "requestError",
            &Value::Bool(ours.get("requestError").is_some()),
            &Value::Bool(theirs.get("requestError").is_some()),
        );
        let keys = |v: &Value| -> Vec<_> {
            v.as_array()
                .map(|a| a.iter().map(key_of).collect())
                .unwrap_or_default()
        };
        let (missing, extra) = multiset_diff(&keys(&theirs["errors"]), &keys(&ours["errors"]));
        if !missing.is_empty() || !extra.is_empty() {
            diffs.push(format!(
                "{name}: causes missing {missing:?}, extra {extra:?}"
            ));
        }
    }
    diffs
}

#[test]
fn verdicts_agree_with_the_oracle() {
    let cases = cases();
    assert!(!cases.is_empty());
    // docs/reference/agreement.md quotes these sizes.
    let objects: usize = cases
        .iter()
        .map(|c| {
            std::fs::read_to_string(c.join("oracle.jsonl"))
                .map(|t| t.lines().count())
                .unwrap_or(0)
        })
        .sum();
    assert_eq!(
        (cases.len(), objects),
        (15, 7747),
        "update docs/reference/agreement.md"
    );
    let mut failures = Vec::new();
    for case in &cases {
        for d in compare(case) {
            failures.push(format!(
                "{}: {d}",
                case.file_name().unwrap().to_string_lossy()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `crd-audit check` on the CRDs of `tests/data/check/` against `oracle structural`
/// (`NAME.oracle.json`, see `regen.sh` there): CRD create errors and NonStructuralSchema
/// violations, as multisets.
#[test]
fn crd_checks_agree_with_the_oracle() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/check");
    let mut crds: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    crds.sort();
    assert_eq!(
        crds.len(),
        15,
        "docs/reference/agreement.md quotes the number of CRDs"
    );
    let mut failures = Vec::new();
    for crd in &crds {
        let name = crd.file_name().unwrap().to_string_lossy().to_string();
        let oracle = crd.with_extension("oracle.json");
        let expected: Value = serde_json::from_str(
            &std::fs::read_to_string(&oracle)
                .unwrap_or_else(|e| panic!("{}: {e}", oracle.display())),
        )
        .unwrap();
        let out = run(&["check", "-o", "json", crd.to_str().unwrap()], None);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{name}: {}",
            text(&out.stderr)
        );
        let actual: Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
        failures.extend(check_differences(&name, &actual, &expected));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// How one CRD's `check -o json` differs from `oracle structural`: CRD create errors and
/// NonStructuralSchema violations as multisets (`selfType` numbers aside), and the warnings.
fn check_differences(name: &str, ours: &Value, theirs: &Value) -> Vec<String> {
    let mut failures = Vec::new();
    for list in ["crdErrors", "nonStructural"] {
        let keys = |v: &Value| -> Vec<_> {
            v[list]
                .as_array()
                .map(|a| a.iter().map(key_of_normalized).collect())
                .unwrap_or_default()
        };
        let (missing, extra) = multiset_diff(&keys(theirs), &keys(ours));
        if !missing.is_empty() || !extra.is_empty() {
            failures.push(format!(
                "{name}: {list}: missing {missing:?}, extra {extra:?}"
            ));
        }
    }
    if ours["warnings"] != theirs["warnings"] {
        failures.push(format!(
            "{name}: warnings: ours {}, oracle {}",
            ours["warnings"], theirs["warnings"]
        ));
    }
    failures
}

/// `crd-audit check` on synthetic CRDs against `oracle structural` on each (`oracle.jsonl`):
/// CRD create errors and NonStructuralSchema violations as multisets, and the create
/// warnings. `tests/data/check-generated/`: 275 schema variants; `tests/data/check-spec/`: 89
/// variants of the rest of the CRD (see `generate.py` in each).
#[test]
fn generated_crds_agree_with_the_oracle() {
    let mut failures = Vec::new();
    for (name, count) in [("check-generated", 275), ("check-spec", 89)] {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name);
        let expected = lines(
            &std::fs::read_to_string(dir.join("oracle.jsonl"))
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display())),
        );
        let crds = dir.join("crds.yaml");
        let out = run(&["check", "-o", "json", crds.to_str().unwrap()], None);
        assert!(
            matches!(out.status.code(), Some(1)),
            "{}",
            text(&out.stderr)
        );
        let actual = lines(&text(&out.stdout));
        assert_eq!(actual.len(), expected.len(), "{name}");
        assert_eq!(
            expected.len(),
            count,
            "{name}: docs/reference/agreement.md quotes the number"
        );
        for (ours, theirs) in actual.iter().zip(&expected) {
            let crd = theirs["crd"].as_str().unwrap_or("");
            if ours["crd"] != theirs["crd"] {
                failures.push(format!("{name}: {crd}: ours {}", ours["crd"]));
                continue;
            }
            failures.extend(check_differences(&format!("{name}: {crd}"), ours, theirs));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `crd-audit check --kubernetes-version 1.N` on CRDs whose rules each use one library,
/// macro, syntax or behaviour of the Kubernetes CEL environment, against what CRD create
/// validation of a 1.N server says of them (`tests/data/check-releases/`: `generate.py`
/// writes the CRDs, `regen.sh` asks the upstream code through `scripts/cel-env-oracle` at
/// each release from 1.27 to 1.36): the code and the CRD create errors as multisets.
#[test]
fn checks_by_release_agree_with_the_upstream_code() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/check-releases");
    let crds = dir.join("crds.yaml");
    let mut failures = Vec::new();
    let mut judged = 0;
    for minor in 27..=36 {
        let release = format!("1.{minor}");
        let expected = lines(
            &std::fs::read_to_string(dir.join(format!("expected-{release}.jsonl")))
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display())),
        );
        assert_eq!(
            expected.len(),
            60,
            "docs/reference/agreement.md quotes the number of CRDs"
        );
        let out = run(
            &[
                "check",
                "--kubernetes-version",
                &release,
                "-o",
                "json",
                crds.to_str().unwrap(),
            ],
            None,
        );
        assert!(
            matches!(out.status.code(), Some(1)),
            "{release}: {}",
            text(&out.stderr)
        );
        let actual = lines(&text(&out.stdout));
        assert_eq!(actual.len(), expected.len(), "{release}");
        for (ours, theirs) in actual.iter().zip(&expected) {
            judged += 1;
            let crd = theirs["crd"].as_str().unwrap_or("");
            if ours["crd"] != theirs["crd"] {
                failures.push(format!("{release}: {crd}: ours {}", ours["crd"]));
                continue;
            }
            let keys = |v: &Value| -> Vec<_> {
                v["crdErrors"]
                    .as_array()
                    .map(|a| a.iter().map(key_of_normalized).collect())
                    .unwrap_or_default()
            };
            let (missing, extra) = multiset_diff(&keys(theirs), &keys(ours));
            if !missing.is_empty() || !extra.is_empty() {
                failures.push(format!(
                    "{release}: {crd}: crdErrors: missing {missing:?}, extra {extra:?}"
                ));
            }
            // The server refuses the CRD (422) exactly when there are create errors.
            let code = if keys(ours).is_empty() { 201 } else { 422 };
            if theirs["code"] != code {
                failures.push(format!(
                    "{release}: {crd}: code {}, ours {code}",
                    theirs["code"]
                ));
            }
        }
    }
    assert_eq!(judged, 600, "README.md quotes the number of judgements");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
