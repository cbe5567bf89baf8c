//! One budget for every write a process sends the API server: a token bucket of `qps` a
//! second on average and `burst` at once (the operator's `apiQps` and `apiBurst`), whose
//! tokens go to the waiting writes by priority, then in the order they asked. The operator's
//! report writer, Event writer, policy report writers, annotations, storage migrations and
//! the gate's webhook configuration all draw from the one budget of their leadership term,
//! so that together they stay within what the admin allowed; `crd-audit migrate --qps` paces
//! its rewrites with a budget of its own. Reads (LIST, WATCH, GET) and Lease renewals do not
//! pass through it, but for the requests of the conversion round trips (`auditConversions`),
//! which cost the API server and a webhook as much as writes and come after all of them.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

/// What a write is for, most urgent first: the order in which waiting writes get the
/// budget's tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    /// The gate's webhook configuration (rare; what admission of CRD changes depends on).
    WebhookConfiguration,
    /// A report that has findings (invalid or stuck objects, CRD problems).
    ReportWithFindings,
    /// An Event.
    Event,
    /// A clean report, or the deletion of a report whose CRD went away.
    Report,
    /// A policy report (`policyReports`).
    PolicyReport,
    /// The annotation of an object (`annotateObjects`).
    Annotation,
    /// A storage migration's rewrite of an object, or its prune.
    Migration,
    /// A request of a conversion round trip (`auditConversions`): a GET, a post to the
    /// webhook or a dry run. It writes nothing, but it costs the API server and the webhook
    /// as much as a write: it takes what every write leaves.
    ConversionCheck,
}

impl Priority {
    /// Every priority, most urgent first.
    pub const ALL: [Priority; 8] = [
        Priority::WebhookConfiguration,
        Priority::ReportWithFindings,
        Priority::Event,
        Priority::Report,
        Priority::PolicyReport,
        Priority::Annotation,
        Priority::Migration,
        Priority::ConversionCheck,
    ];

    /// The `writer` label of the budget's metrics.
    pub fn label(self) -> &'static str {
        match self {
            Priority::WebhookConfiguration => "webhook_configuration",
            Priority::ReportWithFindings => "report_with_findings",
            Priority::Event => "event",
            Priority::Report => "report",
            Priority::PolicyReport => "policy_report",
            Priority::Annotation => "annotation",
            Priority::Migration => "migration",
            Priority::ConversionCheck => "conversion_check",
        }
    }
}

/// The shared write budget. Cheap to share behind an `Arc`.
pub struct WriteBudget {
    /// Tokens a second; `None`: no limit.
    qps: Option<f64>,
    burst: f64,
    inner: Mutex<Inner>,
    /// Wakes the waiting writes when the first in line changes or tokens come back.
    turn: Notify,
}

struct Inner {
    tokens: f64,
    at: Instant,
    /// The writes waiting, in the order they get tokens: by priority, then by arrival.
    waiting: BTreeSet<(Priority, u64)>,
    next_ticket: u64,
    /// Requests granted, by priority (most urgent first), since the budget was made.
    granted: [u64; Priority::ALL.len()],
}

impl WriteBudget {
    /// `qps` writes a second on average, `burst` at once. A `qps` that is not a positive
    /// finite number means no limit (the operator's configuration refuses those; the CLI's
    /// `--qps 0` asks for it).
    pub fn new(qps: f64, burst: u32) -> WriteBudget {
        let burst = f64::from(burst.max(1));
        WriteBudget {
            qps: (qps > 0.0 && qps.is_finite()).then_some(qps),
            burst,
            inner: Mutex::new(Inner {
                tokens: burst,
                at: Instant::now(),
                waiting: BTreeSet::new(),
                next_ticket: 0,
                granted: [0; Priority::ALL.len()],
            }),
            turn: Notify::new(),
        }
    }

    /// A budget that never makes a write wait.
    pub fn unlimited() -> WriteBudget {
        WriteBudget::new(0.0, 1)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until `n` writes of `priority` may go (writes made together: a report is two
    /// requests), and takes their tokens. The writes waiting are served by priority, then in
    /// the order they asked: one waits while a more urgent one, or an earlier one of its
    /// priority, waits too. Up to `burst` tokens are needed to start; taking more than the
    /// bucket holds leaves it in debt, which the next writes wait out, so the average stays
    /// at `qps` whatever the burst. Dropping the future gives up its place.
    pub async fn acquire(&self, priority: Priority, n: u32) {
        let n = f64::from(n.max(1));
        let Some(qps) = self.qps else {
            self.lock().granted[priority as usize] += n as u64;
            return;
        };
        let ticket = {
            let mut inner = self.lock();
            let t = (priority, inner.next_ticket);
            inner.next_ticket += 1;
            inner.waiting.insert(t);
            t
        };
        let mut place = Place {
            budget: self,
            ticket: Some(ticket),
        };
        loop {
            let notified = self.turn.notified();
            tokio::pin!(notified);
            // Registered before the state is read: a change made after it wakes this write.
            notified.as_mut().enable();
            let wait = {
                let mut inner = self.lock();
                let now = Instant::now();
                let refill = now.duration_since(inner.at).as_secs_f64() * qps;
                inner.tokens = (inner.tokens + refill).min(self.burst);
                inner.at = now;
                if inner.waiting.first() != Some(&ticket) {
                    None // not its turn: a more urgent or earlier write goes first
                } else {
                    let needed = n.min(self.burst);
                    if inner.tokens >= needed {
                        inner.tokens -= n;
                        inner.waiting.remove(&ticket);
                        inner.granted[priority as usize] += n as u64;
                        place.ticket = None;
                        drop(inner);
                        // The next in line looks again.
                        self.turn.notify_waiters();
                        return;
                    }
                    let secs = ((needed - inner.tokens) / qps).clamp(0.001, 100.0);
                    Some(Duration::from_secs_f64(secs))
                }
            };
            match wait {
                Some(wait) => {
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => {}
                        _ = &mut notified => {}
                    }
                }
                None => notified.await,
            }
        }
    }

    /// Gives back the tokens of `n` writes taken and not made.
    pub fn give_back(&self, n: u32) {
        {
            let mut inner = self.lock();
            inner.tokens = (inner.tokens + f64::from(n)).min(self.burst);
        }
        self.turn.notify_waiters();
    }

    /// Requests granted so far, by priority (most urgent first).
    pub fn granted(&self) -> [(Priority, u64); Priority::ALL.len()] {
        let inner = self.lock();
        Priority::ALL.map(|p| (p, inner.granted[p as usize]))
    }

    /// The writes waiting now, by priority.
    pub fn waiting(&self) -> Vec<Priority> {
        self.lock().waiting.iter().map(|(p, _)| *p).collect()
    }
}

/// A write's place in line, given up when its `acquire` is dropped before its turn.
struct Place<'a> {
    budget: &'a WriteBudget,
    ticket: Option<(Priority, u64)>,
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        if let Some(t) = self.ticket.take() {
            self.budget.lock().waiting.remove(&t);
            self.budget.turn.notify_waiters();
        }
    }
}

/// Writes of one kind drawing from a budget: what a task that writes only one kind of thing
/// is handed.
#[derive(Clone)]
pub struct Writes {
    budget: Arc<WriteBudget>,
    priority: Priority,
}

impl Writes {
    pub fn new(budget: Arc<WriteBudget>, priority: Priority) -> Writes {
        Writes { budget, priority }
    }

    /// Writes of this kind with their own budget of `qps` a second, one at a time (no
    /// burst): `crd-audit migrate --qps`.
    pub fn paced(qps: f64, priority: Priority) -> Writes {
        Writes::new(Arc::new(WriteBudget::new(qps, 1)), priority)
    }

    /// Waits for the budget of one write.
    pub async fn turn(&self) {
        self.budget.acquire(self.priority, 1).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_burst_then_the_rate() {
        let b = WriteBudget::new(2.0, 3);
        let start = Instant::now();
        for _ in 0..3 {
            b.acquire(Priority::Report, 1).await;
        }
        assert_eq!(start.elapsed(), Duration::ZERO, "the burst goes at once");
        for _ in 0..4 {
            b.acquire(Priority::Report, 1).await;
        }
        let took = start.elapsed().as_secs_f64();
        assert!((1.9..=2.1).contains(&took), "{took}");
        // The smallest rate the configuration accepts gives a finite wait.
        let slow = WriteBudget::new(0.01, 1);
        slow.acquire(Priority::Event, 1).await;
        let start = Instant::now();
        slow.acquire(Priority::Event, 1).await;
        assert!(start.elapsed() <= Duration::from_secs(101));
    }

    #[tokio::test(start_paused = true)]
    async fn writes_taken_together_keep_the_rate_whatever_the_burst() {
        let b = WriteBudget::new(1.0, 1);
        b.acquire(Priority::Report, 2).await;
        // A token in debt: the next single write waits two seconds.
        let start = Instant::now();
        b.acquire(Priority::Event, 1).await;
        let took = start.elapsed().as_secs_f64();
        assert!((1.9..=2.1).contains(&took), "{took}");
        let start = Instant::now();
        for _ in 0..5 {
            b.acquire(Priority::Report, 2).await;
        }
        let took = start.elapsed().as_secs_f64();
        assert!((9.0..=11.0).contains(&took), "{took}");
        // Given back, the tokens are there again.
        let b = WriteBudget::new(1.0, 10);
        b.acquire(Priority::Report, 4).await;
        b.give_back(4);
        let start = Instant::now();
        b.acquire(Priority::Report, 10).await;
        assert_eq!(start.elapsed(), Duration::ZERO);
    }

    /// With the bucket empty, the writes waiting get the tokens most urgent first, and in
    /// the order they asked within a priority, whatever order they asked in.
    #[tokio::test(start_paused = true)]
    async fn the_most_urgent_write_goes_first() {
        let b = Arc::new(WriteBudget::new(10.0, 1));
        b.acquire(Priority::Report, 1).await; // empties the bucket
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for (i, p) in [
            Priority::Migration,
            Priority::Annotation,
            Priority::Migration,
            Priority::PolicyReport,
            Priority::Report,
            Priority::Event,
            Priority::ReportWithFindings,
            Priority::WebhookConfiguration,
        ]
        .into_iter()
        .enumerate()
        {
            let (b, order) = (b.clone(), order.clone());
            tasks.push(tokio::spawn(async move {
                b.acquire(p, 1).await;
                order.lock().unwrap().push((p, i));
            }));
            tokio::task::yield_now().await;
        }
        assert_eq!(b.waiting().len(), 8);
        for t in tasks {
            t.await.unwrap();
        }
        let order = order.lock().unwrap().clone();
        assert_eq!(
            order,
            [
                (Priority::WebhookConfiguration, 7),
                (Priority::ReportWithFindings, 6),
                (Priority::Event, 5),
                (Priority::Report, 4),
                (Priority::PolicyReport, 3),
                (Priority::Annotation, 1),
                (Priority::Migration, 0),
                (Priority::Migration, 2),
            ]
        );
        let granted: u64 = b.granted().iter().map(|(_, n)| n).sum();
        assert_eq!(granted, 9);
        assert!(b.waiting().is_empty());
    }

    /// Many writers busy at once stay within the budget together.
    #[tokio::test(start_paused = true)]
    async fn busy_writers_share_the_rate() {
        let b = Arc::new(WriteBudget::new(5.0, 5));
        let start = Instant::now();
        let mut tasks = Vec::new();
        for p in Priority::ALL {
            let b = b.clone();
            tasks.push(tokio::spawn(async move {
                for _ in 0..10 {
                    b.acquire(p, 1).await;
                }
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        // 10 writes of each priority: 5 at once, then the rest at 5 a second.
        let expected = (Priority::ALL.len() * 10 - 5) as f64 / 5.0;
        let took = start.elapsed().as_secs_f64();
        assert!((expected - 0.2..=expected + 0.2).contains(&took), "{took}");
    }

    /// A write that gives up its place (its future dropped) does not hold up the others.
    #[tokio::test(start_paused = true)]
    async fn a_write_given_up_leaves_the_line() {
        let b = Arc::new(WriteBudget::new(1.0, 1));
        b.acquire(Priority::Report, 1).await;
        let urgent = {
            let b = b.clone();
            tokio::spawn(async move { b.acquire(Priority::ReportWithFindings, 1).await })
        };
        tokio::task::yield_now().await;
        let waiting = {
            let b = b.clone();
            tokio::spawn(async move { b.acquire(Priority::Migration, 1).await })
        };
        tokio::task::yield_now().await;
        urgent.abort();
        let start = Instant::now();
        waiting.await.unwrap();
        assert!(start.elapsed() <= Duration::from_millis(1001));
        assert!(b.waiting().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn no_limit_never_waits() {
        for qps in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let w = Writes::paced(qps, Priority::Migration);
            let start = Instant::now();
            for _ in 0..100 {
                w.turn().await;
            }
            assert_eq!(start.elapsed(), Duration::ZERO, "{qps}");
        }
        let b = WriteBudget::unlimited();
        b.acquire(Priority::Event, 3).await;
        assert_eq!(b.granted()[2], (Priority::Event, 3));
    }

    /// `migrate --qps`: one write at a time, evenly spaced, nothing banked while idle.
    #[tokio::test(start_paused = true)]
    async fn paced_writes_are_spaced_and_bank_nothing() {
        let w = Writes::paced(4.0, Priority::Migration);
        let start = Instant::now();
        for _ in 0..5 {
            w.turn().await;
        }
        assert_eq!(start.elapsed(), Duration::from_millis(1000));
        tokio::time::sleep(Duration::from_secs(5)).await;
        let start = Instant::now();
        w.turn().await;
        w.turn().await;
        assert_eq!(start.elapsed(), Duration::from_millis(250));
    }
}
