//! `check` and `plan` place each finding at the line and column of its field (the deepest
//! node of it that exists), in text (`path:line:column:`) and JSON output, for YAML in block
//! and flow style, JSON, the documents of a stream and the items of a `List`. The expected
//! positions are found by searching the input text for the keys, not taken from the output.

use crate::common::{run, temp_file, text};
use serde_json::Value;

/// The line and column (1-based, in characters) where the `nth` occurrence of `needle`
/// starts in `text`.
fn pos(text: &str, needle: &str, nth: usize) -> (u64, u64) {
    let (at, _) = text
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("{needle:?} #{nth} is not in the input"));
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap().chars().count() + 1;
    (line as u64, column as u64)
}

/// The position after `offset` characters of where `needle` starts.
fn pos_plus(text: &str, needle: &str, nth: usize, offset: u64) -> (u64, u64) {
    let (l, c) = pos(text, needle, nth);
    (l, c + offset)
}

fn at(v: &Value) -> (u64, u64) {
    (
        v["line"]
            .as_u64()
            .unwrap_or_else(|| panic!("no line in {v}")),
        v["column"]
            .as_u64()
            .unwrap_or_else(|| panic!("no column in {v}")),
    )
}

fn json_lines(out: &std::process::Output) -> Vec<Value> {
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn crd_v1(name: &str, plural: &str, kind: &str, schema: &str) -> String {
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {name}\nspec:\n  group: example.com\n  scope: Namespaced\n  names: {{plural: {plural}, kind: {kind}}}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n{schema}"
    )
}

/// A stream of CRDs: one in block style (with every kind of finding), one in flow style, and
/// a `List` of two (the second with two versions sharing one schema).
fn check_input() -> String {
    let big = "x".repeat(270_000);
    let block = format!(
        "# leading comment\n\
         apiVersion: apiextensions.k8s.io/v1\n\
         kind: CustomResourceDefinition\n\
         metadata:\n  name: blocks.example.com\n  annotations:\n    big: \"{big}\"\n\
         spec:\n  group: example.com\n  scope: Namespaced\n  names: {{plural: blocks, kind: Block}}\n\
         \x20 versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n\
         \x20       type: object\n        properties:\n\
         \x20         noType: {{}}\n\
         \x20         badPattern: {{type: string, pattern: '[a-'}}\n\
         \x20         oddFormat: {{type: string, format: nope-format}}\n\
         status:\n  storedVersions: [v0, v1]\n"
    );
    // (The server warns about formats only in a CRD it creates.)
    let warned = crd_v1(
        "formats.example.com",
        "formats",
        "Format",
        "        type: object\n        properties:\n          oddFormat: {type: string, format: nope-format}\n",
    );
    // (A document starting with `{` is read as JSON, as kubectl reads it.)
    let flow = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: flows.example.com}\n\
                spec: {group: example.com, scope: Cluster, names: {plural: flows, kind: Flow},\n  \
                versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, properties: {flowPattern: {type: string, pattern: '(x'}}}}}]}\n";
    let indent = |s: &str| {
        s.lines()
            .enumerate()
            .map(|(i, l)| {
                if i == 0 {
                    format!("- {l}\n")
                } else {
                    format!("  {l}\n")
                }
            })
            .collect::<String>()
    };
    let ok = crd_v1(
        "listedoks.example.com",
        "listedoks",
        "ListedOk",
        "        type: object\n",
    );
    let schema = "        type: object\n        properties:\n          listPattern: {type: string, pattern: '[z-'}\n";
    let shared = crd_v1("listedbads.example.com", "listedbads", "ListedBad", schema)
        + &format!(
            "  - name: v2\n    served: true\n    storage: false\n    schema:\n      openAPIV3Schema:\n{schema}"
        );
    format!(
        "{block}---\n{flow}---\napiVersion: v1\nkind: List\nitems:\n{}{}---\n{warned}",
        indent(&ok),
        indent(&shared)
    )
}

#[test]
fn check_places_findings_at_their_fields() {
    let input = check_input();
    let file = temp_file("positions/crds.yaml", input.as_bytes());
    let path = file.to_str().unwrap();
    let out = run(&["check", "-o", "json", path], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let lines = json_lines(&out);
    let crds: Vec<&str> = lines.iter().map(|l| l["crd"].as_str().unwrap()).collect();
    assert_eq!(
        crds,
        [
            "blocks.example.com",
            "flows.example.com",
            "listedoks.example.com",
            "listedbads.example.com",
            "formats.example.com"
        ]
    );
    // The CRDs: documents at their first line, the List's items at their items (an item
    // without findings at its List's line: documents without findings are not read again).
    let list_doc = input.find("apiVersion: v1\nkind: List").unwrap();
    let list_text_before = &input[..list_doc];
    let nth_item = |n| {
        let k = list_text_before
            .matches("- apiVersion: apiextensions.k8s.io/v1")
            .count()
            + n;
        pos_plus(&input, "- apiVersion: apiextensions.k8s.io/v1", k, 2)
    };
    assert_eq!(at(&lines[0]), pos(&input, "apiVersion", 0));
    assert_eq!(at(&lines[1]), pos(&input, "apiVersion", 1));
    assert_eq!(at(&lines[2]), pos(&input, "apiVersion: v1\nkind: List", 0));
    assert_eq!(at(&lines[3]), nth_item(1));

    // Block style: every kind of finding.
    let block = &lines[0];
    let expected = |field: &str| -> (u64, u64) {
        if field.ends_with("properties[noType].type") {
            pos(&input, "noType:", 0)
        } else if field.ends_with("properties[badPattern].pattern") {
            pos(&input, "pattern: '[a-'", 0)
        } else {
            panic!("unexpected finding at {field}")
        }
    };
    let ns = block["nonStructural"].as_array().unwrap();
    let errors = block["crdErrors"].as_array().unwrap();
    assert!(!ns.is_empty() && !errors.is_empty(), "{block}");
    for c in ns.iter().chain(errors) {
        assert_eq!(at(c), expected(c["field"].as_str().unwrap()), "{c}");
    }
    // A refused CRD gets no create warnings; the same format in a CRD the server creates does.
    assert_eq!(block["warnings"], serde_json::json!([]));
    let warned = &lines[4];
    assert_eq!(
        warned["warnings"],
        serde_json::json!(["unrecognized format \"nope-format\""])
    );
    let w = &warned["warningPositions"][0];
    assert_eq!(
        w["field"],
        "spec.versions[0].schema.openAPIV3Schema.properties[oddFormat].format"
    );
    assert_eq!(at(w), pos(&input, "format: nope-format", 1));
    assert_eq!(
        at(warned),
        pos(
            &input,
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: formats",
            0
        )
    );
    assert_eq!(block["storedVersionsNotServed"], serde_json::json!(["v0"]));
    let s = &block["storedVersionsNotServedPositions"][0];
    assert_eq!(s["field"], "status.storedVersions[0]");
    assert_eq!(at(s), pos_plus(&input, "[v0, v1]", 0, 1));
    let sizes = block["sizeFindings"].as_array().unwrap();
    assert_eq!(sizes.len(), 1, "{block}");
    assert_eq!(sizes[0]["limit"], "lastAppliedAnnotation");
    assert_eq!(at(&sizes[0]), pos(&input, "annotations:", 0));

    // Flow style.
    let flow = &lines[1];
    let flow_errors = flow["crdErrors"].as_array().unwrap();
    assert!(!flow_errors.is_empty(), "{flow}");
    for c in flow_errors {
        assert!(
            c["field"]
                .as_str()
                .unwrap()
                .ends_with("properties[flowPattern].pattern"),
            "{c}"
        );
        assert_eq!(at(c), pos(&input, "pattern: '(x'", 0), "{c}");
    }

    // A List's item whose versions share one schema: CRD validation names it
    // spec.validation, found in the first version; structural violations name each version.
    assert!(lines[2]["crdErrors"].as_array().unwrap().is_empty());
    let shared = &lines[3];
    let mut seen = 0;
    for c in shared["nonStructural"]
        .as_array()
        .unwrap()
        .iter()
        .chain(shared["crdErrors"].as_array().unwrap())
    {
        let field = c["field"].as_str().unwrap();
        let nth = if field.starts_with("spec.versions[1]") {
            1
        } else {
            assert!(
                field.starts_with("spec.versions[0]")
                    || field.starts_with("spec.validation.openAPIV3Schema"),
                "{field}"
            );
            0
        };
        assert_eq!(at(c), pos(&input, "pattern: '[z-'", nth), "{c}");
        seen += 1;
    }
    assert!(seen >= 3, "{shared}");

    // Text: `path:line:column: crd: kind: message`, one line a finding.
    let out = run(&["check", path], None);
    let stdout = text(&out.stdout);
    for (line, kind, key) in [
        (&lines[0], "NonStructuralSchema", "nonStructural"),
        (&lines[0], "CRDInvalid", "crdErrors"),
        (&lines[1], "CRDInvalid", "crdErrors"),
        (&lines[3], "NonStructuralSchema", "nonStructural"),
        (&lines[3], "CRDInvalid", "crdErrors"),
    ] {
        for c in line[key].as_array().unwrap() {
            let (l, col) = at(c);
            let expected = format!(
                "{path}:{l}:{col}: {}: {kind}: {}\n",
                line["crd"].as_str().unwrap(),
                c["message"].as_str().unwrap()
            );
            assert!(stdout.contains(&expected), "{expected}\n{stdout}");
        }
    }
    let (l, c) = pos(&input, "format: nope-format", 1);
    assert!(stdout.contains(&format!(
        "{path}:{l}:{c}: formats.example.com: Warning: unrecognized format \"nope-format\"\n"
    )));
    assert!(
        !stdout.contains("blocks.example.com: Warning: unrecognized format"),
        "{stdout}"
    );
    let (l, c) = pos_plus(&input, "[v0, v1]", 0, 1);
    assert!(stdout.contains(&format!(
        "{path}:{l}:{c}: blocks.example.com: StoredVersionNotServed: version \"v0\""
    )));
    let (l, c) = at(&lines[2]);
    assert!(
        stdout.contains(&format!("{path}:{l}:{c}: listedoks.example.com: ok\n")),
        "{stdout}"
    );
}

#[test]
fn check_places_findings_in_json_input() {
    let input = "{\n  \"apiVersion\": \"apiextensions.k8s.io/v1\",\n  \"kind\": \"CustomResourceDefinition\",\n  \"metadata\": {\"name\": \"jsons.example.com\"},\n  \"spec\": {\n    \"group\": \"example.com\", \"scope\": \"Namespaced\",\n    \"names\": {\"plural\": \"jsons\", \"kind\": \"Json\"},\n    \"versions\": [{\"name\": \"v1\", \"served\": true, \"storage\": true,\n      \"schema\": {\"openAPIV3Schema\": {\"type\": \"object\",\n        \"properties\": {\"s\": {\"type\": \"string\", \"pattern\": \"[q-\"}}}}}]\n  }\n}\n";
    let file = temp_file("positions/crd.json", input.as_bytes());
    let out = run(&["check", "-o", "json", file.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let lines = json_lines(&out);
    assert_eq!(at(&lines[0]), (1, 1));
    let errors = lines[0]["crdErrors"].as_array().unwrap();
    assert!(!errors.is_empty());
    for c in errors {
        assert!(
            c["field"]
                .as_str()
                .unwrap()
                .ends_with("properties[s].pattern"),
            "{c}"
        );
        assert_eq!(at(c), pos(input, "\"pattern\"", 0), "{c}");
    }
}

#[test]
fn plan_places_findings_at_their_fields() {
    let objects = "# widgets to plan for\n\
                   apiVersion: example.crd-audit.dev/v1\n\
                   kind: Widget\n\
                   metadata: {name: block, namespace: default}\n\
                   spec:\n  size: small\n  tier: gold\n  replicas: 7\n\
                   ---\n\
                   apiVersion: example.crd-audit.dev/v1\nkind: Widget\nmetadata: {name: flow, namespace: default}\n\
                   spec: {size: large,\n  replicas: 2}\n\
                   ---\n\
                   apiVersion: example.crd-audit.dev/v1\n\
                   kind: WidgetList\n\
                   items:\n\
                   - metadata: {name: listed-ok, namespace: default}\n  spec: {size: small, tier: gold}\n\
                   - metadata: {name: listed-bad, namespace: default}\n  spec:\n    size: small\n    tier: silver\n    replicas: 9\n";
    let file = temp_file("positions/objects.yaml", objects.as_bytes());
    let path = file.to_str().unwrap();
    let json_objects = "{\"apiVersion\": \"example.crd-audit.dev/v1\", \"kind\": \"Widget\",\n \"metadata\": {\"name\": \"json\", \"namespace\": \"default\"},\n \"spec\": {\"size\": \"small\", \"tier\": \"gold\",\n  \"replicas\": 99}}\n";
    let json_file = temp_file("positions/object.json", json_objects.as_bytes());
    let json_path = json_file.to_str().unwrap();
    let new = "examples/revisions/widgets-v2.yaml";
    let out = run(
        &["plan", new, "--objects", path, json_path, "-o", "json"],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let lines = json_lines(&out);
    let names: Vec<&str> = lines.iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["block", "flow", "listed-ok", "listed-bad", "json"]);
    let valid: Vec<bool> = lines
        .iter()
        .map(|l| l["valid"].as_bool().unwrap())
        .collect();
    assert_eq!(valid, [false, false, true, false, false]);
    // Objects: documents at their first line, a List's items at their items (a valid one at
    // its List's line: documents without findings are not read again).
    assert_eq!(at(&lines[0]), pos(objects, "apiVersion", 0));
    assert_eq!(at(&lines[1]), pos(objects, "apiVersion", 1));
    assert_eq!(at(&lines[2]), pos(objects, "apiVersion", 2));
    assert_eq!(at(&lines[3]), pos_plus(objects, "- metadata", 1, 2));
    assert_eq!(at(&lines[4]), (1, 1));
    // Each finding at its field; a missing field at the object that should hold it; the
    // whole object's at the object.
    let expected: [&[(&str, (u64, u64))]; 5] = [
        &[("spec.replicas", pos(objects, "replicas: 7", 0))],
        &[
            ("spec.size", pos(objects, "size: large", 0)),
            ("spec.tier", pos(objects, "spec: {size: large", 0)),
        ],
        &[],
        &[("spec.replicas", pos(objects, "replicas: 9", 0))],
        &[("spec.replicas", pos(json_objects, "\"replicas\"", 0))],
    ];
    for (line, expected) in lines.iter().zip(expected) {
        let mut found = 0;
        for e in line["errors"].as_array().unwrap() {
            let field = e["field"].as_str().unwrap();
            if field == "<nil>" {
                assert_eq!(at(e), at(line), "{e}");
                continue;
            }
            let (_, want) = expected
                .iter()
                .find(|(f, _)| *f == field)
                .unwrap_or_else(|| panic!("unexpected finding {e}"));
            assert_eq!(at(e), *want, "{e}");
            found += 1;
        }
        assert_eq!(found, expected.len(), "{line}");
    }
    // Text: `path:line:column: Kind name: ...`.
    let out = run(&["plan", new, "--objects", path, json_path], None);
    let stdout = text(&out.stdout);
    let (l, c) = at(&lines[3]);
    assert!(
        stdout.contains(&format!(
            "{path}:{l}:{c}: Widget listed-bad: invalid under the new CRD\n"
        )),
        "{stdout}"
    );
    let (l, c) = pos(objects, "replicas: 9", 0);
    assert!(
        stdout.contains(&format!(
            "{path}:{l}:{c}: Widget listed-bad:   spec.replicas: Invalid value: 9: spec.replicas in body should be less than or equal to 5\n"
        )),
        "{stdout}"
    );
    let (l, c) = pos(json_objects, "\"replicas\"", 0);
    assert!(
        stdout.contains(&format!(
            "{json_path}:{l}:{c}: Widget json:   spec.replicas:"
        )),
        "{stdout}"
    );
}
