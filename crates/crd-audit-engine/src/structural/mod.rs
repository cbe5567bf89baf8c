//! Structural schemas: which schemas the API server can convert into its `Structural` form,
//! the `NonStructuralSchema` rules, and the CRD create-time checks of a schema.
//!
//! - [`crate::schema::new_structural`]: the conversion failures (`OpenAPIV3Schema 'id' is not
//!   supported`, ...).
//! - [`rules`]: `ValidateStructural` — the violations the `NonStructuralSchema` condition lists.
//! - [`crd_schema`]: the schema checks of CRD validation (`crdErrors`).
//! - [`status_root`]: what may stand at the root of a schema under a status subresource.
//! - [`report`]: everything `crd-audit check` reports for one CRD.

pub mod cel_rules;
pub mod crd_schema;
pub mod defaults;
pub mod report;
pub mod rules;
pub mod status_root;
