//! The `crd-audit` command line: one module per command, sharing input reading and output.

pub mod check;
pub mod cluster;
pub mod controller;
pub mod diff;
pub mod inputs;
pub mod manifests;
pub mod output;
pub mod plan;
pub mod size_limits;
pub mod validate;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Audit CustomResourceDefinition schemas and the objects stored under them, with the
/// semantics of kube-apiserver.
#[derive(Debug, Parser)]
#[command(name = "crd-audit", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Report structural-schema violations and CRD-level problems of every version of each CRD.
    ///
    /// Prints what kube-apiserver's NonStructuralSchema condition lists, the errors CRD
    /// validation would return on create (invalid defaults, list-type misuse, invalid
    /// patterns, ...), format warnings, and stored versions that are no longer served.
    /// Also reports size limits: a warning when client-side `kubectl apply` would fail on its
    /// last-applied annotation (over 262,144 bytes of annotations), errors when the CRD is
    /// above the API server's 3 MiB request limit or etcd's default 1.5 MiB request limit.
    /// Exit code 0: nothing found; 1: findings; 2: unreadable input.
    Check(check::Args),
    /// Validate objects against their CRDs as kube-apiserver does on create.
    ///
    /// Each object is matched to a CRD by group and kind and judged at the version its
    /// apiVersion names: pruning of unknown fields, defaulting, ObjectMeta, the OpenAPI
    /// schema with the Kubernetes extensions, list-type uniqueness, embedded resources.
    /// Exit code 0: all valid; 1: invalid objects (or unknown kinds); 2: unreadable input.
    Validate(validate::Args),
    /// List every schema change between two revisions of one CRD, classified tightening,
    /// loosening or neutral. Exit code 1 when any change tightens (for CI gates).
    Diff(diff::Args),
    /// Show which objects become invalid if a CRD revision is applied (judged as stored
    /// data: the whole object, status included). Exit code 1 when any object breaks.
    Plan(plan::Args),
    /// Run the in-cluster operator: audit every CRD and its objects continuously and keep a
    /// SchemaAudit report per CRD.
    Controller(controller::Args),
    /// Print the SchemaAudit CRD (what manifests/ installs), or with --rbac-for-cluster a
    /// ClusterRole that reads only the CRD groups present in the cluster.
    Manifests(manifests::Args),
}

/// Exit codes of every command.
pub const EXIT_CLEAN: u8 = 0;
pub const EXIT_FINDINGS: u8 = 1;
pub const EXIT_INPUT_ERROR: u8 = 2;

/// Runs the parsed command line.
pub fn run(cli: Cli) -> ExitCode {
    let code = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Validate(args) => validate::run(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Plan(args) => plan::run(&args),
        Command::Controller(args) => controller::run(&args),
        Command::Manifests(args) => manifests::run(&args),
    };
    ExitCode::from(code)
}
