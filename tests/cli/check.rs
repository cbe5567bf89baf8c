//! `crd-audit check` as a user runs it: exit codes, output, and bad input handled with clear
//! errors (never a panic).

use crate::common::{run, temp_file, text};

const CRD_HEAD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: things.example.com}\nspec:\n  group: example.com\n  scope: Namespaced\n  names: {plural: things, kind: Thing}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n";

#[test]
fn clean_crd_exits_zero_and_says_ok() {
    let crd = format!(
        "{CRD_HEAD}        type: object\n        properties:\n          spec: {{type: object}}\n"
    );
    let out = run(&["check", "-"], Some(crd.as_bytes()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("-:1:1: things.example.com: ok\n"));
}

#[test]
fn findings_exit_one_with_upstream_messages_in_json() {
    let crd = format!(
        "{CRD_HEAD}        type: object\n        properties:\n          spec:\n            properties:\n              s: {{type: string, pattern: '[a-'}}\n"
    );
    let out = run(&["check", "--output", "json", "-"], Some(crd.as_bytes()));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let line: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(line["crd"], "things.example.com");
    let ns: Vec<&str> = line["nonStructural"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["message"].as_str().unwrap())
        .collect();
    assert!(ns.contains(&"spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"), "{ns:?}");
    assert!(
        ns.iter().any(|m| m.contains(
            "properties[s].pattern: Invalid value: \"[a-\": must be a valid regular expression"
        )),
        "{ns:?}"
    );
}

#[test]
fn malformed_yaml_names_file_document_and_line() {
    let p = temp_file(
        "broken.yaml",
        format!("{CRD_HEAD}        type: object\n---\nkey: [unclosed\nother: 1\n").as_bytes(),
    );
    let out = run(&["check", p.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("broken.yaml#1"), "{err}");
    assert!(err.contains("line"), "{err}");
    // the first, valid document was still checked
    assert!(text(&out.stdout).contains("broken.yaml:1:1: things.example.com: ok"));
}

#[test]
fn non_crd_documents_are_input_errors() {
    let out = run(
        &["check", "-"],
        Some(b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("error: -#0 ") && err.contains("not a CustomResourceDefinition"),
        "{err}"
    );
}

#[test]
fn missing_files_are_input_errors() {
    let out = run(&["check", "/nonexistent/crd.yaml"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("/nonexistent/crd.yaml"));
}

#[test]
fn schemas_nested_ten_thousand_levels_are_refused_cleanly() {
    // As YAML flow mappings and as JSON.
    let mut schema = String::from("{type: string}");
    for _ in 0..10_000 {
        schema = format!("{{type: object, properties: {{a: {schema}}}}}");
    }
    let crd = format!("{CRD_HEAD}        {schema}\n")
        .replace("openAPIV3Schema:\n        ", "openAPIV3Schema: ");
    let out = run(&["check", "-"], Some(crd.as_bytes()));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("error: -#0 "),
        "{}",
        text(&out.stderr)
    );

    let mut json = String::from(r#"{"type":"string"}"#);
    for _ in 0..10_000 {
        json = format!(r#"{{"type":"object","properties":{{"a":{json}}}}}"#);
    }
    let doc = format!(
        r#"{{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{{"name":"a.b"}},"spec":{{"group":"b","names":{{"kind":"A","plural":"a"}},"scope":"Cluster","versions":[{{"name":"v1","served":true,"storage":true,"schema":{{"openAPIV3Schema":{json}}}}}]}}}}"#
    );
    let out = run(&["check", "-"], Some(doc.as_bytes()));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("nested deeper"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn schemas_nested_beyond_the_schema_limit_name_the_path() {
    // Block style: 400 schema levels, 800 mapping levels.
    let mut crd = String::from(CRD_HEAD);
    let mut indent = String::from("        ");
    for _ in 0..400 {
        crd.push_str(&format!(
            "{indent}type: object\n{indent}properties:\n{indent}  a:\n"
        ));
        indent.push_str("    ");
    }
    crd.push_str(&format!("{indent}type: string\n"));
    let out = run(
        &["check", "-"],
        Some(format!("a: 1\n---\n{crd}").as_bytes()),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("error: -#1 (line 3): spec.versions[0].schema.openAPIV3Schema.properties[a]")
            && err.contains("nested deeper"),
        "{err}"
    );
}

#[test]
fn a_fifty_megabyte_crd_is_checked() {
    let mut crd = format!("{CRD_HEAD}        type: object\n        properties:\n");
    let desc = "d".repeat(200);
    let mut i = 0;
    while crd.len() < 50 << 20 {
        crd.push_str(&format!(
            "          p{i}: {{type: string, maxLength: 10, description: \"{desc}\"}}\n"
        ));
        i += 1;
    }
    crd.push_str("          bad: {type: array}\n");
    let p = temp_file("huge.yaml", crd.as_bytes());
    let out = run(&["check", "-o", "json", p.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("properties[bad].items: Required value: must be specified"));
}

#[test]
fn kubernetes_version_picks_the_cel_environment() {
    let crd = format!(
        "{CRD_HEAD}        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n              ip: {{type: string, maxLength: 64}}\n            x-kubernetes-validations:\n            - rule: isIP(self.ip)\n"
    );
    // A 1.30 server compiles new rules in 1.29's environment, which has no IP library.
    let out = run(
        &["check", "--kubernetes-version", "1.30", "-"],
        Some(crd.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let found = text(&out.stdout);
    assert!(
        found.contains("x-kubernetes-validations[0].rule: Invalid value:")
            && found.contains("compilation failed: ERROR: <input>:1:5: undeclared reference to 'isIP' (in container '')"),
        "{found}"
    );
    for release in ["1.31", "v1.36.2"] {
        let out = run(
            &["check", "--kubernetes-version", release, "-"],
            Some(crd.as_bytes()),
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{release}: {}",
            text(&out.stdout)
        );
    }
    let out = run(
        &["check", "--kubernetes-version", "2.0", "-"],
        Some(crd.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("error: --kubernetes-version: invalid Kubernetes version"),
        "{}",
        text(&out.stderr)
    );
}
