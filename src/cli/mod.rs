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

/// What a command on a cluster needs before it connects: its runtime, and the release named by
/// `--kubernetes-version` (if any). On failure, the error is printed and the exit code given.
pub(crate) fn cluster_command_start(
    kubernetes_version: Option<&str>,
) -> Result<(tokio::runtime::Runtime, Option<crate::release::KubeVersion>), u8> {
    let runtime = crate::cluster::client::cli_runtime().map_err(|e| {
        eprintln!("error: {e}");
        EXIT_INPUT_ERROR
    })?;
    let release = kubernetes_version
        .map(str::parse::<crate::release::KubeVersion>)
        .transpose()
        .map_err(|e| {
            eprintln!("error: --kubernetes-version: {e}");
            EXIT_INPUT_ERROR
        })?;
    Ok((runtime, release))
}
