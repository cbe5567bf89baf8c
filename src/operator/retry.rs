//! When a failed request is tried again, by what the API server answered: the one policy of
//! the Controller's reconciles (`crds::error`) and the writer's report writes
//! (`reports::queue`). [`Cause`] is also the `cause` label of
//! `crd_audit_reconcile_errors_total`.

use crate::cluster::client::status_code;
use std::time::Duration;

/// The wait after a conflict (409): another writer's change, read again at once.
pub const CONFLICT_RETRY: Duration = Duration::from_millis(200);

/// What the API server's answer says of a failed request, for the error policy and the
/// `cause` label of `crd_audit_reconcile_errors_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// 409: another writer changed the object; the next reconcile reads it again.
    Conflict,
    /// 429: the server (API Priority and Fairness) asks clients to slow down, for this long
    /// when it said so.
    Throttled(Option<Duration>),
    /// No answer (the connection failed) or a 5xx: an outage.
    Unavailable,
    /// 401 or 403: not allowed (RBAC).
    Forbidden,
    /// Anything else the server refused.
    Refused,
}

impl Cause {
    pub fn of(e: &kube::Error) -> Cause {
        match status_code(e) {
            Some(409) => Cause::Conflict,
            Some(429) => Cause::Throttled(retry_after(e)),
            None => Cause::Unavailable,
            Some(c) if c >= 500 => Cause::Unavailable,
            Some(401 | 403) => Cause::Forbidden,
            Some(_) => Cause::Refused,
        }
    }

    /// The `cause` label.
    pub fn label(self) -> &'static str {
        match self {
            Cause::Conflict => "conflict",
            Cause::Throttled(_) => "throttled",
            Cause::Unavailable => "unavailable",
            Cause::Forbidden => "forbidden",
            Cause::Refused => "refused",
        }
    }
}

/// The wait a 429 asks for (`details.retryAfterSeconds`), if any.
fn retry_after(e: &kube::Error) -> Option<Duration> {
    match e {
        kube::Error::Api(s) => s
            .details
            .as_ref()
            .map(|d| d.retry_after_seconds)
            .filter(|s| *s > 0)
            .map(|s| Duration::from_secs(u64::from(s))),
        _ => None,
    }
}

/// The backoff after `in_a_row` failures.
pub fn backoff(in_a_row: u32) -> Duration {
    crate::cluster::backoff::API_CALL.after(in_a_row)
}

/// The wait before a failed reconcile or report write is tried again, by what the server
/// answered: after a conflict (another writer's change) soon and without doubling; after a
/// 429 what it asks, and at least the backoff; otherwise the backoff after `in_a_row`
/// failures.
pub fn retry_wait(cause: Cause, in_a_row: u32) -> Duration {
    match cause {
        Cause::Conflict => CONFLICT_RETRY,
        Cause::Throttled(Some(after)) => after.max(backoff(in_a_row)),
        _ => backoff(in_a_row),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_from_a_second_to_a_minute() {
        let waits: Vec<u64> = (1..=9).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(backoff(u32::MAX), Duration::from_secs(60));
    }

    pub(crate) fn api(code: u16, retry_after: u32) -> kube::Error {
        let mut s = kube::core::Status::failure("m", "R").with_code(code);
        s.details = Some(kube::core::response::StatusDetails {
            name: String::new(),
            group: String::new(),
            kind: String::new(),
            uid: String::new(),
            causes: Vec::new(),
            retry_after_seconds: retry_after,
        });
        kube::Error::Api(s.boxed())
    }

    #[test]
    fn each_answer_has_its_cause_and_wait() {
        assert_eq!(Cause::of(&api(409, 0)), Cause::Conflict);
        assert_eq!(
            Cause::of(&api(429, 3)),
            Cause::Throttled(Some(Duration::from_secs(3)))
        );
        assert_eq!(Cause::of(&api(429, 0)), Cause::Throttled(None));
        for code in [500, 503, 504] {
            assert_eq!(Cause::of(&api(code, 0)), Cause::Unavailable, "{code}");
        }
        assert_eq!(Cause::of(&api(403, 0)), Cause::Forbidden);
        assert_eq!(Cause::of(&api(422, 0)), Cause::Refused);
        let labels: Vec<&str> = [
            Cause::Conflict,
            Cause::Throttled(None),
            Cause::Unavailable,
            Cause::Forbidden,
            Cause::Refused,
        ]
        .iter()
        .map(|c| c.label())
        .collect();
        assert_eq!(
            labels,
            [
                "conflict",
                "throttled",
                "unavailable",
                "forbidden",
                "refused"
            ]
        );
        assert_eq!(retry_wait(Cause::Conflict, 5), CONFLICT_RETRY);
        assert_eq!(
            retry_wait(Cause::Throttled(Some(Duration::from_secs(30))), 1),
            Duration::from_secs(30)
        );
        assert_eq!(
            retry_wait(Cause::Throttled(Some(Duration::from_secs(1))), 3),
            Duration::from_secs(4)
        );
        assert_eq!(retry_wait(Cause::Unavailable, 2), Duration::from_secs(2));
    }
}
