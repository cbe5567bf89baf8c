//! The `SchemaAudit` report as Rust types. The report CRD (`crd-audit manifests`,
//! `manifests/schemaaudit-crd.yaml`) is generated from them, so the status the operator
//! writes and the schema the API server prunes against cannot drift apart.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the operator keeps in a report's spec: the audited revision of the CRD (its
/// versions and schemas), so that a restarted operator can diff the next change.
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "crd-audit.dev",
    version = "v1alpha1",
    kind = "SchemaAudit",
    plural = "schemaaudits",
    singular = "schemaaudit",
    shortname = "crdaudit",
    status = "SchemaAuditStatus",
    doc = "The audit of one CustomResourceDefinition and of the objects stored under it, written by crd-audit.",
    printcolumn = r#"{"name":"STRUCTURAL","type":"boolean","description":"Whether the storage version's schema is structural","jsonPath":".status.versions[?(@.storage==true)].structural"}"#,
    printcolumn = r#"{"name":"OBJECTS","type":"integer","description":"Objects stored at the storage version","jsonPath":".status.versions[?(@.storage==true)].objects"}"#,
    printcolumn = r#"{"name":"INVALID","type":"string","description":"Invalid stored objects","jsonPath":".status.conditions[?(@.type==\"InstancesValid\")].message"}"#,
    printcolumn = r#"{"name":"BLOCKED","type":"string","description":"Invalid stored objects the API server refuses to update at all (stuck)","jsonPath":".status.conditions[?(@.type==\"UpdatesAccepted\")].message"}"#,
    printcolumn = r#"{"name":"TIGHTENED","type":"string","description":"Whether the last schema change tightened a served version","jsonPath":".status.conditions[?(@.type==\"SchemaTightened\")].status"}"#,
    printcolumn = r#"{"name":"AGE","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct SchemaAuditSpec {
    /// The audited revision of the CRD: generation, scope and versions with their schemas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "preserved_object")]
    pub audited_revision: Option<serde_json::Value>,
}

fn preserved_object(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
    })
}

fn condition_list(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let mut s = g.subschema_for::<Vec<Condition>>();
    s.insert("x-kubernetes-list-type".into(), "map".into());
    s.insert(
        "x-kubernetes-list-map-keys".into(),
        serde_json::json!(["type"]),
    );
    s
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SchemaAuditStatus {
    /// The report's own `metadata.generation` that this status describes (the Kubernetes
    /// convention that kstatus, Flux and `kubectl wait` read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The audited CRD's generation that this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crd_generation: Option<i64>,
    /// NonStructuralSchema, InstancesValid, UpdatesAccepted, SchemaTightened,
    /// StorageMigrated, StoredVersionsServed, (ConversionsLossless), and the summary: Ready,
    /// Reconciling (an audit runs), Stalled (what the audit found needs a person).
    #[schemars(schema_with = "condition_list")]
    pub conditions: Vec<Condition>,
    pub versions: Vec<VersionAudit>,
    /// Invalid objects, sorted by namespace and name, at most `maxListedObjects`.
    pub invalid_objects: Vec<InvalidObject>,
    pub invalid_objects_truncated: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_schema_change: Option<SchemaChange>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_audit_time: Option<Time>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_duration_seconds: Option<f64>,
    /// Size limits the CRD exceeds as a manifest (client-side apply's annotation, the API
    /// server's request body, etcd's request), as `crd-audit check` reports them.
    #[serde(default)]
    pub size_findings: Vec<SizeFinding>,
}

/// A size limit the CRD exceeds.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SizeFinding {
    /// `warning` (client-side apply fails) or `error` (the CRD could not be written again).
    pub severity: String,
    /// `lastAppliedAnnotation`, `requestBody` or `etcdRequest`.
    pub limit: String,
    pub bytes: i64,
    pub limit_bytes: i64,
    pub message: String,
}

impl SizeFinding {
    pub fn of(f: &crd_audit_engine::size_limits::Finding) -> SizeFinding {
        let int = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        SizeFinding {
            severity: f.severity.as_str().into(),
            limit: f.limit_name.into(),
            bytes: int(f.bytes),
            limit_bytes: int(f.limit_bytes),
            message: f.message.clone(),
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VersionAudit {
    pub name: String,
    pub served: bool,
    pub storage: bool,
    pub structural: bool,
    pub objects: i64,
    pub invalid_objects: i64,
    pub objects_with_unknown_fields: i64,
    /// Invalid objects whose annotation the API server refused.
    pub unwritable_objects: i64,
    /// Invalid objects whose unchanged update the API server refuses: stuck objects.
    #[serde(default)]
    pub blocked_objects: i64,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InvalidObject {
    // Empty strings are left out (a smaller report). The test harness's kube-apiserver 1.20,
    // built with Go 1.19, once refused an empty string ("in body must be of type string:
    // \"null\""), a Go >= 1.16 bug the harness mends (tests/testenv/README.md).
    /// The object's namespace; absent for a cluster-scoped object.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub name: String,
    pub version: String,
    /// Absent when unknown.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// The API server refuses every update of the object, even one that changes nothing.
    #[serde(default)]
    pub updates_blocked: bool,
    /// The first messages (at most three, each bounded; values redacted unless configured).
    pub errors: Vec<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SchemaChange {
    pub from_generation: i64,
    pub to_generation: i64,
    /// The changes, tightening ones first, at most a bounded number.
    pub changes: Vec<ChangeEntry>,
    /// How many changes there were in all (more than listed when truncated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_changes: Option<i64>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeEntry {
    pub version: String,
    pub path: String,
    pub class: String,
    pub reason: String,
}

/// The report CRD as printed by `crd-audit manifests` (JSON, which is YAML too).
/// Whether a CRD is the one of crd-audit's own reports, which is never audited: its objects
/// are written by the operator, and each carries the audited revision of a CRD (up to
/// 256 KiB), so watching them would judge every report write again and hold pages of them.
pub fn is_report_crd(group: &str, kind: &str) -> bool {
    use kube::Resource;
    group == SchemaAudit::group(&()) && kind == SchemaAudit::kind(&())
}

pub fn crd_manifest() -> String {
    use kube::CustomResourceExt;
    serde_json::to_string_pretty(&SchemaAudit::crd()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::CustomResourceExt;

    /// A cluster-scoped object is listed without a namespace (not with `""`, which 1.20
    /// refuses in a required field), and read back the same.
    #[test]
    fn a_cluster_scoped_invalid_object_has_no_namespace() {
        let o = InvalidObject {
            name: "n".into(),
            version: "v1".into(),
            errors: vec!["spec.x: Required value".into()],
            ..Default::default()
        };
        let v = serde_json::to_value(&o).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"name": "n", "version": "v1", "updatesBlocked": false, "errors": ["spec.x: Required value"]})
        );
        assert_eq!(serde_json::from_value::<InvalidObject>(v).unwrap(), o);
        let crd = serde_json::to_value(SchemaAudit::crd()).unwrap();
        let required = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]
            ["properties"]["invalidObjects"]["items"]["required"];
        assert_eq!(required, &serde_json::json!(["errors", "name", "version"]));
    }

    #[test]
    fn the_report_crd_is_structural_and_valid() {
        let v = serde_json::to_value(SchemaAudit::crd()).unwrap();
        let crd = crd_audit_engine::Crd::from_value(&v).unwrap();
        let report = crd_audit_engine::check_crd(&crd, crd_audit_engine::Release::NEWEST);
        assert!(!report.has_findings(), "{report:?}");
    }

    /// Everything the operator writes survives the API server's pruning with this schema.
    #[test]
    fn a_full_status_is_not_pruned() {
        let crd_value = serde_json::to_value(SchemaAudit::crd()).unwrap();
        let crd = crd_audit_engine::Crd::from_value(&crd_value).unwrap();
        let v = crd_audit_engine::CrdValidator::new(&crd).expect("compiles");
        let status = SchemaAuditStatus {
            observed_generation: Some(3),
            crd_generation: Some(4),
            conditions: vec![Condition {
                type_: "InstancesValid".into(),
                status: "False".into(),
                reason: "InvalidInstances".into(),
                message: "1 invalid object(s)".into(),
                last_transition_time: Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH),
                observed_generation: Some(3),
            }],
            versions: vec![VersionAudit {
                name: "v1".into(),
                served: true,
                storage: true,
                structural: true,
                objects: 2,
                invalid_objects: 1,
                objects_with_unknown_fields: 1,
                unwritable_objects: 1,
                blocked_objects: 1,
            }],
            invalid_objects: vec![InvalidObject {
                namespace: "ns".into(),
                name: "a".into(),
                version: "v1".into(),
                uid: "u".into(),
                updates_blocked: true,
                errors: vec!["spec.x: Required value".into()],
            }],
            invalid_objects_truncated: true,
            last_schema_change: Some(SchemaChange {
                from_generation: 2,
                to_generation: 3,
                changes: vec![ChangeEntry {
                    version: "v1".into(),
                    path: "spec.x".into(),
                    class: "tightening".into(),
                    reason: "required".into(),
                }],
                total_changes: Some(1),
            }),
            last_audit_time: Some(Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH)),
            audit_duration_seconds: Some(0.5),
            size_findings: vec![SizeFinding {
                severity: "warning".into(),
                limit: "lastAppliedAnnotation".into(),
                bytes: 262_145,
                limit_bytes: 262_144,
                message: "client-side \"kubectl apply\" would fail".into(),
            }],
        };
        let mut report = SchemaAudit::new(
            "things.example.com",
            SchemaAuditSpec {
                audited_revision: Some(serde_json::json!({"generation": 3, "versions": []})),
            },
        );
        report.status = Some(status);
        let obj = serde_json::to_value(&report).unwrap();
        let verdict = v.validate(obj, crd_audit_engine::Mode::Stored);
        assert!(verdict.is_admitted(), "{:?}", verdict.outcome);
        assert!(verdict.pruned.is_empty(), "{:?}", verdict.pruned);
    }
}
