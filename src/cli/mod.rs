//! The one-shot commands of `crd-audit` (all but `controller`): one module per command,
//! sharing input reading, and handing what they find to the sink of the output format
//! (`sink`). The command line itself is `crate::command_line`.

pub mod apply_crd;
pub mod audit;
pub mod chart_test;
pub mod check;
pub mod completions;
pub mod crd_catalog;
pub mod crd_findings;
pub mod diff;
pub mod inputs;
pub mod locate;
pub mod manifests;
pub mod migrate;
pub mod plan;
pub mod progress_bar;
pub mod roundtrip;
pub mod sink;
pub mod updates;
pub mod validate;

pub use crate::program::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR, VERSION};
