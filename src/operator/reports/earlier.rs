//! What an earlier operator reported, read with one paged LIST instead of a GET per CRD.
//!
//! The first CRD seen for the first time lists every SchemaAudit (managed fields and
//! annotations dropped); each CRD's first reconcile takes its own report out of that list.
//! Once the first LIST of CRDs has been reconciled the rest is dropped: a CRD first seen after
//! that (created while the operator runs, or seen again after a relist) is read with a GET, as
//! is every CRD when the LIST fails. A report that cannot be decoded (written by hand, or by a
//! release with other required fields) is skipped with a warning naming it: the others are
//! still read from the list.
//!
//! A report's recorded revision (the CRD's schemas, tens of kilobytes of JSON, ten times that
//! decoded) is needed only when the CRD changed while no operator ran, to diff that change:
//! while they wait, the listed reports keep only the revision's generation, and the CRD whose
//! generation is another reads its report again, whole, with a GET. Holding the revisions (even
//! deflated) made a restart on 2,000 reports peak higher than a first start.

use crate::audit::schema_audit::SchemaAudit;
use crate::cluster::pages::each_listed;
use crate::operator::metrics::Metrics;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use std::collections::HashMap;
use tokio::sync::Mutex;

/// Reports per page of the LIST: a page is held whole, decoded, while it is read (a report
/// with its recorded revision decodes to about half a megabyte).
const PAGE: u32 = 20;

/// A listed report waiting for its CRD: the report without its recorded revision, and what the
/// revision said of the CRD's generation.
struct Waiting {
    report: SchemaAudit,
    recorded: Recorded,
}

/// What a listed report recorded of its CRD's revision.
#[derive(Debug, PartialEq)]
enum Recorded {
    /// No revision.
    Nothing,
    /// A revision of this generation.
    Generation(i64),
    /// A revision without a generation that can be read.
    Unreadable,
}

impl Waiting {
    fn new(mut report: SchemaAudit) -> Waiting {
        let recorded = match report.spec.audited_revision.take() {
            None => Recorded::Nothing,
            Some(r) => r
                .get("generation")
                .and_then(serde_json::Value::as_i64)
                .map_or(Recorded::Unreadable, Recorded::Generation),
        };
        Waiting { report, recorded }
    }

    /// The report as listed, when what it recorded is all the CRD at `generation` needs: its
    /// revision is of that generation (or it has none). `None`: read it whole.
    fn for_generation(self, generation: i64) -> Option<SchemaAudit> {
        match self.recorded {
            Recorded::Nothing => Some(self.report),
            Recorded::Generation(g) if g == generation => Some(self.report),
            _ => None,
        }
    }
}

#[derive(Default)]
enum State {
    /// Not listed yet.
    #[default]
    Unread,
    /// Listed; the reports no CRD has taken yet.
    Listed(HashMap<String, Waiting>),
    /// The first CRDs are done (or the LIST failed): a GET per CRD.
    Done,
}

/// The earlier reports, for the CRDs' first reconciles.
#[derive(Default)]
pub struct EarlierReports {
    state: Mutex<State>,
}

impl EarlierReports {
    /// The report an earlier operator wrote under `name`, if any (whichever CRD it was about),
    /// for the CRD of that name at `generation`. Its recorded revision is there when it is of
    /// another generation (the CRD changed while no operator ran); otherwise it may be left out.
    pub async fn take(
        &self,
        client: &kube::Client,
        metrics: &Metrics,
        name: &str,
        generation: i64,
    ) -> Option<SchemaAudit> {
        {
            let mut state = self.state.lock().await;
            if matches!(*state, State::Unread) {
                *state = match list(client).await {
                    Ok(reports) => State::Listed(reports),
                    Err(e) => {
                        metrics.api_error("list");
                        tracing::warn!(error = %e, "listing the earlier reports failed; reading them one by one");
                        State::Done
                    }
                };
            }
            if let State::Listed(reports) = &mut *state {
                let waiting = reports.remove(name)?;
                if let Some(report) = waiting.for_generation(generation) {
                    return Some(report);
                }
                // Its CRD changed while no operator ran: the recorded revision is read below.
            }
        }
        let api: Api<SchemaAudit> = Api::all(client.clone());
        match api.get_opt(name).await {
            Ok(r) => r,
            Err(e) => {
                metrics.api_error("get");
                tracing::warn!(crd = name, error = %e, "reading the earlier report failed");
                None
            }
        }
    }

    /// The first LIST of CRDs has been reconciled: the reports no CRD took are dropped.
    pub async fn first_crds_done(&self) {
        *self.state.lock().await = State::Done;
    }
}

/// Every report, listed as plain objects and decoded one by one, without their revisions.
async fn list(client: &kube::Client) -> Result<HashMap<String, Waiting>, kube::Error> {
    let api: Api<DynamicObject> =
        Api::all_with(client.clone(), &ApiResource::erase::<SchemaAudit>(&()));
    let mut reports = HashMap::new();
    each_listed(&api, ListParams::default().limit(PAGE), |mut r| {
        r.metadata.managed_fields = None;
        r.metadata.annotations = None;
        let Some(name) = r.metadata.name.clone() else {
            return;
        };
        // The revision's generation is all that waits: the schemas are not copied.
        let generation = match r.data.get_mut("spec").and_then(|s| s.as_object_mut()) {
            Some(spec) => spec.remove("auditedRevision").map(|rev| {
                rev.get("generation")
                    .and_then(serde_json::Value::as_i64)
                    .map_or(Recorded::Unreadable, Recorded::Generation)
            }),
            None => None,
        };
        match serde_json::to_value(r).and_then(serde_json::from_value::<SchemaAudit>) {
            Ok(report) => {
                let mut waiting = Waiting::new(report);
                waiting.recorded = generation.unwrap_or(Recorded::Nothing);
                reports.insert(name, waiting);
            }
            Err(e) => {
                tracing::warn!(report = %name, error = %e, "an earlier report cannot be decoded; its CRD starts without its history");
            }
        }
    })
    .await?;
    Ok(reports)
}

#[cfg(test)]
mod tests {
    use super::{Recorded, SchemaAudit, Waiting};
    use crate::operator::crds::Reconciler;
    use crate::operator::fake_api;
    use serde_json::{Value, json};

    fn crd(plural: &str, uid: &str, generation: i64) -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.example.com"), "uid": uid, "generation": generation},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": plural, "kind": "Thing"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object"}}}]}})
    }

    /// What an earlier operator wrote about `plural`: a tightening from generation 1 to 2.
    fn earlier_report(plural: &str, uid: &str) -> Value {
        json!({"apiVersion": "crd-audit.dev/v1alpha1", "kind": "SchemaAudit",
            "metadata": {"name": format!("{plural}.example.com"), "resourceVersion": "7",
                "ownerReferences": [{"apiVersion": "apiextensions.k8s.io/v1",
                    "kind": "CustomResourceDefinition", "name": format!("{plural}.example.com"),
                    "uid": uid}],
                "managedFields": [{"manager": "crd-audit", "operation": "Apply"}]},
            "spec": {},
            "status": {"observedGeneration": 2, "versions": [], "invalidObjects": [], "invalidObjectsTruncated": false,
                "conditions": [{"type": "SchemaTightened", "status": "True",
                    "lastTransitionTime": "2026-11-01T00:00:00Z", "reason": "Tightened",
                    "message": "1 object(s) newly invalid"}],
                "lastSchemaChange": {"fromGeneration": 1, "toGeneration": 2, "changes": []}}})
    }

    /// (LISTs, GETs) of the reports so far.
    fn reads(fake: &fake_api::Shared) -> (usize, usize) {
        let f = fake.lock().unwrap();
        (f.report_lists, f.report_gets)
    }

    fn remembers_the_tightening(ctx: &Reconciler, plural: &str) -> bool {
        ctx.states
            .read(&format!("{plural}.example.com"), |t| {
                t.last_change()
                    .is_some_and(|c| c.tightened && c.report.from_generation == 1)
            })
            .unwrap_or(false)
    }

    /// A restarted operator reads what its predecessor reported about every CRD with one LIST,
    /// not a GET per CRD; a CRD first seen after the first CRDs are done is read with a GET.
    #[tokio::test(start_paused = true)]
    async fn a_restart_reads_the_earlier_reports_with_one_list() {
        let (client, fake) = fake_api::start();
        let plurals = ["apples", "pears", "plums"];
        {
            let mut f = fake.lock().unwrap();
            for p in plurals.iter().chain(&["figs"]) {
                f.reports.insert(
                    format!("{p}.example.com"),
                    earlier_report(p, &format!("u-{p}")),
                );
            }
        }
        let parts = fake_api::term(client);
        let ctx = parts.reconciler.clone();
        for p in plurals {
            ctx.read_revision(crd(p, &format!("u-{p}"), 2)).await;
        }
        for p in plurals {
            assert!(remembers_the_tightening(&ctx, p), "{p}");
        }
        assert_eq!(reads(&fake), (1, 0));
        ctx.revisions.earlier.first_crds_done().await;
        ctx.read_revision(crd("figs", "u-figs", 2)).await;
        assert!(remembers_the_tightening(&ctx, "figs"));
        assert_eq!(reads(&fake), (1, 1));
    }

    /// A report that cannot be decoded costs its own CRD its history, not the others theirs:
    /// the list is still used, and no GET is made for it.
    #[tokio::test(start_paused = true)]
    async fn an_undecodable_report_is_skipped_alone() {
        let (client, fake) = fake_api::start();
        {
            let mut f = fake.lock().unwrap();
            f.reports
                .insert("apples.example.com".into(), earlier_report("apples", "u-a"));
            let mut broken = earlier_report("pears", "u-p");
            broken["status"]
                .as_object_mut()
                .unwrap()
                .remove("invalidObjectsTruncated");
            f.reports.insert("pears.example.com".into(), broken);
        }
        let parts = fake_api::term(client);
        let ctx = parts.reconciler.clone();
        ctx.read_revision(crd("apples", "u-a", 2)).await;
        ctx.read_revision(crd("pears", "u-p", 2)).await;
        assert!(remembers_the_tightening(&ctx, "apples"));
        assert!(!remembers_the_tightening(&ctx, "pears"));
        assert!(ctx.states.tracks("pears.example.com"));
        assert_eq!(reads(&fake), (1, 0));
    }

    /// When the LIST fails, every CRD's earlier report is read with a GET.
    #[tokio::test(start_paused = true)]
    async fn a_failed_list_falls_back_to_one_get_per_crd() {
        let (client, fake) = fake_api::start();
        fake.lock().unwrap().fail_report_lists = true;
        fake.lock()
            .unwrap()
            .reports
            .insert("apples.example.com".into(), earlier_report("apples", "u-a"));
        let parts = fake_api::term(client);
        let ctx = parts.reconciler.clone();
        ctx.read_revision(crd("apples", "u-a", 2)).await;
        ctx.read_revision(crd("pears", "u-p", 1)).await;
        assert!(remembers_the_tightening(&ctx, "apples"));
        assert_eq!(fake.lock().unwrap().report_gets, 2);
    }

    /// A listed report waits without its recorded revision: the generation it recorded says
    /// whether the CRD needs it (then its report is read again, whole).
    #[test]
    fn a_waiting_report_keeps_only_its_revisions_generation() {
        let mut report: SchemaAudit =
            serde_json::from_value(earlier_report("apples", "u-a")).unwrap();
        report.spec.audited_revision =
            Some(json!({"generation": 3, "uid": "u-a", "scope": "Namespaced", "versions": []}));
        let waiting = Waiting::new(report.clone());
        assert!(waiting.report.spec.audited_revision.is_none());
        assert_eq!(waiting.recorded, Recorded::Generation(3));
        let back = waiting.for_generation(3).unwrap();
        assert_eq!(back.status.unwrap().observed_generation, Some(2));
        assert!(Waiting::new(report.clone()).for_generation(4).is_none());
        report.spec.audited_revision = Some(json!({"uid": "u-a", "versions": []}));
        assert!(Waiting::new(report.clone()).for_generation(3).is_none());
        report.spec.audited_revision = None;
        assert!(Waiting::new(report).for_generation(3).is_some());
    }

    /// A CRD changed while no operator ran (its report's revision is of generation 1, the CRD
    /// of 2, with a narrower enum): its report is read again whole, with a GET, and the change
    /// is diffed: a tightening from generation 1. A CRD whose report's revision is of its own
    /// generation is not read again.
    #[tokio::test(start_paused = true)]
    async fn a_crd_changed_while_no_operator_ran_reads_its_report_whole() {
        let (client, fake) = fake_api::start();
        let schema = |sizes: Value| {
            json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"size": {"type": "string", "enum": sizes}}}}})
        };
        let revision = |generation: i64, uid: &str| {
            json!({"generation": generation, "uid": uid, "scope": "Namespaced",
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": schema(json!(["small", "large"]))}}]})
        };
        {
            let mut f = fake.lock().unwrap();
            let mut changed = earlier_report("apples", "u-a");
            changed["status"]["conditions"] = json!([]);
            changed["status"]
                .as_object_mut()
                .unwrap()
                .remove("lastSchemaChange");
            changed["status"]["observedGeneration"] = json!(1);
            changed["spec"]["auditedRevision"] = revision(1, "u-a");
            f.reports.insert("apples.example.com".into(), changed);
            let mut same = earlier_report("pears", "u-p");
            same["spec"]["auditedRevision"] = revision(2, "u-p");
            f.reports.insert("pears.example.com".into(), same);
        }
        let parts = fake_api::term(client);
        let ctx = parts.reconciler.clone();
        let mut apples = crd("apples", "u-a", 2);
        apples["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = schema(json!(["small"]));
        ctx.read_revision(apples).await;
        assert!(remembers_the_tightening(&ctx, "apples"));
        assert_eq!(reads(&fake), (1, 1));
        ctx.read_revision(crd("pears", "u-p", 2)).await;
        assert!(remembers_the_tightening(&ctx, "pears"));
        assert_eq!(reads(&fake), (1, 1));
    }
}
