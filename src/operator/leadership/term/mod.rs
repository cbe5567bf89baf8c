//! The work of one leadership term: kube-runtime's `Controller` keyed by CRD name, over a
//! metadata-only watch of the CRDs, woken by the tracked CRDs' states (`reconcile_on`); its
//! reconcile is `crds::reconcile`'s, with the [`crds::Reconciler`] as context. Beside it, one
//! object audit per audited CRD (`audits`, started by the reconciles), the writer task of the
//! reports and Events (`reports::writer`), the reports' watch (`reports::watch`), the policy
//! report writers, the storage migrations and the conversion round trips: [`Parts::new`]
//! wires them once, each handed
//! what it uses, and nothing else holds them all.
//!
//! kube-runtime's unstable `for_stream` (the store is fed by a metadata watch whose
//! annotations and managed fields are dropped first: a CRD's last-applied annotation is as
//! large as the CRD) and `reconcile_on` (the states' wake-ups) are used: the stable
//! constructors watch whole objects and take no other trigger.

use crate::audit::config::Config;
use crate::cluster::client::WatchClients;
use crate::cluster::write_budget::{Priority, WriteBudget, Writes};
use crate::judging_pool::JudgingPool;
use crate::operator::audits::Auditor;
use crate::operator::audits::objects::{AuditHandle, AuditSettings, AuditUses};
use crate::operator::audits::validators::Validators;
use crate::operator::conversions::ConversionAuditor;
use crate::operator::crds::Reconciler;
use crate::operator::crds::reconcile::{REPORT_CRD, error_policy, reconcile};
use crate::operator::crds::revision::RevisionReader;
use crate::operator::events::{EventQueue, EventSink};
use crate::operator::metrics::Metrics;
use crate::operator::migrations::Migrator;
use crate::operator::reports::due::DueReports;
use crate::operator::reports::policy_writer::PolicyWriters;
use crate::operator::reports::queue::ReportQueue;
use crate::operator::reports::writer::ReportWriter;
use crate::operator::server::ServerInfo;
use crate::operator::state::{CrdMeta, CrdStates, Triggered};
use futures::StreamExt;
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::controller::{self, Config as ControllerConfig};
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher::{self, Event, watcher};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// CRDs a page of the CRD watch's LIST (metadata only, but a CRD applied with client-side
/// `kubectl apply` carries itself whole in an annotation until it is dropped).
const CRD_PAGE: u32 = 20;

/// CRDs reconciled at once (reading and checking a CRD is bounded further by
/// `RevisionReader::reading`; report writes are paced by `apiQps`).
const CONCURRENT_RECONCILES: u16 = 8;

/// The parts of a leadership term, wired from what the process has. Each task takes its
/// own part when the term starts.
pub struct Parts {
    /// The Controller's context.
    pub reconciler: Arc<Reconciler>,
    /// The CRDs the states wake, for the Controller.
    pub triggered: Triggered,
    /// The writer of the reports and Events.
    pub writer: ReportWriter,
    /// The policy report writers (`policyReports`).
    pub policy: Option<PolicyWriters>,
    /// The term's one write budget (`apiQps`, `apiBurst`).
    pub budget: Arc<WriteBudget>,
    /// What the API server offers.
    pub server: Arc<ServerInfo>,
    /// Set when the term stops.
    pub stopping: Arc<watch::Sender<bool>>,
}

impl Parts {
    pub fn new(
        client: kube::Client,
        watch_clients: Option<Arc<WatchClients>>,
        config: &Config,
        metrics: Arc<Metrics>,
        identity: &str,
        judging: JudgingPool,
    ) -> Parts {
        let (states, triggered) = CrdStates::new();
        let budget = Arc::new(WriteBudget::new(config.api_qps, config.api_burst));
        let server = Arc::new(ServerInfo::default());
        let events = Arc::new(EventQueue::new(
            EventSink::new(client.clone(), identity, metrics.clone()),
            config.emit_events,
        ));
        let queue = Arc::new(ReportQueue::default());
        let validators = Arc::new(Validators::new(
            config.validator_cache_mib.saturating_mul(1 << 20),
        ));
        let audit_handle = AuditHandle::new(AuditUses {
            client: client.clone(),
            watch_clients,
            settings: Arc::new(AuditSettings::of(config)),
            judging: judging.clone(),
            validators,
            server: server.clone(),
            metrics: metrics.clone(),
            events: events.clone(),
            annotations: Writes::new(budget.clone(), Priority::Annotation),
            states: states.clone(),
        });
        let migrations = config.migrate_stored_versions.then(|| Migrator {
            client: client.clone(),
            writes: Writes::new(budget.clone(), Priority::Migration),
            events: events.clone(),
            metrics: metrics.clone(),
            states: states.clone(),
            resync: config.full_resync_interval,
            running: Default::default(),
        });
        let conversions = config.audit_conversions.then(|| ConversionAuditor {
            client: client.clone(),
            pace: Writes::new(budget.clone(), Priority::ConversionCheck),
            server: server.clone(),
            metrics: metrics.clone(),
            states: states.clone(),
            resync: config.full_resync_interval,
            checks: Default::default(),
        });
        let policy = config.policy_reports.then(|| PolicyWriters {
            client: client.clone(),
            metrics: metrics.clone(),
            writes: Writes::new(budget.clone(), Priority::PolicyReport),
            states: states.clone(),
            api: config.policy_reports_api,
            resync: config.full_resync_interval,
        });
        let writer = ReportWriter {
            client: client.clone(),
            metrics: metrics.clone(),
            budget: budget.clone(),
            events: events.clone(),
            queue: queue.clone(),
            states: states.clone(),
            max_listed: config.max_listed_objects,
        };
        let reconciler = Arc::new(Reconciler {
            revisions: RevisionReader::new(
                client.clone(),
                judging,
                server.clone(),
                metrics.clone(),
            ),
            client,
            groups: config.group_filter(),
            audits: Auditor::new(audit_handle, config.full_resync_interval),
            reports: DueReports {
                states: states.clone(),
                metrics: metrics.clone(),
                events,
                queue,
                max_listed: config.max_listed_objects,
            },
            migrations,
            conversions,
            metrics,
            backoffs: Default::default(),
            recovered: Arc::new(watch::Sender::new(0)),
            states,
        });
        Parts {
            reconciler,
            triggered,
            writer,
            policy,
            budget,
            server,
            stopping: Arc::new(watch::Sender::new(false)),
        }
    }
}

/// The work of one leadership term (kube-runtime's `Controller`, the writer of the reports
/// and Events, the reports' watch, the policy report writers): [`LeadershipTerm::stop`] stops
/// it gracefully; its tasks are aborted when it is dropped.
pub struct LeadershipTerm {
    reconciler: Arc<Reconciler>,
    stopping: Arc<watch::Sender<bool>>,
    /// The reports' watch and the policy report writers: stopped at once.
    tasks: Vec<JoinHandle<()>>,
    /// The Controller and the writer of the reports and Events: given the grace period to
    /// finish.
    finishing: Vec<JoinHandle<()>>,
}

impl LeadershipTerm {
    pub fn start(parts: Parts) -> LeadershipTerm {
        let Parts {
            reconciler,
            triggered,
            writer,
            policy,
            stopping,
            ..
        } = parts;
        let r = &reconciler;
        let mut tasks = vec![tokio::spawn(
            crate::operator::reports::watch::watch_reports(
                r.client.clone(),
                r.metrics.clone(),
                r.states.clone(),
            ),
        )];
        if let Some(policy) = policy {
            tasks.push(tokio::spawn(
                crate::operator::reports::policy_writer::write_policy_reports(policy),
            ));
        }
        let finishing = vec![tokio::spawn(run(
            reconciler.clone(),
            triggered,
            writer,
            stopping.clone(),
        ))];
        LeadershipTerm {
            reconciler,
            stopping,
            tasks,
            finishing,
        }
    }

    /// Stops the controller (shutdown, or the Lease lost): no new reconcile or report write
    /// starts, those in flight (a report write is two requests) complete and the queued
    /// Events are written, within `grace`; what is left then is abandoned.
    pub async fn stop(mut self, grace: std::time::Duration) {
        for t in self.tasks.drain(..) {
            t.abort();
        }
        // The object audits stop too: they would queue more Events while the queue is flushed.
        // (A write in flight has its report built already.)
        self.stop_object_audits();
        // A standby never writes: the migrations end with the term (the next leader starts
        // them again).
        if let Some(m) = &self.reconciler.migrations {
            m.running.stop_all();
        }
        if let Some(c) = &self.reconciler.conversions {
            c.checks.stop_all();
        }
        self.stopping.send_replace(true);
        let finishing = futures::future::join_all(self.finishing.iter_mut());
        if tokio::time::timeout(grace, finishing).await.is_err() {
            let left = self.reconciler.reports.events.len();
            tracing::warn!(
                grace = ?grace,
                events_not_written = left,
                "stopping: the report writes and Events did not finish within the grace period"
            );
        }
    }

    /// Stops every object audit (each lowers the watch gauge itself when its task is
    /// dropped) and forgets every tracked CRD.
    fn stop_object_audits(&self) {
        self.reconciler.audits.stop_all();
        self.reconciler.states.forget_all();
    }
}

impl Drop for LeadershipTerm {
    fn drop(&mut self) {
        for t in self.tasks.iter().chain(&self.finishing) {
            t.abort();
        }
        self.stop_object_audits();
        if let Some(m) = &self.reconciler.migrations {
            m.running.stop_all();
        }
        if let Some(c) = &self.reconciler.conversions {
            c.checks.stop_all();
        }
    }
}

/// The CRDs of the first LIST not reconciled yet: when none is left, the replica is ready
/// and the earlier reports no CRD took are dropped.
#[derive(Default)]
struct FirstList {
    /// `None` until the LIST is complete.
    waiting: Option<BTreeSet<String>>,
    done: bool,
}

impl FirstList {
    /// Whether this completes the first LIST's reconciles.
    fn reconciled(&mut self, name: &str) -> bool {
        let Some(waiting) = self.waiting.as_mut() else {
            return false;
        };
        waiting.remove(name);
        if waiting.is_empty() && !self.done {
            self.done = true;
            return true;
        }
        false
    }
}

/// Runs kube-runtime's Controller and the writer of the reports and Events until the term
/// stops (and the writer has flushed the Events).
pub(crate) async fn run(
    reconciler: Arc<Reconciler>,
    triggered: Triggered,
    writer: ReportWriter,
    stopping: Arc<watch::Sender<bool>>,
) {
    let writer = writer.run(stopping.subscribe(), reconciler.recovered.subscribe());
    tokio::join!(run_controller(reconciler, triggered, &stopping), writer);
}

/// Runs kube-runtime's Controller until the term stops.
async fn run_controller(r: Arc<Reconciler>, triggered: Triggered, stopping: &watch::Sender<bool>) {
    let (store, writer) = reflector::store();
    let first = Arc::new(Mutex::new(FirstList::default()));
    let crds = crd_watch(r.client.clone(), r.revisions.server.clone())
        // What the store keeps of a CRD: its name, UID, generation and resourceVersion.
        .modify(|m| {
            m.managed_fields_mut().clear();
            m.annotations_mut().clear();
            m.labels_mut().clear();
        })
        .reflect(writer)
        .filter_map({
            let (r, store, first) = (r.clone(), store.clone(), first.clone());
            let mut failing = false;
            move |ev| {
                let crd = on_crd_event(&r, &store, &first, &mut failing, ev);
                async move { crd.map(Ok::<_, watcher::Error>) }
            }
        });
    let triggers = triggered.into_stream();
    let mut stopping = stopping.subscribe();
    let finished = async move {
        let _ = stopping.wait_for(|s| *s).await;
    };
    controller::Controller::for_stream(crds, store)
        .reconcile_on(triggers)
        // On a stop, the reconciles in flight complete and no new one starts.
        .graceful_shutdown_on(finished)
        .with_config(ControllerConfig::default().concurrency(CONCURRENT_RECONCILES))
        .run(reconcile, error_policy, r.clone())
        .for_each(|result| {
            let (r, first) = (r.clone(), first.clone());
            async move {
                let name = match result {
                    Ok((crd, _)) => crd.name,
                    Err(controller::Error::ReconcilerFailed(_, crd)) => crd.name,
                    Err(controller::Error::ObjectNotFound(crd)) => {
                        // Deleted (or gone while the watch was down).
                        r.remove(&crd.name);
                        crd.name
                    }
                    Err(e) => {
                        tracing::debug!(error = %e, "controller");
                        return;
                    }
                };
                let completed = first
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .reconciled(&name);
                if completed {
                    first_list_reconciled(&r).await;
                }
            }
        })
        .await;
}

/// Every CRD of the first LIST has been reconciled.
async fn first_list_reconciled(r: &Reconciler) {
    r.revisions.earlier.first_crds_done().await;
    r.states.first_list_reconciled();
    r.metrics.set_ready(true);
    tracing::info!(
        crds = r.states.len(),
        "the first LIST of CRDs is reconciled"
    );
}

/// The CRDs' metadata, watched (streaming from 1.34, pages before; pages for good after a
/// refusal), with the backoff of the CRD watch.
fn crd_watch(
    client: kube::Client,
    server: Arc<ServerInfo>,
) -> impl futures::Stream<Item = Result<Event<CrdMeta>, watcher::Error>> + Send {
    // Metadata-only requests (`Api` of `PartialObjectMeta`).
    let api: Api<CrdMeta> = Api::all(client);
    let start = move |server: &ServerInfo| {
        let (config, streaming) = server.watch_config(CRD_PAGE);
        let stream = crate::operator::watch_backoff::with_backoff(
            watcher(api.clone(), config).boxed(),
            crate::operator::watch_backoff::SHORT,
        )
        .boxed();
        (stream, streaming)
    };
    futures::stream::unfold((server, None), move |(server, running)| {
        let (mut stream, streaming) = running.unwrap_or_else(|| start(&server));
        async move {
            let ev = stream.next().await?;
            if let Err(e) = &ev
                && server.refused_streaming(streaming, e)
            {
                return Some((ev, (server, None))); // started again, with pages
            }
            Some((ev, (server, Some((stream, streaming)))))
        }
    })
}

/// What an event of the CRD watch tells (the store has it already): the CRD to reconcile,
/// if any. The watch working again after failing is the API server's recovery; a LIST
/// complete shows which tracked CRDs went away while the watch was down, and whether the
/// report CRD is there.
fn on_crd_event(
    r: &Arc<Reconciler>,
    store: &Store<CrdMeta>,
    first: &Mutex<FirstList>,
    failing: &mut bool,
    ev: Result<Event<CrdMeta>, watcher::Error>,
) -> Option<CrdMeta> {
    if ev
        .as_ref()
        .is_err_and(|e| !crate::operator::watch_backoff::is_gone(e))
    {
        // A 410 Gone is an expired watch (a relist follows), not an outage.
        *failing = true;
    } else if *failing && matches!(ev, Ok(Event::InitDone | Event::Apply(_) | Event::Delete(_))) {
        *failing = false;
        tracing::info!("the CRD watch works again");
        r.api_recovered();
    }
    match ev {
        Ok(Event::Apply(crd) | Event::InitApply(crd)) => Some(crd),
        Ok(Event::Delete(crd)) => {
            if crd.name_any() == *REPORT_CRD {
                r.reports_served(false);
            }
            Some(crd) // not in the store: the Controller finds it gone
        }
        Ok(Event::Init) => None,
        Ok(Event::InitDone) => {
            let listed: BTreeSet<String> = store.state().iter().map(|c| c.name_any()).collect();
            if !listed.contains(REPORT_CRD.as_str()) {
                r.reports_served(false);
            }
            // Gone while the watch was down: the Controller finds them gone.
            // Their reconciles find them gone (the CRD watch's LIST is the Controller's
            // store): woken through the states.
            let gone: Vec<String> = r
                .states
                .names()
                .into_iter()
                .filter(|k| !listed.contains(k))
                .collect();
            for name in gone {
                r.states.not_listed(&name);
            }
            let mut first = first.lock().unwrap_or_else(|e| e.into_inner());
            if first.waiting.is_none() {
                let empty = listed.is_empty();
                first.waiting = Some(listed);
                if empty && !first.done {
                    first.done = true;
                    let r = r.clone();
                    tokio::spawn(async move { first_list_reconciled(&r).await });
                }
            }
            None
        }
        Err(e) if crate::operator::watch_backoff::is_gone(&e) => {
            tracing::info!("the CRD watch expired; listing the CRDs again");
            None
        }
        Err(e) if crate::operator::watch_backoff::asks_to_retry(&e) => {
            r.metrics.api_error("watch");
            tracing::info!(error = %e, "the API server asks to retry the CRD watch later; retrying with backoff");
            None
        }
        Err(e) => {
            r.metrics.api_error("watch");
            tracing::error!(error = %e, "watching CRDs failed; retrying with backoff");
            None
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
mod write_failures;
