//! `--output sarif`: SARIF 2.1.0 (OASIS), as GitHub code scanning and other SARIF viewers
//! read it: one log a run ([`log`]), with the rules of the command ([`rules`]), and a result
//! per finding, at its file's region or, for what a cluster holds, at a logical location
//! such as `widgets.example.com/default/my-widget/spec.replicas`. Results are written as
//! they come; the log ends with the rules and the invocation.

mod log;
mod rules;

use super::found::{
    AuditedCrd, CheckedCrd, ObjectVerdict, PlannedObject, Row, SchemaChange, Totals,
};
use super::{Command, Sink, change_line, object_name, totals_on_stderr};
use crate::audit::shown_verdict::ShownVerdict;
use crate::cli::crd_findings::Kind;
use crate::cli::locate::Located;
use crd_audit_engine::load::LoadError;
use crd_audit_engine::load::positions::Position;
use log::{Finding, Level, Location, Report};
use rules::*;
use serde_json::Value;
use std::io::Write;

pub(super) struct Sarif<W> {
    out: W,
    report: Report,
    /// `validate --strict`: unknown fields are errors.
    strict: bool,
}

impl<W: Write> Sarif<W> {
    pub(super) fn new(out: W, command: Command) -> Self {
        let report = match command {
            Command::Check => check_report(),
            Command::Validate { .. } => validate_report(),
            Command::Diff => diff_report(),
            Command::Plan => plan_report(),
            Command::Audit => audit_report(),
        };
        Sarif {
            out,
            report,
            strict: command == Command::Validate { strict: true },
        }
    }
}

impl<W: Write> Sink for Sarif<W> {
    /// A result per finding, at its field in the CRD's file; values that cannot be decoded
    /// are input errors of the document (see [`Sink::unreadable_crd`]).
    fn checked_crd(&mut self, c: &CheckedCrd) -> std::io::Result<()> {
        for (f, p) in c.found {
            if f.kind == Kind::InputError {
                continue;
            }
            self.report.result(
                &mut self.out,
                &Finding {
                    rule: crd_rule(f.kind),
                    level: None,
                    message: &f.message,
                    location: &Location::File {
                        path: c.file.to_string(),
                        line: p.line,
                        column: p.column,
                    },
                    object: &c.report.crd,
                    field: &f.field,
                    properties: vec![("source", c.source.into())],
                },
            )?;
        }
        Ok(())
    }

    fn object_verdict(&mut self, o: &ObjectVerdict) -> std::io::Result<()> {
        let place = Place::File {
            file: o.file,
            source: o.source,
            at: o.at,
        };
        let strict = self.strict;
        object_results(
            &mut self.report,
            &mut self.out,
            o.verdict,
            &place,
            o.known,
            strict,
            None,
        )
    }

    /// The findings of the objects the new revision refuses, filed under whether they were
    /// valid before; objects read from a cluster are named `crd/namespace/name`.
    fn planned_object(&mut self, o: &PlannedObject) -> std::io::Result<()> {
        let v = o.verdict;
        if v.valid() {
            return Ok(());
        }
        let object = match (v.namespace.as_str(), &o.located) {
            (_, Some(_)) => String::new(),
            ("", None) => format!("{}/{}", o.crd, v.name),
            (ns, None) => format!("{}/{ns}/{}", o.crd, v.name),
        };
        let place = match o.located {
            Some((file, at)) => Place::File {
                file,
                source: o.source,
                at,
            },
            None => Place::Cluster { object: &object },
        };
        object_results(
            &mut self.report,
            &mut self.out,
            v,
            &place,
            true,
            false,
            Some(plan_rule(o.valid_before)),
        )
    }

    fn schema_change(&mut self, c: &SchemaChange) -> std::io::Result<()> {
        let change = c.change;
        let p = (c.at)();
        self.report.result(
            &mut self.out,
            &Finding {
                rule: change_rule(change.class),
                level: None,
                message: &change_line(change),
                location: &Location::File {
                    path: c.file.to_string(),
                    line: p.line,
                    column: p.column,
                },
                object: c.crd,
                field: &format!("{}:{}", change.version, change.path),
                properties: vec![
                    ("version", change.version.clone().into()),
                    ("path", change.path.clone().into()),
                    ("changeKind", change.kind.into()),
                    ("class", change.class.as_str().into()),
                ],
            },
        )
    }

    /// A result per finding, named `crd/field`.
    fn audited_crd(&mut self, c: &AuditedCrd) -> std::io::Result<()> {
        for f in c.found {
            let location = Location::Logical {
                name: if f.field.is_empty() {
                    c.name.to_string()
                } else {
                    format!("{}/{}", c.name, f.field)
                },
                kind: "resource",
            };
            self.report.result(
                &mut self.out,
                &Finding {
                    rule: crd_rule(f.kind),
                    level: None,
                    message: &f.message,
                    location: &location,
                    object: c.name,
                    field: &f.field,
                    properties: Vec::new(),
                },
            )?;
        }
        Ok(())
    }

    fn audited_object(&mut self, crd: &str, v: &ShownVerdict) -> std::io::Result<()> {
        let object = format!("{crd}/{}/{}", v.namespace, v.name);
        let place = Place::Cluster { object: &object };
        object_results(
            &mut self.report,
            &mut self.out,
            v,
            &place,
            true,
            false,
            None,
        )
    }

    /// A CRD whose objects could not all be read is said with the invocation.
    fn audited_row(&mut self, row: &Row) -> std::io::Result<()> {
        if let Some(e) = &row.error {
            self.report
                .notify(Level::Error, format!("{}: {e}", row.crd));
        }
        Ok(())
    }

    fn unreadable(
        &mut self,
        file: &str,
        _doc: Option<usize>,
        e: &LoadError,
    ) -> std::io::Result<()> {
        input_error(&mut self.report, &mut self.out, file, e)
    }

    fn unreadable_crd(&mut self, file: &str, e: &LoadError) -> std::io::Result<()> {
        input_error(&mut self.report, &mut self.out, file, e)
    }

    fn problem(&mut self, message: String) {
        self.report.notify(Level::Error, message);
    }

    /// The counts are for people: `plan`'s and `audit`'s on stderr, beside the log.
    fn totals(&mut self, totals: &Totals) -> std::io::Result<()> {
        totals_on_stderr(totals);
        Ok(())
    }

    fn finish(&mut self, exit_status: u8) -> std::io::Result<()> {
        self.report.finish(&mut self.out, exit_status)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Where an object's findings stand: in a file (the object's position and each finding's),
/// or in a cluster (the object's name, `crd/namespace/name`).
enum Place<'a> {
    File {
        file: &'a str,
        source: &'a str,
        at: &'a Located,
    },
    Cluster {
        object: &'a str,
    },
}

impl Place<'_> {
    /// Where the finding at `field` stands: in a file at `at` (the object's position when
    /// unknown), in a cluster as the object's name and the field.
    fn location(&self, field: &str, at: Option<Position>) -> Location {
        match self {
            Place::File {
                file, at: located, ..
            } => {
                let p = at.unwrap_or(located.object);
                Location::File {
                    path: file.to_string(),
                    line: p.line,
                    column: p.column,
                }
            }
            Place::Cluster { object } => Location::Logical {
                name: if field.is_empty() {
                    object.to_string()
                } else {
                    format!("{object}/{field}")
                },
                kind: "object",
            },
        }
    }

    fn source(&self) -> Vec<(&'static str, Value)> {
        match self {
            Place::File { source, .. } => vec![("source", Value::from(*source))],
            Place::Cluster { .. } => Vec::new(),
        }
    }
}

/// The findings of one object's verdict: the request's refusal, each cause, each unknown
/// field (an error with `strict`). `known`: whether a CRD given defines the object's kind.
/// `plan_rule`: for `plan`, the rule of every finding (by whether the object was valid
/// before); unknown fields are no findings there.
fn object_results(
    r: &mut Report,
    out: &mut impl Write,
    v: &ShownVerdict,
    place: &Place,
    known: bool,
    strict: bool,
    plan_rule: Option<&'static str>,
) -> std::io::Result<()> {
    let object = object_name(v);
    let extra = |more: Vec<(&'static str, Value)>| {
        let mut p = place.source();
        p.extend(more);
        p
    };
    let at = |i: usize, pruned: bool| match place {
        Place::File { at, .. } => {
            if pruned {
                at.pruned.get(i).copied()
            } else {
                at.errors.get(i).copied()
            }
        }
        Place::Cluster { .. } => None,
    };
    if let Some(e) = &v.request_error {
        let rule = plan_rule.unwrap_or(if known {
            REQUEST_REFUSED.id
        } else {
            UNKNOWN_KIND.id
        });
        r.result(
            out,
            &Finding {
                rule,
                level: None,
                message: e,
                location: &place.location("", None),
                object: &object,
                field: "",
                properties: extra(vec![("code", v.code.into())]),
            },
        )?;
    }
    for (i, c) in v.errors.iter().enumerate() {
        let field = c.field.as_str();
        let rule = if v.internal_error {
            INTERNAL_ERROR.id
        } else {
            plan_rule.unwrap_or_else(|| cause_rule(c))
        };
        r.result(
            out,
            &Finding {
                rule,
                level: None,
                message: &c.message(),
                location: &place.location(field, at(i, false)),
                object: &object,
                field,
                properties: extra(vec![("causeType", c.kind.reason().into())]),
            },
        )?;
    }
    if plan_rule.is_none() {
        for (i, f) in v.pruned.iter().enumerate() {
            r.result(
                out,
                &Finding {
                    rule: UNKNOWN_FIELD.id,
                    level: strict.then_some(Level::Error),
                    message: &format!(
                        "unknown field {}",
                        crd_audit_engine::render::quote(f.as_str())
                    ),
                    location: &place.location(f, at(i, true)),
                    object: &object,
                    field: f,
                    properties: extra(Vec::new()),
                },
            )?;
        }
    }
    Ok(())
}

/// An unreadable document (or file) of `file`.
fn input_error(
    r: &mut Report,
    out: &mut impl Write,
    file: &str,
    e: &LoadError,
) -> std::io::Result<()> {
    let source = match e.doc {
        Some(d) => format!("{file}#{d}"),
        None => file.to_string(),
    };
    r.result(
        out,
        &Finding {
            rule: INPUT_ERROR.id,
            level: None,
            message: &e.message,
            location: &Location::File {
                path: file.to_string(),
                line: e.line.unwrap_or(0),
                column: 1,
            },
            object: &source,
            field: "",
            properties: vec![("source", source.clone().into())],
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crd_audit_engine::Cause;
    use serde_json::json;

    #[test]
    fn objects_without_a_file_are_named_by_logical_locations() {
        let v = crate::cli::sink::refused_widget(Cause::invalid(
            crd_audit_engine::Path::new("spec").child("replicas"),
            crd_audit_engine::BadValue::Int(9),
            "too many",
        ));
        let mut r = plan_report();
        let mut out = Vec::new();
        let place = Place::Cluster {
            object: "widgets.example.com/default/w",
        };
        object_results(
            &mut r,
            &mut out,
            &v,
            &place,
            true,
            false,
            Some(plan_rule(Some(true))),
        )
        .unwrap();
        r.finish(&mut out, 1).unwrap();
        let log: Value = serde_json::from_slice(&out).unwrap();
        let result = &log["runs"][0]["results"][0];
        assert_eq!(result["ruleId"], "NewlyInvalid");
        assert_eq!(
            result["locations"],
            json!([{"logicalLocations": [{
                "fullyQualifiedName": "widgets.example.com/default/w/spec.replicas",
                "kind": "object"
            }]}])
        );
        assert_eq!(
            result["message"]["text"],
            "spec.replicas: Invalid value: 9: too many"
        );
    }
}
