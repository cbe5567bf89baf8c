//! What reading a CRD does to the registry: a new or changed CRD is checked, diffed against
//! the revision judged before (or the one an earlier operator recorded in its report),
//! and packed (the reconcile then starts the audit of its objects); a new status is checked again; the report CRD
//! itself says whether reports can be written.

use crate::audit::read_crd::read_crd;
use crate::judging_pool::{JudgingPool, Panicked};
use crate::operator::crds::Reconciler;
use crate::operator::metrics::Metrics;
use crate::operator::reports::earlier::EarlierReports;
use crate::operator::server::ServerInfo;
use crate::operator::state::{Earlier, Revision, Seen};
use crate::operator::status::{self as report_status, LastChange};
use crate::packed_crd::PackedCrd;
use crd_audit_engine::Crd;
use crd_audit_engine::{CheckReport, check_crd, size_limits};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::{Semaphore, SemaphorePermit};

/// CRDs read and checked at once: a generated CRD is up to 1.7 MB of JSON, six times that
/// decoded.
const CONCURRENT_CRD_READS: usize = 2;

/// What reading a new revision takes: the judging pool it is checked in, the API server's
/// release it is checked for, what an earlier operator reported, the bound on CRDs read at
/// once, and the epochs revisions are tracked under.
pub struct RevisionReader {
    pub judging: JudgingPool,
    pub server: Arc<ServerInfo>,
    pub metrics: Arc<Metrics>,
    pub earlier: EarlierReports,
    /// The client the earlier reports are read with.
    pub client: kube::Client,
    crd_reads: Semaphore,
    next_epoch: AtomicU64,
}

impl RevisionReader {
    pub fn new(
        client: kube::Client,
        judging: JudgingPool,
        server: Arc<ServerInfo>,
        metrics: Arc<Metrics>,
    ) -> RevisionReader {
        RevisionReader {
            judging,
            server,
            metrics,
            earlier: EarlierReports::default(),
            client,
            crd_reads: Semaphore::new(CONCURRENT_CRD_READS),
            next_epoch: AtomicU64::new(1),
        }
    }

    /// A turn to read and check a CRD (`CONCURRENT_CRD_READS` at once).
    pub async fn reading(&self) -> Option<SemaphorePermit<'_>> {
        self.crd_reads.acquire().await.ok()
    }

    fn epoch(&self) -> u64 {
        self.next_epoch.fetch_add(1, Ordering::Relaxed)
    }

    /// Runs CPU-heavy engine work in the judging pool; a panic becomes `Err(Panicked)`.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Panicked> {
        self.judging.run(f).await
    }
}

/// A CRD read (new, or another `resourceVersion` than the one read before): compile and
/// check it off the executor, diff it against the revision audited before, and track it
/// (the reconcile then starts the audit of its objects). What crd-audit cannot read or check is counted and logged as an
/// internal error (and reported, when it is the check that failed): it is not retried until
/// the CRD changes.
impl Reconciler {
    #[tracing::instrument(name = "read_revision", skip_all, fields(crd = raw["metadata"]["name"].as_str().unwrap_or_default()))]
    pub(crate) async fn read_revision(&self, raw: Value) {
        let rv = &self.revisions;
        if let Some(served) = report_crd_served(&raw) {
            self.reports_served(served);
            return;
        }
        let resource_version = raw["metadata"]["resourceVersion"]
            .as_str()
            .map(str::to_string);
        let crd = match read_crd(&raw) {
            Ok(c) => Arc::new(c),
            Err(e) => {
                // The server served it: crd-audit's own failure, counted; the others go on.
                self.metrics.internal_errors.inc();
                tracing::error!(crd = %e.name, reason = %e.reason, "{e}");
                return;
            }
        };
        if !self.groups.audits(&crd.group)
            || crate::audit::schema_audit::is_report_crd(&crd.group, &crd.kind)
        {
            drop(raw);
            if self.states.tracks(&crd.name) {
                self.remove(&crd.name);
            }
            return;
        }
        // An update of what the audit does not read is recorded as read: nothing to check again.
        let seen = self.states.seen(&crd, resource_version.clone());
        if matches!(seen, Seen::Unchanged) {
            return;
        }
        // Its size as a manifest, measured on the document (which it then frees): lengths only.
        let sizes = size_limits::findings(&size_limits::measure(&size_limits::as_manifest(raw)));
        let check = {
            let c = crd.clone();
            let release = rv.server.release().engine();
            rv.blocking(move || check_crd(&*c, release)).await
        }
        .unwrap_or_else(|panic| {
            let mut report = CheckReport::default();
            report.crd = crd.name.clone();
            report.internal_error = Some(panic.0);
            report
        });
        if let Some(e) = &check.internal_error {
            self.metrics.internal_errors.inc();
            tracing::error!(crd = %crd.name, error = %e, "checking the CRD failed (internal error)");
        }
        let change = match &seen {
            Seen::Unchanged => return,
            Seen::StatusOnly => {
                self.states
                    .status_changed(&crd, check, sizes, resource_version);
                return;
            }
            Seen::Changed(old) => {
                let (old, new) = (old.clone(), crd.clone());
                let changed = rv
                    .blocking(move || {
                        let old = old.unpack()?;
                        let changes = crd_audit_engine::diff(&old, &new);
                        Ok::<_, crate::packed_crd::UnpackError>(LastChange::from_diff(
                            &old, &new, &changes,
                        ))
                    })
                    .await;
                match changed {
                    Ok(Ok(c)) => Some(c),
                    Ok(Err(e)) => {
                        tracing::error!(crd = %crd.name, error = %e, "the earlier CRD could not be read again (internal error)");
                        None
                    }
                    Err(panic) => {
                        tracing::error!(crd = %crd.name, panic = %panic, "diffing the CRD failed (internal error)");
                        None
                    }
                }
            }
            Seen::New => None,
        };
        // First sight: what an earlier operator reported about this CRD.
        let earlier = match seen {
            Seen::New => earlier_report(rv, &crd).await,
            _ => None,
        };
        // What stays of the revision: its shell and its schemas packed. It is compiled only when
        // its objects are judged (`audits::objects`, through the cache of compiled revisions).
        let name = crd.name.clone();
        let revision = rv
            .blocking(move || {
                PackedCrd::pack(Arc::try_unwrap(crd).unwrap_or_else(|shared| Crd::clone(&shared)))
            })
            .await;
        let revision = match revision {
            Ok(r) => Arc::new(r),
            Err(panic) => {
                self.metrics.internal_errors.inc();
                tracing::error!(crd = %name, panic = %panic, "packing the CRD failed (internal error)");
                return;
            }
        };
        let crd = revision.shell().clone();
        self.audits.forget_compiled(&crd.name);
        if let Some(c) = &change {
            for e in &c.report.changes {
                self.metrics.schema_changed(&crd.name, &e.class);
            }
        }
        let new = Revision {
            revision,
            check,
            sizes,
            epoch: rv.epoch(),
        };
        tracing::info!(crd = %crd.name, generation = crd.generation, "auditing CRD");
        // The reconcile reading it starts the audit of its objects (`audits`).
        self.states
            .new_revision(&crd.name, new, change, earlier, resource_version);
    }
}

/// Whether the report CRD is served (established, not being deleted), if `raw` is it.
pub(crate) fn report_crd_served(raw: &Value) -> Option<bool> {
    let group = raw["spec"]["group"].as_str()?;
    let kind = raw["spec"]["names"]["kind"].as_str()?;
    if !crate::audit::schema_audit::is_report_crd(group, kind) {
        return None;
    }
    let established = raw["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Established" && c["status"] == "True");
    Some(established && raw["metadata"]["deletionTimestamp"].is_null())
}

async fn earlier_report(rv: &RevisionReader, crd: &Arc<Crd>) -> Option<Earlier> {
    let report = rv
        .earlier
        .take(&rv.client, &rv.metrics, &crd.name, crd.generation)
        .await?;
    let owned = report
        .metadata
        .owner_references
        .as_ref()
        .is_none_or(|o| o.iter().any(|r| r.uid == crd.uid));
    if !owned {
        return None; // the report of an earlier CRD of the same name
    }
    let status = report.status.unwrap_or_default();
    let recorded = report
        .spec
        .audited_revision
        .as_ref()
        .and_then(|rev| report_status::recorded_revision(crd, rev));
    let (last_change, tightened_from) = match recorded {
        Some(old) if old.generation != crd.generation => {
            // Changed while no operator ran: diff the change now.
            let (o, n) = (Arc::new(old), crd.clone());
            let change = rv
                .blocking(move || LastChange::from_diff(&o, &n, &crd_audit_engine::diff(&o, &n)))
                .await
                .ok();
            let before = status
                .invalid_objects
                .iter()
                .map(|i| (i.namespace.clone(), i.name.clone()))
                .collect();
            match change {
                // No schema changed since the report's revision: its last change stands.
                Some(c) if c.report.total_changes == Some(0) => {
                    (LastChange::reported(&status), None)
                }
                change => {
                    let tightened = change.as_ref().is_some_and(|c| c.tightened);
                    (change, tightened.then_some(before))
                }
            }
        }
        _ => (LastChange::restore(&status, crd.generation), None),
    };
    let times = status
        .conditions
        .iter()
        .map(|c| {
            (
                c.type_.clone(),
                (c.status.clone(), c.last_transition_time.clone()),
            )
        })
        .collect();
    Some(Earlier {
        last_change,
        times,
        status: Some(status),
        tightened_from,
    })
}
