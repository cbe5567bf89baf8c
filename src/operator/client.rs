//! The Kubernetes client of every command that talks to a cluster (`controller`,
//! `plan --cluster`, `manifests --rbac-for-cluster`): kube's own kubeconfig handling, so that
//! every kubeconfig kubectl accepts works (client certificates, bearer tokens and token files,
//! exec credential plugins, OIDC and GCP auth providers, several files in `KUBECONFIG`,
//! proxies, `insecure-skip-tls-verify`, `tls-server-name`) and in-cluster ServiceAccount
//! credentials, which kube re-reads when they rotate.

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use std::path::Path;

/// Where the client's credentials came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A kubeconfig file (`--kubeconfig`, `KUBECONFIG`, `~/.kube/config`).
    Kubeconfig,
    /// The pod's ServiceAccount.
    InCluster,
}

/// A client for the context the user chose: `--kubeconfig FILE` (else `KUBECONFIG`, whose
/// files are merged as kubectl merges them, else `~/.kube/config`, else the in-cluster
/// ServiceAccount), and `--context` (else the current context).
pub async fn connect(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
) -> Result<(Client, Origin), String> {
    let options = KubeConfigOptions {
        context: context.map(str::to_string),
        ..Default::default()
    };
    let (config, origin) = match kubeconfig {
        Some(path) => {
            let kc = Kubeconfig::read_from(path)
                .map_err(|e| format!("reading kubeconfig {}: {e}", path.display()))?;
            let config = Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|e| format!("kubeconfig {}: {e}", path.display()))?;
            (config, Origin::Kubeconfig)
        }
        None if context.is_some() => (
            Config::from_kubeconfig(&options)
                .await
                .map_err(|e| format!("kubeconfig: {e}"))?,
            Origin::Kubeconfig,
        ),
        None => match Config::from_kubeconfig(&options).await {
            Ok(c) => (c, Origin::Kubeconfig),
            Err(kube_err) => match Config::incluster() {
                Ok(c) => (c, Origin::InCluster),
                Err(_) => {
                    return Err(format!(
                        "no cluster to talk to: {kube_err} (set KUBECONFIG or --kubeconfig, or run in a pod)"
                    ));
                }
            },
        },
    };
    let client = Client::try_from(config).map_err(|e| format!("creating the client: {e}"))?;
    Ok((client, origin))
}

/// A single-threaded runtime for the CLI commands that read from a cluster.
pub fn cli_runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting the async runtime: {e}"))
}

/// The message of an API error as kubectl shows it (`the server ... (Forbidden)`).
pub fn describe(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => format!("{} ({}, HTTP {})", s.message, s.reason, s.code),
        other => other.to_string(),
    }
}

/// The HTTP status of an API error, if the server answered.
pub fn status_code(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}
