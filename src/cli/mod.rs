//! The one-shot commands of `crd-audit` (all but `controller`): one module per command,
//! sharing input reading and output. The command line itself is `crate::command_line`.

pub mod audit;
pub mod check;
pub mod completions;
pub mod crd_catalog;
pub mod crd_findings;
pub mod diff;
pub mod inputs;
pub mod junit;
pub mod locate;
pub mod manifests;
pub mod output;
pub mod plan;
pub mod sarif;
pub mod updates;
pub mod validate;

pub use crate::program::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR, VERSION};
