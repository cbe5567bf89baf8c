//! Why a reconcile of a CRD failed (`Error`, with the `kind` label of
//! `crd_audit_reconcile_errors_total`), and the retry of a CRD whose reconcile failed.

use crate::cluster::backoff::Backoff;
use std::time::Duration;
use tokio::time::Instant;

/// The backoff of a CRD whose reconcile failed: a second, doubling up to a minute.
pub const FIRST_BACKOFF: Duration = Duration::from_secs(1);
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// Why a reconcile failed; it is tried again after a backoff.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The API server did not answer the GET of the CRD.
    #[error("reading the CRD failed: {0}")]
    ReadCrd(String),
    /// The report could not be written.
    #[error("writing the report failed: {0}")]
    WriteReport(String),
}

impl Error {
    /// The `kind` label of `crd_audit_reconcile_errors_total`.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::ReadCrd(_) => "read_crd",
            Error::WriteReport(_) => "write_report",
        }
    }
}

/// Failed reconciles of one CRD in a row: the next is tried after the backoff, or at once
/// when the API server has recovered since (`Ctx::recovered` moved on).
#[derive(Clone, Copy, Debug)]
pub struct Retry {
    pub in_a_row: u32,
    pub at: Instant,
    /// `Ctx::recovered` at the last failure.
    pub recoveries: u64,
}

/// The backoff after `in_a_row` failures.
pub fn backoff(in_a_row: u32) -> Duration {
    Backoff::after(FIRST_BACKOFF, MAX_BACKOFF, in_a_row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_from_a_second_to_a_minute() {
        let waits: Vec<u64> = (1..=9).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(backoff(u32::MAX), MAX_BACKOFF);
    }

    #[test]
    fn each_error_has_its_kind() {
        assert_eq!(Error::ReadCrd("x".into()).kind(), "read_crd");
        assert_eq!(Error::WriteReport("x".into()).kind(), "write_report");
    }
}
