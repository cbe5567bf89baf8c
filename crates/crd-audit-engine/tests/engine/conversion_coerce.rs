//! What the API server applies to a conversion webhook's answer at its target version
//! (`CrdValidator::coerce`, used by crd-audit's conversion round trips).

use crd_audit_engine::{Crd, CrdValidator};
use serde_json::json;

/// What the server applies to a converted object at its target version: pruning (of
/// unknown fields and non-nullable nulls), and on decode (not after a conversion) the
/// version's defaults.
#[test]
fn a_converted_object_is_coerced_at_its_version() {
    let crd = Crd::from_value(&json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {"group": "stable.example.com", "scope": "Namespaced",
            "names": {"plural": "crontabs", "kind": "CronTab"},
            "versions": [
                {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                    "type": "object", "properties": {"spec": {"type": "object", "properties": {
                        "cronSpec": {"type": "string"}}}}}}},
                {"name": "v2", "served": true, "storage": false, "schema": {"openAPIV3Schema": {
                    "type": "object", "properties": {"spec": {"type": "object", "properties": {
                        "schedule": {"type": "string"},
                        "replicas": {"type": "integer", "default": 1}}}}}}}]}}))
    .unwrap();
    let v = CrdValidator::new(&crd).unwrap();
    let converted = || {
        json!({"apiVersion": "stable.example.com/v2", "kind": "CronTab",
            "metadata": {"name": "a"}, "spec": {"schedule": null, "extra": 1}})
    };
    let mut o = converted();
    assert_eq!(v.coerce(&mut o, false).unwrap(), ["spec.extra"]);
    assert_eq!(o["spec"], json!({}), "no default after a conversion");
    let mut o = converted();
    v.coerce(&mut o, true).unwrap();
    assert_eq!(o["spec"], json!({"replicas": 1}));
    let mut other = json!({"apiVersion": "stable.example.com/v9", "kind": "CronTab"});
    assert!(v.coerce(&mut other, false).is_err());
}
