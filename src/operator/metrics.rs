//! The operator's metrics (prometheus-client) and its HTTP endpoints (axum): `/metrics` in
//! the Prometheus text format, `/healthz` and `/readyz`.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CrdLabels {
    pub crd: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct VersionLabels {
    pub crd: String,
    pub version: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ClassLabels {
    pub crd: String,
    pub class: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct VerbLabels {
    pub verb: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct KindLabels {
    pub kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct BuildLabels {
    pub version: String,
    pub commit: String,
}

fn audit_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.01, 4.0, 10))
}

/// Every metric docs/reference/metrics.md names: the audit's, leadership, API requests, the
/// gate's and build information.
pub struct Metrics {
    registry: Registry,
    pub objects: Family<VersionLabels, Gauge>,
    pub invalid_objects: Family<VersionLabels, Gauge>,
    pub blocked_objects: Family<VersionLabels, Gauge>,
    pub nonstructural_versions: Family<CrdLabels, Gauge>,
    pub schema_changes: Family<ClassLabels, Counter>,
    pub validations: Counter,
    pub validation_duration: Histogram,
    pub audit_duration: Family<CrdLabels, Histogram, fn() -> Histogram>,
    /// When the last complete audit (a full LIST judged) of a CRD's objects ended, in Unix
    /// seconds: what a stale-audit alert looks at.
    pub last_audit: Family<CrdLabels, Gauge<f64, std::sync::atomic::AtomicU64>>,
    pub watches: Gauge,
    pub api_errors: Family<VerbLabels, Counter>,
    pub api_writes: Family<VerbLabels, Counter>,
    /// Reconciles of a CRD that failed (and are retried), by kind of error.
    pub reconcile_errors: Family<KindLabels, Counter>,
    pub leader: Gauge,
    pub internal_errors: Counter,
    /// CRD revisions compiled to judge their objects (a CRD is compiled again when its
    /// validator left the bounded cache).
    pub validator_compilations: Counter,
    /// CRD change gate answers, by verdict (`allowed`, `warned`, `denied`, `timeout`,
    /// `error`).
    pub gate: crate::gate::GateMetrics,
    ready: AtomicBool,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::default();
        let m = Metrics {
            objects: Family::default(),
            invalid_objects: Family::default(),
            blocked_objects: Family::default(),
            nonstructural_versions: Family::default(),
            schema_changes: Family::default(),
            validations: Counter::default(),
            validation_duration: Histogram::new(exponential_buckets(0.000_01, 4.0, 10)),
            audit_duration: Family::new_with_constructor(audit_histogram),
            last_audit: Family::default(),
            watches: Gauge::default(),
            api_errors: Family::default(),
            api_writes: Family::default(),
            reconcile_errors: Family::default(),
            leader: Gauge::default(),
            internal_errors: Counter::default(),
            validator_compilations: Counter::default(),
            gate: crate::gate::GateMetrics::default(),
            ready: AtomicBool::new(false),
            registry: Registry::default(),
        };
        registry.register(
            "crd_audit_objects",
            "Objects stored under a CRD, by version",
            m.objects.clone(),
        );
        registry.register(
            "crd_audit_invalid_objects",
            "Stored objects invalid under their version's schema",
            m.invalid_objects.clone(),
        );
        registry.register(
            "crd_audit_blocked_objects",
            "Invalid stored objects whose unchanged update the API server refuses (stuck)",
            m.blocked_objects.clone(),
        );
        registry.register(
            "crd_audit_nonstructural_versions",
            "Versions of a CRD whose schema is not structural",
            m.nonstructural_versions.clone(),
        );
        registry.register(
            "crd_audit_schema_changes",
            "Schema changes observed, by class",
            m.schema_changes.clone(),
        );
        registry.register(
            "crd_audit_gate_requests",
            "CRD change gate answers, by verdict",
            m.gate.requests.clone(),
        );
        registry.register(
            "crd_audit_gate_duration_seconds",
            "Time the CRD change gate took to answer",
            m.gate.duration.clone(),
        );
        registry.register(
            "crd_audit_last_audit_timestamp_seconds",
            "When the last complete audit of a CRD's objects ended (Unix seconds)",
            m.last_audit.clone(),
        );
        registry.register(
            "crd_audit_validations",
            "Objects judged",
            m.validations.clone(),
        );
        registry.register(
            "crd_audit_validation_duration_seconds",
            "Time to judge one object",
            m.validation_duration.clone(),
        );
        registry.register(
            "crd_audit_audit_duration_seconds",
            "Time of a full audit (LIST and judgement) of a CRD's objects",
            m.audit_duration.clone(),
        );
        registry.register(
            "crd_audit_watches",
            "Object watches running (one per audited CRD)",
            m.watches.clone(),
        );
        registry.register(
            "crd_audit_api_errors",
            "Failed API requests, by verb",
            m.api_errors.clone(),
        );
        registry.register(
            "crd_audit_api_writes",
            "Write requests sent (reports, events, annotations), by verb",
            m.api_writes.clone(),
        );
        registry.register(
            "crd_audit_reconcile_errors",
            "Reconciles of a CRD that failed and are retried, by kind (read_crd, write_report)",
            m.reconcile_errors.clone(),
        );
        registry.register(
            "crd_audit_leader",
            "1 while this replica is the leader",
            m.leader.clone(),
        );
        registry.register(
            "crd_audit_internal_errors",
            "Objects or CRDs whose judgement panicked (reported as InternalError)",
            m.internal_errors.clone(),
        );
        registry.register(
            "crd_audit_validator_compilations",
            "CRD revisions compiled to judge their objects (again when the validator cache dropped them)",
            m.validator_compilations.clone(),
        );
        let build: Family<BuildLabels, Gauge> = Family::default();
        build
            .get_or_create(&BuildLabels {
                version: env!("CARGO_PKG_VERSION").into(),
                commit: env!("CRD_AUDIT_GIT_COMMIT").into(),
            })
            .set(1);
        registry.register("crd_audit_build_info", "Build information", build);
        Metrics { registry, ..m }
    }

    pub fn reconcile_error(&self, kind: &str) {
        self.reconcile_errors
            .get_or_create(&KindLabels { kind: kind.into() })
            .inc();
    }

    pub fn api_error(&self, verb: &str) {
        self.api_errors
            .get_or_create(&VerbLabels { verb: verb.into() })
            .inc();
    }

    pub fn api_write(&self, verb: &str) {
        self.api_writes
            .get_or_create(&VerbLabels { verb: verb.into() })
            .inc();
    }

    /// Drops every series of a CRD that went away.
    pub fn forget_crd(&self, crd: &str, versions: &[String]) {
        for v in versions {
            let l = VersionLabels {
                crd: crd.into(),
                version: v.clone(),
            };
            self.objects.remove(&l);
            self.invalid_objects.remove(&l);
            self.blocked_objects.remove(&l);
        }
        let l = CrdLabels { crd: crd.into() };
        self.nonstructural_versions.remove(&l);
        self.audit_duration.remove(&l);
        self.last_audit.remove(&l);
    }

    /// Drops the series of every CRD: a replica that stops leading reports no CRD, so that a
    /// sum over the pods counts each CRD once (the leader's).
    pub fn forget_every_crd(&self) {
        self.objects.clear();
        self.invalid_objects.clear();
        self.blocked_objects.clear();
        self.nonstructural_versions.clear();
        self.schema_changes.clear();
        self.audit_duration.clear();
        self.last_audit.clear();
    }

    /// Whether `/readyz` answers `ok`: see [`super::run`] for when it does.
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::Relaxed);
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }

    pub fn encode(&self) -> String {
        let mut out = String::new();
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// Serves `/metrics`, `/healthz` and `/readyz` until the process ends.
pub async fn serve(addr: &str, metrics: Arc<Metrics>) -> Result<(), String> {
    use axum::http::{StatusCode, header};
    use axum::routing::get;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("listening on {addr}: {e}"))?;
    let m = metrics.clone();
    let app = axum::Router::new()
        .route(
            "/metrics",
            get(move || {
                let m = m.clone();
                async move {
                    (
                        [(
                            header::CONTENT_TYPE,
                            "application/openmetrics-text; version=1.0.0; charset=utf-8",
                        )],
                        m.encode(),
                    )
                }
            }),
        )
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/readyz",
            get(move || {
                let m = metrics.clone();
                async move {
                    if m.is_ready() {
                        (StatusCode::OK, "ok")
                    } else {
                        (StatusCode::SERVICE_UNAVAILABLE, "not ready")
                    }
                }
            }),
        );
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "the metrics server stopped");
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition_names_match_the_design() {
        let m = Metrics::new();
        m.objects
            .get_or_create(&VersionLabels {
                crd: "a.example.com".into(),
                version: "v1".into(),
            })
            .set(3);
        m.blocked_objects
            .get_or_create(&VersionLabels {
                crd: "a.example.com".into(),
                version: "v1".into(),
            })
            .set(1);
        m.validations.inc();
        m.api_error("list");
        m.watches.set(2);
        let text = m.encode();
        for needle in [
            "crd_audit_objects{crd=\"a.example.com\",version=\"v1\"} 3",
            "crd_audit_blocked_objects{crd=\"a.example.com\",version=\"v1\"} 1",
            "crd_audit_validations_total 1",
            "crd_audit_api_errors_total{verb=\"list\"} 1",
            "crd_audit_watches 2",
            "crd_audit_validation_duration_seconds_bucket",
        ] {
            assert!(text.contains(needle), "{needle} missing in\n{text}");
        }
        // The build-info series names the commit `--version` names (build.rs).
        let commit = format!("commit=\"{}\"", env!("CRD_AUDIT_GIT_COMMIT"));
        let build = text
            .lines()
            .find(|l| l.starts_with("crd_audit_build_info{"))
            .unwrap_or_default();
        assert!(build.contains(&commit), "{build}");
        m.forget_crd("a.example.com", &["v1".into()]);
        assert!(!m.encode().contains("a.example.com"));
    }

    /// A replica that stops leading drops every per-CRD series and keeps its own.
    #[test]
    fn a_replica_that_stops_leading_reports_no_crd() {
        let m = Metrics::new();
        let l = |crd: &str| VersionLabels {
            crd: crd.into(),
            version: "v1".into(),
        };
        for crd in ["a.example.com", "b.example.com"] {
            m.invalid_objects.get_or_create(&l(crd)).set(8);
            m.blocked_objects.get_or_create(&l(crd)).set(8);
            m.objects.get_or_create(&l(crd)).set(8);
            m.nonstructural_versions
                .get_or_create(&CrdLabels { crd: crd.into() })
                .set(1);
            m.schema_changes
                .get_or_create(&ClassLabels {
                    crd: crd.into(),
                    class: "tightening".into(),
                })
                .inc();
            m.audit_duration
                .get_or_create(&CrdLabels { crd: crd.into() })
                .observe(1.0);
        }
        m.validations.inc();
        m.forget_every_crd();
        let text = m.encode();
        assert!(!text.contains("example.com"), "{text}");
        assert!(text.contains("crd_audit_validations_total 1"), "{text}");
    }
}
