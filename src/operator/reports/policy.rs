//! What the policy reports say (`policyReports: true`), computed from the per-CRD audits the
//! operator keeps: one report named `crd-audit` per namespace that has invalid objects, one
//! cluster-wide report named `crd-audit` for cluster-scoped ones, one `fail` result per
//! invalid object. Pure functions; `reports::policy_writer` writes them. The same content goes to
//! either API ([`ReportApi`]): OpenReports (`openreports.io/v1alpha1` `Report` and
//! `ClusterReport`, which Kyverno 1.15+ and Policy Reporter 3 read) or its predecessor
//! `wgpolicyk8s.io/v1alpha2` (`PolicyReport` and `ClusterPolicyReport`). The two schemas are
//! the same but for OpenReports' top-level `source` and `configuration`.
//!
//! Conventions followed (Kyverno, Policy Reporter): `source` on every result (Policy Reporter
//! takes a report's source from its first result), `timestamp` with `nanos: 0`, one resource
//! per result, `summary` consistent with the results (Policy Reporter shows it as written).
//!
//! Size: a report lists at most `MAX_RESULTS` results and at most `MAX_RESULTS_BYTES` bytes of
//! them (JSON), in a stable order (CRD name, then namespace and name); the true number of
//! invalid objects in the report's scope is in the annotation `crd-audit.dev/invalid-objects`,
//! and `crd-audit.dev/results-truncated: "true"` says that some are not listed.

use crate::audit::judge::Audit;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};

/// The API a report is written to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReportApi {
    /// `openreports.io/v1alpha1`: `Report`, `ClusterReport`.
    OpenReports,
    /// `wgpolicyk8s.io/v1alpha2`: `PolicyReport`, `ClusterPolicyReport`.
    WgPolicy,
}

impl ReportApi {
    pub fn group(self) -> &'static str {
        match self {
            ReportApi::OpenReports => "openreports.io",
            ReportApi::WgPolicy => "wgpolicyk8s.io",
        }
    }

    pub fn version(self) -> &'static str {
        match self {
            ReportApi::OpenReports => "v1alpha1",
            ReportApi::WgPolicy => "v1alpha2",
        }
    }

    pub fn api_version(self) -> String {
        format!("{}/{}", self.group(), self.version())
    }

    /// The kind of the report of a placement (`""`: the cluster-wide one).
    pub fn kind(self, placement: &str) -> &'static str {
        match (self, placement.is_empty()) {
            (ReportApi::OpenReports, true) => "ClusterReport",
            (ReportApi::OpenReports, false) => "Report",
            (ReportApi::WgPolicy, true) => "ClusterPolicyReport",
            (ReportApi::WgPolicy, false) => "PolicyReport",
        }
    }

    /// The resource (plural) of the report of a placement.
    pub fn plural(self, placement: &str) -> &'static str {
        match (self, placement.is_empty()) {
            (ReportApi::OpenReports, true) => "clusterreports",
            (ReportApi::OpenReports, false) => "reports",
            (ReportApi::WgPolicy, true) => "clusterpolicyreports",
            (ReportApi::WgPolicy, false) => "policyreports",
        }
    }
}
/// The name of every report crd-audit writes.
pub const REPORT_NAME: &str = "crd-audit";
/// `policy` and `source` of every result.
pub const POLICY: &str = "crd-audit";
pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
pub const TOTAL_ANNOTATION: &str = "crd-audit.dev/invalid-objects";
pub const TRUNCATED_ANNOTATION: &str = "crd-audit.dev/results-truncated";
pub const CATEGORY: &str = "CRD Schema";
/// The severity of an invalid object whose updates are still accepted (tolerated).
pub const SEVERITY: &str = "medium";
/// The severity of a stuck object: the API server refuses every update of it.
pub const SEVERITY_STUCK: &str = "critical";

/// The most results a report lists.
pub const MAX_RESULTS: usize = 1000;
/// The most bytes (JSON) of results a report lists: with metadata and managedFields a report
/// stays below 800 KiB, about half of etcd's request limit (1.5 MiB).
pub const MAX_RESULTS_BYTES: usize = 768 << 10;

/// Where a report goes: the namespace of a `PolicyReport`, or `""` for the
/// `ClusterPolicyReport`.
pub type Placement = String;

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
pub struct Timestamp {
    pub seconds: i64,
    pub nanos: i32,
}

/// The invalid object a result is about (a `corev1.ObjectReference`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default)]
pub struct Resource {
    pub api_version: String,
    pub kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub uid: String,
}

/// One result (a `PolicyReportResult`), as crd-audit writes it.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default)]
pub struct PolicyResult {
    pub source: String,
    pub policy: String,
    /// The CRD's name.
    pub rule: String,
    pub category: String,
    pub severity: String,
    pub timestamp: Timestamp,
    /// `fail`, or `error` when crd-audit failed to judge the object (an internal error).
    pub result: String,
    pub scored: bool,
    pub resources: Vec<Resource>,
    /// The object's first message, values redacted as in the SchemaAudit report.
    pub message: String,
    /// `version` (of the judged object), `errorCount`.
    pub properties: BTreeMap<String, String>,
}

impl PolicyResult {
    fn object(&self) -> (&str, &str) {
        self.resources
            .first()
            .map_or(("", ""), |r| (r.namespace.as_str(), r.name.as_str()))
    }

    /// The same result apart from when it was found.
    fn same_finding(&self, other: &PolicyResult) -> bool {
        let mut a = self.clone();
        a.timestamp = other.timestamp.clone();
        a == *other
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, Eq)]
#[serde(default)]
pub struct Summary {
    pub pass: usize,
    pub fail: usize,
    pub warn: usize,
    pub error: usize,
    pub skip: usize,
}

impl Summary {
    pub fn of(results: &[PolicyResult]) -> Summary {
        let mut s = Summary::default();
        for r in results {
            match r.result.as_str() {
                "pass" => s.pass += 1,
                "warn" => s.warn += 1,
                "error" => s.error += 1,
                "skip" => s.skip += 1,
                _ => s.fail += 1,
            }
        }
        s
    }
}

/// What a report holds (compared with what was last written: a report is written only when
/// this changes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Content {
    pub results: Vec<PolicyResult>,
    pub summary: Summary,
    /// Invalid objects in the report's scope (more than `results` when truncated).
    pub total: usize,
}

impl Content {
    pub fn truncated(&self) -> bool {
        self.total > self.results.len()
    }

    /// The object to apply, in `api`.
    pub fn object(&self, placement: &str, api: ReportApi) -> Value {
        let mut annotations = json!({ TOTAL_ANNOTATION: self.total.to_string() });
        if self.truncated() {
            annotations[TRUNCATED_ANNOTATION] = json!("true");
        }
        let mut metadata = json!({"name": REPORT_NAME, "labels": {MANAGED_BY: POLICY},
            "annotations": annotations});
        if !placement.is_empty() {
            metadata["namespace"] = json!(placement);
        }
        let mut report = json!({"apiVersion": api.api_version(), "kind": api.kind(placement),
            "metadata": metadata, "summary": self.summary, "results": self.results});
        if api == ReportApi::OpenReports {
            // The report's source (each result names it too: Kyverno and Policy Reporter
            // read it there).
            report["source"] = json!(POLICY);
        }
        report
    }

    /// What a report read from the server holds; `None` for a report crd-audit does not
    /// manage (another name, or without its label).
    pub fn read(obj: &Value) -> Option<(Placement, Content)> {
        let meta = &obj["metadata"];
        if meta["name"] != REPORT_NAME || meta["labels"][MANAGED_BY] != POLICY {
            return None;
        }
        let placement = meta["namespace"].as_str().unwrap_or("").to_string();
        // A result that does not parse (edited by hand) makes the content differ, so the
        // report is written again.
        let results: Vec<PolicyResult> =
            serde_json::from_value(obj["results"].clone()).unwrap_or_default();
        let summary: Summary = serde_json::from_value(obj["summary"].clone()).unwrap_or_default();
        let total = meta["annotations"][TOTAL_ANNOTATION]
            .as_str()
            .and_then(|t| t.parse().ok())
            .unwrap_or(results.len());
        Some((
            placement,
            Content {
                results,
                summary,
                total,
            },
        ))
    }
}

/// One audited CRD, as the reports need it.
pub struct CrdAudit<'a> {
    pub name: &'a str,
    pub group: &'a str,
    pub kind: &'a str,
    pub audit: &'a Audit,
    /// The first complete LIST of the current revision is done. Until then the results
    /// written before for this CRD are kept as they are (after a restart the audit starts
    /// empty; a report must not lose its results while the objects are read again).
    pub audited: bool,
}

/// How much a report may hold.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_results: usize,
    pub max_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_results: MAX_RESULTS,
            max_bytes: MAX_RESULTS_BYTES,
        }
    }
}

#[derive(Default)]
struct Building {
    results: Vec<PolicyResult>,
    bytes: usize,
    full: bool,
    total: usize,
}

impl Building {
    fn push(&mut self, r: PolicyResult, limits: Limits) {
        self.total += 1;
        if self.full {
            return;
        }
        let size = serde_json::to_vec(&r).map_or(usize::MAX, |b| b.len() + 1);
        if self.results.len() >= limits.max_results
            || self.bytes.saturating_add(size) > limits.max_bytes
        {
            // Only a prefix of the stable order is listed, so the listed set does not
            // change with the lengths of messages further down.
            self.full = true;
            return;
        }
        self.bytes += size;
        self.results.push(r);
    }
}

/// The reports there should be now: every placement with at least one invalid object. A
/// result found before with the same finding keeps its timestamp (`written` is what the
/// server holds); a new or changed one gets `now` (Unix seconds).
pub fn desired<'a>(
    crds: impl IntoIterator<Item = CrdAudit<'a>>,
    written: &BTreeMap<Placement, Content>,
    now: i64,
    limits: Limits,
) -> BTreeMap<Placement, Content> {
    let earlier: HashMap<(&str, &str, &str), &PolicyResult> = written
        .values()
        .flat_map(|c| &c.results)
        .map(|r| {
            let (ns, name) = r.object();
            ((r.rule.as_str(), ns, name), r)
        })
        .collect();
    let mut by_rule: HashMap<&str, Vec<(&Placement, &PolicyResult)>> = HashMap::new();
    for (placement, content) in written {
        for r in &content.results {
            by_rule
                .entry(r.rule.as_str())
                .or_default()
                .push((placement, r));
        }
    }
    let mut out: BTreeMap<Placement, Building> = BTreeMap::new();
    for crd in crds {
        if !crd.audited {
            for (placement, r) in by_rule.get(crd.name).into_iter().flatten() {
                out.entry((*placement).clone())
                    .or_default()
                    .push((*r).clone(), limits);
            }
            continue;
        }
        for ((namespace, name), inv) in &crd.audit.invalid {
            let b = out.entry(namespace.clone()).or_default();
            if b.full {
                b.total += 1;
                continue;
            }
            let mut r = PolicyResult {
                source: POLICY.into(),
                policy: POLICY.into(),
                rule: crd.name.into(),
                category: CATEGORY.into(),
                severity: if inv.updates_blocked {
                    SEVERITY_STUCK
                } else {
                    SEVERITY
                }
                .into(),
                timestamp: Timestamp {
                    seconds: now,
                    nanos: 0,
                },
                result: if inv.internal { "error" } else { "fail" }.into(),
                scored: true,
                resources: vec![Resource {
                    api_version: format!("{}/{}", crd.group, inv.version),
                    kind: crd.kind.into(),
                    namespace: namespace.clone(),
                    name: name.clone(),
                    uid: inv.uid.clone(),
                }],
                message: inv.errors.first().cloned().unwrap_or_default(),
                properties: BTreeMap::from([
                    ("version".to_string(), inv.version.clone()),
                    ("errorCount".to_string(), inv.error_count.to_string()),
                ]),
            };
            if let Some(e) = earlier.get(&(crd.name, namespace.as_str(), name.as_str()))
                && e.same_finding(&r)
            {
                r.timestamp = e.timestamp.clone();
            }
            b.push(r, limits);
        }
    }
    out.into_iter()
        .filter(|(_, b)| b.total > 0)
        .map(|(p, b)| {
            let summary = Summary::of(&b.results);
            (
                p,
                Content {
                    results: b.results,
                    summary,
                    total: b.total,
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::judge::{Audit, judge};
    use crd_audit_engine::{Crd, CrdValidator};

    fn crd(scope: &str, name: &str) -> Crd {
        let (plural, group) = name.split_once('.').unwrap();
        Crd::from_value(&json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": name, "uid": "u", "generation": 1},
            "spec": {"group": group, "scope": scope, "names": {"plural": plural, "kind": "Thing"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                        "type": "object", "properties": {"size": {"type": "string", "enum": ["small"]}}}}}}}]}}))
        .unwrap()
    }

    fn audit_of(c: &Crd, objects: &[(&str, &str, &str)]) -> Audit {
        let v = CrdValidator::new(c).expect("compiles");
        let mut a = Audit::default();
        for (ns, name, size) in objects {
            let mut meta = json!({"name": name, "uid": format!("uid-{name}")});
            if !ns.is_empty() {
                meta["namespace"] = json!(ns);
            }
            a.record(judge(
                &v,
                json!({"apiVersion": format!("{}/v1", c.group), "kind": "Thing",
                    "metadata": meta, "spec": {"size": size}}),
                true,
            ));
        }
        a
    }

    fn input<'a>(c: &'a Crd, a: &'a Audit, audited: bool) -> CrdAudit<'a> {
        CrdAudit {
            name: &c.name,
            group: &c.group,
            kind: &c.kind,
            audit: a,
            audited,
        }
    }

    /// The schemas of the reports as Kyverno, the wg-policy project and OpenReports install
    /// them (tests/data/policyreport, tests/data/openreports): every report built here is
    /// valid in both APIs and nothing is pruned.
    fn check_against_crd(placement: &str, content: &Content) {
        for api in [ReportApi::WgPolicy, ReportApi::OpenReports] {
            let (dir, file) = match (api, placement.is_empty()) {
                (ReportApi::WgPolicy, true) => ("policyreport", "clusterpolicyreport-crd.yaml"),
                (ReportApi::WgPolicy, false) => ("policyreport", "policyreport-crd.yaml"),
                (ReportApi::OpenReports, true) => ("openreports", "clusterreport-crd.yaml"),
                (ReportApi::OpenReports, false) => ("openreports", "report-crd.yaml"),
            };
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data")
                .join(dir)
                .join(file);
            let text = std::fs::read_to_string(&path).unwrap();
            let doc = crd_audit_engine::load::parse_str(file, &text)
                .remove(0)
                .unwrap();
            let crd = Crd::from_value(&doc.value).unwrap();
            assert_eq!(crd.kind, api.kind(placement));
            assert_eq!(crd.plural, api.plural(placement));
            assert_eq!(crd.group, api.group());
            let v = CrdValidator::new(&crd).expect("compiles");
            let object = content.object(placement, api);
            let verdict = v.validate(object, crd_audit_engine::Mode::Stored);
            assert!(verdict.is_admitted(), "{file}: {:?}", verdict.outcome);
            assert!(verdict.pruned.is_empty(), "{file}: {:?}", verdict.pruned);
        }
    }

    #[test]
    fn one_result_per_invalid_object_placed_by_namespace() {
        let things = crd("Namespaced", "things.example.com");
        let nodes = crd("Cluster", "nodes.example.com");
        let a = audit_of(
            &things,
            &[
                ("ns1", "a", "large"),
                ("ns1", "b", "small"),
                ("ns2", "c", "Secret!"),
            ],
        );
        let n = audit_of(&nodes, &[("", "n1", "huge")]);
        let d = desired(
            [input(&nodes, &n, true), input(&things, &a, true)],
            &BTreeMap::new(),
            1000,
            Limits::default(),
        );
        assert_eq!(d.keys().collect::<Vec<_>>(), vec!["", "ns1", "ns2"]);
        let ns1 = &d["ns1"];
        assert_eq!(ns1.results.len(), 1);
        assert_eq!(ns1.summary.fail, 1);
        assert_eq!(
            (ns1.summary.pass, ns1.summary.warn, ns1.summary.error),
            (0, 0, 0)
        );
        let r = &ns1.results[0];
        assert_eq!(r.rule, "things.example.com");
        assert_eq!(r.policy, "crd-audit");
        assert_eq!(r.source, "crd-audit");
        assert_eq!(r.result, "fail");
        assert_eq!(
            r.timestamp,
            Timestamp {
                seconds: 1000,
                nanos: 0
            }
        );
        assert_eq!(
            r.resources,
            vec![Resource {
                api_version: "example.com/v1".into(),
                kind: "Thing".into(),
                namespace: "ns1".into(),
                name: "a".into(),
                uid: "uid-a".into(),
            }]
        );
        assert_eq!(r.message, a.invalid[&("ns1".into(), "a".into())].errors[0]);
        assert_eq!(r.properties["version"], "v1");
        assert_eq!(r.properties["errorCount"], "1");
        // Redacted exactly as in the SchemaAudit report.
        let c = &d["ns2"].results[0].message;
        assert!(
            c.contains("<string, 7 chars>") && !c.contains("Secret!"),
            "{c}"
        );
        let cluster = &d[""];
        assert_eq!(cluster.results[0].resources[0].namespace, "");
        let obj = cluster.object("", ReportApi::WgPolicy);
        assert_eq!(obj["kind"], "ClusterPolicyReport");
        assert_eq!(obj["apiVersion"], "wgpolicyk8s.io/v1alpha2");
        assert!(obj.get("source").is_none());
        let open = cluster.object("", ReportApi::OpenReports);
        assert_eq!(open["kind"], "ClusterReport");
        assert_eq!(open["apiVersion"], "openreports.io/v1alpha1");
        assert_eq!(open["source"], "crd-audit");
        assert_eq!(open["results"], obj["results"]);
        assert_eq!(ns1.object("ns1", ReportApi::OpenReports)["kind"], "Report");
        assert!(obj["metadata"].get("namespace").is_none());
        assert!(obj["results"][0]["resources"][0].get("namespace").is_none());
        assert_eq!(obj["metadata"]["labels"][MANAGED_BY], "crd-audit");
        let obj = ns1.object("ns1", ReportApi::WgPolicy);
        assert_eq!(obj["kind"], "PolicyReport");
        assert_eq!(obj["metadata"]["namespace"], "ns1");
        assert_eq!(obj["metadata"]["name"], "crd-audit");
        assert_eq!(
            obj["summary"],
            json!({"pass": 0, "fail": 1, "warn": 0, "error": 0, "skip": 0})
        );
        assert_eq!(obj["metadata"]["annotations"][TOTAL_ANNOTATION], "1");
        for (p, c) in &d {
            check_against_crd(p, c);
            // What is read back is what was written.
            for api in [ReportApi::WgPolicy, ReportApi::OpenReports] {
                assert_eq!(
                    Content::read(&c.object(p, api)),
                    Some((p.clone(), c.clone()))
                );
            }
        }
    }

    #[test]
    fn timestamps_stay_until_the_finding_changes() {
        let things = crd("Namespaced", "things.example.com");
        let a = audit_of(&things, &[("ns", "a", "large"), ("ns", "b", "large")]);
        let first = desired(
            [input(&things, &a, true)],
            &BTreeMap::new(),
            1000,
            Limits::default(),
        );
        let again = desired([input(&things, &a, true)], &first, 2000, Limits::default());
        assert_eq!(first, again, "an unchanged audit changes nothing");
        // b's message changes (another bad value), a is fixed, c turns invalid.
        let a2 = audit_of(
            &things,
            &[("ns", "a", "small"), ("ns", "b", "xl"), ("ns", "c", "xxl")],
        );
        let next = desired([input(&things, &a2, true)], &first, 3000, Limits::default());
        let rs = &next["ns"].results;
        let names: Vec<&str> = rs.iter().map(|r| r.object().1).collect();
        assert_eq!(names, vec!["b", "c"]);
        assert!(rs.iter().all(|r| r.timestamp.seconds == 3000), "{rs:?}");
        assert_ne!(rs[0].message, first["ns"].results[1].message);
        // Everything valid: no report.
        let clean = audit_of(&things, &[("ns", "a", "small")]);
        assert!(
            desired(
                [input(&things, &clean, true)],
                &next,
                4000,
                Limits::default()
            )
            .is_empty()
        );
        // A CRD whose objects are being read again keeps its written results; a CRD that is
        // gone (not among the inputs) loses them.
        let empty = Audit::default();
        let kept = desired(
            [input(&things, &empty, false)],
            &next,
            5000,
            Limits::default(),
        );
        assert_eq!(kept, next);
        assert!(desired([], &next, 5000, Limits::default()).is_empty());
    }

    /// However many objects are invalid and however long their names and messages, a report
    /// stays far below etcd's limit; the true count is kept.
    #[test]
    fn reports_are_bounded() {
        let long = format!("{}.example.com", "x".repeat(50));
        let things = crd("Namespaced", &format!("things.{long}"));
        let v = CrdValidator::new(&things).expect("compiles");
        let mut a = Audit::default();
        let ns = "n".repeat(63);
        for i in 0..5000 {
            let name = format!("{}-{i:05}", "o".repeat(240));
            a.record(judge(
                &v,
                json!({"apiVersion": format!("{}/v1", things.group), "kind": "Thing",
                    "metadata": {"name": name, "namespace": ns, "uid": format!("{i:036}")},
                    "spec": {"size": "\"".repeat(2000)}}),
                false,
            ));
        }
        let d = desired(
            [input(&things, &a, true)],
            &BTreeMap::new(),
            1,
            Limits::default(),
        );
        let c = &d[&ns];
        assert_eq!(c.total, 5000);
        assert!(c.truncated());
        assert!(c.results.len() < 5000 && !c.results.is_empty());
        assert_eq!(c.summary.fail, c.results.len());
        let obj = c.object(&ns, ReportApi::WgPolicy);
        let size = serde_json::to_vec(&obj).unwrap().len();
        assert!(size < 800 << 10, "report of {size} bytes");
        assert_eq!(obj["metadata"]["annotations"][TOTAL_ANNOTATION], "5000");
        assert_eq!(obj["metadata"]["annotations"][TRUNCATED_ANNOTATION], "true");
        // The listed ones are the first in order.
        assert!(c.results[0].object().1.ends_with("-00000"));
        check_against_crd(&ns, c);
        // The count limit, with short results.
        let names: Vec<String> = (0..30).map(|i| format!("o{i:02}")).collect();
        let objects: Vec<(&str, &str, &str)> =
            names.iter().map(|n| ("ns", n.as_str(), "x")).collect();
        let small = audit_of(&things, &objects);
        let d = desired(
            [input(&things, &small, true)],
            &BTreeMap::new(),
            1,
            Limits {
                max_results: 10,
                max_bytes: MAX_RESULTS_BYTES,
            },
        );
        assert_eq!(d["ns"].results.len(), 10);
        assert_eq!(d["ns"].total, 30);
        assert_eq!(d["ns"].summary.fail, 10);
    }

    #[test]
    fn foreign_reports_are_not_read() {
        let c = Content {
            results: Vec::new(),
            summary: Summary::default(),
            total: 0,
        };
        let mut other = c.object("ns", ReportApi::WgPolicy);
        other["metadata"]["name"] = json!("kyverno-report");
        assert!(Content::read(&other).is_none());
        let mut unlabeled = c.object("ns", ReportApi::WgPolicy);
        unlabeled["metadata"]["labels"] = json!({});
        assert!(Content::read(&unlabeled).is_none());
    }
}
