//! Writing the policy reports (`policyReports: true`; see `policy_report` for what they say),
//! to OpenReports or `wgpolicyk8s.io/v1alpha2` as `policyReportsApi` says: one writer per
//! API. With `auto`, the OpenReports writer tells the other whether OpenReports is served
//! (its LIST succeeds); the `wgpolicyk8s.io` writer writes only while it is not, and deletes
//! the reports it wrote once it is (a cluster that installs OpenReports moves over). Each
//! writer LISTs the
//! reports crd-audit manages (label `app.kubernetes.io/managed-by: crd-audit`, name
//! `crd-audit`), then keeps them in step with the audits: a report is applied (server-side
//! apply, field manager `crd-audit`, through the write limit) only when its content changed,
//! and deleted when it has no result left. The LIST is repeated every `RESYNC` (a report
//! deleted or edited behind the operator's back is written again).
//!
//! crd-audit never installs the report CRDs (Kyverno ships its own, v1alpha2 only, under
//! the same name). While they are not served, or while crd-audit may not read or write the
//! reports, it says so in a warning and tries again with backoff; the SchemaAudit reports
//! are written by another task and go on regardless.

use super::controller::Ctx;
use super::policy_report::{
    self, Content, CrdAudit, Limits, MANAGED_BY, POLICY, Placement, REPORT_NAME, ReportApi,
};
use crate::audit::config::PolicyReportsApi;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;
use tokio::time::Instant;

const FIELD_MANAGER: &str = "crd-audit";
/// The LIST again, to find reports deleted or changed by someone else.
const RESYNC: Duration = Duration::from_secs(300);
/// Backoff of the LIST (CRDs not installed, forbidden, server errors) and of each report's
/// writes.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_LIST_BACKOFF: Duration = Duration::from_secs(300);
const MAX_WRITE_BACKOFF: Duration = Duration::from_secs(60);
/// Recompute at least this often even when nothing seems to have changed.
const RECHECK: Duration = Duration::from_secs(60);

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

fn fingerprint(ctx: &Ctx) -> Fingerprint {
    ctx.registry()
        .iter()
        .map(|(name, t)| {
            (
                name.clone(),
                t.epoch,
                t.audited,
                t.audit.validations,
                t.audit.invalid_count(),
                t.audited_at.as_ref().map(|a| a.0.to_string()),
            )
        })
        .collect()
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

struct Writer {
    ctx: Arc<Ctx>,
    api: ReportApi,
    role: Role,
    /// `auto`: what is known of OpenReports (shared by the two writers).
    openreports: Arc<AtomicU8>,
    /// What the server holds, per placement; `None` until listed (again).
    written: Option<BTreeMap<Placement, Content>>,
    list_at: Instant,
    list_backoff: Duration,
    /// The last LIST found the API not served.
    not_served: bool,
    resync_at: Instant,
    /// Per placement: when a failed write may be tried again, and the next backoff.
    retry: BTreeMap<Placement, (Instant, Duration)>,
    last: Option<(Fingerprint, u8)>,
    recheck_at: Instant,
    limits: Limits,
}

/// Writes the policy reports while the controller runs, to the APIs `policyReportsApi` says.
pub async fn write_policy_reports(ctx: Arc<Ctx>) {
    let openreports = Arc::new(AtomicU8::new(UNKNOWN));
    let writers = match ctx.config.policy_reports_api {
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
        let mut w = Writer::new(
            ctx.clone(),
            api,
            role,
            openreports.clone(),
            Limits::default(),
        );
        async move { w.run().await }
    });
    futures::future::join_all(runs).await;
}

impl Writer {
    fn new(
        ctx: Arc<Ctx>,
        api: ReportApi,
        role: Role,
        openreports: Arc<AtomicU8>,
        limits: Limits,
    ) -> Writer {
        let now = Instant::now();
        Writer {
            ctx,
            api,
            role,
            openreports,
            written: None,
            list_at: now,
            list_backoff: FIRST_BACKOFF,
            not_served: false,
            resync_at: now,
            retry: BTreeMap::new(),
            last: None,
            recheck_at: now,
            limits,
        }
    }

    async fn run(&mut self) {
        loop {
            tokio::select! {
                _ = self.ctx.policy_changed.notified() => {}
                _ = tokio::time::sleep(Duration::from_secs(2)) => {}
            }
            // Let a burst of changes settle into one write.
            tokio::time::sleep(Duration::from_millis(200)).await;
            self.pass().await;
        }
    }

    /// One round: LIST when needed, rebuild the reports when the audits changed, write those
    /// that differ from what the server holds.
    async fn pass(&mut self) {
        if !self.ctx.crds_listed.load(Ordering::Relaxed) {
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
                    self.list_backoff = FIRST_BACKOFF;
                    self.resync_at = now + RESYNC;
                    self.last = None;
                    if self.role == Role::Preferred {
                        self.openreports.store(SERVED, Ordering::Relaxed);
                    }
                }
                Err(f) => {
                    self.written = None;
                    if self.role == Role::Preferred
                        && matches!(f, Failure::NotServed(_) | Failure::Forbidden(_))
                    {
                        self.openreports.store(NOT_USABLE, Ordering::Relaxed);
                    }
                    self.list_failed(f);
                    return;
                }
            }
        }
        let print = (fingerprint(&self.ctx), openreports);
        let pending = !self.retry.is_empty();
        if self.last.as_ref() == Some(&print) && !pending && now < self.recheck_at {
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
            let reg = self.ctx.registry();
            let inputs = reg.values().map(|t| CrdAudit {
                name: &t.crd().name,
                group: &t.crd().group,
                kind: &t.crd().kind,
                audit: &t.audit,
                audited: t.audited,
            });
            policy_report::desired(inputs, written, unix_now, self.limits)
        };
        self.last = Some(print);
        self.recheck_at = now + RECHECK;
        let placements: BTreeSet<Placement> =
            desired.keys().chain(written.keys()).cloned().collect();
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
            Api::all_with(self.ctx.client.clone(), &ar)
        } else {
            Api::namespaced_with(self.ctx.client.clone(), placement, &ar)
        };
        self.ctx.limiter.acquire().await;
        let result = match want {
            Some(content) => {
                self.ctx.metrics.api_write("patch");
                let params = PatchParams::apply(FIELD_MANAGER).force();
                let body = content.object(placement, self.api);
                api.patch(REPORT_NAME, &params, &Patch::Apply(&body))
                    .await
                    .map(|_| ())
                    .map_err(|e| {
                        self.ctx.metrics.api_error("patch");
                        failure(&e)
                    })
            }
            None => {
                self.ctx.metrics.api_write("delete");
                match api.delete(REPORT_NAME, &DeleteParams::default()).await {
                    Ok(_) => Ok(()),
                    // Already gone (deleted by someone, or with its namespace).
                    Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
                    Err(e) => {
                        self.ctx.metrics.api_error("delete");
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
                let (_, backoff) = self
                    .retry
                    .get(placement)
                    .copied()
                    .unwrap_or((Instant::now(), FIRST_BACKOFF));
                let (group, plurals) = self.names();
                match f {
                    Failure::Forbidden(e) => {
                        tracing::warn!(%kind, namespace = %placement, error = %e, retry_in = ?backoff,
                        "writing the policy report is forbidden (grant create, patch, update and delete on {group} {plurals})")
                    }
                    Failure::NotServed(e) | Failure::Other(e) => {
                        tracing::warn!(%kind, namespace = %placement, error = %e, retry_in = ?backoff,
                        "writing the policy report failed")
                    }
                }
                self.retry.insert(
                    placement.clone(),
                    (
                        Instant::now() + backoff,
                        (backoff * 2).min(MAX_WRITE_BACKOFF),
                    ),
                );
                // A 404: the CRDs went away, or only this namespace did. A LIST tells which.
                if not_served && !self.served(placement.is_empty()).await {
                    self.written = None;
                    if self.role == Role::Preferred {
                        self.openreports.store(NOT_USABLE, Ordering::Relaxed);
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
        let reg = self.ctx.registry();
        ["ns", ""].iter().all(|placement| {
            reg.contains_key(&format!(
                "{}.{}",
                self.api.plural(placement),
                self.api.group()
            ))
        })
    }

    fn list_failed(&mut self, f: Failure) {
        self.not_served = matches!(f, Failure::NotServed(_));
        let retry_in = self.list_backoff;
        let api = self.api.api_version();
        let (group, plurals) = self.names();
        match f {
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
        self.list_backoff = (retry_in * 2).min(MAX_LIST_BACKOFF);
        self.retry.clear();
    }

    /// Whether the server still serves the reports of this kind (`false` only on a 404).
    async fn served(&self, cluster: bool) -> bool {
        let placement = if cluster { "" } else { "ns" };
        let api: Api<DynamicObject> =
            Api::all_with(self.ctx.client.clone(), &resource(self.api, placement));
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
                Api::all_with(self.ctx.client.clone(), &resource(self.api, placement));
            let mut token: Option<String> = None;
            loop {
                let mut params = ListParams::default()
                    .labels(&format!("{MANAGED_BY}={POLICY}"))
                    .limit(500);
                if let Some(t) = &token {
                    params = params.continue_token(t);
                }
                let page = api.list(&params).await.map_err(|e| {
                    self.ctx.metrics.api_error("list");
                    failure(&e)
                })?;
                for item in page.items {
                    let v = serde_json::to_value(item).unwrap_or_default();
                    if let Some((p, c)) = Content::read(&v)
                        && p.is_empty() == cluster
                    {
                        out.insert(p, c);
                    }
                }
                match page.metadata.continue_ {
                    Some(t) if !t.is_empty() => token = Some(t),
                    _ => break,
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::config::Config;
    use crate::audit::judge::judge;
    use crate::operator::fake_api;
    use crate::operator::metrics::Metrics;
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
    async fn audited(objects: Vec<(&str, Vec<Value>)>) -> (Arc<Ctx>, fake_api::Shared) {
        audited_with(objects, PolicyReportsApi::Auto, false).await
    }

    /// [`audited`], writing to `api`, with OpenReports installed or not.
    async fn audited_with(
        objects: Vec<(&str, Vec<Value>)>,
        api: PolicyReportsApi,
        openreports: bool,
    ) -> (Arc<Ctx>, fake_api::Shared) {
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
        let ctx = Ctx::new(client, None, config, Arc::new(Metrics::new()), "test");
        for (name, scope) in [(THINGS, "Namespaced"), (NODES, "Cluster")] {
            crate::operator::reconcile::reconcile(&ctx, crd(name, scope)).await;
        }
        until("the audits", || {
            let reg = ctx.registry();
            reg.len() == 2 && reg.values().all(|t| t.audited)
        })
        .await;
        ctx.crds_listed.store(true, Ordering::Relaxed);
        (ctx, fake)
    }

    /// Judges `o` again as a watch event would, and wakes the writer.
    fn observe(ctx: &Ctx, crd: &str, o: Value) {
        let mut reg = ctx.registry();
        let t = reg.get_mut(crd).unwrap();
        let mut o = o;
        o["apiVersion"] = json!("example.com/v1");
        o["kind"] = json!(t.crd().kind.clone());
        let v =
            crd_audit_engine::CrdValidator::new(&t.revision.unpack().unwrap()).expect("compiles");
        let j = judge(&v, o, true, true);
        t.audit.record(j);
        drop(reg);
        ctx.policy_changed.notify_one();
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
        let (ctx, fake) = audited(vec![
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
        // A report of another tool in the same namespace is left alone.
        let foreign = json!({"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport",
            "metadata": {"name": "kyverno-pol", "namespace": "ns1", "labels": {MANAGED_BY: "kyverno"}},
            "results": [{"policy": "p", "result": "pass"}]});
        fake.lock()
            .unwrap()
            .policy_reports
            .insert(("ns1".into(), "kyverno-pol".into()), foreign.clone());
        let writer = tokio::spawn(write_policy_reports(ctx.clone()));
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
        let expected =
            ctx.registry()[THINGS].audit.invalid[&("ns1".into(), "a".into())].errors[0].clone();
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
        {
            let mut reg = ctx.registry();
            reg.get_mut(THINGS)
                .unwrap()
                .audit
                .forget(&("ns1".into(), "a".into()), "v1");
        }
        ctx.policy_changed.notify_one();
        until("a's result to go", || {
            report(&fake, "ns1").is_some_and(|r| names(&r) == vec!["b"])
        })
        .await;
        assert_eq!(report(&fake, "ns1").unwrap()["summary"]["fail"], 1);
        // The cluster-scoped CRD goes: the ClusterPolicyReport goes with its results.
        ctx.registry().remove(NODES);
        ctx.policy_changed.notify_one();
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
        let (ctx, fake) = audited(vec![
            ("things", vec![obj("ns1", "a", "large")]),
            ("nodes", vec![]),
        ])
        .await;
        let writer = tokio::spawn(write_policy_reports(ctx.clone()));
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
        let ctx2 = Ctx::new(client, None, config, Arc::new(Metrics::new()), "test2");
        crate::operator::reconcile::reconcile(&ctx2, crd(THINGS, "Namespaced")).await;
        until("the new audit", || {
            ctx2.registry().get(THINGS).is_some_and(|t| t.audited)
        })
        .await;
        ctx2.crds_listed.store(true, Ordering::Relaxed);
        let mut w = Writer::new(
            ctx2.clone(),
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
        ctx2.registry().get_mut(THINGS).unwrap().audited = false;
        ctx2.registry().get_mut(THINGS).unwrap().audit = Default::default();
        w.last = None;
        w.pass().await;
        assert_eq!(fake.lock().unwrap().policy_writes, writes);
    }

    /// The PolicyReport CRDs are not installed, then crd-audit may not write the reports:
    /// warnings and backoff, the SchemaAudit reports are written all the same, and the
    /// PolicyReports appear once the CRDs are there and writes are allowed.
    #[tokio::test(start_paused = true)]
    async fn missing_crds_and_refused_writes_are_retried_with_backoff() {
        let (ctx, fake) = audited(vec![
            ("things", vec![obj("ns1", "a", "large")]),
            ("nodes", vec![]),
        ])
        .await;
        fake.lock().unwrap().policy_crds_missing = true;
        let writer = tokio::spawn(write_policy_reports(ctx.clone()));
        let reports = tokio::spawn(crate::operator::report_writer::run(ctx.clone()));
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
        let (ctx, fake) = audited(vec![
            (
                "things",
                vec![obj("ns1", "a", "large"), obj("ns2", "b", "large")],
            ),
            ("nodes", vec![obj("", "n", "large")]),
        ])
        .await;
        fake.lock().unwrap().missing_namespaces = vec!["ns1".into()];
        let writer = tokio::spawn(write_policy_reports(ctx.clone()));
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
        let (ctx, fake) = audited(vec![
            ("things", vec![obj("ns1", "a", "large")]),
            ("nodes", vec![obj("", "n1", "huge")]),
        ])
        .await;
        let writer = tokio::spawn(write_policy_reports(ctx.clone()));
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
        let (ctx, fake) = audited_with(objects(), PolicyReportsApi::Both, true).await;
        let writer = tokio::spawn(write_policy_reports(ctx.clone()));
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

        let (ctx, fake) = audited_with(objects(), PolicyReportsApi::OpenReports, false).await;
        let writer = tokio::spawn(write_policy_reports(ctx.clone()));
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
}
