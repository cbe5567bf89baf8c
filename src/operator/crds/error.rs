//! Why a reconcile of a CRD failed (`Error`, with the `kind` label of
//! `crd_audit_reconcile_errors_total`), and the Controller's error policy: when the CRD is
//! reconciled again (`Backoffs`: the one record of failures in a row, by CRD).

use crate::cluster::client::describe;
use crate::operator::retry::{Cause, retry_wait};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// Why a reconcile failed; it is tried again after the error policy's wait.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The API server did not answer the GET of the CRD.
    #[error("reading the CRD failed: {}", describe(.0))]
    ReadCrd(#[source] kube::Error),
}

impl Error {
    /// The `kind` label of `crd_audit_reconcile_errors_total`.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::ReadCrd(_) => "read_crd",
        }
    }

    /// What the server's answer says of it.
    pub fn cause(&self) -> Cause {
        match self {
            Error::ReadCrd(e) => Cause::of(e),
        }
    }
}

/// Failed reconciles in a row, by CRD: what the error policy's backoff doubles with. A
/// reconcile that succeeds clears its CRD's count; an API server that recovered since the last
/// failure starts the count again (and wakes every CRD at once: `crds::Reconciler`).
#[derive(Default)]
pub struct Backoffs {
    failures: Mutex<HashMap<String, (u32, u64)>>,
}

impl Backoffs {
    /// One more failure of `crd` (`recoveries`: the API server's recoveries so far); how long
    /// until it is reconciled again.
    pub fn failed(&self, crd: &str, cause: Cause, recoveries: u64) -> Duration {
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let (in_a_row, seen) = failures.entry(crd.to_string()).or_insert((0, recoveries));
        if *seen != recoveries {
            // The first failure since the API server came back.
            *in_a_row = 0;
            *seen = recoveries;
        }
        *in_a_row = in_a_row.saturating_add(1);
        retry_wait(cause, *in_a_row)
    }

    /// `crd` was reconciled (or went away).
    pub fn succeeded(&self, crd: &str) {
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(crd);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(code: u16) -> kube::Error {
        kube::Error::Api(
            kube::core::Status::failure("m", "R")
                .with_code(code)
                .boxed(),
        )
    }

    #[test]
    fn the_error_has_its_kind_and_the_servers_answer_its_cause() {
        let e = Error::ReadCrd(api(503));
        assert_eq!(e.kind(), "read_crd");
        assert_eq!(e.cause(), Cause::Unavailable);
        assert!(std::error::Error::source(&e).is_some());
    }

    #[test]
    fn failures_in_a_row_double_the_wait_until_a_success_or_a_recovery() {
        let b = Backoffs::default();
        let waits: Vec<u64> = (0..4)
            .map(|_| b.failed("a", Cause::Unavailable, 0).as_secs())
            .collect();
        assert_eq!(waits, [1, 2, 4, 8]);
        // Another CRD counts on its own; a conflict is soon, whatever came before.
        assert_eq!(b.failed("b", Cause::Unavailable, 0), Duration::from_secs(1));
        assert_eq!(
            b.failed("a", Cause::Conflict, 0),
            crate::operator::retry::CONFLICT_RETRY
        );
        // The API server recovered: the count starts again.
        assert_eq!(b.failed("a", Cause::Unavailable, 1), Duration::from_secs(1));
        b.succeeded("a");
        assert_eq!(b.failed("a", Cause::Unavailable, 1), Duration::from_secs(1));
    }
}
