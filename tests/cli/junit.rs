//! `--output junit`: the XML parses, its counts match its test cases, and its failures carry
//! the messages of `--output json` for the same input.

use crate::common::{run, temp_file, text};
use serde_json::Value;
use std::path::PathBuf;

fn repo(p: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(p)
        .to_string_lossy()
        .into_owned()
}

fn json_lines(out: &[u8]) -> Vec<Value> {
    text(out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// A failure or error: (element, type, message attribute, text lines).
type Finding = (String, String, String, Vec<String>);

/// Per test case: (suite name, classname, name, finding).
type Case = (String, String, String, Option<Finding>);

/// Parses the document, checks the structure and the counts, and returns the test cases.
fn parse(xml: &str, command: &str) -> Vec<Case> {
    assert!(
        xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"),
        "{xml}"
    );
    let doc = roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("{e}: {xml}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let mut cases = Vec::new();
    for (id, suite) in root.children().filter(|n| n.is_element()).enumerate() {
        assert_eq!(suite.tag_name().name(), "testsuite");
        assert_eq!(suite.attribute("id"), Some(id.to_string().as_str()));
        assert_eq!(
            suite.attribute("package"),
            Some(format!("crd-audit {command}").as_str())
        );
        let name = suite.attribute("name").unwrap().to_string();
        let (mut tests, mut failures, mut errors) = (0, 0, 0);
        for case in suite.children().filter(|n| n.has_tag_name("testcase")) {
            tests += 1;
            let finding = case.children().find(|n| n.is_element()).map(|f| {
                match f.tag_name().name() {
                    "failure" => failures += 1,
                    "error" => errors += 1,
                    other => panic!("unexpected <{other}>"),
                }
                (
                    f.tag_name().name().to_string(),
                    f.attribute("type").unwrap().to_string(),
                    f.attribute("message").unwrap().to_string(),
                    f.text().unwrap_or("").lines().map(String::from).collect(),
                )
            });
            cases.push((
                name.clone(),
                case.attribute("classname").unwrap().to_string(),
                case.attribute("name").unwrap().to_string(),
                finding,
            ));
        }
        let count = |a: &str| suite.attribute(a).unwrap().parse::<usize>().unwrap();
        assert_eq!(
            (count("tests"), count("failures"), count("errors")),
            (tests, failures, errors),
            "{name}"
        );
    }
    xmllint(xml);
    cases
}

/// Validates against the Ant JUnit schema when xmllint is installed.
fn xmllint(xml: &str) {
    let xsd = repo("tests/data/junit/junit.xsd");
    assert!(std::path::Path::new(&xsd).exists(), "{xsd} is missing");
    let file = temp_file(
        &format!("junit-{}.xml", std::ptr::from_ref(xml).addr()),
        xml.as_bytes(),
    );
    match std::process::Command::new("xmllint")
        .args(["--noout", "--schema", &xsd])
        .arg(&file)
        .output()
    {
        Ok(o) => assert!(o.status.success(), "xmllint: {}", text(&o.stderr)),
        Err(e) => eprintln!("notice: xmllint not run ({e}): schema validation skipped"),
    }
}

/// Object verdicts: each JSON line's messages equal its test case's failure lines.
fn same_as_json(cases: &[Case], json: &[Value]) {
    assert_eq!(cases.len(), json.len());
    for (case, j) in cases.iter().zip(json) {
        assert_eq!(case.1, j["source"].as_str().unwrap());
        let mut messages: Vec<String> = j["errors"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|e| e["message"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default();
        if let Some(e) = j["requestError"].as_str() {
            messages.push(e.to_string());
        }
        match &case.3 {
            None => assert!(messages.is_empty(), "{case:?} vs {j}"),
            Some((element, kind, first, lines)) => {
                assert_eq!(element, "failure");
                assert_eq!(&messages, lines, "{j}");
                assert_eq!(first, &messages[0]);
                if let Some(t) = j["errors"][0]["type"].as_str() {
                    assert_eq!(kind, t);
                }
            }
        }
    }
}

#[test]
fn validate_junit_matches_json() {
    let (crds, objects) = (repo("examples/crds"), repo("examples/objects"));
    let junit = run(&["validate", "--crd", &crds, &objects, "-o", "junit"], None);
    let json = run(&["validate", "--crd", &crds, &objects, "-o", "json"], None);
    assert_eq!(junit.status.code(), json.status.code());
    let cases = parse(&text(&junit.stdout), "validate");
    assert!(
        cases.iter().any(|c| c.3.is_some()),
        "the examples hold invalid objects"
    );
    same_as_json(&cases, &json_lines(&json.stdout));
}

#[test]
fn plan_junit_matches_json() {
    let (new, objects) = (
        repo("examples/revisions/widgets-v2.yaml"),
        repo("examples/objects"),
    );
    let current = repo("examples/crds/widgets.yaml");
    let args = |f: &'static str| {
        vec![
            "plan".to_string(),
            new.clone(),
            "--current".into(),
            current.clone(),
            "--objects".into(),
            objects.clone(),
            "-o".into(),
            f.into(),
        ]
    };
    let a = args("junit");
    let junit = run(&a.iter().map(String::as_str).collect::<Vec<_>>(), None);
    let a = args("json");
    let json = run(&a.iter().map(String::as_str).collect::<Vec<_>>(), None);
    assert_eq!(junit.status.code(), json.status.code());
    let cases = parse(&text(&junit.stdout), "plan");
    same_as_json(&cases, &json_lines(&json.stdout));
}

#[test]
fn check_junit_matches_json() {
    let crds = repo("examples/crds");
    let junit = run(&["check", &crds, "-o", "junit"], None);
    let json = run(&["check", &crds, "-o", "json"], None);
    assert_eq!(junit.status.code(), json.status.code());
    let cases = parse(&text(&junit.stdout), "check");
    let json = json_lines(&json.stdout);
    assert_eq!(cases.len(), json.len());
    for (case, j) in cases.iter().zip(&json) {
        assert_eq!(case.1, j["source"].as_str().unwrap());
        assert_eq!(case.2, j["crd"].as_str().unwrap());
        let mut messages = Vec::new();
        for key in ["nonStructural", "crdErrors"] {
            for c in j[key].as_array().unwrap() {
                messages.push(c["message"].as_str().unwrap().to_string());
            }
        }
        for v in j["storedVersionsNotServed"].as_array().unwrap() {
            // The text output's wording (JSON gives the version alone).
            messages.push(format!(
                "version {v} is listed in status.storedVersions but is not served: crd-audit migrate {} rewrites its objects and prunes it",
                case.2
            ));
        }
        for f in j["sizeFindings"].as_array().unwrap() {
            if f["severity"] == "error" {
                messages.push(f["message"].as_str().unwrap().to_string());
            }
        }
        match &case.3 {
            None => assert!(messages.is_empty(), "{j}"),
            Some((_, _, first, lines)) => {
                assert_eq!(lines, &messages);
                assert_eq!(first, &messages[0]);
            }
        }
    }
}

/// Every input `check` could not read is an error case, as SARIF records it: a document
/// that is no YAML, a `List` that cannot be unpacked, a CRD that cannot be decoded.
#[test]
fn check_junit_has_an_error_case_for_every_unreadable_input() {
    let inputs = [
        ("junit/not-yaml.yaml", "a: [\n", "invalid YAML"),
        (
            "junit/bad-list.yaml",
            "apiVersion: v1\nkind: List\nitems: 5\n",
            "cannot unmarshal number",
        ),
        (
            "junit/bad-crd.yaml",
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x.example.com}\nspec: 5\n",
            "spec: must be an object",
        ),
    ];
    let files: Vec<String> = inputs
        .iter()
        .map(|(name, body, _)| temp_file(name, body.as_bytes()).display().to_string())
        .collect();
    let mut args = vec!["check", "-o", "junit"];
    args.extend(files.iter().map(String::as_str));
    let out = run(&args, None);
    assert_eq!(out.status.code(), Some(2));
    let cases = parse(&text(&out.stdout), "check");
    assert_eq!(cases.len(), inputs.len(), "{cases:?}");
    for ((suite, classname, name, finding), (file, (_, _, said))) in
        cases.iter().zip(files.iter().zip(&inputs))
    {
        assert_eq!(suite, file);
        assert_eq!(classname, &format!("{file}#0"));
        assert_eq!(name, "document 0");
        let (element, kind, message, _) = finding.as_ref().unwrap();
        assert_eq!((element.as_str(), kind.as_str()), ("error", "InputError"));
        assert!(message.contains(said), "{message}");
    }
}

#[test]
fn diff_junit_matches_json() {
    let (old, new) = (
        repo("examples/crds/widgets.yaml"),
        repo("examples/revisions/widgets-v2.yaml"),
    );
    let junit = run(&["diff", &old, &new, "-o", "junit"], None);
    let json = run(&["diff", &old, &new, "-o", "json"], None);
    assert_eq!(junit.status.code(), json.status.code());
    let cases = parse(&text(&junit.stdout), "diff");
    let json = json_lines(&json.stdout);
    assert!(!json.is_empty(), "the example revision changes the schema");
    assert_eq!(cases.len(), json.len());
    for (case, j) in cases.iter().zip(&json) {
        match &case.3 {
            Some((element, kind, first, lines)) => {
                assert_eq!(j["class"], "tightening");
                assert_eq!(element, "failure");
                assert_eq!(kind, j["kind"].as_str().unwrap());
                assert_eq!(first, j["reason"].as_str().unwrap());
                assert_eq!(lines, std::slice::from_ref(first));
            }
            None => assert_ne!(j["class"], "tightening"),
        }
    }
}

#[test]
fn junit_escapes_markup_and_control_characters() {
    let crds = repo("examples/crds");
    let name = "a<&>\"'\u{1}b";
    let objects = temp_file(
        "junit-escape.json",
        serde_json::json!({
            "apiVersion": "example.com/v1<&>\"'\u{1}",
            "kind": "Widget",
            "metadata": {"name": name},
        })
        .to_string()
        .as_bytes(),
    );
    let objects = objects.to_string_lossy().into_owned();
    let junit = run(&["validate", "--crd", &crds, &objects, "-o", "junit"], None);
    let json = run(&["validate", "--crd", &crds, &objects, "-o", "json"], None);
    assert_eq!(junit.status.code(), Some(1));
    let xml = text(&junit.stdout);
    let cases = parse(&xml, "validate");
    assert_eq!(cases.len(), 1);
    // The control character is spelled out; the markup characters come back as they were.
    assert_eq!(cases[0].2, "Widget a<&>\"'\\u{1}b");
    let json = json_lines(&json.stdout);
    let message = json[0]["requestError"].as_str().unwrap();
    let (_, _, first, _) = cases[0].3.as_ref().unwrap();
    assert_eq!(first, &message.replace('\u{1}', "\\u{1}"));
}
