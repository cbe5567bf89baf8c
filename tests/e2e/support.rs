//! Helpers of the end-to-end tests: the test API server (`tests/testenv/up.sh`), a small
//! synchronous REST client on kube's client, kubeconfigs of every kind, and controller
//! processes.
#![allow(dead_code)]

mod absence;
mod helm;
mod turns;
pub use absence::*;
pub use helm::*;
pub use turns::*;
pub mod conversion_webhook;

use kube::config::{KubeConfigOptions, Kubeconfig};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The kube-apiserver 1.20 that the scenarios share, started by the first one to ask (with
/// the shipped manifests applied) and stopped when the test process ends. `None` as `start`.
pub fn shared() -> Option<&'static TestEnv> {
    static SHARED: OnceLock<Option<TestEnv>> = OnceLock::new();
    SHARED
        .get_or_init(|| {
            let env = start()?;
            stop_when_this_process_ends("tests/testenv/down.sh", &env.run_dir);
            Some(env)
        })
        .as_ref()
}

/// Runs `script RUN_DIR` once this test process has ended, however it ends (a static is
/// never dropped): a watcher in a session of its own, so that an interrupt of the test run
/// does not take it along.
pub fn stop_when_this_process_ends(script: &str, run_dir: &Path) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(script);
    let watch = format!(
        "while kill -0 {} 2>/dev/null; do sleep 1; done; exec bash '{}' '{}'",
        std::process::id(),
        script.display(),
        run_dir.display()
    );
    // `--fork`: setsid returns at once, the watcher goes on in the background.
    let started = Command::new("setsid")
        .args(["--fork", "bash", "-c", &watch])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("setsid (util-linux) to watch the shared API server");
    assert!(started.success(), "setsid --fork: {started}");
}

/// A synchronous REST client for the tests (paths as kubectl --raw takes them).
pub struct Rest {
    rt: tokio::runtime::Runtime,
    client: kube::Client,
}

#[derive(Debug)]
pub struct ApiError {
    pub status: u16,
    pub message: String,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HTTP {}: {}", self.status, self.message)
    }
}

impl Rest {
    pub fn new(kubeconfig: &Path, context: Option<&str>) -> Rest {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let client = rt.block_on(async {
            let kc = Kubeconfig::read_from(kubeconfig).unwrap();
            let opts = KubeConfigOptions {
                context: context.map(str::to_string),
                ..Default::default()
            };
            let config = kube::Config::from_custom_kubeconfig(kc, &opts)
                .await
                .unwrap();
            kube::Client::try_from(config).unwrap()
        });
        Rest { rt, client }
    }

    fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<(&str, Vec<u8>)>,
    ) -> Result<Value, ApiError> {
        let mut req = http::Request::builder().method(method).uri(path);
        let bytes = match body {
            Some((ct, b)) => {
                req = req.header("Content-Type", ct);
                b
            }
            None => Vec::new(),
        };
        let req = req.body(bytes).unwrap();
        self.rt
            .block_on(self.client.request::<Value>(req))
            .map_err(|e| match e {
                kube::Error::Api(s) => ApiError {
                    status: s.code,
                    message: s.message.clone(),
                },
                other => ApiError {
                    status: 0,
                    message: other.to_string(),
                },
            })
    }

    pub fn get(&self, path: &str) -> Result<Value, ApiError> {
        self.send("GET", path, None)
    }

    /// A GET whose answer is text (`/readyz`).
    pub fn get_text(&self, path: &str) -> Option<String> {
        let req = http::Request::builder().uri(path).body(Vec::new()).unwrap();
        self.rt.block_on(self.client.request_text(req)).ok()
    }

    pub fn create(&self, path: &str, body: &Value) -> Result<Value, ApiError> {
        self.send(
            "POST",
            path,
            Some(("application/json", body.to_string().into_bytes())),
        )
    }

    /// A PUT (replace) of a whole object.
    pub fn send_put(&self, path: &str, body: &Value) -> Result<Value, ApiError> {
        self.send(
            "PUT",
            path,
            Some(("application/json", body.to_string().into_bytes())),
        )
    }

    /// A JSON merge patch.
    pub fn send_patch_merge(&self, path: &str, body: &Value) -> Result<Value, ApiError> {
        self.send(
            "PATCH",
            path,
            Some((
                "application/merge-patch+json",
                body.to_string().into_bytes(),
            )),
        )
    }

    pub fn delete(&self, path: &str) -> Result<Value, ApiError> {
        self.send("DELETE", path, None)
    }

    /// Server-side apply under the field manager `e2e`.
    pub fn apply(&self, path: &str, body: &Value) -> Result<Value, ApiError> {
        self.send(
            "PATCH",
            &format!("{path}?fieldManager=e2e&force=true"),
            Some((
                "application/apply-patch+yaml",
                body.to_string().into_bytes(),
            )),
        )
    }

    /// Server-side apply under the field manager `manager`.
    pub fn send_patch_apply_as(
        &self,
        path: &str,
        manager: &str,
        body: &Value,
    ) -> Result<Value, ApiError> {
        self.send(
            "PATCH",
            &format!("{path}?fieldManager={manager}&force=true"),
            Some((
                "application/apply-patch+yaml",
                body.to_string().into_bytes(),
            )),
        )
    }

    /// A server-side apply under the field manager `e2e` that the server checks and does not
    /// store (`?dryRun=All`).
    pub fn apply_dry_run(&self, path: &str, body: &Value) -> Result<Value, ApiError> {
        self.send(
            "PATCH",
            &format!("{path}?fieldManager=e2e&force=true&dryRun=All"),
            Some((
                "application/apply-patch+yaml",
                body.to_string().into_bytes(),
            )),
        )
    }

    /// A server-side dry-run PUT (`?dryRun=All`): the status code and the Warning headers'
    /// texts.
    pub fn put_dry_run(&self, path: &str, body: &Value) -> (u16, Vec<String>) {
        let req = http::Request::builder()
            .method("PUT")
            .uri(format!("{path}?dryRun=All"))
            .header("Content-Type", "application/json")
            .body(kube::client::Body::from(body.to_string().into_bytes()))
            .unwrap();
        let resp = self.rt.block_on(self.client.send(req)).unwrap();
        let warnings = resp
            .headers()
            .get_all("warning")
            .iter()
            .filter_map(|h| h.to_str().ok())
            .map(warning_text)
            .collect();
        (resp.status().as_u16(), warnings)
    }

    /// Every item of a collection (pages of 500). An answer that is not a list (no `items`
    /// array: the path names an object, or a Status) is an error, never an empty list.
    pub fn list(&self, path: &str) -> Result<Vec<Value>, ApiError> {
        let mut out = Vec::new();
        let mut cont = String::new();
        loop {
            let sep = if path.contains('?') { '&' } else { '?' };
            let page = self.get(&format!("{path}{sep}limit=500&continue={cont}"))?;
            let items = page["items"].as_array().ok_or_else(|| ApiError {
                status: 0,
                message: format!("GET {path}: not a list: {page}"),
            })?;
            out.extend(items.iter().cloned());
            match page["metadata"]["continue"].as_str() {
                Some(c) if !c.is_empty() => cont = c.to_string(),
                _ => return Ok(out),
            }
        }
    }
}

/// The text of a Warning header (`299 - "text"`, the text quoted as Go quotes it).
fn warning_text(h: &str) -> String {
    let quoted = h.splitn(3, ' ').nth(2).unwrap_or(h);
    serde_json::from_str::<String>(quoted).unwrap_or_else(|_| quoted.to_string())
}

/// The API path of an object, for the kinds these tests use.
pub fn path_of(obj: &Value) -> String {
    let api = obj["apiVersion"].as_str().unwrap();
    let kind = obj["kind"].as_str().unwrap();
    let name = obj["metadata"]["name"].as_str().unwrap();
    let ns = obj["metadata"]["namespace"].as_str();
    let base = if api.contains('/') {
        format!("/apis/{api}")
    } else {
        format!("/api/{api}")
    };
    let plural = match kind {
        "Namespace" => "namespaces".to_string(),
        "ServiceAccount" => "serviceaccounts".to_string(),
        "ClusterRole" => "clusterroles".to_string(),
        "ClusterRoleBinding" => "clusterrolebindings".to_string(),
        "Role" => "roles".to_string(),
        "RoleBinding" => "rolebindings".to_string(),
        "ConfigMap" => "configmaps".to_string(),
        "CustomResourceDefinition" => "customresourcedefinitions".to_string(),
        "NetworkPolicy" => "networkpolicies".to_string(),
        other => format!("{}s", other.to_lowercase()),
    };
    match ns {
        Some(ns) => format!("{base}/namespaces/{ns}/{plural}/{name}"),
        None => format!("{base}/{plural}/{name}"),
    }
}

pub fn apply(rest: &Rest, obj: &Value) {
    rest.apply(&path_of(obj), obj)
        .unwrap_or_else(|e| panic!("applying {}: {e}", path_of(obj)));
}

pub fn apply_file(rest: &Rest, file: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    for doc in crd_audit_engine::load::parse_str(file, &text) {
        let v = doc.unwrap().value;
        if !v.is_null() {
            apply(rest, &v);
        }
    }
}

pub fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    wait_for_at_most(what, Duration::from_secs(60), &mut f)
}

pub fn wait_for_at_most<T>(what: &str, limit: Duration, f: &mut dyn FnMut() -> Option<T>) -> T {
    let end = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

pub fn report(rest: &Rest, crd: &str) -> Result<Value, ApiError> {
    rest.get(&format!("/apis/crd-audit.dev/v1alpha1/schemaaudits/{crd}"))
}

/// The report of `crd` if it says every object is valid (`InstancesValid` is `True`).
pub fn clean_report(rest: &Rest, crd: &str) -> Option<Value> {
    report(rest, crd)
        .ok()
        .filter(|r| condition(r, "InstancesValid").is_some_and(|c| c.0 == "True"))
}

pub fn condition(report: &Value, ty: &str) -> Option<(String, String)> {
    report["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == ty)
        .map(|c| {
            (
                c["status"].as_str().unwrap_or("").to_string(),
                c["message"].as_str().unwrap_or("").to_string(),
            )
        })
}

/// Events with a reason, from both Event APIs, in a namespace.
pub fn events_in(rest: &Rest, namespace: &str, reason: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for path in [
        format!("/apis/events.k8s.io/v1/namespaces/{namespace}/events"),
        format!("/api/v1/namespaces/{namespace}/events"),
    ] {
        let mut seen_names = std::collections::BTreeSet::new();
        for e in rest.list(&path).unwrap_or_default() {
            if e["reason"] == reason
                && seen_names.insert(e["metadata"]["name"].as_str().unwrap_or("").to_string())
            {
                out.push(e);
            }
        }
    }
    // Both APIs show the same Event: count it once.
    let mut names = std::collections::BTreeSet::new();
    out.retain(|e| names.insert(e["metadata"]["name"].as_str().unwrap_or("").to_string()));
    out
}

pub fn events(rest: &Rest, reason: &str) -> Vec<Value> {
    events_in(rest, "default", reason)
}

pub fn note(e: &Value) -> String {
    e["note"]
        .as_str()
        .or(e["message"].as_str())
        .unwrap_or("")
        .to_string()
}

/// A CRD whose revisions the tests apply: 1 baseline; 2 tightened (required tier, narrower
/// enum); 3 loosened again.
pub fn things_crd(name: &str, group: &str, revision: u8) -> Value {
    let mut spec = json!({"type": "object", "properties": {
        "size": {"type": "string", "enum": ["small", "medium", "large"]},
        "tier": {"type": "string"}}});
    match revision {
        2 => {
            spec["required"] = json!(["tier"]);
            spec["properties"]["size"]["enum"] = json!(["small"]);
        }
        3 => {}
        _ => {
            spec["properties"].as_object_mut().unwrap().remove("tier");
        }
    }
    let plural = name.split('.').next().unwrap();
    let kind = format!(
        "{}{}",
        plural[..1].to_uppercase(),
        plural[1..].trim_end_matches('s')
    );
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"plural": plural, "singular": plural.trim_end_matches('s'), "kind": kind},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]}})
}

/// A throwaway kube-apiserver 1.20 + etcd (`tests/testenv/up.sh`), or a whole single-node
/// cluster (`tests/testenv/node-up.sh`), stopped on drop by the matching script.
pub struct TestEnv {
    /// The script that stops it (`tests/testenv/down.sh` or `node-down.sh`).
    pub down_script: &'static str,
    pub run_dir: PathBuf,
    pub kubeconfig: PathBuf,
    pub admin: Rest,
    pub server: String,
    pub ca: PathBuf,
    pub admin_token: String,
    /// kubectl of the server's release, built by the harness (`KUBE_TESTENV_KUBECTL`).
    pub kubectl: PathBuf,
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(self.down_script)
            .arg(&self.run_dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// Starts the test API server; `None` (with a notice) when end-to-end tests are off or
/// cannot run here, which fails under `CRD_AUDIT_E2E=required` (what CI sets).
pub fn start() -> Option<TestEnv> {
    start_with("tests/testenv/up.sh", "tests/testenv/down.sh", &[])
}

/// A kube-apiserver 1.20 of the test's own that writes its audit log (`audit.log` in its
/// run directory: every request as the server saw it); `None` as `start`.
pub fn start_audited() -> Option<TestEnv> {
    start_with(
        "tests/testenv/up.sh",
        "tests/testenv/down.sh",
        &[("KUBE_TESTENV_AUDIT_LOG", "1")],
    )
}

/// Starts a single-node cluster (`tests/testenv/node-up.sh`: kubelet, containerd and the
/// control plane in a network namespace of their own); `None` as `start`.
pub fn start_node() -> Option<TestEnv> {
    start_with(
        "tests/testenv/node-up.sh",
        "tests/testenv/node-down.sh",
        &[],
    )
}

fn start_with(up_script: &str, down_script: &'static str, env: &[(&str, &str)]) -> Option<TestEnv> {
    let mode = std::env::var("CRD_AUDIT_E2E").unwrap_or_default();
    if mode == "off" {
        eprintln!("NOTICE: CRD_AUDIT_E2E=off: end-to-end tests skipped");
        return None;
    }
    let out = Command::new("bash")
        .arg(up_script)
        .envs(env.iter().copied())
        .stderr(Stdio::inherit())
        .output();
    let kubeconfig = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        other => {
            assert_ne!(
                mode, "required",
                "{up_script} could not start the test cluster: {other:?}"
            );
            eprintln!(
                "NOTICE: {up_script} could not start the test cluster; end-to-end tests skipped"
            );
            return None;
        }
    };
    let kubeconfig = PathBuf::from(kubeconfig);
    let run_dir = kubeconfig.parent().unwrap().to_path_buf();
    let env_text = std::fs::read_to_string(run_dir.join("env")).unwrap();
    let var = |k: &str| {
        env_text
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .unwrap_or_default()
            .trim_matches('\'')
            .to_string()
    };
    let admin = Rest::new(&kubeconfig, None);
    Some(TestEnv {
        down_script,
        server: var("KUBE_TESTENV_SERVER"),
        ca: PathBuf::from(var("KUBE_TESTENV_CA")),
        admin_token: var("KUBE_TESTENV_ADMIN_TOKEN"),
        kubectl: PathBuf::from(var("KUBE_TESTENV_KUBECTL")),
        run_dir,
        kubeconfig,
        admin,
    })
}

impl TestEnv {
    /// A value of the run directory's `env` file (`KUBE_TESTENV_...`), empty when absent.
    pub fn env_var(&self, key: &str) -> String {
        let text = std::fs::read_to_string(self.run_dir.join("env")).unwrap_or_default();
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .unwrap_or_default()
            .trim_matches('\'')
            .to_string()
    }

    /// Runs the harness's kubectl with the admin kubeconfig: exit code, stdout, stderr.
    pub fn kubectl(&self, args: &[&str]) -> (Option<i32>, String, String) {
        assert!(
            self.kubectl.is_file(),
            "the harness's kubectl {} is missing (tests/testenv/up.sh builds it)",
            self.kubectl.display()
        );
        let out = Command::new(&self.kubectl)
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", &self.run_dir)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// A kubeconfig (in `dir`) whose user is a token of the shipped ServiceAccount (so that
    /// the shipped RBAC is what is tested).
    pub fn service_account_kubeconfig(&self, dir: &Path) -> PathBuf {
        let token = self
            .admin
            .create(
                "/api/v1/namespaces/crd-audit/serviceaccounts/crd-audit/token",
                &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                    "spec": {"expirationSeconds": 3600}}),
            )
            .expect("a ServiceAccount token");
        let token = token["status"]["token"].as_str().unwrap();
        let kc = dir.join("crd-audit.kubeconfig");
        std::fs::write(
            &kc,
            format!(
                "apiVersion: v1\nkind: Config\ncurrent-context: sa\nclusters:\n- name: t\n  cluster:\n    server: {}\n    certificate-authority: {}\ncontexts:\n- name: sa\n  context: {{cluster: t, user: sa}}\nusers:\n- name: sa\n  user:\n    token: {token}\n",
                self.server,
                self.ca.display()
            ),
        )
        .unwrap();
        kc
    }

    /// The kube-apiserver process: killed, then started again with the same command line
    /// after `down` (its data stays in etcd).
    pub fn restart_apiserver(&self, down: Duration) {
        let pid_file = self.run_dir.join("kube-apiserver.pid");
        let record = std::fs::read_to_string(&pid_file).unwrap();
        let pid: u32 = record.split_whitespace().next().unwrap().parse().unwrap();
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let status = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        while std::path::Path::new(&format!("/proc/{pid}/cmdline")).exists()
            && std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| !c.is_empty())
        {
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(down);
        let log = std::fs::OpenOptions::new()
            .append(true)
            .open(self.run_dir.join("kube-apiserver.log"))
            .unwrap();
        let mut cmd = Command::new(&args[0]);
        cmd.args(&args[1..])
            .env_clear()
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        for kv in environ.split(|b| *b == 0).filter(|a| !a.is_empty()) {
            let kv = String::from_utf8_lossy(kv);
            if let Some((k, v)) = kv.split_once('=') {
                cmd.env(k, v);
            }
        }
        let child = cmd.spawn().unwrap();
        let new_pid = child.id();
        std::mem::forget(child);
        let stat = std::fs::read_to_string(format!("/proc/{new_pid}/stat")).unwrap();
        let start = stat
            .rsplit(')')
            .next()
            .unwrap()
            .split_whitespace()
            .nth(19)
            .unwrap()
            .to_string();
        std::fs::write(&pid_file, format!("{new_pid} {start} {}\n", args[0])).unwrap();
        wait_for("the restarted API server", || {
            self.admin.get_text("/readyz").filter(|t| t.trim() == "ok")
        });
    }
}

/// A running `crd-audit controller`, killed on drop; its log (JSON lines) in the run dir.
pub struct Controller {
    pub child: Child,
    pub log: PathBuf,
    pub metrics: String,
}

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts the controller with these arguments (after `controller`), `POD_NAME=identity`.
pub fn controller(
    run_dir: &Path,
    identity: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> Controller {
    let port = free_port();
    let log = run_dir.join(format!("{identity}.log"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_crd-audit"));
    cmd.arg("controller")
        .args(args)
        .args(["--metrics-addr", &format!("127.0.0.1:{port}")])
        .env("POD_NAME", identity)
        .env_remove("KUBECONFIG")
        .stderr(std::fs::File::create(&log).unwrap());
    for (k, v) in env {
        cmd.env(k, v);
    }
    Controller {
        child: cmd.spawn().unwrap(),
        log,
        metrics: format!("127.0.0.1:{port}"),
    }
}

impl Controller {
    /// SIGTERM, then the exit status and the log.
    pub fn terminate(mut self) -> (std::process::ExitStatus, String) {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        let status = self.child.wait().unwrap();
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        (status, log)
    }

    /// SIGTERM; the controller must exit with success. Its log.
    pub fn stop_cleanly(self) -> String {
        let (status, log) = self.terminate();
        assert!(status.success(), "controller exit {status:?}\n{log}");
        log
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// One GET of the metrics endpoint (plain HTTP/1.0 on loopback).
    pub fn scrape(&self) -> Option<String> {
        http_get(&self.metrics, "/metrics")
    }
}

pub fn http_get(addr: &str, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut body = String::new();
    s.read_to_string(&mut body).ok()?;
    let (head, body) = body.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.0 200")
        .then(|| body.to_string())
        .or_else(|| head.starts_with("HTTP/1.1 200").then(|| body.to_string()))
}

/// The value of a metric line `name{labels} value` in an exposition.
pub fn metric(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.trim().parse().ok())
}

/// Runs the CLI; (exit code, stdout, stderr).
pub fn cli(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_crd-audit"));
    cmd.args(args).env_remove("KUBECONFIG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Error lines of a JSON log.
pub fn error_lines(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| serde_json::from_str::<Value>(l).is_ok_and(|v| v["level"] == "ERROR"))
        .map(str::to_string)
        .collect()
}

/// ClusterRoles for `resources` of `group` labelled to aggregate to `view` (get, list, watch)
/// and `edit` (`edit_verbs`), as CRD owners ship them, named `{name}-view` and `{name}-edit`.
pub fn owner_roles(admin: &Rest, name: &str, group: &str, resources: &str, edit_verbs: &[&str]) {
    for (role, label, verbs) in [
        (
            "view",
            "rbac.authorization.k8s.io/aggregate-to-view",
            json!(["get", "list", "watch"]),
        ),
        (
            "edit",
            "rbac.authorization.k8s.io/aggregate-to-edit",
            json!(edit_verbs),
        ),
    ] {
        apply(
            admin,
            &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": format!("{name}-{role}"), "labels": {label: "true"}},
                "rules": [{"apiGroups": [group], "resources": [resources], "verbs": verbs}]}),
        );
    }
}

/// A CRD of the conformance corpus (`cases/CASE/crd.yaml`) as this 1.20 server takes it:
/// without what 1.20 does not know (CEL rules, 1.23; selectable fields, 1.30).
pub fn corpus_crd_for_1_20(case: &str) -> Value {
    let corpus = crd_audit_engine::testing::conformance_dir().expect("the conformance corpus");
    let file = corpus.join("cases").join(case).join("crd.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut crd = crd_audit_engine::load::parse_str(case, &text)
        .into_iter()
        .next()
        .unwrap()
        .unwrap()
        .value;
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("x-kubernetes-validations");
                m.remove("selectableFields");
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut crd);
    crd
}
