//! crd-audit: audit CustomResourceDefinition schemas and the objects stored under them with
//! the semantics of kube-apiserver.
//!
//! The engine (everything but `cli`) is pure: it takes `serde_json::Value`s and returns
//! field errors ([`cause::Cause`]), with no I/O.

pub mod cause;
pub mod cel;
pub mod cli;
pub mod crd;
pub mod diff;
#[doc(hidden)]
pub mod fuzz;
pub mod gofmt;
pub mod guard;
pub mod load;
pub mod operator;
pub mod schema;
pub mod structural;
pub mod validate;
