//! The one write path of the reports and the Events: a task that drains the report queue
//! (`reports::queue`) and the Event queue (`operator::events`) within the write budget
//! (`apiQps`, `apiBurst`). It takes the budget first and then the most urgent write: a
//! report with findings, then the oldest Event, then a clean report; so on a fresh start
//! with thousands of CRDs neither the reports that matter nor the Events wait behind the
//! clean reports. A report is built from its CRD's state when its turn comes (two requests:
//! the object, then its status); a few are written at once, so that one slow request does
//! not hold up the others. The Events go one at a time, in order.
//!
//! A report write that fails is tried again after the wait its answer asks for (the queue
//! keeps it); an Event after a backoff of its own; both at once when the API server recovers.
//! A report whose CRD went away is deleted. Nothing is written while the report CRD is not
//! served. On a stop no new report write starts; those in flight complete and the queued
//! Events are written (the caller bounds how long that may take).

use crate::audit::schema_audit::SchemaAudit;
use crate::cluster::backoff::{Backoff, REPORT_WRITE};
use crate::operator::crds::error::{Cause, Error};
use crate::operator::crds::state;
use crate::operator::events::PendingEvent;
use crate::operator::leadership::context::{CrdStates, Deps};
use crate::operator::reports::queue::{Lane, Popped, ReportQueue};
use crate::operator::reports::report::{apply, desired, has_findings, report_object};
use crate::operator::reports::status as report_status;
use kube::api::{Api, DeleteParams};
use std::sync::Arc;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::Instant;

/// Report writes in flight at most.
const REPORTS_IN_FLIGHT: usize = 4;

/// What the writer task uses.
#[derive(Clone)]
pub struct ReportWriter {
    pub deps: Arc<Deps>,
    pub states: Arc<CrdStates>,
    pub queue: Arc<ReportQueue>,
}

/// The next write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    Report,
    Event,
}

impl Next {
    /// Requests it makes (a report: the object, then its status).
    fn requests(self) -> u32 {
        match self {
            Next::Report => 2,
            Next::Event => 1,
        }
    }
}

/// A write that ended.
enum Finished {
    Report,
    Event(Box<(PendingEvent, Result<(), kube::Error>)>),
}

/// The Events' side of the loop: whether one is in flight, and its backoff.
struct EventTurn {
    in_flight: bool,
    backoff: Backoff,
    retry_at: Option<Instant>,
}

impl EventTurn {
    fn due(&self, now: Instant, queued: bool) -> bool {
        queued && !self.in_flight && self.retry_at.is_none_or(|at| at <= now)
    }
}

impl ReportWriter {
    /// Writes until stopped: `stopping` set, and then the Events flushed and the report
    /// writes in flight complete. `recovered` moving (the API server back) retries what
    /// backed off at once.
    pub async fn run(
        self,
        mut stopping: watch::Receiver<bool>,
        mut recovered: watch::Receiver<u64>,
    ) {
        let mut writes: JoinSet<Finished> = JoinSet::new();
        let mut events = EventTurn {
            in_flight: false,
            backoff: REPORT_WRITE.backoff(),
            retry_at: None,
        };
        loop {
            while let Some(done) = writes.try_join_next() {
                self.ended(done, &mut events);
            }
            let stop = *stopping.borrow_and_update();
            if stop && writes.is_empty() && self.deps.events.is_empty() {
                return;
            }
            let Some(next) = self.next(stop, writes.len(), &events) else {
                // A report's retry wakes the writer only when a report may start then (not
                // once stopping, nor with every report slot taken: a write ending wakes it).
                let reports = writes.len() - usize::from(events.in_flight);
                let reports_may_start = !stop && reports < REPORTS_IN_FLIGHT;
                let report_retry = self.queue.next_retry().filter(|_| reports_may_start);
                let event_retry = events.retry_at.filter(|_| !events.in_flight);
                let retry = [report_retry, event_retry].into_iter().flatten().min();
                tokio::select! {
                    _ = self.queue.pushed() => {}
                    _ = self.deps.events.pushed() => {}
                    _ = sleep_until(retry), if retry.is_some() => {}
                    Ok(()) = recovered.changed() => {
                        self.queue.recovered();
                        events.backoff.reset();
                        events.retry_at = None;
                    }
                    Ok(()) = stopping.changed(), if !stop => {}
                    Some(done) = writes.join_next(), if !writes.is_empty() => {
                        self.ended(done, &mut events);
                    }
                }
                continue;
            };
            // The budget first, then the most urgent write (it may have changed meanwhile).
            let taken = next.requests();
            tokio::select! {
                _ = self.deps.limiter.acquire_n(taken) => {}
                Ok(()) = stopping.changed(), if !stop => continue,
            }
            let stop = *stopping.borrow();
            let Some(next) = self.next(stop, writes.len(), &events) else {
                self.deps.limiter.give_back(taken);
                continue;
            };
            match next.requests().cmp(&taken) {
                std::cmp::Ordering::Less => self.deps.limiter.give_back(taken - next.requests()),
                std::cmp::Ordering::Greater => {
                    self.deps.limiter.acquire_n(next.requests() - taken).await
                }
                std::cmp::Ordering::Equal => {}
            }
            match next {
                Next::Report => {
                    if let Some(due) = self.queue.pop(Instant::now()) {
                        let this = self.clone();
                        writes.spawn(async move {
                            this.write(due).await;
                            Finished::Report
                        });
                    }
                }
                Next::Event => {
                    if let Some(ev) = self.deps.events.front() {
                        events.in_flight = true;
                        let this = self.clone();
                        writes.spawn(async move {
                            let r = this.deps.events.publish(&ev).await;
                            Finished::Event(Box::new((ev, r)))
                        });
                    }
                }
            }
        }
    }

    /// The most urgent write due now, if one may start: a report with findings, the oldest
    /// Event, a clean report. No report starts once stopping, nor beyond
    /// `REPORTS_IN_FLIGHT`.
    fn next(&self, stop: bool, in_flight: usize, events: &EventTurn) -> Option<Next> {
        let now = Instant::now();
        let report = if stop || in_flight >= REPORTS_IN_FLIGHT + usize::from(events.in_flight) {
            None
        } else {
            self.queue.next_due(now)
        };
        if report == Some(Lane::Findings) {
            Some(Next::Report)
        } else if events.due(now, !self.deps.events.is_empty()) {
            Some(Next::Event)
        } else {
            report.map(|_| Next::Report)
        }
    }

    fn ended(&self, done: Result<Finished, tokio::task::JoinError>, events: &mut EventTurn) {
        match done {
            Ok(Finished::Report) => {}
            Ok(Finished::Event(done)) => self.event_ended(*done, events),
            Err(e) => {
                // A write that panicked: a bug. An Event is tried again; a report is written
                // at its CRD's next change.
                events.in_flight = false;
                if e.is_panic() {
                    self.deps.metrics.internal_errors.inc();
                    tracing::error!(error = %e, "a report or Event write panicked");
                }
            }
        }
    }

    fn event_ended(&self, done: (PendingEvent, Result<(), kube::Error>), events: &mut EventTurn) {
        match done {
            (ev, Ok(())) => {
                events.in_flight = false;
                events.retry_at = None;
                events.backoff.reset();
                self.deps.events.written(&ev);
            }
            (ev, Err(e)) => {
                events.in_flight = false;
                let wait = events.backoff.next_delay();
                events.retry_at = Some(Instant::now() + wait);
                tracing::error!(reason = %ev.reason, error = %crate::cluster::client::describe(&e), retry_in = ?wait, "writing an Event failed");
            }
        }
    }

    /// Writes (or deletes) one report; a failure waits in the queue for its retry.
    #[tracing::instrument(name = "write_report", skip_all, fields(crd = %due.name))]
    async fn write(&self, due: Popped) {
        let name = due.name.as_str();
        let done = if due.removed {
            self.delete(name).await.map(|r| (Lane::Clean, r))
        } else {
            self.write_report(name).await
        };
        let Some((lane, result)) = done else {
            // Nothing to write (a report pushed again while its write was in flight, say):
            // the budget taken for it goes back.
            self.deps.limiter.give_back(Next::Report.requests());
            self.queue.written(name);
            return;
        };
        match result {
            Ok(()) => self.queue.written(name),
            Err(e) => {
                let cause = Cause::of(&e);
                let error = Error::WriteReport(e);
                self.deps
                    .metrics
                    .reconcile_error(error.kind(), cause.label());
                let wait = self.queue.failed(name, lane, cause);
                tracing::error!(crd = name, error = %error, retry_in = ?wait, "writing the report failed");
            }
        }
    }

    /// Builds the report from the CRD's state now and writes it; `None` when there is
    /// nothing to write: what it says was written already, the CRD is no longer tracked
    /// (removed, or the term ending), or the report CRD is not served (every report is
    /// written again when it is back).
    async fn write_report(&self, name: &str) -> Option<(Lane, Result<(), kube::Error>)> {
        if !self.queue.served() {
            return None;
        }
        let built = {
            let mut states = self.states.lock();
            let t = states.get_mut(name)?;
            let status = desired(&self.deps, t);
            let print = report_status::fingerprint(&status);
            if t.written() == Some(print) {
                return None;
            }
            let lane = if has_findings(t) {
                Lane::Findings
            } else {
                Lane::Clean
            };
            let (epoch, revision) = (t.epoch(), t.revision().clone());
            (report_object(t, status), print, epoch, revision, lane)
        };
        let (mut object, print, epoch, revision, lane) = built;
        // Outside the states' lock: it inflates the schemas.
        object.spec.audited_revision = report_status::packed_revision(&revision);
        drop(revision);
        if let Err(e) = apply(&self.deps, &object).await {
            return Some((lane, Err(e)));
        }
        self.states
            .with_current(name, epoch, |t| state::on_report_written(t, print));
        Some((lane, Ok(())))
    }

    /// Deletes the report of a CRD that went away (not while the report CRD is not served:
    /// the report went with it; not if the CRD is back).
    async fn delete(&self, name: &str) -> Option<Result<(), kube::Error>> {
        if !self.queue.served() || self.states.lock().contains_key(name) {
            return None;
        }
        let api: Api<SchemaAudit> = Api::all(self.deps.client.clone());
        self.deps.metrics.api_write("delete");
        // One request of the two taken.
        self.deps.limiter.give_back(1);
        Some(match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => {
                tracing::info!(crd = name, "CRD removed; report deleted");
                Ok(())
            }
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(e) => {
                self.deps.metrics.api_error("delete");
                Err(e)
            }
        })
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
