//! The writer of the reports and Events when the server refuses writes: backoff, nothing
//! lost, everything at once when the API server recovers, and a stop that does not spin.

use super::tests::{audited, crd, spawn_run, thing, until};
use crate::operator::crds::Reconciler;
use crate::operator::fake_api;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;

/// Things a (medium) and b (small) audited at generation 1; then the server fails every
/// report write and Event while the Controller and the writer run, and
/// generation 2 tightens the schema (its audit complete).
async fn tightened_while_writes_fail() -> (
    Arc<Reconciler>,
    fake_api::Shared,
    JoinHandle<()>,
    Arc<tokio::sync::watch::Sender<bool>>,
) {
    let (client, fake) = fake_api::start();
    fake.lock().unwrap().objects.insert(
        "things".into(),
        vec![thing("a", "medium"), thing("b", "small")],
    );
    let parts = fake_api::term(client);
    let ctx = parts.reconciler.clone();
    fake_api::apply_crd(&ctx, &fake, crd("u1", 1, &["small", "medium"])).await;
    until("the first audit", || audited(&ctx, "u1")).await;
    {
        let mut f = fake.lock().unwrap();
        f.fail_writes = true;
        f.fail_events = true;
    }
    // The Controller and the writer of the reports and Events.
    let stopping = parts.stopping.clone();
    let writer = spawn_run(parts);
    fake_api::apply_crd(&ctx, &fake, crd("u1", 2, &["small"])).await;
    until("the audit of generation 2", || {
        ctx.states
            .read("things.example.com", |t| {
                t.audited() && t.crd().generation == 2
            })
            .unwrap_or(false)
    })
    .await;
    (ctx, fake, writer, stopping)
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
        r["status"]["crdGeneration"] == 2
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
    let (_ctx, fake, writer, _stopping) = tightened_while_writes_fail().await;
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
}

/// CPU time of the calling thread, from procfs (the test's runtime is single-threaded, so
/// every task of the term runs on it).
fn thread_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    // The fields after the command's closing parenthesis: utime and stime are 12th and 13th.
    let fields: Vec<u64> = stat[stat.rfind(')').unwrap() + 2..]
        .split(' ')
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    Duration::from_millis((fields[11] + fields[12]) * 10)
}

/// A stopping writer with a report write waiting for its retry (none starts once stopping)
/// and an Event that keeps failing sleeps between the Event's retries: it does not spin on
/// the report's retry (real time: a spin shows as CPU).
#[tokio::test]
async fn a_stopping_writer_does_not_spin_on_a_retry_it_cannot_make() {
    let (ctx, fake, writer, stopping) = tightened_while_writes_fail().await;
    until("a report write failed", || {
        fake.lock().unwrap().report_writes > 0 && !ctx.reports.queue.is_empty()
    })
    .await;
    stopping.send_replace(true);
    // The report's retry (a second or two away) comes due while the writer waits on the
    // Event's backoff.
    let before = thread_cpu();
    tokio::time::sleep(Duration::from_secs(4)).await;
    let used = thread_cpu() - before;
    assert!(
        used < Duration::from_secs(1),
        "{used:?} of CPU in 4 s while stopping"
    );
    assert!(!writer.is_finished(), "the Event is still to be written");
    writes_work_again(&fake);
    tokio::time::timeout(Duration::from_secs(10), writer)
        .await
        .expect("the writer ends once the Event is written")
        .unwrap();
    assert!(ctx.reports.events.is_empty());
}

/// After a long outage the report writes and the Events have backed off to a minute;
/// when the API server is back (the CRD watch makes progress again) they go at once: the
/// tightening is in its report and its Event within 10 s, whatever the phase of their
/// backoff.
#[tokio::test(start_paused = true)]
async fn after_an_outage_what_backed_off_is_written_at_once() {
    let (ctx, fake, writer, _stopping) = tightened_while_writes_fail().await;
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
}
