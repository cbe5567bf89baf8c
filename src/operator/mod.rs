//! The operator (`crd-audit controller`), on kube-rs and tokio: it watches every CRD and the
//! objects of every audited CRD, keeps a `SchemaAudit` report per CRD, revalidates at once
//! when a schema changes, and tells people through conditions, Events and metrics.
//!
//! Modules: `client` (kubeconfig → kube client), `config` (the configuration file),
//! `leader` (the Lease), `controller` (CRD watch, registry, report watch), `objects` (one
//! object audit per CRD), `audit` (what an object audit keeps), `report_status` (the status a report
//! should have), `reporter` (writing reports and Events), `schema_audit` (the report types and
//! CRD), `events`, `metrics`, `write_limit`. The engine is synchronous: validation runs on
//! blocking threads, never on the async executor.

pub mod audit;
pub mod client;
pub mod config;
pub mod controller;
pub mod events;
#[cfg(test)]
mod fake_api;
pub mod leader;
pub mod metrics;
pub mod objects;
pub mod report_status;
pub mod reporter;
pub mod schema_audit;
pub mod write_limit;

use config::Config;
use controller::{Controller, Ctx};
use leader::{ElectionError, Elector};
use metrics::Metrics;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// Command-line options of the controller.
#[derive(Clone, Debug)]
pub struct Options {
    pub kubeconfig: Option<std::path::PathBuf>,
    pub context: Option<String>,
    pub config: Config,
    pub metrics_addr: String,
    /// The operator's namespace (its leader-election Lease).
    pub namespace: String,
    pub identity: String,
    /// `None`: on in a pod, off elsewhere.
    pub leader_elect: Option<bool>,
}

/// JSON log lines on stderr; `RUST_LOG` filters them (default `info`).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,kube_client=off"));
    let _ = tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter)
        .with_current_span(false)
        .with_span_list(false)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Resolves on SIGTERM or SIGINT.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            _ => std::future::pending::<()>().await,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Runs until SIGTERM/SIGINT. Errors are what stops the operator from starting.
pub async fn run(opts: Options) -> Result<(), String> {
    let (kube_config, origin) =
        client::config(opts.kubeconfig.as_deref(), opts.context.as_deref()).await?;
    let client = client::multiplexed(&kube_config)?;
    let watch_clients = client::WatchClients::new(kube_config);
    let metrics = Arc::new(Metrics::new());
    metrics::serve(&opts.metrics_addr, metrics.clone()).await?;
    let mut elect = opts
        .leader_elect
        .unwrap_or(origin == client::Origin::InCluster);
    if elect {
        match leader::leases_served(&client).await {
            Ok(true) => {}
            Ok(false) => {
                tracing::warn!(
                    "the API server serves no coordination.k8s.io/v1 Leases; running without leader election"
                );
                elect = false;
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not tell whether Leases are served; trying anyway")
            }
        }
    }
    tracing::info!(
        identity = %opts.identity,
        metrics = %opts.metrics_addr,
        leader_election = elect,
        namespace = %opts.namespace,
        "started"
    );
    metrics.set_ready(true);
    let shutdown = shutdown_signal();
    tokio::pin!(shutdown);
    let mut elector = Elector::new(client.clone(), &opts.namespace, &opts.identity);
    loop {
        if elect {
            tokio::select! {
                r = acquire(&mut elector) => r?,
                _ = &mut shutdown => {
                    tracing::info!("stopping");
                    return Ok(());
                }
            }
            tracing::info!(identity = %opts.identity, "became the leader");
        }
        metrics.leader.set(1);
        let ctx = Ctx::new(
            client.clone(),
            Some(watch_clients.clone()),
            opts.config.clone(),
            metrics.clone(),
            &opts.identity,
        );
        let controller = Controller::start(ctx);
        let lost = async {
            if elect {
                keep_leading(&mut elector).await
            } else {
                std::future::pending::<()>().await
            }
        };
        tokio::select! {
            _ = lost => {
                drop(controller);
                metrics.leader.set(0);
                tracing::error!("could not renew the Lease in time; stopped acting as leader and standing by");
            }
            _ = &mut shutdown => {
                drop(controller);
                metrics.leader.set(0);
                tracing::info!("stopping");
                if elect {
                    elector.release().await;
                }
                return Ok(());
            }
        }
    }
}

/// Waits until this replica holds the Lease. A missing namespace is an error to fix, not a
/// reason to loop.
async fn acquire(elector: &mut Elector) -> Result<(), String> {
    let mut last_error: Option<Instant> = None;
    loop {
        match elector.try_acquire_or_renew().await {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(e @ ElectionError::NamespaceMissing(_)) => return Err(e.to_string()),
            Err(e) => {
                // Said at most every 30 s while the API server is unreachable.
                if last_error.is_none_or(|t| t.elapsed() > Duration::from_secs(30)) {
                    tracing::warn!(error = %e, "leader election: the Lease could not be read or written; retrying");
                    last_error = Some(Instant::now());
                }
            }
        }
        tokio::time::sleep(leader::RETRY).await;
    }
}

/// Renews the Lease until it is lost: taken by another replica, or not renewed within the
/// renew deadline (shorter than the lease, so that no standby takes over while this one
/// still acts).
pub(crate) async fn keep_leading(elector: &mut Elector) {
    let mut renewed = Instant::now();
    loop {
        tokio::time::sleep(leader::RETRY).await;
        let left = leader::RENEW_DEADLINE.saturating_sub(renewed.elapsed());
        match tokio::time::timeout(left, elector.try_acquire_or_renew()).await {
            Ok(Ok(true)) => renewed = Instant::now(),
            Ok(Ok(false)) => return,
            Ok(Err(e)) => tracing::warn!(error = %e, "renewing the Lease failed"),
            Err(_) => {}
        }
        if renewed.elapsed() >= leader::RENEW_DEADLINE {
            return;
        }
    }
}
