//! Size limits a CRD meets on its way into a cluster, measured on the CRD as read from its
//! file, or on the CRD a server holds made back into a manifest ([`as_manifest`]):
//!
//! - client-side `kubectl apply` stores the whole object in the
//!   `kubectl.kubernetes.io/last-applied-configuration` annotation, and the API server
//!   refuses objects whose annotations (the sum of `len(key) + len(value)`) exceed 262,144
//!   bytes (apimachinery `TotalAnnotationSizeLimitB`) — a warning: server-side apply has no
//!   such annotation;
//! - the API server reads at most 3 MiB of a request body (apiserver `MaxRequestBodyBytes`,
//!   no flag changes it) — an error: the CRD cannot be created;
//! - etcd refuses requests above 1.5 MiB by default (`--max-request-bytes`) — an error. A CRD
//!   is stored as protobuf (kube-apiserver's storage media type for built-in types), so the
//!   stored size is the protobuf encoding of the CRD as kube-apiserver writes it on create
//!   (see [`stored_protobuf_size`]).

use crate::go::json::{
    marshal, marshal_len as json_len, object_len, string_len as json_string_len,
};
use serde_json::{Map, Value};

/// apimachinery `TotalAnnotationSizeLimitB`.
pub const ANNOTATIONS_LIMIT: usize = 262_144;
/// apiserver `MaxRequestBodyBytes` (3 MiB).
pub const REQUEST_BODY_LIMIT: usize = 3 * 1024 * 1024;
/// etcd `DefaultMaxRequestBytes` (1.5 MiB).
pub const ETCD_REQUEST_LIMIT: usize = 1024 * 1024 * 3 / 2;
/// The annotation client-side `kubectl apply` writes.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The sizes of one CRD, in bytes.
#[derive(serde::Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[serde(rename_all = "camelCase")]
pub struct Sizes {
    /// The request body `kubectl create` or `kubectl apply --server-side` sends: the object
    /// as Go's `json.Encoder` writes it (compact, keys sorted, `<>&` escaped, a newline).
    pub request_body: usize,
    /// The last-applied annotation's value client-side `kubectl apply` would write.
    pub last_applied: usize,
    /// `len(key) + len(value)` over every annotation the client-side apply request carries,
    /// the last-applied one included: what the API server compares with its limit.
    pub annotations_with_last_applied: usize,
    /// The protobuf value kube-apiserver stores in etcd when the CRD is created (a lower
    /// bound of the etcd request: key, transaction and `managedFields` come on top); `None`
    /// for a document that is not `apiextensions.k8s.io/v1` (v1beta1 is converted first).
    pub stored_protobuf: Option<usize>,
}

/// How bad a size finding is.
#[derive(serde::Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Severity {
    /// The CRD can be written, but not by client-side `kubectl apply`.
    Warning,
    /// The API server or etcd refuses the CRD.
    Error,
}

impl Severity {
    /// `warning` or `error`, as the JSON output writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One size limit a CRD exceeds.
#[derive(serde::Serialize, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    /// How bad it is.
    pub severity: Severity,
    /// `lastAppliedAnnotation`, `requestBody` or `etcdRequest`.
    pub limit_name: &'static str,
    /// The size measured.
    pub bytes: usize,
    /// The limit it exceeds.
    pub limit_bytes: usize,
    /// What happens, in the words of the component that refuses it.
    pub message: String,
}

impl Finding {
    /// The finding as JSON output shows it.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "severity": self.severity.as_str(),
            "limit": self.limit_name,
            "bytes": self.bytes,
            "limitBytes": self.limit_bytes,
            "message": self.message,
        })
    }
}

/// The CRD as `kubectl get -o yaml` would give it to someone who wants to apply it again:
/// without what the server fills in (status, managed fields, the last-applied copy), so that
/// its size is the size of the manifest.
pub fn as_manifest(mut crd: Value) -> Value {
    if let Some(o) = crd.as_object_mut() {
        o.remove("status");
    }
    if let Some(m) = crd.get_mut("metadata").and_then(Value::as_object_mut) {
        for k in [
            "managedFields",
            "resourceVersion",
            "uid",
            "generation",
            "creationTimestamp",
            "selfLink",
        ] {
            m.remove(k);
        }
        if let Some(a) = m.get_mut("annotations").and_then(Value::as_object_mut) {
            a.remove(LAST_APPLIED);
            if a.is_empty() {
                m.remove("annotations");
            }
        }
    }
    crd
}

/// Measures a CRD document (the decoded JSON value of its file). Only lengths are computed:
/// nothing the size of the document is built.
pub fn measure(crd: &Value) -> Sizes {
    let (last_applied, others) = last_applied_len(crd);
    Sizes {
        request_body: json_len(crd) + 1,
        last_applied,
        annotations_with_last_applied: others + LAST_APPLIED.len() + last_applied,
        stored_protobuf: (crd.get("apiVersion").and_then(Value::as_str)
            == Some("apiextensions.k8s.io/v1"))
        .then(|| stored_protobuf_size(crd)),
    }
}

/// The annotations kubectl keeps (kubectl `GetModifiedConfiguration`): the string annotations
/// minus the last-applied one; none when the map holds a non-string value (Unstructured's
/// `GetAnnotations` then fails and reads as no annotations).
fn kept_annotations(obj: &Value) -> Vec<(&str, &str)> {
    match obj.get("metadata").and_then(|m| m.get("annotations")) {
        Some(Value::Object(m)) if m.values().all(Value::is_string) => m
            .iter()
            .filter(|(k, _)| k.as_str() != LAST_APPLIED)
            .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default()))
            .collect(),
        _ => Vec::new(),
    }
}

/// The length of [`last_applied_configuration`]'s value and `len(key) + len(value)` of the
/// other annotations, without building the value.
fn last_applied_len(obj: &Value) -> (usize, usize) {
    let kept = kept_annotations(obj);
    let others = kept.iter().map(|(k, v)| k.len() + v.len()).sum();
    let annotations_len = object_len(kept.iter().map(|(k, v)| (*k, json_string_len(v))));
    let metadata_len = match obj.get("metadata") {
        Some(Value::Object(m)) => object_len(
            m.iter()
                .filter(|(k, _)| k.as_str() != "annotations")
                .map(|(k, v)| (k.as_str(), json_len(v)))
                .chain(std::iter::once(("annotations", annotations_len))),
        ),
        _ => object_len(std::iter::once(("annotations", annotations_len))),
    };
    let top_len = match obj {
        Value::Object(m) => object_len(
            m.iter()
                .filter(|(k, _)| k.as_str() != "metadata")
                .map(|(k, v)| (k.as_str(), json_len(v)))
                .chain(std::iter::once(("metadata", metadata_len))),
        ),
        _ => object_len(std::iter::once(("metadata", metadata_len))),
    };
    (top_len + 1, others)
}

/// The limits `sizes` exceeds, most severe first.
pub fn findings(sizes: &Sizes) -> Vec<Finding> {
    let mut out = Vec::new();
    if sizes.request_body > REQUEST_BODY_LIMIT {
        out.push(Finding {
            severity: Severity::Error,
            limit_name: "requestBody",
            bytes: sizes.request_body,
            limit_bytes: REQUEST_BODY_LIMIT,
            message: format!(
                "the CRD is {} bytes as the JSON request body kubectl sends, above the API server's \
                 request body limit of {} bytes (\"Request entity too large: limit is {}\"): it \
                 cannot be created",
                sizes.request_body, REQUEST_BODY_LIMIT, REQUEST_BODY_LIMIT
            ),
        });
    }
    if let Some(stored) = sizes.stored_protobuf.filter(|s| *s > ETCD_REQUEST_LIMIT) {
        out.push(Finding {
            severity: Severity::Error,
            limit_name: "etcdRequest",
            bytes: stored,
            limit_bytes: ETCD_REQUEST_LIMIT,
            message: format!(
                "the CRD is at least {} bytes as stored in etcd (protobuf), above etcd's default \
                 request limit of {} bytes (\"etcdserver: request is too large\"): it cannot be \
                 created unless etcd runs with a larger --max-request-bytes",
                stored, ETCD_REQUEST_LIMIT
            ),
        });
    }
    if sizes.annotations_with_last_applied > ANNOTATIONS_LIMIT {
        out.push(Finding {
            severity: Severity::Warning,
            limit_name: "lastAppliedAnnotation",
            bytes: sizes.annotations_with_last_applied,
            limit_bytes: ANNOTATIONS_LIMIT,
            message: format!(
                "client-side \"kubectl apply\" would fail: its {LAST_APPLIED} annotation ({} bytes) \
                 makes metadata.annotations {} bytes, above the API server's limit of {} bytes \
                 (\"metadata.annotations: Too long\"); use \"kubectl apply --server-side\" (or \
                 kubectl create/replace)",
                sizes.last_applied, sizes.annotations_with_last_applied, ANNOTATIONS_LIMIT
            ),
        });
    }
    out
}

/// The value client-side `kubectl apply` writes into its last-applied annotation (kubectl
/// `GetModifiedConfiguration`): the object as read, its annotations replaced by the string
/// annotations minus the last-applied one (kept as `{}` when none remain; a map holding a
/// non-string value reads as none), encoded by Go's `json.Encoder` (compact, keys sorted,
/// HTML-escaped, a trailing newline). Also returns `len(key) + len(value)` of the other
/// annotations.
pub fn last_applied_configuration(obj: &Value) -> (String, usize) {
    let kept = kept_annotations(obj);
    let others = kept.iter().map(|(k, v)| k.len() + v.len()).sum();
    let annotations: Map<String, Value> = kept
        .into_iter()
        .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
        .collect();
    let mut top = match obj {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    let mut metadata = match top.remove("metadata") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    metadata.insert("annotations".into(), Value::Object(annotations));
    top.insert("metadata".into(), Value::Object(metadata));
    let mut text = marshal(&Value::Object(top));
    text.push('\n');
    (text, others)
}

// ---------------------------------------------------------------------------------------
// Protobuf size of apiextensions.k8s.io/v1 CustomResourceDefinition as kube-apiserver stores
// it. The field numbers and which fields are always written come from the gogo-generated
// `Size()` methods (apiextensions-apiserver pkg/apis/apiextensions/v1/generated.pb.go,
// apimachinery pkg/apis/meta/v1 and pkg/runtime generated.pb.go): a non-pointer string,
// bool, number or embedded message is written even when empty or zero; pointers, slices and
// maps only when set. Tags of fields numbered 16 and above take two bytes.

/// Bytes of `x` as a protobuf varint (`sovGenerated`).
fn varint_len(x: u64) -> usize {
    ((64 - (x | 1).leading_zeros()) as usize).div_ceil(7)
}

/// A length-delimited field: tag, length, payload.
fn delimited(tag: usize, len: usize) -> usize {
    tag + varint_len(len as u64) + len
}

fn get<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

fn str_len(v: &Value, key: &str) -> usize {
    get(v, key).and_then(Value::as_str).map_or(0, str::len)
}

/// An always-written string field.
fn string_field(tag: usize, v: &Value, key: &str) -> usize {
    delimited(tag, str_len(v, key))
}

/// A `*string` field: written when set.
fn optional_string(tag: usize, v: &Value, key: &str) -> usize {
    match get(v, key).and_then(Value::as_str) {
        Some(s) => delimited(tag, s.len()),
        None => 0,
    }
}

/// A `[]string` field.
fn strings_field(tag: usize, v: &Value, key: &str) -> usize {
    items(v, key)
        .iter()
        .map(|s| delimited(tag, s.as_str().map_or(0, str::len)))
        .sum()
}

fn items<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    get(v, key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// A signed integer as the decoded int64 (a varint of its two's complement).
fn int_of(v: &Value) -> i64 {
    match v {
        Value::Number(n) => crate::go::json::decoded_int(n).unwrap_or(0),
        _ => 0,
    }
}

/// A `*int64` / `*int32` varint field: written when set.
fn optional_varint(tag: usize, v: &Value, key: &str) -> usize {
    match get(v, key) {
        Some(x) => tag + varint_len(int_of(x) as u64),
        None => 0,
    }
}

/// A JSON message (`JSON{Raw}`): the raw bytes are the value as `json.Marshal` writes it (the
/// API server decodes the request into the Go type, keeping the bytes of a JSON body and
/// marshalling the value of an apply patch; both are Go's compact encoding). `null` leaves
/// `Raw` nil.
fn json_message(v: &Value) -> usize {
    if v.is_null() {
        0
    } else {
        delimited(1, json_len(v))
    }
}

/// A `map<string, Message>` entry with a two-byte tag.
fn map_entry(tag: usize, key: &str, message: usize) -> usize {
    let entry = delimited(1, key.len()) + delimited(1, message);
    delimited(tag, entry)
}

fn schema_map(tag: usize, v: &Value, key: &str) -> usize {
    match get(v, key).and_then(Value::as_object) {
        Some(m) => m
            .iter()
            .map(|(k, s)| map_entry(tag, k, schema_props(s)))
            .sum(),
        None => 0,
    }
}

/// `JSONSchemaPropsOrBool`: `Allows` (always written) and the schema when it is one.
fn schema_or_bool(v: &Value) -> usize {
    2 + if v.is_object() {
        delimited(1, schema_props(v))
    } else {
        0
    }
}

/// `JSONSchemaProps`.
fn schema_props(v: &Value) -> usize {
    let mut n = 0;
    n += string_field(1, v, "id");
    n += string_field(1, v, "$schema");
    n += optional_string(1, v, "$ref");
    n += string_field(1, v, "description");
    n += string_field(1, v, "type");
    n += string_field(1, v, "format");
    n += string_field(1, v, "title");
    if let Some(d) = get(v, "default") {
        n += delimited(1, json_message(d));
    }
    if get(v, "maximum").is_some() {
        n += 9; // fixed64
    }
    n += 2; // exclusiveMaximum
    if get(v, "minimum").is_some() {
        n += 9;
    }
    n += 2; // exclusiveMinimum
    n += optional_varint(1, v, "maxLength");
    n += optional_varint(1, v, "minLength");
    n += string_field(1, v, "pattern");
    n += optional_varint(2, v, "maxItems");
    n += optional_varint(2, v, "minItems");
    n += 3; // uniqueItems
    if get(v, "multipleOf").is_some() {
        n += 10;
    }
    for e in items(v, "enum") {
        n += delimited(2, json_message(e));
    }
    n += optional_varint(2, v, "maxProperties");
    n += optional_varint(2, v, "minProperties");
    n += strings_field(2, v, "required");
    if let Some(it) = get(v, "items") {
        // JSONSchemaPropsOrArray: one schema, or a list of them.
        let size = match it {
            Value::Array(list) => list.iter().map(|s| delimited(1, schema_props(s))).sum(),
            s => delimited(1, schema_props(s)),
        };
        n += delimited(2, size);
    }
    for key in ["allOf", "oneOf", "anyOf"] {
        for s in items(v, key) {
            n += delimited(2, schema_props(s));
        }
    }
    if let Some(s) = get(v, "not") {
        n += delimited(2, schema_props(s));
    }
    n += schema_map(2, v, "properties");
    if let Some(s) = get(v, "additionalProperties") {
        n += delimited(2, schema_or_bool(s));
    }
    n += schema_map(2, v, "patternProperties");
    if let Some(m) = get(v, "dependencies").and_then(Value::as_object) {
        for (k, d) in m {
            // JSONSchemaPropsOrStringArray: a schema, or property names.
            let size = match d {
                Value::Array(names) => names
                    .iter()
                    .map(|s| delimited(1, s.as_str().map_or(0, str::len)))
                    .sum(),
                s => delimited(1, schema_props(s)),
            };
            n += map_entry(2, k, size);
        }
    }
    if let Some(s) = get(v, "additionalItems") {
        n += delimited(2, schema_or_bool(s));
    }
    n += schema_map(2, v, "definitions");
    if let Some(d) = get(v, "externalDocs") {
        n += delimited(
            2,
            string_field(1, d, "description") + string_field(1, d, "url"),
        );
    }
    if let Some(e) = get(v, "example") {
        n += delimited(2, json_message(e));
    }
    n += 3; // nullable
    if get(v, "x-kubernetes-preserve-unknown-fields").is_some() {
        n += 3;
    }
    n += 3; // x-kubernetes-embedded-resource
    n += 3; // x-kubernetes-int-or-string
    n += strings_field(2, v, "x-kubernetes-list-map-keys");
    n += optional_string(2, v, "x-kubernetes-list-type");
    n += optional_string(2, v, "x-kubernetes-map-type");
    for rule in items(v, "x-kubernetes-validations") {
        let mut r = string_field(1, rule, "rule")
            + string_field(1, rule, "message")
            + string_field(1, rule, "messageExpression")
            + optional_string(1, rule, "reason")
            + string_field(1, rule, "fieldPath");
        if get(rule, "optionalOldSelf").is_some() {
            r += 2;
        }
        n += delimited(2, r);
    }
    n
}

/// `CustomResourceDefinitionNames`, with the API server's defaults (`singular` = lower-case
/// kind, `listKind` = kind + "List") when `defaulted`.
fn names_size(names: &Value, defaulted: bool) -> usize {
    let kind = str_len(names, "kind");
    let mut singular = str_len(names, "singular");
    let mut list_kind = str_len(names, "listKind");
    if defaulted {
        if singular == 0 {
            // strings.ToLower keeps the byte length of ASCII kinds (all valid kinds are).
            singular = get(names, "kind")
                .and_then(Value::as_str)
                .map_or(0, |k| k.to_lowercase().len());
        }
        if list_kind == 0 && kind > 0 {
            list_kind = kind + "List".len();
        }
    }
    string_field(1, names, "plural")
        + delimited(1, singular)
        + strings_field(1, names, "shortNames")
        + delimited(1, kind)
        + delimited(1, list_kind)
        + strings_field(1, names, "categories")
}

fn version_size(v: &Value) -> usize {
    let mut n = string_field(1, v, "name") + 2 + 2; // name, served, storage
    if let Some(schema) = get(v, "schema") {
        let inner = get(schema, "openAPIV3Schema").map_or(0, |s| delimited(1, schema_props(s)));
        n += delimited(1, inner);
    }
    if let Some(sub) = get(v, "subresources") {
        let mut s = 0;
        if get(sub, "status").is_some() {
            s += delimited(1, 0);
        }
        if let Some(scale) = get(sub, "scale") {
            s += delimited(
                1,
                string_field(1, scale, "specReplicasPath")
                    + string_field(1, scale, "statusReplicasPath")
                    + optional_string(1, scale, "labelSelectorPath"),
            );
        }
        n += delimited(1, s);
    }
    for c in items(v, "additionalPrinterColumns") {
        let size = string_field(1, c, "name")
            + string_field(1, c, "type")
            + string_field(1, c, "format")
            + string_field(1, c, "description")
            + 1
            + varint_len(get(c, "priority").map_or(0, int_of) as u64)
            + string_field(1, c, "jsonPath");
        n += delimited(1, size);
    }
    n += 2; // deprecated
    n += optional_string(1, v, "deprecationWarning");
    for f in items(v, "selectableFields") {
        n += delimited(1, string_field(1, f, "jsonPath"));
    }
    n
}

/// `CustomResourceConversion`, defaulted to `strategy: None` when absent.
fn conversion_size(spec: &Value) -> usize {
    let Some(c) = get(spec, "conversion") else {
        return delimited(1, "None".len());
    };
    let mut n = string_field(1, c, "strategy");
    if let Some(w) = get(c, "webhook") {
        let mut wn = 0;
        if let Some(cc) = get(w, "clientConfig") {
            let mut ccn = 0;
            if let Some(svc) = get(cc, "service") {
                // The port defaults to 443.
                let port = get(svc, "port").map_or(443, int_of);
                ccn += delimited(
                    1,
                    string_field(1, svc, "namespace")
                        + string_field(1, svc, "name")
                        + optional_string(1, svc, "path")
                        + 1
                        + varint_len(port as u64),
                );
            }
            if let Some(ca) = get(cc, "caBundle").and_then(Value::as_str) {
                ccn += delimited(1, base64_decoded_len(ca));
            }
            ccn += optional_string(1, cc, "url");
            wn += delimited(1, ccn);
        }
        wn += strings_field(1, w, "conversionReviewVersions");
        n += delimited(1, wn);
    }
    n
}

/// Bytes of standard base64 text once decoded (a `[]byte` field in JSON).
fn base64_decoded_len(s: &str) -> usize {
    let body = s.trim_end_matches('=');
    body.len() * 3 / 4
}

fn string_map(tag: usize, v: &Value, key: &str) -> usize {
    match get(v, key).and_then(Value::as_object) {
        Some(m) => m
            .iter()
            .map(|(k, x)| {
                let entry = delimited(1, k.len()) + delimited(1, x.as_str().map_or(0, str::len));
                delimited(tag, entry)
            })
            .sum(),
        None => 0,
    }
}

/// `ObjectMeta` as the API server stores a created cluster-scoped object: name,
/// generateName, labels, annotations, owner references and finalizers from the request; a
/// new 36-byte UID, `generation: 1`, a creation timestamp in whole seconds (a five-byte
/// varint for any date from 1978 to 3058); namespace, selfLink and resourceVersion empty;
/// no deletion fields; `managedFields` not counted (a lower bound).
fn object_meta_size(meta: &Value) -> usize {
    let timestamp = (1 + 5) + (1 + 1); // seconds, nanos (always 0)
    string_field(1, meta, "name")
        + string_field(1, meta, "generateName")
        + delimited(1, 0) // namespace
        + delimited(1, 0) // selfLink
        + delimited(1, 36) // uid
        + delimited(1, 0) // resourceVersion
        + 1
        + varint_len(1) // generation
        + delimited(1, timestamp)
        + string_map(1, meta, "labels")
        + string_map(1, meta, "annotations")
        + items(meta, "ownerReferences")
            .iter()
            .map(|o| {
                let mut s = string_field(1, o, "kind")
                    + string_field(1, o, "name")
                    + string_field(1, o, "uid")
                    + string_field(1, o, "apiVersion");
                if get(o, "controller").is_some() {
                    s += 2;
                }
                if get(o, "blockOwnerDeletion").is_some() {
                    s += 2;
                }
                delimited(1, s)
            })
            .sum::<usize>()
        + strings_field(1, meta, "finalizers")
}

/// The protobuf value kube-apiserver writes to etcd when it creates this CRD: the `k8s\0`
/// prefix and a `runtime.Unknown` envelope (apiVersion, kind, the raw message, empty
/// contentEncoding and contentType) around the v1 CustomResourceDefinition with the
/// create-time changes (defaults, system metadata, status reset to
/// `storedVersions: [the storage version]`). Fields the CRD type does not have are dropped,
/// as decoding drops them. Not counted: `managedFields` (which the API server drops and
/// retries without when etcd refuses the write), the etcd key and transaction overhead,
/// encryption at rest, and the status conditions the API server adds right after creation —
/// so this is a lower bound of the etcd request.
pub fn stored_protobuf_size(crd: &Value) -> usize {
    let null = Value::Null;
    let meta = get(crd, "metadata").unwrap_or(&null);
    let spec = get(crd, "spec").unwrap_or(&null);
    let names = get(spec, "names").unwrap_or(&null);
    let versions = items(spec, "versions");

    let mut spec_n = string_field(1, spec, "group")
        + delimited(1, names_size(names, true))
        + string_field(1, spec, "scope");
    for v in versions {
        spec_n += delimited(1, version_size(v));
    }
    spec_n += delimited(1, conversion_size(spec));
    spec_n += 2; // preserveUnknownFields

    let storage = versions
        .iter()
        .find(|v| get(v, "storage").and_then(Value::as_bool) == Some(true));
    let status_n = delimited(1, names_size(&null, false)) // acceptedNames, empty
        + storage.map_or(0, |v| string_field(1, v, "name")) // storedVersions
        + 1
        + varint_len(0); // observedGeneration

    let crd_n =
        delimited(1, object_meta_size(meta)) + delimited(1, spec_n) + delimited(1, status_n);
    let type_meta = delimited(1, "apiextensions.k8s.io/v1".len())
        + delimited(1, "CustomResourceDefinition".len());
    b"k8s\0".len()
        + delimited(1, type_meta)
        + delimited(1, crd_n)
        + delimited(1, 0)
        + delimited(1, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_manifest_drops_what_the_server_fills_in() {
        let crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "a.b", "uid": "u", "resourceVersion": "1", "generation": 2,
                "creationTimestamp": "2026-01-01T00:00:00Z", "managedFields": [{}],
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
            "spec": {"group": "b"},
            "status": {"storedVersions": ["v1"]},
        });
        assert_eq!(
            as_manifest(crd),
            json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": "a.b"},
                "spec": {"group": "b"},
            })
        );
    }
}
