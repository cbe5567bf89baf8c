//! What the tasks of one leadership term share (`Ctx`), in parts each task can take alone:
//! the dependencies (`Deps`: client, configuration, metrics, write budget, Event queue,
//! judging pool, validator cache, what the API server offers), the tracked CRDs' states and
//! the channel that tells the Controller one changed (`CrdStates`: what an object audit and a
//! policy report writer record and read), the reconciles' own bookkeeping (`Registry`) and
//! the signals between the tasks (the API server back, a stop). The
//! lock of the states is only ever held for short in-memory work, never across a network
//! call or a validation.

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
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::{Semaphore, mpsc};

/// A CRD as the Controller keeps it: its metadata (without managed fields or annotations).
pub type CrdMeta = PartialObjectMeta<CustomResourceDefinition>;

/// CRDs read and checked at once: a generated CRD is up to 1.7 MB of JSON, six times that
/// decoded.
const CONCURRENT_CRD_READS: usize = 2;

/// What every task of the controller shares, in parts: a task that needs only some is
/// handed those (an object audit: `audits::objects::AuditHandle`; a policy report writer: `deps` and
/// `crds.states`; the report watch the same two; the writer of the reports and Events those
/// two and the queue of reports due, `crds.reports`).
pub struct Ctx {
    pub deps: Arc<Deps>,
    pub crds: Registry,
    pub signals: Signals,
    /// The storage migrations of this term (`migrateStoredVersions`).
    pub migrations: Arc<crate::operator::migrations::tasks::Migrations>,
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
    /// What the API server offers.
    pub server: ServerInfo,
}

/// What the API server offers, as far as the tasks need to know.
#[derive(Default)]
pub struct ServerInfo {
    /// The API server's release (its minor version), whose CEL environments CRDs are checked
    /// and compiled in and which says whether updates are ratcheted (1.30 and later): set
    /// from its `/version` when the operator starts leading.
    release_minor: AtomicU32,
    /// The API server refused a streaming list: every watch lists with pages instead.
    streaming_refused: AtomicBool,
}

impl ServerInfo {
    /// The API server's release.
    pub fn release(&self) -> KubeVersion {
        match self.release_minor.load(Ordering::Relaxed) {
            0 => KubeVersion::default(),
            minor => KubeVersion { minor },
        }
    }

    /// The API server's release, read from its `/version`.
    pub fn set_release(&self, minor: u32) {
        self.release_minor.store(minor, Ordering::Relaxed);
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
        self.release().streams_lists() && !self.streaming_refused.load(Ordering::Relaxed)
    }

    /// Whether `e` is the server refusing the streaming list of a watch that streams; if
    /// so, every watch falls back to paginated LISTs (the caller starts its watch again).
    pub fn refused_streaming(&self, streaming: bool, e: &watcher::Error) -> bool {
        if !streaming || !crate::operator::watch_backoff::refuses_streaming(e) {
            return false;
        }
        if !self.streaming_refused.swap(true, Ordering::Relaxed) {
            tracing::warn!(error = %e, "the API server refused a streaming list (WatchList turned off?); listing with pages");
        }
        true
    }

    /// Whether the API server validates updates with ratcheting.
    pub fn ratcheting(&self) -> bool {
        self.release().ratchets()
    }
}

/// The tracked CRDs' states, and the channels that tell the Controller (and the policy
/// report writers) that one changed: the one place a task records what it found about a
/// CRD (through `crds::state`'s transitions, under [`CrdStates::with_current`]).
pub struct CrdStates {
    tracked: Mutex<BTreeMap<String, Tracked>>,
    /// The CRDs whose state changed, for the Controller to reconcile (`reconcile_on`).
    triggers: mpsc::UnboundedSender<ObjectRef<CrdMeta>>,
    /// Counts what the policy report writers look at changing (a CRD's state, the first
    /// LIST done, what `auto` knows of OpenReports): each writer sleeps until it moves or
    /// one of its own deadlines comes, and misses no change made while it was writing.
    policy_changed: tokio::sync::watch::Sender<u64>,
    /// The first LIST of CRDs is done: a CRD missing from the states is gone, not unseen.
    listed: AtomicBool,
}

impl CrdStates {
    /// The states, locked (for short in-memory work only).
    pub fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Tracked>> {
        self.tracked.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The state of the tracked CRD `crd` changed: the Controller reconciles it (publishes
    /// its metrics and Events, writes its report if what it says changed), and the
    /// PolicyReport writer looks again.
    pub fn changed(&self, crd: &str) {
        // Fails only once the Controller has stopped.
        let _ = self.triggers.send(ObjectRef::new(crd));
        self.policy_changed();
    }

    /// Something the policy report writers look at changed.
    pub fn policy_changed(&self) {
        self.policy_changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// What wakes a policy report writer.
    pub fn policy_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.policy_changed.subscribe()
    }

    /// Whether the first LIST of CRDs is reconciled (a CRD missing is gone, not unseen).
    pub fn listed(&self) -> bool {
        self.listed.load(Ordering::Relaxed)
    }

    /// The first LIST of CRDs is reconciled.
    pub fn set_listed(&self) {
        self.listed.store(true, Ordering::Relaxed);
        self.policy_changed();
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
        let mut states = self.lock();
        let r = states.get_mut(crd).filter(|t| t.epoch() == epoch).map(f);
        drop(states);
        if r.is_some() {
            self.changed(crd);
        }
        r
    }
}

/// What the reconciles keep beside the states: the CRDs' retries, what an earlier operator
/// reported, the object audits' tasks, the reports due, the bound on CRD reads, and the
/// epochs.
pub struct Registry {
    pub states: Arc<CrdStates>,
    /// The CRDs whose last reconcile failed, and when they are tried again.
    retries: Mutex<HashMap<String, crate::operator::crds::error::Retry>>,
    /// The reports an earlier operator wrote, for the CRDs' first reconciles.
    pub earlier_reports: crate::operator::reports::earlier::EarlierReports,
    /// The object audits, started and stopped by the CRDs' reconciles.
    pub audits: crate::operator::audits::tasks::AuditTasks,
    /// The reports due, for the writer task (`reports::writer`).
    pub reports: Arc<crate::operator::reports::queue::ReportQueue>,
    /// Bounds the CRDs read and checked at once (`CONCURRENT_CRD_READS`).
    pub crd_reads: Semaphore,
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
    /// Counts the API server's recoveries: the CRD watch made progress again after failing.
    /// Retries that backed off during the outage (report writes, Events) go at once then.
    pub recovered: tokio::sync::watch::Sender<u64>,
    /// Set when the controller stops (shutdown, a lost Lease): the Controller finishes the
    /// reconciles in flight, the writer completes its writes in flight and flushes the
    /// Events, then both end.
    pub stopping: tokio::sync::watch::Sender<bool>,
}

impl Ctx {
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
        let states = Arc::new(CrdStates {
            tracked: Mutex::new(BTreeMap::new()),
            triggers,
            policy_changed: tokio::sync::watch::Sender::new(0),
            listed: AtomicBool::new(false),
        });
        // An audit task that died has its CRD reconciled at once, which starts it again.
        let died: crate::operator::audits::tasks::Died = {
            let states = states.clone();
            Arc::new(move |crd: &str| states.changed(crd))
        };
        let audits =
            crate::operator::audits::tasks::AuditTasks::new(config.full_resync_interval, died);
        let ctx = Arc::new(Ctx {
            deps: Arc::new(Deps {
                validators,
                events: Arc::new(EventQueue::new(
                    EventSink::new(client.clone(), identity, metrics.clone()),
                    config.emit_events,
                )),
                client,
                watch_clients,
                config,
                metrics,
                limiter,
                judging,
                server: ServerInfo::default(),
            }),
            crds: Registry {
                states,
                retries: Mutex::default(),
                earlier_reports: Default::default(),
                audits,
                reports: Default::default(),
                crd_reads: Semaphore::new(CONCURRENT_CRD_READS),
                next_epoch: AtomicU64::new(1),
            },
            signals: Signals {
                recovered: tokio::sync::watch::Sender::new(0),
                stopping: tokio::sync::watch::Sender::new(false),
            },
            migrations: Default::default(),
        });
        (ctx, Triggered(triggered))
    }

    /// The API server's release.
    pub fn release(&self) -> KubeVersion {
        self.deps.server.release()
    }

    /// [`ServerInfo::watch_config`].
    pub fn watch_config(&self, page: u32) -> (watcher::Config, bool) {
        self.deps.server.watch_config(page)
    }

    /// [`ServerInfo::refused_streaming`].
    pub fn refused_streaming(&self, streaming: bool, e: &watcher::Error) -> bool {
        self.deps.server.refused_streaming(streaming, e)
    }

    /// Whether the API server validates updates with ratcheting.
    pub fn ratcheting(&self) -> bool {
        self.deps.server.ratcheting()
    }

    /// The tracked CRDs' states, locked.
    pub fn registry(&self) -> MutexGuard<'_, BTreeMap<String, Tracked>> {
        self.crds.states.lock()
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

    /// [`CrdStates::changed`].
    pub fn changed(&self, crd: &str) {
        self.crds.states.changed(crd);
    }

    /// [`CrdStates::policy_changed`].
    pub fn policy_changed(&self) {
        self.crds.states.policy_changed();
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
        if !self.crds.reports.set_served(served) {
            return;
        }
        if served {
            tracing::info!("the SchemaAudit CRD is served again; writing every report");
            for t in self.registry().values_mut() {
                crate::operator::crds::state::on_report_gone(t);
            }
            self.api_recovered();
        } else {
            tracing::warn!(
                "the SchemaAudit CRD is being deleted or is absent; no report is written until it is back"
            );
        }
    }

    pub(crate) fn epoch(&self) -> u64 {
        self.crds.next_epoch.fetch_add(1, Ordering::Relaxed)
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
