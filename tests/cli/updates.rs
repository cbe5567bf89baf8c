//! `crd-audit validate --update` and the no-op update verdict of `validate --stored`, on the
//! oracle cases of `tests/data/update/` (see the README there): codes, causes (multisets) and
//! warnings of each update agree with `oracle update`.

use crate::common::{key_of, multiset_diff, run, text};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn cases() -> Vec<PathBuf> {
    crate::common::case_dirs("update")
}

fn lines(text: &str) -> Vec<Value> {
    crate::common::json_lines(text)
}

fn file(case: &Path, name: &str) -> String {
    case.join(name).display().to_string()
}

fn oracle(case: &Path, name: &str) -> Vec<Value> {
    lines(
        &std::fs::read_to_string(case.join(name))
            .unwrap_or_else(|e| panic!("{}: {e}", case.display())),
    )
}

fn causes(v: &Value) -> Vec<(String, String, String)> {
    v.as_array()
        .map(|a| a.iter().map(key_of).collect())
        .unwrap_or_default()
}

fn sorted(v: &Value) -> Vec<String> {
    let mut w: Vec<String> = v
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    w.sort();
    w
}

/// `validate --update old.yaml new-S.yaml` against `oracle.S.jsonl` (and `--subresource
/// status` against `oracle.S.status.jsonl`), for the scenarios that keep every object's
/// identity (an update pairs with its stored object by group, kind, namespace and name).
#[test]
fn updates_agree_with_the_oracle() {
    let (mut judged, mut failures) = (0, Vec::new());
    for case in cases() {
        let id = case.file_name().unwrap().to_string_lossy().to_string();
        let mut outputs: Vec<String> = std::fs::read_dir(&case)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|f| f.starts_with("oracle.") && !f.starts_with("oracle.noop"))
            .collect();
        outputs.sort();
        for out_name in outputs {
            let stem = out_name
                .trim_start_matches("oracle.")
                .trim_end_matches(".jsonl");
            let (scenario, status) = match stem.strip_suffix(".status") {
                Some(s) => (s, true),
                None => (stem, false),
            };
            let expected = oracle(&case, &out_name);
            // Only scenarios whose objects keep their identity and are all accepted by the
            // request checks (the oracle pairs by position, the CLI by identity).
            // `respell` writes numbers as `-1.0` in documents in JSON form: the oracle reads
            // them as YAML (an integer), the CLI as kubectl reads a JSON document (a float).
            if scenario.ends_with("name-change")
                || scenario == "respell"
                || expected.iter().any(|e| e.get("requestError").is_some())
                || expected.iter().any(|e| {
                    causes(&e["errors"]).iter().any(|(f, _, m)| {
                        m.contains("field is immutable")
                            && (f == "metadata.name" || f == "metadata.namespace")
                    })
                })
            {
                continue;
            }
            let new = file(&case, &format!("new-{scenario}.yaml"));
            let old = file(&case, "old.yaml");
            let mut args = vec!["validate", "--update", &old, "--crd"];
            let crd = file(&case, "crd.yaml");
            args.push(&crd);
            if status {
                args.extend(["--subresource", "status"]);
            }
            args.extend([new.as_str(), "-o", "json"]);
            let out = run(&args, None);
            assert!(
                matches!(out.status.code(), Some(0 | 1)),
                "{id}/{out_name}: {}",
                text(&out.stderr)
            );
            let ours = lines(&text(&out.stdout));
            if ours.len() != expected.len() {
                failures.push(format!(
                    "{id}/{out_name}: {} lines, oracle {}",
                    ours.len(),
                    expected.len()
                ));
                continue;
            }
            for (o, e) in ours.iter().zip(&expected) {
                judged += 1;
                let name = e["name"].as_str().unwrap_or("");
                if o["code"] != e["code"] {
                    failures.push(format!(
                        "{id}/{out_name} {name}: code {} vs {}",
                        o["code"], e["code"]
                    ));
                    continue;
                }
                let (missing, extra) = multiset_diff(&causes(&e["errors"]), &causes(&o["errors"]));
                if !missing.is_empty() || !extra.is_empty() {
                    failures.push(format!(
                        "{id}/{out_name} {name}: missing {missing:?}, extra {extra:?}"
                    ));
                }
                if sorted(&o["warnings"]) != sorted(&e["warnings"]) {
                    failures.push(format!(
                        "{id}/{out_name} {name}: warnings {} vs {}",
                        o["warnings"], e["warnings"]
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(judged >= 10_000, "only {judged} updates compared");
}

/// `validate --stored`: every object invalid as stored data carries the no-op update's
/// verdict (`update.allowed`, errors, warnings) of `oracle update CRD old.yaml`, and the text
/// output names stuck and tolerated objects.
#[test]
fn stored_objects_carry_their_noop_update_verdict() {
    let (mut stuck, mut tolerated, mut failures) = (0, 0, Vec::new());
    for case in cases() {
        let id = case.file_name().unwrap().to_string_lossy().to_string();
        let (crd, old) = (file(&case, "crd.yaml"), file(&case, "old.yaml"));
        let out = run(
            &["validate", "--stored", "--crd", &crd, &old, "-o", "json"],
            None,
        );
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{id}: {}",
            text(&out.stderr)
        );
        let ours = lines(&text(&out.stdout));
        let expected = oracle(&case, "oracle.noop.jsonl");
        assert_eq!(ours.len(), expected.len(), "{id}");
        let olds: Vec<Value> = lines(&text(
            &run(&["validate", "--crd", &crd, &old, "-o", "json"], None).stdout,
        ));
        assert_eq!(olds.len(), ours.len(), "{id}");
        for (o, e) in ours.iter().zip(&expected) {
            let name = e["name"].as_str().unwrap_or("");
            let Some(update) = o.get("update") else {
                continue;
            };
            // A file's object without a resourceVersion is read as stored (it has one then).
            let no_rv = causes(&e["errors"])
                .iter()
                .any(|(f, _, _)| f == "metadata.resourceVersion");
            if no_rv || e.get("requestError").is_some() {
                continue;
            }
            let allowed = e["code"] == 200;
            if update["allowed"] != Value::Bool(allowed) {
                failures.push(format!(
                    "{id} {name}: allowed {} vs oracle code {}",
                    update["allowed"], e["code"]
                ));
                continue;
            }
            if allowed {
                tolerated += 1;
            } else {
                stuck += 1;
            }
            let (missing, extra) = multiset_diff(&causes(&e["errors"]), &causes(&update["errors"]));
            if !missing.is_empty() || !extra.is_empty() {
                failures.push(format!("{id} {name}: missing {missing:?}, extra {extra:?}"));
            }
            if sorted(&update["warnings"]) != sorted(&e["warnings"]) {
                failures.push(format!(
                    "{id} {name}: warnings {} vs {}",
                    update["warnings"], e["warnings"]
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        stuck > 0 && tolerated > 0,
        "stuck {stuck}, tolerated {tolerated}"
    );

    // Text output says which is which; before 1.30 nothing is tolerated.
    let case = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/update/root-rules");
    let (crd, old) = (file(&case, "crd.yaml"), file(&case, "old.yaml"));
    let count = |version: &str, what: &str| {
        let out = run(
            &[
                "validate",
                "--stored",
                "--kubernetes-version",
                version,
                "--crd",
                &crd,
                &old,
            ],
            None,
        );
        text(&out.stdout)
            .lines()
            .filter(|l| l.contains(what))
            .count()
    };
    let (stuck_now, tolerated_now) = (
        count("1.36", ": error: stuck:"),
        count("1.36", ": tolerated:"),
    );
    assert!(
        stuck_now > 0 && tolerated_now > 0,
        "{stuck_now} {tolerated_now}"
    );
    assert_eq!(count("1.29", ": tolerated:"), 0);
    assert_eq!(count("1.29", ": error: stuck:"), stuck_now + tolerated_now);
}

#[test]
fn an_unknown_kubernetes_version_is_a_usage_error() {
    let out = run(
        &[
            "validate",
            "--kubernetes-version",
            "1.99",
            "--crd",
            "examples/crds",
            "examples/objects",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("newer than the newest release"),
        "{}",
        text(&out.stderr)
    );
}

/// Objects are judged in the CEL environment of the release's stored rules: a rule using a
/// library the release does not have fails to compile, on every object.
#[test]
fn kubernetes_version_picks_the_cel_environment_of_stored_rules() {
    let crd = crate::common::temp_file(
        "semver-crd.yaml",
        b"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: things.example.com}\nspec:\n  group: example.com\n  scope: Namespaced\n  names: {plural: things, kind: Thing}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n              v: {type: string, maxLength: 32}\n            x-kubernetes-validations:\n            - rule: isSemver(self.v)\n",
    );
    let object = crate::common::temp_file(
        "semver-object.yaml",
        b"apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: a, namespace: default}\nspec: {v: 1.2.3}\n",
    );
    let validate = |release: &str| {
        run(
            &[
                "validate",
                "--kubernetes-version",
                release,
                "--crd",
                crd.to_str().unwrap(),
                object.to_str().unwrap(),
            ],
            None,
        )
    };
    // Semver came with 1.33.
    let out = validate("1.33");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let out = validate("1.32");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(
            "spec: Invalid value: \"object\": rule compile error: compilation failed: ERROR: <input>:1:9: undeclared reference to 'isSemver' (in container '')"
        ),
        "{}",
        text(&out.stdout)
    );
}

/// The book's example of a tolerated and a stuck object (docs/reference/updates.md shows
/// docs/snippets/validate/stored.expected), line for line.
#[test]
fn the_readme_example_tells_tolerated_from_stuck() {
    let out = run(
        &[
            "validate",
            "--stored",
            "--crd",
            "examples/crds",
            "examples/stored",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let readme = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/snippets/validate/stored.expected"),
    )
    .unwrap();
    let stdout = text(&out.stdout);
    let mut lines = 0;
    for line in stdout.lines().filter(|l| l.starts_with("examples/stored/")) {
        assert!(
            readme.contains(line),
            "docs/snippets/validate/stored.expected lacks: {line}"
        );
        lines += 1;
    }
    assert_eq!(lines, 4, "{stdout}");
}

/// `plan` counts the objects a new revision would leave stuck, by the release's rules.
#[test]
fn plan_counts_stuck_objects() {
    let summary = |version: &str| {
        let out = run(
            &[
                "plan",
                "examples/revisions/widgets-v2.yaml",
                "--current",
                "examples/crds/widgets.yaml",
                "--objects",
                "examples/objects",
                "examples/stored",
                "--kubernetes-version",
                version,
            ],
            None,
        );
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert!(
            stdout.contains(": Widget stuck: error: stuck: the API server refuses"),
            "{stdout}"
        );
        stdout.lines().last().unwrap_or("").to_string()
    };
    assert_eq!(
        summary("1.36"),
        "example.crd-audit.dev/v1: 5 object(s) read, 1 newly invalid, 3 already invalid; 2 stuck (the API server would refuse every update of them)"
    );
    assert!(summary("1.29").contains("; 4 stuck"));
}
