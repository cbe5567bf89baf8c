//! `--output sarif`: the log validates against the official SARIF 2.1.0 schema (draft-04,
//! formats checked), and holds the findings of `--output json` for the same run: same
//! messages, same lines and columns, one rule per kind of finding.

use crate::common::{run, temp_file, text};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::OnceLock;

fn repo(p: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(p)
        .to_string_lossy()
        .into_owned()
}

/// The official schema (tests/data/sarif), compiled once, formats asserted.
fn validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| {
        let path = repo("tests/data/sarif/sarif-schema-2.1.0.json");
        let schema: Value = serde_json::from_str(
            &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}")),
        )
        .unwrap();
        assert_eq!(schema["$schema"], "http://json-schema.org/draft-04/schema#");
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft4)
            .should_validate_formats(true)
            .build(&schema)
            .expect("the SARIF schema compiles")
    })
}

/// The schema's complaints about a log.
fn schema_errors(log: &Value) -> Vec<String> {
    validator()
        .iter_errors(log)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

/// Whether `uri` is a URI reference as the log writes them (RFC 3986: unreserved and
/// reserved characters, `%` with two hex digits; a relative one has no `:` in its first
/// segment).
fn uri_reference(uri: &str) -> bool {
    let b = uri.as_bytes();
    let chars_ok = b.iter().enumerate().all(|(i, &c)| {
        c.is_ascii_alphanumeric()
            || b"-._~:/?#[]@!$&'()*+,;=".contains(&c)
            || (c == b'%'
                && b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
    });
    let first = uri.split('/').next().unwrap_or("");
    let scheme = uri.starts_with("file:///");
    chars_ok && (scheme || !first.contains(':'))
}

/// Parses a log, checks it against the schema and what GitHub requires, and returns it.
fn parse(out: &std::process::Output) -> Value {
    let log: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)));
    let errors = schema_errors(&log);
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(log["version"], "2.1.0");
    let runs = log["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "crd-audit");
    assert!(
        driver["informationUri"]
            .as_str()
            .unwrap()
            .starts_with("https://")
    );
    let rules = driver["rules"].as_array().unwrap();
    for r in rules {
        for key in ["id", "name"] {
            assert!(!r[key].as_str().unwrap().is_empty(), "{r}");
        }
        for key in ["shortDescription", "fullDescription", "help"] {
            let t = r[key]["text"].as_str().unwrap();
            assert!(!t.is_empty() && t.chars().count() <= 1024, "{r}");
        }
        assert!(
            ["error", "warning", "note"]
                .contains(&r["defaultConfiguration"]["level"].as_str().unwrap())
        );
    }
    let mut prints = std::collections::HashSet::new();
    for r in run["results"].as_array().unwrap() {
        let i = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[i]["id"], r["ruleId"], "{r}");
        assert!(!r["message"]["text"].as_str().unwrap().is_empty());
        assert_eq!(r["locations"].as_array().unwrap().len(), 1);
        if let Some(uri) = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str()
        {
            assert!(uri_reference(uri), "{uri}");
        }
        let print = r["partialFingerprints"]["primaryLocationLineHash"]
            .as_str()
            .unwrap();
        assert!(prints.insert(print.to_string()), "{print} twice");
    }
    assert_eq!(
        run["invocations"][0]["exitCode"].as_i64(),
        out.status.code().map(i64::from)
    );
    log
}

fn json_lines(out: &std::process::Output) -> Vec<Value> {
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// A finding as compared: (rule, message, file, line, column).
type Found = (String, String, String, u64, u64);

/// The results of a log, as compared.
fn results(log: &Value) -> Vec<Found> {
    log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let p = &r["locations"][0]["physicalLocation"];
            (
                r["ruleId"].as_str().unwrap().to_string(),
                r["message"]["text"].as_str().unwrap().to_string(),
                p["artifactLocation"]["uri"].as_str().unwrap().to_string(),
                p["region"]["startLine"].as_u64().unwrap(),
                p["region"]["startColumn"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn at(v: &Value) -> (u64, u64) {
    (v["line"].as_u64().unwrap(), v["column"].as_u64().unwrap())
}

/// The artifact URI of the file of a `file#doc` source (or of a path): relative paths as
/// they are, absolute ones as `file:` URIs (the test's paths need no escaping).
fn file_of(source: &str) -> String {
    let path = source.rsplit_once('#').map_or(source, |(f, _)| f);
    if path.starts_with('/') {
        format!("file://{path}")
    } else {
        path.to_string()
    }
}

/// Objects: findings of every kind, in block and flow style, a `List`, an unknown kind and a
/// document that does not read.
const OBJECTS: &str = "apiVersion: example.crd-audit.dev/v1\nkind: Widget\nmetadata: {name: a, namespace: default}\nspec:\n  size: huge\n  replicas: 30\n  extra: x\n---\napiVersion: example.crd-audit.dev/v1\nkind: WidgetList\nitems:\n- metadata: {name: b, namespace: default}\n  spec: {size: small, ports: [{name: p, port: 1}, {name: p, port: 2}]}\n- metadata: {name: c, namespace: default}\n  spec: {size: medium, tier: gold}\n---\napiVersion: example.crd-audit.dev/v9\nkind: Widget\nmetadata: {name: d}\n---\napiVersion: other.example.com/v1\nkind: Nothing\nmetadata: {name: e}\n---\nkey: [unclosed\n";

/// The findings `-o json` and the text output report for `validate`, as the log should hold
/// them (the positions of unknown fields come from the text output, which prints them).
fn validate_expected(json: &[Value], text_out: &str) -> Vec<Found> {
    let mut expected = Vec::new();
    for line in json {
        let file = file_of(line["source"].as_str().unwrap());
        if let Some(e) = line["requestError"].as_str() {
            let rule = if line["code"] == 404 && e.starts_with("no matches for kind") {
                "UnknownKind"
            } else {
                "RequestRefused"
            };
            let (l, c) = at(line);
            expected.push((rule.into(), e.into(), file.clone(), l, c));
        }
        for e in line["errors"].as_array().into_iter().flatten() {
            let (l, c) = at(e);
            expected.push((
                e["type"].as_str().unwrap().into(),
                e["message"].as_str().unwrap().into(),
                file.clone(),
                l,
                c,
            ));
        }
        for p in line["pruned"].as_array().into_iter().flatten() {
            let message = format!("unknown field \"{}\"", p.as_str().unwrap());
            let suffix = format!(": warning: {message}");
            let head = text_out
                .lines()
                .find(|l| {
                    l.ends_with(&suffix)
                        && l.contains(&format!("/{}{suffix}", line["name"].as_str().unwrap()))
                })
                .unwrap_or_else(|| panic!("no text line for {p}"));
            let path = line["source"].as_str().unwrap().rsplit_once('#').unwrap().0;
            let pos: Vec<u64> = head[path.len() + 1..]
                .split(':')
                .take(2)
                .map(|n| n.parse().unwrap())
                .collect();
            expected.push(("UnknownField".into(), message, file.clone(), pos[0], pos[1]));
        }
    }
    expected
}

#[test]
fn validate_sarif_holds_the_json_findings() {
    let objects = temp_file("sarif/objects.yaml", OBJECTS.as_bytes());
    let objects = objects.to_str().unwrap();
    let crd = "examples/crds/widgets.yaml";
    let sarif = run(&["validate", "--crd", crd, objects, "-o", "sarif"], None);
    let json = run(&["validate", "--crd", crd, objects, "-o", "json"], None);
    let plain = run(&["validate", "--crd", crd, objects], None);
    assert_eq!(sarif.status.code(), Some(2));
    assert_eq!(sarif.status.code(), json.status.code());
    let log = parse(&sarif);
    let got = results(&log);
    let json = json_lines(&json);
    let mut expected = validate_expected(&json, &text(&plain.stdout));
    // The document that does not read: an input error at its line.
    let err = text(&plain.stderr);
    let line: u64 = err
        .split("(line ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .unwrap()
        .parse()
        .unwrap();
    let message = err.trim_end().split_once("): ").unwrap().1.to_string();
    expected.push(("InputError".into(), message, file_of(objects), line, 1));
    let sorted = |mut v: Vec<Found>| {
        v.sort();
        v
    };
    let (got, expected) = (sorted(got), sorted(expected));
    assert_eq!(got, expected);
    // Every kind of finding is there.
    for rule in [
        "FieldValueNotSupported",
        "FieldValueInvalid",
        "FieldValueDuplicate",
        "UnknownField",
        "UnknownKind",
        "RequestRefused",
        "InputError",
    ] {
        assert!(got.iter().any(|f| f.0 == rule), "no {rule} in {got:#?}");
    }
    // An absolute path is a file: URI; the level of unknown fields is the rule's (warning),
    // an error with --strict.
    let r = &log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
    assert!(r.get("uriBaseId").is_none());
    let level = |log: &Value| {
        log["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["ruleId"] == "UnknownField")
            .map(|r| r["level"].as_str().unwrap().to_string())
    };
    assert_eq!(level(&log).as_deref(), Some("warning"));
    let strict = run(
        &["validate", "--strict", "--crd", crd, objects, "-o", "sarif"],
        None,
    );
    assert_eq!(level(&parse(&strict)).as_deref(), Some("error"));
}

#[test]
fn relative_paths_stay_relative_and_standard_input_is_dash() {
    let out = run(
        &[
            "validate",
            "--crd",
            "examples/crds",
            "examples/objects",
            "-o",
            "sarif",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let log = parse(&out);
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for r in results {
        let a = &r["locations"][0]["physicalLocation"]["artifactLocation"];
        assert_eq!(a["uri"], "examples/objects/widgets.yaml");
        assert_eq!(a["uriBaseId"], "%SRCROOT%");
    }
    let out = run(
        &["validate", "--crd", "examples/crds", "-", "-o", "sarif"],
        Some(OBJECTS.as_bytes()),
    );
    let log = parse(&out);
    let a = &log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(a["uri"], "-");
    assert!(a.get("uriBaseId").is_none());
}

#[test]
fn check_sarif_holds_the_json_findings() {
    let big = "x".repeat(270_000);
    let crds = format!(
        "{}---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: odds.example.com\n  annotations: {{big: \"{big}\"}}\nspec:\n  group: example.com\n  scope: Namespaced\n  names: {{plural: odds, kind: Odd}}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          p: {{type: string, pattern: '[a-'}}\nstatus: {{storedVersions: [v0, v1]}}\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: warneds.example.com\nspec:\n  group: example.com\n  scope: Namespaced\n  names: {{plural: warneds, kind: Warned}}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        properties:\n          f: {{type: string, format: not-a-format}}\n---\nkey: [unclosed\n",
        std::fs::read_to_string("examples/crds/gadgets-legacy.yaml").unwrap()
    );
    let file = temp_file("sarif/crds.yaml", crds.as_bytes());
    let path = file.to_str().unwrap();
    let sarif = run(&["check", path, "-o", "sarif"], None);
    let json = run(&["check", path, "-o", "json"], None);
    assert_eq!(sarif.status.code(), Some(2));
    assert_eq!(sarif.status.code(), json.status.code());
    let got = results(&parse(&sarif));
    let mut expected: Vec<Found> = Vec::new();
    for line in json_lines(&json) {
        let file = file_of(line["source"].as_str().unwrap());
        let mut push = |rule: &str, message: &str, pos: &Value| {
            let (l, c) = at(pos);
            expected.push((rule.into(), message.into(), file.clone(), l, c));
        };
        for c in line["nonStructural"].as_array().unwrap() {
            push("NonStructuralSchema", c["message"].as_str().unwrap(), c);
        }
        for c in line["crdErrors"].as_array().unwrap() {
            push("CRDInvalid", c["message"].as_str().unwrap(), c);
        }
        for (v, p) in line["storedVersionsNotServed"]
            .as_array()
            .unwrap()
            .iter()
            .zip(line["storedVersionsNotServedPositions"].as_array().unwrap())
        {
            let message = format!(
                "version {v} is listed in status.storedVersions but is not served: crd-audit migrate {} rewrites its objects and prunes it",
                line["crd"].as_str().unwrap()
            );
            push("StoredVersionNotServed", &message, p);
        }
        for f in line["sizeFindings"].as_array().unwrap() {
            let rule = match f["limit"].as_str().unwrap() {
                "requestBody" => "RequestBodyTooLarge",
                "etcdRequest" => "EtcdRequestTooLarge",
                _ => "LastAppliedAnnotationTooLarge",
            };
            push(rule, f["message"].as_str().unwrap(), f);
        }
        for (w, p) in line["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .zip(line["warningPositions"].as_array().unwrap())
        {
            push("CRDWarning", w.as_str().unwrap(), p);
        }
    }
    let inputs: Vec<&Found> = got.iter().filter(|f| f.0 == "InputError").collect();
    assert_eq!(inputs.len(), 1, "{got:#?}");
    let got: Vec<Found> = got
        .iter()
        .filter(|f| f.0 != "InputError")
        .cloned()
        .collect();
    assert_eq!(got, expected);
    for rule in [
        "NonStructuralSchema",
        "CRDInvalid",
        "StoredVersionNotServed",
        "LastAppliedAnnotationTooLarge",
        "CRDWarning",
    ] {
        assert!(got.iter().any(|f| f.0 == rule), "no {rule} in {got:#?}");
    }
}

#[test]
fn plan_sarif_holds_the_json_findings() {
    let args = |format: &'static str| {
        vec![
            "plan",
            "examples/revisions/widgets-v2.yaml",
            "--current",
            "examples/crds/widgets.yaml",
            "--objects",
            "examples/objects",
            "-o",
            format,
        ]
    };
    let sarif = run(&args("sarif"), None);
    let json = run(&args("json"), None);
    assert_eq!(sarif.status.code(), Some(1));
    assert_eq!(sarif.status.code(), json.status.code());
    let got = results(&parse(&sarif));
    let mut expected: Vec<Found> = Vec::new();
    for line in json_lines(&json) {
        if line["valid"] == true {
            continue;
        }
        let rule = if line["validBefore"] == false {
            "AlreadyInvalid"
        } else {
            "NewlyInvalid"
        };
        let file = file_of(line["source"].as_str().unwrap());
        for e in line["errors"].as_array().unwrap() {
            let (l, c) = at(e);
            expected.push((
                rule.into(),
                e["message"].as_str().unwrap().into(),
                file.clone(),
                l,
                c,
            ));
        }
    }
    assert_eq!(got, expected);
    assert!(got.iter().any(|f| f.0 == "NewlyInvalid"));
    assert!(got.iter().any(|f| f.0 == "AlreadyInvalid"));
}

#[test]
fn diff_sarif_holds_the_json_changes() {
    let (old, new) = (
        "examples/crds/widgets.yaml",
        "examples/revisions/widgets-v2.yaml",
    );
    let sarif = run(&["diff", old, new, "-o", "sarif"], None);
    let json = run(&["diff", old, new, "-o", "json"], None);
    let plain = run(&["diff", old, new], None);
    assert_eq!(sarif.status.code(), Some(1));
    assert_eq!(sarif.status.code(), json.status.code());
    let log = parse(&sarif);
    let got = results(&log);
    let json = json_lines(&json);
    assert!(!json.is_empty());
    let new_text = std::fs::read_to_string(new).unwrap();
    let expected: Vec<Found> = json
        .iter()
        .zip(text(&plain.stdout).lines())
        .map(|(c, line)| {
            let rule = match c["class"].as_str().unwrap() {
                "tightening" => "TighteningChange",
                "loosening" => "LooseningChange",
                _ => "NeutralChange",
            };
            let (l, col) = at(c);
            // Within the new CRD's text.
            assert!(l as usize <= new_text.lines().count());
            (rule.into(), line.to_string(), new.to_string(), l, col)
        })
        .collect();
    assert_eq!(got, expected);
    // A lowered maximum stands at the new `maximum:`.
    let max = json
        .iter()
        .position(|c| c["kind"] == "maximumLowered")
        .unwrap();
    let line = new_text
        .lines()
        .position(|l| l.trim_start().starts_with("maximum: 5"))
        .unwrap() as u64
        + 1;
    assert_eq!(got[max].3, line);
}

#[test]
fn cluster_style_results_use_logical_locations() {
    // What `plan --cluster` writes for objects without a file is checked here through the
    // schema: a log with a logical location only is valid SARIF.
    let out = run(
        &[
            "validate",
            "--crd",
            "examples/crds",
            "examples/objects",
            "-o",
            "sarif",
        ],
        None,
    );
    let mut log = parse(&out);
    let r = &mut log["runs"][0]["results"][0];
    r["locations"] = serde_json::json!([{"logicalLocations": [{
        "fullyQualifiedName": "widgets.example.crd-audit.dev/default/too-many/spec.replicas",
        "kind": "object"
    }]}]);
    assert!(schema_errors(&log).is_empty());
}

#[test]
fn the_schema_check_rejects_broken_logs() {
    let out = run(
        &[
            "validate",
            "--crd",
            "examples/crds",
            "examples/objects",
            "-o",
            "sarif",
        ],
        None,
    );
    let log = parse(&out);
    assert!(schema_errors(&log).is_empty());
    let broken = |f: &dyn Fn(&mut Value)| {
        let mut l = log.clone();
        f(&mut l);
        schema_errors(&l)
    };
    // Not SARIF 2.1.0.
    assert!(!broken(&|l| l["version"] = "2.0.0".into()).is_empty());
    // A region must start somewhere (errata 01: startLine, charOffset or byteOffset).
    assert!(
        !broken(&|l| {
            let region =
                &mut l["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"];
            region.as_object_mut().unwrap().remove("startLine");
        })
        .is_empty()
    );
    // Levels are an enum.
    assert!(!broken(&|l| l["runs"][0]["results"][0]["level"] = "fatal".into()).is_empty());
    // Formats are asserted: the tool's information URI must be a URI (draft-04 knows the
    // `uri` format; the schema's `uri-reference` for artifacts is a later draft's, checked by
    // `uri_reference` here instead).
    assert!(
        !broken(&|l| l["runs"][0]["tool"]["driver"]["informationUri"] = "not a uri".into())
            .is_empty()
    );
    assert!(!broken(&|l| l["$schema"] = "relative/schema.json".into()).is_empty());
    assert!(!uri_reference("a b"));
    assert!(!uri_reference("x%zz.yaml"));
    assert!(!uri_reference("c:d/x.yaml"));
    assert!(uri_reference("a%20b/c.yaml"));
    // A rule without an id.
    assert!(
        !broken(&|l| {
            l["runs"][0]["tool"]["driver"]["rules"][0]
                .as_object_mut()
                .unwrap()
                .remove("id");
        })
        .is_empty()
    );
}

#[test]
fn results_beyond_githubs_limit_are_left_out_and_said() {
    let crd = serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {"group": "example.com", "scope": "Cluster",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 1}}}}}}}]}
    });
    let crd = temp_file("sarif/limit-crd.json", crd.to_string().as_bytes());
    // One finding per object: three more than a run may hold.
    let objects: String = (0..25_003)
        .map(|i| {
            format!(
                "{{\"apiVersion\":\"example.com/v1\",\"kind\":\"Thing\",\"metadata\":{{\"name\":\"t{i}\"}},\"spec\":{{\"n\":5}}}}\n"
            )
        })
        .collect();
    let objects = temp_file("sarif/limit-objects.json", objects.as_bytes());
    let out = run(
        &[
            "validate",
            "--crd",
            crd.to_str().unwrap(),
            objects.to_str().unwrap(),
            "-o",
            "sarif",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let log = parse(&out);
    let run = &log["runs"][0];
    assert_eq!(run["results"].as_array().unwrap().len(), 25_000);
    assert_eq!(run["properties"]["resultsTruncated"], true);
    assert_eq!(run["properties"]["resultsOmitted"], 3);
    let note = &run["invocations"][0]["toolExecutionNotifications"][0];
    assert_eq!(note["descriptor"]["id"], "ResultsTruncated");
    assert!(
        note["message"]["text"]
            .as_str()
            .unwrap()
            .starts_with("3 result(s) left out"),
        "{note}"
    );
    // The first results are kept, in input order.
    assert_eq!(
        run["results"][24_999]["properties"]["object"],
        "Thing t24999"
    );
}
