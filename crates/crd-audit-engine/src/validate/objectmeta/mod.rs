//! ObjectMeta of custom resources, as kube-apiserver 1.36 checks it on CREATE.
//!
//! Three stages, in the order the API server runs them:
//!
//! 1. **Decoding (400).** The server turns `metadata` into a typed `ObjectMeta` with a
//!    case-sensitive `encoding/json` decoder (`sigs.k8s.io/json`) before anything is validated.
//!    A value of the wrong type makes the whole request fail with `400 Bad Request`.
//!    - [`request_error`]: the top-level object. `Some(text)` is the exact `requestError`.
//!    - [`embedded_request_error`]: one `x-kubernetes-embedded-resource` object (the schema
//!      coercer): `apiVersion`/`kind` that are not strings, or a `metadata` that does not
//!      decode. The text is a field error (`spec.t.kind: Invalid value: true: must be a string`).
//!    - [`decode::objectmeta_decode_error`]: the bare decoder message for a `metadata` value.
//!
//!    The decoder reports the first type error in field order (maps are re-marshalled with
//!    sorted keys first), except that an error from a `metav1.Time` field (`creationTimestamp`,
//!    `deletionTimestamp`, `managedFields[].time`: Go's `time.Parse` with RFC 3339) stops the
//!    decoding at once and wins over any type error.
//!
//! 2. **Top-level ObjectMeta (422).** [`validate_object_meta`] is what the custom-resource
//!    strategy's `Validate` reports for `metadata` (`ValidateObjectMetaAccessor` with
//!    `NameIsDNSSubdomain`), after `rest.BeforeCreate`'s preparation: the namespace comes from
//!    the request (`default` when a namespaced object has none; cleared for cluster-scoped
//!    CRDs, so a namespace there is never an error), `generation` is reset to 1, and a missing
//!    name is generated from `generateName`. The later generic check with path-segment names
//!    cannot add anything once this one passed, so it is not repeated.
//!
//! 3. **Embedded resources (422).** [`validate_embedded_resource`] reproduces
//!    `validateEmbeddedResource` for one embedded object (`apiVersion`/`kind` required and
//!    checked, metadata validated by [`meta::validate_embedded_meta`]: path-segment names rather than
//!    DNS names, a name that is empty counts as valid, namespace only checked when set,
//!    `generation` must not be negative). Walking the schema to find embedded objects is the
//!    caller's job.
//!
//! Every function expects values decoded like the API server decodes JSON (integers as `i64`,
//! other numbers as `f64`). The validation functions assume decoding succeeded (stage 1
//! returned `None`); values of a wrong type are then treated as absent.
//!
//! Not reproduced: the `origin` of causes (`format=k8s-label-key`, ...) that `Cause` does not
//! carry; the random suffix of generated names (`x7k2q` stands in for it, as in the conformance
//! corpus); Go's `unicode.IsPrint` is approximated for unassigned code points.
//!
//! The valid path allocates nothing: bytes are checked by hand and field paths are built only
//! when an error is reported.

mod decode;
mod managed_fields;
mod meta;
#[cfg(test)]
mod oracle_probes;
mod owner_references;
#[cfg(test)]
mod tests;
mod update;

pub use decode::{embedded_request_cause, embedded_request_error, request_error};
pub use meta::{go_to_lower, prepare_for_create, validate_embedded_resource, validate_object_meta};
pub use update::{
    finalizer_warnings, prepare_for_update, validate_object_meta_accessor,
    validate_object_meta_update,
};

/// Total size of keys and values of `metadata.annotations` (256 KiB).
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;
/// Suffix standing in for the 5 random characters of a name generated from `generateName`.
pub const GENERATED_NAME_SUFFIX: &str = "x7k2q";
const MAX_GENERATED_BASE: usize = 58;
