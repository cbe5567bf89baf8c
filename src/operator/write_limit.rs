//! A client-side token bucket for write requests (reports, events, annotations): at most
//! `apiQps` a second on average, `apiBurst` at once. Reads (LIST, WATCH) and Lease renewals
//! do not pass through it.

use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

pub struct WriteLimiter {
    qps: f64,
    burst: f64,
    state: Mutex<(f64, Instant)>,
}

impl WriteLimiter {
    /// `qps` and `burst` are checked by the configuration (positive and finite).
    pub fn new(qps: f64, burst: u32) -> WriteLimiter {
        let burst = f64::from(burst.max(1));
        WriteLimiter {
            qps: qps.max(0.01),
            burst,
            state: Mutex::new((burst, Instant::now())),
        }
    }

    /// How long to wait before `n` writes may go, taking their tokens when they may go now:
    /// once the bucket holds a token (or, for `n` up to the burst, `n` of them). Taking more
    /// tokens than the bucket holds leaves it in debt, which the next writes wait out, so the
    /// average stays at `qps` whatever the burst.
    fn reserve(&self, n: u32) -> Option<Duration> {
        let n = f64::from(n.max(1));
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let refill = now.duration_since(s.1).as_secs_f64() * self.qps;
        s.0 = (s.0 + refill).min(self.burst);
        s.1 = now;
        let needed = n.min(self.burst);
        if s.0 >= needed {
            s.0 -= n;
            None
        } else {
            let secs = ((needed - s.0) / self.qps).clamp(0.001, 100.0);
            Some(Duration::from_secs_f64(secs))
        }
    }

    /// Waits for the budget of one write.
    pub async fn acquire(&self) {
        self.acquire_n(1).await
    }

    /// Waits for the budget of `n` writes made together (a report is two requests).
    pub async fn acquire_n(&self, n: u32) {
        while let Some(wait) = self.reserve(n) {
            tokio::time::sleep(wait).await;
        }
    }

    /// Gives back the budget of `n` writes taken and not made.
    pub fn give_back(&self, n: u32) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.0 = (s.0 + f64::from(n)).min(self.burst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_waits() {
        let l = WriteLimiter::new(1.0, 3);
        assert!(l.reserve(1).is_none());
        assert!(l.reserve(1).is_none());
        assert!(l.reserve(1).is_none());
        let wait = l.reserve(1).expect("the fourth write waits");
        assert!(wait > Duration::from_millis(500) && wait <= Duration::from_secs(1));
        // The smallest rate the configuration accepts gives a finite wait.
        let slow = WriteLimiter::new(0.01, 1);
        assert!(slow.reserve(1).is_none());
        assert!(slow.reserve(1).unwrap() <= Duration::from_secs(100));
    }

    #[tokio::test(start_paused = true)]
    async fn writes_taken_together_keep_the_rate_whatever_the_burst() {
        // A burst of one: two writes together go on the one token, and leave the bucket a
        // token in debt: the next waits two seconds at 1 a second.
        let l = WriteLimiter::new(1.0, 1);
        assert!(l.reserve(2).is_none());
        let wait = l.reserve(1).unwrap();
        assert!(wait > Duration::from_millis(1900), "{wait:?}");
        let start = Instant::now();
        for _ in 0..5 {
            l.acquire_n(2).await;
        }
        // Ten writes after the first two: about ten seconds.
        let took = start.elapsed().as_secs_f64();
        assert!((9.0..=11.0).contains(&took), "{took}");
        // A burst of ten takes four at once; given back, they are there again.
        let l = WriteLimiter::new(1.0, 10);
        assert!(l.reserve(4).is_none());
        l.give_back(4);
        assert!(l.reserve(10).is_none());
        assert!(l.reserve(1).is_some());
    }
}
