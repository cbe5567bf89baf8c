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

    /// How long to wait before the next write may go, taking its token when it may go now.
    fn reserve(&self) -> Option<Duration> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let refill = now.duration_since(s.1).as_secs_f64() * self.qps;
        s.0 = (s.0 + refill).min(self.burst);
        s.1 = now;
        if s.0 >= 1.0 {
            s.0 -= 1.0;
            None
        } else {
            let secs = ((1.0 - s.0) / self.qps).clamp(0.001, 100.0);
            Some(Duration::from_secs_f64(secs))
        }
    }

    /// Whether a write could go now (a token is there), without taking it.
    pub fn has_room(&self) -> bool {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let refill = Instant::now().duration_since(s.1).as_secs_f64() * self.qps;
        (s.0 + refill).min(self.burst) >= 1.0
    }

    pub async fn acquire(&self) {
        while let Some(wait) = self.reserve() {
            tokio::time::sleep(wait).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_waits() {
        let l = WriteLimiter::new(1.0, 3);
        assert!(l.has_room());
        assert!(l.reserve().is_none());
        assert!(l.reserve().is_none());
        assert!(l.reserve().is_none());
        assert!(!l.has_room());
        let wait = l.reserve().expect("the fourth write waits");
        assert!(wait > Duration::from_millis(500) && wait <= Duration::from_secs(1));
        // The smallest rate the configuration accepts gives a finite wait.
        let slow = WriteLimiter::new(0.01, 1);
        assert!(slow.reserve().is_none());
        assert!(slow.reserve().unwrap() <= Duration::from_secs(100));
    }
}
