//! End-to-end: the `crd-audit controller` process against a real kube-apiserver 1.20 and etcd
//! on loopback, started by the project's harness (`tests/testenv/up.sh`; the first run builds
//! kube-apiserver from Debian's source package, later runs reuse the cached binary). The
//! controller runs with a ServiceAccount token bound to the shipped RBAC (`manifests/`).
//!
//! `CRD_AUDIT_E2E=off` skips; `CRD_AUDIT_E2E=required` (what `.ci/run` sets) fails when the
//! API server cannot be started; otherwise the test is skipped with a notice when it cannot.
//!
//! The tests by area: `lifecycle`, `outages`, `kubeconfigs`, `cel` and `ratcheting` (against
//! the standalone apiextensions-apiserver 1.36), `policy_reports`, `watches` (the object watch
//! itself, on both servers); their shared helpers here.

use crate::support::*;
use serde_json::{Value, json};

mod at_rest;
mod cel;
mod conversions;
mod gate;
mod gitops;
mod kubeconfigs;
mod lifecycle;
mod outages;
mod policy_reports;
mod ratcheting;
mod storage;
mod watches;
mod write_budget;

/// A scenario's part of an API server: an API group of its own (so its CRDs, objects and
/// reports are its own), a namespace for its objects and its operator's Lease, a directory
/// for its files and controller logs, and an operator configuration that audits only its
/// group. Scenarios on the shared server run side by side and cannot see each other.
struct Scenario<'a> {
    env: &'a TestEnv,
    /// `{name}.e2e.crd-audit.dev`
    group: String,
    /// `{name}`: the things live here, and a leader-elected operator's Lease.
    namespace: String,
    dir: std::path::PathBuf,
    turn: Turn,
}

enum Turn {
    Shared(#[allow(dead_code)] SharedTurn),
    Own(#[allow(dead_code)] std::sync::RwLockWriteGuard<'static, ()>),
}

impl Scenario<'static> {
    /// A scenario on the shared kube-apiserver 1.20; `None` as `start`.
    fn shared(name: &str) -> Option<Scenario<'static>> {
        let turn = Turn::Shared(shared_turn());
        Some(Scenario::new(shared()?, name, turn))
    }

    /// A scenario on the shared server with no other end-to-end test running meanwhile: for
    /// one whose cluster-wide objects the other scenarios' operators would remove (they share
    /// its ServiceAccount and the default names: an operator with the gate off deletes the
    /// gate's ValidatingWebhookConfiguration `crd-audit` it finds).
    fn shared_alone(name: &str) -> Option<Scenario<'static>> {
        let turn = Turn::Own(own_server());
        Some(Scenario::new(shared()?, name, turn))
    }
}

impl<'a> Scenario<'a> {
    /// A scenario on a server of the test's own (taken alone: see `own_server`).
    fn on_own(
        env: &'a TestEnv,
        name: &str,
        turn: std::sync::RwLockWriteGuard<'static, ()>,
    ) -> Self {
        Scenario::new(env, name, Turn::Own(turn))
    }

    fn new(env: &'a TestEnv, name: &str, turn: Turn) -> Self {
        let dir = env.run_dir.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        Scenario {
            env,
            group: format!("{name}.e2e.crd-audit.dev"),
            namespace: name.to_string(),
            dir,
            turn,
        }
    }

    fn admin(&self) -> &'a Rest {
        &self.env.admin
    }

    /// The things CRD's name.
    fn crd(&self) -> String {
        format!("things.{}", self.group)
    }

    /// The collection of things in the scenario's namespace.
    fn things_path(&self) -> String {
        format!(
            "/apis/{}/v1/namespaces/{}/things",
            self.group, self.namespace
        )
    }

    /// Writes the operator configuration `extra`, on a shared server with `includeGroups:
    /// [<the group>]` (on a server of its own the operator audits every CRD); its path.
    fn config(&self, file: &str, extra: &str) -> String {
        let path = self.dir.join(file);
        let text = match self.turn {
            Turn::Shared(_) => format!("includeGroups: ['{}']\n{extra}", self.group),
            Turn::Own(_) => extra.to_string(),
        };
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }

    /// Starts a controller whose log goes to the scenario's directory.
    fn controller(&self, identity: &str, args: &[&str]) -> Controller {
        controller(&self.dir, identity, args, &[])
    }

    /// Events with a reason about the scenario's CRDs (cluster-scoped: in `default`) and its
    /// objects (in its namespace).
    fn events(&self, reason: &str) -> Vec<Value> {
        let about_this_group = |e: &Value| {
            let regarding = if e["regarding"].is_object() {
                &e["regarding"]
            } else {
                &e["involvedObject"]
            };
            regarding["name"]
                .as_str()
                .is_some_and(|n| n.ends_with(&format!(".{}", self.group)))
        };
        let mut out: Vec<Value> = events_in(self.admin(), "default", reason)
            .into_iter()
            .filter(about_this_group)
            .collect();
        out.extend(events_in(self.admin(), &self.namespace, reason));
        out
    }
}

/// The shipped manifests, and the scenario's namespace with the shipped Lease Role bound there
/// (the operator's namespace is the scenario's). The scenario's API group is readable and
/// annotatable as a well-behaved CRD owner makes it: ClusterRoles that aggregate to `view` and
/// `edit`, which the shipped ClusterRoles aggregate in turn.
fn install(s: &Scenario) {
    for f in [
        "manifests/namespace.yaml",
        "manifests/schemaaudit-crd.yaml",
        "manifests/rbac.yaml",
        "manifests/rbac-annotate.yaml",
    ] {
        apply_file(s.admin(), f);
    }
    grant_like_a_crd_owner(s.admin(), &s.group);
    apply(
        s.admin(),
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": s.namespace}}),
    );
    let text = std::fs::read_to_string("manifests/rbac.yaml").unwrap();
    for doc in crd_audit_engine::load::parse_str("manifests/rbac.yaml", &text) {
        let mut v = doc.unwrap().value;
        if v["kind"] == "Role" || v["kind"] == "RoleBinding" {
            v["metadata"]["namespace"] = json!(s.namespace);
            apply(s.admin(), &v);
        }
    }
}

/// ClusterRoles for `group` labelled to aggregate to `view` (get, list, watch) and `edit`
/// (patch), as CRD owners ship them; returns once the shipped aggregating ClusterRoles carry
/// their rules (kube-controller-manager's aggregation controller fills them in).
fn grant_like_a_crd_owner(admin: &Rest, group: &str) {
    owner_roles(admin, group, group, "*", &["patch"]);
    for aggregating in ["crd-audit-read", "crd-audit-annotate"] {
        wait_for(&format!("{aggregating} to aggregate {group}"), || {
            let role = admin
                .get(&format!(
                    "/apis/rbac.authorization.k8s.io/v1/clusterroles/{aggregating}"
                ))
                .ok()?;
            role["rules"]
                .as_array()?
                .iter()
                .any(|r| r["apiGroups"] == json!([group]))
                .then_some(())
        });
    }
}

/// The things CRD (revision 1) and its three objects, and a controller (named `name`, admin
/// kubeconfig, only the scenario's group) that has reported them clean.
fn audited_things(s: &Scenario, name: &str) -> Controller {
    install(s);
    things(s, 1);
    create_things(s);
    let admin_kc = s.env.kubeconfig.display().to_string();
    let config = s.config(&format!("{name}.yaml"), "");
    let c = s.controller(name, &["--kubeconfig", &admin_kc, "--config", &config]);
    wait_for("a clean report", || clean_report(s.admin(), &s.crd()));
    c
}

fn things(s: &Scenario, revision: u8) {
    apply(s.admin(), &things_crd(&s.crd(), &s.group, revision));
}

/// Things a (small), b (medium) and c (small) in the scenario's namespace.
fn create_things(s: &Scenario) {
    apply(
        s.admin(),
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": s.namespace}}),
    );
    wait_for("the things CRD to be served", || {
        s.admin().get(&s.things_path()).ok()
    });
    for (name, size) in [("a", "small"), ("b", "medium"), ("c", "small")] {
        apply(
            s.admin(),
            &json!({"apiVersion": format!("{}/v1", s.group), "kind": "Thing",
                "metadata": {"name": name, "namespace": s.namespace}, "spec": {"size": size}}),
        );
    }
}

fn invalid_names(r: &Value) -> Vec<String> {
    r["status"]["invalidObjects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap().to_string())
        .collect()
}

/// The operator configuration of the leader-elected replicas: annotations on.
fn operator_config(s: &Scenario) -> String {
    s.config(
        "crd-audit.yaml",
        "annotateObjects: true\nexcludeGroups: ['excluded.*']\n",
    )
}

/// The shipped RBAC, the things CRD (revision 1) with its objects, and a leader-elected
/// replica (`name`, ServiceAccount kubeconfig, annotations on, its Lease in the scenario's
/// namespace) that has reported them clean.
fn leader_with_clean_report(s: &Scenario, name: &str) -> (Controller, Vec<String>) {
    install(s);
    things(s, 1);
    create_things(s);
    let kc = s
        .env
        .service_account_kubeconfig(&s.dir)
        .display()
        .to_string();
    let config = operator_config(s);
    let ha: Vec<String> = [
        "--kubeconfig",
        &kc,
        "--config",
        &config,
        "--leader-elect",
        "--namespace",
        &s.namespace,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let args: Vec<&str> = ha.iter().map(String::as_str).collect();
    let c = s.controller(name, &args);
    wait_for("a clean report", || clean_report(s.admin(), &s.crd()));
    (c, ha)
}

/// The standalone apiextensions-apiserver 1.36 (`tests/testenv/apiext-up.sh`), stopped on
/// drop.
pub(crate) struct ApiExt {
    pub(crate) run_dir: std::path::PathBuf,
    pub(crate) kubeconfig: std::path::PathBuf,
}

impl Drop for ApiExt {
    fn drop(&mut self) {
        let _ = std::process::Command::new("bash")
            .arg("tests/testenv/apiext-down.sh")
            .arg(&self.run_dir)
            .status();
    }
}

/// The standalone apiextensions-apiserver 1.36 that the scenarios on it share, started by the
/// first one to ask and stopped when the test process ends; `None` as `start_apiext`.
pub(crate) fn shared_apiext() -> Option<&'static ApiExt> {
    static SHARED: std::sync::OnceLock<Option<ApiExt>> = std::sync::OnceLock::new();
    SHARED
        .get_or_init(|| {
            let server = start_apiext()?;
            stop_when_this_process_ends("tests/testenv/apiext-down.sh", &server.run_dir);
            Some(server)
        })
        .as_ref()
}

impl ApiExt {
    /// A directory of the scenario `name` for its files and controller logs, and an operator
    /// configuration in it that audits only `group`.
    fn scenario(&self, name: &str, group: &str) -> (std::path::PathBuf, String) {
        let dir = self.run_dir.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("crd-audit.yaml");
        std::fs::write(&config, format!("includeGroups: ['{group}']\n")).unwrap();
        (dir, config.display().to_string())
    }
}

/// Starts the standalone apiextensions-apiserver 1.36; `None` (the test is skipped) only when
/// end-to-end tests are off or not required and the server cannot be had.
fn start_apiext() -> Option<ApiExt> {
    let mode = std::env::var("CRD_AUDIT_E2E").unwrap_or_default();
    if mode == "off" {
        eprintln!("NOTICE: CRD_AUDIT_E2E=off: end-to-end tests skipped");
        return None;
    }
    let out = std::process::Command::new("bash")
        .arg("tests/testenv/apiext-up.sh")
        .stderr(std::process::Stdio::inherit())
        .output()
        .unwrap();
    if !out.status.success() {
        assert_ne!(
            mode, "required",
            "the apiextensions-apiserver could not be started (../shared/oracle/build.sh with WITH_SERVER=1 builds it)"
        );
        eprintln!("NOTICE: no apiextensions-apiserver 1.36 here; this end-to-end test is skipped");
        return None;
    }
    let kubeconfig = std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    Some(ApiExt {
        run_dir: kubeconfig.parent().unwrap().to_path_buf(),
        kubeconfig,
    })
}
