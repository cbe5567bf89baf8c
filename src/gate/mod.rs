//! The CRD change gate: a validating admission webhook that tells whoever changes a CRD which
//! stored objects the new schema strands, before they are stranded (configuration key
//! `gate`: `warn` or `deny`). Every replica of `crd-audit controller` serves it, so that it
//! stays up while a standby waits for the Lease; the leader keeps its
//! `ValidatingWebhookConfiguration`.
//!
//! Modules: `judgement` (what a change needs and the answer's texts, without I/O), `review`
//! (one AdmissionReview: reading and judging the stored objects within the budget),
//! `tls` (the serving certificate: files or a self-managed Secret), `webhook_config` (the
//! configuration the leader keeps). This module serves `POST /validate-crd` over TLS.

pub mod judgement;
pub mod review;
pub mod tls;
pub mod webhook_config;

use crate::audit::config::Config;
use crate::audit::instance_names::InstanceNames;
use axum::body::Bytes;
use axum::http::{StatusCode, header};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use std::sync::Arc;
use std::time::Duration;
use tls::ServingCert;

/// The largest review body read: two CRDs of the largest size etcd stores, and room.
const MAX_BODY: usize = 8 << 20;

/// How often the certificate files of `gateCertDir` are read again.
const RELOAD: Duration = Duration::from_secs(60);
/// The longest wait between two checks of the self-managed Secret when no other replica
/// changes it: a deleted Secret is made again within this time (not at once: the chart's
/// uninstall hook deletes it while the replicas still run), a clock moved is noticed.
const RENEW_CHECK: Duration = Duration::from_secs(3600);

/// The gate's metrics (registered by the operator with the others).
#[derive(Clone, Debug)]
pub struct GateMetrics {
    /// Answers by verdict (`allowed`, `warned`, `denied`, `timeout`, `error`).
    pub requests: Family<VerdictLabels, Counter>,
    /// Time from a request to its answer.
    pub duration: Histogram,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct VerdictLabels {
    pub verdict: String,
}

impl Default for GateMetrics {
    fn default() -> Self {
        GateMetrics {
            requests: Family::default(),
            duration: Histogram::new(exponential_buckets(0.001, 3.0, 10)),
        }
    }
}

/// Why the gate could not start, or a review could not be judged (the review is then allowed:
/// `failurePolicy` has the API server's own validation answer it).
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    #[error("listening on {addr} (--webhook-addr): {source}")]
    Listen {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("gateCertDir: {0}")]
    CertDir(#[source] tls::TlsError),
    #[error("{which}: {source}")]
    UnreadableCrd {
        which: &'static str,
        #[source]
        source: crd_audit_engine::CrdError,
    },
    #[error("{crd}: {source}")]
    Compile {
        crd: String,
        #[source]
        source: crd_audit_engine::CompileError,
    },
    #[error("listing: {}", crate::cluster::client::describe(.0))]
    List(#[source] kube::Error),
    #[error("internal error while judging: {0}")]
    Judging(#[source] crate::judging_pool::Panicked),
    #[error("not an AdmissionReview: {0}")]
    NotAReview(#[source] serde_json::Error),
    #[error("{0}")]
    NoRequest(#[source] kube::core::admission::ConvertAdmissionReviewError),
    #[error("the object under review could not be read: {0}")]
    Unreadable(#[source] serde_json::Error),
    #[error("the API server's /version did not answer in time")]
    VersionTimeout,
}

/// A gate being served: its certificate, and the tasks that serve it and keep the
/// certificate current. Dropping it stops them all (and the connections being served).
pub struct ServingGate {
    cert: Arc<ServingCert>,
    tasks: tokio::task::JoinSet<()>,
    /// Set while the gate drains: every answer closes its connection.
    draining: Arc<std::sync::atomic::AtomicBool>,
}

impl ServingGate {
    /// The certificate served, for the leader's webhook configuration.
    pub fn cert(&self) -> Arc<ServingCert> {
        self.cert.clone()
    }

    /// Stops serving: the listener, the connections and the certificate's upkeep end.
    pub async fn stop(mut self) {
        self.tasks.shutdown().await;
    }

    /// Goes on answering for `period`, each answer closing its connection (`Connection:
    /// close`), then stops. A pod being deleted leaves its Service's endpoints while it drains:
    /// the API server's next reviews, on new connections, reach the other replicas, instead
    /// of a listener that is gone (with failurePolicy Ignore, a change let through unjudged).
    pub async fn drain(self, period: Duration) {
        self.draining
            .store(true, std::sync::atomic::Ordering::Relaxed);
        tokio::time::sleep(period).await;
        self.stop().await;
    }
}

/// Starts the gate on `addr`: its certificate (and the task that keeps it current) and its
/// listener; `names` are the instance's (its Service and the Secret of a self-managed
/// certificate); the stored objects are judged in `judging` (the operator's pool).
pub async fn start(
    addr: &str,
    client: kube::Client,
    config: Config,
    names: &InstanceNames,
    namespace: &str,
    metrics: GateMetrics,
    judging: crate::judging_pool::JudgingPool,
) -> Result<ServingGate, GateError> {
    let mut tasks = tokio::task::JoinSet::new();
    let cert = ServingCert::new();
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| GateError::Listen {
            addr: addr.to_string(),
            source,
        })?;
    match &config.gate_cert_dir {
        Some(dir) => {
            let mut last = None;
            tls::load_dir(&cert, dir, &mut last).map_err(GateError::CertDir)?;
            tracing::info!(dir = %dir.display(), "the gate serves its certificate");
            let (cert, dir) = (cert.clone(), dir.clone());
            tasks.spawn(async move {
                loop {
                    tokio::time::sleep(RELOAD).await;
                    if let Err(e) = tls::load_dir(&cert, &dir, &mut last) {
                        tracing::warn!(error = %e, "could not read the gate's certificate again; serving the one read before");
                    }
                }
            });
        }
        None => {
            let hosts = tls::serving_hosts(names.service(), namespace, config.gate_url.as_deref());
            let (cert, client, namespace) = (cert.clone(), client.clone(), namespace.to_string());
            let secret = names.secret();
            tasks.spawn(
                async move { keep_self_managed(cert, client, secret, namespace, hosts).await },
            );
        }
    }
    let gate = Arc::new(review::Gate::new(client, config, metrics, judging));
    let app = axum::Router::new()
        .route(
            webhook_config::PATH,
            axum::routing::post(move |body: Bytes| {
                let gate = gate.clone();
                async move {
                    let (review, _) = gate.review(&body).await;
                    match serde_json::to_vec(&review) {
                        Ok(json) => (
                            StatusCode::OK,
                            [(header::CONTENT_TYPE, "application/json")],
                            json,
                        ),
                        Err(e) => (
                            StatusCode::INTERNAL_SERVER_ERROR,
                            [(header::CONTENT_TYPE, "text/plain")],
                            e.to_string().into_bytes(),
                        ),
                    }
                }
            }),
        )
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY));
    let draining = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let closing = draining.clone();
    let app = app.layer(axum::middleware::map_response(
        move |mut response: axum::response::Response| {
            let closing = closing.load(std::sync::atomic::Ordering::Relaxed);
            async move {
                if closing {
                    response.headers_mut().insert(
                        header::CONNECTION,
                        axum::http::HeaderValue::from_static("close"),
                    );
                }
                response
            }
        },
    ));
    let acceptor = tokio_rustls::TlsAcceptor::from(tls::server_config(cert.clone()));
    tasks.spawn(serve(listener, acceptor, app));
    tracing::info!(
        addr,
        path = webhook_config::PATH,
        "serving the CRD change gate"
    );
    Ok(ServingGate {
        cert,
        tasks,
        draining,
    })
}

/// Accepts TLS connections and serves HTTP/1.1 on each, one task a connection (owned here:
/// they end when this does).
async fn serve(
    listener: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    app: axum::Router,
) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        // Reap the connections that ended.
        while connections.try_join_next().is_some() {}
        let tcp = match listener.accept().await {
            Ok((tcp, _)) => tcp,
            Err(e) => {
                tracing::warn!(error = %e, "the gate could not accept a connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let (acceptor, app) = (acceptor.clone(), app.clone());
        connections.spawn(async move {
            let tls =
                match tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await {
                    Ok(Ok(tls)) => tls,
                    Ok(Err(e)) => {
                        tracing::debug!(error = %e, "a TLS handshake with the gate failed");
                        return;
                    }
                    Err(_) => return,
                };
            let service = hyper_util::service::TowerToHyperService::new(app);
            let served = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                .await;
            if let Err(e) = served {
                tracing::debug!(error = %e, "a gate connection ended with an error");
            }
        });
    }
}

/// Loads the self-managed certificate from its Secret `secret` (creating or renewing it as
/// needed), retrying with backoff until it can; then checks it again when another replica
/// writes another certificate into it (a watch of that one Secret) or its renewal comes (at
/// most `RENEW_CHECK` later), whichever is first.
async fn keep_self_managed(
    cert: Arc<ServingCert>,
    client: kube::Client,
    secret: String,
    namespace: String,
    hosts: Vec<String>,
) {
    use futures::StreamExt;
    use kube::runtime::WatchStreamExt;
    let api: kube::Api<k8s_openapi::api::core::v1::Secret> =
        kube::Api::namespaced(client.clone(), &namespace);
    let changes = kube::runtime::watcher(
        api,
        kube::runtime::watcher::Config::default().fields(&format!("metadata.name={secret}")),
    )
    .default_backoff();
    let mut changes = std::pin::pin!(changes);
    let mut retry = crate::cluster::backoff::API_CALL.backoff().jittered();
    let mut served = false;
    let mut watch_failing = false;
    // The serving certificate last loaded (PEM).
    let mut loaded_cert = String::new();
    loop {
        let wait = match tls::ensure_secret(&client, &secret, &namespace, &hosts).await {
            Ok(made) => {
                let loaded = cert.load(
                    made.cert.as_bytes(),
                    made.key.as_bytes(),
                    made.ca_bundle.as_bytes(),
                );
                match loaded {
                    Ok(()) => {
                        if !served {
                            served = true;
                            tracing::info!(
                                expires = made.not_after,
                                "the gate serves its certificate"
                            );
                        }
                        retry.reset();
                        loaded_cert = made.cert.clone();
                        until_renewal(made.not_after, tls::unix_now())
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "the gate's Secret holds a certificate that cannot be served");
                        retry.next_delay()
                    }
                }
            }
            Err(e) => {
                let wait = retry.next_delay();
                tracing::warn!(error = %e, retry_in = ?wait, "the gate has no certificate yet");
                wait
            }
        };
        let changed = async {
            use kube::runtime::watcher::Event;
            loop {
                match changes.next().await {
                    Some(Ok(Event::Apply(s) | Event::InitApply(s))) => {
                        watch_failing = false;
                        let crt = s.data.as_ref().and_then(|d| d.get("tls.crt"));
                        if crt.is_some_and(|c| c.0 != loaded_cert.as_bytes()) {
                            return;
                        }
                    }
                    Some(Ok(Event::Delete(_))) => {
                        tracing::info!(
                            within = ?RENEW_CHECK,
                            "the gate's Secret was deleted; serving the certificate loaded, and making a new Secret at the next check"
                        );
                    }
                    Some(Ok(_)) => watch_failing = false,
                    Some(Err(e)) => {
                        // Backed off by the stream; the renewal deadline still holds.
                        if !watch_failing {
                            watch_failing = true;
                            tracing::warn!(error = %e, "cannot watch the gate's Secret; checking it when its renewal comes");
                        }
                    }
                    None => std::future::pending::<()>().await,
                }
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = changed => {}
        }
    }
}

/// How long until the serving certificate that expires at `not_after` (Unix seconds) is due
/// for renewal, at `now`: at least a second, at most `RENEW_CHECK`.
fn until_renewal(not_after: u64, now: u64) -> Duration {
    let due = not_after.saturating_sub(tls::RENEW_BEFORE.as_secs());
    Duration::from_secs(due.saturating_sub(now)).clamp(Duration::from_secs(1), RENEW_CHECK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_is_checked_again_when_its_renewal_comes_or_daily() {
        let day = 24 * 3600;
        let renew_before = tls::RENEW_BEFORE.as_secs();
        // A year left: `RENEW_CHECK` at most between checks.
        assert_eq!(until_renewal(1_000 + 365 * day, 1_000), RENEW_CHECK);
        // Due in half an hour: half an hour.
        assert_eq!(
            until_renewal(1_000 + renew_before + 1800, 1_000),
            Duration::from_secs(1800)
        );
        // Due already (or a clock gone back to 1970): a second, never zero.
        for (not_after, now) in [(1_000 + renew_before, 1_000), (0, 1_000), (5, 0)] {
            assert_eq!(until_renewal(not_after, now), Duration::from_secs(1));
        }
        assert_eq!(until_renewal(u64::MAX, 0), RENEW_CHECK);
    }
}
