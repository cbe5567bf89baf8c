//! The storage migrations of a leadership term (`migrations`), by CRD: the one task that
//! migrates a CRD's objects to a storage version, and when a migration that did not prune is
//! tried again. Stopped with the term.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// How a migration ended: the `result` label of `crd_audit_storage_migrations_total`, when
/// it is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// This task rewrote every object and its write pruned `status.storedVersions`.
    Pruned,
    /// The server refused the rewrite of some objects: `storedVersions` keeps the old ones.
    Blocked,
    /// The CRD changed (or went) during the migration: nothing was pruned.
    CrdChanged,
    /// A request failed for good (an outage longer than the retries, a refusal of RBAC).
    Failed,
    /// When the task read the CRD, `storedVersions` was the storage version alone already
    /// (an earlier task, or someone else, pruned it): nothing done, nothing counted.
    NotNeeded,
}

impl Outcome {
    /// The metric's label; `None` when nothing was done.
    pub fn label(self) -> Option<&'static str> {
        match self {
            Outcome::Pruned => Some("pruned"),
            Outcome::Blocked => Some("blocked"),
            Outcome::CrdChanged => Some("crd_changed"),
            Outcome::Failed => Some("failed"),
            Outcome::NotNeeded => None,
        }
    }

    /// Whether the CRD's migration to this storage version is over: nothing left to try
    /// until its `storedVersions` holds an old version again.
    pub fn settled(self) -> bool {
        matches!(self, Outcome::Pruned | Outcome::NotNeeded)
    }
}

/// The migrations of a leadership term, by CRD.
#[derive(Default)]
pub struct Migrations {
    running: Mutex<HashMap<String, Entry>>,
}

pub(crate) struct Entry {
    /// The storage version this entry migrates to: one task per CRD and storage version.
    pub(crate) storage: String,
    /// The running migration (`None` once it ended).
    pub(crate) task: Option<tokio::task::JoinHandle<()>>,
    /// How the last migration to `storage` ended.
    pub(crate) ended: Option<Outcome>,
    /// After a migration that did not prune: the CRD revision it ran on, and when to try
    /// again on that revision.
    pub(crate) retry: Option<(String, Instant, Duration)>,
}

impl Entry {
    pub(crate) fn running(&self) -> bool {
        self.task.as_ref().is_some_and(|t| !t.is_finished())
    }
}

impl Migrations {
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stops every migration (the term ends).
    pub fn stop_all(&self) {
        for (_, e) in self.lock().drain() {
            if let Some(t) = e.task {
                t.abort();
            }
        }
    }

    /// Stops the migration of a CRD that went away.
    pub fn stop(&self, crd: &str) {
        if let Some(t) = self.lock().remove(crd).and_then(|e| e.task) {
            t.abort();
        }
    }

    #[cfg(test)]
    pub fn running(&self, crd: &str) -> bool {
        self.lock().get(crd).is_some_and(Entry::running)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_a_task_did_is_counted() {
        assert_eq!(Outcome::Pruned.label(), Some("pruned"));
        assert_eq!(Outcome::NotNeeded.label(), None);
        assert!(Outcome::Pruned.settled() && Outcome::NotNeeded.settled());
        for o in [Outcome::Blocked, Outcome::CrdChanged, Outcome::Failed] {
            assert!(!o.settled() && o.label().is_some(), "{o:?}");
        }
    }
}
