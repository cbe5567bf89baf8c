//! Conversion round trips by the leader (`auditConversions: true`): the stored objects of
//! every audited CRD converted by a webhook go through it to each other served version and
//! back, as `crd-audit roundtrip` sends them (`crate::roundtrip`), after each change of the
//! CRD (a new generation) and again at the full resync. Their requests (GETs, posts to the
//! webhook, dry runs) write nothing but cost the API server and the webhook: they take what
//! the term's write budget leaves after every write (last in line). What they find is the
//! report's `ConversionsLossless` (told to the states, which wake the reconcile) and the
//! metric `crd_audit_conversion_findings{crd,finding}`; the Event `ConversionFindings` comes
//! from the condition's transition. A check that cannot run (a refused dry run, an outage)
//! is tried again after a backoff; a webhook that is down makes every object a `failed`
//! finding, and nothing else. A round trip runs as a task of the leadership term: it ends
//! with the term, and the next leader runs it again.

use crate::cluster::write_budget::Writes;
use crate::operator::metrics::Metrics;
use crate::operator::server::ServerInfo;
use crate::operator::state::CrdStates;
use crate::operator::status::conversions::{ConversionFindings, Conversions, NAMED};
use crate::roundtrip::{self, Checker, Kind, RoundtripError};
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::time::Instant;

/// The first wait after a check that could not run, doubling up to `fullResyncInterval`.
const FIRST_RETRY: Duration = Duration::from_secs(60);

/// What the conversion round trips of a leadership term use: the client, their share of the
/// write budget (after every write), the API server's release and whereabouts, the metrics,
/// the states (to say what a check found), and the checks running.
#[derive(Clone)]
pub struct ConversionAuditor {
    pub client: kube::Client,
    pub pace: Writes,
    pub server: Arc<ServerInfo>,
    pub metrics: Arc<Metrics>,
    pub states: Arc<CrdStates>,
    /// `fullResyncInterval`: how often every CRD's objects are round-tripped again.
    pub resync: Duration,
    pub checks: Arc<Checks>,
}

/// The checks of a leadership term, by CRD.
#[derive(Default)]
pub struct Checks {
    by_crd: Mutex<HashMap<String, Entry>>,
}

struct Entry {
    /// The CRD's generation the check runs (or ran) on.
    generation: i64,
    task: Option<tokio::task::JoinHandle<()>>,
    /// When to check again on this generation.
    again_at: Instant,
    /// The wait after the last check that could not run (doubles).
    backoff: Option<Duration>,
}

impl Checks {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.by_crd.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stops every check (the term ends).
    pub fn stop_all(&self) {
        for (_, e) in self.lock().drain() {
            if let Some(t) = e.task {
                t.abort();
            }
        }
    }

    /// Stops the check of a CRD that went away (or is no longer converted by a webhook).
    pub fn stop(&self, crd: &str) {
        if let Some(t) = self.lock().remove(crd).and_then(|e| e.task) {
            t.abort();
        }
    }

    #[cfg(test)]
    pub fn running(&self, crd: &str) -> bool {
        self.lock()
            .get(crd)
            .and_then(|e| e.task.as_ref())
            .is_some_and(|t| !t.is_finished())
    }
}

/// Makes sure the objects of `crd` (at `generation`) are round-tripped if it is converted by
/// a webhook (`webhook`): a check starts when none ran on this generation, or when the last
/// one is a resync old (or its backoff is over); a check of an older generation is stopped
/// first. A CRD no longer converted by a webhook is no longer checked, and its report says
/// nothing of conversions. When the next check is due, for the reconcile to come back then.
pub fn ensure(
    a: &ConversionAuditor,
    crd: &str,
    generation: i64,
    webhook: bool,
) -> Option<Duration> {
    if !webhook {
        a.checks.stop(crd);
        a.states.conversions(crd, generation, None);
        a.metrics.forget_conversion_findings(crd);
        return None;
    }
    let mut checks = a.checks.lock();
    let now = Instant::now();
    if let Some(e) = checks.get(crd) {
        let running = e.task.as_ref().is_some_and(|t| !t.is_finished());
        if e.generation == generation {
            if running {
                return None;
            }
            if now < e.again_at {
                return Some(e.again_at - now);
            }
        } else if let Some(t) = &e.task {
            t.abort(); // an older generation's: void
        }
    }
    let backoff = checks
        .get(crd)
        .filter(|e| e.generation == generation)
        .and_then(|e| e.backoff);
    a.states
        .conversions(crd, generation, Some(Conversions::Checking));
    let task = {
        let a = a.clone();
        let name = crd.to_string();
        tokio::spawn(async move {
            let found = check(&a, &name, generation).await;
            let mut checks = a.checks.lock();
            let Some(e) = checks.get_mut(&name).filter(|e| e.generation == generation) else {
                return; // replaced by a check of another generation
            };
            e.task = None;
            let wait = match &found {
                Some(Conversions::Failed { .. }) => {
                    let wait =
                        backoff.map_or(FIRST_RETRY, |w| (w * 2).min(a.resync.max(FIRST_RETRY)));
                    e.backoff = Some(wait);
                    wait
                }
                _ => {
                    e.backoff = None;
                    a.resync
                }
            };
            e.again_at = Instant::now() + wait;
            drop(checks);
            if let Some(found) = found {
                if let Conversions::Checked(f) = &found {
                    a.metrics
                        .set_conversion_findings(&name, [f.lossy, f.invalid, f.failed]);
                }
                a.states.conversions(&name, generation, Some(found));
            }
        })
    };
    checks.insert(
        crd.to_string(),
        Entry {
            generation,
            task: Some(task),
            again_at: now + a.resync,
            backoff,
        },
    );
    None
}

/// One round trip of every stored object of `name` at `generation`: what it found, or why
/// it could not run; `None` when the CRD changed (or went) meanwhile: another check is due.
async fn check(a: &ConversionAuditor, name: &str, generation: i64) -> Option<Conversions> {
    let client = &a.client;
    let stop = AtomicBool::new(false);
    let started = std::time::Instant::now();
    let result: Result<Option<ConversionFindings>, RoundtripError> = async {
        let target = Arc::new(roundtrip::target(client, name, a.server.release().engine()).await?);
        if target.generation() != generation {
            return Ok(None);
        }
        let checker = Checker::new(
            client.clone(),
            target.clone(),
            a.server.in_cluster(),
            a.pace.clone(),
        )?;
        let mut kinds: [BTreeSet<(String, String)>; 3] = Default::default();
        let mut first = Vec::new();
        let walked = roundtrip::walk(
            &checker,
            &mut |findings| {
                for f in findings {
                    let i = match f.kind {
                        Kind::Lossy => 0,
                        Kind::Invalid => 1,
                        Kind::Failed => 2,
                    };
                    kinds[i].insert((f.namespace.clone(), f.name.clone()));
                    if first.len() < NAMED {
                        first.push(roundtrip::text_line(&f));
                    }
                }
            },
            &mut |_| {},
            &stop,
        )
        .await?;
        if roundtrip::changed_since(client, &target).await?.is_some() {
            return Ok(None);
        }
        Ok(Some(ConversionFindings {
            generation,
            objects: walked.objects - walked.gone,
            lossy: kinds[0].len() as u64,
            invalid: kinds[1].len() as u64,
            failed: kinds[2].len() as u64,
            first,
        }))
    }
    .await;
    match result {
        Ok(Some(f)) => {
            tracing::info!(
                crd = name,
                objects = f.objects,
                lossy = f.lossy,
                invalid = f.invalid,
                failed = f.failed,
                seconds = started.elapsed().as_secs_f64(),
                "conversion round trips done"
            );
            Some(Conversions::Checked(f))
        }
        Ok(None) => None,
        Err(e) => {
            let forbidden = matches!(&e, RoundtripError::Api { source, .. }
                if crate::cluster::client::status_code(source) == Some(403));
            tracing::warn!(crd = name, error = %e, "the conversion round trips could not run; tried again later");
            Some(Conversions::Failed {
                forbidden,
                message: e.to_string(),
            })
        }
    }
}
