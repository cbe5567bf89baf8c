//! The test harness itself (`tests/testenv`): what the API server it builds stores, how two
//! starts share one build, and that a node leaves nothing behind when it goes.

use crate::support::*;
use serde_json::json;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The harness's kube-apiserver keeps an empty string as sent, in a custom resource and as a
/// CRD default (built with Go >= 1.16, its OpenAPI type check once read both as null).
#[test]
fn empty_strings_are_stored_and_defaulted_as_sent() {
    let _turn = shared_turn();
    let Some(env) = shared() else { return };
    let admin = &env.admin;
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "notes.empty.testenv.test"},
        "spec": {"group": "empty.testenv.test", "scope": "Namespaced",
            "names": {"plural": "notes", "singular": "note", "kind": "Note"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "text": {"type": "string", "minLength": 0},
                        "defaulted": {"type": "string", "default": ""},
                        "list": {"type": "array", "items": {"type": "string"}}}}}}}}]}});
    admin
        .create(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &crd,
        )
        .expect("a CRD with default: \"\" is accepted");
    let stored = admin
        .get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/notes.empty.testenv.test")
        .unwrap();
    assert_eq!(
        stored["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
            ["defaulted"]["default"],
        ""
    );
    wait_for("notes to be served", || {
        admin.get("/apis/empty.testenv.test/v1/notes").ok()
    });
    let note = json!({"apiVersion": "empty.testenv.test/v1", "kind": "Note",
        "metadata": {"name": "blank", "namespace": "default"},
        "spec": {"text": "", "list": ["", "x"]}});
    let created = admin
        .create(
            "/apis/empty.testenv.test/v1/namespaces/default/notes",
            &note,
        )
        .expect("an object holding empty strings is accepted");
    let read = admin
        .get("/apis/empty.testenv.test/v1/namespaces/default/notes/blank")
        .unwrap();
    for v in [&created, &read] {
        assert_eq!(
            v["spec"],
            json!({"text": "", "list": ["", "x"], "defaulted": ""}),
            "{v:#}"
        );
    }
    admin
        .delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/notes.empty.testenv.test")
        .unwrap();
}

/// A second start takes its turn on the cache's lock: it waits while another run holds it
/// (building, or installing packages), then uses what that run built.
#[test]
fn a_second_start_waits_for_the_build_lock() {
    let _turn = shared_turn();
    // The cache is warm once the shared server runs.
    let Some(_env) = shared() else { return };
    let cache = std::env::var("KUBE_TESTENV_CACHE").unwrap_or_else(|_| {
        let base = std::env::var("XDG_CACHE_HOME")
            .unwrap_or_else(|_| format!("{}/.cache", std::env::var("HOME").unwrap()));
        format!("{base}/crd-audit-testenv")
    });
    // This test holds the lock, as a build in progress does.
    let holder = Command::new("flock")
        .args([&format!("{cache}/.lock"), "sleep", "4"])
        .spawn()
        .expect("flock (util-linux)");
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let second = Command::new("bash")
        .arg("tests/testenv/build.sh")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let waited = started.elapsed();
    let mut holder = holder;
    holder.wait().unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(second.status.success(), "{stderr}");
    assert!(
        stderr.contains("another run is installing or building"),
        "{stderr}"
    );
    assert!(
        waited >= Duration::from_secs(3),
        "the second start went on after {waited:?}, while the lock was held"
    );
    let bin_dir = String::from_utf8(second.stdout).unwrap();
    assert!(
        std::path::Path::new(bin_dir.trim())
            .join("kube-apiserver")
            .is_file(),
        "{bin_dir}"
    );
}

/// The host's state that a node must leave as it found it.
fn host_state() -> (String, String, Vec<String>) {
    let iptables = Command::new("iptables-save")
        .output()
        .map(|o| {
            // Comments carry timestamps.
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| !l.starts_with('#'))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let netns = String::from_utf8_lossy(
        &Command::new("ip")
            .args(["netns", "list"])
            .output()
            .unwrap()
            .stdout,
    )
    .into_owned();
    let mut logs: Vec<String> = ["/var/log/pods", "/var/log/containers"]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten())
        .filter_map(|e| e.ok().map(|e| e.path().display().to_string()))
        .collect();
    logs.sort();
    (iptables, netns, logs)
}

/// `node-down.sh` stops every process of the node (the pods' too), and removes its
/// containers, mounts, cgroups, network namespace (with every iptables rule in it) and the
/// pods' logs.
#[test]
fn a_node_leaves_nothing_behind() {
    let _turn = own_server();
    let before = host_state();
    let Some(env) = start_node() else { return };
    let run_dir = env.run_dir.clone();
    let netns = env.env_var("KUBE_TESTENV_NETNS");
    let cgroup = env.env_var("KUBE_TESTENV_CGROUP_ROOT");
    assert!(!netns.is_empty() && !cgroup.is_empty());
    // A pod on the pod network, with a volume (the ServiceAccount token, a tmpfs mount).
    let pause = std::fs::read_to_string(
        std::path::Path::new(&env.env_var("KUBE_TESTENV_APISERVER_BIN"))
            .parent()
            .unwrap()
            .join("pause.image"),
    )
    .unwrap();
    env.admin
        .create(
            "/api/v1/namespaces/default/pods",
            &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sleeper"},
                "spec": {"containers": [{"name": "pause", "image": pause.trim(),
                    "imagePullPolicy": "Never"}]}}),
        )
        .unwrap();
    let pod = wait_for_at_most("the pod to run", Duration::from_secs(120), &mut || {
        let p = env
            .admin
            .get("/api/v1/namespaces/default/pods/sleeper")
            .ok()?;
        (p["status"]["phase"] == "Running").then_some(p)
    });
    let uid = pod["metadata"]["uid"].as_str().unwrap().to_string();
    assert!(
        pod["status"]["podIP"]
            .as_str()
            .is_some_and(|ip| ip.starts_with("10.244.0.")),
        "{pod:#}"
    );
    let mounts_under_run = || {
        std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .lines()
            .filter(|l| l.contains(&run_dir.display().to_string()))
            .count()
    };
    assert!(mounts_under_run() > 0, "a running pod mounts its volumes");
    let node_processes = || -> Vec<u32> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let cgroups =
                    std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
                String::from_utf8_lossy(&cmdline).contains(&run_dir.display().to_string())
                    || cgroups.contains(&cgroup)
            })
            .collect()
    };
    assert!(!node_processes().is_empty());

    drop(env); // node-down.sh
    assert_eq!(node_processes(), Vec::<u32>::new(), "processes left");
    assert_eq!(mounts_under_run(), 0, "mounts left");
    assert!(!run_dir.exists(), "{} left", run_dir.display());
    for controller in std::fs::read_dir("/sys/fs/cgroup").unwrap().flatten() {
        let d = controller.path().join(cgroup.trim_start_matches('/'));
        assert!(!d.exists(), "{} left", d.display());
    }
    let after = host_state();
    assert!(!after.1.contains(&netns), "network namespace {netns} left");
    assert!(
        !after.2.iter().any(|l| l.contains(&uid)),
        "the pod's logs left: {:?}",
        after.2
    );
    assert_eq!(after.0, before.0, "the host's iptables rules changed");
}
