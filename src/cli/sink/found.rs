//! What the commands hand their sink: each kind of finding with where it stands, and the
//! totals that end a run. Nothing here depends on an output format.

use crate::audit::shown_verdict::ShownVerdict;
use crate::cli::crd_findings::{self, Level};
use crate::cli::locate::Located;
use crate::cli::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR};
use crd_audit_engine::load::positions::Position;
use crd_audit_engine::size_limits;
use crd_audit_engine::{Change, CheckReport};
use std::collections::BTreeMap;
use std::time::Duration;

/// `check`: a CRD, checked.
pub struct CheckedCrd<'a> {
    /// The file, as given.
    pub file: &'a str,
    /// `file#document`.
    pub source: &'a str,
    pub report: &'a CheckReport,
    /// The CRD's sizes, measured on its document as read.
    pub sizes: &'a size_limits::Sizes,
    /// The size limits the CRD is above (also in `found`).
    pub size_findings: &'a [size_limits::Finding],
    /// Every finding ([`crd_findings::list`], in its order) and where it stands in the file.
    pub found: &'a [(crd_findings::Finding, Position)],
    /// Where the CRD stands.
    pub object: Position,
}

/// `validate`: an object, judged.
pub struct ObjectVerdict<'a> {
    /// The file, as given.
    pub file: &'a str,
    /// `file#document`.
    pub source: &'a str,
    pub verdict: &'a ShownVerdict,
    /// Whether a CRD given defines the object's kind.
    pub known: bool,
    /// Where the object and each of its findings stand in the file.
    pub at: &'a Located,
}

/// `plan`: an object of the CRD, judged as stored data under the new revision.
pub struct PlannedObject<'a> {
    /// `file#document`, or `cluster:version/namespace/name`.
    pub source: &'a str,
    pub verdict: &'a ShownVerdict,
    /// Whether the current revision accepts it (`None`: no current revision).
    pub valid_before: Option<bool>,
    /// An object of a file: the file, and where the object and its findings stand.
    pub located: Option<(&'a str, &'a Located)>,
    /// The CRD's name (an object read from a cluster is named after it).
    pub crd: &'a str,
}

/// `diff`: a change between two revisions of a CRD.
pub struct SchemaChange<'a> {
    /// The CRD's name.
    pub crd: &'a str,
    /// The new revision's file, as given.
    pub file: &'a str,
    pub change: &'a Change,
    /// Where the change stands in the new revision's file (its document is read again when
    /// a sink first asks).
    pub at: &'a dyn Fn() -> Position,
}

/// `audit`: a CRD of the cluster, checked.
pub struct AuditedCrd<'a> {
    /// The CRD's name.
    pub name: &'a str,
    pub report: &'a CheckReport,
    /// The size limits the CRD is above (also in `found`).
    pub sizes: &'a [size_limits::Finding],
    /// Every finding ([`crd_findings::list`]).
    pub found: &'a [crd_findings::Finding],
}

/// `audit`: what the audit of one CRD found (a row of the summary table).
#[derive(Debug, Default)]
pub struct Row {
    pub crd: String,
    pub storage: String,
    pub objects: u64,
    pub invalid: u64,
    /// Invalid objects whose unchanged update the server refuses (stuck).
    pub blocked: u64,
    pub unknown_fields: u64,
    pub crd_findings: usize,
    pub crd_warnings: usize,
    /// Why the objects could not all be read or judged.
    pub error: Option<String>,
    pub internal_errors: u64,
}

impl Row {
    /// The row of a CRD with these findings, before its objects are read.
    pub fn new(crd: &str, found: &[crd_findings::Finding]) -> Row {
        let warnings = found.iter().filter(|f| f.level() == Level::Warning).count();
        Row {
            crd: crd.to_string(),
            crd_findings: found.len() - warnings,
            crd_warnings: warnings,
            ..Row::default()
        }
    }
}

/// `audit`: the totals of the whole audit.
#[derive(Default)]
pub struct AuditTotals {
    pub crds: usize,
    pub objects: u64,
    pub invalid: u64,
    pub blocked: u64,
    pub unknown_fields: u64,
    pub crds_with_findings: usize,
    pub crds_with_invalid: usize,
    pub errors: usize,
    pub internal_errors: u64,
}

impl AuditTotals {
    pub fn of(rows: &[Row]) -> AuditTotals {
        let mut t = AuditTotals {
            crds: rows.len(),
            ..AuditTotals::default()
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

    /// The exit status of the audit.
    pub fn status(&self) -> u8 {
        if self.errors > 0 || self.internal_errors > 0 {
            EXIT_INPUT_ERROR
        } else if self.invalid > 0 || self.crds_with_findings > 0 {
            EXIT_FINDINGS
        } else {
            EXIT_CLEAN
        }
    }
}

/// `validate`: the totals of a run.
#[derive(Default)]
pub struct ValidateTotals {
    pub objects: usize,
    pub invalid: usize,
    pub unknown: usize,
    pub pruned: usize,
    pub input_errors: usize,
    pub rules_not_evaluated: usize,
    /// Objects whose judgement hit a bug (a caught panic), and threads that stopped on one.
    pub internal_errors: usize,
}

impl ValidateTotals {
    /// Counts an object's verdict (`known`: a CRD given defines its kind).
    pub fn count(&mut self, v: &ShownVerdict, known: bool) {
        self.objects += 1;
        if !known {
            self.unknown += 1;
        }
        if !v.valid() {
            self.invalid += 1;
        }
        if !v.pruned.is_empty() {
            self.pruned += 1;
        }
        self.rules_not_evaluated += v.rules_not_evaluated;
        if v.internal_error {
            self.internal_errors += 1;
        }
    }
}

/// `plan`: the objects read at one version.
#[derive(Default)]
pub struct PlanSummary {
    pub read: usize,
    pub newly_invalid: usize,
    pub already_invalid: usize,
    /// Invalid objects the API server would refuse to update at all under the new CRD.
    pub stuck: usize,
}

/// The counts of a whole run, by command.
pub enum Totals<'a> {
    Check {
        checked: usize,
        /// CRDs with findings.
        findings: usize,
        input_errors: usize,
        /// Bugs in crd-audit met.
        internal_errors: usize,
    },
    Validate(&'a ValidateTotals),
    Diff {
        /// The CRD's name.
        crd: &'a str,
        changes: &'a [Change],
    },
    /// By version.
    Plan(&'a BTreeMap<String, PlanSummary>),
    Audit {
        rows: &'a [Row],
        totals: &'a AuditTotals,
        elapsed: Duration,
    },
}
