//! The controller of one leadership term: kube-runtime's `Controller` keyed by CRD name,
//! over a metadata-only watch of the CRDs, owning the `SchemaAudit` reports and woken by the
//! object audits (`Ctx::changed`, through `reconcile_on`); its reconcile is `reconcile`'s.
//! Beside it, one object audit per audited CRD (`audits`, started by the reconciles) and the
//! writer task of the reports and Events (`reports::writer`), each handed its parts of the
//! term's `Ctx` (`context`).
//!
//! kube-runtime's unstable `for_stream` (the store is fed by a metadata watch whose
//! annotations and managed fields are dropped first: a CRD's last-applied annotation is as
//! large as the CRD), `owns_stream` (the reports' watch, likewise) and `reconcile_on` (the
//! object audits' changes) are used: the stable constructors watch whole objects and take no
//! other trigger.

use crate::operator::crds::reconcile::{REPORT_CRD, error_policy, reconcile};
use crate::operator::crds::removal::remove;
use crate::operator::crds::state::Tracked;
use crate::operator::leadership::context::{CrdMeta, Ctx, Deps, Triggered};
use crate::operator::reports::writer::ReportWriter;
use futures::StreamExt;
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::WatchStreamExt;
use kube::runtime::controller::{self, Config as ControllerConfig};
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher::{self, Event, watcher};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use tokio::task::JoinHandle;

/// CRDs a page of the CRD watch's LIST (metadata only, but a CRD applied with client-side
/// `kubectl apply` carries itself whole in an annotation until it is dropped).
const CRD_PAGE: u32 = 20;

/// CRDs reconciled at once (reading and checking a CRD is bounded further by
/// `Ctx::crd_reads`; report writes are paced by `apiQps`).
const CONCURRENT_RECONCILES: u16 = 8;

/// The work of one leadership term (kube-runtime's `Controller`, the writer of the reports
/// and Events, the policy report writers): [`LeadershipTerm::stop`] stops it gracefully; its tasks are aborted when
/// it is dropped.
pub struct LeadershipTerm {
    ctx: Arc<Ctx>,
    /// The PolicyReport writer: stopped at once.
    tasks: Vec<JoinHandle<()>>,
    /// The Controller and the writer of the reports and Events: given the grace period to
    /// finish.
    finishing: Vec<JoinHandle<()>>,
}

impl LeadershipTerm {
    pub fn start(ctx: Arc<Ctx>, triggered: Triggered) -> LeadershipTerm {
        let mut tasks = Vec::new();
        if ctx.deps.config.policy_reports {
            tasks.push(tokio::spawn(
                crate::operator::reports::policy_writer::write_policy_reports(
                    ctx.deps.clone(),
                    ctx.crds.states.clone(),
                ),
            ));
        }
        let finishing = vec![tokio::spawn(run(ctx.clone(), triggered))];
        LeadershipTerm {
            ctx,
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
        self.ctx.migrations.stop_all();
        self.ctx.signals.stopping.send_replace(true);
        let finishing = futures::future::join_all(self.finishing.iter_mut());
        if tokio::time::timeout(grace, finishing).await.is_err() {
            let left = self.ctx.deps.events.len();
            tracing::warn!(
                grace = ?grace,
                events_not_written = left,
                "stopping: the report writes and Events did not finish within the grace period"
            );
        }
    }
}

impl LeadershipTerm {
    /// Stops every object audit (each lowers the watch gauge itself when its task is
    /// dropped) and forgets every tracked CRD (outside the registry lock).
    fn stop_object_audits(&self) {
        self.ctx.crds.audits.stop_all();
        let drained: Vec<Tracked> = std::mem::take(&mut *self.ctx.registry())
            .into_values()
            .collect();
        drop(drained);
    }
}

impl Drop for LeadershipTerm {
    fn drop(&mut self) {
        for t in self.tasks.iter().chain(&self.finishing) {
            t.abort();
        }
        self.stop_object_audits();
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
pub(crate) async fn run(ctx: Arc<Ctx>, triggered: Triggered) {
    let writer = ReportWriter {
        deps: ctx.deps.clone(),
        states: ctx.crds.states.clone(),
        queue: ctx.crds.reports.clone(),
    }
    .run(
        ctx.signals.stopping.subscribe(),
        ctx.signals.recovered.subscribe(),
    );
    tokio::join!(run_controller(ctx, triggered), writer);
}

/// Runs kube-runtime's Controller until the term stops.
async fn run_controller(ctx: Arc<Ctx>, triggered: Triggered) {
    let (store, writer) = reflector::store();
    let first = Arc::new(Mutex::new(FirstList::default()));
    let crds = crd_watch(ctx.deps.clone())
        // What the store keeps of a CRD: its name, UID, generation and resourceVersion.
        .modify(|m| {
            m.managed_fields_mut().clear();
            m.annotations_mut().clear();
            m.labels_mut().clear();
        })
        .reflect(writer)
        .filter_map({
            let (ctx, store, first) = (ctx.clone(), store.clone(), first.clone());
            let mut failing = false;
            move |ev| {
                let crd = on_crd_event(&ctx, &store, &first, &mut failing, ev);
                async move { crd.map(Ok::<_, watcher::Error>) }
            }
        });
    let triggers = triggered.into_stream();
    let mut stopping = ctx.signals.stopping.subscribe();
    let finished = async move {
        let _ = stopping.wait_for(|s| *s).await;
    };
    controller::Controller::for_stream(crds, store)
        .owns_stream(crate::operator::reports::watch::report_events(
            ctx.deps.clone(),
            ctx.crds.states.clone(),
        ))
        .reconcile_on(triggers)
        // On a stop, the reconciles in flight complete and no new one starts.
        .graceful_shutdown_on(finished)
        .with_config(ControllerConfig::default().concurrency(CONCURRENT_RECONCILES))
        .run(reconcile, error_policy, ctx.clone())
        .for_each(|result| {
            let (ctx, first) = (ctx.clone(), first.clone());
            async move {
                let name = match result {
                    Ok((crd, _)) => crd.name,
                    Err(controller::Error::ReconcilerFailed(_, crd)) => crd.name,
                    Err(controller::Error::ObjectNotFound(crd)) => {
                        // Deleted (or gone while the watch was down).
                        remove(&ctx, &crd.name);
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
                    first_list_reconciled(&ctx).await;
                }
            }
        })
        .await;
}

/// Every CRD of the first LIST has been reconciled.
async fn first_list_reconciled(ctx: &Ctx) {
    ctx.crds.earlier_reports.first_crds_done().await;
    ctx.crds.states.set_listed();
    ctx.deps.metrics.set_ready(true);
    tracing::info!(
        crds = ctx.registry().len(),
        "the first LIST of CRDs is reconciled"
    );
}

/// The CRDs' metadata, watched (streaming from 1.34, pages before; pages for good after a
/// refusal), with the backoff of the CRD watch.
fn crd_watch(
    deps: Arc<Deps>,
) -> impl futures::Stream<Item = Result<Event<CrdMeta>, watcher::Error>> + Send {
    // Metadata-only requests (`Api` of `PartialObjectMeta`).
    let api: Api<CrdMeta> = Api::all(deps.client.clone());
    let start = move |deps: &Deps| {
        let (config, streaming) = deps.server.watch_config(CRD_PAGE);
        let stream = crate::operator::watch_backoff::with_backoff(
            watcher(api.clone(), config).boxed(),
            crate::operator::watch_backoff::SHORT,
        )
        .boxed();
        (stream, streaming)
    };
    futures::stream::unfold((deps, None), move |(deps, running)| {
        let (mut stream, streaming) = running.unwrap_or_else(|| start(&deps));
        async move {
            let ev = stream.next().await?;
            if let Err(e) = &ev
                && deps.server.refused_streaming(streaming, e)
            {
                return Some((ev, (deps, None))); // started again, with pages
            }
            Some((ev, (deps, Some((stream, streaming)))))
        }
    })
}

/// What an event of the CRD watch tells (the store has it already): the CRD to reconcile,
/// if any. The watch working again after failing is the API server's recovery; a LIST
/// complete shows which tracked CRDs went away while the watch was down, and whether the
/// report CRD is there.
fn on_crd_event(
    ctx: &Arc<Ctx>,
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
        ctx.api_recovered();
    }
    match ev {
        Ok(Event::Apply(crd) | Event::InitApply(crd)) => Some(crd),
        Ok(Event::Delete(crd)) => {
            if crd.name_any() == *REPORT_CRD {
                ctx.reports_served(false);
            }
            Some(crd) // not in the store: the Controller finds it gone
        }
        Ok(Event::Init) => None,
        Ok(Event::InitDone) => {
            let listed: BTreeSet<String> = store.state().iter().map(|c| c.name_any()).collect();
            if !listed.contains(REPORT_CRD.as_str()) {
                ctx.reports_served(false);
            }
            // Gone while the watch was down: the Controller finds them gone.
            let gone: Vec<String> = ctx
                .registry()
                .keys()
                .filter(|k| !listed.contains(*k))
                .cloned()
                .collect();
            for name in gone {
                ctx.changed(&name);
            }
            let mut first = first.lock().unwrap_or_else(|e| e.into_inner());
            if first.waiting.is_none() {
                let empty = listed.is_empty();
                first.waiting = Some(listed);
                if empty && !first.done {
                    first.done = true;
                    let ctx = ctx.clone();
                    tokio::spawn(async move { first_list_reconciled(&ctx).await });
                }
            }
            None
        }
        Err(e) if crate::operator::watch_backoff::is_gone(&e) => {
            tracing::info!("the CRD watch expired; listing the CRDs again");
            None
        }
        Err(e) if crate::operator::watch_backoff::asks_to_retry(&e) => {
            ctx.deps.metrics.api_error("watch");
            tracing::info!(error = %e, "the API server asks to retry the CRD watch later; retrying with backoff");
            None
        }
        Err(e) => {
            ctx.deps.metrics.api_error("watch");
            tracing::error!(error = %e, "watching CRDs failed; retrying with backoff");
            None
        }
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod write_failures;
