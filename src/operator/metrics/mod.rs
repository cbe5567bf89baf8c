//! The operator's metrics (prometheus-client) and its HTTP endpoints (axum): `/metrics` in
//! the Prometheus text format, `/healthz` and `/readyz`.

use crd_audit_engine::Class;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The `finding` labels of `crd_audit_conversion_findings`, in the order of their counts.
const CONVERSION_FINDINGS: [&str; 3] = ["lossy", "invalid", "failed"];

mod labels;
pub use labels::*;

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
    /// The length of a CRD's `status.storedVersions` (1 once migrated).
    pub stored_versions: Family<CrdLabels, Gauge>,
    /// Storage migrations the leader ran (`migrateStoredVersions`), by result: `pruned`,
    /// `blocked` (the server refused objects), `crd_changed` (a new revision meanwhile),
    /// `failed`.
    pub storage_migrations: Family<ResultLabels, Counter>,
    /// Objects the last conversion round trips of a CRD found (`auditConversions`), by
    /// finding: `lossy`, `invalid`, `failed`.
    pub conversion_findings: Family<FindingLabels, Gauge>,
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
    /// Reconciles of a CRD and writes of its report that failed (and are retried), by kind of error.
    pub reconcile_errors: Family<ReconcileErrorLabels, Counter>,
    /// Reconciles of CRDs run by the Controller (whatever woke them).
    pub reconciles: Counter,
    pub leader: Gauge,
    pub internal_errors: Counter,
    /// CRD revisions compiled to judge their objects (a CRD is compiled again when its
    /// validator left the bounded cache).
    pub validator_compilations: Counter,
    /// CRD change gate answers, by verdict (`allowed`, `warned`, `denied`, `timeout`,
    /// `error`).
    pub gate: crate::gate::GateMetrics,
    ready: AtomicBool,
    /// With `perCrdMetrics: false`, the per-CRD series are one cluster-wide series each
    /// (`crd=""`, `version=""`), from these per-CRD values.
    totals: Option<std::sync::Mutex<Totals>>,
}

/// The per-CRD values behind the cluster-wide series (`perCrdMetrics: false`).
#[derive(Debug, Default)]
struct Totals {
    /// (objects, invalid, blocked) per CRD and version.
    versions: std::collections::HashMap<(String, String), [i64; 3]>,
    /// Their sums, kept as they change (a report write costs no pass over every CRD).
    version_sums: [i64; 3],
    nonstructural: std::collections::HashMap<String, i64>,
    nonstructural_sum: i64,
    stored_versions: std::collections::HashMap<String, i64>,
    stored_versions_sum: i64,
    last_audit: std::collections::HashMap<String, f64>,
    /// Conversion round trip findings (lossy, invalid, failed) per CRD, and their sums.
    conversions: std::collections::HashMap<String, [i64; 3]>,
    conversion_sums: [i64; 3],
}

impl Totals {
    fn set_counts(&mut self, key: (String, String), counts: [i64; 3]) {
        let old = self.versions.insert(key, counts).unwrap_or_default();
        for ((s, new), old) in self.version_sums.iter_mut().zip(counts).zip(old) {
            *s += new - old;
        }
    }

    fn set_nonstructural(&mut self, crd: &str, n: i64) {
        let old = self.nonstructural.insert(crd.into(), n).unwrap_or_default();
        self.nonstructural_sum += n - old;
    }

    fn set_stored_versions(&mut self, crd: &str, n: i64) {
        let old = self
            .stored_versions
            .insert(crd.into(), n)
            .unwrap_or_default();
        self.stored_versions_sum += n - old;
    }

    fn set_conversions(&mut self, crd: &str, counts: [i64; 3]) {
        let old = self
            .conversions
            .insert(crd.into(), counts)
            .unwrap_or_default();
        for ((s, new), old) in self.conversion_sums.iter_mut().zip(counts).zip(old) {
            *s += new - old;
        }
    }

    fn forget_conversions(&mut self, crd: &str) {
        self.set_conversions(crd, [0; 3]);
        self.conversions.remove(crd);
    }

    fn forget(&mut self, crd: &str) {
        self.forget_conversions(crd);
        let gone: Vec<(String, String)> = self
            .versions
            .keys()
            .filter(|(c, _)| c == crd)
            .cloned()
            .collect();
        for key in gone {
            self.set_counts(key.clone(), [0; 3]);
            self.versions.remove(&key);
        }
        self.set_nonstructural(crd, 0);
        self.nonstructural.remove(crd);
        self.set_stored_versions(crd, 0);
        self.stored_versions.remove(crd);
        self.last_audit.remove(crd);
    }
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
            stored_versions: Family::default(),
            storage_migrations: Family::default(),
            conversion_findings: Family::default(),
            schema_changes: Family::default(),
            validations: Counter::default(),
            validation_duration: Histogram::new(exponential_buckets(0.000_01, 4.0, 10)),
            audit_duration: Family::new_with_constructor(audit_histogram),
            last_audit: Family::default(),
            watches: Gauge::default(),
            api_errors: Family::default(),
            api_writes: Family::default(),
            reconcile_errors: Family::default(),
            reconciles: Counter::default(),
            leader: Gauge::default(),
            internal_errors: Counter::default(),
            validator_compilations: Counter::default(),
            gate: crate::gate::GateMetrics::default(),
            ready: AtomicBool::new(false),
            registry: Registry::default(),
            totals: None,
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
            "crd_audit_stored_versions",
            "Versions in a CRD's status.storedVersions (more than 1: objects may be stored at an old version)",
            m.stored_versions.clone(),
        );
        registry.register(
            "crd_audit_storage_migrations",
            "Storage version migrations run by the leader (migrateStoredVersions), by result",
            m.storage_migrations.clone(),
        );
        registry.register(
            "crd_audit_conversion_findings",
            "Objects the last conversion round trips of a CRD found (auditConversions), by finding: lossy, invalid, failed",
            m.conversion_findings.clone(),
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
            "Reconciles of a CRD and writes of its report that failed and are retried, by kind (read_crd, write_report) and cause (conflict, throttled, unavailable, forbidden, refused)",
            m.reconcile_errors.clone(),
        );
        registry.register(
            "crd_audit_reconciles",
            "Reconciles of CRDs run by the leader's Controller, whatever woke them",
            m.reconciles.clone(),
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

    /// Metrics whose per-CRD series are kept (`per_crd`, the default) or summed into one
    /// cluster-wide series each (`crd=""`, `version=""`: objects, invalid and blocked objects
    /// and non-structural versions summed, the audit durations in one histogram, the schema
    /// changes in one counter per class, and the oldest of the CRDs' last complete audits).
    pub fn with_per_crd_series(per_crd: bool) -> Metrics {
        let m = Metrics::new();
        Metrics {
            totals: (!per_crd).then(|| std::sync::Mutex::new(Totals::default())),
            ..m
        }
    }

    fn crd_label(&self, crd: &str) -> CrdLabels {
        CrdLabels {
            crd: if self.totals.is_some() {
                String::new()
            } else {
                crd.into()
            },
        }
    }

    fn totals(&self) -> Option<std::sync::MutexGuard<'_, Totals>> {
        self.totals
            .as_ref()
            .map(|t| t.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Publishes a CRD version's counts: stored, invalid and blocked (stuck) objects.
    pub fn set_version_counts(&self, crd: &str, version: &str, counts: [i64; 3]) {
        if let Some(mut t) = self.totals() {
            t.set_counts((crd.into(), version.into()), counts);
            self.publish_version_totals(&t);
            return;
        }
        let l = VersionLabels {
            crd: crd.into(),
            version: version.into(),
        };
        self.objects.get_or_create(&l).set(counts[0]);
        self.invalid_objects.get_or_create(&l).set(counts[1]);
        self.blocked_objects.get_or_create(&l).set(counts[2]);
    }

    fn publish_version_totals(&self, t: &Totals) {
        let sum = t.version_sums;
        let l = VersionLabels {
            crd: String::new(),
            version: String::new(),
        };
        if t.versions.is_empty() {
            self.objects.remove(&l);
            self.invalid_objects.remove(&l);
            self.blocked_objects.remove(&l);
            return;
        }
        self.objects.get_or_create(&l).set(sum[0]);
        self.invalid_objects.get_or_create(&l).set(sum[1]);
        self.blocked_objects.get_or_create(&l).set(sum[2]);
    }

    /// Publishes how many versions of a CRD have a non-structural schema.
    pub fn set_nonstructural_versions(&self, crd: &str, n: i64) {
        if let Some(mut t) = self.totals() {
            t.set_nonstructural(crd, n);
            self.publish_crd_totals(&t);
            return;
        }
        self.nonstructural_versions
            .get_or_create(&self.crd_label(crd))
            .set(n);
    }

    /// Publishes the length of a CRD's `status.storedVersions`.
    pub fn set_stored_versions(&self, crd: &str, n: i64) {
        if let Some(mut t) = self.totals() {
            t.set_stored_versions(crd, n);
            self.publish_crd_totals(&t);
            return;
        }
        self.stored_versions
            .get_or_create(&self.crd_label(crd))
            .set(n);
    }

    /// A storage migration ended with `result`.
    pub fn storage_migration(&self, result: &str) {
        self.storage_migrations
            .get_or_create(&ResultLabels {
                result: result.into(),
            })
            .inc();
    }

    fn publish_crd_totals(&self, t: &Totals) {
        let l = self.crd_label("");
        if t.stored_versions.is_empty() {
            self.stored_versions.remove(&l);
        } else {
            self.stored_versions
                .get_or_create(&l)
                .set(t.stored_versions_sum);
        }
        if t.nonstructural.is_empty() {
            self.nonstructural_versions.remove(&l);
        } else {
            self.nonstructural_versions
                .get_or_create(&l)
                .set(t.nonstructural_sum);
        }
        match t.last_audit.values().copied().reduce(f64::min) {
            Some(oldest) => {
                self.last_audit.get_or_create(&l).set(oldest);
            }
            None => {
                self.last_audit.remove(&l);
            }
        }
    }

    /// A complete audit of a CRD's objects took `seconds` and ended at `unix` (seconds).
    pub fn audit_completed(&self, crd: &str, seconds: f64, unix: f64) {
        self.audit_duration
            .get_or_create(&self.crd_label(crd))
            .observe(seconds);
        if let Some(mut t) = self.totals() {
            t.last_audit.insert(crd.into(), unix);
            self.publish_crd_totals(&t);
            return;
        }
        self.last_audit
            .get_or_create(&self.crd_label(crd))
            .set(unix);
    }

    /// A schema change of a CRD, by class.
    pub fn schema_changed(&self, crd: &str, class: &str) {
        self.schema_changes
            .get_or_create(&ClassLabels {
                crd: self.crd_label(crd).crd,
                class: class.into(),
            })
            .inc();
    }

    pub fn reconcile_error(&self, kind: &str, cause: &str) {
        self.reconcile_errors
            .get_or_create(&ReconcileErrorLabels {
                kind: kind.into(),
                cause: cause.into(),
            })
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

    /// Publishes what the last conversion round trips of a CRD found: objects lossy, invalid
    /// and failed.
    pub fn set_conversion_findings(&self, crd: &str, counts: [u64; 3]) {
        let counts = counts.map(|n| i64::try_from(n).unwrap_or(i64::MAX));
        if let Some(mut t) = self.totals() {
            t.set_conversions(crd, counts);
            self.publish_conversion_totals(&t);
            return;
        }
        for (finding, n) in CONVERSION_FINDINGS.iter().zip(counts) {
            self.conversion_findings
                .get_or_create(&FindingLabels {
                    crd: crd.into(),
                    finding: (*finding).into(),
                })
                .set(n);
        }
    }

    /// Drops the conversion series of a CRD no longer round-tripped.
    pub fn forget_conversion_findings(&self, crd: &str) {
        if let Some(mut t) = self.totals() {
            t.forget_conversions(crd);
            self.publish_conversion_totals(&t);
            return;
        }
        for finding in CONVERSION_FINDINGS {
            self.conversion_findings.remove(&FindingLabels {
                crd: crd.into(),
                finding: finding.into(),
            });
        }
    }

    fn publish_conversion_totals(&self, t: &Totals) {
        for (finding, n) in CONVERSION_FINDINGS.iter().zip(t.conversion_sums) {
            let l = FindingLabels {
                crd: String::new(),
                finding: (*finding).into(),
            };
            if t.conversions.is_empty() {
                self.conversion_findings.remove(&l);
            } else {
                self.conversion_findings.get_or_create(&l).set(n);
            }
        }
    }

    /// Drops every series of a CRD that went away.
    pub fn forget_crd(&self, crd: &str, versions: &[String]) {
        if let Some(mut t) = self.totals() {
            t.forget(crd);
            self.publish_version_totals(&t);
            self.publish_crd_totals(&t);
            self.publish_conversion_totals(&t);
            return;
        }
        self.forget_conversion_findings(crd);
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
        self.stored_versions.remove(&l);
        self.audit_duration.remove(&l);
        self.last_audit.remove(&l);
        for class in [Class::Tightening, Class::Loosening, Class::Neutral] {
            self.schema_changes.remove(&ClassLabels {
                crd: crd.into(),
                class: class.as_str().into(),
            });
        }
    }

    /// Drops the series of every CRD: a replica that stops leading reports no CRD, so that a
    /// sum over the pods counts each CRD once (the leader's).
    pub fn forget_every_crd(&self) {
        if let Some(mut t) = self.totals() {
            *t = Totals::default();
        }
        self.objects.clear();
        self.invalid_objects.clear();
        self.blocked_objects.clear();
        self.nonstructural_versions.clear();
        self.stored_versions.clear();
        self.conversion_findings.clear();
        self.schema_changes.clear();
        self.audit_duration.clear();
        self.last_audit.clear();
    }

    /// Whether `/readyz` answers `ok`: see [`crate::operator::run`] for when it does.
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

/// The metrics endpoint could not listen.
#[derive(Debug, thiserror::Error)]
#[error("listening on {addr}: {source}")]
pub struct ServeError {
    pub addr: String,
    #[source]
    pub source: std::io::Error,
}

/// Serves `/metrics`, `/healthz` and `/readyz` until the process ends.
pub async fn serve(addr: &str, metrics: Arc<Metrics>) -> Result<(), ServeError> {
    use axum::http::{StatusCode, header};
    use axum::routing::get;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError {
            addr: addr.to_string(),
            source,
        })?;
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

    /// `perCrdMetrics: false`: one series per metric, whatever the number of CRDs; sums of
    /// the CRDs' counts, the oldest last audit, kept right as CRDs change and go.
    #[test]
    fn without_per_crd_series_every_crd_counts_in_one_series() {
        let m = Metrics::with_per_crd_series(false);
        m.set_version_counts("a.example.com", "v1", [10, 3, 1]);
        m.set_version_counts("a.example.com", "v2", [5, 0, 0]);
        m.set_version_counts("b.example.com", "v1", [7, 2, 2]);
        m.set_nonstructural_versions("a.example.com", 1);
        m.set_nonstructural_versions("b.example.com", 2);
        m.audit_completed("a.example.com", 0.5, 2000.0);
        m.audit_completed("b.example.com", 1.5, 1000.0);
        m.schema_changed("a.example.com", "tightening");
        m.schema_changed("b.example.com", "tightening");
        let text = m.encode();
        for needle in [
            "crd_audit_objects{crd=\"\",version=\"\"} 22",
            "crd_audit_invalid_objects{crd=\"\",version=\"\"} 5",
            "crd_audit_blocked_objects{crd=\"\",version=\"\"} 3",
            "crd_audit_nonstructural_versions{crd=\"\"} 3",
            "crd_audit_last_audit_timestamp_seconds{crd=\"\"} 1000.0",
            "crd_audit_audit_duration_seconds_count{crd=\"\"} 2",
            "crd_audit_schema_changes_total{crd=\"\",class=\"tightening\"} 2",
        ] {
            assert!(text.contains(needle), "{needle} missing in\n{text}");
        }
        assert!(!text.contains("example.com"), "{text}");
        // A CRD's new counts replace its old ones; a CRD that goes leaves the sums.
        m.set_version_counts("b.example.com", "v1", [7, 0, 0]);
        m.forget_crd("a.example.com", &["v1".into(), "v2".into()]);
        let text = m.encode();
        for needle in [
            "crd_audit_objects{crd=\"\",version=\"\"} 7",
            "crd_audit_invalid_objects{crd=\"\",version=\"\"} 0",
            "crd_audit_nonstructural_versions{crd=\"\"} 2",
            "crd_audit_last_audit_timestamp_seconds{crd=\"\"} 1000.0",
        ] {
            assert!(text.contains(needle), "{needle} missing in\n{text}");
        }
        m.forget_crd("b.example.com", &["v1".into()]);
        let text = m.encode();
        assert!(!text.contains("crd_audit_objects{"), "{text}");
        assert!(
            !text.contains("crd_audit_last_audit_timestamp_seconds{"),
            "{text}"
        );
        // The default keeps a series per CRD.
        let m = Metrics::with_per_crd_series(true);
        m.set_version_counts("a.example.com", "v1", [10, 3, 1]);
        m.audit_completed("a.example.com", 0.5, 2000.0);
        let text = m.encode();
        assert!(
            text.contains("crd_audit_objects{crd=\"a.example.com\",version=\"v1\"} 10"),
            "{text}"
        );
        assert!(
            text.contains("crd_audit_last_audit_timestamp_seconds{crd=\"a.example.com\"} 2000.0"),
            "{text}"
        );
    }

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
        m.schema_changed("a.example.com", "tightening");
        m.schema_changed("a.example.com", "neutral");
        m.set_stored_versions("a.example.com", 2);
        m.storage_migration("pruned");
        let text = m.encode();
        for needle in [
            "crd_audit_stored_versions{crd=\"a.example.com\"} 2",
            "crd_audit_storage_migrations_total{result=\"pruned\"} 1",
            "crd_audit_objects{crd=\"a.example.com\",version=\"v1\"} 3",
            "crd_audit_blocked_objects{crd=\"a.example.com\",version=\"v1\"} 1",
            "crd_audit_validations_total 1",
            "crd_audit_api_errors_total{verb=\"list\"} 1",
            "crd_audit_watches 2",
            "crd_audit_validation_duration_seconds_bucket",
            "crd_audit_schema_changes_total{crd=\"a.example.com\",class=\"tightening\"} 1",
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
        // A CRD that goes leaves no series behind, its schema changes' neither.
        m.forget_crd("a.example.com", &["v1".into()]);
        let text = m.encode();
        assert!(!text.contains("a.example.com"), "{text}");
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
