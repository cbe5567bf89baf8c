//! The backoff of the operator's watches, in place of kube-runtime's `default_backoff()`:
//!
//! - a `410 Gone` (the watch's resourceVersion is too old, as after an API server restart) is
//!   answered by the watcher with a fresh LIST: that LIST starts at once, not after a backoff
//!   that climbed during the outage (the operator would stay blind for up to 30 s);
//! - only progress resets the backoff (an object listed or watched, a LIST done), not the
//!   `Init` the watcher emits when it starts a LIST: a LIST that keeps failing during an outage
//!   backs off exponentially instead of being retried every second.
//!
//! Delays grow from 0.8 s by a factor of 2, each jittered by up to a fifth, to a ceiling
//! each watch chooses: [`SHORT`] for the operator's own few watches (the CRDs, the reports),
//! so that whatever the phase of the backoff when the API server returns, a change reaches
//! its report within seconds; [`LONG`] for the thousands of object watches, so that an
//! outage does not become a storm of retries.

use futures::{Stream, StreamExt};
use kube::runtime::watcher::{self, Event};
use std::time::Duration;

/// The ceiling of the CRD and report watches (4.8 s with jitter).
pub const SHORT: Duration = Duration::from_secs(4);
/// The ceiling of the object watches.
pub const LONG: Duration = Duration::from_secs(30);

/// The HTTP status of a watcher error, when the server answered.
pub fn status_of(e: &watcher::Error) -> Option<u16> {
    match e {
        watcher::Error::WatchError(s) => Some(s.code),
        watcher::Error::WatchFailed(k)
        | watcher::Error::WatchStartFailed(k)
        | watcher::Error::InitialListFailed(k) => crate::cluster::client::status_code(k),
        _ => None,
    }
}

/// Whether a watcher error is a `410 Gone`, after which the watcher relists.
pub fn is_gone(e: &watcher::Error) -> bool {
    status_of(e) == Some(410)
}

/// Whether a watcher error is the server asking to be asked again later (`429`: throttled,
/// or its watch cache of a resource is (re)initializing, as after a CRD change on a server
/// that streams lists): retried with backoff, nothing failed.
pub fn asks_to_retry(e: &watcher::Error) -> bool {
    status_of(e) == Some(429)
}

/// Whether a watcher error is the API server refusing a streaming list (`sendInitialEvents`,
/// when its WatchList feature is turned off): `400 Bad Request` or `422 Invalid`.
pub fn refuses_streaming(e: &watcher::Error) -> bool {
    matches!(status_of(e), Some(400 | 422))
}

/// A watcher stream with the backoff described above, up to `max` (jitter aside): after an
/// error other than `410 Gone` the next item is polled only after the delay.
pub fn with_backoff<T, S>(
    inner: S,
    max: Duration,
) -> impl Stream<Item = Result<Event<T>, watcher::Error>> + Send
where
    T: Send + 'static,
    S: Stream<Item = Result<Event<T>, watcher::Error>> + Send + Unpin + 'static,
{
    futures::stream::unfold(
        (
            inner,
            crate::cluster::backoff::watch(max).backoff(),
            None::<Duration>,
        ),
        |(mut inner, mut backoff, wait)| async move {
            if let Some(d) = wait {
                tokio::time::sleep(d).await;
            }
            let item = inner.next().await?;
            let wait = match &item {
                Err(e) if is_gone(e) => None,
                Err(_) => Some(backoff.next_delay()),
                Ok(Event::Init) => None,
                Ok(_) => {
                    backoff.reset();
                    None
                }
            };
            Some((item, (inner, backoff, wait)))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;

    fn failed(code: u16) -> Result<Event<()>, watcher::Error> {
        let s = Status::failure("watch failed", "Expired").with_code(code);
        Err(watcher::Error::WatchError(s.boxed()))
    }

    /// The virtual time at which each item of `items` is handed out.
    async fn times(items: Vec<Result<Event<()>, watcher::Error>>) -> Vec<Duration> {
        times_up_to(items, LONG).await
    }

    async fn times_up_to(
        items: Vec<Result<Event<()>, watcher::Error>>,
        max: Duration,
    ) -> Vec<Duration> {
        let start = tokio::time::Instant::now();
        let mut s = Box::pin(with_backoff(futures::stream::iter(items), max));
        let mut out = Vec::new();
        while s.next().await.is_some() {
            out.push(start.elapsed());
        }
        out
    }

    #[tokio::test(start_paused = true)]
    async fn a_gone_watch_relists_at_once() {
        let t = times(vec![
            failed(500),
            failed(500),
            failed(500),
            failed(410),
            Ok(Event::Init),
        ])
        .await;
        // Three failures wait 0.8 s, 1.6 s and 3.2 s (plus up to a fifth) in all...
        let after_errors = t[3] - t[0];
        assert!(
            after_errors >= Duration::from_millis(5600)
                && after_errors <= Duration::from_millis(5600 * 6 / 5),
            "{t:?}"
        );
        // ...but the LIST after the 410 starts at once.
        assert_eq!(t[4], t[3], "{t:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_failing_list_backs_off_further_and_progress_resets() {
        let mut items = Vec::new();
        for _ in 0..6 {
            items.push(Ok(Event::Init));
            items.push(failed(503));
        }
        items.push(Ok(Event::InitDone));
        items.push(failed(503));
        items.push(Ok(Event::Init));
        let t = times(items).await;
        // Init does not reset: the waits after the failed LISTs double up to 30 s...
        let waits: Vec<Duration> = (1..6).map(|i| t[2 * i] - t[2 * i - 1]).collect();
        for pair in waits.windows(2) {
            assert!(
                pair[1] >= pair[0].mul_f64(1.6) || pair[1] >= LONG.mul_f64(0.8),
                "{waits:?}"
            );
        }
        // ...and a LIST that completes does: the next failure waits the first delay again.
        let last = t[t.len() - 1] - t[t.len() - 2];
        assert!(
            last <= crate::cluster::backoff::watch(LONG).first.mul_f64(1.2),
            "{t:?}"
        );
    }

    /// The CRD and report watches retry at least every 4.8 s however long the outage: when
    /// the API server returns, whatever the phase of the backoff, they relist within that
    /// (the 30 s ceiling of before left the operator blind for up to 36 s).
    #[tokio::test(start_paused = true)]
    async fn the_short_ceiling_bounds_every_wait_of_a_long_outage() {
        let mut items = Vec::new();
        for _ in 0..40 {
            items.push(Ok(Event::Init));
            items.push(failed(503));
        }
        items.push(Ok(Event::Init));
        let t = times_up_to(items, SHORT).await;
        let waits: Vec<Duration> = t.windows(2).map(|w| w[1] - w[0]).collect();
        let longest = waits.iter().max().copied().unwrap_or_default();
        assert!(longest <= SHORT.mul_f64(1.2), "{waits:?}");
        // It still backs off: the ceiling is reached, not a retry every 0.8 s.
        assert!(longest >= SHORT, "{waits:?}");
        // The object watches keep the long ceiling.
        let t = times_up_to(
            (0..12)
                .flat_map(|_| [Ok(Event::Init), failed(503)])
                .collect(),
            LONG,
        )
        .await;
        let longest = t.windows(2).map(|w| w[1] - w[0]).max().unwrap_or_default();
        assert!(longest >= LONG, "{longest:?}");
    }

    #[test]
    fn errors_are_told_apart_by_their_status() {
        let e = |code: u16| failed(code).unwrap_err();
        assert!(is_gone(&e(410)) && !is_gone(&e(500)));
        assert!(asks_to_retry(&e(429)) && !asks_to_retry(&e(503)) && !asks_to_retry(&e(410)));
        assert!(refuses_streaming(&e(400)) && refuses_streaming(&e(422)));
        assert!(!refuses_streaming(&e(429)) && !refuses_streaming(&e(403)));
        assert!(!is_gone(&watcher::Error::NoResourceVersion));
    }
}
