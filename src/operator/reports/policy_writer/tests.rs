use super::*;
use crate::audit::config::Config;
use crate::audit::judge::judge;
use crate::operator::crds::Reconciler;
use crate::operator::fake_api;
use crate::operator::leadership::term::Parts;
use serde_json::{Value, json};

fn crd(name: &str, scope: &str) -> Value {
    let (plural, group) = name.split_once('.').unwrap();
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": name, "uid": format!("uid-{plural}"), "generation": 1},
        "spec": {"group": group, "scope": scope,
            "names": {"plural": plural, "kind": if scope == "Cluster" { "Node" } else { "Thing" }},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object", "properties": {"size": {"type": "string", "enum": ["small"]}}}}}}}]}})
}

fn obj(ns: &str, name: &str, size: &str) -> Value {
    let mut meta = json!({"name": name, "uid": format!("uid-{name}")});
    if !ns.is_empty() {
        meta["namespace"] = json!(ns);
    }
    json!({"metadata": meta, "spec": {"size": size}})
}

const THINGS: &str = "things.example.com";
const NODES: &str = "nodes.example.com";

async fn until(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..600 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

/// A controller with the two CRDs audited (their objects LISTed from the fake).
async fn audited(objects: Vec<(&str, Vec<Value>)>) -> (Parts, fake_api::Shared) {
    audited_with(objects, PolicyReportsApi::Auto, false).await
}

/// [`audited`], writing to `api`, with OpenReports installed or not.
async fn audited_with(
    objects: Vec<(&str, Vec<Value>)>,
    api: PolicyReportsApi,
    openreports: bool,
) -> (Parts, fake_api::Shared) {
    let (client, fake) = fake_api::start();
    fake.lock().unwrap().openreports_installed = openreports;
    {
        let mut f = fake.lock().unwrap();
        for (plural, items) in objects {
            f.objects.insert(plural.into(), items);
        }
    }
    let config = Config {
        policy_reports: true,
        policy_reports_api: api,
        ..Config::default()
    };
    let parts = fake_api::term_with(client, config);
    for (name, scope) in [(THINGS, "Namespaced"), (NODES, "Cluster")] {
        fake_api::apply_crd(&parts.reconciler, &fake, crd(name, scope)).await;
    }
    until("the audits", || {
        parts
            .reconciler
            .states
            .read_all(|reg| reg.len() == 2 && reg.values().all(|t| t.audited()))
    })
    .await;
    parts.reconciler.states.first_list_reconciled();
    (parts, fake)
}

/// The policy report writers' handle of a term.
fn writers(parts: &Parts) -> PolicyWriters {
    parts.policy.clone().expect("policyReports is on")
}

/// Judges `o` again as a watch event would, and wakes the writer.
fn observe(ctx: &Reconciler, crd: &str, o: Value) {
    let (kind, revision, epoch) = ctx
        .states
        .read(crd, |t| {
            (t.crd().kind.clone(), t.revision().clone(), t.epoch())
        })
        .unwrap();
    let mut o = o;
    o["apiVersion"] = json!("example.com/v1");
    o["kind"] = json!(kind);
    let v = crd_audit_engine::CrdValidator::new(&revision.unpack().unwrap()).expect("compiles");
    let j = judge(&v, o, true);
    ctx.states.object_changed(crd, epoch, j).unwrap();
}

fn report(fake: &fake_api::Shared, ns: &str) -> Option<Value> {
    fake.lock()
        .unwrap()
        .policy_reports
        .get(&(ns.to_string(), "crd-audit".to_string()))
        .cloned()
}

fn open_report(fake: &fake_api::Shared, ns: &str) -> Option<Value> {
    fake.lock()
        .unwrap()
        .open_reports
        .get(&(ns.to_string(), "crd-audit".to_string()))
        .cloned()
}

fn names(r: &Value) -> Vec<String> {
    r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["resources"][0]["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(start_paused = true)]
async fn results_follow_the_audit() {
    let (parts, fake) = audited(vec![
        (
            "things",
            vec![
                obj("ns1", "a", "large"),
                obj("ns1", "b", "small"),
                obj("ns2", "c", "large"),
            ],
        ),
        ("nodes", vec![obj("", "n1", "huge"), obj("", "n2", "small")]),
    ])
    .await;
    let ctx = parts.reconciler.clone();
    // A report of another tool in the same namespace is left alone.
    let foreign = json!({"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport",
        "metadata": {"name": "kyverno-pol", "namespace": "ns1", "labels": {MANAGED_BY: "kyverno"}},
        "results": [{"policy": "p", "result": "pass"}]});
    fake.lock()
        .unwrap()
        .policy_reports
        .insert(("ns1".into(), "kyverno-pol".into()), foreign.clone());
    let writer = tokio::spawn(write_policy_reports(writers(&parts)));
    until("three reports", || {
        fake.lock().unwrap().policy_reports.len() == 4
    })
    .await;
    let ns1 = report(&fake, "ns1").unwrap();
    assert_eq!(ns1["kind"], "PolicyReport");
    assert_eq!(ns1["metadata"]["namespace"], "ns1");
    assert_eq!(names(&ns1), vec!["a"]);
    assert_eq!(ns1["summary"]["fail"], 1);
    let r = &ns1["results"][0];
    assert_eq!(r["rule"], THINGS);
    assert_eq!(r["source"], "crd-audit");
    assert_eq!(r["resources"][0]["apiVersion"], "example.com/v1");
    assert_eq!(r["resources"][0]["uid"], "uid-a");
    assert_eq!(r["timestamp"]["nanos"], 0);
    let expected = ctx
        .states
        .read(THINGS, |t| {
            t.audit().invalid[&("ns1".into(), "a".into())].errors[0].clone()
        })
        .unwrap();
    assert_eq!(r["message"], json!(expected));
    let cluster = report(&fake, "").unwrap();
    assert_eq!(cluster["kind"], "ClusterPolicyReport");
    assert!(cluster["metadata"].get("namespace").is_none());
    assert_eq!(names(&cluster), vec!["n1"]);
    assert_eq!(names(&report(&fake, "ns2").unwrap()), vec!["c"]);

    // Nothing changes: nothing is written.
    let writes = fake.lock().unwrap().policy_writes;
    assert_eq!(writes, 3);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(fake.lock().unwrap().policy_writes, writes);

    // b turns invalid, a's message changes: one write of ns1.
    observe(&ctx, THINGS, obj("ns1", "b", "medium"));
    observe(&ctx, THINGS, obj("ns1", "a", "Secret-value"));
    until("b in the ns1 report", || {
        report(&fake, "ns1").is_some_and(|r| names(&r) == vec!["a", "b"])
    })
    .await;
    let ns1 = report(&fake, "ns1").unwrap();
    assert_ne!(ns1["results"][0]["message"], json!(expected));
    assert!(
        ns1["results"][0]["message"]
            .as_str()
            .unwrap()
            .contains("<string, 12 chars>"),
        "{ns1}"
    );
    assert_eq!(ns1["summary"]["fail"], 2);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(fake.lock().unwrap().policy_writes, writes + 1);

    // c is fixed: its namespace's report has no result left and is deleted.
    observe(&ctx, THINGS, obj("ns2", "c", "small"));
    until("the ns2 report to go", || report(&fake, "ns2").is_none()).await;
    // a is deleted: its result goes.
    let epoch = ctx.states.read(THINGS, |t| t.epoch()).unwrap();
    assert!(
        ctx.states
            .object_deleted(THINGS, epoch, &("ns1".into(), "a".into()), "v1")
    );
    until("a's result to go", || {
        report(&fake, "ns1").is_some_and(|r| names(&r) == vec!["b"])
    })
    .await;
    assert_eq!(report(&fake, "ns1").unwrap()["summary"]["fail"], 1);
    // The cluster-scoped CRD goes: the ClusterPolicyReport goes with its results.
    ctx.states.crd_gone(NODES);
    until("the ClusterPolicyReport to go", || {
        report(&fake, "").is_none()
    })
    .await;
    // The other tool's report is untouched.
    assert_eq!(
        fake.lock()
            .unwrap()
            .policy_reports
            .get(&("ns1".into(), "kyverno-pol".into())),
        Some(&foreign)
    );
    writer.abort();
}

/// A restarted operator finds its reports and, while the objects are read again, keeps
/// them as they are: no write at all when nothing changed.
#[tokio::test(start_paused = true)]
async fn a_restart_rewrites_nothing() {
    let (parts, fake) = audited(vec![
        ("things", vec![obj("ns1", "a", "large")]),
        ("nodes", vec![]),
    ])
    .await;
    let ctx = parts.reconciler.clone();
    let writer = tokio::spawn(write_policy_reports(writers(&parts)));
    until("the report", || report(&fake, "ns1").is_some()).await;
    writer.abort();
    let before = report(&fake, "ns1").unwrap();
    let writes = fake.lock().unwrap().policy_writes;
    // Same server, new operator; its audit of things is not complete yet.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let client = ctx.client.clone();
    let config = Config {
        policy_reports: true,
        ..Config::default()
    };
    let parts2 = fake_api::term_with(client, config);
    let ctx2 = parts2.reconciler.clone();
    fake_api::apply_crd(&ctx2, &fake, crd(THINGS, "Namespaced")).await;
    until("the new audit", || {
        ctx2.states.read(THINGS, |t| t.audited()).unwrap_or(false)
    })
    .await;
    ctx2.states.first_list_reconciled();
    let mut w = Writer::new(
        writers(&parts2),
        ReportApi::WgPolicy,
        Role::Write,
        Arc::new(AtomicU8::new(UNKNOWN)),
        Limits::default(),
    );
    w.pass().await;
    assert!(w.written.is_some());
    assert_eq!(fake.lock().unwrap().policy_writes, writes);
    assert_eq!(report(&fake, "ns1").unwrap(), before);
    // The same with the audit still running: the written result is kept.
    ctx2.states.audit_restarted_for_tests(THINGS);
    w.last = None;
    w.pass().await;
    assert_eq!(fake.lock().unwrap().policy_writes, writes);
}

/// The PolicyReport CRDs are not installed, then crd-audit may not write the reports:
/// warnings and backoff, the SchemaAudit reports are written all the same, and the
/// PolicyReports appear once the CRDs are there and writes are allowed.
#[tokio::test(start_paused = true)]
async fn missing_crds_and_refused_writes_are_retried_with_backoff() {
    let (parts, fake) = audited(vec![
        ("things", vec![obj("ns1", "a", "large")]),
        ("nodes", vec![]),
    ])
    .await;
    let ctx = parts.reconciler.clone();
    fake.lock().unwrap().policy_crds_missing = true;
    let writer = tokio::spawn(write_policy_reports(writers(&parts)));
    let reports = crate::operator::leadership::term::tests::spawn_run(parts);
    until("the SchemaAudit reports", || {
        fake.lock().unwrap().reports.len() == 2
    })
    .await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    let lists = fake.lock().unwrap().policy_lists;
    // Backoff 1 s, 2 s, 4 s, ... (passes every 2.2 s at most): six LISTs in a minute
    // (without backoff there would be 27), and no write.
    assert!((4..=7).contains(&lists), "{lists} LISTs");
    assert_eq!(fake.lock().unwrap().policy_writes, 0);
    // Installed, but writes are forbidden.
    {
        let mut f = fake.lock().unwrap();
        f.policy_crds_missing = false;
        f.policy_forbidden = true;
    }
    until("a refused write", || fake.lock().unwrap().policy_writes > 0).await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    let refused = fake.lock().unwrap().policy_writes;
    // Backoff 1 s, 2 s, 4 s, ...: six tries in a minute.
    assert!((4..=7).contains(&refused), "{refused} writes tried");
    assert!(fake.lock().unwrap().policy_reports.is_empty());
    fake.lock().unwrap().policy_forbidden = false;
    until("the PolicyReport once allowed", || {
        report(&fake, "ns1").is_some()
    })
    .await;
    assert!(!writer.is_finished() && !reports.is_finished());
    // The CRDs deleted while running: the next write fails and the writer LISTs again
    // (with backoff) until they are back.
    fake.lock().unwrap().policy_crds_missing = true;
    observe(&ctx, THINGS, obj("ns1", "b", "large"));
    tokio::time::sleep(Duration::from_secs(3)).await;
    {
        let mut f = fake.lock().unwrap();
        f.policy_crds_missing = false;
        f.policy_reports.clear();
    }
    until("the report written again", || {
        report(&fake, "ns1").is_some_and(|r| names(&r) == vec!["a", "b"])
    })
    .await;
    writer.abort();
    reports.abort();
}

/// A namespace that is gone (its report cannot be applied: 404) holds up no other report
/// and is retried with backoff.
#[tokio::test(start_paused = true)]
async fn a_missing_namespace_holds_up_no_other_report() {
    let (parts, fake) = audited(vec![
        (
            "things",
            vec![obj("ns1", "a", "large"), obj("ns2", "b", "large")],
        ),
        ("nodes", vec![obj("", "n", "large")]),
    ])
    .await;
    fake.lock().unwrap().missing_namespaces = vec!["ns1".into()];
    let writer = tokio::spawn(write_policy_reports(writers(&parts)));
    until("the other reports", || {
        report(&fake, "ns2").is_some() && report(&fake, "").is_some()
    })
    .await;
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(report(&fake, "ns1").is_none());
    // ns1 tried with backoff 1 s, 2 s, 4 s, ... (six tries in a minute), the others once
    // each.
    let writes = fake.lock().unwrap().policy_writes;
    assert!((6..=9).contains(&writes), "{writes} writes");
    fake.lock().unwrap().missing_namespaces.clear();
    until("the ns1 report", || report(&fake, "ns1").is_some()).await;
    writer.abort();
}

/// `auto`: wgpolicyk8s.io while OpenReports is not installed; once it is, the reports
/// move there (same results, `Report` and `ClusterReport` with their `source`) and the
/// wgpolicyk8s.io ones written before are deleted.
#[tokio::test(start_paused = true)]
async fn auto_moves_to_openreports_once_it_is_installed() {
    let (parts, fake) = audited(vec![
        ("things", vec![obj("ns1", "a", "large")]),
        ("nodes", vec![obj("", "n1", "huge")]),
    ])
    .await;
    let ctx = parts.reconciler.clone();
    let writer = tokio::spawn(write_policy_reports(writers(&parts)));
    until("the wgpolicyk8s.io reports", || {
        report(&fake, "ns1").is_some() && report(&fake, "").is_some()
    })
    .await;
    assert!(fake.lock().unwrap().open_reports.is_empty());
    let wg = report(&fake, "ns1").unwrap();
    assert_eq!(wg["kind"], "PolicyReport");

    fake.lock().unwrap().openreports_installed = true;
    until("the OpenReports, and the old reports gone", || {
        let f = fake.lock().unwrap();
        f.open_reports.len() == 2 && f.policy_reports.is_empty()
    })
    .await;
    let open = open_report(&fake, "ns1").unwrap();
    assert_eq!(open["apiVersion"], "openreports.io/v1alpha1");
    assert_eq!(open["kind"], "Report");
    assert_eq!(open["source"], "crd-audit");
    // The same results (their timestamps are those of the new report).
    assert_eq!(names(&open), names(&wg));
    assert_eq!(open["results"][0]["message"], wg["results"][0]["message"]);
    assert_eq!(open["results"][0]["severity"], wg["results"][0]["severity"]);
    assert_eq!(open["summary"], wg["summary"]);
    assert_eq!(open_report(&fake, "").unwrap()["kind"], "ClusterReport");

    // OpenReports goes away again: back to wgpolicyk8s.io.
    {
        let mut f = fake.lock().unwrap();
        f.openreports_installed = false;
        f.open_reports.clear();
    }
    observe(&ctx, THINGS, obj("ns1", "b", "large"));
    until("the wgpolicyk8s.io reports again", || {
        report(&fake, "ns1").is_some_and(|r| names(&r) == vec!["a", "b"])
    })
    .await;
    writer.abort();
}

/// `both`: the same results in each API; `openreports`: never wgpolicyk8s.io, even while
/// OpenReports is not installed.
#[tokio::test(start_paused = true)]
async fn both_and_openreports_only() {
    let objects = || {
        vec![
            ("things", vec![obj("ns1", "a", "large")]),
            ("nodes", vec![obj("", "n1", "huge")]),
        ]
    };
    let (parts, fake) = audited_with(objects(), PolicyReportsApi::Both, true).await;
    let writer = tokio::spawn(write_policy_reports(writers(&parts)));
    until("both APIs written", || {
        let f = fake.lock().unwrap();
        f.open_reports.len() == 2 && f.policy_reports.len() == 2
    })
    .await;
    for ns in ["ns1", ""] {
        let (open, wg) = (open_report(&fake, ns).unwrap(), report(&fake, ns).unwrap());
        assert_eq!(names(&open), names(&wg));
        assert_eq!(open["results"][0]["message"], wg["results"][0]["message"]);
        assert_ne!(open["kind"], wg["kind"]);
    }
    writer.abort();

    let (parts, fake) = audited_with(objects(), PolicyReportsApi::OpenReports, false).await;
    let writer = tokio::spawn(write_policy_reports(writers(&parts)));
    tokio::time::sleep(Duration::from_secs(60)).await;
    {
        let f = fake.lock().unwrap();
        assert!(f.open_lists >= 1 && f.open_writes == 0);
        assert_eq!((f.policy_lists, f.policy_writes), (0, 0));
    }
    fake.lock().unwrap().openreports_installed = true;
    until("the OpenReports", || {
        fake.lock().unwrap().open_reports.len() == 2
    })
    .await;
    assert_eq!(fake.lock().unwrap().policy_lists, 0);
    writer.abort();
}

/// At rest a writer sleeps until its own first deadline; a change wakes it, one made while it
/// was busy too.
#[tokio::test(start_paused = true)]
async fn at_rest_a_writer_sleeps_until_its_first_deadline() {
    let (client, _fake) = fake_api::start();
    // The LIST again comes at the full resync the configuration sets.
    let config = Config {
        full_resync_interval: Duration::from_secs(420),
        ..Default::default()
    };
    let parts = fake_api::term_with(
        client,
        Config {
            policy_reports: true,
            ..config
        },
    );
    let ctx = parts.reconciler.clone();
    let openreports = Arc::new(AtomicU8::new(UNKNOWN));
    let mut w = Writer::new(
        writers(&parts),
        ReportApi::WgPolicy,
        Role::Write,
        openreports,
        Limits::default(),
    );
    let now = Instant::now();
    // Before the first LIST of CRDs: woken by it, not by a timer.
    w.list_at = now;
    assert_eq!(w.idle_wait(now), None);
    ctx.states.first_list_reconciled();
    // Not listed yet: the LIST's turn.
    w.list_at = now + Duration::from_secs(7);
    assert_eq!(w.idle_wait(now), Some(Duration::from_secs(7)));
    // Listed: the resync (`fullResyncInterval`) or a failed write's retry, whichever comes
    // first; no recheck on a timer.
    w.written = Some(BTreeMap::new());
    assert_eq!(w.resync, Duration::from_secs(420));
    w.resync_at = now + w.resync;
    assert_eq!(w.idle_wait(now), Some(Duration::from_secs(420)));
    w.retry.insert(
        "team-a".into(),
        (
            now + Duration::from_secs(5),
            crate::cluster::backoff::API_CALL.backoff(),
        ),
    );
    assert_eq!(w.idle_wait(now), Some(Duration::from_secs(5)));
    // A deadline passed: a second, not a loop.
    assert_eq!(w.idle_wait(now + w.resync), Some(MIN_WAIT));
    // A change made before the writer waits is not lost.
    ctx.states.policy_api_changed();
    tokio::time::timeout(Duration::from_millis(1), w.changes.changed())
        .await
        .expect("the change is seen")
        .unwrap();
}
