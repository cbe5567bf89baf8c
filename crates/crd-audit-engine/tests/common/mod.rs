//! Shared helpers of the engine's tests: the conformance corpus and cause comparison.
#![allow(dead_code)]

use serde_json::Value;
use std::path::PathBuf;

/// The conformance corpus (see `crd_audit_engine::testing::conformance_dir`: fails under CI
/// when missing).
pub fn corpus_dir() -> Option<PathBuf> {
    crd_audit_engine::testing::conformance_dir()
}

/// Case directories, sorted by id.
pub fn cases(dir: &std::path::Path) -> Vec<PathBuf> {
    crd_audit_engine::testing::conformance_cases(dir)
}

pub fn read_json(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read json")).expect("parse json")
}

/// A cause as compared: (field, type, message).
pub type Key = (String, String, String);

pub fn key_of(v: &Value) -> Key {
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    (s("field"), s("type"), s("message"))
}

/// Multiset difference report: (missing from ours, extra in ours).
pub fn multiset_diff(expected: &[Key], actual: &[Key]) -> (Vec<Key>, Vec<Key>) {
    let mut rest: Vec<Key> = actual.to_vec();
    let mut missing = Vec::new();
    for e in expected {
        if let Some(i) = rest.iter().position(|a| a == e) {
            rest.swap_remove(i);
        } else {
            missing.push(e.clone());
        }
    }
    (missing, rest)
}
