//! `crd-audit controller`: the operator.

use super::{Options, init_logging, run as run_operator};
use crate::audit::config::Config;
use crate::audit::instance_names::{DEFAULT_NAME, InstanceNames};
use crate::program::{EXIT_CLEAN, EXIT_INPUT_ERROR};
use std::path::PathBuf;

/// The flag naming the operator's instance (`controller`, `uninstall-cleanup`).
#[derive(Debug, Clone, clap::Args)]
pub struct InstanceArgs {
    /// The name of the operator's own objects: its Lease and the gate's Service and
    /// ValidatingWebhookConfiguration are named NAME, the gate's self-managed Secret
    /// NAME-gate-tls. Read from $CRD_AUDIT_NAME when not given (the Helm chart sets it to its
    /// fullname).
    #[arg(long, env = "CRD_AUDIT_NAME", value_name = "NAME", default_value = DEFAULT_NAME)]
    pub name: InstanceNames,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Configuration file (see config/crd-audit.yaml).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub cluster: crate::cluster::client::ClusterArgs,
    #[command(flatten)]
    pub instance: InstanceArgs,
    /// Address of the metrics and health endpoints.
    #[arg(long, default_value = "0.0.0.0:8080")]
    pub metrics_addr: String,
    /// Address of the CRD change gate's HTTPS endpoint (`POST /validate-crd`), served when
    /// the configuration's `gate` is `warn` or `deny`.
    #[arg(long, default_value = "0.0.0.0:9443")]
    pub webhook_addr: String,
    /// The operator's namespace, where its Lease lives (default: the pod's namespace, else
    /// `crd-audit`).
    #[arg(long)]
    pub namespace: Option<String>,
    /// Elect one active replica through a Lease (default: true in a pod, false elsewhere).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub leader_elect: Option<bool>,
}

pub fn run(args: &Args) -> u8 {
    init_logging();
    let config = match &args.config {
        Some(p) => match std::fs::read_to_string(p) {
            Ok(text) => match Config::parse(&p.display().to_string(), &text) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("error: {e}");
                    return EXIT_INPUT_ERROR;
                }
            },
            Err(e) => {
                eprintln!("error: {}: {e}", p.display());
                return EXIT_INPUT_ERROR;
            }
        },
        None => Config::default(),
    };
    let namespace = args.namespace.clone().unwrap_or_else(|| {
        std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "crd-audit".into())
    });
    let identity = std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| format!("crd-audit-{}", std::process::id()));
    let opts = Options {
        kubeconfig: args.cluster.kubeconfig.clone(),
        context: args.cluster.context.clone(),
        config,
        metrics_addr: args.metrics_addr.clone(),
        webhook_addr: args.webhook_addr.clone(),
        namespace,
        names: args.instance.name.clone(),
        identity,
        leader_elect: args.leader_elect,
    };
    // Validation is CPU work on blocking threads with room for deep documents; the async
    // workers only move bytes.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(64)
        .thread_stack_size(64 << 20)
        .enable_all()
        .build();
    let runtime = match runtime {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: starting the async runtime: {e}");
            return EXIT_INPUT_ERROR;
        }
    };
    match runtime.block_on(run_operator(opts)) {
        Ok(()) => EXIT_CLEAN,
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_INPUT_ERROR
        }
    }
}
