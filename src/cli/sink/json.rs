//! `--output json`, for machines: one JSON object a line (docs/reference/json-output.md fixes
//! their keys), each with the positions of what it names when it comes from a file. `audit`
//! writes records (`"record": "crd"`, `"object"`, `"crdSummary"`, `"summary"`).

use super::found::{
    AuditedCrd, CheckedCrd, ObjectVerdict, PlannedObject, Row, SchemaChange, Totals,
};
use super::{Sink, plan_summary};
use crate::audit::shown_verdict::ShownVerdict;
use crate::cli::crd_findings::Kind;
use crate::cli::locate::Located;
use crd_audit_engine::Cause;
use crd_audit_engine::size_limits;
use serde_json::{Map, Value, json};
use std::io::Write;

pub(super) struct Json<W> {
    out: W,
}

impl<W: Write> Json<W> {
    pub(super) fn new(out: W) -> Self {
        Json { out }
    }

    fn line(&mut self, v: &Value) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.out, v)?;
        self.out.write_all(b"\n")
    }
}

/// The JSON line of `crd-audit validate --output json` (without `source`), which `plan` and
/// `audit` extend: the verdict as docs/reference/json-output.md fixes it.
fn verdict_json(v: &ShownVerdict) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("apiVersion".into(), json!(v.api_version));
    m.insert("kind".into(), json!(v.kind));
    m.insert("namespace".into(), json!(v.namespace));
    m.insert("name".into(), json!(v.name));
    m.insert("valid".into(), json!(v.valid()));
    m.insert("code".into(), json!(v.code));
    if let Some(e) = &v.request_error {
        m.insert("requestError".into(), json!(e));
    } else {
        let errors: Vec<Value> = v.errors.iter().map(Cause::to_json).collect();
        m.insert("errors".into(), Value::Array(errors));
    }
    m.insert("pruned".into(), json!(v.pruned));
    if v.status_dropped {
        m.insert("statusDropped".into(), json!(true));
    }
    if v.rules_not_evaluated > 0 {
        m.insert("celRulesNotEvaluated".into(), json!(v.rules_not_evaluated));
    }
    if v.is_update {
        m.insert("warnings".into(), json!(v.warnings));
    }
    if let Some(u) = &v.update {
        let errors: Vec<Value> = u.errors.iter().map(Cause::to_json).collect();
        let mut o = Map::new();
        o.insert("allowed".into(), json!(u.valid()));
        o.insert("errors".into(), Value::Array(errors));
        o.insert("warnings".into(), json!(u.warnings));
        m.insert("update".into(), Value::Object(o));
    }
    m
}

/// The verdict's line from a file: its source, where the object stands, the verdict, and
/// where each error stands.
fn located_verdict_json(
    source: &str,
    v: &ShownVerdict,
    at: Option<&Located>,
) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("source".into(), Value::String(source.to_string()));
    if let Some(at) = at {
        m.insert("line".into(), at.object.line.into());
        m.insert("column".into(), at.object.column.into());
    }
    m.extend(verdict_json(v));
    if let (Some(at), Some(Value::Array(errors))) = (at, m.get_mut("errors")) {
        for (e, p) in errors.iter_mut().zip(&at.errors) {
            if let Value::Object(e) = e {
                e.insert("line".into(), p.line.into());
                e.insert("column".into(), p.column.into());
            }
        }
    }
    m
}

impl<W: Write> Sink for Json<W> {
    fn checked_crd(&mut self, c: &CheckedCrd) -> std::io::Result<()> {
        let r = c.report;
        // The findings of some kinds, with where each stands, in the report's order.
        let found = |is: fn(Kind) -> bool| c.found.iter().filter(move |(f, _)| is(f.kind));
        let causes = |list: &[Cause], is| {
            let mut out = Vec::with_capacity(list.len());
            for (c, (_, p)) in list.iter().zip(found(is)) {
                let mut v = c.to_json();
                if let Value::Object(m) = &mut v {
                    m.insert("line".into(), p.line.into());
                    m.insert("column".into(), p.column.into());
                }
                out.push(v);
            }
            Value::Array(out)
        };
        let fields = |is| {
            found(is)
                .map(|(f, p)| json!({"field": f.field, "line": p.line, "column": p.column}))
                .collect::<Vec<_>>()
        };
        let sizes = found(|k| matches!(k, Kind::TooLarge(_) | Kind::SizeWarning(_)));
        let mut v = json!({
            "source": c.source,
            "line": c.object.line,
            "column": c.object.column,
            "crd": r.crd,
            "nonStructural": causes(&r.non_structural, |k| k == Kind::NonStructuralSchema),
            "crdErrors": causes(&r.crd_errors, |k| k == Kind::CrdInvalid),
            "warnings": r.warnings.iter().map(|w| &w.message).collect::<Vec<_>>(),
            "warningPositions": fields(|k| k == Kind::Warning),
            "storedVersionsNotServed": r.stored_versions_not_served,
            "storedVersionsNotServedPositions": fields(|k| k == Kind::StoredVersionNotServed),
            "sizes": {
                "requestBody": c.sizes.request_body,
                "lastAppliedAnnotation": c.sizes.last_applied,
                "annotationsWithLastApplied": c.sizes.annotations_with_last_applied,
                "storedProtobuf": c.sizes.stored_protobuf,
            },
            "sizeFindings": c.size_findings.iter().zip(sizes).map(|(f, (_, p))| {
                let mut v = f.to_json();
                v["line"] = p.line.into();
                v["column"] = p.column.into();
                v
            }).collect::<Vec<_>>(),
        });
        if let Some(e) = &r.internal_error {
            v["internalError"] = json!(e);
        }
        if let Some(c) = &r.condition {
            v["nonStructuralCondition"] =
                json!({"status": c.status, "reason": c.reason, "message": c.message});
        }
        writeln!(self.out, "{v}")
    }

    fn object_verdict(&mut self, o: &ObjectVerdict) -> std::io::Result<()> {
        let m = located_verdict_json(o.source, o.verdict, Some(o.at));
        self.line(&Value::Object(m))
    }

    fn planned_object(&mut self, o: &PlannedObject) -> std::io::Result<()> {
        let at = o.located.map(|(_, at)| at);
        let mut m = located_verdict_json(o.source, o.verdict, at);
        m.insert(
            "validBefore".into(),
            o.valid_before.map_or(Value::Null, Value::Bool),
        );
        writeln!(self.out, "{}", Value::Object(m))
    }

    fn schema_change(&mut self, c: &SchemaChange) -> std::io::Result<()> {
        let mut v = c.change.to_json();
        let p = (c.at)();
        v["line"] = p.line.into();
        v["column"] = p.column.into();
        writeln!(self.out, "{v}")
    }

    fn audited_crd(&mut self, c: &AuditedCrd) -> std::io::Result<()> {
        let causes = |l: &[Cause]| l.iter().map(Cause::to_json).collect::<Vec<_>>();
        let mut v = json!({
            "record": "crd",
            "crd": c.name,
            "nonStructural": causes(&c.report.non_structural),
            "crdErrors": causes(&c.report.crd_errors),
            "warnings": c.report.warnings.iter().map(|w| &w.message).collect::<Vec<_>>(),
            "storedVersionsNotServed": c.report.stored_versions_not_served,
            "sizeFindings": c.sizes.iter().map(size_limits::Finding::to_json).collect::<Vec<_>>(),
        });
        if let Some(e) = &c.report.internal_error {
            v["internalError"] = json!(e);
        }
        writeln!(self.out, "{v}")
    }

    fn audited_object(&mut self, crd: &str, v: &ShownVerdict) -> std::io::Result<()> {
        let mut m = Map::new();
        m.insert("record".into(), json!("object"));
        m.insert("crd".into(), json!(crd));
        m.extend(verdict_json(v));
        self.line(&Value::Object(m))
    }

    fn audited_row(&mut self, row: &Row) -> std::io::Result<()> {
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
        writeln!(self.out, "{v}")
    }

    /// Only `audit` writes its totals (a `summary` record); `plan`'s go to stderr.
    fn totals(&mut self, totals: &Totals) -> std::io::Result<()> {
        match totals {
            Totals::Plan(summaries) => {
                for line in plan_summary(summaries) {
                    eprintln!("{line}");
                }
                Ok(())
            }
            Totals::Audit { totals, .. } => writeln!(
                self.out,
                "{}",
                json!({
                    "record": "summary",
                    "crds": totals.crds,
                    "objects": totals.objects,
                    "invalid": totals.invalid,
                    "blocked": totals.blocked,
                    "unknownFields": totals.unknown_fields,
                    "crdsWithFindings": totals.crds_with_findings,
                    "errors": totals.errors,
                    "internalErrors": totals.internal_errors,
                })
            ),
            Totals::Check { .. } | Totals::Validate(_) | Totals::Diff { .. } => Ok(()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}
