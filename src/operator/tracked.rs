//! One audited CRD as the operator tracks it: its revision (packed), what checking it
//! found, the audit of its objects, what its report last said and its object audit's task.
//! The decisions that change it are `state`'s; `Ctx::with_current` is where the object
//! audits change it.

use super::report_status::{self, LastChange};
use crate::audit::judge::{Audit, Key};
use crate::packed_crd::PackedCrd;
use crd_audit_engine::{CheckReport, Crd};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use tokio::task::JoinHandle;

/// One audited CRD.
pub struct Tracked {
    /// The whole revision, packed: diffed against the next one, recorded in the report, and
    /// compiled when its objects are judged.
    pub revision: Arc<PackedCrd>,
    pub check: CheckReport,
    /// The size limits the CRD exceeds as a manifest (usually none).
    pub sizes: Vec<crd_audit_engine::size_limits::Finding>,
    /// Identifies the object audit of the current revision; results of older ones are
    /// dropped.
    pub epoch: u64,
    /// The audit of the objects (of the previous revision until the first LIST of this one
    /// completes).
    pub audit: Audit,
    pub audited: bool,
    /// When this revision began to be tracked (its object audit started).
    pub since: tokio::time::Instant,
    pub audited_at: Option<Time>,
    pub audit_seconds: Option<f64>,
    /// Why the objects cannot be read or judged.
    pub blocked: Option<Blocked>,
    pub last_change: Option<LastChange>,
    /// Invalid objects before the last schema change, until its audit completes (then the
    /// SchemaTightened Event says how many objects it broke).
    pub tightened_from: Option<BTreeSet<Key>>,
    /// Condition type → (status, lastTransitionTime).
    pub times: BTreeMap<String, (String, Time)>,
    /// The fingerprint of the status last written (without times); `None` when the report
    /// must be written.
    pub written: Option<u64>,
    /// The status whose conditions the last Events were computed from.
    pub evented: Option<report_status::ConditionStatuses>,
    /// The `resourceVersion` of the CRD as last read: the CRD is read again when the
    /// Controller sees another (a new generation, or a change of its status or labels).
    pub resource_version: Option<String>,
    pub task: Option<JoinHandle<()>>,
}

impl Tracked {
    /// The CRD without its schemas ([`PackedCrd::shell`]).
    pub fn crd(&self) -> &Arc<Crd> {
        self.revision.shell()
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
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
