//! How `crd-audit audit` writes its findings, in each output format, and its table of
//! counts per CRD.

use super::Checked;
use crate::audit::judge::redact_verdict;
use crate::cli::crd_findings;
use crate::cli::junit::{self, Outcome};
use crate::cli::output::{self, Format};
use crate::cli::sarif;
use crate::cli::updates::stuck_or_tolerated;
use crate::cli::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR};
use crd_audit_engine::size_limits;
use crd_audit_engine::{Cause, Verdict};
use serde_json::json;
use std::io::Write;
use std::time::Duration;

/// What the audit of one CRD found (a row of the summary table).
#[derive(Debug, Default)]
pub(super) struct Row {
    pub(super) crd: String,
    pub(super) storage: String,
    pub(super) objects: u64,
    pub(super) invalid: u64,
    /// Invalid objects whose unchanged update the server refuses (stuck).
    pub(super) blocked: u64,
    pub(super) unknown_fields: u64,
    pub(super) crd_findings: usize,
    pub(super) crd_warnings: usize,
    /// Why the objects could not all be read or judged.
    pub(super) error: Option<String>,
    pub(super) internal_errors: u64,
}

/// Writes the findings in the chosen format.
pub(super) struct Writer<W: Write> {
    pub(super) out: W,
    pub(super) format: Format,
    pub(super) redact: bool,
    pub(super) junit: junit::Report,
    pub(super) sarif: sarif::Report,
    /// stdout is the terminal the progress bar is drawn on: flush every finding at once.
    pub(super) flush_each: bool,
}

impl<W: Write> Writer<W> {
    pub(super) fn crd(&mut self, c: &Checked) -> std::io::Result<()> {
        let name = &c.revision.shell().name;
        match self.format {
            Format::Text => {
                for f in crd_findings::list(&c.report, &c.sizes) {
                    writeln!(self.out, "{name}: {}: {}", f.kind, f.message)?;
                }
            }
            Format::Json => {
                let causes = |l: &[Cause]| l.iter().map(Cause::to_json).collect::<Vec<_>>();
                let mut v = json!({
                    "record": "crd",
                    "crd": name,
                    "nonStructural": causes(&c.report.non_structural),
                    "crdErrors": causes(&c.report.crd_errors),
                    "warnings": c.report.warnings.iter().map(|w| &w.message).collect::<Vec<_>>(),
                    "storedVersionsNotServed": c.report.stored_versions_not_served,
                    "sizeFindings": c.sizes.iter().map(size_limits::Finding::to_json).collect::<Vec<_>>(),
                });
                if let Some(e) = &c.report.internal_error {
                    v["internalError"] = json!(e);
                }
                writeln!(self.out, "{v}")?;
            }
            Format::Sarif => {
                for f in crd_findings::list(&c.report, &c.sizes) {
                    let location = sarif::Location::Logical {
                        name: if f.field.is_empty() {
                            name.clone()
                        } else {
                            format!("{name}/{}", f.field)
                        },
                        kind: "resource",
                    };
                    self.sarif.result(
                        &mut self.out,
                        &sarif::Finding {
                            rule: f.rule,
                            level: None,
                            message: &f.message,
                            location: &location,
                            object: name,
                            field: &f.field,
                            properties: Vec::new(),
                        },
                    )?;
                }
            }
            Format::Junit => {
                let outcome = junit::check_outcome(&c.report, &c.sizes);
                self.junit
                    .case(&mut self.out, name, name, &format!("CRD {name}"), &outcome)?;
            }
        }
        self.flush()
    }

    /// An object with findings (invalid, or with fields its schema does not know): its
    /// values redacted first when asked, once for every format.
    pub(super) fn object(&mut self, crd: &str, v: &Verdict) -> std::io::Result<()> {
        let mut redacted_verdict;
        let v = if self.redact {
            redacted_verdict = v.clone();
            redact_verdict(&mut redacted_verdict);
            &redacted_verdict
        } else {
            v
        };
        let who = output::object_name(v);
        match self.format {
            Format::Text => {
                for f in &v.pruned {
                    writeln!(
                        self.out,
                        "{crd} {who}: warning: unknown field {}",
                        crd_audit_engine::render::quote(f)
                    )?;
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
            }
            Format::Json => {
                let mut m = serde_json::Map::new();
                m.insert("record".into(), json!("object"));
                m.insert("crd".into(), json!(crd));
                m.extend(crate::cli::output::verdict_json(v));
                serde_json::to_writer(&mut self.out, &m)?;
                self.out.write_all(b"\n")?;
            }
            Format::Sarif => {
                let object = format!("{crd}/{}/{}", v.namespace, v.name);
                let place = sarif::Place::Cluster { object: &object };
                sarif::object_results(
                    &mut self.sarif,
                    &mut self.out,
                    v,
                    &place,
                    true,
                    false,
                    None,
                )?;
            }
            Format::Junit => {
                let outcome = junit::object_outcome(v, false);
                if !matches!(outcome, Outcome::Pass) {
                    let name = format!("{who} ({})", v.api_version);
                    self.junit.case(&mut self.out, crd, crd, &name, &outcome)?;
                }
            }
        }
        self.flush()
    }

    /// The end of a CRD's objects.
    pub(super) fn crd_done(&mut self, row: &Row) -> std::io::Result<()> {
        match self.format {
            Format::Text => {
                if let Some(e) = &row.error {
                    writeln!(self.out, "{}: error: {e}", row.crd)?;
                }
            }
            Format::Json => {
                let mut v = json!({
                    "record": "crdSummary",
                    "crd": row.crd,
                    "storageVersion": row.storage,
                    "objects": row.objects,
                    "invalid": row.invalid,
                    "blocked": row.blocked,
                    "unknownFields": row.unknown_fields,
                    "crdFindings": row.crd_findings,
                    "crdWarnings": row.crd_warnings,
                });
                if let Some(e) = &row.error {
                    v["error"] = json!(e);
                }
                writeln!(self.out, "{v}")?;
            }
            Format::Sarif => {
                if let Some(e) = &row.error {
                    self.sarif
                        .notify(sarif::Level::Error, format!("{}: {e}", row.crd));
                }
            }
            Format::Junit => {
                let valid = row.objects - row.invalid;
                let name = format!("{valid} valid object(s) of {}", row.objects);
                self.junit
                    .case(&mut self.out, &row.crd, &row.crd, &name, &Outcome::Pass)?;
                if let Some(e) = &row.error {
                    let outcome = Outcome::Error {
                        kind: "ReadError".into(),
                        messages: vec![e.clone()],
                    };
                    self.junit.case(
                        &mut self.out,
                        &row.crd,
                        &row.crd,
                        "reading objects",
                        &outcome,
                    )?;
                }
            }
        }
        self.flush()
    }

    pub(super) fn flush(&mut self) -> std::io::Result<()> {
        if self.flush_each {
            self.out.flush()?;
        }
        Ok(())
    }
}

/// The totals of the whole audit.
#[derive(Default)]
pub(super) struct Totals {
    pub(super) crds: usize,
    pub(super) objects: u64,
    pub(super) invalid: u64,
    pub(super) blocked: u64,
    pub(super) unknown_fields: u64,
    pub(super) crds_with_findings: usize,
    pub(super) crds_with_invalid: usize,
    pub(super) errors: usize,
    pub(super) internal_errors: u64,
}

impl Totals {
    pub(super) fn of(rows: &[Row]) -> Totals {
        let mut t = Totals {
            crds: rows.len(),
            ..Totals::default()
        };
        for r in rows {
            t.objects += r.objects;
            t.invalid += r.invalid;
            t.blocked += r.blocked;
            t.unknown_fields += r.unknown_fields;
            t.crds_with_findings += usize::from(r.crd_findings > 0);
            t.crds_with_invalid += usize::from(r.invalid > 0);
            t.errors += usize::from(r.error.is_some());
            t.internal_errors += r.internal_errors;
        }
        t
    }

    pub(super) fn status(&self) -> u8 {
        if self.errors > 0 || self.internal_errors > 0 {
            EXIT_INPUT_ERROR
        } else if self.invalid > 0 || self.crds_with_findings > 0 {
            EXIT_FINDINGS
        } else {
            EXIT_CLEAN
        }
    }

    pub(super) fn line(&self, elapsed: Duration) -> String {
        format!(
            "audited {} CRD(s) and {} object(s) in {:.1}s: {} invalid object(s) under {} CRD(s) ({} stuck: every update refused), {} with unknown fields, {} CRD(s) with findings, {} error(s){}",
            self.crds,
            self.objects,
            elapsed.as_secs_f64(),
            self.invalid,
            self.crds_with_invalid,
            self.blocked,
            self.unknown_fields,
            self.crds_with_findings,
            self.errors,
            match self.internal_errors {
                0 => String::new(),
                n => format!(", {n} internal error(s) (bugs in crd-audit)"),
            }
        )
    }
}

/// The summary table: one row per CRD, columns aligned as kubectl aligns them.
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
pub(super) fn short_error(e: &str) -> &str {
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
