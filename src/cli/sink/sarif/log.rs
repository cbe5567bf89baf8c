//! The SARIF log writer.
//!
//! A [`Report`] is one SARIF log with one run: the rules it may report are declared with
//! [`Report::rule`], each finding is written with [`Report::result`] as soon as it is known,
//! and [`Report::finish`] ends the document with the tool (its rules), the invocation and
//! what was left out. Results are written as they come, so memory does not grow with the
//! input: only the count of each fingerprint is kept (for at most [`MAX_RESULTS`] results).
//!
//! A finding in a file stands at its region (`physicalLocation`: the path as given, relative
//! ones against `%SRCROOT%`); one without a file (an object read from a cluster) is named
//! by a `logicalLocation` such as `widgets.example.com/default/my-widget/spec.replicas`.
//!
//! GitHub's limits are kept: at most 25,000 results a run (the rest is counted and said in
//! the run's `properties` and in a notification of the invocation), one location a result,
//! rule names and descriptions within their bounds.

use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::io::Write;

/// Most results one run holds (GitHub code scanning refuses more).
pub const MAX_RESULTS: usize = 25_000;

/// Where crd-audit is described (the driver's `informationUri`).
pub const INFORMATION_URI: &str = "https://github.com/crd-audit/crd-audit";

/// The schema the log names (the OASIS standard with errata 01).
const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// A result's level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Note,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
        }
    }
}

/// What a rule stands for: one kind of finding.
#[derive(Clone, Debug)]
pub struct Rule {
    /// Stable across runs and versions (GitHub tracks alerts by it).
    pub id: &'static str,
    pub name: &'static str,
    /// One sentence.
    pub short: &'static str,
    pub full: &'static str,
    /// What to do about it.
    pub help: &'static str,
    pub level: Level,
}

/// Where a finding stands.
#[derive(Clone, Debug)]
pub enum Location {
    /// In an input file (as given on the command line; `-` for standard input), at a line
    /// and column (1-based; line 0 when unknown).
    File {
        path: String,
        line: usize,
        column: usize,
    },
    /// Not in a file: a name such as `widgets.example.com/default/my-widget/spec.replicas`
    /// and its kind (`object`, `resource`, ...).
    Logical { name: String, kind: &'static str },
}

/// One finding.
pub struct Finding<'a> {
    /// The rule's id (declared with [`Report::rule`]).
    pub rule: &'a str,
    /// The level, when it is not the rule's.
    pub level: Option<Level>,
    pub message: &'a str,
    pub location: &'a Location,
    /// What the finding is about (an object `Kind namespace/name`, a CRD's name): with the
    /// rule, the file and `field`, what identifies the finding across runs.
    pub object: &'a str,
    /// The field it is about (empty for the whole object).
    pub field: &'a str,
    /// More facts for readers of the log (the result's `properties`).
    pub properties: Vec<(&'static str, Value)>,
}

/// A SARIF log being written.
pub struct Report {
    pub(super) command: String,
    pub(super) rules: Vec<Rule>,
    started: bool,
    written: usize,
    omitted: usize,
    /// How often each fingerprint was written (to tell identical findings apart).
    seen: HashMap<u64, usize>,
    notifications: Vec<(Level, String)>,
    pub(super) limit: usize,
}

impl Report {
    /// A log for `crd-audit <command>`, with no rules yet.
    pub fn new(command: &str) -> Report {
        Report {
            command: command.to_string(),
            rules: Vec::new(),
            started: false,
            written: 0,
            omitted: 0,
            seen: HashMap::new(),
            notifications: Vec::new(),
            limit: MAX_RESULTS,
        }
    }

    /// A log for `crd-audit <command>` with these rules.
    pub fn with_rules(command: &str, rules: &[Rule]) -> Report {
        let mut r = Report::new(command);
        for rule in rules {
            r.rule(rule.clone());
        }
        r
    }

    /// Declares a rule (once per id); returns its index.
    pub fn rule(&mut self, rule: Rule) -> usize {
        if let Some(i) = self.rules.iter().position(|r| r.id == rule.id) {
            return i;
        }
        self.rules.push(rule);
        self.rules.len() - 1
    }

    /// Adds a note for the invocation (a problem that is no result, such as a cluster that
    /// could not be read).
    pub fn notify(&mut self, level: Level, text: impl Into<String>) {
        self.notifications.push((level, text.into()));
    }

    /// Writes one result (or counts it as left out beyond the limit).
    pub fn result(&mut self, out: &mut impl Write, f: &Finding) -> std::io::Result<()> {
        if self.written >= self.limit {
            self.omitted += 1;
            return Ok(());
        }
        let index = self.rules.iter().position(|r| r.id == f.rule);
        let level = f
            .level
            .or_else(|| index.map(|i| self.rules[i].level))
            .unwrap_or(Level::Warning);
        let file = match f.location {
            Location::File { path, .. } => path.as_str(),
            Location::Logical { .. } => "",
        };
        let hash = fingerprint(&[f.rule, file, f.object, f.field]);
        let n = self.seen.entry(hash).or_insert(0);
        *n += 1;
        let location = match f.location {
            Location::File { path, line, column } => {
                let mut physical = Map::new();
                physical.insert("artifactLocation".into(), artifact_location(path));
                if *line > 0 {
                    physical.insert(
                        "region".into(),
                        json!({"startLine": line, "startColumn": (*column).max(1)}),
                    );
                }
                json!({"physicalLocation": physical})
            }
            Location::Logical { name, kind } => json!({
                "logicalLocations": [{"fullyQualifiedName": name, "kind": kind}]
            }),
        };
        let mut result = Map::new();
        result.insert("ruleId".into(), f.rule.into());
        if let Some(i) = index {
            result.insert("ruleIndex".into(), i.into());
        }
        result.insert("level".into(), level.as_str().into());
        result.insert("message".into(), json!({"text": non_empty(f.message)}));
        result.insert("locations".into(), json!([location]));
        // GitHub matches alerts across runs by `primaryLocationLineHash`: here the finding's
        // identity (rule, file, object, field), so that an alert survives lines moving,
        // numbered to keep identical findings apart.
        result.insert(
            "partialFingerprints".into(),
            json!({
                "primaryLocationLineHash": format!("{hash:016x}:{n}"),
                "crdAuditFinding/v1": format!("{hash:016x}"),
            }),
        );
        let mut properties: Map<String, Value> = f
            .properties
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        if !f.object.is_empty() {
            properties.insert("object".into(), f.object.into());
        }
        if !f.field.is_empty() {
            properties.insert("field".into(), f.field.into());
        }
        if !properties.is_empty() {
            result.insert("properties".into(), Value::Object(properties));
        }
        self.start(out)?;
        if self.written > 0 {
            out.write_all(b",\n")?;
        }
        self.written += 1;
        serde_json::to_writer(&mut *out, &Value::Object(result))?;
        Ok(())
    }

    fn start(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        if !self.started {
            self.started = true;
            writeln!(
                out,
                "{{\"$schema\":{},\"version\":\"2.1.0\",\"runs\":[{{\"results\":[",
                Value::from(SCHEMA_URI)
            )?;
        }
        Ok(())
    }

    /// Ends the log: the tool and its rules, the invocation (its exit status and notes), and
    /// what was left out.
    pub fn finish(&mut self, out: &mut impl Write, exit_status: u8) -> std::io::Result<()> {
        self.start(out)?;
        let rules: Vec<Value> = self
            .rules
            .iter()
            .map(|r| {
                json!({
                    "id": r.id,
                    "name": bounded(r.name, 255),
                    "shortDescription": {"text": bounded(r.short, 1024)},
                    "fullDescription": {"text": bounded(r.full, 1024)},
                    "help": {"text": non_empty(r.help)},
                    "defaultConfiguration": {"level": r.level.as_str()},
                })
            })
            .collect();
        let mut notifications: Vec<Value> = self
            .notifications
            .iter()
            .map(|(level, text)| json!({"level": level.as_str(), "message": {"text": non_empty(text)}}))
            .collect();
        let mut properties = Map::new();
        if self.omitted > 0 {
            notifications.push(json!({
                "level": "warning",
                "descriptor": {"id": "ResultsTruncated"},
                "message": {"text": format!(
                    "{} result(s) left out: a run holds at most {} results (GitHub code scanning refuses more); run crd-audit with --output json for all of them",
                    self.omitted, self.limit
                )},
            }));
            properties.insert("resultsTruncated".into(), true.into());
            properties.insert("resultsOmitted".into(), self.omitted.into());
            properties.insert("resultsLimit".into(), self.limit.into());
        }
        let mut invocation = Map::new();
        invocation.insert(
            "executionSuccessful".into(),
            (exit_status != crate::cli::EXIT_INPUT_ERROR).into(),
        );
        invocation.insert("exitCode".into(), exit_status.into());
        if !notifications.is_empty() {
            invocation.insert(
                "toolExecutionNotifications".into(),
                Value::Array(notifications),
            );
        }
        let driver = json!({
            "name": "crd-audit",
            "fullName": format!("crd-audit {}", crate::cli::VERSION),
            "version": env!("CARGO_PKG_VERSION"),
            "semanticVersion": env!("CARGO_PKG_VERSION"),
            "informationUri": INFORMATION_URI,
            "rules": rules,
        });
        let mut run = Map::new();
        run.insert("tool".into(), json!({"driver": driver}));
        run.insert("invocations".into(), json!([invocation]));
        run.insert(
            "automationDetails".into(),
            json!({"id": format!("crd-audit-{}/", self.command)}),
        );
        run.insert("columnKind".into(), "unicodeCodePoints".into());
        if !properties.is_empty() {
            run.insert("properties".into(), Value::Object(properties));
        }
        // The run's other members follow its results.
        let rest = Value::Object(run).to_string();
        let rest = rest.strip_prefix('{').unwrap_or(&rest);
        write!(out, "\n],{rest}]}}\n")
    }
}

/// SARIF forbids empty message texts.
fn non_empty(s: &str) -> &str {
    if s.is_empty() { "(no message)" } else { s }
}

/// `s` cut to at most `max` characters.
fn bounded(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// A stable 64-bit hash (FNV-1a) of the parts, each ended by a NUL: the same in every
/// build and on every machine.
fn fingerprint(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in p.as_bytes().iter().chain(&[0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// The `artifactLocation` of an input as given: a relative path stays relative (against
/// `%SRCROOT%`, the repository's root for GitHub), an absolute one becomes a `file:` URI,
/// `-` is standard input.
fn artifact_location(path: &str) -> Value {
    if path == "-" {
        return json!({"uri": "-", "description": {"text": "standard input"}});
    }
    let unix = path.replace('\\', "/");
    // `C:/...` (Windows); `c:d/x` is relative.
    let drive = unix.len() >= 3
        && unix.as_bytes()[0].is_ascii_alphabetic()
        && &unix.as_bytes()[1..3] == b":/";
    if unix.starts_with('/') || drive {
        let abs = if drive { format!("/{unix}") } else { unix };
        return json!({"uri": format!("file://{}", encode_path(&abs, drive))});
    }
    let mut rel = unix.as_str();
    while let Some(r) = rel.strip_prefix("./") {
        rel = r.trim_start_matches('/');
    }
    json!({"uri": encode_path(rel, false), "uriBaseId": "%SRCROOT%"})
}

/// Percent-encodes a path for a URI: unreserved characters and `/` stay, everything else
/// (spaces, `%`, `#`, `?`, `:`, non-ASCII) is encoded byte by byte (a drive's `:` is kept).
fn encode_path(path: &str, drive: bool) -> String {
    let mut out = String::with_capacity(path.len());
    for (i, b) in path.bytes().enumerate() {
        let keep = b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/')
            || (drive && i == 2 && b == b':');
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::rules::{diff_report, validate_report};
    use super::*;

    fn finish(mut r: Report, status: u8) -> Value {
        let mut out = Vec::new();
        r.finish(&mut out, status).unwrap();
        serde_json::from_slice(&out).unwrap()
    }

    fn finding<'a>(rule: &'a str, location: &'a Location, field: &'a str) -> Finding<'a> {
        Finding {
            rule,
            level: None,
            message: "m",
            location,
            object: "Widget default/a",
            field,
            properties: Vec::new(),
        }
    }

    #[test]
    fn an_empty_log_is_complete() {
        let v = finish(validate_report(), 0);
        assert_eq!(v["version"], "2.1.0");
        let run = &v["runs"][0];
        assert_eq!(run["results"], json!([]));
        assert_eq!(run["tool"]["driver"]["name"], "crd-audit");
        assert_eq!(run["invocations"][0]["executionSuccessful"], true);
        assert!(run.get("properties").is_none());
    }

    #[test]
    fn results_beyond_the_limit_are_counted_and_said() {
        let mut r = diff_report();
        r.limit = 3;
        let mut out = Vec::new();
        let at = Location::File {
            path: "a.yaml".into(),
            line: 1,
            column: 1,
        };
        for i in 0..5 {
            let field = format!("f{i}");
            r.result(&mut out, &finding("TighteningChange", &at, &field))
                .unwrap();
        }
        r.finish(&mut out, 1).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        let run = &v["runs"][0];
        assert_eq!(run["results"].as_array().unwrap().len(), 3);
        assert_eq!(run["properties"]["resultsOmitted"], 2);
        assert_eq!(run["properties"]["resultsTruncated"], true);
        let note = &run["invocations"][0]["toolExecutionNotifications"][0];
        assert!(
            note["message"]["text"]
                .as_str()
                .unwrap()
                .starts_with("2 result(s) left out: a run holds at most 3 results"),
            "{note}"
        );
    }

    #[test]
    fn fingerprints_are_stable_and_number_identical_findings() {
        // FNV-1a 64 of "a\0" (a known value of the algorithm).
        assert_eq!(fingerprint(&["a"]), {
            let mut h: u64 = 0xcbf29ce484222325;
            for b in [b'a', 0] {
                h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
            }
            h
        });
        assert_ne!(fingerprint(&["ab", "c"]), fingerprint(&["a", "bc"]));
        let mut r = validate_report();
        let mut out = Vec::new();
        let at = |line| Location::File {
            path: "a.yaml".into(),
            line,
            column: 1,
        };
        let (a, b) = (at(3), at(9));
        r.result(&mut out, &finding("FieldValueInvalid", &a, "spec.x"))
            .unwrap();
        // The same finding elsewhere in the file: same identity, the next number.
        r.result(&mut out, &finding("FieldValueInvalid", &b, "spec.x"))
            .unwrap();
        r.result(&mut out, &finding("FieldValueInvalid", &a, "spec.y"))
            .unwrap();
        r.finish(&mut out, 1).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        let prints: Vec<&str> = v["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r["partialFingerprints"]["primaryLocationLineHash"]
                    .as_str()
                    .unwrap()
            })
            .collect();
        let hash = |s: &str| s.split_once(':').unwrap().0.to_string();
        assert_eq!(hash(prints[0]), hash(prints[1]));
        assert!(prints[0].ends_with(":1") && prints[1].ends_with(":2"));
        assert_ne!(hash(prints[0]), hash(prints[2]));
    }

    #[test]
    fn paths_become_uris() {
        assert_eq!(
            artifact_location("examples/crds/widgets.yaml"),
            json!({"uri": "examples/crds/widgets.yaml", "uriBaseId": "%SRCROOT%"})
        );
        assert_eq!(
            artifact_location("./a dir/x#1.yaml"),
            json!({"uri": "a%20dir/x%231.yaml", "uriBaseId": "%SRCROOT%"})
        );
        assert_eq!(
            artifact_location("c:d/é.yaml"),
            json!({"uri": "c%3Ad/%C3%A9.yaml", "uriBaseId": "%SRCROOT%"})
        );
        assert_eq!(
            artifact_location("/srv/manifests/x y.yaml"),
            json!({"uri": "file:///srv/manifests/x%20y.yaml"})
        );
        assert_eq!(
            artifact_location(r"C:\crds\x.yaml"),
            json!({"uri": "file:///C:/crds/x.yaml"})
        );
        assert_eq!(artifact_location("-")["uri"], "-");
    }
}
