//! A library user can serialize the engine's results (serde): a CRD check and a verdict,
//! with their causes in the shape the command line prints them.

use crd_audit_engine::{Crd, CrdValidator, Mode, Release, check_crd};
use serde_json::json;

#[test]
fn checks_and_verdicts_serialize() {
    let crd = Crd::from_value(&json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "string", "format": "shoe-size"},
                        "replicas": {"type": "integer", "maximum": 3}}}}}}}]},
    }))
    .unwrap();
    let report = serde_json::to_value(check_crd(&crd, Release::NEWEST)).unwrap();
    assert_eq!(report["crd"], "widgets.example.com");
    assert_eq!(report["nonStructural"], json!([]));
    assert_eq!(
        report["warnings"],
        json!([{"message": "unrecognized format \"shoe-size\"",
            "field": "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[size].format"}])
    );
    assert_eq!(report["internalError"], json!(null));

    let validator = CrdValidator::new(&crd).unwrap();
    let verdict = validator.validate(
        json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w"}, "spec": {"replicas": 5}}),
        Mode::Create,
    );
    let v = serde_json::to_value(&verdict).unwrap();
    assert_eq!(v["outcome"], "refused");
    assert_eq!(v["name"], "w");
    assert_eq!(v["causes"][0]["field"], "spec.replicas");
    assert_eq!(v["causes"][0]["type"], "FieldValueInvalid");
    assert_eq!(
        v["causes"][0]["message"],
        verdict.causes()[0].to_string(),
        "a cause serializes with the API server's message"
    );
}
