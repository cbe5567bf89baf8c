//! Structural schemas: which schemas the API server can convert into its `Structural` form,
//! the `NonStructuralSchema` rules, and the CRD create-time checks of a schema.
//!
//! - [`crate::schema::new_structural`]: the conversion failures (`OpenAPIV3Schema 'id' is not
//!   supported`, ...).
//! - [`rules`]: `ValidateStructural` — the violations the `NonStructuralSchema` condition lists.
//! - [`crd_schema`]: the schema checks of CRD validation (`crdErrors`).
//! - [`crd_spec`]: CRD validation outside the schemas (name, group, scope, names, versions).
//! - [`status_root`]: what may stand at the root of a schema under a status subresource.
//! - [`check`]: the entry point of `crd-audit check` and everything it reports for one CRD
//!   ([`check::CheckReport`]).
//! - [`cel_compilation`]: the CRD checks of `x-kubernetes-validations` rules (fields,
//!   compilation, result types, costs).

pub mod cel_compilation;
pub mod check;
pub mod crd_schema;
pub mod crd_spec;
pub mod defaults;
pub mod rules;
pub mod status_root;
