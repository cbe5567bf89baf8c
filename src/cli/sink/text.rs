//! `--output text`, for people: one finding a line, starting with `file:line:column:` as
//! compilers print positions (or with the object's source or CRD when it is not in a file),
//! then the run's totals; `audit` ends with a table of counts per CRD.

use super::found::{
    AuditTotals, AuditedCrd, CheckedCrd, ObjectVerdict, PlannedObject, Row, SchemaChange, Totals,
};
use super::{Sink, change_line, object_name, plan_summary};
use crate::audit::shown_verdict::ShownVerdict;
use crate::cli::crd_findings::{self, Kind};
use crd_audit_engine::Class;
use crd_audit_engine::load::positions::Position;
use crd_audit_engine::render::quote;
use std::io::Write;
use std::time::Duration;

pub(super) struct Text<W> {
    out: W,
}

impl<W: Write> Text<W> {
    pub(super) fn new(out: W) -> Self {
        Text { out }
    }
}

impl<W: Write> Sink for Text<W> {
    fn checked_crd(&mut self, c: &CheckedCrd) -> std::io::Result<()> {
        let head = |p: &Position| format!("{}:{}:{}: {}", c.file, p.line, p.column, c.report.crd);
        for (f, p) in c.found {
            // Said on stderr, as errors of the input.
            if f.kind == Kind::InputError {
                continue;
            }
            writeln!(self.out, "{}: {}: {}", head(p), f.kind.name(), f.message)?;
        }
        if !crd_findings::failing(c.found.iter().map(|(f, _)| f)) {
            writeln!(self.out, "{}: ok", head(&c.object))?;
        }
        Ok(())
    }

    fn object_verdict(&mut self, o: &ObjectVerdict) -> std::io::Result<()> {
        let (v, at) = (o.verdict, o.at);
        let name = object_name(v);
        let pos = |p: &Position| format!("{}:{}:{}:", o.file, p.line, p.column);
        for (f, p) in v.pruned.iter().zip(&at.pruned) {
            writeln!(
                self.out,
                "{} {name}: warning: unknown field {}",
                pos(p),
                quote(f)
            )?;
        }
        if let Some(e) = &v.request_error {
            return writeln!(self.out, "{} {name}: error: {e}", pos(&at.object));
        }
        for w in &v.warnings {
            writeln!(self.out, "{} {name}: warning: {w}", pos(&at.object))?;
        }
        if v.errors.is_empty() {
            return writeln!(self.out, "{} {name}: valid", pos(&at.object));
        }
        for (c, p) in v.errors.iter().zip(&at.errors) {
            writeln!(self.out, "{} {name}: {c}", pos(p))?;
        }
        if let Some(u) = &v.update {
            writeln!(
                self.out,
                "{} {name}: {}",
                pos(&at.object),
                stuck_or_tolerated(u)
            )?;
        }
        Ok(())
    }

    /// An object the new CRD refuses: a line saying so, then one a finding; objects from
    /// the cluster start with their source instead of a position. Valid objects are not
    /// written.
    fn planned_object(&mut self, o: &PlannedObject) -> std::io::Result<()> {
        let verdict = o.verdict;
        if verdict.valid() {
            return Ok(());
        }
        let name = format!("{} {}", verdict.kind, verdict.name);
        let head = |p: Option<&Position>| match (&o.located, p) {
            (Some((file, _)), Some(p)) => format!("{file}:{}:{}: {name}", p.line, p.column),
            _ => format!("{} {name}", o.source),
        };
        let object = o.located.as_ref().map(|(_, at)| &at.object);
        let state = match o.valid_before {
            Some(true) => "breaks",
            Some(false) => "already invalid",
            None => "invalid under the new CRD",
        };
        writeln!(self.out, "{}: {state}", head(object))?;
        for (i, c) in verdict.errors.iter().enumerate() {
            let p = o.located.as_ref().and_then(|(_, at)| at.errors.get(i));
            writeln!(self.out, "{}:   {c}", head(p))?;
        }
        if let Some(e) = &verdict.request_error {
            writeln!(self.out, "{}:   {e}", head(object))?;
        }
        if let Some(u) = &verdict.update {
            writeln!(self.out, "{}: {}", head(object), stuck_or_tolerated(u))?;
        }
        Ok(())
    }

    fn schema_change(&mut self, c: &SchemaChange) -> std::io::Result<()> {
        writeln!(self.out, "{}", change_line(c.change))
    }

    fn audited_crd(&mut self, c: &AuditedCrd) -> std::io::Result<()> {
        for f in c.found {
            writeln!(self.out, "{}: {}: {}", c.name, f.kind.name(), f.message)?;
        }
        Ok(())
    }

    fn audited_object(&mut self, crd: &str, v: &ShownVerdict) -> std::io::Result<()> {
        let who = object_name(v);
        for f in &v.pruned {
            writeln!(self.out, "{crd} {who}: warning: unknown field {}", quote(f))?;
        }
        if let Some(e) = &v.request_error {
            writeln!(self.out, "{crd} {who}: error: {e}")?;
        }
        for c in &v.errors {
            writeln!(self.out, "{crd} {who}: {}", c.message())?;
        }
        if let Some(u) = &v.update {
            writeln!(self.out, "{crd} {who}: {}", stuck_or_tolerated(u))?;
        }
        Ok(())
    }

    fn audited_row(&mut self, row: &Row) -> std::io::Result<()> {
        if let Some(e) = &row.error {
            writeln!(self.out, "{}: error: {e}", row.crd)?;
        }
        Ok(())
    }

    fn totals(&mut self, totals: &Totals) -> std::io::Result<()> {
        let bugs = |n: usize| match n {
            0 => String::new(),
            n => format!(", {n} internal error(s) (bugs in crd-audit)"),
        };
        match totals {
            Totals::Check {
                checked,
                findings,
                input_errors,
                internal_errors,
            } => writeln!(
                self.out,
                "checked {checked} CRD(s): {findings} with findings, {input_errors} input error(s){}",
                bugs(*internal_errors)
            ),
            Totals::Validate(t) => {
                writeln!(
                    self.out,
                    "validated {} object(s): {} invalid ({} of unknown kind), {} with unknown fields, {} input error(s){}",
                    t.objects,
                    t.invalid,
                    t.unknown,
                    t.pruned,
                    t.input_errors,
                    bugs(t.internal_errors)
                )?;
                if t.rules_not_evaluated > 0 {
                    writeln!(
                        self.out,
                        "note: {} CEL rule evaluation(s) not performed (transition rules need the old object; rules this engine cannot evaluate are reported above)",
                        t.rules_not_evaluated
                    )?;
                }
                Ok(())
            }
            Totals::Diff { changes, .. } => {
                let count = |class| changes.iter().filter(|c| c.class == class).count();
                writeln!(
                    self.out,
                    "{} change(s): {} tightening, {} loosening, {} neutral",
                    changes.len(),
                    count(Class::Tightening),
                    count(Class::Loosening),
                    count(Class::Neutral)
                )
            }
            Totals::Plan(summaries) => {
                for line in plan_summary(summaries) {
                    writeln!(self.out, "{line}")?;
                }
                Ok(())
            }
            Totals::Audit {
                rows,
                totals,
                elapsed,
            } => {
                if !rows.is_empty() {
                    write!(self.out, "\n{}", table(rows))?;
                }
                writeln!(self.out, "{}", audit_line(totals, *elapsed))
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// The text line that says what an invalid stored object's no-op update gets.
fn stuck_or_tolerated(update: &ShownVerdict) -> String {
    if update.valid() {
        "tolerated: the API server accepts updates that leave the invalid values unchanged (validation ratcheting)".to_string()
    } else {
        "error: stuck: the API server refuses every update of this object, even one that changes nothing (a label, a finalizer removal)".to_string()
    }
}

/// The line that ends an audit.
pub(super) fn audit_line(t: &AuditTotals, elapsed: Duration) -> String {
    format!(
        "audited {} CRD(s) and {} object(s) in {:.1}s: {} invalid object(s) under {} CRD(s) ({} stuck: every update refused), {} with unknown fields, {} CRD(s) with findings, {} error(s){}",
        t.crds,
        t.objects,
        elapsed.as_secs_f64(),
        t.invalid,
        t.crds_with_invalid,
        t.blocked,
        t.unknown_fields,
        t.crds_with_findings,
        t.errors,
        match t.internal_errors {
            0 => String::new(),
            n => format!(", {n} internal error(s) (bugs in crd-audit)"),
        }
    )
}

/// The summary table of an audit: one row per CRD, columns aligned as kubectl aligns them.
pub(super) fn table(rows: &[Row]) -> String {
    let header = [
        "CRD",
        "STORAGE",
        "OBJECTS",
        "INVALID",
        "BLOCKED",
        "UNKNOWN-FIELDS",
        "CRD-FINDINGS",
        "CRD-WARNINGS",
        "ERROR",
    ];
    let cells: Vec<[String; 9]> = rows
        .iter()
        .map(|r| {
            [
                r.crd.clone(),
                r.storage.clone(),
                r.objects.to_string(),
                r.invalid.to_string(),
                r.blocked.to_string(),
                r.unknown_fields.to_string(),
                r.crd_findings.to_string(),
                r.crd_warnings.to_string(),
                r.error.as_deref().map_or("", short_error).to_string(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut s = String::new();
    let mut line = |cols: &[&str]| {
        let mut l = String::new();
        for (i, (c, w)) in cols.iter().zip(widths).enumerate() {
            if i + 1 == cols.len() {
                l.push_str(c);
            } else {
                l.push_str(&format!("{c:<w$}   "));
            }
        }
        s.push_str(l.trim_end());
        s.push('\n');
    };
    line(&header);
    for row in &cells {
        line(&row.each_ref().map(String::as_str));
    }
    s
}

/// The kind of a read error for the table (the full message is printed before it).
fn short_error(e: &str) -> &str {
    if e.contains("HTTP 403") {
        "Forbidden"
    } else if e.contains("HTTP 404") {
        "NotFound"
    } else if e.contains("internal error") {
        "InternalError"
    } else {
        "ReadError"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_aligns_columns_and_names_read_errors() {
        let rows = [
            Row {
                crd: "widgets.example.com".into(),
                storage: "v1".into(),
                objects: 1200,
                invalid: 3,
                ..Row::default()
            },
            Row {
                crd: "a.b".into(),
                storage: "v1beta1".into(),
                error: Some("listing as: x (Forbidden, HTTP 403)".into()),
                ..Row::default()
            },
        ];
        let t = table(&rows);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 3);
        let col = |l: &str, word: &str| l.find(word).unwrap();
        assert_eq!(col(lines[0], "STORAGE"), col(lines[1], "v1"));
        assert_eq!(col(lines[0], "STORAGE"), col(lines[2], "v1beta1"));
        assert_eq!(col(lines[0], "OBJECTS"), col(lines[1], "1200"));
        assert!(lines[2].ends_with("Forbidden"), "{t}");
        assert!(!lines[1].ends_with(' '));
    }
}
