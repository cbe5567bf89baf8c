//! The reports waiting to be written, by CRD name, in two lanes: reports with findings go
//! before clean ones (on a fresh start with thousands of CRDs the reports that matter do not
//! wait behind the clean ones). A name is queued once, in the higher of the lanes it was
//! pushed to. A write that failed waits out its retry (by what the server answered, as a
//! failed reconcile does) before its name is in a lane again; when the API server recovers
//! every waiting name is due at once. The reconciles push (`push`), the writer task takes
//! (`pop`) and says how the write went (`written`, `failed`).
//!
//! A name stands for "the report of this CRD as its state is when the writer gets to it":
//! the writer builds the report then, so a queued report is never out of date and the queue
//! holds no report. The writes of one report never overlap: a name pushed while its write is
//! in flight waits in its lane until that write ends (written, or failed). Otherwise the
//! deletion of a CRD's report could pass a write of it still in flight, which would then
//! create the report again after its CRD went away.

use crate::operator::retry::{Cause, retry_wait};
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use tokio::sync::Notify;
use tokio::time::Instant;

/// How long a report written rests before it is written again: a burst of changes (the
/// annotations of many objects refused one after another, the rewrites of a migration)
/// makes one write a second, not one each, whatever the write budget allows.
pub const REST: std::time::Duration = std::time::Duration::from_secs(1);

/// Which lane a report waits in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lane {
    Clean,
    Findings,
}

#[derive(Default)]
struct Lanes {
    findings: VecDeque<String>,
    clean: VecDeque<String>,
    /// The names in a lane, and which.
    queued: HashMap<String, Lane>,
    /// Names whose write failed, waiting for their retry: when, and the lane they go to.
    waiting: HashMap<String, (Instant, Lane)>,
    /// Failed writes in a row, by name (until one succeeds or the API server recovers).
    failures: HashMap<String, u32>,
    /// The names of CRDs that went away: their reports are deleted.
    removed: HashSet<String>,
    /// The names whose write is in flight (popped, not yet `written` or `failed`).
    in_flight: HashSet<String>,
    /// The reports written within the last `REST`, oldest first: pushed again, they wait
    /// until then.
    recent: VecDeque<(Instant, String)>,
}

impl Lanes {
    fn enqueue(&mut self, name: &str, lane: Lane) {
        match self.queued.get(name).copied() {
            Some(l) if l >= lane => {}
            Some(_) => {
                // Clean to findings: it moves up.
                self.clean.retain(|n| n != name);
                self.findings.push_back(name.to_string());
                self.queued.insert(name.to_string(), lane);
            }
            None => {
                match lane {
                    Lane::Findings => self.findings.push_back(name.to_string()),
                    Lane::Clean => self.clean.push_back(name.to_string()),
                }
                self.queued.insert(name.to_string(), lane);
            }
        }
    }

    fn dequeue(&mut self, name: &str) -> Option<Lane> {
        let lane = self.queued.remove(name)?;
        match lane {
            Lane::Findings => self.findings.retain(|n| n != name),
            Lane::Clean => self.clean.retain(|n| n != name),
        }
        Some(lane)
    }

    /// The first name of a lane whose write is not in flight.
    fn first_ready(&self, lane: Lane) -> Option<usize> {
        let queue = match lane {
            Lane::Findings => &self.findings,
            Lane::Clean => &self.clean,
        };
        queue.iter().position(|n| !self.in_flight.contains(n))
    }

    /// Until when a report written a moment ago rests, if it does.
    fn resting(&mut self, name: &str, now: Instant) -> Option<Instant> {
        while self.recent.front().is_some_and(|(at, _)| *at + REST <= now) {
            self.recent.pop_front();
        }
        self.recent
            .iter()
            .rev()
            .find(|(_, n)| n == name)
            .map(|(at, _)| *at + REST)
    }

    /// Names whose retry is due go to their lane.
    fn release(&mut self, now: Instant) {
        let due: Vec<(String, Lane)> = self
            .waiting
            .iter()
            .filter(|(_, (at, _))| *at <= now)
            .map(|(n, (_, lane))| (n.clone(), *lane))
            .collect();
        for (name, lane) in due {
            self.waiting.remove(&name);
            self.enqueue(&name, lane);
        }
    }
}

/// A report due, as the writer takes it.
#[derive(Debug, PartialEq, Eq)]
pub struct Popped {
    pub name: String,
    /// Its CRD went away: the report is deleted.
    pub removed: bool,
}

/// The reports to write; shared by the reconciles and the writer task.
#[derive(Default)]
pub struct ReportQueue {
    lanes: Mutex<Lanes>,
    pushed: Notify,
    /// The report CRD is not served (absent, or being deleted): nothing is written then
    /// (its finalizer removes the reports, and each report written back would hold the
    /// deletion up); every report is written again when it is back.
    unserved: AtomicBool,
}

impl ReportQueue {
    fn lock(&self) -> MutexGuard<'_, Lanes> {
        self.lanes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The report of the tracked CRD `name` is due.
    pub fn push(&self, name: &str, lane: Lane) {
        let mut lanes = self.lock();
        lanes.removed.remove(name);
        self.due(lanes, name, lane);
    }

    /// The CRD `name` went away: its report is due to be deleted (unless it is pushed again
    /// first, its CRD back).
    pub fn push_removed(&self, name: &str) {
        let mut lanes = self.lock();
        lanes.removed.insert(name.to_string());
        self.due(lanes, name, Lane::Clean);
    }

    fn due(&self, mut lanes: MutexGuard<'_, Lanes>, name: &str, lane: Lane) {
        if let Some((_, waiting)) = lanes.waiting.get_mut(name) {
            // Its retry is not due yet: it waits, in the higher lane.
            *waiting = (*waiting).max(lane);
            return;
        }
        if let Some(until) = lanes.resting(name, Instant::now()) {
            // Written a moment ago: a burst of changes makes one write, not one each.
            lanes.waiting.insert(name.to_string(), (until, lane));
            drop(lanes);
            self.pushed.notify_one();
            return;
        }
        lanes.enqueue(name, lane);
        drop(lanes);
        self.pushed.notify_one();
    }

    /// The next report due: one with findings before a clean one, each lane in order.
    pub fn pop(&self, now: Instant) -> Option<Popped> {
        let mut lanes = self.lock();
        lanes.release(now);
        let name = if let Some(i) = lanes.first_ready(Lane::Findings) {
            lanes.findings.remove(i)?
        } else {
            let i = lanes.first_ready(Lane::Clean)?;
            lanes.clean.remove(i)?
        };
        lanes.queued.remove(&name);
        lanes.in_flight.insert(name.clone());
        let removed = lanes.removed.contains(&name);
        Some(Popped { name, removed })
    }

    /// The lane of the next report due now, if one is.
    pub fn next_due(&self, now: Instant) -> Option<Lane> {
        let mut lanes = self.lock();
        lanes.release(now);
        if lanes.first_ready(Lane::Findings).is_some() {
            Some(Lane::Findings)
        } else if lanes.first_ready(Lane::Clean).is_some() {
            Some(Lane::Clean)
        } else {
            None
        }
    }

    /// When the next failed write is tried again, if one waits.
    pub fn next_retry(&self) -> Option<Instant> {
        self.lock().waiting.values().map(|(at, _)| *at).min()
    }

    /// The report of `name` was written or deleted (or did not need to be).
    pub fn written(&self, name: &str) {
        let mut lanes = self.lock();
        lanes.failures.remove(name);
        lanes.in_flight.remove(name);
        let now = Instant::now();
        lanes.resting(name, now);
        lanes.recent.push_back((now, name.to_string()));
        // Pushed again while this write was in flight: it rests first.
        if let Some(lane) = lanes.dequeue(name) {
            lanes.waiting.insert(name.to_string(), (now + REST, lane));
        } else {
            // Pushed as removed while this write was in flight: the deletion is still due.
            lanes.removed.remove(name);
        }
        drop(lanes);
        self.pushed.notify_one();
    }

    /// The report of `name` did not need to be written (it says what was written already,
    /// or its CRD is no longer tracked): a push made meanwhile may go at once.
    pub fn skipped(&self, name: &str) {
        let mut lanes = self.lock();
        lanes.failures.remove(name);
        lanes.in_flight.remove(name);
        if !lanes.queued.contains_key(name) {
            lanes.removed.remove(name);
        }
        drop(lanes);
        self.pushed.notify_one();
    }

    /// The write of `name`'s report failed: it is tried again after the wait the answer
    /// asks for (a conflict soon, a 429 after its `Retry-After`, otherwise a backoff that
    /// doubles with each failure in a row), in `lane` or a higher one it was pushed to
    /// meanwhile. How long that is.
    pub fn failed(&self, name: &str, lane: Lane, cause: Cause) -> std::time::Duration {
        let mut lanes = self.lock();
        lanes.in_flight.remove(name);
        let in_a_row = lanes.failures.entry(name.to_string()).or_insert(0);
        *in_a_row = in_a_row.saturating_add(1);
        let wait = retry_wait(cause, *in_a_row);
        let lane = lanes.dequeue(name).map_or(lane, |l| l.max(lane));
        lanes
            .waiting
            .insert(name.to_string(), (Instant::now() + wait, lane));
        wait
    }

    /// The API server recovered: every failed write is tried again now, from the first
    /// backoff.
    pub fn recovered(&self) {
        let mut lanes = self.lock();
        lanes.failures.clear();
        let far = Instant::now() + std::time::Duration::from_secs(86_400 * 365);
        lanes.release(far);
        drop(lanes);
        self.pushed.notify_one();
    }

    /// The names queued or waiting for a retry.
    pub fn len(&self) -> usize {
        let lanes = self.lock();
        lanes.queued.len() + lanes.waiting.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waits for a push (one made since the last wait counts).
    pub async fn pushed(&self) {
        self.pushed.notified().await
    }

    /// Whether the report CRD is served (reports are written).
    pub fn served(&self) -> bool {
        !self.unserved.load(Ordering::SeqCst)
    }

    /// The report CRD is served again, or no longer; whether that changed.
    pub fn set_served(&self, served: bool) -> bool {
        let was = !self.unserved.swap(!served, Ordering::SeqCst);
        was != served
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn drain(q: &ReportQueue) -> Vec<String> {
        std::iter::from_fn(|| q.pop(Instant::now()).map(|p| p.name)).collect()
    }

    fn pop(q: &ReportQueue) -> Option<String> {
        q.pop(Instant::now()).map(|p| p.name)
    }

    #[tokio::test(start_paused = true)]
    async fn findings_go_first_and_each_name_once() {
        let q = ReportQueue::default();
        q.push("a", Lane::Clean);
        q.push("b", Lane::Clean);
        q.push("c", Lane::Findings);
        q.push("a", Lane::Clean);
        q.push("b", Lane::Findings); // moves up
        q.push("c", Lane::Clean); // stays up
        assert_eq!(q.len(), 3);
        assert_eq!(q.next_due(Instant::now()), Some(Lane::Findings));
        assert_eq!(drain(&q), ["c", "b", "a"]);
        assert!(q.is_empty());
        assert_eq!(q.next_due(Instant::now()), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_removed_crds_report_is_deleted_unless_the_crd_comes_back() {
        let q = ReportQueue::default();
        q.push_removed("gone");
        q.push_removed("back");
        q.push("back", Lane::Clean);
        let popped: Vec<Popped> = std::iter::from_fn(|| q.pop(Instant::now())).collect();
        let removed = |name: &str, removed| Popped {
            name: name.into(),
            removed,
        };
        assert_eq!(popped, [removed("gone", true), removed("back", false)]);
        // A deletion that failed is still one when it is tried again.
        q.failed("gone", Lane::Clean, Cause::Unavailable);
        q.recovered();
        assert_eq!(q.pop(Instant::now()), Some(removed("gone", true)));
        q.written("gone");
        // Back (a CRD of the same name): its report is written, after the deletion's rest.
        q.push("gone", Lane::Clean);
        tokio::time::advance(REST).await;
        assert_eq!(q.pop(Instant::now()), Some(removed("gone", false)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_write_waits_its_backoff_then_the_recovery_releases_it() {
        let q = ReportQueue::default();
        q.push("a", Lane::Clean);
        assert_eq!(pop(&q).as_deref(), Some("a"));
        // Pushed again while its write was in flight, then the write failed.
        q.push("a", Lane::Findings);
        let waits: Vec<u64> = (0..3)
            .map(|_| {
                let w = q.failed("a", Lane::Clean, Cause::Unavailable);
                w.as_secs()
            })
            .collect();
        assert_eq!(waits, [1, 2, 4]);
        assert!(q.next_due(Instant::now()).is_none());
        // A push while it waits does not cut the wait short.
        q.push("a", Lane::Clean);
        assert!(pop(&q).is_none());
        assert_eq!(q.len(), 1);
        let retry = q.next_retry().unwrap();
        assert_eq!(retry - Instant::now(), Duration::from_secs(4));
        tokio::time::advance(Duration::from_secs(4)).await;
        assert_eq!(pop(&q).as_deref(), Some("a"));
        // Conflicts are tried again soon; a 429 after what it asks.
        assert_eq!(
            q.failed("a", Lane::Findings, Cause::Conflict),
            Duration::from_millis(200)
        );
        q.failed(
            "b",
            Lane::Clean,
            Cause::Throttled(Some(Duration::from_secs(7))),
        );
        assert_eq!(
            q.next_retry().unwrap() - Instant::now(),
            Duration::from_millis(200)
        );
        // The API server recovered: both are due at once, the findings first, and the
        // backoff starts again.
        q.recovered();
        assert_eq!(drain(&q), ["a", "b"]);
        assert_eq!(
            q.failed("b", Lane::Clean, Cause::Unavailable),
            Duration::from_secs(1)
        );
    }

    /// The worst moment for a removal: the CRD goes while its report's write is in flight,
    /// and that write fails. The retry deletes the report; it does not write it back.
    #[tokio::test(start_paused = true)]
    async fn a_crd_removed_during_a_failed_write_has_its_report_deleted() {
        let q = ReportQueue::default();
        q.push("a", Lane::Findings);
        let popped = q.pop(Instant::now()).unwrap();
        assert!(!popped.removed);
        q.push_removed("a"); // while the write is in flight
        q.failed("a", Lane::Findings, Cause::Unavailable);
        assert!(q.pop(Instant::now()).is_none(), "it waits its retry");
        tokio::time::advance(Duration::from_secs(1)).await;
        let retry = q.pop(Instant::now()).unwrap();
        assert_eq!(
            retry,
            Popped {
                name: "a".into(),
                removed: true
            }
        );
    }

    #[test]
    fn served_until_said_otherwise() {
        let q = ReportQueue::default();
        assert!(q.served());
        assert!(!q.set_served(true));
        assert!(q.set_served(false));
        assert!(!q.served());
        assert!(q.set_served(true));
    }

    /// The writes of one report never overlap: pushed again (or removed) while its write is
    /// in flight, a name waits until that write ends; the others go meanwhile.
    #[tokio::test(start_paused = true)]
    async fn a_report_in_flight_is_not_popped_again_until_its_write_ends() {
        let q = ReportQueue::default();
        q.push("a", Lane::Findings);
        q.push("b", Lane::Clean);
        assert_eq!(pop(&q).as_deref(), Some("a"));
        // Its CRD went away while the write is in flight.
        q.push_removed("a");
        assert_eq!(q.next_due(Instant::now()), Some(Lane::Clean));
        assert_eq!(pop(&q).as_deref(), Some("b"));
        assert_eq!(q.next_due(Instant::now()), None, "a is in flight");
        assert_eq!(q.pop(Instant::now()), None);
        q.written("a");
        assert_eq!(
            q.pop(Instant::now()),
            None,
            "a report written rests a moment"
        );
        assert_eq!(q.next_retry(), Some(Instant::now() + REST));
        tokio::time::advance(REST).await;
        assert_eq!(
            q.pop(Instant::now()),
            Some(Popped {
                name: "a".into(),
                removed: true
            }),
            "the deletion goes after the write"
        );
        q.written("a");
        // A failed write frees the name too (it waits out its retry).
        q.push("c", Lane::Clean);
        assert_eq!(pop(&q).as_deref(), Some("c"));
        q.push("c", Lane::Clean);
        assert_eq!(q.pop(Instant::now()), None);
        let wait = q.failed("c", Lane::Clean, Cause::Conflict);
        tokio::time::advance(wait).await;
        assert_eq!(pop(&q).as_deref(), Some("c"));
    }

    /// A burst of pushes of a report written a moment ago makes one write when its rest
    /// ends; a report with nothing to write does not rest.
    #[tokio::test(start_paused = true)]
    async fn a_report_written_rests_a_moment_before_it_is_written_again() {
        let q = ReportQueue::default();
        q.push("a", Lane::Findings);
        assert_eq!(pop(&q).as_deref(), Some("a"));
        q.written("a");
        for _ in 0..5 {
            q.push("a", Lane::Clean);
            tokio::time::advance(REST / 10).await;
        }
        q.push("b", Lane::Clean);
        assert_eq!(drain(&q), ["b"], "a rests; b goes");
        tokio::time::advance(REST / 2).await;
        assert_eq!(
            drain(&q),
            ["a"],
            "once, in the higher lane it was pushed to"
        );
        q.skipped("a");
        q.push("a", Lane::Clean);
        assert_eq!(drain(&q), ["a"], "nothing was written: no rest");
        q.written("a");
        tokio::time::advance(REST).await;
        q.push("a", Lane::Clean);
        assert_eq!(drain(&q), ["a"], "rested long enough");
    }
}
