//! The pace of a migration's requests: at most `qps` a second, evenly spaced (no burst), or
//! unlimited.

use std::time::Duration;
use tokio::sync::Mutex;
use tokio::time::Instant;

pub struct Pace {
    /// The time between two requests; `None`: no limit.
    interval: Option<Duration>,
    /// When the next request may go.
    next: Mutex<Option<Instant>>,
}

impl Pace {
    /// `qps` requests a second; `0` (or less) is no limit.
    pub fn new(qps: f64) -> Pace {
        let interval = (qps > 0.0 && qps.is_finite()).then(|| Duration::from_secs_f64(1.0 / qps));
        Pace {
            interval,
            next: Mutex::new(None),
        }
    }

    /// Waits for the next request's turn.
    pub async fn wait(&self) {
        let Some(interval) = self.interval else {
            return;
        };
        let at = {
            let mut next = self.next.lock().await;
            let now = Instant::now();
            let at = next.map_or(now, |n| n.max(now));
            *next = Some(at + interval);
            at
        };
        tokio::time::sleep_until(at).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn requests_are_spaced_by_the_interval() {
        let pace = Pace::new(4.0);
        let start = Instant::now();
        for _ in 0..5 {
            pace.wait().await;
        }
        // The first at once, then one every 250 ms.
        assert_eq!(start.elapsed(), Duration::from_millis(1000));
    }

    #[tokio::test(start_paused = true)]
    async fn no_limit_never_waits() {
        for qps in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let pace = Pace::new(qps);
            let start = Instant::now();
            for _ in 0..100 {
                pace.wait().await;
            }
            assert_eq!(start.elapsed(), Duration::ZERO, "{qps}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_pace_does_not_bank_requests() {
        let pace = Pace::new(10.0);
        pace.wait().await;
        tokio::time::sleep(Duration::from_secs(5)).await;
        let start = Instant::now();
        pace.wait().await;
        pace.wait().await;
        assert_eq!(start.elapsed(), Duration::from_millis(100));
    }
}
