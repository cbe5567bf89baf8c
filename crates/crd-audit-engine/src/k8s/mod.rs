//! Kubernetes value semantics on top of [`crate::go`]: what kube-openapi, apimachinery and
//! apiextensions-apiserver decide about a string before any schema or CEL is involved.

pub mod formats;
pub mod names;
pub mod quantity;
pub mod size_limits;
