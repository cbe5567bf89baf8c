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
//!
//! This task is the one writer of the reports: their write is its own,
//!
//! ```compile_fail
//! use crd_audit::operator::reports::writer::apply; // private to the writer
//! ```
//!
//! and what a reconcile hands it is a name in the queue, never a report:
//!
//! ```
//! use crd_audit::operator::reports::queue::{Lane, ReportQueue};
//! let queue = ReportQueue::default();
//! queue.push("things.example.com", Lane::Clean);
//! assert_eq!(queue.len(), 1);
//! ```

use crate::audit::schema_audit::SchemaAudit;
use crate::audit::schema_audit::SchemaAuditStatus;
use crate::cluster::backoff::{Backoff, REPORT_WRITE};
use crate::cluster::write_budget::{Priority, WriteBudget};
use crate::operator::events::{EventQueue, PendingEvent};
use crate::operator::metrics::Metrics;
use crate::operator::reports::queue::{Lane, Popped, ReportQueue};
use crate::operator::reports::report::report_object;
use crate::operator::retry::Cause;
use crate::operator::state::CrdStates;
use crate::operator::status as report_status;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use std::sync::Arc;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::Instant;

/// Report writes in flight at most.
const REPORTS_IN_FLIGHT: usize = 4;

/// What the writer task uses: the client and its metrics, the term's write budget, the
/// queues of reports due and of Events, and the states the reports are built from.
#[derive(Clone)]
pub struct ReportWriter {
    pub client: kube::Client,
    pub metrics: Arc<Metrics>,
    pub budget: Arc<WriteBudget>,
    pub events: Arc<EventQueue>,
    pub queue: Arc<ReportQueue>,
    pub states: Arc<CrdStates>,
    /// `maxListedObjects`.
    pub max_listed: usize,
}

/// The `kind` label of `crd_audit_reconcile_errors_total` for a report write that failed.
const WRITE_REPORT: &str = "write_report";

/// The next write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    /// A report of this lane.
    Report(Lane),
    Event,
}

impl Next {
    /// Requests it makes (a report: the object, then its status).
    fn requests(self) -> u32 {
        match self {
            Next::Report(_) => 2,
            Next::Event => 1,
        }
    }

    /// Its place in the write budget's line.
    fn priority(self) -> Priority {
        match self {
            Next::Report(Lane::Findings) => Priority::ReportWithFindings,
            Next::Report(Lane::Clean) => Priority::Report,
            Next::Event => Priority::Event,
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
            if stop && writes.is_empty() && self.events.is_empty() {
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
                    _ = self.events.pushed() => {}
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
                _ = self.budget.acquire(next.priority(), taken) => {}
                Ok(()) = stopping.changed(), if !stop => continue,
            }
            let stop = *stopping.borrow();
            let Some(next) = self.next(stop, writes.len(), &events) else {
                self.budget.give_back(taken);
                continue;
            };
            match next.requests().cmp(&taken) {
                std::cmp::Ordering::Less => self.budget.give_back(taken - next.requests()),
                std::cmp::Ordering::Greater => {
                    let more = next.requests() - taken;
                    self.budget.acquire(next.priority(), more).await
                }
                std::cmp::Ordering::Equal => {}
            }
            match next {
                Next::Report(_) => {
                    if let Some(due) = self.queue.pop(Instant::now()) {
                        let this = self.clone();
                        writes.spawn(async move {
                            use futures::FutureExt;
                            let name = due.name.clone();
                            let write = std::panic::AssertUnwindSafe(this.write(due));
                            if let Err(panic) = write.catch_unwind().await {
                                // A bug: counted, and the report tried again after a backoff
                                // (its name must not stay in flight).
                                this.metrics.internal_errors.inc();
                                let why = crate::judging_pool::Panicked::of(panic);
                                tracing::error!(crd = %name, error = %why, "a report write panicked");
                                this.queue.failed(&name, Lane::Clean, Cause::Refused);
                            }
                            Finished::Report
                        });
                    }
                }
                Next::Event => {
                    if let Some(ev) = self.events.front() {
                        events.in_flight = true;
                        let this = self.clone();
                        writes.spawn(async move {
                            let r = this.events.publish(&ev).await;
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
            Some(Next::Report(Lane::Findings))
        } else if events.due(now, !self.events.is_empty()) {
            Some(Next::Event)
        } else {
            report.map(Next::Report)
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
                    self.metrics.internal_errors.inc();
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
                self.events.written(&ev);
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
            self.budget.give_back(Next::Report(Lane::Clean).requests());
            self.queue.skipped(name);
            return;
        };
        match result {
            Ok(()) => self.queue.written(name),
            Err(e) => {
                let cause = Cause::of(&e);
                self.metrics.reconcile_error(WRITE_REPORT, cause.label());
                let wait = self.queue.failed(name, lane, cause);
                let error = crate::cluster::client::describe(&e);
                tracing::error!(crd = name, %error, retry_in = ?wait, "writing the report failed");
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
        let now = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::now(),
        );
        let w = self.states.report_to_write(name, self.max_listed, &now)?;
        let lane = if w.has_findings {
            Lane::Findings
        } else {
            Lane::Clean
        };
        let (print, epoch) = (w.fingerprint, w.epoch);
        let revision = w.revision.clone();
        let mut object = report_object(w);
        // Outside the states' lock: it inflates the schemas.
        object.spec.audited_revision = report_status::packed_revision(&revision);
        drop(revision);
        if let Err(e) = apply(&self.client, &self.metrics, &object).await {
            return Some((lane, Err(e)));
        }
        self.states.report_written(name, epoch, print);
        Some((lane, Ok(())))
    }

    /// Deletes the report of a CRD that went away (not while the report CRD is not served:
    /// the report went with it; not if the CRD is back).
    async fn delete(&self, name: &str) -> Option<Result<(), kube::Error>> {
        if !self.queue.served() || self.states.tracks(name) {
            return None;
        }
        let api: Api<SchemaAudit> = Api::all(self.client.clone());
        self.metrics.api_write("delete");
        // One request of the two taken.
        self.budget.give_back(1);
        Some(match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => {
                tracing::info!(crd = name, "CRD removed; report deleted");
                Ok(())
            }
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(e) => {
                self.metrics.api_error("delete");
                Err(e)
            }
        })
    }
}

const FIELD_MANAGER: &str = "crd-audit";

/// Server-side apply of the report, then a merge patch of its whole status: every field of
/// the status the operator does not set is written as `null`, so nothing an earlier writer
/// left (the report of a deleted CRD of the same name, an older operator) survives. (Server-
/// side apply of the status would not remove a field that no manager owns any more, and on
/// servers before 1.22 the apply of the object itself takes the status fields from the
/// manager.)
///
/// The caller has taken the write budget of both requests.
async fn apply(
    client: &kube::Client,
    metrics: &Metrics,
    object: &SchemaAudit,
) -> Result<(), kube::Error> {
    let api: Api<SchemaAudit> = Api::all(client.clone());
    let name = object.metadata.name.clone().unwrap_or_default();
    let mut main = object.clone();
    main.status = None;
    metrics.api_write("patch");
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let applied = match api.patch(&name, &params, &Patch::Apply(&main)).await {
        Ok(applied) => applied,
        Err(e) => {
            metrics.api_error("patch");
            return Err(e);
        }
    };
    // The status describes the report as applied: its generation (moved on when the
    // audited revision in its spec changed).
    let mut status = object.status.clone().unwrap_or_default();
    report_status::observe_generation(&mut status, applied.metadata.generation.unwrap_or(0));
    metrics.api_write("patch");
    let body = serde_json::json!({ "status": status_patch(Some(&status)) });
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_string()),
        ..PatchParams::default()
    };
    if let Err(e) = api.patch_status(&name, &params, &Patch::Merge(&body)).await {
        metrics.api_error("patch");
        return Err(e);
    }
    Ok(())
}

/// The status as a merge patch that replaces the whole status: the optional fields left out
/// of the status are `null` (removed).
fn status_patch(status: Option<&SchemaAuditStatus>) -> serde_json::Value {
    let mut v = serde_json::to_value(status.cloned().unwrap_or_default())
        .unwrap_or(serde_json::Value::Null);
    if let serde_json::Value::Object(m) = &mut v {
        for key in STATUS_OPTIONAL_FIELDS {
            m.entry(key).or_insert(serde_json::Value::Null);
        }
    }
    v
}

/// The status fields that are left out when unset.
const STATUS_OPTIONAL_FIELDS: [&str; 5] = [
    "observedGeneration",
    "crdGeneration",
    "lastSchemaChange",
    "lastAuditTime",
    "auditDurationSeconds",
];

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every optional field of the status is in the patch, as a value or as null: a field
    /// left out would survive from an earlier writer.
    #[test]
    fn the_status_patch_names_every_optional_field() {
        let mut full = serde_json::to_value(SchemaAuditStatus {
            observed_generation: Some(1),
            crd_generation: Some(1),
            last_schema_change: Some(Default::default()),
            last_audit_time: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
            )),
            audit_duration_seconds: Some(1.0),
            ..Default::default()
        })
        .unwrap();
        let empty = status_patch(Some(&SchemaAuditStatus::default()));
        for key in STATUS_OPTIONAL_FIELDS {
            assert_eq!(empty[key], serde_json::Value::Null, "{key}");
            assert!(full.as_object_mut().unwrap().remove(key).is_some(), "{key}");
        }
        // What remains is always written.
        for key in full.as_object().unwrap().keys() {
            assert!(empty.get(key).is_some_and(|v| !v.is_null()), "{key}");
        }
    }
}
