//! The audit of one CRD's objects: a watch at the storage version (`cluster::object_watch`;
//! its initial state streamed on the watch where the server offers it, else a paginated
//! LIST; then WATCH without bookmarks, resumed from the last resourceVersion after any error,
//! with jittered exponential backoff; a relist only after 410 Gone, a schema change or the
//! periodic full resync). Every object is judged as stored data on a blocking worker and dropped; only
//! counts and the invalid objects' first messages stay.

use crate::audit::config::NamespaceFilter;
use crate::audit::judge::{Audit, Judgement, Key, Target, judge};
use crate::cluster::client::WatchClients;
use crate::cluster::object_watch;
use crate::cluster::resources::{object_resource, object_value};
use crate::cluster::write_budget::Writes;
use crate::judging_pool::JudgingPool;
use crate::operator::audits::tasks::{Ended, Relist};
use crate::operator::audits::validators::{COST_PER_SCHEMA_BYTE, Validators};
use crate::operator::events::{EventQueue, PendingEvent, crd_reference};
use crate::operator::metrics::Metrics;
use crate::operator::server::ServerInfo;
use crate::operator::state::{Blocked, CrdStates, Effect};
use crate::packed_crd::PackedCrd;
use crd_audit_engine::Crd;
use crd_audit_engine::CrdValidator;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use kube::runtime::watcher;
use kube::runtime::watcher::Event;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// Objects of a LIST judged together on a blocking thread.
const BATCH: usize = 128;

/// Objects a page of a LIST: the watcher holds a whole page, decoded, and an object can be
/// up to 1.5 MiB (etcd's limit).
const OBJECT_PAGE: u32 = 100;

/// At most this many SchemaViolation Events per CRD and minute.
const OBJECT_EVENTS_PER_MINUTE: u32 = 10;

/// Why a revision's validator could not be made (a bug of crd-audit, reported in the report).
#[derive(Debug, thiserror::Error)]
enum NotCompiled {
    #[error(transparent)]
    Unpack(#[from] crate::packed_crd::UnpackError),
    #[error(transparent)]
    Compile(crd_audit_engine::CompileError),
    #[error("compiling panicked: {0}")]
    Panicked(#[source] crate::judging_pool::Panicked),
}

/// Decrements the watch gauge when the audit ends (or is aborted).
struct WatchGauge(Arc<Metrics>);

impl Drop for WatchGauge {
    fn drop(&mut self) {
        self.0.watches.dec();
    }
}

/// What the object audits of a leadership term use: the client and the connections their
/// watches share, what to judge and how (`AuditSettings`), the judging pool and the cache of
/// compiled revisions, what the API server offers, the metrics, the Event queue, the
/// annotations' share of the write budget, and the tracked CRDs' states, which they tell what
/// they found. Shared by every audit task behind one `Arc` (2,000 tasks hold a copy each,
/// and each task's future stays small).
#[derive(Clone)]
pub struct AuditHandle(Arc<AuditUses>);

impl AuditHandle {
    pub fn new(uses: AuditUses) -> AuditHandle {
        AuditHandle(Arc::new(uses))
    }
}

impl std::ops::Deref for AuditHandle {
    type Target = AuditUses;

    fn deref(&self) -> &AuditUses {
        &self.0
    }
}

/// What an [`AuditHandle`] holds.
pub struct AuditUses {
    pub client: kube::Client,
    /// Clients for the object watches (many watches share a connection).
    pub watch_clients: Option<Arc<WatchClients>>,
    pub settings: Arc<AuditSettings>,
    pub judging: JudgingPool,
    pub validators: Arc<Validators>,
    pub server: Arc<ServerInfo>,
    pub metrics: Arc<Metrics>,
    pub events: Arc<EventQueue>,
    /// The annotations' writes (`annotateObjects`), last but one in the write budget's line.
    pub annotations: Writes,
    pub states: Arc<CrdStates>,
}

/// What the configuration says of auditing objects.
#[derive(Clone, Debug, Default)]
pub struct AuditSettings {
    /// `excludeNamespaces`.
    pub namespaces: NamespaceFilter,
    /// `redactValues`.
    pub redact_values: bool,
    /// `annotateObjects`.
    pub annotate_objects: bool,
    /// `celEnabled`.
    pub cel_enabled: bool,
}

impl AuditSettings {
    pub fn of(config: &crate::audit::config::Config) -> AuditSettings {
        AuditSettings {
            namespaces: config.namespace_filter(),
            redact_values: config.redact_values,
            annotate_objects: config.annotate_objects,
            cel_enabled: config.cel_enabled,
        }
    }
}

struct ObjectAudit {
    h: AuditHandle,
    /// The client of the watch (a stream on a shared connection).
    client: kube::Client,
    _slot: Option<crate::cluster::client::WatchSlot>,
    /// The revision's shell (names, versions).
    crd: Arc<Crd>,
    /// The revision, compiled on demand (`validator`).
    revision: Arc<PackedCrd>,
    epoch: u64,
    resource: ApiResource,
    budget: (Instant, u32),
    /// Whether the current watch streams its initial state.
    streaming: bool,
    /// Asks for the periodic full resync (the CRD's reconcile, when it is due).
    relist: Relist,
}

/// An event of an object watch.
type WatchEvent = Result<Event<DynamicObject>, watcher::Error>;

/// Runs a CRD's object audit ([`audit_objects`]) under supervision: a panic in it (a bug) is
/// counted (`crd_audit_internal_errors`), logged, and shown in the CRD's report
/// (`InstancesValid` Unknown, reason `InternalError`), and the audit starts again after a
/// pause that doubles up to 5 minutes.
#[tracing::instrument(name = "object_audit", skip_all, fields(crd = %revision.shell().name, generation = revision.shell().generation, epoch))]
pub async fn supervised_audit(
    h: AuditHandle,
    revision: Arc<PackedCrd>,
    epoch: u64,
    relist: Relist,
) -> Ended {
    let name = revision.shell().name.clone();
    let run = {
        let h = h.clone();
        move || audit_objects(h.clone(), revision.clone(), epoch, relist.clone())
    };
    supervise(&h, &name, epoch, run).await
}

/// [`supervised_audit`] for any audit future.
pub async fn supervise<F, Fut>(h: &AuditHandle, crd: &str, epoch: u64, mut run: F) -> Ended
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Ended>,
{
    use futures::FutureExt;
    let mut pauses = crate::cluster::backoff::SLOW.backoff();
    loop {
        let panic = match std::panic::AssertUnwindSafe(run()).catch_unwind().await {
            Ok(ended) => return ended,
            Err(panic) => panic,
        };
        let message = crate::operator::audits::tasks::panic_text(panic);
        h.metrics.internal_errors.inc();
        let pause = pauses.next_delay();
        tracing::error!(crd, error = %message, restart_in = ?pause, "the audit of the objects stopped on a bug; restarting it");
        if !h
            .states
            .audit_blocked(crd, epoch, Blocked::AuditRestarted(message))
        {
            return Ended::Stale;
        }
        tokio::time::sleep(pause).await;
    }
}

/// Audits the objects of the revision `epoch` until it is no longer current; lists them again
/// when `relist` asks (the periodic full resync).
pub async fn audit_objects(
    h: AuditHandle,
    revision: Arc<PackedCrd>,
    epoch: u64,
    relist: Relist,
) -> Ended {
    let crd = revision.shell().clone();
    let Some(storage) = crd.storage_version().map(|v| v.name.clone()) else {
        h.states.no_objects(&crd.name, epoch);
        return Ended::NoObjects;
    };
    h.metrics.watches.inc();
    let _gauge = WatchGauge(h.metrics.clone());
    let resource = object_resource(&crd, &storage);
    let slot = match h.watch_clients.as_ref().map(|w| w.slot()) {
        Some(Ok(slot)) => Some(slot),
        Some(Err(e)) => {
            tracing::error!(crd = %crd.name, error = %e, "no client for the watch; using the main one");
            None
        }
        None => None,
    };
    let client = slot
        .as_ref()
        .map_or_else(|| h.client.clone(), |s| s.client.clone());
    let mut audit = ObjectAudit {
        client,
        _slot: slot,
        h,
        crd,
        revision,
        epoch,
        resource,
        budget: (Instant::now(), 0),
        streaming: false,
        relist,
    };
    audit.run().await
}

/// How long an object watch lasts before the server ends it and it is opened again (when
/// its connection pings the server).
const OBJECT_WATCH_SECONDS: u32 = 1800;

/// How long an object watch lasts otherwise (kube's default).
const DEFAULT_WATCH_SECONDS: u32 = 290;

impl ObjectAudit {
    /// The watch of the objects (streaming its initial state where the server can; then
    /// without bookmarks: `cluster::object_watch`). Its events come boxed: an event with its
    /// object is about 800 bytes, and the audit task (one per CRD, idle at this stream most
    /// of the time) would otherwise be sized for two.
    fn stream(&mut self) -> futures::stream::BoxStream<'static, Box<WatchEvent>> {
        let api: Api<DynamicObject> = Api::all_with(self.client.clone(), &self.resource);
        let streaming = self.h.server.streams_lists();
        // Each watch is opened again when the server ends it; with thousands of CRDs, every
        // 290 s (kube's default) kept a core busy at rest. Keep-alive pings find a dead
        // connection without the watch's own timeout.
        let pings = self.h.watch_clients.as_ref().is_some_and(|w| w.ping());
        let params = object_watch::Params {
            streaming,
            page: OBJECT_PAGE,
            timeout: if pings {
                OBJECT_WATCH_SECONDS
            } else {
                DEFAULT_WATCH_SECONDS
            },
        };
        self.streaming = streaming;
        crate::operator::watch_backoff::with_backoff(
            object_watch::watch(api, params).boxed(),
            crate::operator::watch_backoff::LONG,
        )
        .map(Box::new)
        .boxed()
    }

    async fn run(&mut self) -> Ended {
        let mut stream = self.stream();
        let mut fresh: Option<(Audit, Instant)> = None;
        // Objects of a LIST are judged in batches on one blocking thread each.
        // Empty between batches: thousands of audits wait on watches most of the time.
        let mut batch: Vec<Value> = Vec::new();
        loop {
            let ev = tokio::select! {
                ev = stream.next() => ev,
                _ = self.relist.asked() => {
                    stream = self.stream();
                    continue;
                }
            };
            let Some(ev) = ev else {
                return Ended::WatchEnded;
            };
            match *ev {
                Ok(Event::Init) => {
                    batch.clear();
                    fresh = Some((Audit::default(), Instant::now()));
                }
                Ok(Event::InitApply(obj)) => {
                    if let Some(v) = self.value(obj) {
                        batch.push(v);
                    }
                    if batch.len() >= BATCH
                        && let Some((a, _)) = fresh.as_mut()
                        && !Box::pin(self.judge_batch(&mut batch, a)).await
                    {
                        return Ended::NotCompiled;
                    }
                }
                Ok(Event::InitDone) => {
                    if let Some((mut a, started)) = fresh.take() {
                        if !Box::pin(self.judge_batch(&mut batch, &mut a)).await {
                            return Ended::NotCompiled;
                        }
                        if !Box::pin(self.complete(a, started)).await {
                            return Ended::Stale;
                        }
                    }
                }
                Ok(Event::Apply(obj)) => {
                    if let Some(v) = self.value(obj) {
                        let Some(j) = Box::pin(self.judge(v)).await else {
                            return Ended::NotCompiled;
                        };
                        if !Box::pin(self.observe(j)).await {
                            return Ended::Stale;
                        }
                    }
                }
                Ok(Event::Delete(obj)) => {
                    let key = key_of(&obj);
                    let current = self.h.states.object_deleted(
                        &self.crd.name,
                        self.epoch,
                        &key,
                        &self.resource.version,
                    );
                    if !current {
                        return Ended::Stale;
                    }
                }
                Err(e) if self.h.server.refused_streaming(self.streaming, &e) => {
                    stream = self.stream();
                }
                Err(e) => self.failed(e),
            }
        }
    }

    /// An object to judge, unless its namespace is excluded.
    fn value(&self, obj: DynamicObject) -> Option<Value> {
        let ns = obj.metadata.namespace.as_deref().unwrap_or("");
        if !self.h.settings.namespaces.audits(ns) {
            return None;
        }
        Some(object_value(obj, &self.resource))
    }

    /// The revision's validator: kept in `validators`, or compiled now. `None` when it
    /// cannot be compiled (a bug, reported in the report: the audit stops).
    async fn validator(&self) -> Option<Arc<CrdValidator>> {
        if let Some(v) = self.h.validators.get(&self.crd.name, self.epoch) {
            return Some(v);
        }
        let (revision, cel, release) = (
            self.revision.clone(),
            self.h.settings.cel_enabled,
            self.h.server.release().engine(),
        );
        let compiled = self
            .h
            .judging
            .run(move || {
                let crd = revision.unpack()?;
                CrdValidator::options()
                    .release(release)
                    .cel(cel)
                    .build(&crd)
                    .map(Arc::new)
                    .map_err(NotCompiled::Compile)
            })
            .await
            .map_err(NotCompiled::Panicked)
            .and_then(|r| r);
        match compiled {
            Ok(v) => {
                let cost = self.revision.schema_json_bytes() * COST_PER_SCHEMA_BYTE;
                self.h
                    .validators
                    .insert(&self.crd.name, self.epoch, v.clone(), cost);
                self.h.metrics.validator_compilations.inc();
                Some(v)
            }
            Err(e) => {
                self.h.metrics.internal_errors.inc();
                tracing::error!(crd = %self.crd.name, error = %e, "compiling the CRD failed (internal error)");
                self.h.states.audit_blocked(
                    &self.crd.name,
                    self.epoch,
                    Blocked::NotCompiled(e.to_string()),
                );
                None
            }
        }
    }

    /// Judges the batch (emptying it) and records the judgements; `false` when the CRD
    /// cannot be compiled.
    async fn judge_batch(&self, batch: &mut Vec<Value>, audit: &mut Audit) -> bool {
        if batch.is_empty() {
            return true;
        }
        let Some(v) = self.validator().await else {
            return false;
        };
        let objects = std::mem::take(batch);
        let n = objects.len();
        let redact = self.h.settings.redact_values;
        let started = Instant::now();
        let job = self.h.judging.run(move || {
            objects
                .into_iter()
                .map(|o| judge(&v, o, redact))
                .collect::<Vec<_>>()
        });
        match job.await {
            Ok(judgements) => {
                let each = started.elapsed().as_secs_f64() / n as f64;
                for j in judgements {
                    if j.internal_error {
                        self.h.metrics.internal_errors.inc();
                    }
                    self.h.metrics.validations.inc();
                    self.h.metrics.validation_duration.observe(each);
                    audit.record(j);
                }
            }
            Err(e) => {
                tracing::error!(crd = %self.crd.name, error = %e, "a batch of objects could not be judged");
            }
        }
        true
    }

    /// Judges one watched object; `None` when the CRD cannot be compiled.
    async fn judge(&self, obj: Value) -> Option<Judgement> {
        let v = self.validator().await?;
        let redact = self.h.settings.redact_values;
        let started = Instant::now();
        let key = (
            obj["metadata"]["namespace"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            obj["metadata"]["name"].as_str().unwrap_or("").to_string(),
        );
        let job = self.h.judging.run(move || judge(&v, obj, redact));
        let j = match job.await {
            Ok(j) => j,
            Err(e) => Judgement {
                key,
                uid: String::new(),
                version: self.resource.version.clone(),
                messages: vec![format!(
                    "<nil>: Internal error: crd-audit failed while judging this object: {e}"
                )],
                unknown_fields: false,
                internal_error: true,
                updates_blocked: false,
                refusal: None,
            },
        };
        if j.internal_error {
            self.h.metrics.internal_errors.inc();
        }
        self.h.metrics.validations.inc();
        self.h
            .metrics
            .validation_duration
            .observe(started.elapsed().as_secs_f64());
        Some(j)
    }

    /// The first (or a new) complete LIST: it replaces the audit; objects it finds newly
    /// invalid get their Event and annotation. `false` when this audit is stale.
    async fn complete(&mut self, fresh: Audit, started: Instant) -> bool {
        let secs = started.elapsed().as_secs_f64();
        let now = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::now(),
        );
        let Some(effects) =
            self.h
                .states
                .audit_completed(&self.crd.name, self.epoch, fresh, secs, now)
        else {
            return false;
        };
        let unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        self.h.metrics.audit_completed(&self.crd.name, secs, unix);
        self.carry_out(effects).await;
        true
    }

    /// Carries out what a decision of `state` asks for.
    async fn carry_out(&mut self, effects: Vec<Effect>) {
        for effect in effects {
            match effect {
                Effect::SchemaTightened(note) => self.h.events.push(PendingEvent {
                    warning: true,
                    reason: "SchemaTightened".into(),
                    note,
                    regarding: crd_reference(&self.crd),
                }),
                Effect::Violation { key, text, blocked } => {
                    self.violation_event(&key, &text, blocked)
                }
                Effect::Annotate(key, text) => self.annotate(key, text).await,
            }
        }
    }

    /// A watched change of one object. `false` when this audit is stale.
    async fn observe(&mut self, j: Judgement) -> bool {
        let Some(effects) = self.h.states.object_changed(&self.crd.name, self.epoch, j) else {
            return false;
        };
        self.carry_out(effects).await;
        true
    }

    fn failed(&self, e: watcher::Error) {
        if crate::operator::watch_backoff::is_gone(&e) {
            // The watch's resourceVersion expired (a CRD change, an API server restart): the
            // watcher lists again at once. Nothing failed.
            tracing::info!(crd = %self.crd.name, "watch expired; listing the objects again");
            return;
        }
        let verb = match &e {
            watcher::Error::WatchStartFailed(_)
            | watcher::Error::WatchFailed(_)
            | watcher::Error::WatchError(_) => "watch",
            _ => "list",
        };
        let status = crate::operator::watch_backoff::status_of(&e);
        self.h.metrics.api_error(verb);
        if crate::operator::watch_backoff::asks_to_retry(&e) {
            tracing::info!(crd = %self.crd.name, error = %e, "the API server asks to retry later; retrying with backoff");
            return;
        }
        if status == Some(404) {
            // A new CRD is served a moment after it is created.
            tracing::info!(crd = %self.crd.name, "objects not served yet; retrying");
            return;
        }
        if status == Some(403) {
            self.h.states.audit_blocked(
                &self.crd.name,
                self.epoch,
                Blocked::Forbidden(forbidden_text(&self.crd, &e)),
            );
        }
        tracing::error!(crd = %self.crd.name, error = %e, "reading objects failed; retrying with backoff");
    }

    /// `Warning SchemaViolation` on an object that became invalid, or `Warning UpdatesBlocked`
    /// when the server would refuse every update of it (`blocked`), within the budget.
    fn violation_event(&mut self, key: &Key, text: &str, blocked: bool) {
        if self.budget.0.elapsed() > Duration::from_secs(60) {
            self.budget = (Instant::now(), 0);
        }
        if self.budget.1 >= OBJECT_EVENTS_PER_MINUTE {
            return;
        }
        self.budget.1 += 1;
        let uid = self.h.states.invalid_uid(&self.crd.name, key);
        self.h.events.push(PendingEvent {
            warning: true,
            reason: if blocked {
                "UpdatesBlocked".into()
            } else {
                "SchemaViolation".into()
            },
            note: if blocked {
                format!(
                    "every update of this object is refused, even one that changes nothing: {text}"
                )
            } else {
                text.to_string()
            },
            regarding: ObjectReference {
                api_version: Some(self.resource.api_version.clone()),
                kind: Some(self.resource.kind.clone()),
                name: Some(key.1.clone()),
                namespace: Some(key.0.clone()).filter(|n| !n.is_empty()),
                uid,
                ..Default::default()
            },
        });
    }

    /// With `annotateObjects`, marks an invalid object (or unmarks a valid one) with a
    /// metadata-only server-side apply; a refused write records the object as unwritable
    /// and is not retried.
    async fn annotate(&self, key: Key, text: Option<String>) {
        if !self.h.settings.annotate_objects {
            return;
        }
        let target = Target::new(&self.crd, key.clone(), &self.resource.version);
        let body = target.body(text.as_deref());
        let api: Api<DynamicObject> = if key.0.is_empty() {
            Api::all_with(self.h.client.clone(), &self.resource)
        } else {
            Api::namespaced_with(self.h.client.clone(), &key.0, &self.resource)
        };
        self.h.annotations.turn().await;
        self.h.metrics.api_write("patch");
        let r = api
            .patch(
                &key.1,
                &PatchParams::apply("crd-audit"),
                &Patch::Apply(&body),
            )
            .await;
        let refused = match &r {
            Ok(_) => false,
            Err(e) => {
                self.h.metrics.api_error("patch");
                let code = crate::cluster::client::status_code(e);
                if !matches!(code, Some(400 | 422)) {
                    tracing::error!(crd = %self.crd.name, object = %key.1, error = %e, "annotating the object failed");
                }
                matches!(code, Some(400 | 422))
            }
        };
        self.h.states.annotated(
            &self.crd.name,
            self.epoch,
            &target.version,
            key,
            refused,
            r.is_ok(),
        );
    }
}

/// Why a CRD's objects cannot be read, with the rule that would let the operator read them.
fn forbidden_text(crd: &crd_audit_engine::Crd, e: &impl std::fmt::Display) -> String {
    format!(
        "{}; to audit these objects, grant get, list and watch on them: a ClusterRole labelled \
         rbac.authorization.k8s.io/aggregate-to-view: \"true\" with the rule {{apiGroups: [\"{}\"], \
         resources: [\"{}\"], verbs: [get, list, watch]}} (the chart's rbac.mode aggregate), or \
         {} in the chart's rbac.groups",
        e, crd.group, crd.plural, crd.group
    )
}

fn key_of(obj: &DynamicObject) -> Key {
    (
        obj.metadata.namespace.clone().unwrap_or_default(),
        obj.metadata.name.clone().unwrap_or_default(),
    )
}
#[cfg(test)]
mod tests {
    use super::*;

    /// An object audit runs per CRD for as long as the CRD exists, idle at its watch most of
    /// the time: its task stays small (it was 4.8 KB before the rare steps were boxed; 2,000
    /// CRDs hold 2,000 of them).
    #[tokio::test]
    async fn an_object_audit_task_is_small() {
        let (client, _api) = crate::operator::fake_api::start();
        let h = crate::operator::fake_api::audit_handle(client);
        let crd = Crd::from_value(&serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com", "uid": "u", "generation": 1},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "things", "singular": "thing", "kind": "Thing",
                    "listKind": "ThingList"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object"}}}]}}))
        .unwrap();
        let task = supervised_audit(h, Arc::new(PackedCrd::pack(crd)), 1, Relist::default());
        let size = std::mem::size_of_val(&task);
        assert!(size <= 2048, "an object audit task takes {size} bytes");
    }
}
