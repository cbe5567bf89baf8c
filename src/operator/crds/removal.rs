//! A CRD that went away (deleted, gone while the CRD watch was down, or no longer audited):
//! its object audit, migration and conversion round trips stop, its metrics go, and its report is deleted (by the
//! writer task, retried with backoff, after any write of it still in flight).

use crate::operator::crds::Reconciler;

impl Reconciler {
    /// A CRD went away (or is no longer audited): stop its audit and migration, forget its
    /// metrics, and delete its report (retried with backoff until it is gone, unless the CRD
    /// comes back first).
    #[tracing::instrument(name = "remove", skip_all, fields(crd = name))]
    pub(crate) fn remove(&self, name: &str) {
        self.backoffs.succeeded(name);
        if let Some(m) = &self.migrations {
            m.running.stop(name);
        }
        if let Some(c) = &self.conversions {
            c.checks.stop(name);
        }
        self.audits.stop(name);
        let Some(versions) = self.states.crd_gone(name) else {
            return;
        };
        self.metrics.forget_crd(name, &versions);
        // The writer deletes the report (retried until it is gone, unless the CRD comes back).
        self.reports.queue.push_removed(name);
    }
}
