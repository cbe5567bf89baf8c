//! The crd-audit engine: CustomResourceDefinition schemas and the objects stored under them,
//! judged with the semantics of kube-apiserver (apiextensions-apiserver, kube-openapi,
//! apiserver's CEL), down to field paths, cause types and messages.
//!
//! It is pure and synchronous: it takes [`serde_json::Value`]s and returns findings, with no
//! I/O, no Kubernetes client and no async runtime.
//!
//! - [`Crd`] decodes a CRD document (`apiextensions.k8s.io/v1`, and `v1beta1` converted).
//! - [`check_crd`] reports what the API server says of the CRD itself: the
//!   `NonStructuralSchema` condition's causes, the errors a create would return (invalid
//!   defaults, CEL compilation and cost, list types, ...), warnings, stored versions no longer
//!   served.
//! - [`CrdValidator`] compiles the CRD's schemas and CEL rules once and judges objects
//!   ([`CrdValidator::validate`]) as a create would, or as stored data ([`Mode::Stored`]):
//!   pruning, defaulting, ObjectMeta, OpenAPI with the Kubernetes extensions, formats,
//!   list types, embedded resources and CEL `x-kubernetes-validations`, with upstream's cost
//!   limits.
//! - [`Release`] names the Kubernetes release to judge by (1.36 unless said otherwise):
//!   [`check_crd`] and [`CrdValidator::for_release`] check and compile a CRD as a server
//!   of that release does, in its CEL environments (a rule using a library the release lacks
//!   does not compile there).
//! - [`diff()`] classifies the changes between two revisions of a CRD (tightening,
//!   loosening, neutral).
//! - [`load`] reads YAML and JSON documents the way kubectl and the API server decode them,
//!   with their positions and bounded memory.
//!
//! ```
//! use crd_audit_engine::{Crd, CrdValidator, Mode, Outcome};
//! use serde_json::json;
//!
//! let crd = Crd::from_value(&json!({
//!     "apiVersion": "apiextensions.k8s.io/v1",
//!     "kind": "CustomResourceDefinition",
//!     "metadata": {"name": "widgets.example.com"},
//!     "spec": {
//!         "group": "example.com",
//!         "names": {"kind": "Widget", "plural": "widgets"},
//!         "scope": "Namespaced",
//!         "versions": [{
//!             "name": "v1", "served": true, "storage": true,
//!             "schema": {"openAPIV3Schema": {
//!                 "type": "object",
//!                 "properties": {"spec": {
//!                     "type": "object",
//!                     "properties": {"replicas": {"type": "integer", "maximum": 10}},
//!                 }},
//!             }},
//!         }],
//!     },
//! }))?;
//! let validator = CrdValidator::new(&crd)?;
//! let object = json!({
//!     "apiVersion": "example.com/v1",
//!     "kind": "Widget",
//!     "metadata": {"name": "big"},
//!     "spec": {"replicas": 20, "colour": "red"},
//! });
//! let verdict = validator.validate(object, Mode::Create);
//! let Outcome::Refused { causes } = &verdict.outcome else {
//!     panic!("a refusal is expected: {:?}", verdict.outcome);
//! };
//! assert_eq!(
//!     causes[0].to_string(),
//!     "spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10"
//! );
//! assert_eq!(verdict.pruned, ["spec.colour"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The modules below the public API are internal (each names the upstream code it mirrors);
//! the feature `internals` exposes them to the project's own tests, benchmarks and fuzz
//! targets, and is not a stable API.

// Every public item is documented (checked by `.ci/run`'s clippy of the engine alone; the
// `internals` feature opens undocumented internal modules to the project's tests).
#![cfg_attr(not(feature = "internals"), warn(missing_docs))]

// The crate README's example runs as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

/// Declares engine modules that are internal, unless the `internals` feature is on.
macro_rules! internal_modules {
    ($($name:ident),* $(,)?) => {$(
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub mod $name;
        #[cfg(not(feature = "internals"))]
        pub(crate) mod $name;
    )*};
}

internal_modules!(
    go, k8s, guard, cause, schema, crd, cel, validate, structural, diff,
);

pub mod conversion;
pub mod load;
mod release;

#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod fuzz;
#[cfg(any(test, feature = "internals"))]
#[doc(hidden)]
pub mod testing;

pub use cause::{BadValue, Cause, ErrorType, Path};
pub use crd::{Crd, CrdError, Scale, Scope, SpecFacts, Version};
pub use diff::{Change, Class, diff};
pub use release::Release;
pub use structural::check::{CheckInput, CheckReport, Condition, Warning, check_crd};
pub use validate::{
    CompileError, CrdValidator, Mode, Outcome, RequestError, RequestErrorReason, Subresource,
    UpdateVerdict, ValidatorOptions, Verdict,
};

/// Go's renderings of values, as upstream's messages print them: for callers that word
/// findings of their own the way the API server would.
pub mod render {
    pub use crate::go::json::{decoded_int, json_kind, json_string, marshal as json, number_json};
    pub use crate::go::strconv::quote;
}

/// The size limits a CRD meets on its way into a cluster (the API server's request body and
/// annotation limits, etcd's request limit), measured as Go's `json.Marshal` and the API
/// server's protobuf encoding would size it.
pub mod size_limits {
    pub use crate::k8s::size_limits::{
        ANNOTATIONS_LIMIT, ETCD_REQUEST_LIMIT, Finding, LAST_APPLIED, REQUEST_BODY_LIMIT, Severity,
        Sizes, as_manifest, findings, last_applied_configuration, measure, stored_protobuf_size,
    };
}

/// Catching a panic (a bug) while judging one object or CRD, so that it becomes a finding for
/// that input instead of the end of the process.
pub mod panic_guard {
    pub use crate::guard::{catch, install_quiet_hook};
}

/// Go's parsers of the values Kubernetes writes as strings, as the API server reads them.
pub mod parse {
    /// Go's `time.ParseDuration` (the `duration` format, CEL's `duration()`, and durations in
    /// Kubernetes configuration files): the duration in nanoseconds, or Go's error text.
    pub use crate::go::time::parse_duration as duration;
}
