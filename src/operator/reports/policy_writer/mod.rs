//! Writing the policy reports (`policyReports: true`; see `reports::policy` for what they say),
//! to OpenReports or `wgpolicyk8s.io/v1alpha2` as `policyReportsApi` says: one writer per
//! API. With `auto`, the OpenReports writer tells the other whether OpenReports is served
//! (its LIST succeeds); the `wgpolicyk8s.io` writer writes only while it is not, and deletes
//! the reports it wrote once it is (a cluster that installs OpenReports moves over). Each
//! writer LISTs the
//! reports crd-audit manages (label `app.kubernetes.io/managed-by: crd-audit`, name
//! `crd-audit`), then keeps them in step with the audits: a report is applied (server-side
//! apply, field manager `crd-audit`, through the write limit) only when its content changed,
//! and deleted when it has no result left. A writer is woken by what it looks at changing
//! (a CRD's state, the first LIST of CRDs, what `auto` knows of OpenReports), its failed
//! requests' retries, and the LIST again every `fullResyncInterval` (a report deleted or
//! edited behind the operator's back is written again then, as the objects are listed
//! again): at rest nothing else runs.
//!
//! crd-audit never installs the report CRDs (Kyverno ships its own, v1alpha2 only, under
//! the same name). While they are not served, or while crd-audit may not read or write the
//! reports, it says so in a warning and tries again with backoff; the SchemaAudit reports
//! are written by another task and go on regardless.

use crate::audit::config::PolicyReportsApi;
use crate::cluster::backoff::Backoff;
use crate::cluster::pages::each_listed;
use crate::cluster::write_budget::Writes;
use crate::operator::metrics::Metrics;
use crate::operator::reports::policy::{
    self as policy_report, Content, CrdAudit, Limits, MANAGED_BY, POLICY, Placement, REPORT_NAME,
    ReportApi,
};
use crate::operator::state::CrdStates;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;
use tokio::time::Instant;

const FIELD_MANAGER: &str = "crd-audit";
/// How long a writer woken by a change waits for the changes that come with it.
const SETTLE: Duration = Duration::from_millis(200);
/// The shortest sleep until a writer's own deadline.
const MIN_WAIT: Duration = Duration::from_secs(1);

/// The resource of the report of a placement (`""`: the cluster-wide one) in `api`.
pub fn resource(api: ReportApi, placement: &str) -> ApiResource {
    ApiResource {
        group: api.group().into(),
        version: api.version().into(),
        api_version: api.api_version(),
        kind: api.kind(placement).into(),
        plural: api.plural(placement).into(),
    }
}

/// What `auto` knows of OpenReports, shared by its two writers.
const UNKNOWN: u8 = 0;
const SERVED: u8 = 1;
/// Not installed, or crd-audit may not use it.
const NOT_USABLE: u8 = 2;

/// What a writer does with its API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Writes its API's reports.
    Write,
    /// `auto`, OpenReports: writes, and says whether OpenReports is usable.
    Preferred,
    /// `auto`, `wgpolicyk8s.io`: writes while OpenReports is not usable; once it is, deletes
    /// the reports it wrote.
    Fallback,
}

/// What changes in the registry when a report could change: cheap to compute, compared
/// between passes so that the reports are rebuilt only when needed.
type Fingerprint = Vec<(String, u64, bool, u64, usize, Option<String>)>;

fn fingerprint(states: &CrdStates) -> Fingerprint {
    states.read_all(|tracked| {
        tracked
            .iter()
            .map(|(name, t)| {
                (
                    name.clone(),
                    t.epoch(),
                    t.audited(),
                    t.audit().validations,
                    t.audit().invalid_count(),
                    t.audited_at().map(|a| a.0.to_string()),
                )
            })
            .collect()
    })
}

/// Why a LIST or a write failed.
enum Failure {
    /// The resource is not served: the CRDs are not installed (or not at v1alpha2).
    NotServed(String),
    Forbidden(String),
    Other(String),
}

fn failure(e: &kube::Error) -> Failure {
    let text = crate::cluster::client::describe(e);
    match crate::cluster::client::status_code(e) {
        Some(404) => Failure::NotServed(text),
        Some(403) => Failure::Forbidden(text),
        _ => Failure::Other(text),
    }
}

/// What the policy report writers of a leadership term use: the client and its metrics,
/// their share of the write budget, the tracked CRDs' states they read, and what the
/// configuration says of them.
#[derive(Clone)]
pub struct PolicyWriters {
    pub client: kube::Client,
    pub metrics: Arc<Metrics>,
    /// Their writes, after the reports and Events in the write budget's line.
    pub writes: Writes,
    pub states: Arc<CrdStates>,
    /// `policyReportsApi`.
    pub api: PolicyReportsApi,
    /// `fullResyncInterval`: the reports are listed again this often.
    pub resync: Duration,
}

struct Writer {
    h: PolicyWriters,
    api: ReportApi,
    role: Role,
    /// `auto`: what is known of OpenReports (shared by the two writers).
    openreports: Arc<AtomicU8>,
    /// What the server holds, per placement; `None` until listed (again).
    written: Option<BTreeMap<Placement, Content>>,
    list_at: Instant,
    list_backoff: Backoff,
    /// The last LIST found the API not served.
    not_served: bool,
    resync_at: Instant,
    /// The LIST again after this (`fullResyncInterval`), to find reports deleted or changed
    /// by someone else.
    resync: Duration,
    /// Per placement: when a failed write may be tried again, and its backoff.
    retry: BTreeMap<Placement, (Instant, Backoff)>,
    last: Option<(Fingerprint, u8)>,
    limits: Limits,
    /// Moves when something this writer looks at changes (`CrdStates::policy_changes`).
    changes: tokio::sync::watch::Receiver<u64>,
}

/// Writes the policy reports while the controller runs, to the APIs `policyReportsApi` says.
pub async fn write_policy_reports(h: PolicyWriters) {
    let openreports = Arc::new(AtomicU8::new(UNKNOWN));
    let writers = match h.api {
        PolicyReportsApi::OpenReports => vec![(ReportApi::OpenReports, Role::Write)],
        PolicyReportsApi::WgPolicy => vec![(ReportApi::WgPolicy, Role::Write)],
        PolicyReportsApi::Both => vec![
            (ReportApi::OpenReports, Role::Write),
            (ReportApi::WgPolicy, Role::Write),
        ],
        PolicyReportsApi::Auto => vec![
            (ReportApi::OpenReports, Role::Preferred),
            (ReportApi::WgPolicy, Role::Fallback),
        ],
    };
    let runs = writers.into_iter().map(|(api, role)| {
        let mut w = Writer::new(h.clone(), api, role, openreports.clone(), Limits::default());
        async move { w.run().await }
    });
    futures::future::join_all(runs).await;
}

impl Writer {
    fn new(
        h: PolicyWriters,
        api: ReportApi,
        role: Role,
        openreports: Arc<AtomicU8>,
        limits: Limits,
    ) -> Writer {
        let now = Instant::now();
        Writer {
            api,
            role,
            openreports,
            written: None,
            list_at: now,
            list_backoff: crate::cluster::backoff::SLOW.backoff(),
            not_served: false,
            resync_at: now,
            resync: h.resync,
            retry: BTreeMap::new(),
            last: None,
            limits,
            changes: h.states.policy_changes(),
            h,
        }
    }

    async fn run(&mut self) {
        loop {
            let wait = self.idle_wait(Instant::now());
            tokio::select! {
                moved = self.changes.changed() => {
                    if moved.is_err() {
                        return; // the operator's context is gone
                    }
                }
                _ = tokio::time::sleep(wait.unwrap_or_default()), if wait.is_some() => {}
            }
            // Let a burst of changes settle into one write.
            tokio::time::sleep(SETTLE).await;
            self.changes.mark_unchanged();
            self.pass().await;
        }
    }

    /// `auto`: what this writer (the preferred one) learned of OpenReports; the other writer
    /// is woken when it is news.
    fn learned(&self, openreports: u8) {
        if self.openreports.swap(openreports, Ordering::Relaxed) != openreports {
            self.h.states.policy_api_changed();
        }
    }

    /// How long the writer sleeps when nothing it looks at changes: until the first of its
    /// own deadlines (the LIST again or its retry, a failed write's retry); `None`: until a
    /// change wakes it.
    fn idle_wait(&self, now: Instant) -> Option<Duration> {
        // Waiting for the first LIST of CRDs, or for the other writer to learn whether
        // OpenReports is usable: both wake it when they come (`CrdStates::policy_changes`).
        let waiting = !self.h.states.listed()
            || (self.role == Role::Fallback && self.openreports.load(Ordering::Relaxed) == UNKNOWN);
        if waiting {
            return None;
        }
        let mut at = if self.written.is_none() {
            self.list_at
        } else {
            self.resync_at
        };
        for (retry_at, _) in self.retry.values() {
            at = at.min(*retry_at);
        }
        // A deadline that a pass left in the past (whatever the reason) is tried again a
        // second later at the soonest, never in a loop.
        Some(at.saturating_duration_since(now).max(MIN_WAIT))
    }

    /// One round: LIST when needed, rebuild the reports when the audits changed, write those
    /// that differ from what the server holds.
    async fn pass(&mut self) {
        if !self.h.states.listed() {
            return;
        }
        // `auto`: the wgpolicyk8s.io writer waits until OpenReports is known to be usable or
        // not.
        let openreports = self.openreports.load(Ordering::Relaxed);
        if self.role == Role::Fallback && openreports == UNKNOWN {
            return;
        }
        let now = Instant::now();
        if self.written.is_none() || now >= self.resync_at {
            if now < self.list_at && !(self.not_served && self.crds_seen()) {
                return;
            }
            match self.list().await {
                Ok(w) => {
                    if self.written.is_none() {
                        tracing::info!(api = %self.api.api_version(), reports = w.len(), "writing {}s", self.api.kind("ns"));
                    }
                    self.written = Some(w);
                    self.not_served = false;
                    self.list_backoff.reset();
                    self.resync_at = now + self.resync;
                    self.last = None;
                    if self.role == Role::Preferred {
                        self.learned(SERVED);
                    }
                }
                Err(f) => {
                    self.written = None;
                    if self.role == Role::Preferred
                        && matches!(f, Failure::NotServed(_) | Failure::Forbidden(_))
                    {
                        self.learned(NOT_USABLE);
                    }
                    self.list_failed(f);
                    return;
                }
            }
        }
        let print = (fingerprint(&self.h.states), openreports);
        let pending = !self.retry.is_empty();
        if self.last.as_ref() == Some(&print) && !pending {
            return;
        }
        let Some(written) = self.written.as_ref() else {
            return;
        };
        let desired = if self.role == Role::Fallback && openreports == SERVED {
            // OpenReports took over: the reports written here go.
            BTreeMap::new()
        } else {
            let unix_now = k8s_openapi::jiff::Timestamp::now().as_second();
            let limits = self.limits;
            self.h.states.read_all(|tracked| {
                let inputs = tracked.values().map(|t| CrdAudit {
                    name: &t.crd().name,
                    group: &t.crd().group,
                    kind: &t.crd().kind,
                    audit: t.audit(),
                    audited: t.audited(),
                });
                policy_report::desired(inputs, written, unix_now, limits)
            })
        };
        self.last = Some(print);
        let placements: BTreeSet<Placement> =
            desired.keys().chain(written.keys()).cloned().collect();
        // A failed write whose report is neither wanted nor written any more is not retried.
        self.retry.retain(|p, _| placements.contains(p));
        for placement in placements {
            if !self.write(&placement, desired.get(&placement)).await {
                return;
            }
        }
    }

    /// Brings one report in line; `false` when the reports are not served any more (the pass
    /// stops; the next ones LIST again, with backoff).
    async fn write(&mut self, placement: &Placement, want: Option<&Content>) -> bool {
        let Some(written) = self.written.as_ref() else {
            return false;
        };
        if written.get(placement) == want {
            self.retry.remove(placement);
            return true;
        }
        if let Some((at, _)) = self.retry.get(placement)
            && Instant::now() < *at
        {
            return true;
        }
        let ar = resource(self.api, placement);
        let api: Api<DynamicObject> = if placement.is_empty() {
            Api::all_with(self.h.client.clone(), &ar)
        } else {
            Api::namespaced_with(self.h.client.clone(), placement, &ar)
        };
        self.h.writes.turn().await;
        let result = match want {
            Some(content) => {
                self.h.metrics.api_write("patch");
                let params = PatchParams::apply(FIELD_MANAGER).force();
                let body = content.object(placement, self.api);
                api.patch(REPORT_NAME, &params, &Patch::Apply(&body))
                    .await
                    .map(|_| ())
                    .map_err(|e| {
                        self.h.metrics.api_error("patch");
                        failure(&e)
                    })
            }
            None => {
                self.h.metrics.api_write("delete");
                match api.delete(REPORT_NAME, &DeleteParams::default()).await {
                    Ok(_) => Ok(()),
                    // Already gone (deleted by someone, or with its namespace).
                    Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
                    Err(e) => {
                        self.h.metrics.api_error("delete");
                        Err(failure(&e))
                    }
                }
            }
        };
        let kind = ar.kind;
        match result {
            Ok(()) => {
                let written = self.written.get_or_insert_with(BTreeMap::new);
                match want {
                    Some(c) => {
                        tracing::debug!(%kind, namespace = %placement, results = c.results.len(), "report written");
                        written.insert(placement.clone(), c.clone());
                    }
                    None => {
                        tracing::info!(%kind, namespace = %placement, "no result left; report deleted");
                        written.remove(placement);
                    }
                }
                self.retry.remove(placement);
                true
            }
            Err(f) => {
                let not_served = matches!(f, Failure::NotServed(_)) && want.is_some();
                let mut backoff = self
                    .retry
                    .remove(placement)
                    .map_or_else(|| crate::cluster::backoff::API_CALL.backoff(), |(_, b)| b);
                let wait = backoff.next_delay();
                let (group, plurals) = self.names();
                match f {
                    Failure::Forbidden(e) => {
                        tracing::warn!(%kind, namespace = %placement, error = %e, retry_in = ?wait,
                        "writing the policy report is forbidden (grant create, patch, update and delete on {group} {plurals})")
                    }
                    Failure::NotServed(e) | Failure::Other(e) => {
                        tracing::warn!(%kind, namespace = %placement, error = %e, retry_in = ?wait,
                        "writing the policy report failed")
                    }
                }
                self.retry
                    .insert(placement.clone(), (Instant::now() + wait, backoff));
                // A 404: the CRDs went away, or only this namespace did. A LIST tells which.
                if not_served && !self.served(placement.is_empty()).await {
                    self.written = None;
                    if self.role == Role::Preferred {
                        self.learned(NOT_USABLE);
                    }
                    self.list_failed(Failure::NotServed(format!(
                        "{} {} are no longer served",
                        self.api.api_version(),
                        self.names().1
                    )));
                    return false;
                }
                true
            }
        }
    }

    /// The API group and the resources of this writer's reports, for messages.
    fn names(&self) -> (&'static str, String) {
        let api = self.api;
        (
            api.group(),
            format!("{} and {}", api.plural("ns"), api.plural("")),
        )
    }

    /// Whether the CRD watch has seen both of this API's CRDs (audited like any other): a
    /// writer that found them missing LISTs again at once instead of waiting out its backoff.
    fn crds_seen(&self) -> bool {
        ["ns", ""].iter().all(|placement| {
            self.h.states.tracks(&format!(
                "{}.{}",
                self.api.plural(placement),
                self.api.group()
            ))
        })
    }

    fn list_failed(&mut self, f: Failure) {
        // Said once when the CRDs are found missing, not at every retry while they stay so.
        let known = self.not_served;
        self.not_served = matches!(f, Failure::NotServed(_));
        let retry_in = self.list_backoff.next_delay();
        let api = self.api.api_version();
        let (group, plurals) = self.names();
        match f {
            Failure::NotServed(e) if known => {
                tracing::debug!(error = %e, ?retry_in, %api, "the policy report CRDs are still not served")
            }
            // `auto` finds OpenReports missing: expected, the other writer takes over.
            Failure::NotServed(e) if self.role == Role::Preferred => {
                tracing::info!(error = %e, ?retry_in,
                "OpenReports ({api} {plurals}) is not installed; the policy reports go to wgpolicyk8s.io/v1alpha2 while it is not")
            }
            Failure::NotServed(e) => tracing::warn!(error = %e, ?retry_in,
                "the {} CRDs ({api} {plurals}) are not installed; crd-audit does not install them (Kyverno or Policy Reporter do) and writes no reports there until they are served", self.api.kind("ns")),
            Failure::Forbidden(e) => tracing::warn!(error = %e, ?retry_in,
                "crd-audit may not read the policy reports (grant get, list, create, patch, update, delete on {group} {plurals})"),
            Failure::Other(e) => {
                tracing::warn!(error = %e, ?retry_in, %api, "listing the policy reports failed")
            }
        }
        self.list_at = Instant::now() + retry_in;
        self.retry.clear();
    }

    /// Whether the server still serves the reports of this kind (`false` only on a 404).
    async fn served(&self, cluster: bool) -> bool {
        let placement = if cluster { "" } else { "ns" };
        let api: Api<DynamicObject> =
            Api::all_with(self.h.client.clone(), &resource(self.api, placement));
        !matches!(
            api.list(&ListParams::default().limit(1)).await,
            Err(kube::Error::Api(s)) if s.code == 404
        )
    }

    /// The reports crd-audit manages, as the server holds them.
    async fn list(&self) -> Result<BTreeMap<Placement, Content>, Failure> {
        let mut out = BTreeMap::new();
        for cluster in [true, false] {
            let placement = if cluster { "" } else { "ns" };
            let api: Api<DynamicObject> =
                Api::all_with(self.h.client.clone(), &resource(self.api, placement));
            let params = ListParams::default()
                .labels(&format!("{MANAGED_BY}={POLICY}"))
                .limit(500);
            each_listed(&api, params, |item| {
                let v = serde_json::to_value(item).unwrap_or_default();
                if let Some((p, c)) = Content::read(&v)
                    && p.is_empty() == cluster
                {
                    out.insert(p, c);
                }
            })
            .await
            .map_err(|e| {
                self.h.metrics.api_error("list");
                failure(&e)
            })?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
