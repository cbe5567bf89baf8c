//! Shared helpers of the engine's tests: the conformance corpus and cause comparison.
#![allow(dead_code, unused_imports)]

pub use crd_audit_engine::testing::{
    Key, conformance_cases as cases, conformance_dir as corpus_dir, key_of, multiset_diff,
    read_json,
};

/// The HTTP status of an outcome, as the oracle's outputs record it: 201 for an accepted
/// create, 200 for an accepted update.
pub fn status_code(outcome: &crd_audit_engine::Outcome, update: bool) -> u16 {
    use crd_audit_engine::{Outcome, RequestErrorReason};
    match outcome {
        Outcome::Admitted if update => 200,
        Outcome::Admitted => 201,
        Outcome::Refused { .. } => 422,
        Outcome::RequestError(e) => match e.reason {
            RequestErrorReason::BadRequest => 400,
            RequestErrorReason::NotFound => 404,
            _ => 500,
        },
        _ => 500,
    }
}

/// The text of a request error, `None` for other outcomes.
pub fn request_error_text(outcome: &crd_audit_engine::Outcome) -> Option<&str> {
    match outcome {
        crd_audit_engine::Outcome::RequestError(e) => Some(&e.message),
        _ => None,
    }
}
