//! `--output junit`: JUnit XML as CI test reporters (Ant, Jenkins, GitLab) read it.
//!
//! The document is `<testsuites>` holding one `<testsuite>` per input (a file, or a CRD for
//! `diff`) and one `<testcase>` per object, CRD or change. It follows the strict Ant schema
//! (windyroad/JUnit-Schema): `<testsuites>` carries no attributes (readers add the suites'
//! counts up themselves), every suite carries `timestamp`, `hostname`, `package` (here
//! `crd-audit <command>`) and `id`, and the empty `properties`, `system-out` and `system-err`.
//!
//! Memory: a suite's test cases are kept (as text) until the suite ends, and each suite is
//! written as soon as the next one starts; nothing else is kept, so what is held is bounded
//! by the output of one input file, whatever the number of files.

use super::found::{
    AuditedCrd, CheckedCrd, ObjectVerdict, PlannedObject, Row, SchemaChange, Totals,
};
use super::{Command, Sink, change_head, object_name, totals_on_stderr};
use crate::audit::shown_verdict::ShownVerdict;
use crate::cli::crd_findings::{self, Level};
use crd_audit_engine::load::LoadError;
use std::fmt::Write as _;
use std::io::Write;
use std::time::{Instant, SystemTime};

/// What a test case found.
enum Outcome {
    /// Nothing wrong: an empty test case.
    Pass,
    /// Findings (`<failure>`): the type of the first, and every message.
    Failure { kind: String, messages: Vec<String> },
    /// The input could not be judged (`<error>`): a type and every message.
    Error { kind: String, messages: Vec<String> },
}

struct Suite {
    name: String,
    /// The suite's `<testcase>` elements, written.
    cases: String,
    tests: usize,
    failures: usize,
    errors: usize,
    started: Instant,
    timestamp: String,
}

/// A JUnit document being written.
struct Report {
    package: String,
    started: bool,
    next_id: usize,
    suite: Option<Suite>,
}

impl Report {
    /// A report for `crd-audit <command>`.
    fn new(command: &str) -> Report {
        Report {
            package: format!("crd-audit {command}"),
            started: false,
            next_id: 0,
            suite: None,
        }
    }

    fn start(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        if !self.started {
            self.started = true;
            out.write_all(b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n")?;
        }
        Ok(())
    }

    /// Ends the current suite (writing it) and starts one named `name`.
    fn suite(&mut self, out: &mut impl Write, name: &str) -> std::io::Result<()> {
        self.end_suite(out)?;
        self.suite = Some(Suite {
            name: name.to_string(),
            cases: String::new(),
            tests: 0,
            failures: 0,
            errors: 0,
            started: Instant::now(),
            timestamp: utc_timestamp(SystemTime::now()),
        });
        Ok(())
    }

    /// Adds a test case to the suite `suite` (starting it, and writing the one before, when
    /// it is not the current one).
    fn case(
        &mut self,
        out: &mut impl Write,
        suite: &str,
        classname: &str,
        name: &str,
        outcome: &Outcome,
    ) -> std::io::Result<()> {
        self.open(out, suite)?;
        let Some(s) = self.suite.as_mut() else {
            return Ok(());
        };
        s.tests += 1;
        let _ = write!(
            s.cases,
            "    <testcase name=\"{}\" classname=\"{}\" time=\"0\"",
            escape(name),
            escape(classname)
        );
        let (element, kind, messages) = match outcome {
            Outcome::Pass => {
                s.cases.push_str("/>\n");
                return Ok(());
            }
            Outcome::Failure { kind, messages } => {
                s.failures += 1;
                ("failure", kind, messages)
            }
            Outcome::Error { kind, messages } => {
                s.errors += 1;
                ("error", kind, messages)
            }
        };
        let first = messages.first().map_or("", String::as_str);
        let _ = writeln!(
            s.cases,
            ">\n      <{element} message=\"{}\" type=\"{}\">{}</{element}>\n    </testcase>",
            escape(first),
            escape(kind),
            escape(&messages.join("\n"))
        );
        Ok(())
    }

    fn end_suite(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        let Some(s) = self.suite.take() else {
            return Ok(());
        };
        self.start(out)?;
        let id = self.next_id;
        self.next_id += 1;
        writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\" time=\"{:.3}\" timestamp=\"{}\" hostname=\"localhost\" package=\"{}\" id=\"{id}\">\n    <properties/>",
            escape(if s.name.is_empty() { "-" } else { &s.name }),
            s.tests,
            s.failures,
            s.errors,
            s.started.elapsed().as_secs_f64(),
            s.timestamp,
            escape(&self.package),
        )?;
        out.write_all(s.cases.as_bytes())?;
        out.write_all(b"    <system-out/>\n    <system-err/>\n  </testsuite>\n")
    }

    /// Starts the suite `name` unless it is the current one.
    fn open(&mut self, out: &mut impl Write, name: &str) -> std::io::Result<()> {
        if self.suite.as_ref().is_none_or(|s| s.name != name) {
            self.suite(out, name)?;
        }
        Ok(())
    }

    /// Writes the last suite and ends the document.
    fn finish(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        self.end_suite(out)?;
        self.start(out)?;
        out.write_all(b"</testsuites>\n")
    }
}

/// An object's outcome: its causes as a failure, an error when judging it hit a bug; with
/// `strict`, unknown fields are findings too.
fn object_outcome(v: &ShownVerdict, strict: bool) -> Outcome {
    let mut messages: Vec<String> = v.errors.iter().map(|c| c.message()).collect();
    if let Some(e) = &v.request_error {
        messages.push(e.clone());
    }
    let unknown = |m: &mut Vec<String>| {
        m.extend(v.pruned.iter().map(|p| {
            format!(
                "unknown field {}",
                crd_audit_engine::render::quote(p.as_str())
            )
        }))
    };
    if v.internal_error {
        return Outcome::Error {
            kind: "InternalError".into(),
            messages,
        };
    }
    let first_kind = v.errors.first().map(|c| c.kind.reason().to_string());
    if !v.valid() {
        if strict {
            unknown(&mut messages);
        }
        let kind = match (&v.request_error, first_kind) {
            (Some(_), _) => "NotFound".to_string(),
            (None, Some(k)) => k,
            (None, None) => "Invalid".to_string(),
        };
        return Outcome::Failure { kind, messages };
    }
    if strict && !v.pruned.is_empty() {
        unknown(&mut messages);
        return Outcome::Failure {
            kind: "UnknownField".into(),
            messages,
        };
    }
    Outcome::Pass
}

/// A CRD's outcome: its problems as a failure (warnings are not), an error when it could
/// not be judged.
fn check_outcome<'a>(found: impl IntoIterator<Item = &'a crd_findings::Finding>) -> Outcome {
    let found: Vec<_> = found
        .into_iter()
        .filter(|f| f.level() != Level::Warning)
        .collect();
    let Some(first) = found.first() else {
        return Outcome::Pass;
    };
    let kind = first.kind.name().to_string();
    let errors = first.level() == Level::Error;
    let messages = found.into_iter().map(|f| f.message.clone()).collect();
    if errors {
        Outcome::Error { kind, messages }
    } else {
        Outcome::Failure { kind, messages }
    }
}

/// The JUnit sink: a suite per input file (per CRD for `audit` and `diff`), a test case per
/// object, CRD or change.
pub(super) struct Junit<W> {
    out: W,
    report: Report,
    /// `validate --strict`: unknown fields are failures.
    strict: bool,
}

impl<W: Write> Junit<W> {
    pub(super) fn new(out: W, command: Command) -> Self {
        Junit {
            out,
            report: Report::new(command.name()),
            strict: command == Command::Validate { strict: true },
        }
    }
}

impl<W: Write> Sink for Junit<W> {
    fn checked_crd(&mut self, c: &CheckedCrd) -> std::io::Result<()> {
        let outcome = check_outcome(c.found.iter().map(|(f, _)| f));
        self.report
            .case(&mut self.out, c.file, c.source, &c.report.crd, &outcome)
    }

    fn object_verdict(&mut self, o: &ObjectVerdict) -> std::io::Result<()> {
        let outcome = object_outcome(o.verdict, self.strict);
        let name = object_name(o.verdict);
        self.report
            .case(&mut self.out, o.file, o.source, &name, &outcome)
    }

    /// A suite per file (one for the cluster), every object a test case.
    fn planned_object(&mut self, o: &PlannedObject) -> std::io::Result<()> {
        let v = o.verdict;
        let suite = o.source.rsplit_once('#').map_or("cluster", |(f, _)| f);
        let name = if v.namespace.is_empty() {
            format!("{} {}", v.kind, v.name)
        } else {
            format!("{} {}/{}", v.kind, v.namespace, v.name)
        };
        let outcome = object_outcome(v, false);
        self.report
            .case(&mut self.out, suite, o.source, &name, &outcome)
    }

    /// One suite for the CRD, a test case per change, tightening changes failed.
    fn schema_change(&mut self, c: &SchemaChange) -> std::io::Result<()> {
        let change = c.change;
        let outcome = if change.class == crd_audit_engine::Class::Tightening {
            Outcome::Failure {
                kind: change.kind.to_string(),
                messages: vec![change.reason.clone()],
            }
        } else {
            Outcome::Pass
        };
        let name = change_head(change);
        self.report
            .case(&mut self.out, c.crd, c.crd, &name, &outcome)
    }

    fn audited_crd(&mut self, c: &AuditedCrd) -> std::io::Result<()> {
        let outcome = check_outcome(c.found);
        let name = format!("CRD {}", c.name);
        self.report
            .case(&mut self.out, c.name, c.name, &name, &outcome)
    }

    fn audited_object(&mut self, crd: &str, v: &ShownVerdict) -> std::io::Result<()> {
        let outcome = object_outcome(v, false);
        if matches!(outcome, Outcome::Pass) {
            return Ok(());
        }
        let name = format!("{} ({})", object_name(v), v.api_version);
        self.report.case(&mut self.out, crd, crd, &name, &outcome)
    }

    fn audited_row(&mut self, row: &Row) -> std::io::Result<()> {
        let valid = row.objects - row.invalid;
        let name = format!("{valid} valid object(s) of {}", row.objects);
        self.report
            .case(&mut self.out, &row.crd, &row.crd, &name, &Outcome::Pass)?;
        if let Some(e) = &row.error {
            let outcome = Outcome::Error {
                kind: "ReadError".into(),
                messages: vec![e.clone()],
            };
            self.report.case(
                &mut self.out,
                &row.crd,
                &row.crd,
                "reading objects",
                &outcome,
            )?;
        }
        Ok(())
    }

    /// An `<error>` test case, in the file's suite.
    fn unreadable(&mut self, file: &str, doc: Option<usize>, e: &LoadError) -> std::io::Result<()> {
        let (classname, name) = match doc {
            Some(d) => (format!("{file}#{d}"), format!("document {d}")),
            None => (file.to_string(), "input".to_string()),
        };
        let outcome = Outcome::Error {
            kind: "InputError".into(),
            messages: vec![e.to_string()],
        };
        self.report
            .case(&mut self.out, file, &classname, &name, &outcome)
    }

    /// A document that holds no CRD that can be checked is an error case of its file, as a
    /// document that cannot be read is.
    fn unreadable_crd(&mut self, file: &str, e: &LoadError) -> std::io::Result<()> {
        self.unreadable(file, e.doc, e)
    }

    /// The counts are for people: `plan`'s and `audit`'s on stderr, beside the XML. `diff`'s
    /// document has the CRD's suite even without changes.
    fn totals(&mut self, totals: &Totals) -> std::io::Result<()> {
        match totals {
            Totals::Diff { crd, .. } => self.report.open(&mut self.out, crd),
            other => {
                totals_on_stderr(other);
                Ok(())
            }
        }
    }

    fn finish(&mut self, _exit_status: u8) -> std::io::Result<()> {
        self.report.finish(&mut self.out)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// `s` as XML text or attribute value: markup characters as references, line breaks and
/// tabs as character references (kept in attributes, where they would be normalised away),
/// and the characters XML 1.0 forbids (other controls, U+FFFE, U+FFFF) spelled `\u{..}` so
/// that the document always parses.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// `YYYY-MM-DDTHH:MM:SS` in UTC (the Ant schema allows no zone and no fraction).
fn utc_timestamp(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (proleptic Gregorian), by 400-year eras.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_civil_dates() {
        let at = |s: u64| utc_timestamp(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00");
        // 2000-02-29 12:34:56 UTC and 2024-12-31 23:59:59 UTC.
        assert_eq!(at(951_827_696), "2000-02-29T12:34:56");
        assert_eq!(at(1_735_689_599), "2024-12-31T23:59:59");
    }

    #[test]
    fn escaping_keeps_the_document_well_formed() {
        assert_eq!(
            escape("a<&>\"'\u{1}\u{FFFF}\n"),
            "a&lt;&amp;&gt;&quot;&apos;\\u{1}\\u{ffff}&#10;"
        );
    }
}
