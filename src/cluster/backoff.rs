//! The one way the program retries, and its named policies: after each failure in a row the
//! wait doubles from a first delay up to a ceiling; progress starts it again from the first
//! delay. Retries that many callers make at once (the watches, the replicas) are jittered:
//! each wait lengthened by up to a fifth at random, so that those that failed together do
//! not retry together. Every retry loop takes its policy from here by name.

use std::time::Duration;

/// A retry policy: the first wait, the ceiling, and whether the waits are jittered.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Policy {
    pub first: Duration,
    pub max: Duration,
    pub jitter: bool,
}

impl Policy {
    /// A backoff that starts now.
    pub fn backoff(self) -> Backoff {
        let b = Backoff::new(self.first, self.max);
        if self.jitter { b.jittered() } else { b }
    }

    /// The wait after `n` failures in a row (`n` from 1), without jitter.
    pub fn after(self, n: u32) -> Duration {
        Backoff::after(self.first, self.max, n)
    }
}

/// A request of the operator that fails is tried again on this policy: a reconcile (the
/// Controller's error policy), a report deleted, a policy report's write, the gate's Secret
/// and webhook configuration.
pub const API_CALL: Policy = Policy {
    first: Duration::from_secs(1),
    max: Duration::from_secs(60),
    jitter: true,
};

/// An Event the writer task could not write (it waits at the head of the queue: Events go in
/// order).
pub const REPORT_WRITE: Policy = Policy {
    first: Duration::from_millis(500),
    max: Duration::from_secs(60),
    jitter: false,
};

/// A watch that failed other than with 410 Gone: `max` is the watch's own ceiling.
pub const fn watch(max: Duration) -> Policy {
    Policy {
        first: Duration::from_millis(800),
        max,
        jitter: true,
    }
}

/// Something that will not change soon: an object audit that stopped on a bug, an API that
/// is not served (the policy reports' LIST).
pub const SLOW: Policy = Policy {
    first: Duration::from_secs(1),
    max: Duration::from_secs(300),
    jitter: false,
};

/// A request of a one-shot command while the server is away (a restart, throttling): short
/// waits, for a bounded time the caller keeps.
pub const OUTAGE: Policy = Policy {
    first: Duration::from_millis(100),
    max: Duration::from_secs(5),
    jitter: true,
};

/// A page of a paginated read that failed for a transient reason.
pub const PAGE: Policy = Policy {
    first: Duration::from_millis(250),
    max: Duration::from_secs(5),
    jitter: false,
};

/// Exponential backoff: `first`, twice that, ... up to `max`.
#[derive(Clone, Debug)]
pub struct Backoff {
    first: Duration,
    max: Duration,
    next: Duration,
    /// The state of the jitter's xorshift; `0`: no jitter.
    seed: u64,
}

impl Backoff {
    /// Waits from `first` doubling up to `max`, without jitter.
    pub fn new(first: Duration, max: Duration) -> Backoff {
        let first = first.min(max);
        Backoff {
            first,
            max,
            next: first,
            seed: 0,
        }
    }

    /// The same waits, each lengthened by up to a fifth at random.
    pub fn jittered(mut self) -> Backoff {
        self.seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.subsec_nanos() as u64 | 1);
        self
    }

    /// The wait after one more failure (the one after it doubles).
    pub fn next_delay(&mut self) -> Duration {
        let wait = self.next;
        self.next = self.next.saturating_mul(2).min(self.max);
        if self.seed == 0 {
            return wait;
        }
        // xorshift: enough to keep retries that failed together apart.
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        wait.mul_f64(1.0 + (self.seed % 1000) as f64 / 5000.0)
    }

    /// Progress: the next failure waits the first delay again.
    pub fn reset(&mut self) {
        self.next = self.first;
    }

    /// The wait after `n` failures in a row (`n` from 1), without jitter: for a caller that
    /// counts its failures itself.
    pub fn after(first: Duration, max: Duration, n: u32) -> Duration {
        first
            .saturating_mul(1 << n.saturating_sub(1).min(30))
            .min(max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_to_the_ceiling_and_progress_starts_again() {
        let mut b = Backoff::new(Duration::from_millis(500), Duration::from_secs(4));
        let waits: Vec<u128> = (0..6).map(|_| b.next_delay().as_millis()).collect();
        assert_eq!(waits, [500, 1000, 2000, 4000, 4000, 4000]);
        b.reset();
        assert_eq!(b.next_delay(), Duration::from_millis(500));
        let n: Vec<u64> = (1..=8)
            .map(|n| Backoff::after(Duration::from_secs(1), Duration::from_secs(60), n).as_secs())
            .collect();
        assert_eq!(n, [1, 2, 4, 8, 16, 32, 60, 60]);
        assert_eq!(
            Backoff::after(Duration::from_secs(1), Duration::from_secs(60), u32::MAX),
            Duration::from_secs(60)
        );
        // A first delay above the ceiling is the ceiling.
        let mut b = Backoff::new(Duration::from_secs(9), Duration::from_secs(4));
        assert_eq!(b.next_delay(), Duration::from_secs(4));
    }

    #[test]
    fn each_named_policy_doubles_from_its_first_wait_to_its_ceiling() {
        for p in [
            API_CALL,
            REPORT_WRITE,
            watch(Duration::from_secs(30)),
            SLOW,
            OUTAGE,
            PAGE,
        ] {
            assert!(p.first <= p.max, "{p:?}");
            assert_eq!(
                (p.after(1), p.after(2)),
                (p.first, (p.first * 2).min(p.max))
            );
            assert_eq!(p.after(u32::MAX), p.max);
            let mut b = p.backoff();
            let first = b.next_delay();
            let ceiling = if p.jitter {
                p.first.mul_f64(1.2)
            } else {
                p.first
            };
            assert!(first >= p.first && first <= ceiling, "{p:?}: {first:?}");
        }
        assert_eq!(API_CALL.after(7), Duration::from_secs(60));
    }

    #[test]
    fn jitter_lengthens_each_wait_by_at_most_a_fifth() {
        let mut b = Backoff::new(Duration::from_secs(1), Duration::from_secs(8)).jittered();
        let mut plain = Backoff::new(Duration::from_secs(1), Duration::from_secs(8));
        let mut spread = false;
        for _ in 0..50 {
            let (w, p) = (b.next_delay(), plain.next_delay());
            assert!(w >= p && w <= p.mul_f64(1.2), "{w:?} for {p:?}");
            spread |= w != p;
        }
        assert!(spread, "no jitter at all");
    }
}
