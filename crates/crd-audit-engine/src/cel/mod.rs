//! CEL (the Common Expression Language) as kube-apiserver runs it for CRD validation rules:
//! parsing with macros, evaluation over JSON values typed by the schema, the Kubernetes
//! function libraries and runtime cost accounting.

pub mod ast;
pub mod check;
pub mod compile;
pub mod cost_estimate;
pub mod cost_limits;
pub mod decls;
pub mod env;
pub mod eval;
pub mod fold;
pub mod functions;
pub mod lexer;
pub mod lib;
pub mod parser;
pub mod types;
pub mod value;

#[cfg(test)]
mod runtime_cost_tests;
