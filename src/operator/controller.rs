//! The controller of one leadership term: the CRD watch, one object audit per audited CRD
//! (`objects`), the report writer (`report_writer`) and the Event pump (`reporter`).
//! Everything shares one `Ctx`; the registry lock is only ever held for short
//! in-memory work, never across a network call or a validation.

use super::events::{EventSink, PendingEvent};
use super::metrics::Metrics;
use super::per_key::PerKey;
use super::reconcile::{reconcile, remove};
use super::report_status::{self, LastChange};
use super::report_writer::CrdFeed;
use super::validators::Validators;
use super::write_limit::WriteLimiter;
use crate::audit::config::Config;
use crate::audit::judge::{Audit, Key};
use crate::cluster::resources::{crd_resource, object_value};
use crate::packed_crd::PackedCrd;
use crate::release::KubeVersion;
use crd_audit_engine::CheckReport;
use crd_audit_engine::Crd;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, DynamicObject};
use kube::runtime::watcher;
use kube::runtime::watcher::Event;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinHandle;

/// The most Events waiting to be written (SchemaViolation Events are budgeted per CRD, so
/// this is only reached when the Events API is down for long).
const MAX_QUEUED_EVENTS: usize = 10_000;

/// CRDs a page of the CRD watch's LIST: the watcher holds a whole page, decoded, while its
/// CRDs are reconciled, and a generated CRD is up to 1.7 MB of JSON (six times that
/// decoded).
const CRD_PAGE: u32 = 20;

/// CRD events reconciled at once (each checks its CRD on a blocking thread).
const CONCURRENT_RECONCILES: usize = 2;

/// One audited CRD.
pub struct Tracked {
    /// The whole revision, packed: diffed against the next one, recorded in the report, and
    /// compiled when its objects are judged.
    pub revision: Arc<PackedCrd>,
    pub check: CheckReport,
    /// The size limits the CRD exceeds as a manifest (usually none).
    pub sizes: Vec<crd_audit_engine::size_limits::Finding>,
    /// Identifies the object audit of the current revision; results of older ones are
    /// dropped.
    pub epoch: u64,
    /// The audit of the objects (of the previous revision until the first LIST of this one
    /// completes).
    pub audit: Audit,
    pub audited: bool,
    pub audited_at: Option<Time>,
    pub audit_seconds: Option<f64>,
    /// Why the objects cannot be read or judged (Forbidden, an internal error).
    pub blocked: Option<(String, String)>,
    pub last_change: Option<LastChange>,
    /// Invalid objects before the last schema change, until its audit completes (then the
    /// SchemaTightened Event says how many objects it broke).
    pub tightened_from: Option<BTreeSet<Key>>,
    /// Condition type → (status, lastTransitionTime).
    pub times: BTreeMap<String, (String, Time)>,
    /// The fingerprint of the status last written (without times); `None` when the report
    /// must be written.
    pub written: Option<u64>,
    /// The status whose conditions the last Events were computed from.
    pub evented: Option<report_status::ConditionStatuses>,
    pub task: Option<JoinHandle<()>>,
}

impl Tracked {
    /// The CRD without its schemas ([`PackedCrd::shell`]).
    pub fn crd(&self) -> &Arc<Crd> {
        self.revision.shell()
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

/// What every task of the controller shares.
pub struct Ctx {
    pub client: kube::Client,
    /// Clients for the object watches (many watches share a connection).
    pub watch_clients: Option<Arc<crate::cluster::client::WatchClients>>,
    pub config: Config,
    pub metrics: Arc<Metrics>,
    pub limiter: Arc<WriteLimiter>,
    pub events: EventSink,
    /// Bounds the validations running at once on blocking threads.
    pub judges: Arc<Semaphore>,
    /// The compiled validators kept between judgements (within `validatorCacheMiB`).
    pub validators: Validators,
    pub registry: Mutex<BTreeMap<String, Tracked>>,
    /// The audited CRDs as the report writer's Controller sees them, kept with the registry.
    pub crd_feed: CrdFeed,
    /// The reports an earlier operator wrote, for the CRDs' first reconciles.
    pub earlier_reports: super::earlier_reports::EarlierReports,
    pub queued_events: Mutex<VecDeque<PendingEvent>>,
    pub changed: Notify,
    pub event_queued: Notify,
    /// Wakes the PolicyReport writer (the report writer passes `changed` on to it).
    pub policy_changed: Notify,
    /// The first LIST of CRDs is done: a CRD missing from the registry is gone, not unseen.
    pub crds_listed: AtomicBool,
    /// The API server's release (its minor version), whose CEL environments CRDs are checked
    /// and compiled in and which says whether updates are ratcheted (1.30 and later): set
    /// from its `/version` when the operator starts leading.
    pub release_minor: AtomicU32,
    /// The API server refused a streaming list: every watch lists with pages instead.
    pub streaming_refused: AtomicBool,
    next_epoch: AtomicU64,
}

impl Ctx {
    /// The API server's release.
    pub fn release(&self) -> KubeVersion {
        KubeVersion {
            minor: self
                .release_minor
                .load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// How a watch gets its initial state, and whether it streams: from a server that
    /// offers streaming lists (1.34+, unless it refused one), one object at a time on the
    /// watch itself, so that no LIST response is held whole; elsewhere paginated LISTs of
    /// `page` objects.
    pub fn watch_config(&self, page: u32) -> (watcher::Config, bool) {
        if self.release().streams_lists() && !self.streaming_refused.load(Ordering::Relaxed) {
            (watcher::Config::default().streaming_lists(), true)
        } else {
            (watcher::Config::default().page_size(page), false)
        }
    }

    /// Whether `e` is the server refusing the streaming list of a watch that streams; if
    /// so, every watch falls back to paginated LISTs (the caller starts its watch again).
    pub fn refused_streaming(&self, streaming: bool, e: &watcher::Error) -> bool {
        if !streaming || !super::watch_backoff::refuses_streaming(e) {
            return false;
        }
        if !self.streaming_refused.swap(true, Ordering::Relaxed) {
            tracing::warn!(error = %e, "the API server refused a streaming list (WatchList turned off?); listing with pages");
        }
        true
    }

    /// Whether the API server validates updates with ratcheting.
    pub fn ratcheting(&self) -> bool {
        self.release().ratchets()
    }

    pub fn new(
        client: kube::Client,
        watch_clients: Option<Arc<crate::cluster::client::WatchClients>>,
        config: Config,
        metrics: Arc<Metrics>,
        identity: &str,
    ) -> Arc<Ctx> {
        let limiter = Arc::new(WriteLimiter::new(config.api_qps, config.api_burst));
        let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
        let validators = Validators::new(config.validator_cache_mib.saturating_mul(1 << 20));
        Arc::new(Ctx {
            validators,
            events: EventSink::new(client.clone(), identity, metrics.clone(), limiter.clone()),
            client,
            watch_clients,
            config,
            metrics,
            limiter,
            judges: Arc::new(Semaphore::new(workers)),
            registry: Mutex::new(BTreeMap::new()),
            crd_feed: CrdFeed::default(),
            earlier_reports: Default::default(),
            queued_events: Mutex::new(VecDeque::new()),
            changed: Notify::new(),
            event_queued: Notify::new(),
            policy_changed: Notify::new(),
            crds_listed: AtomicBool::new(false),
            release_minor: AtomicU32::new(KubeVersion::default().minor),
            streaming_refused: AtomicBool::new(false),
            next_epoch: AtomicU64::new(1),
        })
    }

    pub fn registry(&self) -> MutexGuard<'_, BTreeMap<String, Tracked>> {
        self.registry.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues an Event; it is written by the Event pump, retried until the server takes it.
    pub fn queue_event(&self, ev: PendingEvent) {
        if !self.config.emit_events {
            return;
        }
        let mut q = self.queued_events.lock().unwrap_or_else(|e| e.into_inner());
        if q.len() >= MAX_QUEUED_EVENTS {
            tracing::warn!(reason = %ev.reason, "event queue full; event not queued");
            return;
        }
        q.push_back(ev);
        drop(q);
        self.event_queued.notify_one();
    }

    pub(crate) fn epoch(&self) -> u64 {
        self.next_epoch.fetch_add(1, Ordering::Relaxed)
    }

    /// Runs `f` on the tracked CRD `crd` if its current audit is still the one of `epoch`
    /// (the one place that test is made): `None` when the CRD went away or a newer revision
    /// (or a restarted audit) took over, and whatever the caller was doing is stale.
    pub(crate) fn with_current<R>(
        &self,
        crd: &str,
        epoch: u64,
        f: impl FnOnce(&mut Tracked) -> R,
    ) -> Option<R> {
        let mut reg = self.registry();
        reg.get_mut(crd).filter(|t| t.epoch == epoch).map(f)
    }
}

/// The reference of an Event about a CRD.
pub fn crd_reference(crd: &Crd) -> ObjectReference {
    ObjectReference {
        api_version: Some("apiextensions.k8s.io/v1".into()),
        kind: Some("CustomResourceDefinition".into()),
        name: Some(crd.name.clone()),
        uid: Some(crd.uid.clone()).filter(|u| !u.is_empty()),
        ..Default::default()
    }
}

/// The running controller: its tasks stop when it is dropped.
pub struct Controller {
    ctx: Arc<Ctx>,
    tasks: Vec<JoinHandle<()>>,
}

impl Controller {
    pub fn start(ctx: Arc<Ctx>) -> Controller {
        let mut tasks = vec![
            tokio::spawn(watch_crds(ctx.clone())),
            tokio::spawn(super::report_writer::run(ctx.clone())),
            tokio::spawn(super::reporter::pump_events(ctx.clone())),
        ];
        if ctx.config.policy_reports {
            tasks.push(tokio::spawn(super::policy_reporter::write_policy_reports(
                ctx.clone(),
            )));
        }
        Controller { ctx, tasks }
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
        let drained: Vec<Tracked> = std::mem::take(&mut *self.ctx.registry())
            .into_values()
            .collect();
        // Each object audit lowers the watch gauge itself when its task is dropped.
        drop(drained);
    }
}

/// The CRD watch: every CRD is (re)compiled and audited when it appears or changes, and
/// forgotten (its report deleted) when it goes. Its events are reconciled
/// `CONCURRENT_RECONCILES` at a time, one at a time per CRD and in order (`per_key`).
async fn watch_crds(ctx: Arc<Ctx>) {
    let api: Api<DynamicObject> = Api::all_with(ctx.client.clone(), &crd_resource());
    let ar = crd_resource();
    let start = |ctx: &Ctx| {
        let (config, streaming) = ctx.watch_config(CRD_PAGE);
        let stream =
            super::watch_backoff::with_backoff(watcher(api.clone(), config).boxed()).boxed();
        (stream, streaming)
    };
    let (mut stream, mut streaming) = start(&ctx);
    let mut listed: Option<BTreeSet<String>> = None;
    let mut jobs = PerKey::new(CONCURRENT_RECONCILES);
    let reconcile_later = |jobs: &mut PerKey, obj: DynamicObject| {
        let name = obj.metadata.name.clone().unwrap_or_default();
        let (ctx, raw) = (ctx.clone(), object_value(obj, &ar));
        jobs.push(name, Box::pin(async move { reconcile(&ctx, raw).await }));
    };
    loop {
        let ev = tokio::select! {
            failed = jobs.next_done(), if !jobs.is_empty() => {
                if failed {
                    ctx.metrics.internal_errors.inc();
                }
                continue;
            }
            ev = stream.next(), if jobs.has_room() => ev,
        };
        let Some(ev) = ev else {
            break;
        };
        match ev {
            Ok(Event::Init) => listed = Some(BTreeSet::new()),
            Ok(Event::InitApply(obj)) => {
                if let Some(name) = &obj.metadata.name
                    && let Some(l) = listed.as_mut()
                {
                    l.insert(name.clone());
                }
                reconcile_later(&mut jobs, obj);
            }
            Ok(Event::InitDone) => {
                // Every listed CRD is reconciled before concluding which ones went away
                // while the watch was down.
                let failed = jobs.drain().await;
                ctx.metrics.internal_errors.inc_by(failed as u64);
                ctx.earlier_reports.first_crds_done().await;
                let listed = listed.take().unwrap_or_default();
                let gone: Vec<String> = ctx
                    .registry()
                    .keys()
                    .filter(|k| !listed.contains(*k))
                    .cloned()
                    .collect();
                for name in gone {
                    remove(&ctx, &name).await;
                }
                let reg = ctx.registry();
                ctx.crd_feed.listed(reg.values().map(|t| &**t.crd()));
                drop(reg);
                ctx.crds_listed.store(true, Ordering::Relaxed);
                ctx.metrics.set_ready(true);
            }
            Ok(Event::Apply(obj)) => reconcile_later(&mut jobs, obj),
            Ok(Event::Delete(obj)) => {
                if let Some(name) = obj.metadata.name {
                    let ctx = ctx.clone();
                    jobs.push(
                        name.clone(),
                        Box::pin(async move { remove(&ctx, &name).await }),
                    );
                }
            }
            Err(e) if ctx.refused_streaming(streaming, &e) => {
                (stream, streaming) = start(&ctx);
                listed = None;
            }
            Err(e) if super::watch_backoff::is_gone(&e) => {
                tracing::info!("the CRD watch expired; listing the CRDs again");
            }
            Err(e) if super::watch_backoff::asks_to_retry(&e) => {
                ctx.metrics.api_error("watch");
                tracing::info!(error = %e, "the API server asks to retry the CRD watch later; retrying with backoff");
            }
            Err(e) => {
                ctx.metrics.api_error("watch");
                tracing::error!(error = %e, "watching CRDs failed; retrying with backoff");
            }
        }
    }
}

/// Runs CPU-heavy engine work on a blocking thread; a panic becomes `Err(message)`.
pub(crate) async fn blocking<T: Send + 'static>(
    ctx: &Ctx,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let _permit = ctx.judges.acquire().await;
    match tokio::task::spawn_blocking(move || crd_audit_engine::panic_guard::catch(f)).await {
        Ok(r) => r,
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::fake_api::{self, context};
    use serde_json::Value;
    use serde_json::json;
    use std::time::Duration;

    fn crd(uid: &str, generation: i64, sizes: &[&str]) -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com", "uid": uid, "generation": generation},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "things", "kind": "Thing"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                        "type": "object", "properties": {"size": {"type": "string", "enum": sizes}}}}}}}]}})
    }

    fn thing(name: &str, size: &str) -> Value {
        json!({"metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}")},
            "spec": {"size": size}})
    }

    /// Watches stream their initial state from 1.34 on, list with pages before, and fall
    /// back to pages for good when the server refuses a streaming list.
    #[tokio::test(start_paused = true)]
    async fn watches_stream_where_the_server_can_and_fall_back_to_pages() {
        let (client, _api) = fake_api::start();
        let ctx = context(client);
        let refusal = |code: u16| {
            watcher::Error::WatchError(
                kube::core::Status::failure("sendInitialEvents is forbidden", "Invalid")
                    .with_code(code)
                    .boxed(),
            )
        };
        ctx.release_minor.store(20, Ordering::Relaxed);
        assert!(!ctx.watch_config(7).1, "1.20 has no streaming lists");
        ctx.release_minor.store(33, Ordering::Relaxed);
        assert!(!ctx.watch_config(7).1);
        ctx.release_minor.store(34, Ordering::Relaxed);
        assert!(ctx.watch_config(7).1, "1.34 streams");
        // Other errors, or a watch that does not stream, change nothing.
        assert!(!ctx.refused_streaming(true, &refusal(500)));
        assert!(!ctx.refused_streaming(true, &refusal(410)));
        assert!(!ctx.refused_streaming(false, &refusal(422)));
        assert!(ctx.watch_config(7).1);
        assert!(ctx.refused_streaming(true, &refusal(422)));
        assert!(!ctx.watch_config(7).1, "still streaming after a refusal");
        assert!(
            ctx.refused_streaming(true, &refusal(400)),
            "a second watch restarts too"
        );
    }

    async fn until(what: &str, mut f: impl FnMut() -> bool) {
        for _ in 0..400 {
            if f() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("timed out waiting for {what}");
    }

    fn audited(ctx: &Ctx, uid: &str) -> bool {
        ctx.registry()
            .get("things.example.com")
            .is_some_and(|t| t.audited && t.crd().uid == uid)
    }

    /// A CRD too large for client-side `kubectl apply` (measured as a manifest: what the
    /// server adds, managed fields and the old last-applied copy, does not count) has the
    /// finding in its report; a smaller next generation clears it.
    #[tokio::test(start_paused = true)]
    async fn a_crd_too_large_for_client_side_apply_is_reported() {
        let (client, _fake) = fake_api::start();
        let ctx = context(client);
        let mut big = crd("u1", 1, &["small"]);
        big["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"] =
            json!("x".repeat(270_000));
        // Server-filled fields, larger than the limit on their own, are not measured.
        big["metadata"]["managedFields"] =
            json!([{"manager": "m", "fieldsV1": {"f:x": "y".repeat(300_000)}}]);
        big["status"] = json!({"storedVersions": ["v1"], "filler": "z".repeat(300_000)});
        super::super::reconcile::reconcile(&ctx, big).await;
        let status = super::super::reporter::desired_for_tests(&ctx, "things.example.com");
        assert_eq!(status.size_findings.len(), 1, "{:?}", status.size_findings);
        let f = &status.size_findings[0];
        assert_eq!(
            (f.severity.as_str(), f.limit.as_str()),
            ("warning", "lastAppliedAnnotation")
        );
        assert_eq!(f.limit_bytes, 262_144);
        // The last-applied copy is the manifest: the description and a few hundred bytes.
        assert!((270_000..271_000).contains(&f.bytes), "{}", f.bytes);
        assert!(
            f.message.contains("kubectl apply --server-side"),
            "{}",
            f.message
        );

        super::super::reconcile::reconcile(&ctx, crd("u1", 2, &["small"])).await;
        let status = super::super::reporter::desired_for_tests(&ctx, "things.example.com");
        assert!(
            status.size_findings.is_empty(),
            "{:?}",
            status.size_findings
        );
    }

    /// A CRD deleted and recreated under the same name (same generation, another UID, as
    /// after a relist that missed the deletion) is judged with its new schema.
    #[tokio::test(start_paused = true)]
    async fn a_recreated_crd_is_judged_with_its_new_schema() {
        let (client, fake) = fake_api::start();
        fake.lock()
            .unwrap()
            .objects
            .insert("things".into(), vec![thing("a", "medium")]);
        let ctx = context(client);
        reconcile(&ctx, crd("u1", 1, &["small", "medium"])).await;
        until("the first audit", || audited(&ctx, "u1")).await;
        assert_eq!(
            ctx.registry()["things.example.com"].audit.invalid_count(),
            0
        );
        reconcile(&ctx, crd("u2", 1, &["small"])).await;
        until("the audit of the new CRD", || audited(&ctx, "u2")).await;
        let reg = ctx.registry();
        let t = &reg["things.example.com"];
        assert_eq!(t.audit.invalid_count(), 1);
        assert!(
            t.last_change.is_none(),
            "a new CRD is not a change of the old one"
        );
        assert_eq!(t.audit.objects.get("v1"), Some(&1));
    }

    /// Two audited CRDs: gadgets (no objects) and things (one object, invalid).
    async fn audited_gadgets_and_things() -> Arc<Ctx> {
        let (client, fake) = fake_api::start();
        {
            let mut f = fake.lock().unwrap();
            f.objects
                .insert("things".into(), vec![thing("a", "medium")]);
            f.objects.insert("gadgets".into(), vec![]);
        }
        let ctx = context(client);
        let mut gadgets = crd("u9", 1, &["small"]);
        gadgets["metadata"]["name"] = json!("gadgets.example.com");
        gadgets["spec"]["names"] = json!({"plural": "gadgets", "kind": "Gadget"});
        reconcile(&ctx, gadgets).await;
        reconcile(&ctx, crd("u1", 1, &["small"])).await;
        until("both audits", || {
            let reg = ctx.registry();
            reg.len() == 2 && reg.values().all(|t| t.audited)
        })
        .await;
        ctx
    }

    /// A CRD with no objects is never compiled; one with objects is compiled once, and its
    /// validator is kept (within the cache's budget) for the objects' next changes.
    #[tokio::test(start_paused = true)]
    async fn a_crd_is_compiled_only_when_its_objects_are_judged() {
        let ctx = audited_gadgets_and_things().await;
        assert_eq!(
            ctx.registry()["things.example.com"].audit.invalid_count(),
            1
        );
        assert_eq!(ctx.metrics.validator_compilations.get(), 1);
        assert_eq!(ctx.validators.usage().0, 1);
        let reg = ctx.registry();
        assert!(
            ctx.validators
                .get("things.example.com", reg["things.example.com"].epoch)
                .is_some()
        );
        assert!(
            ctx.validators
                .get("gadgets.example.com", reg["gadgets.example.com"].epoch)
                .is_none()
        );
        // What is kept of a revision is its shell and its packed schemas.
        assert!(
            reg.values()
                .all(|t| t.crd().versions.iter().all(|v| v.schema.is_none()))
        );
    }

    /// On a fresh start reports are written in the order that puts findings first: a CRD
    /// with invalid objects before a clean one whose name sorts earlier.
    #[tokio::test(start_paused = true)]
    async fn reports_with_findings_are_written_first() {
        let ctx = audited_gadgets_and_things().await;
        assert_eq!(
            super::super::reporter::write_order(&ctx.registry()),
            ["things.example.com", "gadgets.example.com"]
        );
    }

    /// A panic in an object audit is counted and reported (InstancesValid Unknown,
    /// InternalError), and the audit runs again; a complete audit clears the report.
    #[tokio::test(start_paused = true)]
    async fn a_panicking_audit_is_reported_and_restarted() {
        let (client, fake) = fake_api::start();
        fake.lock()
            .unwrap()
            .objects
            .insert("things".into(), vec![thing("a", "medium")]);
        let ctx = context(client);
        reconcile(&ctx, crd("u1", 1, &["small", "medium"])).await;
        until("the first audit", || audited(&ctx, "u1")).await;
        let (revision, epoch) = {
            let reg = ctx.registry();
            let t = &reg["things.example.com"];
            (t.revision.clone(), t.epoch)
        };
        let runs = std::sync::atomic::AtomicUsize::new(0);
        let c = ctx.clone();
        let name = revision.shell().name.clone();
        let supervised = super::super::objects::supervise(&ctx, &name, epoch, || {
            let n = runs.fetch_add(1, Ordering::Relaxed);
            let (c, revision) = (c.clone(), revision.clone());
            async move {
                if n == 0 {
                    panic!("boom in the audit");
                }
                super::super::objects::audit_objects(c, revision, epoch).await
            }
        });
        let reported = async {
            until("the bug in the report", || {
                ctx.registry()["things.example.com"]
                    .blocked
                    .as_ref()
                    .is_some_and(|(r, m)| r == "InternalError" && m.ends_with("boom in the audit"))
            })
            .await;
            let status = super::super::reporter::desired_for_tests(&ctx, "things.example.com");
            let valid = status
                .conditions
                .iter()
                .find(|c| c.type_ == "InstancesValid")
                .unwrap();
            assert_eq!(
                (valid.status.as_str(), valid.reason.as_str()),
                ("Unknown", "InternalError")
            );
            assert_eq!(ctx.metrics.internal_errors.get(), 1);
            until("the restarted audit to clear it", || {
                ctx.registry()["things.example.com"].blocked.is_none()
            })
            .await;
        };
        tokio::select! {
            _ = supervised => panic!("the supervised audit ended"),
            _ = reported => {}
        }
        assert_eq!(runs.load(Ordering::Relaxed), 2);
    }

    /// Report writes that fail are retried with backoff, not every second; the Event of a
    /// tightening waits until it can be written; once the server takes writes again, the
    /// report and exactly one Event arrive.
    #[tokio::test(start_paused = true)]
    async fn failed_writes_back_off_and_lose_no_event() {
        let (client, fake) = fake_api::start();
        fake.lock().unwrap().objects.insert(
            "things".into(),
            vec![thing("a", "medium"), thing("b", "small")],
        );
        let ctx = context(client);
        reconcile(&ctx, crd("u1", 1, &["small", "medium"])).await;
        until("the first audit", || audited(&ctx, "u1")).await;
        {
            let mut f = fake.lock().unwrap();
            f.fail_writes = true;
            f.fail_events = true;
        }
        let writer = tokio::spawn(super::super::report_writer::run(ctx.clone()));
        let pump = tokio::spawn(super::super::reporter::pump_events(ctx.clone()));
        reconcile(&ctx, crd("u1", 2, &["small"])).await;
        until("the audit of generation 2", || {
            ctx.registry()
                .get("things.example.com")
                .is_some_and(|t| t.audited && t.crd().generation == 2)
        })
        .await;
        tokio::time::sleep(Duration::from_secs(60)).await;
        let tries = fake.lock().unwrap().report_writes;
        // Backoff 1 s, 2 s, 4 s, ... (a pass every 2 s): six tries in a minute, not 30.
        assert!(
            (4..=7).contains(&tries),
            "{tries} write attempts in a minute"
        );
        assert!(fake.lock().unwrap().events.is_empty());
        {
            let mut f = fake.lock().unwrap();
            f.fail_writes = false;
            f.fail_events = false;
        }
        until("the report and the event", || {
            let f = fake.lock().unwrap();
            let tightened = f.reports.get("things.example.com").is_some_and(|r| {
                r["status"]["conditions"].as_array().is_some_and(|c| {
                    c.iter()
                        .any(|c| c["type"] == "SchemaTightened" && c["status"] == "True")
                })
            });
            tightened && f.events.iter().any(|e| e["reason"] == "SchemaTightened")
        })
        .await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let f = fake.lock().unwrap();
        let tightened: Vec<&Value> = f
            .events
            .iter()
            .filter(|e| e["reason"] == "SchemaTightened")
            .collect();
        assert_eq!(tightened.len(), 1, "{:?}", f.events);
        assert!(
            tightened[0]["note"]
                .as_str()
                .unwrap()
                .starts_with("1 object(s) newly invalid"),
            "{}",
            tightened[0]
        );
        writer.abort();
        pump.abort();
    }

    /// A restarted operator reads what the report said about the same generation and keeps
    /// reporting the tightening it listed.
    #[tokio::test(start_paused = true)]
    async fn a_restart_keeps_the_reported_tightening() {
        let (client, fake) = fake_api::start();
        fake.lock()
            .unwrap()
            .objects
            .insert("things".into(), vec![thing("a", "medium")]);
        let ctx = context(client.clone());
        reconcile(&ctx, crd("u1", 1, &["small", "medium"])).await;
        until("the first audit", || audited(&ctx, "u1")).await;
        reconcile(&ctx, crd("u1", 2, &["small"])).await;
        let writer = tokio::spawn(super::super::report_writer::run(ctx.clone()));
        until("the tightened report", || {
            fake.lock()
                .unwrap()
                .reports
                .get("things.example.com")
                .is_some_and(|r| {
                    r["status"]["observedGeneration"] == 2
                        && r["status"]["conditions"].as_array().is_some_and(|c| {
                            c.iter()
                                .any(|c| c["type"] == "InstancesValid" && c["status"] == "False")
                        })
                })
        })
        .await;
        writer.abort();
        drop(ctx);
        // A new operator, same generation.
        let ctx = context(client);
        reconcile(&ctx, crd("u1", 2, &["small"])).await;
        until("the restarted audit", || audited(&ctx, "u1")).await;
        let reg = ctx.registry();
        let t = &reg["things.example.com"];
        let change = t
            .last_change
            .as_ref()
            .expect("the tightening is remembered");
        assert!(change.tightened);
        assert_eq!(change.report.from_generation, 1);
    }
}
