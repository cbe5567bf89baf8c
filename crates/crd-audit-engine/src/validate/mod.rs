//! Object validation with API-server semantics.
//!
//! [`object::CrdValidator`] is the entry point: it composes the parts below in the order the
//! API server runs them for a CREATE.

pub mod cel_validation;
pub mod defaulting;
pub mod embedded;
pub mod list_type;
pub mod object;
pub mod objectmeta;
pub mod property_index;
pub mod prune;
pub mod ratchet;
pub mod scale;
pub mod schema_tree;
pub mod schema_validator;
pub mod update;
pub mod verdict;

pub use object::{CompileError, CrdValidator, Mode, ValidatorOptions};
pub use update::Subresource;
pub use verdict::{Outcome, RequestError, RequestErrorReason, UpdateVerdict, Verdict};
