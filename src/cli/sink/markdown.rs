//! `--output markdown`, for a pull request: a section that GitHub renders in a comment or in
//! `$GITHUB_STEP_SUMMARY`, a heading (`###`, below the caller's own), a summary line and a
//! table, the worst first: for `plan` the stuck objects, then those the change breaks but
//! ratcheting tolerates, then those already invalid; for `diff` the tightening changes,
//! then the loosening and neutral ones. The section is bounded whatever the input: at most
//! [`MAX_ROWS`] rows (the rest counted in a last line) and cells cut at [`MAX_CELL`]
//! characters, so a plan of a million objects stays a few tens of kilobytes. Nothing is
//! written until the totals come: the rows are sorted first.

use super::found::{
    AuditedCrd, CheckedCrd, ObjectVerdict, PlannedObject, Row, SchemaChange, Totals,
};
use super::{Sink, object_name, plan_summary};
use crate::audit::shown_verdict::ShownVerdict;
use crate::cli::crd_findings::Kind;
use crd_audit_engine::Class;
use std::io::Write;

/// The most rows a table lists.
pub const MAX_ROWS: usize = 50;
/// The longest cell, in characters.
pub const MAX_CELL: usize = 200;

/// How bad a row is: the order of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    /// Stuck: the API server refuses every update of the object.
    Stuck,
    /// Broken by the change (or invalid), but updates that leave its values alone pass.
    Breaks,
    /// Already invalid before the change.
    Already,
    /// A tightening change.
    Tightening,
    /// A loosening change.
    Loosening,
    Neutral,
    /// A CRD finding (`check`, `audit`).
    Finding,
    /// A warning about a CRD or an object.
    Warning,
}

impl Rank {
    fn label(self) -> &'static str {
        match self {
            Rank::Stuck => ":no_entry: stuck",
            Rank::Breaks => ":warning: breaks",
            Rank::Already => "already invalid",
            Rank::Tightening => ":warning: tightening",
            Rank::Loosening => "loosening",
            Rank::Neutral => "neutral",
            Rank::Finding => ":x: finding",
            Rank::Warning => "warning",
        }
    }
}

/// The rows kept: the first [`MAX_ROWS`] of each rank (enough to fill the table from the
/// worst), and how many there were.
#[derive(Default)]
struct Rows {
    kept: Vec<(Rank, usize, Vec<String>)>,
    counts: std::collections::BTreeMap<Rank, usize>,
}

impl Rows {
    fn add(&mut self, rank: Rank, cells: Vec<String>) {
        let n = self.counts.entry(rank).or_default();
        *n += 1;
        if *n <= MAX_ROWS {
            let order = self.kept.len();
            self.kept.push((rank, order, cells));
        }
    }

    fn count(&self, rank: Rank) -> usize {
        self.counts.get(&rank).copied().unwrap_or(0)
    }

    fn total(&self) -> usize {
        self.counts.values().sum()
    }
}

pub(super) struct Markdown<W> {
    out: W,
    /// The command's name, for the heading.
    command: &'static str,
    /// What the section is about (the CRD of `diff` and `plan`).
    subject: Option<String>,
    /// The table's header cells after the first column.
    columns: &'static [&'static str],
    rows: Rows,
    summary: Vec<String>,
}

impl<W: Write> Markdown<W> {
    pub(super) fn new(out: W, command: super::Command) -> Self {
        let columns: &'static [&'static str] = match command {
            super::Command::Diff => &["Version", "Field", "Change"],
            super::Command::Plan => &["Object", "Version", "First error", "Source"],
            super::Command::Check => &["CRD", "Finding", "Where"],
            super::Command::Validate { .. } => &["Object", "First error", "Source"],
            super::Command::Audit => &["CRD", "Object", "First error"],
        };
        Markdown {
            out,
            command: command.name(),
            subject: None,
            columns,
            rows: Rows::default(),
            summary: Vec::new(),
        }
    }

    fn subject(&mut self, s: &str) {
        if self.subject.is_none() && !s.is_empty() {
            self.subject = Some(s.to_string());
        }
    }
}

/// A table cell: one line, `|` escaped, at most [`MAX_CELL`] characters.
fn cell(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut cut: String = one_line.chars().take(MAX_CELL).collect();
    if one_line.chars().count() > MAX_CELL {
        cut.push('…');
    }
    cut.replace('\\', "\\\\").replace('|', "\\|")
}

/// A cell in code font, unless the text holds a backtick.
fn code(text: &str) -> String {
    if text.contains('`') || text.is_empty() {
        cell(text)
    } else {
        format!("`{}`", cell(text))
    }
}

/// The first error of a verdict, as a cell.
fn first_error(v: &ShownVerdict) -> String {
    if let Some(e) = &v.request_error {
        return cell(e);
    }
    let more = v.errors.len().saturating_sub(1);
    match v.errors.first() {
        Some(c) if more > 0 => format!("{} (and {more} more)", cell(&c.message())),
        Some(c) => cell(&c.message()),
        None => String::new(),
    }
}

/// How an invalid stored object fares: stuck (its unchanged update refused), or not.
fn stuck(v: &ShownVerdict) -> bool {
    v.update.as_ref().is_some_and(|u| !u.valid())
}

impl<W: Write> Sink for Markdown<W> {
    fn checked_crd(&mut self, c: &CheckedCrd) -> std::io::Result<()> {
        self.subject(&c.report.crd);
        for (f, p) in c.found {
            if f.kind == Kind::InputError {
                continue;
            }
            let rank = if f.level() == crate::cli::crd_findings::Level::Warning {
                Rank::Warning
            } else {
                Rank::Finding
            };
            self.rows.add(
                rank,
                vec![
                    code(&c.report.crd),
                    cell(&format!("{}: {}", f.kind.name(), f.message)),
                    code(&format!("{}:{}", c.file, p.line)),
                ],
            );
        }
        Ok(())
    }

    fn object_verdict(&mut self, o: &ObjectVerdict) -> std::io::Result<()> {
        let v = o.verdict;
        if v.valid() {
            return Ok(());
        }
        let rank = if stuck(v) { Rank::Stuck } else { Rank::Breaks };
        self.rows.add(
            rank,
            vec![
                code(&object_name(v)),
                first_error(v),
                code(&format!("{}:{}", o.file, o.at.object.line)),
            ],
        );
        Ok(())
    }

    fn planned_object(&mut self, o: &PlannedObject) -> std::io::Result<()> {
        self.subject(o.crd);
        let v = o.verdict;
        if v.valid() {
            return Ok(());
        }
        let rank = if stuck(v) {
            Rank::Stuck
        } else if o.valid_before == Some(false) {
            Rank::Already
        } else {
            Rank::Breaks
        };
        let version = v.api_version.rsplit('/').next().unwrap_or("").to_string();
        let source = match &o.located {
            Some((file, at)) => format!("{file}:{}", at.object.line),
            None => o.source.to_string(),
        };
        let mut label_cells = vec![code(&object_name(v)), code(&version), first_error(v)];
        label_cells.push(code(&source));
        // An object already invalid and stuck is listed with the stuck ones, said so.
        if rank == Rank::Stuck && o.valid_before == Some(false) {
            label_cells[2] = format!("already invalid; {}", label_cells[2]);
        }
        self.rows.add(rank, label_cells);
        Ok(())
    }

    fn schema_change(&mut self, c: &SchemaChange) -> std::io::Result<()> {
        self.subject(c.crd);
        let ch = c.change;
        let rank = match ch.class {
            Class::Tightening => Rank::Tightening,
            Class::Loosening => Rank::Loosening,
            _ => Rank::Neutral,
        };
        let version = if ch.version.is_empty() {
            "*"
        } else {
            &ch.version
        };
        let path = if ch.path.is_empty() {
            "<version>"
        } else {
            &ch.path
        };
        self.rows.add(
            rank,
            vec![
                code(version),
                code(path),
                cell(&format!("{}: {}", ch.kind, ch.reason)),
            ],
        );
        Ok(())
    }

    fn audited_crd(&mut self, c: &AuditedCrd) -> std::io::Result<()> {
        for f in c.found {
            let rank = if f.level() == crate::cli::crd_findings::Level::Warning {
                Rank::Warning
            } else {
                Rank::Finding
            };
            self.rows.add(
                rank,
                vec![
                    code(c.name),
                    String::new(),
                    cell(&format!("{}: {}", f.kind.name(), f.message)),
                ],
            );
        }
        Ok(())
    }

    fn audited_object(&mut self, crd: &str, v: &ShownVerdict) -> std::io::Result<()> {
        if v.valid() {
            return Ok(());
        }
        let rank = if stuck(v) { Rank::Stuck } else { Rank::Breaks };
        self.rows
            .add(rank, vec![code(crd), code(&object_name(v)), first_error(v)]);
        Ok(())
    }

    fn audited_row(&mut self, row: &Row) -> std::io::Result<()> {
        if let Some(e) = &row.error {
            self.summary
                .push(format!("`{}`: {}", cell(&row.crd), cell(e)));
        }
        Ok(())
    }

    fn totals(&mut self, totals: &Totals) -> std::io::Result<()> {
        let r = &self.rows;
        let line = match totals {
            Totals::Diff { crd, changes } => {
                self.subject(crd);
                let count = |class| changes.iter().filter(|c| c.class == class).count();
                let tightening = count(Class::Tightening);
                let verdict = if tightening > 0 {
                    format!("**{tightening} tightening change(s)**")
                } else {
                    "no tightening change".to_string()
                };
                format!(
                    "{verdict}, {} loosening, {} neutral ({} in all).",
                    count(Class::Loosening),
                    count(Class::Neutral),
                    changes.len()
                )
            }
            Totals::Plan(summaries) => {
                let newly: usize = summaries.values().map(|s| s.newly_invalid).sum();
                let read: usize = summaries.values().map(|s| s.read).sum();
                let stuck = r.count(Rank::Stuck);
                let mut line = if newly > 0 {
                    format!("**{newly} of {read} object(s) become invalid** under the new revision")
                } else {
                    format!("No object of {read} becomes invalid under the new revision")
                };
                if stuck > 0 {
                    line.push_str(&format!(
                        "; **{stuck} stuck**: the API server would refuse every update of them, even one that changes nothing"
                    ));
                }
                line.push('.');
                for l in plan_summary(summaries) {
                    self.summary.push(format!("- {}", cell(&l)));
                }
                line
            }
            Totals::Check {
                checked,
                findings,
                input_errors,
                internal_errors,
            } => format!(
                "Checked {checked} CRD(s): {findings} with findings, {input_errors} input error(s), {internal_errors} internal error(s)."
            ),
            Totals::Validate(t) => format!(
                "Validated {} object(s): **{} invalid**, {} with unknown fields, {} input error(s).",
                t.objects, t.invalid, t.pruned, t.input_errors
            ),
            Totals::Audit { totals, .. } => format!(
                "Audited {} CRD(s) and {} object(s): **{} invalid** ({} stuck), {} CRD(s) with findings, {} error(s).",
                totals.crds,
                totals.objects,
                totals.invalid,
                totals.blocked,
                totals.crds_with_findings,
                totals.errors
            ),
        };
        self.summary.insert(0, line);
        Ok(())
    }

    fn finish(&mut self, _exit_status: u8) -> std::io::Result<()> {
        let heading = match &self.subject {
            Some(s) => format!("### crd-audit {}: `{}`", self.command, cell(s)),
            None => format!("### crd-audit {}", self.command),
        };
        writeln!(self.out, "{heading}\n")?;
        for line in &self.summary {
            writeln!(self.out, "{line}")?;
        }
        if self.rows.total() > 0 {
            let mut kept = std::mem::take(&mut self.rows.kept);
            kept.sort_by_key(|(rank, order, _)| (*rank, *order));
            writeln!(self.out)?;
            writeln!(self.out, "| | {} |", self.columns.join(" | "))?;
            writeln!(
                self.out,
                "|---|{}",
                self.columns.iter().map(|_| "---|").collect::<String>()
            )?;
            for (rank, _, cells) in kept.iter().take(MAX_ROWS) {
                writeln!(self.out, "| {} | {} |", rank.label(), cells.join(" | "))?;
            }
            let shown = kept.len().min(MAX_ROWS);
            let left = self.rows.total() - shown;
            if left > 0 {
                writeln!(
                    self.out,
                    "\n{left} more not listed (the first {MAX_ROWS}, worst first, are); `-o json` lists them all."
                )?;
            }
        }
        writeln!(self.out)?;
        self.out.flush()
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::found::{PlanSummary, SchemaChange as Found};
    use super::super::{Command, Format, new, refused_widget};
    use super::*;
    use crd_audit_engine::{BadValue, Cause, Change, ErrorType, Path};

    fn widget(name: &str, stuck: bool) -> ShownVerdict {
        let cause = || {
            Cause::new(
                ErrorType::Required,
                Path::new("spec").child("tier"),
                BadValue::Omit,
                "",
            )
        };
        let mut v = refused_widget(cause());
        v.name = name.into();
        let mut update = refused_widget(cause());
        update.is_update = true;
        if !stuck {
            update.code = 200;
            update.errors.clear();
        }
        v.update = Some(Box::new(update));
        v
    }

    fn plan(objects: &[(ShownVerdict, Option<bool>)]) -> String {
        let mut out = Vec::new();
        let mut sink = new(Format::Markdown, Command::Plan, &mut out);
        for (v, before) in objects {
            sink.planned_object(&PlannedObject {
                source: "cluster:v1/default/x",
                verdict: v,
                valid_before: *before,
                located: None,
                crd: "widgets.example.com",
            })
            .unwrap();
        }
        let mut summaries = std::collections::BTreeMap::new();
        summaries.insert(
            "v1".to_string(),
            PlanSummary {
                read: objects.len(),
                newly_invalid: objects
                    .iter()
                    .filter(|(v, b)| !v.valid() && *b == Some(true))
                    .count(),
                already_invalid: objects.iter().filter(|(_, b)| *b == Some(false)).count(),
                stuck: objects.iter().filter(|(v, _)| stuck(v)).count(),
            },
        );
        sink.totals(&Totals::Plan(&summaries)).unwrap();
        sink.finish(1).unwrap();
        drop(sink);
        String::from_utf8(out).unwrap()
    }

    /// The stuck objects come first whatever order they came in, then those the change
    /// breaks, then those already invalid; valid objects are not listed.
    #[test]
    fn a_plan_lists_the_stuck_objects_first() {
        let mut ok = refused_widget(Cause::internal(Path::root(), "x"));
        ok.code = 201;
        ok.errors.clear();
        let md = plan(&[
            (widget("already", false), Some(false)),
            (widget("tolerated", false), Some(true)),
            (ok, Some(true)),
            (widget("stuck", true), Some(true)),
        ]);
        assert!(
            md.starts_with("### crd-audit plan: `widgets.example.com`\n"),
            "{md}"
        );
        assert!(md.contains("**2 of 4 object(s) become invalid**"), "{md}");
        assert!(md.contains("**1 stuck**"), "{md}");
        let rows: Vec<&str> = md
            .lines()
            .filter(|l| l.starts_with("| :") || l.starts_with("| already"))
            .collect();
        assert_eq!(rows.len(), 3, "{md}");
        assert!(rows[0].contains("stuck") && rows[0].contains("Widget default/stuck"));
        assert!(rows[1].contains("breaks") && rows[1].contains("Widget default/tolerated"));
        assert!(rows[2].starts_with("| already invalid") && rows[2].contains("default/already"));
        assert!(
            rows[0].contains("| spec.tier: Required value |"),
            "{}",
            rows[0]
        );
    }

    /// However many objects break, the table holds at most `MAX_ROWS` (the worst) and says
    /// how many it left out; a cell is one line, its `|` escaped, its length bounded.
    #[test]
    fn a_plan_is_bounded_and_its_cells_safe() {
        let mut objects: Vec<(ShownVerdict, Option<bool>)> = (0..500)
            .map(|i| (widget(&format!("t{i:03}"), false), Some(true)))
            .collect();
        let mut nasty = widget("late-stuck", true);
        nasty.errors[0] = Cause::new(
            ErrorType::Invalid,
            Path::new("spec").child("x"),
            BadValue::Str(format!("a|b\nc{}", "y".repeat(1000))),
            "",
        );
        objects.push((nasty, Some(true)));
        let md = plan(&objects);
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| :")).collect();
        assert_eq!(rows.len(), MAX_ROWS, "{md}");
        assert!(
            rows[0].contains("late-stuck"),
            "the stuck one first: {}",
            rows[0]
        );
        // The value as the API server quotes it, its `|` escaped.
        assert!(rows[0].contains(r#""a\|b\\nc"#), "{}", rows[0]);
        assert!(rows[0].chars().count() < 3 * MAX_CELL, "{}", rows[0]);
        assert!(
            md.contains(&format!("{} more not listed", 501 - MAX_ROWS)),
            "{md}"
        );
        assert!(md.len() < 40_000, "{} bytes", md.len());
    }

    #[test]
    fn a_diff_lists_the_tightening_changes_first() {
        let crd = |max_length: u32, required: bool| {
            let mut spec = serde_json::json!({"type": "object", "properties": {
                "size": {"type": "string", "maxLength": max_length},
                "tier": {"type": "string"}}});
            if required {
                spec["required"] = serde_json::json!(["tier"]);
            }
            crd_audit_engine::Crd::from_value(&serde_json::json!({
                "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": "widgets.example.com"},
                "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object",
                            "properties": {"spec": spec}}}}]}}))
            .unwrap()
        };
        let changes: Vec<Change> = crd_audit_engine::diff(&crd(5, false), &crd(10, true));
        assert_eq!(changes.len(), 2, "{changes:?}");
        let mut out = Vec::new();
        let mut sink = new(Format::Markdown, Command::Diff, &mut out);
        let at = || crd_audit_engine::load::positions::Position { line: 1, column: 1 };
        for c in &changes {
            sink.schema_change(&Found {
                crd: "widgets.example.com",
                file: "new.yaml",
                change: c,
                at: &at,
            })
            .unwrap();
        }
        sink.totals(&Totals::Diff {
            crd: "widgets.example.com",
            changes: &changes,
        })
        .unwrap();
        sink.finish(1).unwrap();
        drop(sink);
        let md = String::from_utf8(out).unwrap();
        assert!(
            md.starts_with("### crd-audit diff: `widgets.example.com`"),
            "{md}"
        );
        assert!(
            md.contains("**1 tightening change(s)**, 1 loosening"),
            "{md}"
        );
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).skip(1).collect();
        assert!(
            rows[0].contains("tightening") && rows[0].contains("tier is now required"),
            "{md}"
        );
        assert!(rows[1].contains("loosening"), "{md}");
    }
}
