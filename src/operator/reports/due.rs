//! Whether a CRD's report is due, decided by the Controller's reconcile: the CRD's metrics
//! and the Events of its conditions are published, and when the status its report should
//! have differs from what was written, the report is queued for the writer task
//! (`reports::queue`, `reports::writer`), in the lane of reports with findings or of clean
//! ones. The reconcile never waits for the write.

use crate::operator::crds::state;
use crate::operator::events::PendingEvent;
use crate::operator::leadership::context::{Ctx, crd_reference};
use crate::operator::reports::queue::Lane;
use crate::operator::reports::report::{desired, has_findings, publish_metrics};
use crate::operator::reports::status as report_status;
use std::time::Duration;

/// How long a report waits for its revision's object audit to complete before it is written
/// saying that the audit runs.
const AUDIT_RUNNING_WAIT: Duration = Duration::from_secs(60);

/// Publishes the CRD's metrics and the Events of its conditions, and queues its report if
/// what it says changed. `Some(wait)`: the report waits for its revision's object audit;
/// the reconcile comes back after `wait`.
pub(crate) fn bring_up_to_date(ctx: &Ctx, name: &str) -> Option<Duration> {
    let lane = match observe(ctx, name)? {
        Due::AuditRunning(wait) => return Some(wait),
        Due::Now(lane) => lane,
    };
    // Not while the report CRD is not served: every report is due again when it is back.
    if ctx.crds.reports.served() {
        ctx.crds.reports.push(name, lane);
    }
    None
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

/// Publishes a CRD's metrics and the Events of its conditions that changed; if its report
/// is due (its status is not the one written), why.
fn observe(ctx: &Ctx, name: &str) -> Option<Due> {
    let mut reg = ctx.registry();
    let t = reg.get_mut(name)?;
    let status = desired(&ctx.deps, t);
    publish_metrics(&ctx.deps, t, &status);
    for (warning, reason, note) in state::on_report_status(t, &status) {
        ctx.queue_event(PendingEvent {
            warning,
            reason: reason.into(),
            note,
            regarding: crd_reference(t.crd()),
        });
    }
    if t.written() == Some(report_status::fingerprint(&status)) {
        return None;
    }
    let running = tokio::time::Instant::now().saturating_duration_since(t.since());
    Some(if !t.audited() && running < AUDIT_RUNNING_WAIT {
        Due::AuditRunning(AUDIT_RUNNING_WAIT - running)
    } else if has_findings(t) {
        Due::Now(Lane::Findings)
    } else {
        Due::Now(Lane::Clean)
    })
}
