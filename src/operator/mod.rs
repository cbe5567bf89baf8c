//! The operator (`crd-audit controller`), on kube-rs and tokio: it watches every CRD and the
//! objects of every audited CRD, keeps a `SchemaAudit` report per CRD, revalidates at once
//! when a schema changes, and tells people through conditions, Events and metrics.
//!
//! Modules: `command` (`crd-audit controller`: its flags), `options` (the resolved
//! options), `logging`, `shutdown` (the signals that stop it), `leader` (the Lease:
//! acquiring, keeping and releasing it), `controller` (CRD watch, registry), `reconcile`
//! (what a CRD event does), `earlier_reports` (what an earlier operator reported, read with
//! one LIST), `state` (the decisions about one CRD, without I/O),
//! `per_key` (CRD events reconciled a few at a time, one at a time per CRD),
//! `objects` (one object audit per CRD), `validators` (the bounded cache of compiled CRDs),
//! `watch_backoff` (the watches' backoff and LIST permits), `report_status` (the status a
//! report should have), `reporter` (the report object, its write, metrics and the Event
//! pump), `report_writer` (kube-runtime's Controller writing the reports), `policy_report` and
//! `policy_reporter` (the wgpolicyk8s.io PolicyReports, with `policyReports: true`),
//! `events`, `metrics`, `write_limit`. The client, configuration, judging and report types
//! are shared with the one-shot commands (`crate::cluster`, `crate::audit`). This module
//! holds the entry point, [`run`]. The engine is synchronous:
//! validation runs on blocking threads, never on the async executor.

pub mod command;
pub mod controller;
pub mod earlier_reports;
pub mod events;
#[cfg(test)]
mod fake_api;
pub mod leader;
mod logging;
pub mod metrics;
pub mod objects;
mod options;
pub mod per_key;
pub mod policy_report;
pub mod policy_reporter;
pub mod reconcile;
pub mod report_status;
pub mod report_writer;
pub mod reporter;
mod shutdown;
pub mod state;
pub mod validators;
pub mod watch_backoff;
pub mod write_limit;

pub use logging::init_logging;
pub use options::Options;

use crate::cluster::client;
use controller::{Controller, Ctx};
use leader::{Elector, acquire, keep_leading};
use metrics::Metrics;
use shutdown::shutdown_signal;
use std::sync::Arc;

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
        let release = crate::release::of_cluster(&client).await;
        ctx.release_minor
            .store(release.minor, std::sync::atomic::Ordering::Relaxed);
        tracing::info!(
            kubernetes = %format!("1.{}", release.minor),
            ratcheting = release.ratchets(),
            "judging CRDs and updates by the API server's release"
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
