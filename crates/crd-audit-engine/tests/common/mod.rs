//! Shared helpers of the engine's tests: the conformance corpus and cause comparison.
#![allow(dead_code, unused_imports)]

pub use crd_audit_engine::testing::{
    Key, conformance_cases as cases, conformance_dir as corpus_dir, key_of, multiset_diff,
    read_json,
};
