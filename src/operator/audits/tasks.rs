//! The object audits of a leadership term: one task per audited CRD, keyed by the CRD's name
//! and the epoch of the revision it audits. Only the CRD's reconcile starts, restarts and
//! stops them ([`AuditTasks::ensure`], [`AuditTasks::stop`]); the term stops them all when it
//! ends. An audit task that ends when it should not have (a watch stream that ended, a task
//! that panicked past its supervisor) says so at once (the `died` callback: the CRD is
//! reconciled), and the reconcile starts it again; the reconcile also asks for
//! the periodic full resync when it is due: the Controller requeues the CRD for then, so no
//! timer runs per audit.

use futures::FutureExt;
use futures::future::BoxFuture;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Why an object audit ended. Otherwise it runs for as long as its revision is current.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The revision has no storage version: there are no objects to audit.
    NoObjects,
    /// The revision could not be compiled (reported; it stays so until the CRD changes).
    NotCompiled,
    /// A newer revision (or the CRD's removal) took over.
    Stale,
    /// Its watch ended, which it never should: a bug; the audit is started again.
    WatchEnded,
}

impl Ended {
    /// Whether the audit ended for good: its revision needs no audit any more.
    fn for_good(self) -> bool {
        !matches!(self, Ended::WatchEnded)
    }
}

/// Asks a running audit to list its objects again (the periodic full resync).
#[derive(Clone, Default)]
pub struct Relist(Arc<Notify>);

impl Relist {
    /// Waits until a full resync is asked for (one asked while the audit was busy is kept).
    pub async fn asked(&self) {
        self.0.notified().await
    }

    fn ask(&self) {
        self.0.notify_one()
    }
}

/// What [`AuditTasks::ensure`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Ensured {
    /// The audit of this epoch runs (or ended for good); the next full resync is this far.
    Running(Option<Duration>),
    /// The audit of this epoch was started (none ran for it).
    Started(Option<Duration>),
    /// The audit of this epoch had ended when it should not have (why: its end, or its
    /// panic) and was started again.
    Restarted(String, Option<Duration>),
}

impl Ensured {
    /// How long until the audit's next full resync (`None`: the audit ended for good).
    pub fn next_resync(&self) -> Option<Duration> {
        match self {
            Ensured::Running(d) | Ensured::Started(d) | Ensured::Restarted(_, d) => *d,
        }
    }
}

struct Running {
    epoch: u64,
    task: JoinHandle<Ended>,
    /// Set once the task ended for good.
    ended: Option<Ended>,
    /// Why the task died, said by the task itself as it ended (before it calls `died`).
    died: Arc<Mutex<Option<String>>>,
    relist: Relist,
    resync_at: Instant,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What an audit task that died calls with its CRD's name (the CRD's reconcile, to start
/// it again).
pub type Died = Arc<dyn Fn(&str) + Send + Sync>;

/// The object audits of one leadership term, by CRD name.
pub struct AuditTasks {
    running: Mutex<HashMap<String, Running>>,
    /// The periodic full resync (`fullResyncInterval`).
    resync: Duration,
    died: Died,
}

impl AuditTasks {
    pub fn new(resync: Duration, died: Died) -> AuditTasks {
        AuditTasks {
            running: Mutex::default(),
            resync,
            died,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Running>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes sure the audit of the CRD's revision `epoch` runs, starting it with `start` when
    /// none runs for this epoch (an audit of an earlier epoch is stopped) or when it ended
    /// without ending for good; asks for a full resync when one is due. Called by the CRD's
    /// reconcile only. `start` gets what asks the audit for a full resync.
    pub fn ensure(
        &self,
        crd: &str,
        epoch: u64,
        start: impl FnOnce(Relist) -> BoxFuture<'static, Ended>,
    ) -> Ensured {
        let now = Instant::now();
        let mut running = self.lock();
        let restarted = match running.get_mut(crd) {
            Some(r) if r.epoch == epoch => match r.ended {
                Some(_) => return Ensured::Running(None),
                None if lock(&r.died).is_some() => lock(&r.died).take(),
                None if !r.task.is_finished() => {
                    if now >= r.resync_at {
                        r.relist.ask();
                        r.resync_at = now + self.period(epoch);
                    }
                    return Ensured::Running(Some(r.resync_at - now));
                }
                None => match (&mut r.task).now_or_never() {
                    Some(Ok(end)) if end.for_good() => {
                        r.ended = Some(end);
                        return Ensured::Running(None);
                    }
                    Some(Ok(end)) => Some(format!("{end:?}")),
                    Some(Err(e)) if e.is_panic() => Some(panic_text(e.into_panic())),
                    Some(Err(_)) => Some("the task was cancelled".to_string()),
                    None => Some("the task ended".to_string()),
                },
            },
            _ => None,
        };
        let relist = Relist::default();
        let resync_at = now + self.period(epoch);
        let died = Arc::new(Mutex::new(None));
        let task = tokio::spawn(watched(
            start(relist.clone()),
            crd.to_string(),
            died.clone(),
            self.died.clone(),
        ));
        // An audit of an earlier epoch is aborted as its entry is dropped.
        running.insert(
            crd.to_string(),
            Running {
                epoch,
                task,
                ended: None,
                died,
                relist,
                resync_at,
            },
        );
        let next = Some(resync_at - now);
        match restarted {
            Some(why) => Ensured::Restarted(why, next),
            None => Ensured::Started(next),
        }
    }

    /// Stops the audit of a CRD that went away (or is no longer audited).
    pub fn stop(&self, crd: &str) {
        let stopped = self.lock().remove(crd);
        drop(stopped); // aborted, outside the lock
    }

    /// Stops every audit (the term ends).
    pub fn stop_all(&self) {
        let stopped = std::mem::take(&mut *self.lock());
        drop(stopped);
    }

    /// The full resync period of the audit of `epoch`, spread over ±10% so that CRDs do not
    /// relist together.
    fn period(&self, epoch: u64) -> Duration {
        let spread = (epoch.wrapping_mul(2_654_435_761) % 2001) as f64 / 1000.0 - 1.0;
        let secs = self.resync.as_secs_f64() * (1.0 + 0.1 * spread);
        Duration::from_secs_f64(secs.max(1.0))
    }

    /// Whether an audit task of the CRD runs (not ended).
    #[cfg(test)]
    pub fn alive(&self, crd: &str) -> bool {
        self.lock().get(crd).is_some_and(|r| !r.task.is_finished())
    }

    /// Aborts the CRD's audit task as a bug would end it, for tests.
    #[cfg(test)]
    pub fn kill_for_tests(&self, crd: &str) {
        if let Some(r) = self.lock().get(crd) {
            r.task.abort();
        }
    }
}

impl Drop for AuditTasks {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// Runs an audit; if it ends other than for good (or panics), records why and calls `died`.
async fn watched(
    audit: BoxFuture<'static, Ended>,
    crd: String,
    why: Arc<Mutex<Option<String>>>,
    died: Died,
) -> Ended {
    let end = std::panic::AssertUnwindSafe(audit).catch_unwind().await;
    let (end, reason) = match end {
        Ok(end) if end.for_good() => return end,
        Ok(end) => (end, format!("{end:?}")),
        Err(panic) => (Ended::WatchEnded, panic_text(panic)),
    };
    *lock(&why) = Some(reason);
    died(&crd);
    end
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A panic's message.
pub fn panic_text(panic: Box<dyn std::any::Any + Send>) -> String {
    crate::judging_pool::Panicked::of(panic).0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forever(
        relist: Relist,
        asked: Arc<std::sync::atomic::AtomicUsize>,
    ) -> BoxFuture<'static, Ended> {
        async move {
            loop {
                relist.asked().await;
                asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
        .boxed()
    }

    /// Tasks whose `died` callback records the names.
    fn tasks() -> (AuditTasks, Arc<Mutex<Vec<String>>>) {
        let died = Arc::new(Mutex::new(Vec::new()));
        let d = died.clone();
        let tasks = AuditTasks::new(
            Duration::from_secs(100),
            Arc::new(move |crd: &str| lock(&d).push(crd.to_string())),
        );
        (tasks, died)
    }

    #[tokio::test(start_paused = true)]
    async fn an_audit_is_started_once_per_epoch_and_relisted_when_its_resync_is_due() {
        let (tasks, _) = tasks();
        let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let a = asked.clone();
        let first = tasks.ensure("a", 1, |r| forever(r, a));
        let Ensured::Started(Some(next)) = first else {
            panic!("{first:?}")
        };
        assert!(next >= Duration::from_secs(90) && next <= Duration::from_secs(110));
        // Running: not started again.
        let again = tasks.ensure("a", 1, |_| panic!("started twice"));
        assert!(matches!(again, Ensured::Running(Some(_))), "{again:?}");
        // Due: a relist is asked for, and the next one is a period away.
        tokio::time::advance(next).await;
        let due = tasks.ensure("a", 1, |_| panic!("started twice"));
        assert_eq!(due, Ensured::Running(Some(next)));
        tokio::task::yield_now().await;
        assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 1);
        // A new epoch replaces the audit of the old one.
        let b = asked.clone();
        let replaced = tasks.ensure("a", 2, |r| forever(r, b));
        assert!(
            matches!(replaced, Ensured::Started(Some(_))),
            "{replaced:?}"
        );
        tasks.stop("a");
        assert!(!tasks.alive("a"));
    }

    #[tokio::test]
    async fn an_audit_that_died_is_started_again_and_one_that_ended_for_good_is_not() {
        let (tasks, died) = tasks();
        let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let a = asked.clone();
        tasks.ensure("a", 1, |r| forever(r, a));
        tasks.kill_for_tests("a");
        while tasks.alive("a") {
            tokio::task::yield_now().await;
        }
        let b = asked.clone();
        let restarted = tasks.ensure("a", 1, |r| forever(r, b));
        assert!(
            matches!(&restarted, Ensured::Restarted(why, Some(_)) if why.contains("cancelled")),
            "{restarted:?}"
        );
        assert!(tasks.alive("a"));
        // A panic that got past the supervisor: its message.
        tasks.ensure("b", 1, |_| async { panic!("boom") }.boxed());
        while tasks.alive("b") {
            tokio::task::yield_now().await;
        }
        let r = tasks.ensure("b", 1, |_| async { Ended::WatchEnded }.boxed());
        assert!(
            matches!(&r, Ensured::Restarted(why, _) if why == "boom"),
            "{r:?}"
        );
        while tasks.alive("b") {
            tokio::task::yield_now().await;
        }
        // A watch that ended: started again.
        let r = tasks.ensure("b", 1, |_| async { Ended::NoObjects }.boxed());
        assert!(
            matches!(&r, Ensured::Restarted(why, _) if why == "WatchEnded"),
            "{r:?}"
        );
        while tasks.alive("b") {
            tokio::task::yield_now().await;
        }
        // Ended for good: not started again, and no resync.
        for _ in 0..2 {
            let r = tasks.ensure("b", 1, |_| panic!("started again"));
            assert_eq!(r, Ensured::Running(None));
        }
        // The panic and the watch that ended said so as they ended; the aborted task (only
        // the operator aborts them) and the one that ended for good did not.
        assert_eq!(*lock(&died), ["b", "b"]);
    }
}
