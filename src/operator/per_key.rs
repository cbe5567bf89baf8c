//! Jobs run a few at a time, one at a time per key and in the order they came for that key:
//! the CRD watch reconciles CRD events this way, so that one CRD with heavy CEL does not hold
//! up the others, and two events of one CRD are never reconciled at once or out of order.
//!
//! The watch hands a job over only while [`PerKey::has_room`]: a waiting job holds its CRD
//! (up to a few megabytes), so jobs are not queued without bound. Jobs are tasks of a
//! `JoinSet`: dropping the `PerKey` aborts them.

use futures::future::BoxFuture;
use std::collections::{BTreeMap, VecDeque};
use tokio::task::{Id, JoinSet};

/// Runs keyed jobs, at most `limit` at once.
pub struct PerKey {
    limit: usize,
    running: JoinSet<()>,
    /// The key of each running job.
    busy: BTreeMap<Id, String>,
    /// Jobs waiting, oldest first.
    waiting: VecDeque<(String, BoxFuture<'static, ()>)>,
}

impl PerKey {
    /// `limit` jobs at once (at least one).
    pub fn new(limit: usize) -> PerKey {
        PerKey {
            limit: limit.max(1),
            running: JoinSet::new(),
            busy: BTreeMap::new(),
            waiting: VecDeque::new(),
        }
    }

    /// Jobs running or waiting.
    pub fn len(&self) -> usize {
        self.running.len() + self.waiting.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether another job may be handed over: fewer than twice `limit` are running or
    /// waiting.
    pub fn has_room(&self) -> bool {
        self.len() < 2 * self.limit
    }

    /// Hands over a job for `key`; it starts when a slot is free and no job of `key` runs.
    pub fn push(&mut self, key: String, job: BoxFuture<'static, ()>) {
        self.waiting.push_back((key, job));
        self.start_ready();
    }

    /// Starts the oldest waiting jobs whose keys are free, while slots are free.
    fn start_ready(&mut self) {
        let mut i = 0;
        while self.running.len() < self.limit && i < self.waiting.len() {
            let key = &self.waiting[i].0;
            // A job waits behind an older one of its key.
            let earlier = self.waiting.iter().take(i).any(|(k, _)| k == key);
            if self.busy.values().any(|k| k == key) || earlier {
                i += 1;
                continue;
            }
            let Some((key, job)) = self.waiting.remove(i) else {
                break;
            };
            let id = self.running.spawn(job).id();
            self.busy.insert(id, key);
        }
    }

    /// Waits until a running job ends (pending forever when none runs), and starts what
    /// may start then; `true` when the job panicked (a bug: logged here, for the caller to
    /// count), its key freed all the same.
    pub async fn next_done(&mut self) -> bool {
        let Some(done) = self.running.join_next_with_id().await else {
            return std::future::pending().await;
        };
        let (id, failed) = match done {
            Ok((id, ())) => (id, false),
            Err(e) => {
                let key = self.busy.get(&e.id()).cloned().unwrap_or_default();
                tracing::error!(key = %key, error = %e, "a job failed (internal error)");
                (e.id(), true)
            }
        };
        self.busy.remove(&id);
        self.start_ready();
        failed
    }

    /// Waits until every job handed over has ended; how many of them panicked.
    pub async fn drain(&mut self) -> usize {
        let mut failed = 0;
        while !self.is_empty() {
            failed += usize::from(self.next_done().await);
        }
        failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    use tokio::time::Instant;

    /// A job that records when it started and ended, taking `secs` seconds.
    fn job(log: &Arc<Mutex<Vec<String>>>, what: &str, secs: u64) -> BoxFuture<'static, ()> {
        let (log, what) = (log.clone(), what.to_string());
        Box::pin(async move {
            log.lock().unwrap().push(format!("start {what}"));
            tokio::time::sleep(Duration::from_secs(secs)).await;
            log.lock().unwrap().push(format!("end {what}"));
        })
    }

    /// Two slots: a slow job of one key does not hold up the jobs of other keys.
    #[tokio::test(start_paused = true)]
    async fn a_slow_key_does_not_hold_up_the_others() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut p = PerKey::new(2);
        let start = Instant::now();
        p.push("heavy".into(), job(&log, "heavy", 100));
        for i in 0..3 {
            p.push(format!("k{i}"), job(&log, &format!("k{i}"), 1));
        }
        assert!(!p.has_room(), "twice the limit is handed over");
        while log
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.starts_with("end k"))
            .count()
            < 3
        {
            p.next_done().await;
        }
        assert_eq!(start.elapsed(), Duration::from_secs(3));
        assert!(!log.lock().unwrap().contains(&"end heavy".to_string()));
        assert_eq!(p.drain().await, 0);
        assert_eq!(start.elapsed(), Duration::from_secs(100));
        assert!(p.is_empty() && p.has_room());
    }

    /// Jobs of one key run one at a time, in the order handed over, even with free slots.
    #[tokio::test(start_paused = true)]
    async fn jobs_of_one_key_run_in_order_one_at_a_time() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut p = PerKey::new(4);
        p.push("a".into(), job(&log, "a1", 5));
        p.push("a".into(), job(&log, "a2", 1));
        p.push("b".into(), job(&log, "b1", 2));
        p.push("a".into(), job(&log, "a3", 1));
        p.drain().await;
        let log = log.lock().unwrap().clone();
        let a: Vec<&String> = log.iter().filter(|l| l.contains(" a")).collect();
        assert_eq!(
            a,
            [
                "start a1", "end a1", "start a2", "end a2", "start a3", "end a3"
            ]
        );
        // b ran beside a1.
        let pos = |s: &str| log.iter().position(|l| l == s).unwrap();
        assert!(pos("start b1") < pos("end a1"));
    }

    /// A job that panics frees its key and its slot.
    #[tokio::test(start_paused = true)]
    async fn a_panicking_job_frees_its_key() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut p = PerKey::new(1);
        p.push("a".into(), Box::pin(async { panic!("boom") }));
        p.push("a".into(), job(&log, "a2", 1));
        assert_eq!(p.drain().await, 1, "one job panicked");
        assert_eq!(*log.lock().unwrap(), ["start a2", "end a2"]);
    }
}
