//! The storage migrations of a leadership term (`migrations`), by CRD: what runs, and
//! when a migration that did not prune is tried again. Stopped with the term.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// The migrations of a leadership term, by CRD.
#[derive(Default)]
pub struct Migrations {
    running: Mutex<HashMap<String, Entry>>,
}

pub(crate) struct Entry {
    /// The running migration (`None` once it ended).
    pub(crate) task: Option<tokio::task::JoinHandle<()>>,
    /// After a migration that did not prune: the CRD revision it ran on, and when to try
    /// again on that revision.
    pub(crate) retry: Option<(String, Instant, Duration)>,
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
        self.lock()
            .get(crd)
            .is_some_and(|e| e.task.as_ref().is_some_and(|t| !t.is_finished()))
    }
}
