//! Size limits in `crd-audit check`: the sizes agree with the upstream Go code (expectations
//! from scripts/size-oracle, which encodes with apimachinery's JSON and protobuf serializers),
//! and the warning/errors appear exactly above each limit.

use crate::common::{run, temp_file, text};
use crd_audit_engine::size_limits::{self, Sizes};
use serde_json::{Value, json};
use std::path::Path;

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn expected_lines(name: &str) -> Vec<Value> {
    let path = manifest_dir().join("tests/data/size_limits").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| serde_json::from_str(l).expect("an expectation line"))
        .collect()
}

fn first_document(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let docs = crd_audit_engine::load::parse_str(&path.display().to_string(), &text);
    docs.into_iter()
        .next()
        .expect("one document")
        .expect("a readable document")
        .value
}

fn sizes_json(s: &Sizes) -> Value {
    json!({
        "requestBody": s.request_body,
        "lastAppliedAnnotation": s.last_applied,
        "annotationsWithLastApplied": s.annotations_with_last_applied,
        "storedProtobuf": s.stored_protobuf,
    })
}

fn expected_sizes(e: &Value) -> Value {
    json!({
        "requestBody": e["requestBody"],
        "lastAppliedAnnotation": e["lastAppliedAnnotation"],
        "annotationsWithLastApplied": e["annotationsWithLastApplied"],
        "storedProtobuf": e["storedProtobuf"],
    })
}

/// Every CRD of the conformance corpus, the examples and the edge cases: the request body,
/// kubectl's last-applied annotation and the protobuf bytes stored in etcd, byte for byte.
#[test]
fn sizes_equal_the_upstream_encoders() {
    let corpus = crate::common::corpus_dir();
    let (mut compared, mut skipped) = (0, 0);
    let mut wrong = Vec::new();
    for e in expected_lines("expected.jsonl") {
        let file = e["file"].as_str().expect("file");
        let path = match file.strip_prefix("conformance:") {
            Some(case) => match &corpus {
                Some(dir) => dir.join("cases").join(case).join("crd.yaml"),
                None => {
                    skipped += 1;
                    continue;
                }
            },
            None => manifest_dir().join(file),
        };
        let doc = first_document(&path);
        let measured = size_limits::measure(&doc);
        // The lengths computed without building the value are those of the value.
        assert_eq!(
            measured.last_applied,
            size_limits::last_applied_configuration(&doc).0.len(),
            "{file}"
        );
        let got = sizes_json(&measured);
        if got != expected_sizes(&e) {
            wrong.push(format!(
                "{file}: expected {}, got {got}",
                expected_sizes(&e)
            ));
        }
        compared += 1;
    }
    assert!(
        wrong.is_empty(),
        "{} of {compared} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    // 4 local files, and the 159 conformance CRDs when the corpus is present.
    assert_eq!(compared + skipped, 163);
    assert!(compared >= 4);
}

/// kubectl's annotation value for a small CRD, spelled out by hand: keys sorted at every
/// level, `<`, `>` and `&` escaped, integral floats written as integers, the old last-applied
/// annotation removed, a trailing newline; the other annotations count twice (themselves and
/// inside the value).
#[test]
fn last_applied_value_follows_kubectl() {
    let yaml = "kind: CustomResourceDefinition\napiVersion: apiextensions.k8s.io/v1\nmetadata:\n  name: a.b\n  annotations:\n    z: \"1\"\n    kubectl.kubernetes.io/last-applied-configuration: old\nspec:\n  b: \"<x> & y\"\n  a: 1.0\n  c: [true, null]\n";
    let value = crd_audit_engine::load::parse_str("t.yaml", yaml)
        .remove(0)
        .expect("readable")
        .value;
    let expected = concat!(
        r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","#,
        r#""metadata":{"annotations":{"z":"1"},"name":"a.b"},"#,
        r#""spec":{"a":1,"b":"\u003cx\u003e \u0026 y","c":[true,null]}}"#,
        "\n"
    );
    let (annotation, others) = size_limits::last_applied_configuration(&value);
    assert_eq!(annotation, expected);
    assert_eq!(others, 2); // "z" + "1"
    let sizes = size_limits::measure(&value);
    assert_eq!(sizes.last_applied, expected.len());
    assert_eq!(
        sizes.annotations_with_last_applied,
        2 + "kubectl.kubernetes.io/last-applied-configuration".len() + expected.len()
    );

    // Without annotations, kubectl still writes an empty map.
    let bare = json!({"kind": "K", "metadata": {"name": "n"}});
    let (annotation, others) = size_limits::last_applied_configuration(&bare);
    assert_eq!(
        annotation,
        "{\"kind\":\"K\",\"metadata\":{\"annotations\":{},\"name\":\"n\"}}\n"
    );
    assert_eq!(others, 0);
}

/// The CRD of tests/data/size_limits/thresholds.jsonl (scripts/size-oracle/big-crd.py): its
/// schema's description is `n` bytes.
fn big_crd(n: usize) -> String {
    let v = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "bigs.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Big", "plural": "bigs"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "description": "a".repeat(n)}},
            }],
        },
    });
    serde_json::to_string(&v).expect("json")
}

/// Just at and just above each limit (sizes from the upstream encoders): nothing at the limit,
/// the finding one byte above it, with the size and the limit in the message; errors exit 1,
/// the client-side-apply warning alone exits 0.
#[test]
fn findings_appear_one_byte_above_each_limit() {
    let limits = [
        (
            "annotationsWithLastApplied",
            "lastAppliedAnnotation",
            262_144,
            "warning",
        ),
        ("storedProtobuf", "etcdRequest", 1_572_864, "error"),
        ("requestBody", "requestBody", 3_145_728, "error"),
    ];
    let lines = expected_lines("thresholds.jsonl");
    assert_eq!(lines.len(), 6);
    for e in &lines {
        let n = e["descriptionLength"].as_u64().expect("length") as usize;
        let crd = big_crd(n);
        let path = temp_file(&format!("big-{n}.json"), crd.as_bytes());
        let path = path.to_str().expect("utf-8 path");
        let out = run(&["check", "--output", "json", path], None);
        let stdout = text(&out.stdout);
        let line: Value = serde_json::from_str(stdout.trim()).expect("one JSON line");
        assert_eq!(line["sizes"], expected_sizes(e), "n={n}");
        let findings = line["sizeFindings"].as_array().expect("sizeFindings");
        let mut errors = false;
        for (size_key, name, limit, severity) in limits {
            let size = e[size_key].as_u64().expect("size") as usize;
            let found = findings.iter().find(|f| f["limit"] == name);
            if size > limit {
                let f = found.unwrap_or_else(|| panic!("n={n}: no {name} finding: {findings:?}"));
                assert_eq!(f["severity"], severity);
                assert_eq!(f["bytes"], size);
                assert_eq!(f["limitBytes"], limit);
                let message = f["message"].as_str().expect("message");
                assert!(message.contains(&size.to_string()), "{message}");
                assert!(message.contains(&limit.to_string()), "{message}");
                if name == "lastAppliedAnnotation" {
                    assert!(message.contains("kubectl apply --server-side"), "{message}");
                }
                errors |= severity == "error";
            } else {
                assert!(found.is_none(), "n={n}: unexpected {name}: {findings:?}");
            }
        }
        assert_eq!(out.status.code(), Some(if errors { 1 } else { 0 }), "n={n}");
    }
    // Each limit is crossed by one of the CRDs and not by its smaller neighbour.
    for (size_key, _, limit, _) in limits {
        assert!(lines.iter().any(|e| e[size_key] == limit));
        assert!(lines.iter().any(|e| e[size_key] == limit + 1));
    }
}

/// The text output: the warning names server-side apply; an error is a `TooLarge` line.
#[test]
fn text_output_reports_sizes() {
    let crd = big_crd(1_572_578);
    let path = temp_file("big-text.json", crd.as_bytes());
    let out = run(&["check", path.to_str().expect("utf-8 path")], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let too_large: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains(": TooLarge: "))
        .collect();
    assert_eq!(too_large.len(), 1, "{stdout}");
    assert!(too_large[0].contains("1572865 bytes"), "{stdout}");
    assert!(too_large[0].contains("etcd"), "{stdout}");
    let warning: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains(": Warning: ") && l.contains("--server-side"))
        .collect();
    assert_eq!(warning.len(), 1, "{stdout}");
    assert!(!stdout.contains("bigs.example.com: ok"), "{stdout}");
}
