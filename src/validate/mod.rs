//! Object validation with API-server semantics.

pub mod formats;
pub mod goregex;
pub mod objectmeta;
pub mod prune;
pub mod schema_validator;
