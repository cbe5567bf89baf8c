//! crd-audit where users run it: the operator image (`scripts/build-image.sh`, an OCI archive
//! built without a Docker daemon) in pods on a real single-node cluster
//! (`tests/testenv/node-up.sh`: kubelet, containerd, kube-proxy and the control plane of
//! Kubernetes 1.20 in a network namespace of their own), installed with the chart as an admin
//! installs it: `helm install --wait`, two replicas, `gate.mode: warn`, the image loaded into
//! the node (`tests/testenv/node-load-image.sh`) and run with `imagePullPolicy: Never`.
//!
//! One node serves the tests here, one after another (each takes the node's lane, beside the
//! tests on API servers of their own):
//! - the install: both pods ready, their probes passing, running as non-root with a
//!   read-only root filesystem and the chart's seccomp profile (read from the processes
//!   themselves); a report for every CRD; `helm test` passing; the startup probe holding a
//!   replica that cannot become ready neither started nor ready, then started before ready
//!   (`startup`); the gate, called by the API server through the chart's Service with the
//!   self-managed certificate, warns `kubectl apply`; the metrics read as NOTES.txt says,
//!   through the API server's proxy to the chart's metrics Service; failover (`failover`):
//!   the leader's pod deleted (the Lease released: another leads within seconds, every
//!   `kubectl apply` meanwhile getting the gate's answer), its container killed with SIGKILL
//!   through containerd (nothing released: another leads after the Lease's expiry, not
//!   before), its process frozen; `helm test` failing with no replica; `helm uninstall` runs
//!   the pre-delete Job in a pod, and nothing crd-audit wrote is left;
//! - `helm upgrade` from the previous release (`upgrade`: the image and chart of the newest
//!   commit whose chart or binary differ) to the current one, the gate answering every
//!   `kubectl apply` during the rollout, serves the current report CRD;
//! - the book's cluster snippets that call Helm (`snippets`).
//!
//! docs/development/testing.md quotes the figures these tests measure (the time from `helm
//! install` to every report, the failover times) and the bounds they assert.

use crate::support::*;

mod conversions;
mod failover;
mod snippets;
mod startup;
mod upgrade;
use failover::lease_holder;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const NAMESPACE: &str = "crd-audit";
const GROUP: &str = "node.example.com";
const CRD: &str = "widgets.node.example.com";
/// The operator's Lease timing (src/operator/leader.rs): a standby takes an unrenewed Lease
/// after the lease duration, trying every retry period.
const LEASE_DURATION: Duration = Duration::from_secs(15);
const RETRY: Duration = Duration::from_secs(2);
/// The bounds docs/development/testing.md quotes.
const EVERY_REPORT_WITHIN: Duration = Duration::from_secs(60);
/// A leader that releases the Lease (SIGTERM) is followed at the standby's next try: a retry
/// period, and a second for kubelet to deliver the signal and the test to see the Lease.
const RELEASED_WITHIN: Duration = Duration::from_secs(5);
/// How late the test may see a change of the Lease (it reads it every quarter second, between
/// other requests).
const POLL: Duration = Duration::from_secs(1);
const CHANGE_REPORTED_WITHIN: Duration = Duration::from_secs(30);

/// The node, with the operator image loaded: (image repository, tag).
struct Node {
    env: TestEnv,
    image: (String, String),
}

/// The node the tests here share (started by the first to ask), until `stop_shared_node`.
static NODE: Mutex<Option<Arc<Node>>> = Mutex::new(None);

fn node() -> Option<Arc<Node>> {
    let mut shared = NODE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(node) = shared.as_ref() {
        return Some(node.clone());
    }
    let node = Arc::new({
        let env = start_node()?;
        stop_when_this_process_ends("tests/testenv/node-down.sh", &env.run_dir);
        let archive = crate::image::archive()?;
        let loaded = Command::new("bash")
            .arg("tests/testenv/node-load-image.sh")
            .arg(&env.kubeconfig)
            .arg(archive)
            .output()
            .unwrap();
        assert!(
            loaded.status.success(),
            "node-load-image.sh: {}",
            String::from_utf8_lossy(&loaded.stderr)
        );
        let reference = String::from_utf8(loaded.stdout).unwrap().trim().to_string();
        assert_eq!(reference, crate::image::REFERENCE);
        let (repository, tag) = reference.rsplit_once(':').unwrap();
        let image = (repository.to_string(), tag.to_string());
        Node { env, image }
    });
    *shared = Some(node.clone());
    Some(node)
}

/// Stops the shared node (node-down.sh), if one runs: for a test that must be the only node
/// on the host (the host's sysctls are written back by the last node to go). Called in that
/// test's turn, when no test here holds the node; the next test here starts another.
pub fn stop_shared_node() {
    let node = NODE.lock().unwrap_or_else(|e| e.into_inner()).take();
    drop(node);
}

/// One test on the node at a time, beside the tests on servers (`node_lane`).
fn node_turn() -> std::sync::MutexGuard<'static, ()> {
    node_lane()
}

fn helm(env: &TestEnv, args: &[&str]) -> std::process::Output {
    Command::new(helm_binary())
        .args(args)
        .env("KUBECONFIG", &env.kubeconfig)
        .env("HOME", &env.run_dir)
        .env("HELM_CACHE_HOME", env.run_dir.join("helm-cache"))
        .env("HELM_CONFIG_HOME", env.run_dir.join("helm-config"))
        .env("HELM_DATA_HOME", env.run_dir.join("helm-data"))
        .output()
        .unwrap()
}

fn helm_ok(env: &TestEnv, args: &[&str]) -> String {
    let out = helm(env, args);
    assert!(
        out.status.success(),
        "helm {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The release `crd-audit`, uninstalled when the test ends however it ends, so that the next
/// test on the node starts from a node without it.
struct Release<'a>(&'a TestEnv);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        let out = helm(
            self.0,
            &["uninstall", "crd-audit", "--namespace", NAMESPACE, "--wait"],
        );
        if out.status.success() {
            eprintln!("uninstalled the release crd-audit the test left");
        }
        for _ in 0..240 {
            if operator_pods(&self.0.admin).is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

/// The values an admin gives: two replicas, the gate warning, the image on the node.
fn install_args(image: &(String, String), chart: &str, verb: &str) -> Vec<String> {
    let mut args: Vec<String> = [
        verb,
        "crd-audit",
        chart,
        "--namespace",
        NAMESPACE,
        "--wait",
        "--timeout",
        "5m",
        "--set",
        "replicas=2",
        "--set",
        "gate.mode=warn",
        "--set",
        "image.pullPolicy=Never",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push("--set".into());
    args.push(format!("image.repository={}", image.0));
    args.push("--set".into());
    args.push(format!("image.tag={}", image.1));
    if verb == "install" {
        args.push("--create-namespace".into());
    }
    args
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn widgets_crd(maximum: u32) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD},
        "spec": {"group": GROUP, "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "integer", "maximum": maximum},
                        "note": {"type": "string"}}}}}}}]}})
}

/// The operator's pods (the Deployment's, not a hook Job's).
fn operator_pods(admin: &Rest) -> Vec<Value> {
    admin
        .list(&format!(
            "/api/v1/namespaces/{NAMESPACE}/pods?labelSelector=app.kubernetes.io/name%3Dcrd-audit"
        ))
        .unwrap()
        .into_iter()
        .filter(|p| {
            p["metadata"]["ownerReferences"]
                .as_array()
                .is_some_and(|o| o.iter().any(|r| r["kind"] == "ReplicaSet"))
                && p["metadata"]["deletionTimestamp"].is_null()
        })
        .collect()
}

fn ready(pod: &Value) -> bool {
    pod["status"]["conditions"].as_array().is_some_and(|c| {
        c.iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    })
}

/// The host PID of a container (`containerd://ID`), from the node's containerd.
fn container_pid(env: &TestEnv, container_id: &str) -> u32 {
    let id = container_id.trim_start_matches("containerd://");
    let out = Command::new("ctr")
        .args([
            "--address",
            &env.env_var("KUBE_TESTENV_CONTAINERD"),
            "--namespace",
            "k8s.io",
            "tasks",
            "ls",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find_map(|l| {
            let mut f = l.split_whitespace();
            (f.next()? == id).then(|| f.next()?.parse().ok())?
        })
        .unwrap_or_else(|| panic!("no task {id} in the node's containerd:\n{text}"))
}

/// What the kernel says of a running process: its user, seccomp mode, no-new-privileges,
/// effective capabilities, and whether its root filesystem is mounted read-only.
fn process_facts(pid: u32) -> (String, String, String, String, bool) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .unwrap_or("")
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_string()
    };
    let mounts = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).unwrap();
    // mountinfo: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ...
    let root_ro = mounts.lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.len() > 5 && f[4] == "/" && f[5].split(',').any(|o| o == "ro")
    });
    (
        field("Uid"),
        field("Seccomp"),
        field("NoNewPrivs"),
        field("CapEff"),
        root_ro,
    )
}

/// Every CRD of the cluster (but crd-audit's own) has its report, with a verdict on its
/// objects.
fn every_crd_reported(admin: &Rest) -> bool {
    let crds: Vec<Value> = admin
        .list("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        .unwrap_or_default()
        .into_iter()
        .filter(|c| c["spec"]["group"] != "crd-audit.dev")
        .collect();
    !crds.is_empty()
        && crds.iter().all(|c| {
            let name = c["metadata"]["name"].as_str().unwrap_or("");
            report(admin, name).ok().is_some_and(|r| {
                condition(&r, "InstancesValid").is_some_and(|(s, _)| s == "True" || s == "False")
            })
        })
}

fn write_json(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let f = dir.join(name);
    std::fs::write(&f, v.to_string()).unwrap();
    f
}

/// How many packets the node's namespace refused to send outside itself (node-up.sh counts
/// them in the last rule of its chain CRD-AUDIT-NODE-EGRESS).
fn packets_refused_outside(env: &TestEnv) -> u64 {
    let out = Command::new("nsenter")
        .arg(format!(
            "--net=/run/netns/{}",
            env.env_var("KUBE_TESTENV_NETNS")
        ))
        .args([
            "--",
            "iptables",
            "-w",
            "-L",
            "CRD-AUDIT-NODE-EGRESS",
            "-v",
            "-x",
            "-n",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find(|l| l.contains("REJECT"))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no REJECT rule in CRD-AUDIT-NODE-EGRESS: {text}"))
}

/// The destinations node-up.sh's chain refused (xt_recent's list, read in the namespace).
fn destinations_refused_outside(env: &TestEnv) -> String {
    let out = Command::new("nsenter")
        .arg(format!(
            "--net=/run/netns/{}",
            env.env_var("KUBE_TESTENV_NETNS")
        ))
        .args(["--", "cat", "/proc/net/xt_recent/crd-audit-egress"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `helm test` of the release as NOTES.txt gives it, with the test Pod's log when `logs`:
/// (success, stdout and stderr). (`--logs` fails after a passing test: the chart deletes the
/// Pod once it succeeded, before Helm reads its log.)
fn helm_test(env: &TestEnv, logs: bool) -> (bool, String) {
    let mut args = vec![
        "test",
        "crd-audit",
        "--namespace",
        NAMESPACE,
        "--timeout",
        "4m",
    ];
    if logs {
        args.push("--logs");
    }
    let out = helm(env, &args);
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// The path NOTES.txt gives admins to read the metrics (`kubectl get --raw PATH`), from the
/// release's notes as `helm get notes` prints them.
fn metrics_path_from_notes(env: &TestEnv) -> String {
    let notes = helm_ok(
        env,
        &["get", "notes", "crd-audit", "--namespace", NAMESPACE],
    );
    notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("kubectl get --raw "))
        .filter(|p| p.ends_with("/metrics"))
        .unwrap_or_else(|| panic!("NOTES.txt gives no `kubectl get --raw .../metrics`:\n{notes}"))
        .to_string()
}

/// The lines of the gate in kubectl's stderr.
fn gate_lines(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.contains("crd-audit:"))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_chart_runs_in_pods_gates_fails_over_and_uninstalls() {
    let _turn = node_turn();
    let Some(node) = node() else { return };
    let env = &node.env;
    let admin = &env.admin;
    let dir = env.run_dir.join("install");
    std::fs::create_dir_all(&dir).unwrap();

    // A CRD whose owner grants reading it by aggregation (what the chart's default RBAC
    // relies on), with three objects: sizes 1, 4 and 8.
    apply(admin, &widgets_crd(10));
    owner_roles(admin, "widgets", GROUP, "widgets", &["patch"]);
    apply(
        admin,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}),
    );
    wait_for("widgets to be served", || {
        admin.get("/apis/node.example.com/v1/widgets").ok()
    });
    for (name, size) in [("small", 1), ("medium", 4), ("large", 8)] {
        apply(
            admin,
            &json!({"apiVersion": "node.example.com/v1", "kind": "Widget",
                "metadata": {"name": name, "namespace": "team-a"},
                "spec": {"size": size, "note": ""}}),
        );
    }
    // The empty string is stored as it was sent (not read as null).
    let medium = admin
        .get("/apis/node.example.com/v1/namespaces/team-a/widgets/medium")
        .unwrap();
    assert_eq!(medium["spec"]["note"], "");

    // helm install --wait, as an admin runs it.
    let _release = Release(env);
    let started = Instant::now();
    helm_ok(
        env,
        &strs(&install_args(&node.image, "charts/crd-audit", "install")),
    );
    let installed = started.elapsed();
    wait_for_at_most("a report of every CRD", EVERY_REPORT_WITHIN, &mut || {
        every_crd_reported(admin).then_some(())
    });
    let every_report = started.elapsed();
    eprintln!(
        "FIGURE helm install --wait took {:.1} s; every report {:.1} s after helm install started",
        installed.as_secs_f64(),
        every_report.as_secs_f64()
    );

    // Running: both pods ready, their probes passing, as the chart's security context says.
    let pods = operator_pods(admin);
    assert_eq!(pods.len(), 2, "{pods:#?}");
    for pod in &pods {
        assert!(ready(pod), "{pod:#}");
        let spec = &pod["spec"];
        let container = &spec["containers"][0];
        for probe in ["startupProbe", "livenessProbe", "readinessProbe"] {
            assert!(container[probe].is_object(), "no {probe}: {container:#}");
        }
        assert_eq!(
            spec["securityContext"]["seccompProfile"]["type"],
            "RuntimeDefault"
        );
        let status = &pod["status"]["containerStatuses"][0];
        assert_eq!(status["ready"], true, "{status:#}");
        assert_eq!(status["restartCount"], 0, "{status:#}");
        let pid = container_pid(env, status["containerID"].as_str().unwrap());
        let (uid, seccomp, no_new_privs, caps, root_ro) = process_facts(pid);
        assert_eq!(uid, "65532", "the operator's user");
        assert_eq!(seccomp, "2", "seccomp in filter mode (RuntimeDefault)");
        assert_eq!(no_new_privs, "1", "allowPrivilegeEscalation: false");
        assert_eq!(caps, "0000000000000000", "no capability");
        assert!(root_ro, "the root filesystem is read-only");
    }

    // `helm test`: the chart's test Pod finds a replica ready through the metrics Service (by
    // its name, through the cluster's DNS) and a report, and passes (the failing case is at
    // the end: no replica). Its Pod ran (kubelet's Started event) and is gone (deleted once it
    // succeeded).
    let (passed, out) = helm_test(env, false);
    assert!(passed, "helm test: {out}");
    assert!(
        out.contains("TEST SUITE:     crd-audit-test") && !out.contains("Phase:          Failed"),
        "{out}"
    );
    let test_pod_started = || {
        events_in(admin, NAMESPACE, "Started")
            .into_iter()
            .filter(|e| {
                e["regarding"]["name"] == "crd-audit-test"
                    || e["involvedObject"]["name"] == "crd-audit-test"
            })
            .count()
    };
    assert_eq!(test_pod_started(), 1, "the test Pod never started");
    assert!(absent(
        admin,
        &format!("/api/v1/namespaces/{NAMESPACE}/pods/crd-audit-test")
    ));

    startup::startup_probe_gates_readiness(env);

    // The gate: the API server calls it through the chart's Service, trusting the CA of the
    // self-managed certificate.
    let vwc = wait_for("the gate's webhook configuration", || {
        admin
            .get("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/crd-audit")
            .ok()
    });
    let client = &vwc["webhooks"][0]["clientConfig"];
    assert_eq!(
        client["service"],
        json!({"name": "crd-audit", "namespace": NAMESPACE, "path": "/validate-crd", "port": 443}),
        "{vwc:#}"
    );
    assert!(client["url"].is_null(), "{vwc:#}");
    let secret = admin
        .get(&format!(
            "/api/v1/namespaces/{NAMESPACE}/secrets/crd-audit-gate-tls"
        ))
        .expect("the gate's self-managed Secret");
    assert_eq!(
        client["caBundle"], secret["data"]["ca.crt"],
        "the webhook trusts the self-managed CA"
    );
    let max5 = write_json(&dir, "max5.json", &widgets_crd(5));
    let max3 = write_json(&dir, "max3.json", &widgets_crd(3));
    let (code, _, err) = env.kubectl(&["apply", "--dry-run=server", "-f", max5.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        gate_lines(&err),
        [
            "Warning: crd-audit: 1 of 3 stored widgets become invalid under v1: 1 stuck (every update refused), 0 tolerated",
            "Warning: crd-audit: stuck team-a/large: spec.size: Invalid value: <number>: spec.size in body should be less than or equal to 5"
        ],
        "{err}"
    );

    // Metrics, read as NOTES.txt tells admins: the API server's proxy to the chart's metrics
    // Service, which picks a replica; each answers, and the per-CRD series is served.
    let metrics_path = metrics_path_from_notes(env);
    assert_eq!(
        metrics_path,
        format!("/api/v1/namespaces/{NAMESPACE}/services/crd-audit-metrics:metrics/proxy/metrics")
    );
    let series = format!("crd_audit_objects{{crd=\"{CRD}\",version=\"v1\"}}");
    let mut pages = Vec::new();
    for _ in 0..10 {
        let page = admin
            .get_text(&metrics_path)
            .expect("/metrics through the Service, by the API server's proxy");
        assert!(page.contains("crd_audit_watches "), "{page}");
        pages.push(metric(&page, &series));
    }
    assert!(
        pages.contains(&Some(3.0)),
        "{series} in none of 10 reads: {pages:?}"
    );
    let leader = wait_for("a leader", || lease_holder(admin));

    failover::when_the_leader_is_deleted(env, &leader, &max5, &max3);
    failover::when_the_leader_is_killed_by_the_runtime(env);
    failover::when_the_leader_freezes(env);

    // Nothing in the node sent to an address outside it.
    assert_eq!(
        packets_refused_outside(env),
        0,
        "packets sent outside the node, to: {}",
        destinations_refused_outside(env)
    );

    // `helm test` fails when no replica runs: the Deployment scaled to 0, the test Pod finds
    // no replica ready behind the metrics Service within its wait, and fails (its Pod stays,
    // Failed, with its log).
    let (code, _, err) = env.kubectl(&[
        "-n",
        NAMESPACE,
        "scale",
        "deployment/crd-audit",
        "--replicas=0",
    ]);
    assert_eq!(code, Some(0), "{err}");
    wait_for("the operator's pods to go", || {
        operator_pods(admin).is_empty().then_some(())
    });
    let (passed, out) = helm_test(env, true);
    assert!(!passed, "helm test passed with no replica: {out}");
    let test_pod = admin
        .get(&format!(
            "/api/v1/namespaces/{NAMESPACE}/pods/crd-audit-test"
        ))
        .expect("the failed test Pod stays");
    assert_eq!(
        test_pod["status"]["phase"], "Failed",
        "{:#}",
        test_pod["status"]
    );
    assert!(out.contains("is not ready"), "the test Pod's log: {out}");

    // Uninstall: the pre-delete Job runs in a pod; nothing crd-audit wrote is left.
    helm_ok(
        env,
        &["uninstall", "crd-audit", "--namespace", NAMESPACE, "--wait"],
    );
    let job_pods: Vec<Value> = events_in(admin, NAMESPACE, "SuccessfulCreate")
        .into_iter()
        .filter(|e| note(e).contains("crd-audit-uninstall-cleanup"))
        .collect();
    assert!(
        !job_pods.is_empty(),
        "the pre-delete Job created no pod: {:#?}",
        events_in(admin, NAMESPACE, "SuccessfulCreate")
    );
    let started: Vec<Value> = events_in(admin, NAMESPACE, "Started")
        .into_iter()
        .filter(|e| {
            e["regarding"]["name"]
                .as_str()
                .or(e["involvedObject"]["name"].as_str())
                .is_some_and(|n| n.starts_with("crd-audit-uninstall-cleanup"))
        })
        .collect();
    assert!(
        !started.is_empty(),
        "the pre-delete Job's pod never started"
    );
    let left = |path: &str| !absent(admin, path);
    let audits = list_ok(admin, "/apis/crd-audit.dev/v1alpha1/schemaaudits");
    assert!(audits.is_empty(), "SchemaAudits left: {audits:#?}");
    for path in [
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/crd-audit"
            .to_string(),
        format!("/api/v1/namespaces/{NAMESPACE}/secrets/crd-audit-gate-tls"),
        format!("/apis/apps/v1/namespaces/{NAMESPACE}/deployments/crd-audit"),
    ] {
        assert!(!left(&path), "{path} left after helm uninstall");
    }
    wait_for("the operator's pods to go", || {
        operator_pods(admin).is_empty().then_some(())
    });
    // The Lease the cleanup held goes with the release (garbage collection), so that an
    // install right after elects a leader at once.
    wait_for("the Lease to go", || {
        absent(
            admin,
            &format!("/apis/coordination.k8s.io/v1/namespaces/{NAMESPACE}/leases/crd-audit"),
        )
        .then_some(())
    });
}
