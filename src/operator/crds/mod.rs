//! The CRDs as the Controller reconciles them: the reconcile and its error policy
//! (`reconcile`, `error`), what reading a CRD does (`revision`), and a CRD that went away
//! (`removal`). [`Reconciler`] is the Controller's context: what the reconciles use, each
//! part a handle of its own (the states, the object audits, the reports due, the migrations,
//! the conversion round trips, what reading a revision takes).

pub mod error;
pub mod reconcile;
pub mod removal;
pub mod revision;

use crate::audit::config::GroupFilter;
use crate::operator::audits::Auditor;
use crate::operator::conversions::ConversionAuditor;
use crate::operator::metrics::Metrics;
use crate::operator::migrations::Migrator;
use crate::operator::reports::due::DueReports;
use crate::operator::state::CrdStates;
use std::sync::Arc;

/// What the Controller's reconciles (and its error policy) use.
pub struct Reconciler {
    /// To read a CRD whole (the Controller's store keeps only its metadata).
    pub client: kube::Client,
    /// `includeGroups`, `excludeGroups`.
    pub groups: GroupFilter,
    pub states: Arc<CrdStates>,
    /// What reading a new revision takes.
    pub revisions: revision::RevisionReader,
    /// The object audits, one per CRD, started and stopped here.
    pub audits: Auditor,
    /// The reports due, their metrics and the Events of their conditions.
    pub reports: DueReports,
    /// Storage migrations (`migrateStoredVersions`), if on.
    pub migrations: Option<Migrator>,
    /// Conversion round trips (`auditConversions`), if on.
    pub conversions: Option<ConversionAuditor>,
    pub metrics: Arc<Metrics>,
    /// The error policy's failures in a row, by CRD.
    pub backoffs: error::Backoffs,
    /// Counts the API server's recoveries (the CRD watch made progress again after failing):
    /// the writer retries what backed off at once, and the error policy starts its backoffs
    /// again.
    pub recovered: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Reconciler {
    /// The API server answers again after failing: whatever backed off during the outage is
    /// retried now, not when its backoff (up to a minute) runs out.
    pub fn api_recovered(&self) {
        self.recovered.send_modify(|n| *n += 1);
        self.states.wake_all();
    }

    /// The report CRD appeared, became established, is being deleted or went away. While it
    /// is not served nothing is written (the finalizer of a CRD being deleted removes its
    /// objects, and each report written back would hold the deletion up); when it is served
    /// again, every report is written again at once (they went with it).
    pub fn reports_served(&self, served: bool) {
        if !self.reports.queue.set_served(served) {
            return;
        }
        if served {
            tracing::info!("the SchemaAudit CRD is served again; writing every report");
            self.states.every_report_gone();
            self.api_recovered();
        } else {
            tracing::warn!(
                "the SchemaAudit CRD is being deleted or is absent; no report is written until it is back"
            );
        }
    }
}
