use super::*;
use crate::operator::events::PendingEvent;
use crate::operator::fake_api::{self, term};
use crate::operator::state::Tracked;
use k8s_openapi::api::core::v1::ObjectReference;
use serde_json::Value;
use serde_json::json;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Runs the term's Controller and writer (not its other tasks) on the parts.
pub(crate) fn spawn_run(parts: Parts) -> JoinHandle<()> {
    tokio::spawn(run(
        parts.reconciler,
        parts.triggered,
        parts.writer,
        parts.stopping,
    ))
}

/// Reads the tracked CRD `crd` (it must be tracked).
pub(super) fn tracked<R>(r: &Reconciler, crd: &str, f: impl FnOnce(&Tracked) -> R) -> R {
    r.states.read(crd, f).expect("the CRD is tracked")
}

/// The status the report of `crd` should have now.
pub(super) fn desired(r: &Reconciler, crd: &str) -> crate::audit::schema_audit::SchemaAuditStatus {
    tracked(r, crd, |t| t.desired_status(r.reports.max_listed))
}

pub(super) fn crd(uid: &str, generation: i64, sizes: &[&str]) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com", "uid": uid, "generation": generation},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object", "properties": {"size": {"type": "string", "enum": sizes}}}}}}}]}})
}

pub(super) fn thing(name: &str, size: &str) -> Value {
    json!({"metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}")},
        "spec": {"size": size}})
}

/// Watches stream their initial state from 1.34 on, list with pages before, and fall
/// back to pages for good when the server refuses a streaming list.
#[tokio::test(start_paused = true)]
async fn watches_stream_where_the_server_can_and_fall_back_to_pages() {
    let (client, _api) = fake_api::start();
    let parts = term(client);
    let refusal = |code: u16| {
        watcher::Error::WatchError(
            kube::core::Status::failure("sendInitialEvents is forbidden", "Invalid")
                .with_code(code)
                .boxed(),
        )
    };
    parts.server.set_release(20);
    assert!(
        !parts.server.watch_config(7).1,
        "1.20 has no streaming lists"
    );
    parts.server.set_release(33);
    assert!(!parts.server.watch_config(7).1);
    parts.server.set_release(34);
    assert!(parts.server.watch_config(7).1, "1.34 streams");
    // Other errors, or a watch that does not stream, change nothing.
    assert!(!parts.server.refused_streaming(true, &refusal(500)));
    assert!(!parts.server.refused_streaming(true, &refusal(410)));
    assert!(!parts.server.refused_streaming(false, &refusal(422)));
    assert!(parts.server.watch_config(7).1);
    assert!(parts.server.refused_streaming(true, &refusal(422)));
    assert!(
        !parts.server.watch_config(7).1,
        "still streaming after a refusal"
    );
    assert!(
        parts.server.refused_streaming(true, &refusal(400)),
        "a second watch restarts too"
    );
}

pub(super) async fn until(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..400 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

pub(super) fn audited(ctx: &Reconciler, uid: &str) -> bool {
    ctx.states
        .read("things.example.com", |t| t.audited() && t.crd().uid == uid)
        .unwrap_or(false)
}

/// An object watch asks for bookmarks only while it streams the objects: once it has them
/// (streamed, or listed from a server before 1.34), it watches from their resourceVersion
/// without bookmarks, which the server would send every minute to each of thousands of
/// watches.
#[tokio::test(start_paused = true)]
async fn object_watches_ask_for_no_bookmarks_once_they_have_the_objects() {
    for minor in [20, 34] {
        let (client, fake) = fake_api::start();
        let parts = term(client);
        let ctx = parts.reconciler.clone();
        parts.server.set_release(minor);
        fake.lock()
            .unwrap()
            .objects
            .insert("things".into(), vec![thing("a", "small")]);
        fake_api::apply_crd(&ctx, &fake, crd("u1", 1, &["small"])).await;
        let object_watches = || -> Vec<String> {
            let st = fake.lock().unwrap();
            st.watches
                .iter()
                .filter(|(path, _)| path.ends_with("/things"))
                .map(|(_, query)| query.clone())
                .collect()
        };
        until("the watch that follows the objects", || {
            audited(&ctx, "u1") && object_watches().len() == 1 + usize::from(minor >= 34)
        })
        .await;
        let watches = object_watches();
        if minor >= 34 {
            let first = &watches[0];
            assert!(
                first.contains("sendInitialEvents=true")
                    && first.contains("allowWatchBookmarks=true"),
                "{first}"
            );
        }
        let last = watches.last().unwrap();
        assert!(last.contains("resourceVersion=1"), "1.{minor}: {last}");
        assert!(!last.contains("allowWatchBookmarks"), "1.{minor}: {last}");
        assert!(!last.contains("sendInitialEvents"), "1.{minor}: {last}");
    }
}

/// A CRD too large for client-side `kubectl apply` (measured as a manifest: what the
/// server adds, managed fields and the old last-applied copy, does not count) has the
/// finding in its report; a smaller next generation clears it.
#[tokio::test(start_paused = true)]
async fn a_crd_too_large_for_client_side_apply_is_reported() {
    let (client, fake) = fake_api::start();
    let parts = term(client);
    let ctx = parts.reconciler.clone();
    let mut big = crd("u1", 1, &["small"]);
    big["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"] =
        json!("x".repeat(270_000));
    // Server-filled fields, larger than the limit on their own, are not measured.
    big["metadata"]["managedFields"] =
        json!([{"manager": "m", "fieldsV1": {"f:x": "y".repeat(300_000)}}]);
    big["status"] = json!({"storedVersions": ["v1"], "filler": "z".repeat(300_000)});
    fake_api::apply_crd(&ctx, &fake, big).await;
    let status = desired(&ctx, "things.example.com");
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

    fake_api::apply_crd(&ctx, &fake, crd("u1", 2, &["small"])).await;
    let status = desired(&ctx, "things.example.com");
    assert!(
        status.size_findings.is_empty(),
        "{:?}",
        status.size_findings
    );
}

/// Things with one object, a (medium), audited at generation 1 (sizes small and
/// medium): valid.
async fn audited_thing_a() -> (Arc<Reconciler>, fake_api::Shared) {
    let (client, fake) = fake_api::start();
    fake.lock()
        .unwrap()
        .objects
        .insert("things".into(), vec![thing("a", "medium")]);
    let parts = term(client);
    let ctx = parts.reconciler.clone();
    fake_api::apply_crd(&ctx, &fake, crd("u1", 1, &["small", "medium"])).await;
    until("the first audit", || audited(&ctx, "u1")).await;
    (ctx, fake)
}

/// A CRD deleted and recreated under the same name (same generation, another UID, as
/// after a relist that missed the deletion) is judged with its new schema.
#[tokio::test(start_paused = true)]
async fn a_recreated_crd_is_judged_with_its_new_schema() {
    let (ctx, fake) = audited_thing_a().await;
    assert_eq!(
        tracked(&ctx, "things.example.com", |t| t.audit().invalid_count()),
        0
    );
    fake_api::apply_crd(&ctx, &fake, crd("u2", 1, &["small"])).await;
    until("the audit of the new CRD", || audited(&ctx, "u2")).await;
    tracked(&ctx, "things.example.com", |t| {
        assert_eq!(t.audit().invalid_count(), 1);
        assert!(
            t.last_change().is_none(),
            "a new CRD is not a change of the old one"
        );
        assert_eq!(t.audit().objects.get("v1"), Some(&1));
    });
}

/// Two audited CRDs: gadgets (no objects) and things (one object, invalid).
async fn audited_gadgets_and_things() -> Arc<Reconciler> {
    audited_gadgets_and_things_on_the_fake().await.0.reconciler
}

/// [`audited_gadgets_and_things`], and the fake API they are on.
async fn audited_gadgets_and_things_on_the_fake() -> (Parts, fake_api::Shared) {
    let (client, fake) = fake_api::start();
    {
        let mut f = fake.lock().unwrap();
        f.objects
            .insert("things".into(), vec![thing("a", "medium")]);
        f.objects.insert("gadgets".into(), vec![]);
    }
    let parts = term(client);
    let ctx = parts.reconciler.clone();
    let mut gadgets = crd("u9", 1, &["small"]);
    gadgets["metadata"]["name"] = json!("gadgets.example.com");
    gadgets["spec"]["names"] = json!({"plural": "gadgets", "kind": "Gadget"});
    fake_api::apply_crd(&ctx, &fake, gadgets).await;
    fake_api::apply_crd(&ctx, &fake, crd("u1", 1, &["small"])).await;
    until("both audits", || {
        ctx.states
            .read_all(|reg| reg.len() == 2 && reg.values().all(|t| t.audited()))
    })
    .await;
    (parts, fake)
}

/// A stop (shutdown, a lost Lease) writes the queued Events before it ends, in order,
/// and leaves nothing running.
#[tokio::test(start_paused = true)]
async fn a_stop_flushes_the_queued_events() {
    let (parts, fake) = audited_gadgets_and_things_on_the_fake().await;
    let ctx = parts.reconciler.clone();
    for i in 0..3 {
        ctx.reports.events.push(PendingEvent {
            warning: true,
            reason: format!("Test{i}"),
            note: "n".into(),
            regarding: ObjectReference {
                name: Some("things.example.com".into()),
                ..Default::default()
            },
        });
    }
    let controller = LeadershipTerm::start(parts);
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
    assert!(ctx.reports.events.is_empty());
    assert!(ctx.states.is_empty(), "the object audits are stopped");
}

/// While the report CRD is being deleted nothing is written: its finalizer removes the
/// reports, and each report written back would hold the deletion up. Nor while it is
/// gone. When it is served again, every report is written again within 10 s.
#[tokio::test(start_paused = true)]
async fn nothing_is_written_while_the_report_crd_is_deleted() {
    let (parts, fake) = audited_gadgets_and_things_on_the_fake().await;
    let controller = spawn_run(parts);
    until("both reports", || fake.lock().unwrap().reports.len() == 2).await;
    fake_api::put_crd(&fake, fake_api::report_crd(true));
    tokio::time::sleep(Duration::from_secs(1)).await;
    // The finalizer deletes the reports; the report watch sees them go.
    for name in ["gadgets.example.com", "things.example.com"] {
        fake_api::delete_report(&fake, name);
    }
    let writes = fake.lock().unwrap().report_writes;
    tokio::time::sleep(Duration::from_secs(30)).await;
    let unchanged = |what: &str| {
        let f = fake.lock().unwrap();
        assert_eq!(
            f.report_writes, writes,
            "reports written while the CRD {what}"
        );
        assert!(f.reports.is_empty());
    };
    unchanged("goes");
    fake_api::delete_crd(&fake, REPORT_CRD.as_str());
    tokio::time::sleep(Duration::from_secs(30)).await;
    unchanged("is gone");
    fake_api::put_crd(&fake, fake_api::report_crd(false));
    until("every report written again within 10 s", || {
        fake.lock().unwrap().reports.len() == 2
    })
    .await;
    controller.abort();
}

/// A CRD deleted: its report is deleted by the writer, the deletion retried with backoff
/// while the server refuses it, and at once when the API server recovers.
#[tokio::test(start_paused = true)]
async fn a_deleted_crds_report_is_deleted_with_retries() {
    let (parts, fake) = audited_gadgets_and_things_on_the_fake().await;
    let ctx = parts.reconciler.clone();
    let controller = spawn_run(parts);
    until("both reports", || fake.lock().unwrap().reports.len() == 2).await;
    {
        let mut f = fake.lock().unwrap();
        f.fail_writes = true;
        f.report_writes = 0;
    }
    fake_api::delete_crd(&fake, "gadgets.example.com");
    until("the CRD forgotten", || ctx.states.len() == 1).await;
    tokio::time::sleep(Duration::from_secs(20)).await;
    // Tried at 0, 1, 3, 7 and 15 s.
    let tries = fake.lock().unwrap().report_writes;
    assert!((4..=6).contains(&tries), "{tries} deletions tried in 20 s");
    assert!(
        fake.lock()
            .unwrap()
            .reports
            .contains_key("gadgets.example.com")
    );
    fake.lock().unwrap().fail_writes = false;
    ctx.api_recovered();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let f = fake.lock().unwrap();
    assert_eq!(f.reports.keys().collect::<Vec<_>>(), ["things.example.com"]);
    drop(f);
    controller.abort();
}

/// The Controller (and its writer) running with `config` on the fake, which holds thing a
/// (medium) under a CRD that allows only small ones.
fn running_on_thing_a(
    config: crate::audit::config::Config,
) -> (Arc<Reconciler>, fake_api::Shared, JoinHandle<()>) {
    let (client, fake) = fake_api::start();
    fake.lock()
        .unwrap()
        .objects
        .insert("things".into(), vec![thing("a", "medium")]);
    let parts = fake_api::term_with(client, config);
    let ctx = parts.reconciler.clone();
    fake_api::put_crd(&fake, crd("u1", 1, &["small"]));
    let controller = spawn_run(parts);
    (ctx, fake, controller)
}

/// A report queued while there is nothing to write (pushed again while its write was in
/// flight, as its own watch events do) is dropped by the writer and gives back the write
/// budget it took: ten of them in a row take no time, and a change after them is written at
/// once.
#[tokio::test(start_paused = true)]
async fn a_report_with_nothing_to_write_takes_no_write_budget() {
    const THINGS: &str = "things.example.com";
    // A report (two requests) every two seconds.
    let (ctx, fake, controller) = running_on_thing_a(crate::audit::config::Config {
        api_qps: 1.0,
        api_burst: 2,
        ..Default::default()
    });
    until("the report", || {
        fake.lock().unwrap().reports.contains_key(THINGS) && ctx.reports.queue.is_empty()
    })
    .await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let writes = fake.lock().unwrap().report_writes;
    let start = tokio::time::Instant::now();
    for _ in 0..10 {
        ctx.reports
            .queue
            .push(THINGS, crate::operator::reports::queue::Lane::Clean);
        until("the writer to take it", || ctx.reports.queue.is_empty()).await;
        tokio::task::yield_now().await;
    }
    // Without giving the budget back: two seconds each.
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?} for ten reports with nothing to write",
        start.elapsed()
    );
    assert_eq!(
        fake.lock().unwrap().report_writes,
        writes,
        "nothing written"
    );
    let start = tokio::time::Instant::now();
    fake_api::apply_crd(&ctx, &fake, crd("u1", 2, &["small"])).await;
    until("the report of generation 2", || {
        fake.lock()
            .unwrap()
            .reports
            .get(THINGS)
            .is_some_and(|r| r["status"]["crdGeneration"] == 2)
    })
    .await;
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "written after {:?}",
        start.elapsed()
    );
    controller.abort();
}

/// A CRD with no objects is never compiled; one with objects is compiled once, and its
/// validator is kept (within the cache's budget) for the objects' next changes.
#[tokio::test(start_paused = true)]
async fn a_crd_is_compiled_only_when_its_objects_are_judged() {
    let ctx = audited_gadgets_and_things().await;
    assert_eq!(
        tracked(&ctx, "things.example.com", |t| t.audit().invalid_count()),
        1
    );
    assert_eq!(ctx.metrics.validator_compilations.get(), 1);
    assert_eq!(ctx.audits.validators().usage().0, 1);
    let epoch = |name: &str| tracked(&ctx, name, |t| t.epoch());
    assert!(
        ctx.audits
            .validators()
            .get("things.example.com", epoch("things.example.com"))
            .is_some()
    );
    assert!(
        ctx.audits
            .validators()
            .get("gadgets.example.com", epoch("gadgets.example.com"))
            .is_none()
    );
    // What is kept of a revision is its shell and its packed schemas.
    let shells = ctx.states.read_all(|reg| {
        reg.values()
            .all(|t| t.crd().versions.iter().all(|v| v.schema.is_none()))
    });
    assert!(shells);
}

/// On a fresh start, with the write budget taken, a report with findings is written
/// before the clean ones waiting for the budget: a CRD with an invalid object before
/// five clean ones whose names sort earlier.
#[tokio::test(start_paused = true)]
async fn reports_with_findings_are_written_first() {
    let (client, fake) = fake_api::start();
    let clean: Vec<String> = (0..5).map(|i| format!("gadgets{i}.example.com")).collect();
    {
        let mut f = fake.lock().unwrap();
        f.objects
            .insert("things".into(), vec![thing("a", "medium")]);
        for name in &clean {
            f.objects
                .insert(name.split('.').next().unwrap().into(), vec![]);
        }
    }
    for (i, name) in clean.iter().enumerate() {
        let mut gadgets = crd(&format!("g{i}"), 1, &["small"]);
        let plural = name.split('.').next().unwrap();
        gadgets["metadata"]["name"] = json!(name);
        gadgets["spec"]["names"] = json!({"plural": plural, "kind": format!("Gadget{i}")});
        fake_api::put_crd(&fake, gadgets);
    }
    fake_api::put_crd(&fake, crd("u1", 1, &["small"]));
    // One write every two seconds (a report is two).
    let config = crate::audit::config::Config {
        api_qps: 0.5,
        api_burst: 1,
        ..Default::default()
    };
    let parts = fake_api::term_with(client, config);
    let controller = spawn_run(parts);
    let invalid = |status: &Value| {
        status["conditions"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "InstancesValid" && c["status"] == "False")
        })
    };
    for _ in 0..1200 {
        let done = {
            let f = fake.lock().unwrap();
            f.reports.len() == 6 && f.status_writes.iter().any(|(_, s)| invalid(s))
        };
        if done {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let f = fake.lock().unwrap();
    assert_eq!(f.reports.len(), 6, "every report is written");
    let first_finding = f
        .status_writes
        .iter()
        .position(|(n, s)| n == "things.example.com" && invalid(s))
        .expect("the report with findings");
    let clean_before: BTreeSet<&String> = f.status_writes[..first_finding]
        .iter()
        .map(|(n, _)| n)
        .filter(|n| n.as_str() != "things.example.com")
        .collect();
    // At most the write that had the budget when the audit found the invalid object.
    assert!(
        clean_before.len() <= 1,
        "clean reports written first: {clean_before:?}"
    );
    controller.abort();
}

/// The object audits are the reconciles': an audit task that died (a bug got past its
/// supervisor) is noticed by the CRD's next reconcile (at once when it ended on its own),
/// counted, shown in the report and started again; the periodic full resync is the Controller's requeue of the CRD, and lists the
/// objects again.
#[tokio::test(start_paused = true)]
async fn reconcile_restarts_a_dead_audit_and_asks_for_the_full_resync() {
    const THINGS: &str = "things.example.com";
    let (ctx, fake, controller) = running_on_thing_a(crate::audit::config::Config {
        full_resync_interval: Duration::from_secs(600),
        ..Default::default()
    });
    until("the first audit", || audited(&ctx, "u1")).await;
    let lists = || {
        fake.lock()
            .unwrap()
            .object_lists
            .get("things")
            .copied()
            .unwrap_or(0)
    };
    assert_eq!(lists(), 1);
    // Within ±10 % of the period, and nothing else: the CRD does not change.
    tokio::time::sleep(Duration::from_secs(530)).await;
    assert_eq!(lists(), 1, "no resync before its time");
    tokio::time::sleep(Duration::from_secs(140)).await;
    assert_eq!(lists(), 2, "the full resync lists the objects again");
    assert!(audited(&ctx, "u1"));
    // An audit task that is gone is started again by the next reconcile.
    ctx.audits.kill_for_tests(THINGS);
    while ctx.audits.alive(THINGS) {
        tokio::task::yield_now().await;
    }
    let internal = ctx.metrics.internal_errors.get();
    ctx.states.audit_died(THINGS);
    until("the audit started again", || ctx.audits.alive(THINGS)).await;
    assert_eq!(ctx.metrics.internal_errors.get(), internal + 1);
    until("a complete audit after the restart", || lists() == 3).await;
    until("the report clear of the restart", || {
        tracked(&ctx, THINGS, |t| t.blocked().is_none()) && audited(&ctx, "u1")
    })
    .await;
    assert_eq!(tracked(&ctx, THINGS, |t| t.audit().invalid_count()), 1);
    // An audit task that ends on its own says so: its CRD is reconciled at once and the
    // audit started again, not at the next full resync minutes away.
    let epoch = tracked(&ctx, THINGS, |t| t.epoch());
    ctx.audits.stop(THINGS);
    let internal = ctx.metrics.internal_errors.get();
    let ended = ctx.audits.ensure_with(THINGS, epoch, |_| {
        futures::FutureExt::boxed(async { crate::operator::audits::tasks::Ended::WatchEnded })
    });
    assert!(
        matches!(ended, crate::operator::audits::tasks::Ensured::Started(_)),
        "{ended:?}"
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(ctx.metrics.internal_errors.get(), internal + 1);
    assert!(ctx.audits.alive(THINGS));
    until("the objects listed by the audit started again", || {
        lists() == 4
    })
    .await;
    controller.abort();
}

/// A panic in an object audit is counted and reported (InstancesValid Unknown,
/// InternalError), and the audit runs again; a complete audit clears the report.
#[tokio::test(start_paused = true)]
async fn a_panicking_audit_is_reported_and_restarted() {
    let (ctx, _fake) = audited_thing_a().await;
    let (revision, epoch) = tracked(&ctx, "things.example.com", |t| {
        (t.revision().clone(), t.epoch())
    });
    let runs = std::sync::atomic::AtomicUsize::new(0);
    let c = ctx.clone();
    let name = revision.shell().name.clone();
    let handle = ctx.audits.handle().clone();
    let supervised = crate::operator::audits::objects::supervise(&handle, &name, epoch, || {
        let n = runs.fetch_add(1, Ordering::Relaxed);
        let (c, revision) = (c.clone(), revision.clone());
        async move {
            if n == 0 {
                panic!("boom in the audit");
            }
            crate::operator::audits::objects::audit_objects(
                c.audits.handle().clone(),
                revision,
                epoch,
                Default::default(),
            )
            .await
        }
    });
    let reported = async {
        until("the bug in the report", || {
            tracked(&ctx, "things.example.com", |t| {
                t.blocked().is_some_and(|b| {
                    b.reason() == "InternalError" && b.message().ends_with("boom in the audit")
                })
            })
        })
        .await;
        let status = desired(&ctx, "things.example.com");
        // Neither the objects nor their updates could be judged, for the same reason.
        for ty in ["InstancesValid", "UpdatesAccepted"] {
            let c = status.conditions.iter().find(|c| c.type_ == ty).unwrap();
            assert_eq!(
                (c.status.as_str(), c.reason.as_str()),
                ("Unknown", "InternalError"),
                "{ty}"
            );
        }
        assert_eq!(ctx.metrics.internal_errors.get(), 1);
        until("the restarted audit to clear it", || {
            tracked(&ctx, "things.example.com", |t| t.blocked().is_none())
        })
        .await;
    };
    tokio::select! {
        _ = supervised => panic!("the supervised audit ended"),
        _ = reported => {}
    }
    assert_eq!(runs.load(Ordering::Relaxed), 2);
}

/// A loosening (generation 3) and the tightening again (generation 4), both made while
/// the operator could not see them, arrive as one new generation with the schemas it
/// reported: the report still says SchemaTightened, with the change that tightened.
#[tokio::test(start_paused = true)]
async fn missed_revisions_never_clear_a_tightening() {
    let (ctx, fake) = audited_thing_a().await;
    fake_api::apply_crd(&ctx, &fake, crd("u1", 2, &["small"])).await;
    let generation = |g: i64| {
        let ctx = ctx.clone();
        move || {
            ctx.states
                .read("things.example.com", |t| {
                    t.audited() && t.crd().generation == g
                })
                .unwrap_or(false)
        }
    };
    until("the audit of generation 2", generation(2)).await;
    let tightened = |ctx: &Reconciler| {
        let status = desired(ctx, "things.example.com");
        let c = status
            .conditions
            .iter()
            .find(|c| c.type_ == "SchemaTightened")
            .map(|c| (c.status.clone(), c.message.clone()));
        (c, status.last_schema_change.map(|c| c.to_generation))
    };
    let before = tightened(&ctx);
    assert_eq!(before.0.as_ref().unwrap().0, "True", "{before:?}");
    fake_api::apply_crd(&ctx, &fake, crd("u1", 4, &["small"])).await;
    until("the audit of generation 4", generation(4)).await;
    assert_eq!(tightened(&ctx), before);
    assert_eq!(
        tracked(&ctx, "things.example.com", |t| t.audit().invalid_count()),
        1
    );
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
    let parts = term(client.clone());
    let ctx = parts.reconciler.clone();
    fake_api::apply_crd(&ctx, &fake, crd("u1", 1, &["small", "medium"])).await;
    until("the first audit", || audited(&ctx, "u1")).await;
    fake_api::apply_crd(&ctx, &fake, crd("u1", 2, &["small"])).await;
    let writer = spawn_run(parts);
    until("the tightened report", || {
        fake.lock()
            .unwrap()
            .reports
            .get("things.example.com")
            .is_some_and(|r| {
                r["status"]["crdGeneration"] == 2
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
    let parts = term(client);
    let ctx = parts.reconciler.clone();
    fake_api::apply_crd(&ctx, &fake, crd("u1", 2, &["small"])).await;
    until("the restarted audit", || audited(&ctx, "u1")).await;
    let change = tracked(&ctx, "things.example.com", |t| t.last_change().cloned())
        .expect("the tightening is remembered");
    assert!(change.tightened);
    assert_eq!(change.report.from_generation, 1);
}

/// A report's status describes the report itself (`observedGeneration` is its own
/// generation, which moves with its spec) and the CRD's generation apart
/// (`crdGeneration`), with the summary conditions; a report an earlier release wrote, whose
/// `observedGeneration` held the CRD's generation, is written again in the new form.
#[tokio::test(start_paused = true)]
async fn a_report_describes_its_own_generation_and_old_reports_are_rewritten() {
    let (client, fake) = fake_api::start();
    fake.lock()
        .unwrap()
        .objects
        .insert("things".into(), vec![thing("a", "small")]);
    // What an earlier release wrote about generation 3 of the CRD.
    fake.lock().unwrap().reports.insert(
        "things.example.com".into(),
        json!({"apiVersion": "crd-audit.dev/v1alpha1", "kind": "SchemaAudit",
            "metadata": {"name": "things.example.com", "generation": 1, "resourceVersion": "1",
                "ownerReferences": [{"apiVersion": "apiextensions.k8s.io/v1",
                    "kind": "CustomResourceDefinition", "name": "things.example.com", "uid": "u1"}]},
            "spec": {},
            "status": {"observedGeneration": 3, "versions": [], "invalidObjects": [],
                "invalidObjectsTruncated": false,
                "conditions": [{"type": "InstancesValid", "status": "True", "reason": "AllValid",
                    "message": "", "lastTransitionTime": "2026-11-01T00:00:00Z"}]}}),
    );
    fake_api::put_crd(&fake, crd("u1", 3, &["small"]));
    let parts = term(client);
    let controller = spawn_run(parts);
    let report = || {
        fake.lock()
            .unwrap()
            .reports
            .get("things.example.com")
            .cloned()
            .unwrap()
    };
    let ready = |r: &Value| {
        r["status"]["conditions"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
    };
    until("the report written again", || ready(&report())).await;
    let r = report();
    assert_eq!(r["status"]["crdGeneration"], 3, "{r}");
    let own = r["metadata"]["generation"].clone();
    assert_eq!(r["status"]["observedGeneration"], own, "{r}");
    assert!(
        r["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["observedGeneration"] == own),
        "{r}"
    );
    // A new revision of the CRD: the report's spec (its audited revision) changes, so does
    // its generation, and the status follows it.
    fake_api::put_crd(&fake, crd("u1", 4, &["small", "medium"]));
    until("the report of generation 4", || {
        let r = report();
        r["status"]["crdGeneration"] == 4
            && r["status"]["observedGeneration"] == r["metadata"]["generation"]
    })
    .await;
    let r = report();
    assert!(
        r["metadata"]["generation"].as_i64() > own.as_i64(),
        "{own} then {}",
        r["metadata"]["generation"]
    );
    controller.abort();
}
