//! The in-cluster operator (`crd-audit controller`): watches every CRD and every object of
//! every audited CRD, keeps a `SchemaAudit` report per CRD, revalidates at once when a schema
//! changes, and tells people through conditions, Events and metrics.
//!
//! Threads: the CRD watch (this thread), one list+watch per audited CRD (objects are judged
//! as stored data at the CRD's storage version), one reporter that writes reports (only when
//! they change) and emits Events on transitions, and the metrics/health server.

pub mod audit;
pub mod config;
pub mod kube;
pub mod leader;
pub mod manifests;
pub mod metrics;
pub mod report;

use crate::crd::Crd;
use crate::diff::{Change, Class, diff};
use crate::structural::report::{CheckReport, check_crd};
use crate::validate::CrdValidator;
use audit::{Audit, Target, Transition};
use config::Config;
use kube::{ApiError, Kube};
use metrics::{Metrics, labels};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

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
}

/// The last observed schema change of a CRD.
#[derive(Clone, Debug)]
pub struct SchemaChange {
    pub from: i64,
    pub to: i64,
    pub changes: Vec<Change>,
    pub tightened: bool,
    /// Invalid objects before the change, to tell how many it broke.
    pub invalid_before: usize,
}

/// One audited CRD.
pub struct Tracked {
    pub crd: Crd,
    pub validator: Arc<CrdValidator>,
    pub check: CheckReport,
    pub audit: Arc<Mutex<Audit>>,
    /// Bumped to stop the object watcher of an older generation.
    pub epoch: Arc<AtomicU64>,
    /// Set when the initial LIST of the current generation is complete.
    pub audited: Arc<AtomicBool>,
    pub audit_started: Instant,
    pub audit_seconds: Arc<Mutex<Option<f64>>>,
    pub last_change: Option<SchemaChange>,
    /// The last status written, to write only changes.
    pub written: Option<Value>,
    /// Condition type → (status, lastTransitionTime).
    pub conditions: BTreeMap<String, (String, String)>,
    /// A forbidden LIST (the operator may not read these objects).
    pub forbidden: Arc<Mutex<Option<String>>>,
    pub tightened_event_pending: bool,
}

pub type Registry = Arc<Mutex<BTreeMap<String, Tracked>>>;

/// The handles every worker thread of the controller holds.
#[derive(Clone)]
struct Ctx {
    kube: Kube,
    registry: Registry,
    metrics: Arc<Metrics>,
    stop: Arc<AtomicBool>,
    opts: Options,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs until SIGTERM/SIGINT.
pub fn run(opts: Options) -> Result<(), String> {
    let kube = Kube::from_environment(opts.kubeconfig.as_deref(), opts.context.as_deref(), true)?;
    let kube = kube.with_write_limit(opts.config.api_qps, opts.config.api_burst);
    let stop = Arc::new(AtomicBool::new(false));
    signals::install(stop.clone());
    let metrics = Arc::new(Metrics::default());
    metrics.set(
        "crd_audit_build_info",
        labels(&[("version", env!("CARGO_PKG_VERSION"))]),
        1.0,
    );
    metrics::serve(&opts.metrics_addr, metrics.clone(), stop.clone())?;
    log(
        "info",
        "started",
        &[
            ("metrics", &opts.metrics_addr),
            ("identity", &opts.identity),
        ],
    );
    // Standby until this replica holds the lease; then keep renewing it, and stop working
    // (exit, to be restarted as a standby) if it cannot be renewed in time.
    metrics.ready.store(true, Ordering::Relaxed);
    let elector = leader::Elector::new(kube.clone(), &opts.namespace, &opts.identity);
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        match elector.try_acquire() {
            Ok(true) => break,
            Ok(false) => {}
            Err(e) => log(
                "error",
                "leader election failed",
                &[("error", &e.to_string())],
            ),
        }
        sleep_unless(&stop, Duration::from_secs(2));
    }
    log("info", "became the leader", &[("identity", &opts.identity)]);
    metrics.set("crd_audit_leader", String::new(), 1.0);
    {
        let stop = stop.clone();
        std::thread::Builder::new()
            .name("lease".into())
            .spawn(move || {
                let mut last_renewal = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    sleep_unless(&stop, leader::RENEW_EVERY);
                    match elector.try_acquire() {
                        Ok(true) => last_renewal = Instant::now(),
                        Ok(false) => {
                            log("error", "lost the lease; exiting", &[]);
                            std::process::exit(1);
                        }
                        Err(e) => {
                            log(
                                "error",
                                "renewing the lease failed",
                                &[("error", &e.to_string())],
                            );
                            if last_renewal.elapsed()
                                > Duration::from_secs(leader::LEASE_SECONDS as u64 - 2)
                            {
                                log("error", "the lease expired; exiting", &[]);
                                std::process::exit(1);
                            }
                        }
                    }
                }
            })
            .map_err(|e| e.to_string())?;
    }
    let registry: Registry = Arc::new(Mutex::new(BTreeMap::new()));
    // What the worker threads share.
    let ctx = Ctx {
        kube: kube.clone(),
        registry: registry.clone(),
        metrics: metrics.clone(),
        stop: stop.clone(),
        opts: opts.clone(),
    };
    {
        let Ctx {
            kube,
            registry,
            metrics,
            stop,
            opts,
        } = ctx.clone();
        std::thread::Builder::new()
            .name("reporter".into())
            .spawn(move || report::reporter(&kube, &registry, &metrics, &stop, &opts))
            .map_err(|e| e.to_string())?;
    }
    {
        let Ctx {
            kube,
            registry,
            metrics,
            stop,
            opts,
        } = ctx.clone();
        std::thread::Builder::new()
            .name("crds".into())
            .stack_size(64 << 20)
            .spawn(move || {
                let mut backoff = Duration::from_secs(1);
                while !stop.load(Ordering::Relaxed) {
                    match watch_crds(&kube, &registry, &metrics, &stop, &opts) {
                        Ok(()) => backoff = Duration::from_secs(1),
                        Err(e) => {
                            metrics.add(
                                "crd_audit_api_errors_total",
                                labels(&[("verb", "watch")]),
                                1.0,
                            );
                            log(
                                "error",
                                "CRD watch failed; retrying",
                                &[("error", &e.to_string())],
                            );
                            sleep_unless(&stop, backoff);
                            backoff = (backoff * 2).min(Duration::from_secs(30));
                        }
                    }
                }
            })
            .map_err(|e| e.to_string())?;
    }
    // Watches block in reads; this thread only waits for the signal.
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
    log("info", "stopping", &[]);
    // Stop the object watchers; the reporter writes a last time when it sees the flag.
    for t in lock(&registry).values() {
        t.epoch.fetch_add(1, Ordering::Relaxed);
    }
    std::thread::sleep(Duration::from_millis(300));
    Ok(())
}

fn sleep_unless(stop: &AtomicBool, d: Duration) {
    let end = Instant::now() + d;
    while Instant::now() < end && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A structured JSON log line on stderr.
pub fn log(level: &str, msg: &str, fields: &[(&str, &str)]) {
    let mut m = serde_json::Map::new();
    m.insert("ts".into(), Value::String(report::now_rfc3339()));
    m.insert("level".into(), Value::String(level.into()));
    m.insert("msg".into(), Value::String(msg.into()));
    for (k, v) in fields {
        m.insert((*k).into(), Value::String((*v).into()));
    }
    eprintln!("{}", Value::Object(m));
}

fn watch_crds(
    kube: &Kube,
    registry: &Registry,
    metrics: &Arc<Metrics>,
    stop: &Arc<AtomicBool>,
    opts: &Options,
) -> Result<(), ApiError> {
    let mut seen = Vec::new();
    let rv = kube.list(CRDS, 100, &mut |crd| {
        if let Some(name) = crd["metadata"]["name"].as_str() {
            seen.push(name.to_string());
        }
        reconcile(kube, registry, metrics, stop, opts, &crd);
    })?;
    // CRDs that went away while we were not watching.
    let gone: Vec<String> = lock(registry)
        .keys()
        .filter(|k| !seen.contains(k))
        .cloned()
        .collect();
    for name in gone {
        remove(kube, registry, metrics, &name);
    }
    metrics.ready.store(true, Ordering::Relaxed);
    let mut rv = rv;
    while !stop.load(Ordering::Relaxed) {
        let from = rv.clone();
        let r = kube.watch(CRDS, &from, &mut |ev| {
            if let Some(v) = ev.object["metadata"]["resourceVersion"].as_str() {
                rv = v.to_string();
            }
            match ev.kind.as_str() {
                "ADDED" | "MODIFIED" => reconcile(kube, registry, metrics, stop, opts, &ev.object),
                "DELETED" => {
                    if let Some(name) = ev.object["metadata"]["name"].as_str() {
                        remove(kube, registry, metrics, name);
                    }
                }
                _ => {}
            }
            !stop.load(Ordering::Relaxed)
        });
        match r {
            Ok(()) => {}
            Err(e) if e.is_gone() => return Ok(()), // relist
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn remove(kube: &Kube, registry: &Registry, metrics: &Metrics, name: &str) {
    if let Some(t) = lock(registry).remove(name) {
        t.epoch.fetch_add(1, Ordering::Relaxed);
        let path = report_path(name);
        if let Err(e) = kube.delete(&path)
            && e.status != 404
        {
            log(
                "error",
                "deleting report failed",
                &[("crd", name), ("error", &e.to_string())],
            );
        }
        metrics.remove_matching("crd_audit_objects", &format!("crd=\"{name}\""));
        metrics.remove_matching("crd_audit_invalid_objects", &format!("crd=\"{name}\""));
        metrics.remove_matching(
            "crd_audit_nonstructural_versions",
            &format!("crd=\"{name}\""),
        );
        log("info", "CRD removed; report deleted", &[("crd", name)]);
    }
}

/// The path of a CRD's report.
fn report_path(crd: &str) -> String {
    format!(
        "/apis/{}/{}/{}/{crd}",
        manifests::GROUP,
        manifests::VERSION,
        manifests::PLURAL
    )
}

/// The classified changes from one revision to the next.
fn schema_change(old: &Crd, new: &Crd, metrics: &Metrics, invalid_before: usize) -> SchemaChange {
    let changes = diff(old, new);
    for c in &changes {
        metrics.add(
            "crd_audit_schema_changes_total",
            labels(&[("crd", &new.name), ("class", c.class.as_str())]),
            1.0,
        );
    }
    let tightened = changes.iter().any(|c| {
        c.class == Class::Tightening
            && (c.version.is_empty() || new.version(&c.version).is_none_or(|v| v.served))
    });
    SchemaChange {
        from: old.generation,
        to: new.generation,
        tightened,
        invalid_before,
        changes,
    }
}

/// A CRD appeared or changed: (re)build its validators and audit its objects.
fn reconcile(
    kube: &Kube,
    registry: &Registry,
    metrics: &Arc<Metrics>,
    stop: &Arc<AtomicBool>,
    opts: &Options,
    raw: &Value,
) {
    // Items of a LIST carry no apiVersion/kind.
    let mut raw = raw.clone();
    if let Value::Object(m) = &mut raw {
        m.entry("apiVersion")
            .or_insert_with(|| Value::String("apiextensions.k8s.io/v1".into()));
        m.entry("kind")
            .or_insert_with(|| Value::String("CustomResourceDefinition".into()));
    }
    let crd = match Crd::from_value(&raw) {
        Ok(c) => c,
        Err(e) => {
            log("error", "unreadable CRD", &[("error", &e.to_string())]);
            return;
        }
    };
    if !opts.config.audits_group(&crd.group) {
        return;
    }
    let mut reg = lock(registry);
    let previous = reg.remove(&crd.name);
    if let Some(p) = &previous
        && p.crd.generation == crd.generation
        && p.crd.stored_versions == crd.stored_versions
    {
        reg.insert(crd.name.clone(), previous.unwrap_or_else(|| unreachable!()));
        return;
    }
    let check = check_crd(&crd);
    let mut validator = CrdValidator::new(&crd);
    if !opts.config.cel_enabled {
        validator.disable_cel();
    }
    let validator = Arc::new(validator);
    let (last_change, conditions, written, epoch) = match previous {
        Some(p) => {
            p.epoch.fetch_add(1, Ordering::Relaxed);
            let change = if p.crd.generation != crd.generation {
                let invalid_before = lock(&p.audit).invalid_count();
                Some(schema_change(&p.crd, &crd, metrics, invalid_before))
            } else {
                p.last_change.clone()
            };
            (change, p.conditions, p.written, p.epoch)
        }
        None => {
            // A restarted operator: the report remembers the revision it audited.
            let recorded = kube
                .get(&report_path(&crd.name))
                .ok()
                .and_then(|r| report::recorded_revision(&crd, &r));
            let change = recorded
                .filter(|old| old.generation != crd.generation)
                .map(|old| schema_change(&old, &crd, metrics, 0));
            (change, BTreeMap::new(), None, Arc::new(AtomicU64::new(0)))
        }
    };
    let generation = epoch.fetch_add(1, Ordering::Relaxed) + 1;
    let t = Tracked {
        tightened_event_pending: last_change.as_ref().is_some_and(|c| c.tightened),
        crd: crd.clone(),
        validator: validator.clone(),
        check,
        audit: Arc::new(Mutex::new(Audit::default())),
        epoch: epoch.clone(),
        audited: Arc::new(AtomicBool::new(false)),
        audit_started: Instant::now(),
        audit_seconds: Arc::new(Mutex::new(None)),
        last_change,
        written,
        conditions,
        forbidden: Arc::new(Mutex::new(None)),
    };
    let job = ObjectWatch {
        kube: kube.clone(),
        crd,
        validator,
        audit: t.audit.clone(),
        audited: t.audited.clone(),
        seconds: t.audit_seconds.clone(),
        forbidden: t.forbidden.clone(),
        epoch,
        generation,
        metrics: metrics.clone(),
        stop: stop.clone(),
        redact: opts.config.redact_values,
        annotate: opts.config.annotate_objects,
        exclude_namespaces: opts.config.exclude_namespaces.clone(),
        events: opts.config.emit_events,
        identity: opts.identity.clone(),
        resync: Duration::from_secs(opts.config.full_resync_interval_seconds.max(60)),
        event_budget: Mutex::new((Instant::now(), 0)),
    };
    log(
        "info",
        "auditing CRD",
        &[
            ("crd", &t.crd.name),
            ("generation", &t.crd.generation.to_string()),
        ],
    );
    reg.insert(t.crd.name.clone(), t);
    drop(reg);
    let _ = std::thread::Builder::new()
        .name("objects".into())
        .stack_size(64 << 20)
        .spawn(move || job.run());
}

struct ObjectWatch {
    kube: Kube,
    crd: Crd,
    validator: Arc<CrdValidator>,
    audit: Arc<Mutex<Audit>>,
    audited: Arc<AtomicBool>,
    seconds: Arc<Mutex<Option<f64>>>,
    forbidden: Arc<Mutex<Option<String>>>,
    epoch: Arc<AtomicU64>,
    generation: u64,
    metrics: Arc<Metrics>,
    stop: Arc<AtomicBool>,
    redact: bool,
    annotate: bool,
    exclude_namespaces: Vec<String>,
    events: bool,
    identity: String,
    resync: Duration,
    /// Object events emitted in the current minute (capped).
    event_budget: Mutex<(Instant, u32)>,
}

/// At most this many SchemaViolation Events per CRD and minute.
const OBJECT_EVENTS_PER_MINUTE: u32 = 10;

impl ObjectWatch {
    fn excluded(&self, obj: &Value) -> bool {
        let ns = obj["metadata"]["namespace"].as_str().unwrap_or("");
        self.exclude_namespaces.iter().any(|g| config::glob(g, ns))
    }

    /// With `annotateObjects`, marks an object that became (or stays differently) invalid
    /// and unmarks one that became valid; a refused write records the object as unwritable
    /// (once per transition, never retried in a loop).
    fn annotate(&self, a: &mut Audit, target: &Target, tr: &Transition) {
        if !self.annotate {
            return;
        }
        let body = match tr {
            Transition::BecameInvalid | Transition::ChangedErrors => {
                match a.invalid.get(&target.key) {
                    Some(i) => target.body(Some(&audit::annotation_text(i))),
                    None => return,
                }
            }
            Transition::BecameValid => target.body(None),
            Transition::None => return,
        };
        match self.kube.apply(&target.path, &body, "crd-audit") {
            Ok(_) => {
                if let Some(set) = a.unwritable.get_mut(&target.version) {
                    set.remove(&target.key);
                }
            }
            Err(e) => {
                self.metrics.add(
                    "crd_audit_api_errors_total",
                    labels(&[("verb", "patch")]),
                    1.0,
                );
                if matches!(e.status, 400 | 422) {
                    a.unwritable
                        .entry(target.version.clone())
                        .or_default()
                        .insert(target.key.clone());
                } else {
                    log(
                        "error",
                        "annotating object failed",
                        &[("object", &target.path), ("error", &e.to_string())],
                    );
                }
            }
        }
    }

    /// `Warning SchemaViolation` on an object that became invalid (first error and count),
    /// within the per-minute budget.
    fn violation_event(&self, a: &Audit, target: &Target) {
        if !self.events {
            return;
        }
        {
            let mut b = lock(&self.event_budget);
            if b.0.elapsed() > Duration::from_secs(60) {
                *b = (Instant::now(), 0);
            }
            if b.1 >= OBJECT_EVENTS_PER_MINUTE {
                return;
            }
            b.1 += 1;
        }
        let Some(i) = a.invalid.get(&target.key) else {
            return;
        };
        let regarding = serde_json::json!({"apiVersion": target.api_version, "kind": target.kind,
            "name": target.key.1, "namespace": target.key.0, "uid": i.uid});
        let namespace = if target.key.0.is_empty() {
            report::EVENTS_NAMESPACE
        } else {
            &target.key.0
        };
        report::emit(
            &self.kube,
            &self.identity,
            namespace,
            &regarding,
            "Warning",
            "SchemaViolation",
            &audit::annotation_text(i),
            &self.metrics,
        );
    }

    fn current(&self) -> bool {
        self.epoch.load(Ordering::Relaxed) == self.generation && !self.stop.load(Ordering::Relaxed)
    }

    fn run(self) {
        let Some(storage) = self.crd.storage_version().map(|v| v.name.clone()) else {
            self.audited.store(true, Ordering::Relaxed);
            return;
        };
        let path = audit::objects_path(&self.crd, &storage);
        let mut backoff = Duration::from_secs(1);
        self.metrics.add("crd_audit_watches", String::new(), 0.0);
        while self.current() {
            let started = Instant::now();
            // A full LIST rebuilds the audit from scratch.
            let mut fresh = Audit::default();
            let api_version = format!("{}/{storage}", self.crd.group);
            let listed = self.kube.list(&path, 500, &mut |mut obj| {
                // Items of a LIST carry no apiVersion/kind.
                if let Value::Object(m) = &mut obj {
                    m.entry("apiVersion")
                        .or_insert_with(|| Value::String(api_version.clone()));
                    m.entry("kind")
                        .or_insert_with(|| Value::String(self.crd.kind.clone()));
                }
                if self.excluded(&obj) {
                    return;
                }
                fresh.count(&obj);
                let t = Instant::now();
                let target = Target::of(&self.crd, &obj);
                let tr = fresh.observe(&self.validator, obj, self.redact);
                if let Some(target) = target {
                    self.annotate(&mut fresh, &target, &tr);
                }
                self.metrics.observe(
                    "crd_audit_validation_duration_seconds",
                    String::new(),
                    t.elapsed().as_secs_f64(),
                );
            });
            let rv = match listed {
                Ok(rv) => rv,
                Err(e) if e.status == 404 => {
                    // A new CRD is served a moment after it is created.
                    log(
                        "info",
                        "objects not served yet; retrying",
                        &[("crd", &self.crd.name)],
                    );
                    sleep_unless(&self.stop, backoff);
                    backoff = (backoff * 2).min(Duration::from_secs(60));
                    continue;
                }
                Err(e) => {
                    self.metrics.add(
                        "crd_audit_api_errors_total",
                        labels(&[("verb", "list")]),
                        1.0,
                    );
                    if e.status == 403 {
                        *lock(&self.forbidden) = Some(e.message.clone());
                        self.audited.store(true, Ordering::Relaxed);
                    }
                    log(
                        "error",
                        "listing objects failed",
                        &[("crd", &self.crd.name), ("error", &e.to_string())],
                    );
                    sleep_unless(&self.stop, backoff);
                    backoff = (backoff * 2).min(Duration::from_secs(60));
                    continue;
                }
            };
            backoff = Duration::from_secs(1);
            *lock(&self.forbidden) = None;
            self.metrics.add(
                "crd_audit_validations_total",
                String::new(),
                fresh.validations as f64,
            );
            if !self.current() {
                return;
            }
            *lock(&self.audit) = fresh;
            let secs = started.elapsed().as_secs_f64();
            *lock(&self.seconds) = Some(secs);
            self.metrics.observe(
                "crd_audit_audit_duration_seconds",
                labels(&[("crd", &self.crd.name)]),
                secs,
            );
            self.audited.store(true, Ordering::Relaxed);
            let mut rv = rv;
            let listed_at = Instant::now();
            loop {
                if !self.current() {
                    return;
                }
                if listed_at.elapsed() > self.resync {
                    break; // the periodic full resync
                }
                self.metrics.set("crd_audit_watches", String::new(), 1.0);
                let from = rv.clone();
                let r = self.kube.watch(&path, &from, &mut |ev| {
                    if let Some(v) = ev.object["metadata"]["resourceVersion"].as_str() {
                        rv = v.to_string();
                    }
                    if self.excluded(&ev.object) {
                        return self.current();
                    }
                    let target = Target::of(&self.crd, &ev.object);
                    let mut a = lock(&self.audit);
                    let tr = match ev.kind.as_str() {
                        "ADDED" => {
                            a.count(&ev.object);
                            self.metrics
                                .add("crd_audit_validations_total", String::new(), 1.0);
                            a.observe(&self.validator, ev.object, self.redact)
                        }
                        "MODIFIED" => {
                            self.metrics
                                .add("crd_audit_validations_total", String::new(), 1.0);
                            a.observe(&self.validator, ev.object, self.redact)
                        }
                        "DELETED" => {
                            a.forget(&ev.object);
                            Transition::None
                        }
                        _ => Transition::None,
                    };
                    if let Some(target) = target {
                        self.annotate(&mut a, &target, &tr);
                        if tr == Transition::BecameInvalid {
                            self.violation_event(&a, &target);
                        }
                    }
                    drop(a);
                    self.current()
                });
                match r {
                    Ok(()) => continue,             // the server ended the watch: resume
                    Err(e) if e.is_gone() => break, // relist
                    Err(e) => {
                        self.metrics.add(
                            "crd_audit_api_errors_total",
                            labels(&[("verb", "watch")]),
                            1.0,
                        );
                        log(
                            "error",
                            "watching objects failed",
                            &[("crd", &self.crd.name), ("error", &e.to_string())],
                        );
                        sleep_unless(&self.stop, backoff);
                        backoff = (backoff * 2).min(Duration::from_secs(60));
                        break;
                    }
                }
            }
        }
    }
}

/// SIGTERM/SIGINT set a flag (graceful shutdown).
mod signals {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    static STOP: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();

    extern "C" fn on_signal(_: libc::c_int) {
        if let Some(s) = STOP.get() {
            s.store(true, Ordering::Relaxed);
        }
    }

    pub fn install(flag: Arc<AtomicBool>) {
        let _ = STOP.set(flag);
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
            libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        }
    }
}
