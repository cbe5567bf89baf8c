//! The operator (`crd-audit controller`), on kube-rs and tokio: it watches every CRD and the
//! objects of every audited CRD, keeps a `SchemaAudit` report per CRD, revalidates at once
//! when a schema changes, and tells people through conditions, Events and metrics.
//!
//! Modules, in layers (each uses only those below it; `tests/module_layers.rs` holds it):
//! - `leadership`: the Lease, and the work of one leadership term around kube-runtime's
//!   Controller keyed by CRD name, wired from the parts each task takes;
//! - `crds`: the Controller's context (`Reconciler`), the reconcile of one CRD, its error
//!   policy, reading a revision, a CRD that went away;
//! - `audits` (the object audits, one task per CRD owned by the reconciles, and the cache of
//!   compiled revisions), `reports` (the report's object, the queue and the writer of reports
//!   and Events, the reports' watch, what an earlier operator reported, the policy reports)
//!   `migrations` (storage version migration, `migrateStoredVersions`) and `conversions`
//!   (conversion round trips, `auditConversions`), which do not use each other;
//! - `state`: the tracked CRDs, and the one owner of their state;
//! - `status`: what a `SchemaAudit` report says, computed (no I/O);
//! - beside them at the bottom: `events` (the Event queue and its sink), `metrics`,
//!   `server` (what the API server offers), `retry` (when a failed request is tried again),
//!   `watch_backoff` (the watches' backoff), `options`, `logging`, `shutdown`;
//! - at the top: `command` (`crd-audit controller`: its flags) and `uninstall_cleanup` (the
//!   uninstall hook).
//!
//! The client, configuration, judging and report types are shared with the one-shot commands
//! (`crate::cluster`, `crate::audit`). This module holds the entry point, [`run`]. The engine
//! is synchronous: validation runs on blocking threads, never on the async executor.

pub mod audits;
pub mod command;
pub mod conversions;
pub mod crds;
pub mod events;
#[cfg(test)]
mod fake_api;
pub mod leadership;
mod logging;
pub mod metrics;
pub mod migrations;
mod options;
pub mod reports;
pub mod retry;
pub mod server;
mod shutdown;
pub mod state;
pub mod status;
pub mod uninstall_cleanup;
pub mod watch_backoff;

pub use logging::init_logging;
pub use options::Options;

use crate::cluster::client;
use crate::judging_pool::JudgingPool;
use leadership::lease::{self as leader, Elector, acquire, keep_leading};
use leadership::term::{LeadershipTerm, Parts};
use metrics::Metrics;
use shutdown::shutdown_signal;
use std::sync::Arc;

/// How long a stopping operator gives its report writes in flight and its queued Events
/// (within the pod's default termination grace period of 30 s).
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(20);
/// After SIGTERM a replica that serves the gate goes on answering for this long (each answer
/// closing its connection) and says it is not ready, so that its pod leaves the Service's
/// endpoints (kube-proxy's rules follow within a second or two) before its listener goes. The
/// Lease is released first. Within the pod's grace period with SHUTDOWN_GRACE (30 s).
const GATE_DRAIN: std::time::Duration = std::time::Duration::from_secs(5);

/// Runs until SIGTERM/SIGINT. Errors are what stops the operator from starting.
///
/// `/readyz` answers `ok` when the replica does what its role asks: a leader (or the one
/// replica, without leader election) once its first LIST of CRDs is reconciled; a standby
/// while it can read the Lease (its last attempt to take it got an answer). Otherwise, and
/// from the start until then, `503`.
/// Why the operator could not start, or stopped.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// No client for the cluster (the kubeconfig, the in-cluster credentials).
    #[error("{0}")]
    Client(String),
    #[error(transparent)]
    Metrics(#[from] metrics::ServeError),
    #[error("the CRD change gate: {0}")]
    Gate(#[from] crate::gate::GateError),
    #[error(transparent)]
    Election(#[from] leader::ElectionError),
}

pub async fn run(opts: Options) -> Result<(), RunError> {
    let (kube_config, origin) = client::config(opts.kubeconfig.as_deref(), opts.context.as_deref())
        .await
        .map_err(RunError::Client)?;
    let client = client::multiplexed(&kube_config).map_err(RunError::Client)?;
    let watch_clients = client::WatchClients::new(kube_config);
    let metrics = Arc::new(Metrics::with_per_crd_series(opts.config.per_crd_metrics));
    metrics::serve(&opts.metrics_addr, metrics.clone()).await?;
    // The blocking threads engine work runs on: the audits' and the gate's.
    let judging = JudgingPool::one_per_core();
    // Every replica serves the gate; the leader keeps its webhook configuration. The gate's
    // tasks end when it is dropped, as this function returns.
    let gate = if crate::gate::review::serves(opts.config.gate) {
        Some(
            crate::gate::start(
                &opts.webhook_addr,
                client.clone(),
                opts.config.clone(),
                &opts.names,
                &opts.namespace,
                metrics.gate.clone(),
                judging.clone(),
            )
            .await?,
        )
    } else {
        None
    };
    let gate_cert = gate.as_ref().map(crate::gate::ServingGate::cert);
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
        name = %opts.names,
        allocator = crate::allocator::NAME,
        "started"
    );
    let shutdown = shutdown_signal();
    tokio::pin!(shutdown);
    let mut elector = Elector::new(
        client.clone(),
        opts.names.lease(),
        &opts.namespace,
        &opts.identity,
    );
    loop {
        if elect {
            tokio::select! {
                r = acquire(&mut elector, &metrics) => r?,
                _ = &mut shutdown => {
                    tracing::info!("stopping");
                    metrics.set_ready(false);
                    if let Some(gate) = gate {
                        gate.drain(GATE_DRAIN).await;
                    }
                    return Ok(());
                }
            }
            tracing::info!(identity = %opts.identity, "became the leader");
        }
        // Ready again once this term's first LIST of CRDs is reconciled.
        metrics.set_ready(false);
        metrics.leader.set(1);
        let parts = Parts::new(
            client.clone(),
            Some(watch_clients.clone()),
            &opts.config,
            metrics.clone(),
            &opts.identity,
            judging.clone(),
        );
        let release = crate::release::of_cluster(&client).await;
        parts.server.set_release(release.minor);
        parts
            .server
            .set_in_cluster(origin == client::Origin::InCluster);
        tracing::info!(
            kubernetes = %format!("1.{}", release.minor),
            ratcheting = release.ratchets(),
            "judging CRDs and updates by the API server's release"
        );
        let gate_writes = crate::cluster::write_budget::Writes::new(
            parts.budget.clone(),
            crate::cluster::write_budget::Priority::WebhookConfiguration,
        );
        let controller = LeadershipTerm::start(parts);
        let webhook_config = tokio::spawn(crate::gate::webhook_config::keep(
            client.clone(),
            opts.config.clone(),
            opts.names.clone(),
            opts.namespace.clone(),
            gate_cert
                .clone()
                .unwrap_or_else(crate::gate::tls::ServingCert::new),
            release.minor,
            gate_writes,
        ));
        let lost = async {
            if elect {
                keep_leading(&mut elector).await
            } else {
                std::future::pending::<()>().await
            }
        };
        tokio::select! {
            _ = lost => {
                webhook_config.abort();
                // The write in flight and the queued Events finish before a standby can take
                // the Lease (it waits a whole lease duration from the last renewal).
                controller.stop(leader::LEASE_DURATION - leader::RENEW_DEADLINE - leader::RETRY).await;
                stand_down(&metrics);
                tracing::error!("could not renew the Lease in time; stopped acting as leader and standing by");
            }
            _ = &mut shutdown => {
                webhook_config.abort();
                controller.stop(SHUTDOWN_GRACE).await;
                stand_down(&metrics);
                // A standby leads at once; this replica's gate answers until the writes are
                // done and then drains.
                if elect {
                    elector.release().await;
                }
                tracing::info!("stopping");
                if let Some(gate) = gate {
                    gate.drain(GATE_DRAIN).await;
                }
                return Ok(());
            }
        }
    }
}

/// A replica that stops leading: it reports no CRD (its per-CRD series go, so that a sum over
/// the pods counts each CRD once) and is not ready until it reads the Lease again.
fn stand_down(metrics: &Metrics) {
    metrics.leader.set(0);
    metrics.forget_every_crd();
    metrics.set_ready(false);
}
