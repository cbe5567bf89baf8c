//! One admission review of a CRD change: decide whether it needs judging, read the stored
//! objects of each changed version page by page (the next page is read while this one is
//! judged, on a blocking thread), stop at `gateBudget`, and answer (allowed, warned or
//! denied). The gate writes nothing.

use super::judgement::{self, Answer, Decision, Judges, Tally};
use super::{GateError, GateMetrics, VerdictLabels};
use crate::audit::config::{Config, GateMode};
use crate::cluster::resources::{object_resource, object_value};
use crate::judging_pool::JudgingPool;
use crate::release::KubeVersion;
use futures::StreamExt;
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Objects read in one LIST page.
const PAGE: u32 = 500;

/// The most a version's objects may take (as JSON, estimated from its first page) to be read
/// at once from the API server's cache.
const CACHED_LIST_MAX_BYTES: usize = 8 << 20;

/// Changes judged at once (each holds two compiled revisions and a page or two of objects);
/// a helm upgrade of a provider's 2,000 CRDs waits its turn, within each request's budget.
const AT_ONCE: usize = 2;

/// How long the API server's release is taken as known.
const RELEASE_KEPT: Duration = Duration::from_secs(600);

/// What the gate needs: a client to read stored objects, the configuration, metrics.
pub struct Gate {
    pub client: kube::Client,
    pub config: Config,
    pub metrics: GateMetrics,
    release: Mutex<Option<(Instant, KubeVersion)>>,
    /// Turns of the reviews that judge stored objects (`AT_ONCE`).
    judging: tokio::sync::Semaphore,
    /// The blocking threads the judging runs on: the operator's pool.
    pool: JudgingPool,
}

/// How a review ended, as the verdict metric counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Allowed,
    Warned,
    Denied,
    Timeout,
    Error,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Allowed => "allowed",
            Verdict::Warned => "warned",
            Verdict::Denied => "denied",
            Verdict::Timeout => "timeout",
            Verdict::Error => "error",
        }
    }
}

impl Gate {
    pub fn new(
        client: kube::Client,
        config: Config,
        metrics: GateMetrics,
        pool: JudgingPool,
    ) -> Gate {
        Gate {
            client,
            config,
            metrics,
            release: Mutex::new(None),
            judging: tokio::sync::Semaphore::new(AT_ONCE),
            pool,
        }
    }

    /// Runs engine work in the pool; a panic is this review's error.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, GateError> {
        self.pool.run(f).await.map_err(GateError::Judging)
    }

    /// The API server's release, read again every ten minutes.
    async fn release(&self) -> KubeVersion {
        let kept = self.release.lock().ok().and_then(|r| *r);
        if let Some((at, r)) = kept
            && at.elapsed() < RELEASE_KEPT
        {
            return r;
        }
        let r = crate::release::of_cluster(&self.client).await;
        if let Ok(mut kept) = self.release.lock() {
            *kept = Some((Instant::now(), r));
        }
        r
    }

    /// Answers one AdmissionReview (its JSON body): the response review, and the verdict.
    pub async fn review(&self, body: &[u8]) -> (AdmissionReview<DynamicObject>, Verdict) {
        let started = Instant::now();
        let request: Result<AdmissionRequest<DynamicObject>, GateError> =
            serde_json::from_slice::<AdmissionReview<DynamicObject>>(body)
                .map_err(GateError::NotAReview)
                .and_then(|r| r.try_into().map_err(GateError::NoRequest));
        let request = match request {
            Ok(r) => r,
            Err(e) => {
                let verdict = Verdict::Error;
                self.count(verdict, started);
                return (AdmissionResponse::invalid(e).into_review(), verdict);
            }
        };
        let deadline = started + self.config.gate_budget;
        let (response, verdict) = match self.answer(&request, deadline).await {
            Ok(Some(a)) => respond(&request, a),
            Ok(None) => (AdmissionResponse::from(&request), Verdict::Allowed),
            Err(e) => {
                tracing::warn!(crd = %request.name, error = %e, "the gate could not judge a CRD change; allowed");
                let mut r = AdmissionResponse::from(&request);
                r.warnings = Some(vec![format!(
                    "crd-audit: the stored objects could not be judged: {e}"
                )]);
                (r, Verdict::Error)
            }
        };
        self.count(verdict, started);
        if verdict != Verdict::Allowed {
            tracing::info!(
                crd = %request.name,
                verdict = verdict.label(),
                dry_run = request.dry_run,
                seconds = started.elapsed().as_secs_f64(),
                "judged a CRD change"
            );
        }
        (response.into_review(), verdict)
    }

    fn count(&self, verdict: Verdict, started: Instant) {
        self.metrics
            .requests
            .get_or_create(&VerdictLabels {
                verdict: verdict.label().into(),
            })
            .inc();
        self.metrics
            .duration
            .observe(started.elapsed().as_secs_f64());
    }

    /// The answer to a request: `None` when it needs no judging.
    async fn answer(
        &self,
        request: &AdmissionRequest<DynamicObject>,
        deadline: Instant,
    ) -> Result<Option<Answer>, GateError> {
        let (Some(proposed), current) = (&request.object, &request.old_object) else {
            return Ok(None);
        };
        let operation = match request.operation {
            kube::core::admission::Operation::Update => judgement::UPDATE,
            _ => return Ok(None),
        };
        let to_value = |o: &DynamicObject| serde_json::to_value(o).map_err(GateError::Unreadable);
        let proposed = to_value(proposed)?;
        let current = current.as_ref().map(to_value).transpose()?;
        let config = self.config.clone();
        let decision = self
            .blocking(move || judgement::decide(operation, current.as_ref(), &proposed, &config))
            .await??;
        let change = match decision {
            Decision::Allow => return Ok(None),
            Decision::Judge(c) => Arc::new(*c),
        };
        let at = tokio::time::Instant::from_std(deadline);
        let Ok(Ok(_turn)) = tokio::time::timeout_at(at, self.judging.acquire()).await else {
            // Other changes took the whole budget: nothing judged.
            return Ok(Some(judgement::answer(
                &change,
                &[],
                false,
                self.config.gate,
            )));
        };
        // Read within the budget: a server that does not say its release is an error of
        // this review (allowed), not a guess.
        let release = tokio::time::timeout_at(at, self.release())
            .await
            .map_err(|_| GateError::VersionTimeout)?;
        let (c, config) = (change.clone(), self.config.clone());
        // The judging pool is the audits' too: its turn is awaited within the budget.
        let compiled = tokio::time::timeout_at(
            at,
            self.blocking(move || Judges::compile(&c, release, &config)),
        )
        .await;
        let Ok(compiled) = compiled else {
            return Ok(Some(judgement::answer(
                &change,
                &[],
                false,
                self.config.gate,
            )));
        };
        let judges = Arc::new(compiled??);
        let mut tallies = Vec::new();
        let mut finished = true;
        for version in &change.versions {
            let (tally, done) = self
                .judge_version(&change, version, &judges, deadline)
                .await?;
            tallies.push(tally);
            if !done {
                finished = false;
                break;
            }
        }
        Ok(Some(judgement::answer(
            &change,
            &tallies,
            finished,
            self.config.gate,
        )))
    }

    /// Judges the stored objects of one version until the deadline: its tally, and whether
    /// every object was judged.
    async fn judge_version(
        &self,
        change: &Arc<judgement::Change>,
        version: &str,
        judges: &Arc<Judges>,
        deadline: Instant,
    ) -> Result<(Tally, bool), GateError> {
        let resource = object_resource(&change.current, version);
        let api: Api<DynamicObject> = Api::all_with(self.client.clone(), &resource);
        // Pages are read while earlier ones are judged, two at a time on blocking threads.
        let (pages, received) = tokio::sync::mpsc::channel::<Result<Page, GateError>>(2);
        let lister = tokio::spawn(list_pages(api, resource, pages));
        let (judges, config) = (judges.clone(), self.config.clone());
        let judged = futures::stream::unfold(received, |mut rx| async move {
            rx.recv().await.map(|page| (page, rx))
        })
        .map(move |page| {
            let (judges, config) = (judges.clone(), config.clone());
            async move {
                let page = page?;
                let (read, remaining) = (page.items.len(), page.remaining);
                let outcomes = self
                    .blocking(move || {
                        page.items
                            .into_iter()
                            .filter(|o| {
                                let ns = o.pointer("/metadata/namespace").and_then(|n| n.as_str());
                                ns.is_none_or(|ns| config.audits_namespace(ns))
                            })
                            .map(|o| judges.judge(o))
                            .collect::<Vec<_>>()
                    })
                    .await?;
                Ok::<_, GateError>((read, remaining, outcomes))
            }
        })
        .buffered(2);
        tokio::pin!(judged);
        let mut tally = Tally::new(version);
        let mut listed = 0;
        let deadline = tokio::time::Instant::from_std(deadline);
        let finished = loop {
            match tokio::time::timeout_at(deadline, judged.next()).await {
                Err(_) => break false,
                Ok(None) => break true,
                Ok(Some(page)) => {
                    let (read, remaining, outcomes) = page?;
                    listed += read;
                    tally.total = remaining.map(|r| listed + r);
                    outcomes.into_iter().for_each(|o| tally.add(o));
                }
            }
        };
        lister.abort();
        if finished {
            tally.total = Some(tally.judged);
        }
        Ok((tally, finished))
    }
}

struct Page {
    items: Vec<serde_json::Value>,
    /// Objects left to read after this page, when known.
    remaining: Option<usize>,
}

/// Reads a version's stored objects into `pages`. The first page comes from etcd (`limit`)
/// and says how many objects remain; when they are few enough to hold at once
/// ([`CACHED_LIST_MAX_BYTES`], estimated from the first page), the rest is read with one LIST
/// from the API server's watch cache (`resourceVersion=0`), which old servers answer several
/// times faster than pages from etcd; otherwise page by page.
async fn list_pages(
    api: Api<DynamicObject>,
    resource: kube::core::ApiResource,
    pages: tokio::sync::mpsc::Sender<Result<Page, GateError>>,
) {
    let key = |o: &serde_json::Value| {
        let meta = |k: &str| {
            o.pointer(&format!("/metadata/{k}"))
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string()
        };
        (meta("namespace"), meta("name"))
    };
    let mut params = ListParams::default().limit(PAGE);
    let mut first = true;
    loop {
        let page = match api.list(&params).await {
            Ok(p) => p,
            Err(e) => {
                let _ = pages.send(Err(GateError::List(e))).await;
                return;
            }
        };
        let next = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        let remaining = page
            .metadata
            .remaining_item_count
            .and_then(|n| usize::try_from(n).ok());
        let items: Vec<serde_json::Value> = page
            .items
            .into_iter()
            .map(|o| object_value(o, &resource))
            .collect();
        let from_cache = first
            && next.is_some()
            && !items.is_empty()
            && remaining.is_some_and(|r| {
                let bytes: usize = items
                    .iter()
                    .map(|o| serde_json::to_vec(o).map_or(0, |v| v.len()))
                    .sum();
                bytes.saturating_mul(r) / items.len() <= CACHED_LIST_MAX_BYTES
            });
        let seen: std::collections::HashSet<(String, String)> = if from_cache {
            items.iter().map(key).collect()
        } else {
            Default::default()
        };
        if pages.send(Ok(Page { items, remaining })).await.is_err() {
            return; // the judging stopped
        }
        first = false;
        if from_cache {
            match api.list(&ListParams::default().at("0")).await {
                Ok(all) => {
                    let mut rest: Vec<serde_json::Value> = all
                        .items
                        .into_iter()
                        .map(|o| object_value(o, &resource))
                        .filter(|o| !seen.contains(&key(o)))
                        .collect();
                    // The cache answers in no order; pages from etcd come by namespace and
                    // name, and the first objects named should not depend on the path.
                    rest.sort_by_cached_key(key);
                    let mut left = rest.len();
                    let mut rest = rest.into_iter();
                    loop {
                        let items: Vec<_> = rest.by_ref().take(PAGE as usize).collect();
                        if items.is_empty() {
                            return;
                        }
                        left -= items.len();
                        let page = Page {
                            items,
                            remaining: Some(left),
                        };
                        if pages.send(Ok(page)).await.is_err() {
                            return;
                        }
                    }
                }
                // Page by page from etcd, then.
                Err(e) => tracing::debug!(error = %e, "the cached LIST failed; reading pages"),
            }
        }
        match next {
            Some(token) => params = params.continue_token(&token),
            None => return,
        }
    }
}

/// The response to a judged change, and its verdict.
fn respond(request: &AdmissionRequest<DynamicObject>, a: Answer) -> (AdmissionResponse, Verdict) {
    let mut r = AdmissionResponse::from(request);
    let verdict = if a.denial.is_some() {
        Verdict::Denied
    } else if a.unfinished {
        Verdict::Timeout
    } else if a.warnings.is_empty() {
        Verdict::Allowed
    } else {
        Verdict::Warned
    };
    if !a.warnings.is_empty() {
        r.warnings = Some(a.warnings);
    }
    if let Some(message) = a.denial {
        r = r.deny(message);
    }
    (r, verdict)
}

/// Whether a mode serves a gate at all.
pub fn serves(mode: GateMode) -> bool {
    mode != GateMode::Off
}

#[cfg(test)]
mod tests;
