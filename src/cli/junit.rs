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

use crd_audit_engine::Verdict;
use std::fmt::Write as _;
use std::io::Write;
use std::time::{Instant, SystemTime};

/// What a test case found.
pub enum Outcome {
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
pub struct Report {
    package: String,
    started: bool,
    next_id: usize,
    suite: Option<Suite>,
}

impl Report {
    /// A report for `crd-audit <command>`.
    pub fn new(command: &str) -> Report {
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
    pub fn suite(&mut self, out: &mut impl Write, name: &str) -> std::io::Result<()> {
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
    pub fn case(
        &mut self,
        out: &mut impl Write,
        suite: &str,
        classname: &str,
        name: &str,
        outcome: &Outcome,
    ) -> std::io::Result<()> {
        if self.suite.as_ref().is_none_or(|s| s.name != suite) {
            self.suite(out, suite)?;
        }
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

    /// Writes the last suite and ends the document.
    pub fn finish(mut self, out: &mut impl Write) -> std::io::Result<()> {
        self.end_suite(out)?;
        self.start(out)?;
        out.write_all(b"</testsuites>\n")
    }
}

/// An object's outcome: its causes as a failure, an error when judging it hit a bug; with
/// `strict`, unknown fields are findings too.
pub fn object_outcome(v: &Verdict, strict: bool) -> Outcome {
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

/// `check`: an unreadable document of `file`, as an `<error>` test case.
pub fn check_input_error(
    r: &mut Report,
    out: &mut impl Write,
    file: &str,
    e: &crd_audit_engine::load::LoadError,
) -> std::io::Result<()> {
    let (classname, name) = match e.doc {
        Some(d) => (format!("{file}#{d}"), format!("document {d}")),
        None => (file.to_string(), "input".to_string()),
    };
    let outcome = Outcome::Error {
        kind: "InputError".into(),
        messages: vec![e.to_string()],
    };
    r.case(out, file, &classname, &name, &outcome)
}

/// `check`: a CRD's test case (see [`check_outcome`]).
pub fn check_case(
    r: &mut Report,
    out: &mut impl Write,
    item: &super::inputs::Sourced,
    report: &crd_audit_engine::CheckReport,
    size_findings: &[crd_audit_engine::size_limits::Finding],
) -> std::io::Result<()> {
    let outcome = check_outcome(report, size_findings);
    r.case(out, &item.file, &item.source(), &report.crd, &outcome)
}

/// A CRD's outcome: its problems as a failure (warnings are not), an error when it could
/// not be judged.
pub fn check_outcome(
    report: &crd_audit_engine::CheckReport,
    size_findings: &[crd_audit_engine::size_limits::Finding],
) -> Outcome {
    use super::crd_findings::Level;
    let found: Vec<_> = super::crd_findings::list(report, size_findings)
        .into_iter()
        .filter(|f| f.level != Level::Warning)
        .collect();
    let Some(first) = found.first() else {
        return Outcome::Pass;
    };
    let kind = first.kind.to_string();
    let errors = first.level == Level::Error;
    let messages = found.into_iter().map(|f| f.message).collect();
    if errors {
        Outcome::Error { kind, messages }
    } else {
        Outcome::Failure { kind, messages }
    }
}

/// `diff`: the whole document: one suite for the CRD, a test case per change, tightening
/// changes failed.
pub fn diff_report(
    out: &mut impl Write,
    crd: &str,
    changes: &[crd_audit_engine::Change],
) -> std::io::Result<()> {
    let mut r = Report::new("diff");
    r.suite(out, crd)?;
    for c in changes {
        let name = super::diff::change_head(c);
        let outcome = if c.class == crd_audit_engine::Class::Tightening {
            Outcome::Failure {
                kind: c.kind.to_string(),
                messages: vec![c.reason.clone()],
            }
        } else {
            Outcome::Pass
        };
        r.case(out, crd, crd, &name, &outcome)?;
    }
    r.finish(out)
}

/// `s` as XML text or attribute value: markup characters as references, line breaks and
/// tabs as character references (kept in attributes, where they would be normalised away),
/// and the characters XML 1.0 forbids (other controls, U+FFFE, U+FFFF) spelled `\u{..}` so
/// that the document always parses.
pub fn escape(s: &str) -> String {
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
