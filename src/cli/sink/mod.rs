//! The outputs of the one-shot commands, as ripgrep's printers: one [`Sink`] per `--output`
//! format, and the commands hand each what they find. A command builds its sink with
//! [`new`], hands it every finding as it comes (a checked CRD, an object's verdict, a
//! planned object, a schema change, an audited CRD or object) and the problems that are no
//! findings (an unreadable document, a bug met on an input), then the run's totals, and
//! ends it with [`Sink::finish`]. Output formats are told apart here and nowhere else
//! (`tests/module_layers.rs` checks it).
//!
//! Sinks write what they are handed: redaction of values (`audit --redact-values`) is done
//! before, on the finding itself. Text and JSON write every finding at once; JUnit keeps a
//! suite's test cases until the suite ends, SARIF only counts (see their modules), so memory
//! does not grow with the input.

mod found;
mod json;
mod junit;
mod markdown;
mod sarif;
mod text;

pub use found::{
    AuditTotals, AuditedCrd, CheckedCrd, ObjectVerdict, PlanSummary, PlannedObject, Row,
    SchemaChange, Totals, ValidateTotals,
};

use crate::audit::shown_verdict::ShownVerdict;
use clap::ValueEnum;
use crd_audit_engine::Change;
use crd_audit_engine::load::LoadError;
use std::io::Write;

/// `--output`: `text` for people (one finding a line), `json` for machines (one object a line),
/// `junit` for CI test reports (JUnit XML), `sarif` for code scanning (SARIF 2.1.0, as GitHub
/// reads it), `markdown` for a pull request (a comment, or `$GITHUB_STEP_SUMMARY`: a bounded
/// table, the worst first).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
    Junit,
    Sarif,
    Markdown,
}

/// The command a sink writes for: JUnit names its package after it, SARIF declares its
/// rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Check,
    /// `strict`: unknown fields are findings (failures in JUnit, errors in SARIF).
    Validate {
        strict: bool,
    },
    Diff,
    Plan,
    Audit,
}

impl Command {
    fn name(self) -> &'static str {
        match self {
            Command::Check => "check",
            Command::Validate { .. } => "validate",
            Command::Diff => "diff",
            Command::Plan => "plan",
            Command::Audit => "audit",
        }
    }
}

/// The sink of `format` for `command`, writing to `out`.
pub fn new<'a>(format: Format, command: Command, out: impl Write + 'a) -> Box<dyn Sink + 'a> {
    match format {
        Format::Text => Box::new(text::Text::new(out)),
        Format::Json => Box::new(json::Json::new(out)),
        Format::Junit => Box::new(junit::Junit::new(out, command)),
        Format::Sarif => Box::new(sarif::Sarif::new(out, command)),
        Format::Markdown => Box::new(markdown::Markdown::new(out, command)),
    }
}

/// Where the findings of a command go, in one output format. Each method writes at once
/// what the format writes for it (or keeps it for the document's end); an `Err` is a failed
/// write to the output.
pub trait Sink {
    /// `check`: a CRD and what checking it found.
    fn checked_crd(&mut self, crd: &CheckedCrd) -> std::io::Result<()>;

    /// `validate`: an object's verdict (every object judged, valid or not).
    fn object_verdict(&mut self, object: &ObjectVerdict) -> std::io::Result<()>;

    /// `plan`: an object of the CRD judged under the new revision (every one, valid or not).
    fn planned_object(&mut self, object: &PlannedObject) -> std::io::Result<()>;

    /// `diff`: a change between the two revisions.
    fn schema_change(&mut self, change: &SchemaChange) -> std::io::Result<()>;

    /// `audit`: a CRD of the cluster and what checking it found, before its objects.
    fn audited_crd(&mut self, crd: &AuditedCrd) -> std::io::Result<()>;

    /// `audit`: an object of `crd` with findings (invalid, or with fields its schema does
    /// not know), its values already redacted when asked.
    fn audited_object(&mut self, crd: &str, verdict: &ShownVerdict) -> std::io::Result<()>;

    /// `audit`: the end of a CRD's objects, with its row of counts.
    fn audited_row(&mut self, row: &Row) -> std::io::Result<()>;

    /// A document (or a whole file) of `file` that could not be read, as the command said
    /// on stderr; `doc` is its index among the file's documents when known. JUnit and SARIF
    /// record it.
    fn unreadable(
        &mut self,
        _file: &str,
        _doc: Option<usize>,
        _e: &LoadError,
    ) -> std::io::Result<()> {
        Ok(())
    }

    /// `check`: a document of `file` read, but holding no CRD that can be checked (a `List`
    /// that cannot be unpacked, a CRD or one of its values that cannot be decoded), as the
    /// command said on stderr. JUnit and SARIF record it.
    fn unreadable_crd(&mut self, _file: &str, _e: &LoadError) -> std::io::Result<()> {
        Ok(())
    }

    /// A problem that is no finding (a bug met on an input, a cluster that could not be
    /// read), as the command said on stderr. SARIF records it with the invocation.
    fn problem(&mut self, _message: String) {}

    /// The counts of the whole run.
    fn totals(&mut self, totals: &Totals) -> std::io::Result<()>;

    /// The end of the output, with the command's exit status: JUnit and SARIF write the end
    /// of their document.
    fn finish(&mut self, _exit_status: u8) -> std::io::Result<()> {
        Ok(())
    }

    /// Writes out what the output buffers.
    fn flush(&mut self) -> std::io::Result<()>;
}

/// The status of a command whose output could not be written completely, given the status
/// of what it did: a closed pipe (the reader wanted no more, as `head` does) ends it
/// quietly with that status, as ripgrep does; any other failure (a full disk) is reported
/// and is an error.
pub fn write_failed(e: &std::io::Error, status: u8) -> u8 {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        status
    } else {
        eprintln!("error: writing the output: {e}");
        super::EXIT_INPUT_ERROR
    }
}

/// `Kind namespace/name`, as kubectl names an object.
fn object_name(v: &ShownVerdict) -> String {
    let name = if v.name.is_empty() {
        "<no name>"
    } else {
        &v.name
    };
    if v.namespace.is_empty() {
        format!("{} {name}", v.kind)
    } else {
        format!("{} {}/{name}", v.kind, v.namespace)
    }
}

/// A change as the text output prints it: `version path: class (kind): reason`.
fn change_line(c: &Change) -> String {
    format!("{}: {}", change_head(c), c.reason)
}

/// What a change is, without why: `version path: class (kind)` (`*` for every version,
/// `<version>` for the version itself).
fn change_head(c: &Change) -> String {
    let version = if c.version.is_empty() {
        "*"
    } else {
        &c.version
    };
    let path = if c.path.is_empty() {
        "<version>"
    } else {
        &c.path
    };
    format!("{version} {path}: {} ({})", c.class.as_str(), c.kind)
}

/// `plan`'s summary of the objects read at each version, a line each.
fn plan_summary(summaries: &std::collections::BTreeMap<String, PlanSummary>) -> Vec<String> {
    summaries
        .iter()
        .map(|(version, s)| {
            format!(
                "{version}: {} object(s) read, {} newly invalid, {} already invalid; {} stuck (the API server would refuse every update of them)",
                s.read, s.newly_invalid, s.already_invalid, s.stuck
            )
        })
        .collect()
}

/// The counts for people that the document formats (JUnit, SARIF) say on stderr, beside the
/// document on stdout: `plan`'s summary and `audit`'s table; the other commands' are in the
/// document.
fn totals_on_stderr(totals: &Totals) {
    match totals {
        Totals::Plan(summaries) => {
            for line in plan_summary(summaries) {
                eprintln!("{line}");
            }
        }
        Totals::Audit {
            rows,
            totals,
            elapsed,
        } => {
            eprint!("{}", text::table(rows));
            eprintln!("{}", text::audit_line(totals, *elapsed));
        }
        Totals::Check { .. } | Totals::Validate(_) | Totals::Diff { .. } => {}
    }
}

/// A create of the Widget `default/w` refused (422) with one cause, for unit tests of the
/// sinks.
#[cfg(test)]
pub(crate) fn refused_widget(cause: crd_audit_engine::Cause) -> ShownVerdict {
    ShownVerdict {
        api_version: "example.com/v1".into(),
        kind: "Widget".into(),
        namespace: "default".into(),
        name: "w".into(),
        code: 422,
        errors: vec![cause],
        ..ShownVerdict::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::judge::redact_verdict;
    use crd_audit_engine::{BadValue, Cause, ErrorType, Path};

    /// A stored Widget whose owner is a bad value, refused as stored data and stuck: the
    /// value is in its errors and in those of its no-op update.
    fn stuck_widget() -> ShownVerdict {
        let owner = || {
            Cause::new(
                ErrorType::Invalid,
                Path::new("spec").child("owner"),
                BadValue::Str("alice@example.com".into()),
                "must not be alice@example.com",
            )
        };
        let mut v = refused_widget(owner());
        let mut update = refused_widget(owner());
        update.is_update = true;
        v.update = Some(Box::new(update));
        v
    }

    /// What an audit writes for one object, in `format`.
    fn audited(format: Format, v: &ShownVerdict) -> String {
        let mut out = Vec::new();
        let mut sink = new(format, Command::Audit, &mut out);
        sink.audited_object("widgets.example.com", v).unwrap();
        sink.finish(1).unwrap();
        drop(sink);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn redacted_values_are_hidden_in_every_format() {
        let formats = [Format::Text, Format::Json, Format::Junit, Format::Sarif];
        // Shown, the value is in every output (and in JSON, in the update's errors too).
        let shown = stuck_widget();
        for format in formats {
            let out = audited(format, &shown);
            assert!(out.contains("alice@example.com"), "{format:?}: {out}");
        }
        let json: serde_json::Value = serde_json::from_str(&audited(Format::Json, &shown)).unwrap();
        assert!(json["update"]["errors"].to_string().contains("alice"));
        // Redacted once, before any sink: in none of them, wherever the verdict holds it.
        let mut hidden = stuck_widget();
        redact_verdict(&mut hidden);
        for format in formats {
            let out = audited(format, &hidden);
            assert!(!out.contains("alice"), "{format:?}: {out}");
            assert!(out.contains("string, 17 chars"), "{format:?}: {out}");
        }
        let json: serde_json::Value =
            serde_json::from_str(&audited(Format::Json, &hidden)).unwrap();
        assert_eq!(
            json["update"]["errors"][0]["message"],
            "spec.owner: Invalid value: <string, 17 chars>: must not be <string, 17 chars>"
        );
    }

    #[test]
    fn redacted_json_hides_the_value_everywhere() {
        let mut v = refused_widget(Cause::new(
            ErrorType::Invalid,
            Path::new("spec").child("owner"),
            BadValue::Str("alice@example.com".into()),
            "must not be alice@example.com",
        ));
        redact_verdict(&mut v);
        let line: serde_json::Value = serde_json::from_str(&audited(Format::Json, &v)).unwrap();
        assert!(!line.to_string().contains("alice"), "{line}");
        assert_eq!(
            line["errors"][0]["message"],
            "spec.owner: Invalid value: <string, 17 chars>: must not be <string, 17 chars>"
        );
    }
}
