//! Whether a CRD's report is due, decided by the Controller's reconcile: the CRD's metrics
//! and the Events of its conditions are published, and when the status its report should
//! have differs from what was written, the report is queued for the writer task
//! (`reports::queue`, `reports::writer`), in the lane of reports with findings or of clean
//! ones. The reconcile never waits for the write.

use crate::operator::events::{EventQueue, PendingEvent, crd_reference};
use crate::operator::metrics::Metrics;
use crate::operator::reports::queue::{Lane, ReportQueue};
use crate::operator::reports::report::publish_metrics;
use crate::operator::state::CrdStates;
use std::sync::Arc;
use std::time::Duration;

/// How long a report waits for its revision's object audit to complete before it is written
/// saying that the audit runs.
const AUDIT_RUNNING_WAIT: Duration = Duration::from_secs(60);

/// What the reconciles use to bring the reports up to date: the states they read, the
/// metrics they publish, the Event queue, and the queue of reports due (the writer's handle).
pub struct DueReports {
    pub states: Arc<CrdStates>,
    pub metrics: Arc<Metrics>,
    pub events: Arc<EventQueue>,
    pub queue: Arc<ReportQueue>,
    /// `maxListedObjects`.
    pub max_listed: usize,
}

/// Why a report is due.
enum Due {
    /// Now, in this lane.
    Now(Lane),
    /// Its revision's object audit is still running: the report (saying so) is written
    /// after this wait, unless the audit completes first. On a fresh start with thousands of
    /// CRDs this writes most reports once, not twice.
    AuditRunning(Duration),
}

impl DueReports {
    /// Publishes the CRD's metrics and the Events of its conditions, and queues its report if
    /// what it says changed. `Some(wait)`: the report waits for its revision's object audit;
    /// the reconcile comes back after `wait`.
    pub fn bring_up_to_date(&self, name: &str) -> Option<Duration> {
        let lane = match self.observe(name)? {
            Due::AuditRunning(wait) => return Some(wait),
            Due::Now(lane) => lane,
        };
        // Not while the report CRD is not served: every report is due again when it is back.
        if self.queue.served() {
            self.queue.push(name, lane);
        }
        None
    }

    /// Publishes a CRD's metrics and the Events of its conditions that changed; if its
    /// report is due (its status is not the one written), why.
    fn observe(&self, name: &str) -> Option<Due> {
        let o = self.states.observe(name, self.max_listed)?;
        publish_metrics(&self.metrics, &o.crd, &o.status);
        for (warning, reason, note) in o.events {
            self.events.push(PendingEvent {
                warning,
                reason: reason.into(),
                note,
                regarding: crd_reference(&o.crd),
            });
        }
        if o.written {
            return None;
        }
        let running = tokio::time::Instant::now().saturating_duration_since(o.since);
        Some(if !o.audited && running < AUDIT_RUNNING_WAIT {
            Due::AuditRunning(AUDIT_RUNNING_WAIT - running)
        } else if o.has_findings {
            Due::Now(Lane::Findings)
        } else {
            Due::Now(Lane::Clean)
        })
    }
}
