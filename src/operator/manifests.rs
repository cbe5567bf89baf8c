//! The `SchemaAudit` report CRD, generated here so that `manifests/` can be checked against
//! it (`crd-audit manifests`).

use serde_json::{Value, json};

pub const GROUP: &str = "crd-audit.dev";
pub const VERSION: &str = "v1alpha1";
pub const PLURAL: &str = "schemaaudits";

fn condition_column(name: &str, ty: &str) -> Value {
    json!({"name": name, "type": "string",
        "jsonPath": format!(".status.conditions[?(@.type==\"{ty}\")].status")})
}

/// The CRD of the report object.
pub fn schema_audit_crd() -> Value {
    let condition = json!({"type": "object", "required": ["type", "status"], "properties": {
        "type": {"type": "string"}, "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
        "reason": {"type": "string"}, "message": {"type": "string"},
        "lastTransitionTime": {"type": "string", "format": "date-time"},
        "observedGeneration": {"type": "integer"}}});
    let status = json!({"type": "object", "properties": {
        "observedGeneration": {"type": "integer"},
        "conditions": {"type": "array", "items": condition,
            "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]},
        "versions": {"type": "array", "items": {"type": "object", "properties": {
            "name": {"type": "string"}, "served": {"type": "boolean"}, "storage": {"type": "boolean"},
            "structural": {"type": "boolean"}, "objects": {"type": "integer"},
            "invalidObjects": {"type": "integer"}, "objectsWithUnknownFields": {"type": "integer"},
            "unwritableObjects": {"type": "integer"}}}},
        "invalidObjects": {"type": "array", "items": {"type": "object", "properties": {
            "namespace": {"type": "string"}, "name": {"type": "string"}, "version": {"type": "string"},
            "uid": {"type": "string"}, "errors": {"type": "array", "items": {"type": "string"}}}}},
        "invalidObjectsTruncated": {"type": "boolean"},
        "lastSchemaChange": {"type": "object", "properties": {
            "fromGeneration": {"type": "integer"}, "toGeneration": {"type": "integer"},
            "changes": {"type": "array", "items": {"type": "object", "properties": {
                "version": {"type": "string"}, "path": {"type": "string"},
                "class": {"type": "string"}, "reason": {"type": "string"}}}}}},
        "lastAuditTime": {"type": "string", "format": "date-time"},
        "auditDurationSeconds": {"type": "number"}}});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{PLURAL}.{GROUP}")},
        "spec": {
            "group": GROUP,
            "scope": "Cluster",
            "names": {"plural": PLURAL, "singular": "schemaaudit", "kind": "SchemaAudit",
                "listKind": "SchemaAuditList", "shortNames": ["sa"]},
            "versions": [{
                "name": VERSION, "served": true, "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    condition_column("STRUCTURAL", "NonStructuralSchema"),
                    {"name": "OBJECTS", "type": "integer", "jsonPath": ".status.versions[?(@.storage==true)].objects"},
                    {"name": "INVALID", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"InstancesValid\")].message"},
                    condition_column("TIGHTENED", "SchemaTightened"),
                    {"name": "AGE", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
                ],
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "apiVersion": {"type": "string"}, "kind": {"type": "string"},
                    "metadata": {"type": "object"},
                    "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                        "description": "Written by crd-audit: the audited revision of the CRD's versions (auditedRevision), so that a restarted operator can diff the next change."},
                    "status": status}}}
            }]
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_crd_is_structural_and_valid() {
        let crd = crate::crd::Crd::from_value(&schema_audit_crd()).unwrap();
        let report = crate::structural::report::check_crd(&crd);
        assert!(!report.has_findings(), "{report:?}");
    }
}
