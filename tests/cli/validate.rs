//! `crd-audit validate` as a user runs it: output shapes, exit codes, stdin, directories,
//! unknown kinds, bad input, `--stored`, `--strict`, agreement with the corpus through the
//! command line, and memory that does not grow with the input.

use crate::common::{run, temp_file, text};
use serde_json::Value;

const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: things, kind: Thing}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: string, enum: [small, large]}
              count: {type: integer, maximum: 5}
          status:
            type: object
            properties:
              phase: {type: string, enum: [Ready]}
"#;

fn thing(name: &str, spec: &str) -> String {
    format!("apiVersion: example.com/v1\nkind: Thing\nmetadata: {{name: {name}}}\nspec: {spec}\n")
}

fn json_lines(out: &std::process::Output) -> Vec<Value> {
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn crd_file() -> String {
    temp_file("validate/crd.yaml", CRD.as_bytes())
        .display()
        .to_string()
}

#[test]
fn examples_report_each_cause_and_exit_one() {
    let out = run(
        &[
            "validate",
            "--crd",
            "examples/crds",
            "examples/objects",
            "-o",
            "json",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["valid"], true);
    assert_eq!(lines[2]["valid"], true);
    assert_eq!(lines[0]["source"], "examples/objects/widgets.yaml#0");
    assert_eq!(lines[1]["valid"], false);
    assert_eq!(lines[1]["pruned"], serde_json::json!(["spec.extra"]));
    let messages: Vec<&str> = lines[1]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert!(messages.contains(&"spec.ports[1]: Duplicate value: {\"name\":\"http\"}"));
    assert!(messages.contains(
        &"spec.size: Unsupported value: \"huge\": supported values: \"small\", \"medium\", \"large\""
    ));
}

#[test]
fn stdin_json_streams_and_text_output() {
    let crd = crd_file();
    let input = r#"{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"a"},"spec":{"size":"small"}}
{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"b"},"spec":{"count":9}}"#;
    let out = run(&["validate", "--crd", &crd, "-"], Some(input.as_bytes()));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("-:1:1: Thing default/a: valid\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "\n-:2:79: Thing default/b: spec.count: Invalid value: 9: spec.count in body should be less than or equal to 5"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("validated 2 object(s): 1 invalid"),
        "{stdout}"
    );
}

#[test]
fn unknown_kinds_are_reported_not_ignored() {
    let crd = crd_file();
    let input = "apiVersion: other.io/v1\nkind: Gizmo\nmetadata: {name: g}\n---\n- 1\n";
    let out = run(
        &["validate", "--crd", &crd, "-o", "json", "-"],
        Some(input.as_bytes()),
    );
    assert_eq!(out.status.code(), Some(1));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["valid"], false);
    assert!(
        lines[0]["requestError"]
            .as_str()
            .unwrap()
            .contains("no matches for kind \"Gizmo\" in version \"other.io/v1\""),
        "{}",
        lines[0]
    );
    assert!(
        lines[1]["requestError"]
            .as_str()
            .unwrap()
            .contains("not an object")
    );
}

#[test]
fn malformed_documents_name_file_document_and_line_and_the_rest_is_validated() {
    let crd = crd_file();
    let objects = format!(
        "{}---\nspec: [unclosed\n---\n{}",
        thing("a", "{size: small}"),
        thing("c", "{size: large}")
    );
    let path = temp_file("validate/broken.yaml", objects.as_bytes());
    let path = path.display().to_string();
    let out = run(&["validate", "--crd", &crd, "-o", "json", &path], None);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains(&format!("{path}#1 (line ")), "{stderr}");
    let lines = json_lines(&out);
    let sources: Vec<&str> = lines
        .iter()
        .map(|l| l["source"].as_str().unwrap())
        .collect();
    assert_eq!(
        sources,
        vec![format!("{path}#0"), format!("{path}#2")],
        "documents after the broken one keep their index"
    );
}

#[test]
fn status_is_judged_only_with_stored() {
    let crd = crd_file();
    let obj = format!("{}status: {{phase: Broken}}\n", thing("s", "{size: small}"));
    let create = run(
        &["validate", "--crd", &crd, "-o", "json", "-"],
        Some(obj.as_bytes()),
    );
    assert_eq!(create.status.code(), Some(0), "{}", text(&create.stdout));
    assert_eq!(json_lines(&create)[0]["statusDropped"], true);
    let stored = run(
        &["validate", "--stored", "--crd", &crd, "-o", "json", "-"],
        Some(obj.as_bytes()),
    );
    assert_eq!(stored.status.code(), Some(1));
    let line = &json_lines(&stored)[0];
    assert_eq!(line["errors"][0]["field"], "status.phase");
    assert_eq!(line["errors"][0]["type"], "FieldValueNotSupported");
}

#[test]
fn unknown_fields_fail_only_with_strict() {
    let crd = crd_file();
    let obj = thing("u", "{size: small, colour: red}");
    let lax = run(&["validate", "--crd", &crd, "-"], Some(obj.as_bytes()));
    assert_eq!(lax.status.code(), Some(0));
    assert!(text(&lax.stdout).contains("warning: unknown field \"spec.colour\""));
    let strict = run(
        &["validate", "--strict", "--crd", &crd, "-"],
        Some(obj.as_bytes()),
    );
    assert_eq!(strict.status.code(), Some(1));
}

#[test]
fn directories_and_lists_keep_their_sources() {
    let crd = crd_file();
    let list = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: example.com/v1, kind: Thing, metadata: {name: l1}}\n- {apiVersion: example.com/v1, kind: Thing, metadata: {name: l2}, spec: {size: tiny}}\n";
    let a = temp_file("validate/dir/a.yaml", list.as_bytes());
    temp_file(
        "validate/dir/b.json",
        br#"{"apiVersion":"example.com/v1","kind":"Thing","metadata":{"name":"j"}}"#,
    );
    temp_file("validate/dir/notes.txt", b"not read");
    let dir = a.parent().unwrap().display().to_string();
    let out = run(&["validate", "--crd", &crd, "-o", "json", &dir], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let got: Vec<(String, String, bool)> = json_lines(&out)
        .iter()
        .map(|l| {
            (
                l["source"]
                    .as_str()
                    .unwrap()
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .to_string(),
                l["name"].as_str().unwrap().to_string(),
                l["valid"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("a.yaml#0".into(), "l1".into(), true),
            ("a.yaml#0".into(), "l2".into(), false),
            ("b.json#0".into(), "j".into(), true),
        ]
    );
}

#[test]
fn input_errors_exit_two() {
    let crd = crd_file();
    let out = run(&["validate", "--crd", &crd, "/no/such/objects.yaml"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("/no/such/objects.yaml"));
    let out = run(&["validate", "--crd", "examples/objects", "-"], Some(b""));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no CustomResourceDefinition"));
    let out = run(&["validate", "--crd", &crd, "--crd", &crd, "-"], Some(b""));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("a second CRD for kind Thing"));
}

/// Every corpus case through the command line: one line per document, in order, with the
/// verdict and pruned fields of `expected.jsonl` (objects whose errors involve CEL aside).
#[test]
fn corpus_through_the_command_line() {
    let Some(dir) = crate::common::corpus_dir() else {
        return;
    };
    let (mut lines_total, mut same, mut aside) = (0, 0, 0);
    for case in crate::common::cases(&dir) {
        let crd = case.join("crd.yaml").display().to_string();
        let objects = case.join("objects.yaml").display().to_string();
        let expected: Vec<Value> = std::fs::read_to_string(case.join("expected.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if expected.is_empty() {
            continue;
        }
        let out = run(&["validate", "--crd", &crd, "-o", "json", &objects], None);
        assert_ne!(out.status.code(), Some(2), "{}", text(&out.stderr));
        let got = json_lines(&out);
        assert_eq!(got.len(), expected.len(), "{}", case.display());
        for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
            lines_total += 1;
            assert_eq!(g["source"], format!("{objects}#{i}"));
            let mut want_pruned: Vec<&str> = e["pruned"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            want_pruned.sort();
            // The CLI matches objects to CRDs by group and kind: an object of another kind or
            // group is an unknown kind here, where the corpus posted it to this CRD anyway.
            let unmatched = g["requestError"]
                .as_str()
                .is_some_and(|r| r.starts_with("no matches for kind"))
                && (e["code"] == 400 || e["code"] == 404);
            if unmatched {
                aside += 1;
                continue;
            }
            if g["code"] == e["code"] && g["pruned"] == serde_json::json!(want_pruned) {
                same += 1;
            } else {
                panic!("{}#{i}: got {g}\nexpected {e}", case.display());
            }
        }
    }
    eprintln!(
        "corpus through the CLI: {same}/{} lines agree ({aside} set aside: objects of another kind)",
        lines_total - aside
    );
    assert_eq!(same + aside, lines_total);
    // The figure docs/reference/agreement.md quotes.
    assert_eq!(
        (same, lines_total - aside),
        (2149, 2149),
        "lines through the CLI"
    );
}

/// Peak memory of the process over a large stream stays what it is over a small one.
#[test]
fn memory_does_not_grow_with_the_input() {
    let crd = crd_file();
    let peak = |objects: usize| -> i64 {
        use std::io::Write;
        use std::process::{Command, Stdio};
        #[allow(clippy::zombie_processes)] // reaped by wait4 below
        let mut child = Command::new(env!("CARGO_BIN_EXE_crd-audit"))
            .args(["validate", "--crd", &crd, "-o", "json", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            let doc = format!(
                "{}---\n",
                thing(
                    "n",
                    "{size: small, count: 3, notes: [a, b, c, d, e, f, g, h, i, j, k, l]}"
                )
            );
            let chunk = doc.repeat(1000);
            for _ in 0..objects / 1000 {
                stdin.write_all(chunk.as_bytes()).unwrap();
            }
        });
        let pid = child.id() as libc::pid_t;
        let mut status = 0;
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: waits for our own child; `usage` is a valid rusage to fill.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        assert_eq!(r, pid);
        writer.join().unwrap();
        usage.ru_maxrss // KiB
    };
    let small = peak(2_000);
    let large = peak(100_000);
    eprintln!("peak RSS: 2,000 objects {small} KiB, 100,000 objects {large} KiB");
    assert!(
        large < small + 16 * 1024,
        "peak RSS grew from {small} KiB to {large} KiB"
    );
}

/// Findings carry the line and column of their field (the deepest node of it that exists),
/// in text (`path:line:column:`) and JSON output, for YAML in block and flow style, JSON, the
/// documents of a stream and the items of a `List`.
#[test]
fn findings_name_the_line_and_column_of_their_field() {
    let crd = "examples/crds/widgets.yaml";
    let yaml = "# a comment\n\
                apiVersion: example.crd-audit.dev/v1\n\
                kind: Widget\n\
                metadata: {name: a, namespace: default}\n\
                spec:\n  size: huge\n  replicas: 3\n\
                ---\n\
                apiVersion: v1\n\
                kind: List\n\
                items:\n\
                - apiVersion: example.crd-audit.dev/v1\n  kind: Widget\n  metadata: {name: b, namespace: default}\n  spec: {size: small, replicas: 30}\n\
                - apiVersion: example.crd-audit.dev/v1\n  kind: Widget\n  metadata: {name: c, namespace: default}\n  spec:\n    size: small\n    ports: [{name: x, port: 1}, {name: x, port: 2}]\n";
    let file = temp_file("positions/objects.yaml", yaml.as_bytes());
    let path = file.to_str().unwrap();
    let out = run(&["validate", "--crd", crd, "-o", "json", path], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let lines = json_lines(&out);
    let at = |l: &Value| (l["line"].as_u64().unwrap(), l["column"].as_u64().unwrap());
    let first_error = |l: &Value| at(&l["errors"][0]);
    assert_eq!(lines.len(), 3);
    // Block style: `size:` on line 6, column 3; the object at its first line.
    assert_eq!((at(&lines[0]), first_error(&lines[0])), ((2, 1), (6, 3)));
    // A List's items: each at its item, its findings in flow style.
    assert_eq!(lines[1]["errors"][0]["field"], "spec.replicas");
    assert_eq!((at(&lines[1]), first_error(&lines[1])), ((12, 3), (15, 23)));
    assert_eq!(lines[2]["errors"][0]["field"], "spec.ports[1]");
    assert_eq!(first_error(&lines[2]), (21, 33));
    // Text output starts with `path:line:column:`.
    let out = run(&["validate", "--crd", crd, path], None);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "{path}:6:3: Widget default/a: spec.size: Unsupported value: \"huge\""
        )),
        "{stdout}"
    );
    // JSON input: positions too.
    let json = "{\"apiVersion\": \"example.crd-audit.dev/v1\", \"kind\": \"Widget\",\n\
                \"metadata\": {\"name\": \"d\", \"namespace\": \"default\"},\n\
                \"spec\": {\"size\": \"small\", \"replicas\": 99}}\n";
    let file = temp_file("positions/object.json", json.as_bytes());
    let out = run(
        &[
            "validate",
            "--crd",
            crd,
            "-o",
            "json",
            file.to_str().unwrap(),
        ],
        None,
    );
    let lines = json_lines(&out);
    assert_eq!(lines[0]["errors"][0]["field"], "spec.replicas");
    assert_eq!(first_error(&lines[0]), (3, 27));
}
