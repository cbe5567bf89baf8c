//! The controller of one leadership term: the CRD watch, one object audit per audited CRD
//! (`objects`), the report writer (`report_writer`) and the Event pump (`reporter`), all
//! sharing one `Ctx` (`context`).

use super::context::Ctx;
use super::per_key::PerKey;
use super::reconcile::{reconcile, remove};
use super::tracked::Tracked;
use crate::cluster::resources::{crd_resource, object_value};
use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::runtime::watcher;
use kube::runtime::watcher::Event;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::task::JoinHandle;

/// CRDs a page of the CRD watch's LIST: the watcher holds a whole page, decoded, while its
/// CRDs are reconciled, and a generated CRD is up to 1.7 MB of JSON (six times that
/// decoded).
const CRD_PAGE: u32 = 20;

/// The name of the report CRD (`schemaaudits.crd-audit.dev`).
static REPORT_CRD: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    <crate::audit::schema_audit::SchemaAudit as kube::CustomResourceExt>::crd_name().to_string()
});

/// CRD events reconciled at once (each checks its CRD on a blocking thread).
const CONCURRENT_RECONCILES: usize = 2;

/// The running controller: [`Controller::stop`] stops it gracefully; its tasks are aborted
/// when it is dropped.
pub struct Controller {
    ctx: Arc<Ctx>,
    /// The CRD watch and the PolicyReport writer: stopped at once.
    tasks: Vec<JoinHandle<()>>,
    /// The report writer and the Event pump: given the grace period to finish.
    finishing: Vec<JoinHandle<()>>,
}

impl Controller {
    pub fn start(ctx: Arc<Ctx>) -> Controller {
        let mut tasks = vec![tokio::spawn(watch_crds(ctx.clone()))];
        if ctx.config.policy_reports {
            tasks.push(tokio::spawn(super::policy_reporter::write_policy_reports(
                ctx.clone(),
            )));
        }
        let finishing = vec![
            tokio::spawn(super::report_writer::run(ctx.clone())),
            tokio::spawn(super::reporter::pump_events(ctx.clone())),
        ];
        Controller {
            ctx,
            tasks,
            finishing,
        }
    }

    /// Stops the controller (shutdown, or the Lease lost): no new work starts, the report
    /// writes in flight complete and the queued Events are written, within `grace`; what is
    /// left then is abandoned.
    pub async fn stop(mut self, grace: std::time::Duration) {
        for t in self.tasks.drain(..) {
            t.abort();
        }
        // The object audits stop too: they would queue more Events while the queue is flushed.
        // (A write in flight has its report built already.)
        self.stop_object_audits();
        self.ctx.stopping.send_replace(true);
        let finishing = futures::future::join_all(self.finishing.iter_mut());
        if tokio::time::timeout(grace, finishing).await.is_err() {
            let left = self
                .ctx
                .queued_events
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .len();
            tracing::warn!(
                grace = ?grace,
                events_not_written = left,
                "stopping: the report writes and Events did not finish within the grace period"
            );
        }
    }
}

impl Controller {
    /// Forgets every tracked CRD, which aborts its object audit (each lowers the watch gauge
    /// itself when its task is dropped). Outside the registry lock.
    fn stop_object_audits(&self) {
        let drained: Vec<Tracked> = std::mem::take(&mut *self.ctx.registry())
            .into_values()
            .collect();
        drop(drained);
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        for t in self.tasks.iter().chain(&self.finishing) {
            t.abort();
        }
        self.stop_object_audits();
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
        let stream = super::watch_backoff::with_backoff(
            watcher(api.clone(), config).boxed(),
            super::watch_backoff::SHORT,
        )
        .boxed();
        (stream, streaming)
    };
    let (mut stream, mut streaming) = start(&ctx);
    let mut listed: Option<BTreeSet<String>> = None;
    let mut jobs = PerKey::new(CONCURRENT_RECONCILES);
    // The watch failed since it last made progress (an outage, as far as it can tell).
    let mut failing = false;
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
        if ev
            .as_ref()
            .is_err_and(|e| !super::watch_backoff::is_gone(e))
        {
            // A 410 Gone is an expired watch (a relist follows), not an outage.
            failing = true;
        } else if failing && matches!(ev, Ok(Event::InitDone | Event::Apply(_) | Event::Delete(_)))
        {
            failing = false;
            tracing::info!("the CRD watch works again");
            ctx.api_recovered();
        }
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
                if !listed.contains(REPORT_CRD.as_str()) {
                    ctx.reports_served(false);
                }
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
                if obj.metadata.name.as_deref() == Some(REPORT_CRD.as_str()) {
                    ctx.reports_served(false);
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::events::PendingEvent;
    use crate::operator::fake_api::{self, context};
    use k8s_openapi::api::core::v1::ObjectReference;
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

    /// Things with one object, a (medium), audited at generation 1 (sizes small and
    /// medium): valid.
    async fn audited_thing_a() -> (Arc<Ctx>, fake_api::Shared) {
        let (client, fake) = fake_api::start();
        fake.lock()
            .unwrap()
            .objects
            .insert("things".into(), vec![thing("a", "medium")]);
        let ctx = context(client);
        reconcile(&ctx, crd("u1", 1, &["small", "medium"])).await;
        until("the first audit", || audited(&ctx, "u1")).await;
        (ctx, fake)
    }

    /// A CRD deleted and recreated under the same name (same generation, another UID, as
    /// after a relist that missed the deletion) is judged with its new schema.
    #[tokio::test(start_paused = true)]
    async fn a_recreated_crd_is_judged_with_its_new_schema() {
        let (ctx, _fake) = audited_thing_a().await;
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
        audited_gadgets_and_things_on_the_fake().await.0
    }

    /// [`audited_gadgets_and_things`], and the fake API they are on.
    async fn audited_gadgets_and_things_on_the_fake() -> (Arc<Ctx>, fake_api::Shared) {
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
        (ctx, fake)
    }

    /// The report CRD as the server serves it: established, and being deleted or not.
    fn report_crd(deleting: bool) -> Value {
        let mut crd: Value =
            serde_json::from_str(&crate::audit::schema_audit::crd_manifest()).unwrap();
        crd["metadata"]["uid"] = json!("report-crd");
        crd["status"] = json!({"conditions": [{"type": "Established", "status": "True"}],
            "storedVersions": ["v1alpha1"]});
        if deleting {
            crd["metadata"]["deletionTimestamp"] = json!("2026-11-28T00:00:00Z");
        }
        crd
    }

    /// A stop (shutdown, a lost Lease) writes the queued Events before it ends, in order,
    /// and leaves nothing running.
    #[tokio::test(start_paused = true)]
    async fn a_stop_flushes_the_queued_events() {
        let (ctx, fake) = audited_gadgets_and_things_on_the_fake().await;
        for i in 0..3 {
            ctx.queue_event(PendingEvent {
                warning: true,
                reason: format!("Test{i}"),
                note: "n".into(),
                regarding: ObjectReference {
                    name: Some("things.example.com".into()),
                    ..Default::default()
                },
            });
        }
        let controller = Controller::start(ctx.clone());
        controller.stop(Duration::from_secs(20)).await;
        let reasons: Vec<Value> = fake
            .lock()
            .unwrap()
            .events
            .iter()
            .map(|e| e["reason"].clone())
            .filter(|r| r.as_str().is_some_and(|r| r.starts_with("Test")))
            .collect();
        assert_eq!(reasons, [json!("Test0"), json!("Test1"), json!("Test2")]);
        assert!(ctx.queued_events.lock().unwrap().is_empty());
        assert!(ctx.registry().is_empty(), "the object audits are stopped");
    }

    /// While the report CRD is being deleted nothing is written: its finalizer removes the
    /// reports, and each report written back would hold the deletion up. When it is served
    /// again, every report is written again within 10 s.
    #[tokio::test(start_paused = true)]
    async fn nothing_is_written_while_the_report_crd_is_deleted() {
        let (ctx, fake) = audited_gadgets_and_things_on_the_fake().await;
        let writer = tokio::spawn(super::super::report_writer::run(ctx.clone()));
        until("both reports", || fake.lock().unwrap().reports.len() == 2).await;
        reconcile(&ctx, report_crd(true)).await;
        // The finalizer deletes the reports; the report watch marks them unwritten.
        fake.lock().unwrap().reports.clear();
        for t in ctx.registry().values_mut() {
            t.written = None;
        }
        ctx.changed.notify_one();
        let writes = fake.lock().unwrap().report_writes;
        tokio::time::sleep(Duration::from_secs(30)).await;
        {
            let f = fake.lock().unwrap();
            assert_eq!(
                f.report_writes, writes,
                "reports written while the CRD goes"
            );
            assert!(f.reports.is_empty());
        }
        reconcile(&ctx, report_crd(false)).await;
        until("every report written again within 10 s", || {
            fake.lock().unwrap().reports.len() == 2
        })
        .await;
        writer.abort();
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
        let (ctx, _fake) = audited_thing_a().await;
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
                    .is_some_and(|b| {
                        b.reason() == "InternalError" && b.message().ends_with("boom in the audit")
                    })
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

    /// Things a (medium) and b (small) audited at generation 1; then the server fails every
    /// report write and Event while the report writer and the Event pump run, and
    /// generation 2 tightens the schema (its audit complete).
    async fn tightened_while_writes_fail() -> (Arc<Ctx>, fake_api::Shared, [JoinHandle<()>; 2]) {
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
        (ctx, fake, [writer, pump])
    }

    /// The server takes report writes and Events again.
    fn writes_work_again(fake: &fake_api::Shared) {
        let mut f = fake.lock().unwrap();
        f.fail_writes = false;
        f.fail_events = false;
    }

    /// The fake holds the report of generation 2 with SchemaTightened True, and its Event.
    fn tightened_and_evented(fake: &fake_api::Shared) -> bool {
        let f = fake.lock().unwrap();
        let tightened = f.reports.get("things.example.com").is_some_and(|r| {
            r["status"]["observedGeneration"] == 2
                && r["status"]["conditions"].as_array().is_some_and(|c| {
                    c.iter()
                        .any(|c| c["type"] == "SchemaTightened" && c["status"] == "True")
                })
        });
        tightened && f.events.iter().any(|e| e["reason"] == "SchemaTightened")
    }

    /// Report writes that fail are retried with backoff, not every second; the Event of a
    /// tightening waits until it can be written; once the server takes writes again, the
    /// report and exactly one Event arrive.
    #[tokio::test(start_paused = true)]
    async fn failed_writes_back_off_and_lose_no_event() {
        let (_ctx, fake, [writer, pump]) = tightened_while_writes_fail().await;
        tokio::time::sleep(Duration::from_secs(60)).await;
        let tries = fake.lock().unwrap().report_writes;
        // Backoff 1 s, 2 s, 4 s, ... (the error policy requeues): six tries in a minute, not 30.
        assert!(
            (4..=7).contains(&tries),
            "{tries} write attempts in a minute"
        );
        assert!(fake.lock().unwrap().events.is_empty());
        writes_work_again(&fake);
        until("the report and the event", || tightened_and_evented(&fake)).await;
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

    /// A loosening (generation 3) and the tightening again (generation 4), both made while
    /// the operator could not see them, arrive as one new generation with the schemas it
    /// reported: the report still says SchemaTightened, with the change that tightened.
    #[tokio::test(start_paused = true)]
    async fn missed_revisions_never_clear_a_tightening() {
        let (ctx, _fake) = audited_thing_a().await;
        reconcile(&ctx, crd("u1", 2, &["small"])).await;
        let generation = |g: i64| {
            let ctx = ctx.clone();
            move || {
                ctx.registry()
                    .get("things.example.com")
                    .is_some_and(|t| t.audited && t.crd().generation == g)
            }
        };
        until("the audit of generation 2", generation(2)).await;
        let tightened = |ctx: &Ctx| {
            let status = super::super::reporter::desired_for_tests(ctx, "things.example.com");
            let c = status
                .conditions
                .iter()
                .find(|c| c.type_ == "SchemaTightened")
                .map(|c| (c.status.clone(), c.message.clone()));
            (c, status.last_schema_change.map(|c| c.to_generation))
        };
        let before = tightened(&ctx);
        assert_eq!(before.0.as_ref().unwrap().0, "True", "{before:?}");
        reconcile(&ctx, crd("u1", 4, &["small"])).await;
        until("the audit of generation 4", generation(4)).await;
        assert_eq!(tightened(&ctx), before);
        assert_eq!(
            ctx.registry()["things.example.com"].audit.invalid_count(),
            1
        );
    }

    /// After a long outage the report writes and the Events have backed off to a minute;
    /// when the API server is back (the CRD watch makes progress again) they go at once: the
    /// tightening is in its report and its Event within 10 s, whatever the phase of their
    /// backoff.
    #[tokio::test(start_paused = true)]
    async fn after_an_outage_what_backed_off_is_written_at_once() {
        let (ctx, fake, [writer, pump]) = tightened_while_writes_fail().await;
        // 200 s of outage: both backoffs reach their minute, and neither retries in the
        // 10 s after it (the writes at 183 s and 243 s, the Events at 183.5 s and 243.5 s).
        tokio::time::sleep(Duration::from_secs(200)).await;
        writes_work_again(&fake);
        ctx.api_recovered();
        until("the report and the event within 10 s", || {
            tightened_and_evented(&fake)
        })
        .await;
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
