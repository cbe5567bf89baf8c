//! Standard input is named `-` (as it is given on the command line) wherever a file name is
//! printed: text, JSON and JUnit output, and error messages, for every command.

use crate::common::{run, text};

const WIDGETS: &str = "examples/crds/widgets.yaml";
const NEW: &str = "examples/revisions/widgets-v2.yaml";

/// An invalid widget, then a document that does not read.
const OBJECTS: &str = "apiVersion: example.crd-audit.dev/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\nspec: {size: huge}\n---\nkey: [unclosed\n";

fn all_output(out: &std::process::Output) -> String {
    format!("{}{}", text(&out.stdout), text(&out.stderr))
}

/// Nothing printed names standard input any other way.
fn no_other_name(out: &std::process::Output) {
    let all = all_output(out);
    assert!(!all.contains("stdin"), "{all}");
}

fn json_sources(out: &std::process::Output) -> Vec<String> {
    text(&out.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["source"].as_str().unwrap().to_string()
        })
        .collect()
}

/// The JUnit suites' names and test cases' class names.
fn junit_names(out: &std::process::Output) -> (Vec<String>, Vec<String>) {
    let xml = text(&out.stdout);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let names = |tag: &str, attr: &str| {
        doc.descendants()
            .filter(|n| n.has_tag_name(tag))
            .map(|n| n.attribute(attr).unwrap().to_string())
            .collect::<Vec<_>>()
    };
    (names("testsuite", "name"), names("testcase", "classname"))
}

/// `args` (reading `-`) with `-o json` and `-o junit`: the one good document is `-#0`, the
/// broken one after it `-#1`, in a suite named `-`.
fn json_and_junit_name_dash(args: &[&str], stdin: Option<&[u8]>) {
    let with = |format: &'static str| {
        let mut a = args.to_vec();
        a.extend(["-o", format]);
        run(&a, stdin)
    };
    let out = with("json");
    no_other_name(&out);
    assert_eq!(json_sources(&out), ["-#0"]);
    let out = with("junit");
    no_other_name(&out);
    assert_eq!(
        junit_names(&out),
        (
            vec!["-".to_string()],
            vec!["-#0".to_string(), "-#1".to_string()]
        )
    );
}

#[test]
fn validate_names_standard_input_dash() {
    let stdin = Some(OBJECTS.as_bytes());
    let out = run(&["validate", "--crd", WIDGETS, "-"], stdin);
    assert_eq!(out.status.code(), Some(2));
    no_other_name(&out);
    assert!(
        text(&out.stdout).starts_with(&format!(
            "-:4:{}: Widget default/w: spec.size: Unsupported value",
            "spec: {".len() + 1
        )),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).starts_with("error: -#1 (line "),
        "{}",
        text(&out.stderr)
    );
    json_and_junit_name_dash(&["validate", "--crd", WIDGETS, "-"], stdin);
}

#[test]
fn check_names_standard_input_dash() {
    let crd = std::fs::read_to_string(WIDGETS).unwrap();
    let input = format!("{crd}---\nkey: [unclosed\n");
    let stdin = Some(input.as_bytes());
    let out = run(&["check", "-"], stdin);
    assert_eq!(out.status.code(), Some(2));
    no_other_name(&out);
    let first = crd
        .lines()
        .position(|l| l.starts_with("apiVersion"))
        .unwrap()
        + 1;
    assert!(
        text(&out.stdout).starts_with(&format!("-:{first}:1: widgets.example.crd-audit.dev: ok\n")),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).starts_with("error: -#1 (line "),
        "{}",
        text(&out.stderr)
    );
    json_and_junit_name_dash(&["check", "-"], stdin);
}

#[test]
fn plan_and_diff_name_standard_input_dash() {
    let stdin = Some(OBJECTS.as_bytes());
    let out = run(&["plan", NEW, "--objects", "-"], stdin);
    assert_eq!(out.status.code(), Some(2));
    no_other_name(&out);
    assert!(
        text(&out.stdout).starts_with("-:1:1: Widget w: invalid under the new CRD\n"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).starts_with("error: -#1 (line "),
        "{}",
        text(&out.stderr)
    );
    let out = run(&["plan", NEW, "--objects", "-", "-o", "json"], stdin);
    no_other_name(&out);
    assert_eq!(json_sources(&out), ["-#0"]);
    let out = run(&["plan", NEW, "--objects", "-", "-o", "junit"], stdin);
    no_other_name(&out);
    assert_eq!(
        junit_names(&out),
        (
            vec!["-".to_string()],
            vec!["-#0".to_string(), "-#1".to_string()]
        )
    );
    // diff: the CRD read from standard input.
    let out = run(
        &["diff", "-", NEW],
        Some(b"apiVersion: v1\nkind: ConfigMap\n"),
    );
    assert_eq!(out.status.code(), Some(2));
    no_other_name(&out);
    assert_eq!(
        text(&out.stderr),
        "error: -: no CustomResourceDefinition found\n"
    );
}
