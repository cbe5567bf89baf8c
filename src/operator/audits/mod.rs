//! The audits of the objects of every audited CRD: one task per CRD (`tasks`, started and
//! stopped by the CRDs' reconciles through the [`Auditor`]), what each runs (`objects`: a
//! watch of the storage version, every object judged and dropped), and the bounded cache of
//! compiled revisions they judge with (`validators`).

pub mod objects;
pub mod tasks;
pub mod validators;

use futures::FutureExt;
use objects::{AuditHandle, supervised_audit};
use std::time::Duration;
use tasks::{AuditTasks, Ensured};

/// The object audits of a leadership term, as the reconciles start and stop them: the tasks,
/// and what each task is handed.
pub struct Auditor {
    tasks: AuditTasks,
    handle: AuditHandle,
}

impl Auditor {
    /// `resync`: `fullResyncInterval`. An audit task that dies wakes its CRD's reconcile
    /// (through the states), which starts it again.
    pub fn new(handle: AuditHandle, resync: Duration) -> Auditor {
        let died: tasks::Died = {
            let states = handle.states.clone();
            std::sync::Arc::new(move |crd: &str| states.audit_died(crd))
        };
        Auditor {
            tasks: AuditTasks::new(resync, died),
            handle,
        }
    }

    /// Makes sure the audit of the tracked CRD's objects runs for its current revision
    /// (started, or started again when it ended on a bug: counted as an internal error and
    /// shown in the report) and asks for its full resync when it is due; how long until the
    /// next one. `None` when the CRD is not tracked or its audit ended for good.
    pub fn ensure(&self, crd: &str) -> Option<Duration> {
        let (epoch, revision) = self.handle.states.current_audit(crd)?;
        let handle = &self.handle;
        let start =
            |relist| supervised_audit(handle.clone(), revision.clone(), epoch, relist).boxed();
        let ensured = self.tasks.ensure(crd, epoch, start);
        if let Ensured::Restarted(why, _) = &ensured {
            self.handle.metrics.internal_errors.inc();
            tracing::error!(crd, error = %why, "the audit of the objects had ended (a bug); starting it again");
            self.handle.states.audit_blocked(
                crd,
                epoch,
                crate::operator::state::Blocked::AuditRestarted(why.clone()),
            );
        }
        ensured.next_resync()
    }

    /// Stops the audit of a CRD that went away (or is no longer audited), and forgets its
    /// compiled revision.
    pub fn stop(&self, crd: &str) {
        self.handle.validators.forget(crd);
        self.tasks.stop(crd);
    }

    /// Forgets the compiled revision of a CRD whose revision changed.
    pub fn forget_compiled(&self, crd: &str) {
        self.handle.validators.forget(crd);
    }

    /// Stops every audit (the term ends).
    pub fn stop_all(&self) {
        self.tasks.stop_all();
    }

    /// The cache of compiled revisions, for tests.
    #[cfg(test)]
    pub fn validators(&self) -> &validators::Validators {
        &self.handle.validators
    }

    /// What each audit task is handed, for tests.
    #[cfg(test)]
    pub fn handle(&self) -> &AuditHandle {
        &self.handle
    }

    /// [`AuditTasks::ensure`] with an audit of the test's own, for tests.
    #[cfg(test)]
    pub fn ensure_with(
        &self,
        crd: &str,
        epoch: u64,
        start: impl FnOnce(tasks::Relist) -> futures::future::BoxFuture<'static, tasks::Ended>,
    ) -> Ensured {
        self.tasks.ensure(crd, epoch, start)
    }

    /// Whether an audit task of the CRD runs (not ended).
    #[cfg(test)]
    pub fn alive(&self, crd: &str) -> bool {
        self.tasks.alive(crd)
    }

    /// Aborts the CRD's audit task as a bug would end it, for tests.
    #[cfg(test)]
    pub fn kill_for_tests(&self, crd: &str) {
        self.tasks.kill_for_tests(crd)
    }
}
