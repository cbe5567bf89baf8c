//! crd-audit: audit CustomResourceDefinition schemas and the objects stored under them with
//! the semantics of kube-apiserver.
//!
//! The engine (everything but `cli`) is pure: it takes `serde_json::Value`s and returns
//! field errors ([`cause::Cause`]), with no I/O.

// The toolchain floor moved to 1.89 with kube 5; these two lints newly apply to engine code
// that is being reworked on other branches, and are fixed once those land.
#![allow(clippy::collapsible_if, clippy::manual_is_multiple_of)]

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
