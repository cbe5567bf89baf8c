//! The compiled validators the object audits share, within a bound. A compiled CRD costs
//! several times its schema's size, and on a cluster of generated CRDs most CRDs have no
//! objects at all: so a CRD is compiled only when one of its objects must be judged, and
//! its validator is kept while it is among the most recently used that fit the budget.
//! A revision's validator is never used for another revision: entries are keyed by the
//! CRD's name and the epoch of its object audit.

use crd_audit_engine::CrdValidator;
use std::sync::{Arc, Mutex};

/// What a compiled validator is taken to cost per byte of its versions' schemas as compact
/// JSON. `cargo bench -p crd-audit-engine --bench compiled_footprint -- DIR` measures 7.8
/// bytes of validator per byte of (indented, JSON-form) YAML on 2,000 Crossplane-shaped
/// CRDs; in the operator, a budget of 64 MiB at 9 per byte held 100 MiB of validators (the
/// allocator's rounding and the CEL programs' shared parts), hence 15.
pub const COST_PER_SCHEMA_BYTE: usize = 15;

struct Entry {
    name: String,
    epoch: u64,
    validator: Arc<CrdValidator>,
    cost: usize,
    used: u64,
}

/// A least-recently-used set of validators whose estimated cost stays within a budget (the
/// most recently inserted one is always kept, whatever its cost).
pub struct Validators {
    budget: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    entries: Vec<Entry>,
    clock: u64,
    total: usize,
}

impl Validators {
    pub fn new(budget: usize) -> Validators {
        Validators {
            budget,
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The validator of a CRD's revision, when it is kept.
    pub fn get(&self, name: &str, epoch: u64) -> Option<Arc<CrdValidator>> {
        let mut inner = self.lock();
        inner.clock += 1;
        let now = inner.clock;
        let e = inner
            .entries
            .iter_mut()
            .find(|e| e.epoch == epoch && e.name == name)?;
        e.used = now;
        Some(e.validator.clone())
    }

    /// Keeps a newly compiled validator, dropping the least recently used ones (and any of
    /// an older revision of the same CRD) until the budget holds.
    pub fn insert(&self, name: &str, epoch: u64, validator: Arc<CrdValidator>, cost: usize) {
        let mut inner = self.lock();
        inner.clock += 1;
        let now = inner.clock;
        let mut dropped = Vec::new();
        inner.entries.retain_mut(|e| {
            let keep = e.name != name;
            if !keep {
                dropped.push(e.cost);
            }
            keep
        });
        inner.total -= dropped.iter().sum::<usize>();
        inner.entries.push(Entry {
            name: name.to_string(),
            epoch,
            validator,
            cost,
            used: now,
        });
        inner.total += cost;
        while inner.total > self.budget && inner.entries.len() > 1 {
            let oldest = inner
                .entries
                .iter()
                .enumerate()
                .min_by_key(|(_, e)| e.used)
                .map(|(i, _)| i)
                .expect("more than one entry");
            let e = inner.entries.swap_remove(oldest);
            inner.total -= e.cost;
        }
    }

    /// Forgets a CRD's validators (the CRD changed or went away).
    pub fn forget(&self, name: &str) {
        let mut inner = self.lock();
        let mut freed = 0;
        inner.entries.retain(|e| {
            if e.name == name {
                freed += e.cost;
                false
            } else {
                true
            }
        });
        inner.total -= freed;
    }

    /// How many validators are kept, and their estimated cost.
    pub fn usage(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.entries.len(), inner.total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crd_audit_engine::Crd;
    use serde_json::json;

    fn validator(name: &str) -> Arc<CrdValidator> {
        let crd = Crd::from_value(&json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{name}s.example.com")},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"kind": name, "plural": format!("{name}s")},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object"}}}]}}))
        .unwrap();
        Arc::new(CrdValidator::new(&crd).expect("compiles"))
    }

    #[test]
    fn the_least_recently_used_go_first_when_the_budget_is_exceeded() {
        let cache = Validators::new(300);
        cache.insert("a", 1, validator("a"), 100);
        cache.insert("b", 1, validator("b"), 100);
        cache.insert("c", 1, validator("c"), 100);
        assert!(cache.get("a", 1).is_some()); // a is now the most recently used
        cache.insert("d", 1, validator("d"), 100);
        assert!(cache.get("b", 1).is_none());
        assert!(cache.get("a", 1).is_some());
        assert!(cache.get("c", 1).is_some());
        assert!(cache.get("d", 1).is_some());
        assert_eq!(cache.usage(), (3, 300));
    }

    #[test]
    fn one_validator_over_the_budget_is_still_kept() {
        let cache = Validators::new(10);
        cache.insert("a", 1, validator("a"), 5);
        cache.insert("huge", 1, validator("huge"), 1000);
        assert!(cache.get("a", 1).is_none());
        assert!(cache.get("huge", 1).is_some());
        assert_eq!(cache.usage(), (1, 1000));
    }

    #[test]
    fn another_revision_never_gets_an_older_validator() {
        let cache = Validators::new(1000);
        cache.insert("a", 1, validator("a"), 10);
        assert!(cache.get("a", 2).is_none());
        cache.insert("a", 2, validator("a"), 20);
        assert!(cache.get("a", 1).is_none());
        assert_eq!(cache.usage(), (1, 20));
        cache.forget("a");
        assert_eq!(cache.usage(), (0, 0));
    }
}
