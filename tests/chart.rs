//! The Helm chart (`charts/crd-audit`), with Helm 3 itself (`scripts/install-helm.sh` builds it
//! from its Go module once and caches it): `helm lint --strict` and `helm template` over the
//! default values and every `ci/*-values.yaml` (each optional part switched on); `manifests/`
//! is what `helm template` renders (`CRD_AUDIT_UPDATE_MANIFESTS=1` writes it again); the
//! rendered configuration is one the operator accepts, and rolls the pods when it changes; no
//! rule grants the core group beyond the operator's own needs unless `rbac.mode` is `all`; the
//! dashboard reads only metrics the operator exports; no Service, PodDisruptionBudget,
//! NetworkPolicy or PodMonitor selects a hook Job's pod; the alerts read the job the monitors
//! give; values.schema.json is closed and covers values.yaml, and a misspelled key fails
//! `helm lint`, `helm template` and `helm install` naming it; Chart.yaml's Artifact Hub
//! annotations; the packaged chart leaves the tests out.
//!
//! The plain "this value renders this field" checks are helm-unittest suites
//! (`charts/crd-audit/tests/*_test.yaml`), which `helm_unittest_suites_pass` runs with the
//! helm-unittest binary `scripts/install-helm-unittest.sh` builds.

#[path = "chart/packaging.rs"]
mod packaging;
#[path = "chart/selection.rs"]
mod selection;
#[path = "chart/values_schema.rs"]
mod values_schema;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Whether a tool the chart tests need must be there: under CI (`CI` set) or
/// `CRD_AUDIT_E2E=required`, its absence fails the tests.
fn tools_required() -> bool {
    std::env::var("CRD_AUDIT_E2E").is_ok_and(|v| v == "required")
        || std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// The path a `scripts/install-*.sh` prints, building the tool on first use; `None` (a
/// notice) only when it cannot be built and it is not required.
fn installed(script: &str, what: &str) -> Option<PathBuf> {
    let out = Command::new("bash")
        .arg(root().join("scripts").join(script))
        .output()
        .expect("bash");
    if out.status.success() {
        let path = String::from_utf8(out.stdout).unwrap().trim().to_string();
        return Some(PathBuf::from(path));
    }
    let why = String::from_utf8_lossy(&out.stderr).to_string();
    if tools_required() {
        panic!("{what} could not be installed (scripts/{script}): {why}");
    }
    eprintln!("NOTICE: {what} could not be installed ({why}); its chart tests skipped");
    None
}

/// Helm, built on first use.
pub fn helm() -> Option<&'static Path> {
    static HELM: OnceLock<Option<PathBuf>> = OnceLock::new();
    HELM.get_or_init(|| installed("install-helm.sh", "helm"))
        .as_deref()
}

/// helm-unittest, built on first use.
fn helm_unittest() -> Option<&'static Path> {
    static TOOL: OnceLock<Option<PathBuf>> = OnceLock::new();
    TOOL.get_or_init(|| installed("install-helm-unittest.sh", "helm-unittest"))
        .as_deref()
}

pub const CHART: &str = "charts/crd-audit";

/// The values files CI renders: the defaults, and each of `ci/`.
pub fn values_files() -> Vec<Option<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(CHART).join("ci"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with("-values.yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 4, "ci/*-values.yaml: {files:?}");
    std::iter::once(None)
        .chain(files.into_iter().map(Some))
        .collect()
}

pub fn helm_run(helm: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new(helm)
        .current_dir(root())
        .args(args)
        .output()
        .expect("running helm");
    if out.status.success() {
        Ok(String::from_utf8(out.stdout).unwrap())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).to_string())
    }
}

/// `helm template` of the chart as the release `crd-audit` in the namespace `crd-audit`.
pub fn template(helm: &Path, extra: &[&str]) -> Result<String, String> {
    let mut args = vec!["template", "crd-audit", CHART, "--namespace", "crd-audit"];
    if !extra.contains(&"--show-only") {
        args.push("--include-crds");
    }
    args.extend_from_slice(extra);
    helm_run(helm, &args)
}

pub fn objects(name: &str, text: &str) -> Vec<Value> {
    crd_audit_engine::load::parse_str(name, text)
        .into_iter()
        .map(|d| d.unwrap_or_else(|e| panic!("{name}: {e}")).value)
        .filter(|v| !v.is_null())
        .collect()
}

pub fn values_args(file: &Option<PathBuf>) -> Vec<String> {
    file.iter()
        .flat_map(|f| ["--values".to_string(), f.display().to_string()])
        .collect()
}

#[test]
fn the_chart_lints_and_renders_with_every_values_file() {
    let Some(helm) = helm() else { return };
    for file in values_files() {
        let args = values_args(&file);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut lint = vec!["lint", "--strict", CHART];
        lint.extend_from_slice(&args);
        helm_run(helm, &lint).unwrap_or_else(|e| panic!("helm lint {file:?}: {e}"));
        let text = template(helm, &args).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        let objs = objects(&format!("{file:?}"), &text);
        for o in &objs {
            assert!(
                o["apiVersion"].is_string()
                    && o["kind"].is_string()
                    && o["metadata"]["name"].is_string(),
                "{file:?}: an object without apiVersion, kind or name: {o}"
            );
            // Everything in the release's namespace, but the monitors and alerts a values
            // file puts with Prometheus (metrics.*.namespace).
            let monitoring = ["ServiceMonitor", "PodMonitor", "PrometheusRule"]
                .contains(&o["kind"].as_str().unwrap_or_default());
            if o["metadata"]["namespace"].is_string() && !monitoring {
                assert_eq!(o["metadata"]["namespace"], "crd-audit", "{o}");
            }
        }
        let kinds: Vec<&str> = objs.iter().filter_map(|o| o["kind"].as_str()).collect();
        for kind in [
            "CustomResourceDefinition",
            "Deployment",
            "ConfigMap",
            "ClusterRole",
        ] {
            assert!(kinds.contains(&kind), "{file:?}: no {kind} in {kinds:?}");
        }
    }
}

/// The chart's helm-unittest suites (`charts/crd-audit/tests/*_test.yaml`): what each value
/// renders, the hooks, the names, the labels, NOTES.txt and the schema's refusals.
#[test]
fn helm_unittest_suites_pass() {
    let Some(tool) = helm_unittest() else { return };
    let suites: Vec<_> = std::fs::read_dir(root().join(CHART).join("tests"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with("_test.yaml"))
        .collect();
    assert!(suites.len() >= 9, "{suites:?}");
    let out = Command::new(tool)
        .current_dir(root())
        .args(["--color=false", CHART])
        .output()
        .expect("running helm-unittest");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "helm-unittest {CHART}:\n{report}");
    // Every suite ran (a suite that does not parse is an error, not a pass).
    for suite in &suites {
        assert!(
            report.contains(&format!("{CHART}/tests/{suite}")),
            "{suite} did not run:\n{report}"
        );
    }
    assert!(!report.contains(" FAIL "), "{report}");
}

/// The files of `manifests/` that the chart renders, from `helm template` with the default
/// values (the hook left out: `kubectl apply` would run it at once), and the optional ones
/// with their part switched on.
fn rendered_manifests(helm: &Path) -> BTreeMap<String, String> {
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    let header =
        "# Generated from charts/crd-audit by `helm template` (just manifests): edit the chart.\n";
    let mut add = |text: String| {
        for doc in text.split("\n---\n") {
            let doc = doc.trim_start_matches("---\n");
            let Some(source) = doc
                .lines()
                .find_map(|l| l.strip_prefix("# Source: crd-audit/"))
            else {
                continue;
            };
            let file = Path::new(source)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .to_string();
            let body: String = doc
                .lines()
                .filter(|l| !l.starts_with("# Source: "))
                .map(|l| format!("{l}\n"))
                .collect();
            let out = files.entry(file).or_insert_with(|| header.into());
            if out.len() > header.len() {
                out.push_str("---\n");
            }
            out.push_str(&body);
        }
    };
    add(template(helm, &["--no-hooks"]).unwrap());
    add(template(
        helm,
        &[
            "--no-hooks",
            "--set",
            "metrics.serviceMonitor.enabled=true,metrics.prometheusRule.enabled=true,config.annotateObjects=true",
            "--show-only",
            "templates/servicemonitor.yaml",
            "--show-only",
            "templates/prometheusrule.yaml",
            "--show-only",
            "templates/rbac-annotate.yaml",
        ],
    )
    .unwrap());
    files
}

#[test]
fn manifests_are_what_the_chart_renders() {
    let Some(helm) = helm() else { return };
    let rendered = rendered_manifests(helm);
    let dir = root().join("manifests");
    if std::env::var("CRD_AUDIT_UPDATE_MANIFESTS").is_ok_and(|v| v == "1") {
        for (file, text) in &rendered {
            std::fs::write(dir.join(file), text).unwrap();
        }
    }
    for (file, text) in &rendered {
        let shipped = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
        assert!(
            shipped == *text,
            "manifests/{file} is not what the chart renders: run `just manifests` \
             (CRD_AUDIT_UPDATE_MANIFESTS=1 cargo test --test chart manifests_are)"
        );
    }
    let mut hand_written = vec!["namespace.yaml", "kustomization.yaml"];
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        assert!(
            rendered.contains_key(&name) || hand_written.contains(&name.as_str()),
            "manifests/{name} is not rendered by the chart"
        );
    }
    // The kustomization installs the namespace and everything the default values render.
    let default = template(helm, &["--no-hooks"]).unwrap();
    let kustomization = std::fs::read_to_string(dir.join("kustomization.yaml")).unwrap();
    let listed: Vec<&str> = kustomization
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .collect();
    hand_written.truncate(1);
    for file in rendered.keys().map(String::as_str).chain(hand_written) {
        let in_default =
            file == "namespace.yaml" || default.lines().any(|l| l.ends_with(&format!("/{file}")));
        assert_eq!(
            listed.contains(&file),
            in_default,
            "kustomization.yaml and the default render disagree on {file}"
        );
    }
}

/// The rendered ConfigMap's configuration file.
pub fn config_of(text: &str) -> String {
    objects("render", text)
        .into_iter()
        .find(|o| o["kind"] == "ConfigMap" && o["data"]["crd-audit.yaml"].is_string())
        .expect("the configuration's ConfigMap")["data"]["crd-audit.yaml"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The name the rendered Deployment tells the operator (`CRD_AUDIT_NAME`, its `--name`).
pub fn instance_name(text: &str) -> String {
    let deployment = objects("render", text)
        .into_iter()
        .find(|o| o["kind"] == "Deployment")
        .expect("the Deployment");
    deployment["spec"]["template"]["spec"]["containers"][0]["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "CRD_AUDIT_NAME")
        .expect("CRD_AUDIT_NAME")["value"]
        .as_str()
        .unwrap()
        .to_string()
}

fn config_checksum(text: &str) -> String {
    objects("render", text)
        .into_iter()
        .find(|o| o["kind"] == "Deployment")
        .unwrap()["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn the_rendered_configuration_is_accepted_and_rolls_the_pods() {
    let Some(helm) = helm() else { return };
    for file in values_files() {
        let args = values_args(&file);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let text = template(helm, &args).unwrap();
        let config = config_of(&text);
        crd_audit::audit::config::Config::parse("crd-audit.yaml", &config)
            .unwrap_or_else(|e| panic!("{file:?}: the operator refuses its configuration: {e}"));
    }
    let default = template(helm, &[]).unwrap();
    let parsed =
        crd_audit::audit::config::Config::parse("crd-audit.yaml", &config_of(&default)).unwrap();
    assert_eq!(
        format!("{:?}", parsed),
        format!("{:?}", crd_audit::audit::config::Config::default()),
        "the chart's default configuration is the operator's"
    );
    let changed = template(helm, &["--set", "config.maxListedObjects=7"]).unwrap();
    assert!(config_of(&changed).contains("maxListedObjects: 7"));
    assert_ne!(config_checksum(&default), config_checksum(&changed));
    let other_value = template(helm, &["--set", "replicas=3"]).unwrap();
    assert_eq!(config_checksum(&default), config_checksum(&other_value));
}

/// Every rule of every (Cluster)Role a values file renders.
fn rules(text: &str) -> Vec<(String, Value)> {
    objects("render", text)
        .into_iter()
        .filter(|o| o["kind"] == "ClusterRole" || o["kind"] == "Role")
        .flat_map(|o| {
            let who = format!(
                "{} {}",
                o["kind"].as_str().unwrap(),
                o["metadata"]["name"].as_str().unwrap()
            );
            o["rules"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(move |r| (who.clone(), r))
        })
        .collect()
}

#[test]
fn no_rule_grants_the_core_group_beyond_its_own_needs() {
    let Some(helm) = helm() else { return };
    for file in values_files() {
        let args = values_args(&file);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let text = template(helm, &args).unwrap();
        let all = file
            .as_ref()
            .is_some_and(|f| f.ends_with("all-values.yaml"));
        let secret = format!("{}-gate-tls", instance_name(&text));
        for (who, rule) in rules(&text) {
            let groups: Vec<&str> = rule["apiGroups"]
                .as_array()
                .unwrap()
                .iter()
                .map(|g| g.as_str().unwrap())
                .collect();
            if groups.contains(&"*") {
                assert!(all, "{file:?}: {who} grants every group: {rule}");
                continue;
            }
            if !groups.contains(&"") {
                continue;
            }
            let resources: Vec<&str> = rule["resources"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_str().unwrap())
                .collect();
            match resources.as_slice() {
                ["events"] => assert_eq!(rule["verbs"], serde_json::json!(["create"])),
                // Its own ConfigMap, which uninstall-cleanup makes the owner of the Lease.
                ["configmaps"] => {
                    assert!(who.starts_with("Role "), "{who}: {rule}");
                    assert_eq!(
                        rule["resourceNames"],
                        serde_json::json!([instance_name(&text)]),
                        "{file:?}: {who}"
                    );
                    assert_eq!(rule["verbs"], serde_json::json!(["get"]), "{file:?}: {who}");
                }
                ["secrets"] => {
                    assert!(who.starts_with("Role "), "{who}: {rule}");
                    let by_name = rule["resourceNames"] == serde_json::json!([secret]);
                    assert!(
                        by_name || rule["verbs"] == serde_json::json!(["create"]),
                        "{file:?}: {who} reads Secrets beyond its own: {rule}"
                    );
                }
                other => panic!("{file:?}: {who} grants the core group's {other:?}: {rule}"),
            }
        }
    }
    // The default reads custom resources through aggregation, without Kubernetes' own roles.
    let default = template(helm, &[]).unwrap();
    let read = objects("render", &default)
        .into_iter()
        .find(|o| o["kind"] == "ClusterRole" && o["metadata"]["name"] == "crd-audit-read")
        .unwrap();
    let selector = &read["aggregationRule"]["clusterRoleSelectors"][0];
    assert_eq!(
        selector["matchLabels"]["rbac.authorization.k8s.io/aggregate-to-view"],
        "true"
    );
    assert_eq!(
        selector["matchExpressions"][0]["key"],
        "kubernetes.io/bootstrapping"
    );
    // Without the gate (the default), no Secret at all.
    assert!(
        !rules(&default)
            .iter()
            .any(|(_, r)| r["resources"] == serde_json::json!(["secrets"])),
        "the default grants Secrets"
    );
}

/// The metric names a PromQL expression reads (identifiers starting with `crd_audit_`).
fn metric_names(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = expr.as_bytes();
    let mut i = 0;
    while let Some(at) = expr[i..].find("crd_audit_") {
        let start = i + at;
        let before_ok =
            start == 0 || !(bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_');
        let mut end = start;
        while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
            end += 1;
        }
        if before_ok {
            out.push(expr[start..end].to_string());
        }
        i = end;
    }
    out
}

/// The sample names a /metrics page exposes (counters with `_total`, histograms with
/// `_bucket`, `_sum` and `_count`), from its `# TYPE` lines.
fn exposed_names(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in page.lines() {
        let Some(rest) = line.strip_prefix("# TYPE ") else {
            continue;
        };
        let mut parts = rest.split_whitespace();
        let (Some(name), Some(kind)) = (parts.next(), parts.next()) else {
            continue;
        };
        match kind {
            "counter" => out.push(format!("{name}_total")),
            "histogram" => {
                for s in ["_bucket", "_sum", "_count"] {
                    out.push(format!("{name}{s}"));
                }
            }
            _ => out.push(name.to_string()),
        }
    }
    out
}

fn dashboard_exprs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("expr" | "query", Value::String(s)) => out.push(s.clone()),
                    (_, Value::Object(q)) if k == "query" => {
                        if let Some(Value::String(s)) = q.get("query") {
                            out.push(s.clone());
                        }
                    }
                    _ => dashboard_exprs(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| dashboard_exprs(x, out)),
        _ => {}
    }
}

/// The operator's /metrics page (its encoder) once every labelled family has a series: a
/// family without one is not exposed at all.
fn exposition_with_a_series_in_every_family() -> String {
    use crd_audit::operator::metrics::{ClassLabels, CrdLabels, Metrics, VersionLabels};
    let m = Metrics::new();
    let crd = CrdLabels {
        crd: "a.example.com".into(),
    };
    let version = VersionLabels {
        crd: "a.example.com".into(),
        version: "v1".into(),
    };
    for family in [&m.objects, &m.invalid_objects, &m.blocked_objects] {
        family.get_or_create(&version).set(1);
    }
    m.nonstructural_versions.get_or_create(&crd).set(0);
    m.schema_changes
        .get_or_create(&ClassLabels {
            crd: crd.crd.clone(),
            class: "tightening".into(),
        })
        .inc();
    m.audit_duration.get_or_create(&crd).observe(0.5);
    m.last_audit.get_or_create(&crd).set(1.0);
    m.api_error("list");
    m.api_write("patch");
    m.reconcile_error("write_report", "conflict");
    m.gate
        .requests
        .get_or_create(&crd_audit::gate::VerdictLabels {
            verdict: "allowed".into(),
        })
        .inc();
    m.encode()
}

#[test]
fn the_dashboard_reads_only_metrics_the_operator_exports() {
    let page = exposition_with_a_series_in_every_family();
    let exposed = exposed_names(&page);
    assert!(exposed.contains(&"crd_audit_validations_total".to_string()));
    let path = root().join(CHART).join("dashboards/crd-audit.json");
    let dashboard: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut exprs = Vec::new();
    dashboard_exprs(&dashboard, &mut exprs);
    assert!(exprs.len() >= 10, "{} queries", exprs.len());
    let mut read = std::collections::BTreeSet::new();
    for expr in &exprs {
        for name in metric_names(expr) {
            assert!(
                exposed.contains(&name),
                "the dashboard reads {name}, which /metrics does not expose ({expr})"
            );
            read.insert(name);
        }
    }
    for gauge in [
        "crd_audit_invalid_objects",
        "crd_audit_blocked_objects",
        "crd_audit_last_audit_timestamp_seconds",
    ] {
        assert!(read.contains(gauge), "the dashboard shows no {gauge}");
    }
    assert_eq!(
        metric_names("sum(crd_audit_objects{x=\"a\"}) / xcrd_audit_no"),
        ["crd_audit_objects"]
    );
}

#[test]
fn the_dashboard_configmap_carries_the_dashboard_file() {
    let Some(helm) = helm() else { return };
    let text = template(helm, &["--set", "metrics.dashboard.enabled=true"]).unwrap();
    let cm = objects("render", &text)
        .into_iter()
        .find(|o| o["metadata"]["name"] == "crd-audit-dashboard")
        .unwrap();
    assert_eq!(cm["metadata"]["labels"]["grafana_dashboard"], "1");
    let file =
        std::fs::read_to_string(root().join(CHART).join("dashboards/crd-audit.json")).unwrap();
    let shipped: Value =
        serde_json::from_str(cm["data"]["crd-audit.json"].as_str().unwrap()).unwrap();
    assert_eq!(shipped, serde_json::from_str::<Value>(&file).unwrap());
}

/// `helm test`'s Pod (a test hook: not in manifests/) runs a command the binary has:
/// `crd-audit chart-test --url <the metrics Service's /readyz> --wait 120s` parses (`--help`
/// after it succeeds); the pod's component is its own (test), not the operator's.
#[test]
fn the_helm_test_pod_runs_a_command_of_the_binary() {
    let Some(helm) = helm() else { return };
    let objs = objects("render", &template(helm, &[]).unwrap());
    let pods: Vec<&Value> = objs.iter().filter(|o| o["kind"] == "Pod").collect();
    assert_eq!(pods.len(), 1, "the helm test Pod");
    let pod = pods[0];
    assert_eq!(pod["metadata"]["annotations"]["helm.sh/hook"], "test");
    assert_eq!(
        pod["metadata"]["labels"]["app.kubernetes.io/component"],
        "test"
    );
    let args: Vec<&str> = pod["spec"]["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        args,
        [
            "chart-test",
            "--url",
            "http://crd-audit-metrics.crd-audit.svc:8080/readyz",
            "--wait",
            "120s"
        ]
    );
    let out = Command::new(env!("CARGO_BIN_EXE_crd-audit"))
        .args(&args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "crd-audit {args:?} --help: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plain = template(helm, &["--no-hooks"]).unwrap();
    assert!(
        !objects("render", &plain).iter().any(|o| o["kind"] == "Pod"),
        "`helm template --no-hooks` (manifests/) renders the test Pod"
    );
}

pub fn yaml_file(path: &str) -> Value {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    objects(path, &text).into_iter().next().unwrap()
}
