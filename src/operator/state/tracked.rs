//! One audited CRD as the operator tracks it: its revision (packed), what checking it
//! found, the audit of its objects and what its report last said (the task that audits its
//! objects is `audits::tasks`').
//! Its fields are `state`'s alone (`pub(super)`): every other module reads them through the
//! accessors below, and only `state` changes them, so the compiler holds the rule that one
//! owner changes a CRD's state.

use crate::audit::judge::{Audit, Key};
use crate::audit::schema_audit::SchemaAuditStatus;
use crate::operator::status::conversions::Conversions;
use crate::operator::status::{self as report_status, Inputs, LastChange};
use crate::packed_crd::PackedCrd;
use crd_audit_engine::{CheckReport, Crd};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// One audited CRD.
pub struct Tracked {
    /// The whole revision, packed: diffed against the next one, recorded in the report, and
    /// compiled when its objects are judged.
    pub(super) revision: Arc<PackedCrd>,
    pub(super) check: CheckReport,
    /// The size limits the CRD exceeds as a manifest (usually none).
    pub(super) sizes: Vec<crd_audit_engine::size_limits::Finding>,
    /// Identifies the object audit of the current revision; results of older ones are
    /// dropped.
    pub(super) epoch: u64,
    /// The audit of the objects (of the previous revision until the first LIST of this one
    /// completes).
    pub(super) audit: Audit,
    pub(super) audited: bool,
    /// When this revision began to be tracked (its object audit started).
    pub(super) since: tokio::time::Instant,
    pub(super) audited_at: Option<Time>,
    pub(super) audit_seconds: Option<f64>,
    /// Why the objects cannot be read or judged.
    pub(super) blocked: Option<Blocked>,
    pub(super) last_change: Option<LastChange>,
    /// Invalid objects before the last schema change, until its audit completes (then the
    /// SchemaTightened Event says how many objects it broke).
    pub(super) tightened_from: Option<BTreeSet<Key>>,
    /// What the report of an earlier operator listed as invalid: until the first complete
    /// audit, those objects were reported already (their Events are not emitted again).
    pub(super) reported_invalid: Option<ReportedInvalid>,
    /// Condition type → (status, lastTransitionTime).
    pub(super) times: BTreeMap<String, (String, Time)>,
    /// The fingerprint of the status last written (without times); `None` when the report
    /// must be written.
    pub(super) written: Option<u64>,
    /// The status whose conditions the last Events were computed from.
    pub(super) evented: Option<report_status::ConditionStatuses>,
    /// The `resourceVersion` of the CRD as last read: the CRD is read again when the
    /// Controller sees another (a new generation, or a change of its status or labels).
    pub(super) resource_version: Option<String>,
    /// The conversion round trips of the stored objects (`auditConversions`, a CRD
    /// converted by a webhook); `None` otherwise.
    pub(super) conversions: Option<Conversions>,
}

impl Tracked {
    /// The CRD without its schemas ([`PackedCrd::shell`]).
    pub fn crd(&self) -> &Arc<Crd> {
        self.revision.shell()
    }

    /// The whole revision, packed.
    pub fn revision(&self) -> &Arc<PackedCrd> {
        &self.revision
    }

    pub fn check(&self) -> &CheckReport {
        &self.check
    }

    pub fn sizes(&self) -> &[crd_audit_engine::size_limits::Finding] {
        &self.sizes
    }

    /// The object audit of the current revision.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    pub fn audit(&self) -> &Audit {
        &self.audit
    }

    /// The first complete LIST of this revision's objects is judged.
    pub fn audited(&self) -> bool {
        self.audited
    }

    pub fn since(&self) -> tokio::time::Instant {
        self.since
    }

    pub fn audited_at(&self) -> Option<&Time> {
        self.audited_at.as_ref()
    }

    pub fn audit_seconds(&self) -> Option<f64> {
        self.audit_seconds
    }

    pub fn blocked(&self) -> Option<&Blocked> {
        self.blocked.as_ref()
    }

    pub fn last_change(&self) -> Option<&LastChange> {
        self.last_change.as_ref()
    }

    /// The fingerprint of the status last written.
    pub fn written(&self) -> Option<u64> {
        self.written
    }

    pub fn resource_version(&self) -> Option<&str> {
        self.resource_version.as_deref()
    }

    pub fn conversions(&self) -> Option<&Conversions> {
        self.conversions.as_ref()
    }

    /// The status its report should have now (without times). `max_listed`:
    /// `maxListedObjects`.
    pub fn desired_status(&self, max_listed: usize) -> SchemaAuditStatus {
        let blocked = self.blocked().map(|b| b.message());
        let mut s = report_status::status(&Inputs {
            crd: self.crd(),
            check: self.check(),
            audit: self.audit(),
            audited: self.audited(),
            forbidden: blocked.as_deref(),
            last_change: self.last_change(),
            max_listed,
            audit_seconds: self.audit_seconds(),
            internal_errors: self.audit().internal_errors(),
            sizes: self.sizes(),
            conversions: self.conversions(),
        });
        // Why the objects could not be judged: the reason of both conditions about them.
        if let Some(blocked) = self.blocked() {
            for c in s
                .conditions
                .iter_mut()
                .filter(|c| c.type_ == "InstancesValid" || c.type_ == "UpdatesAccepted")
            {
                c.reason = blocked.reason().to_string();
            }
        }
        s.last_audit_time = self.audited_at().cloned();
        s
    }

    /// Whether its report has findings (invalid objects, a tightening, CRD problems, an
    /// audit that cannot run): on a fresh start with thousands of CRDs, writes are paced by
    /// `apiQps`, and these reports must not wait behind thousands of clean ones.
    pub fn has_findings(&self) -> bool {
        self.audit().invalid_count() > 0
            || self.blocked().is_some()
            || self.check().has_findings()
            || self.check().internal_error.is_some()
            || self.last_change().is_some_and(|c| c.tightened)
            || matches!(self.conversions(), Some(Conversions::Checked(f)) if f.any())
    }
}

/// The invalid objects an earlier operator's report listed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReportedInvalid {
    pub(super) keys: BTreeSet<Key>,
    /// The list held every invalid object (`invalidObjectsTruncated` was false). When it did
    /// not, the objects it left out were reported too, as far as anyone can tell.
    pub(super) complete: bool,
}

/// Why a CRD's objects cannot be read or judged: the report's InstancesValid is Unknown with
/// the reason and message of this.
#[derive(Clone, Debug, PartialEq)]
pub enum Blocked {
    /// The API server refused to list them: what it said.
    Forbidden(String),
    /// The object audit stopped on a bug and is restarted: the panic's message.
    AuditRestarted(String),
    /// The revision could not be compiled (a bug): why.
    NotCompiled(String),
}

impl Blocked {
    /// The reason of the report's InstancesValid condition.
    pub fn reason(&self) -> &'static str {
        match self {
            Blocked::Forbidden(_) => "Forbidden",
            Blocked::AuditRestarted(_) | Blocked::NotCompiled(_) => "InternalError",
        }
    }

    /// The message of the report's InstancesValid condition.
    pub fn message(&self) -> String {
        match self {
            Blocked::Forbidden(m) | Blocked::NotCompiled(m) => m.clone(),
            Blocked::AuditRestarted(m) => {
                format!("the audit of the objects stopped on a bug and restarts: {m}")
            }
        }
    }

    /// Whether a complete audit of the objects ends it: a LIST that was refused, or an audit
    /// that was restarted, has now worked; a revision that cannot be compiled stays so.
    pub fn ended_by_a_complete_audit(&self) -> bool {
        matches!(self, Blocked::Forbidden(_) | Blocked::AuditRestarted(_))
    }
}
