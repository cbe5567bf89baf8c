//! What every task of one leadership term shares (`Ctx`): the client and the configuration,
//! the registry of tracked CRDs (the registry lock is only ever held for short in-memory
//! work, never across a network call or a validation), the queued Events and the signals
//! between the tasks (a CRD whose state changed, for the Controller to reconcile; the API
//! server back; the report CRD served; a stop); and running engine work on blocking threads.

use crate::audit::config::Config;
use crate::judging_pool::JudgingPool;
use crate::operator::audits::validators::Validators;
use crate::operator::crds::state::Tracked;
use crate::operator::events::{EventQueue, EventSink, PendingEvent};
use crate::operator::metrics::Metrics;
use crate::operator::write_limit::WriteLimiter;
use crate::release::KubeVersion;
use crd_audit_engine::Crd;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::{Semaphore, mpsc};

/// A CRD as the Controller keeps it: its metadata (without managed fields or annotations).
pub type CrdMeta = PartialObjectMeta<CustomResourceDefinition>;

/// CRDs read and checked at once: a generated CRD is up to 1.7 MB of JSON, six times that
/// decoded.
const CONCURRENT_CRD_READS: usize = 2;

/// What every task of the controller shares: its dependencies, the registry of tracked
/// CRDs and the signals between the tasks.
pub struct Ctx {
    pub deps: Deps,
    pub crds: Registry,
    pub signals: Signals,
    /// The storage migrations of this term (`migrateStoredVersions`).
    pub migrations: crate::operator::migrations::tasks::Migrations,
}

/// What the tasks use, set when the leadership term starts.
pub struct Deps {
    pub client: kube::Client,
    /// Clients for the object watches (many watches share a connection).
    pub watch_clients: Option<Arc<crate::cluster::client::WatchClients>>,
    pub config: Config,
    pub metrics: Arc<Metrics>,
    pub limiter: Arc<WriteLimiter>,
    /// The Events to write (`emitEvents`), and where they go.
    pub events: Arc<EventQueue>,
    /// The blocking threads validations run on (shared with the gate).
    pub judging: JudgingPool,
    /// The compiled validators kept between judgements (within `validatorCacheMiB`).
    pub validators: Validators,
    /// Bounds the CRDs read and checked at once (`CONCURRENT_CRD_READS`).
    pub crd_reads: Semaphore,
    /// The API server's release (its minor version), whose CEL environments CRDs are checked
    /// and compiled in and which says whether updates are ratcheted (1.30 and later): set
    /// from its `/version` when the operator starts leading.
    pub release_minor: AtomicU32,
}

/// The tracked CRDs (the lock is only ever held for short in-memory work, never across a
/// network call or a validation), their retries, and what an earlier operator reported.
pub struct Registry {
    tracked: Mutex<BTreeMap<String, Tracked>>,
    /// The CRDs whose last reconcile failed, and when they are tried again.
    retries: Mutex<HashMap<String, crate::operator::crds::error::Retry>>,
    /// The reports an earlier operator wrote, for the CRDs' first reconciles.
    pub earlier_reports: crate::operator::reports::earlier::EarlierReports,
    /// The object audits, started and stopped by the CRDs' reconciles.
    pub audits: crate::operator::audits::tasks::AuditTasks,
    next_epoch: AtomicU64,
}

/// The CRDs `Ctx::changed` names, for the Controller of the term to reconcile
/// (`reconcile_on`): the receiving end of the channel `Ctx::new` makes.
pub struct Triggered(mpsc::UnboundedReceiver<ObjectRef<CrdMeta>>);

impl Triggered {
    /// The names, as the Controller takes its triggers.
    pub fn into_stream(self) -> impl futures::Stream<Item = ObjectRef<CrdMeta>> + Send {
        futures::stream::unfold(self.0, |mut rx| async move {
            let r = rx.recv().await?;
            Some((r, rx))
        })
    }
}

/// What the tasks tell each other.
pub struct Signals {
    /// The CRDs whose state changed, for the Controller to reconcile (`reconcile_on`).
    triggers: mpsc::UnboundedSender<ObjectRef<CrdMeta>>,
    /// Reports with findings waiting for the write budget: the clean ones wait until none
    /// is (on a fresh start with thousands of CRDs, the reports that matter come first).
    pub findings_waiting: AtomicUsize,
    /// Counts what the policy report writers look at changing (a CRD's state, the first
    /// LIST done, what `auto` knows of OpenReports): each writer sleeps until it moves or
    /// one of its own deadlines comes, and misses no change made while it was writing.
    policy_changed: tokio::sync::watch::Sender<u64>,
    /// The first LIST of CRDs is done: a CRD missing from the registry is gone, not unseen.
    pub crds_listed: AtomicBool,
    /// The API server refused a streaming list: every watch lists with pages instead.
    pub streaming_refused: AtomicBool,
    /// Counts the API server's recoveries: the CRD watch made progress again after failing.
    /// Retries that backed off during the outage (report writes, Events) go at once then.
    pub recovered: tokio::sync::watch::Sender<u64>,
    /// The report CRD is served (not absent, not being deleted): no report is written or
    /// deleted otherwise.
    pub reports_served: AtomicBool,
    /// Set when the controller stops (shutdown, a lost Lease): the Controller finishes the
    /// reconciles in flight and the Event pump flushes its queue, then both end.
    pub stopping: tokio::sync::watch::Sender<bool>,
}

impl Ctx {
    /// The API server's release.
    pub fn release(&self) -> KubeVersion {
        KubeVersion {
            minor: self
                .deps
                .release_minor
                .load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// How a watch gets its initial state, and whether it streams: from a server that
    /// offers streaming lists (1.34+, unless it refused one), one object at a time on the
    /// watch itself, so that no LIST response is held whole; elsewhere paginated LISTs of
    /// `page` objects.
    pub fn watch_config(&self, page: u32) -> (watcher::Config, bool) {
        if self.streams_lists() {
            (watcher::Config::default().streaming_lists(), true)
        } else {
            (watcher::Config::default().page_size(page), false)
        }
    }

    /// Whether watches stream their initial state: the server offers streaming lists
    /// (1.34+) and has not refused one.
    pub fn streams_lists(&self) -> bool {
        self.release().streams_lists() && !self.signals.streaming_refused.load(Ordering::Relaxed)
    }

    /// Whether `e` is the server refusing the streaming list of a watch that streams; if
    /// so, every watch falls back to paginated LISTs (the caller starts its watch again).
    pub fn refused_streaming(&self, streaming: bool, e: &watcher::Error) -> bool {
        if !streaming || !crate::operator::watch_backoff::refuses_streaming(e) {
            return false;
        }
        if !self.signals.streaming_refused.swap(true, Ordering::Relaxed) {
            tracing::warn!(error = %e, "the API server refused a streaming list (WatchList turned off?); listing with pages");
        }
        true
    }

    /// Whether the API server validates updates with ratcheting.
    pub fn ratcheting(&self) -> bool {
        self.release().ratchets()
    }

    pub fn new(
        client: kube::Client,
        watch_clients: Option<Arc<crate::cluster::client::WatchClients>>,
        config: Config,
        metrics: Arc<Metrics>,
        identity: &str,
        judging: JudgingPool,
    ) -> (Arc<Ctx>, Triggered) {
        let limiter = Arc::new(WriteLimiter::new(config.api_qps, config.api_burst));
        let validators = Validators::new(config.validator_cache_mib.saturating_mul(1 << 20));
        let (triggers, triggered) = mpsc::unbounded_channel();
        let audits = crate::operator::audits::tasks::AuditTasks::new(config.full_resync_interval);
        let ctx = Arc::new(Ctx {
            deps: Deps {
                validators,
                events: Arc::new(EventQueue::new(
                    EventSink::new(client.clone(), identity, metrics.clone(), limiter.clone()),
                    config.emit_events,
                )),
                client,
                watch_clients,
                config,
                metrics,
                limiter,
                judging,
                crd_reads: Semaphore::new(CONCURRENT_CRD_READS),
                release_minor: AtomicU32::new(KubeVersion::default().minor),
            },
            crds: Registry {
                tracked: Mutex::new(BTreeMap::new()),
                retries: Mutex::default(),
                earlier_reports: Default::default(),
                audits,
                next_epoch: AtomicU64::new(1),
            },
            signals: Signals {
                triggers,
                findings_waiting: AtomicUsize::new(0),
                policy_changed: tokio::sync::watch::Sender::new(0),
                crds_listed: AtomicBool::new(false),
                streaming_refused: AtomicBool::new(false),
                recovered: tokio::sync::watch::Sender::new(0),
                reports_served: AtomicBool::new(true),
                stopping: tokio::sync::watch::Sender::new(false),
            },
            migrations: Default::default(),
        });
        (ctx, Triggered(triggered))
    }

    pub fn registry(&self) -> MutexGuard<'_, BTreeMap<String, Tracked>> {
        self.crds.tracked.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn retries(
        &self,
    ) -> MutexGuard<'_, HashMap<String, crate::operator::crds::error::Retry>> {
        self.crds.retries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues an Event; it is written by the Event pump, retried until the server takes it.
    pub fn queue_event(&self, ev: PendingEvent) {
        self.deps.events.push(ev);
    }

    /// The state of the tracked CRD `crd` changed: the Controller reconciles it (publishes
    /// its metrics and Events, writes its report if what it says changed), and the
    /// PolicyReport writer looks again.
    pub fn changed(&self, crd: &str) {
        // Fails only once the Controller has stopped.
        let _ = self.signals.triggers.send(ObjectRef::new(crd));
        self.policy_changed();
    }

    /// Something the policy report writers look at changed.
    pub fn policy_changed(&self) {
        self.signals
            .policy_changed
            .send_modify(|n| *n = n.wrapping_add(1));
    }

    /// What wakes a policy report writer.
    pub fn policy_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.signals.policy_changed.subscribe()
    }

    /// Every tracked CRD is reconciled again.
    pub fn every_crd_changed(&self) {
        let names: Vec<String> = self.registry().keys().cloned().collect();
        for name in names {
            self.changed(&name);
        }
    }

    /// The API server answers again after failing: whatever backed off during the outage is
    /// retried now, not when its backoff (up to a minute) runs out.
    pub fn api_recovered(&self) {
        self.signals.recovered.send_modify(|n| *n += 1);
        self.every_crd_changed();
    }

    /// The report CRD appeared, became established, is being deleted or went away. While it
    /// is not served nothing is written (the finalizer of a CRD being deleted removes its
    /// objects, and each report written back would hold the deletion up); when it is served
    /// again, every report is written again at once (they went with it).
    pub fn reports_served(&self, served: bool) {
        let was = self.signals.reports_served.swap(served, Ordering::SeqCst);
        if served && !was {
            tracing::info!("the SchemaAudit CRD is served again; writing every report");
            for t in self.registry().values_mut() {
                crate::operator::crds::state::on_report_gone(t);
            }
            self.api_recovered();
        } else if !served && was {
            tracing::warn!(
                "the SchemaAudit CRD is being deleted or is absent; no report is written until it is back"
            );
        }
    }

    pub(crate) fn epoch(&self) -> u64 {
        self.crds.next_epoch.fetch_add(1, Ordering::Relaxed)
    }

    /// Runs `f` on the tracked CRD `crd` if its current audit is still the one of `epoch`
    /// (the one place that test is made): `None` when the CRD went away or a newer revision
    /// (or a restarted audit) took over, and whatever the caller was doing is stale. The
    /// Controller reconciles the CRD after a change.
    pub(crate) fn with_current<R>(
        &self,
        crd: &str,
        epoch: u64,
        f: impl FnOnce(&mut Tracked) -> R,
    ) -> Option<R> {
        let mut reg = self.registry();
        let r = reg.get_mut(crd).filter(|t| t.epoch() == epoch).map(f);
        drop(reg);
        if r.is_some() {
            self.changed(crd);
        }
        r
    }
}

/// The reference of an Event about a CRD.
pub fn crd_reference(crd: &Crd) -> ObjectReference {
    ObjectReference {
        api_version: Some("apiextensions.k8s.io/v1".into()),
        kind: Some("CustomResourceDefinition".into()),
        name: Some(crd.name.clone()),
        uid: Some(crd.uid.clone()).filter(|u| !u.is_empty()),
        ..Default::default()
    }
}

pub use crate::judging_pool::Panicked;

/// Runs CPU-heavy engine work in the judging pool; a panic becomes `Err(Panicked)`.
pub(crate) async fn blocking<T: Send + 'static>(
    ctx: &Ctx,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Panicked> {
    ctx.deps.judging.run(f).await
}
