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

/// What kubelet 1.20 requires of the kernel (tests/testenv/node-host.sh, KUBELET_SYSCTLS): with
/// `protectKernelDefaults` node-up.sh sets them on the host (none is per namespace) after
/// recording the host's values, and the last node-down.sh writes those back.
const KUBELET_SYSCTLS: &[(&str, &str)] = &[
    ("vm.overcommit_memory", "1"),
    ("vm.panic_on_oom", "0"),
    ("kernel.panic", "10"),
    ("kernel.panic_on_oops", "1"),
    ("kernel.keys.root_maxkeys", "1000000"),
    ("kernel.keys.root_maxbytes", "25000000"),
];

fn sysctl_file(key: &str) -> String {
    format!("/proc/sys/{}", key.replace('.', "/"))
}

fn read_sysctl(key: &str) -> String {
    std::fs::read_to_string(sysctl_file(key))
        .unwrap_or_else(|e| panic!("{key}: {e}"))
        .trim()
        .to_string()
}

fn write_sysctl(key: &str, value: &str) {
    std::fs::write(sysctl_file(key), value).unwrap_or_else(|e| panic!("{key}={value}: {e}"));
}

/// The host's kernel tunables (`sysctl -a` in the host's namespaces) but those that move on
/// their own (counters, random values).
fn host_sysctls() -> std::collections::BTreeMap<String, String> {
    const MOVING: &[&str] = &[
        "fs.dentry-state",
        "fs.file-nr",
        "fs.inode-nr",
        "fs.inode-state",
        "fs.aio-nr",
        "fs.quota.",
        "kernel.ns_last_pid",
        "kernel.random.",
        "kernel.pty.nr",
        "net.netfilter.nf_conntrack_count",
    ];
    let out = Command::new("sysctl")
        .arg("-a")
        .output()
        .expect("sysctl (procps)");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(" = "))
        .filter(|(k, _)| !MOVING.iter().any(|m| k.starts_with(m)))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The host's values of kubelet's tunables for the test: each set to a value other than the
/// one kubelet requires (so that a node must change every one of them), and put back as the
/// test found them when it ends, however it ends.
struct HostSysctls(Vec<(&'static str, String)>);

impl HostSysctls {
    fn differ_from_kubelets() -> HostSysctls {
        let found = KUBELET_SYSCTLS
            .iter()
            .map(|(k, _)| (*k, read_sysctl(k)))
            .collect();
        for (key, kubelets) in KUBELET_SYSCTLS {
            // Safe values: no reboot on a panic or an oops, heuristic overcommit, OOM killer.
            let other = match *key {
                "vm.overcommit_memory" | "kernel.panic" | "kernel.panic_on_oops" => "0",
                "vm.panic_on_oom" => continue, // 0 is both kubelet's and the safe value
                "kernel.keys.root_maxkeys" => "200000",
                "kernel.keys.root_maxbytes" => "20000000",
                _ => unreachable!(),
            };
            assert_ne!(other, *kubelets);
            write_sysctl(key, other);
        }
        HostSysctls(found)
    }
}

impl Drop for HostSysctls {
    fn drop(&mut self) {
        for (key, value) in &self.0 {
            write_sysctl(key, value);
        }
    }
}

/// No node of this host but the ones the test starts: the node tests' shared node stopped (the
/// next node test starts another), and none registered by another run (else the host's
/// sysctls are written back only when that one goes, and this test cannot see it).
fn the_only_node() {
    crate::node::stop_shared_node();
    // Nodes killed before their node-down.sh ran are reaped, as the next node-up.sh would.
    let reaped = Command::new("bash")
        .arg("-c")
        .arg(
            "HERE=tests/testenv; CACHE=${KUBE_TESTENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/crd-audit-testenv}; \
             log() { echo \"[node] $*\" >&2; }; . tests/testenv/node-host.sh; with_host_lock reap_dead_nodes",
        )
        .status()
        .unwrap();
    assert!(reaped.success());
    let cache = std::env::var("KUBE_TESTENV_CACHE").unwrap_or_else(|_| {
        let base = std::env::var("XDG_CACHE_HOME")
            .unwrap_or_else(|_| format!("{}/.cache", std::env::var("HOME").unwrap()));
        format!("{base}/crd-audit-testenv")
    });
    let others: Vec<String> = std::fs::read_dir(format!("{cache}/nodes"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(
        others.is_empty(),
        "another node is registered on this host (stop it first, or wait for it): {others:?}"
    );
}

/// A pause pod on the pod network, with a volume (the ServiceAccount token, a tmpfs mount),
/// running: the pod.
fn running_pod(env: &TestEnv) -> serde_json::Value {
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
    assert!(
        pod["status"]["podIP"]
            .as_str()
            .is_some_and(|ip| ip.starts_with("10.244.0.")),
        "{pod:#}"
    );
    pod
}

/// What of a node is on the host: its processes (their command line names its run directory,
/// or they are in its pods' cgroup), the mounts under its run directory, its cgroups.
struct NodeTraces {
    run_dir: std::path::PathBuf,
    cgroup: String,
    netns: String,
}

impl NodeTraces {
    fn of(env: &TestEnv) -> NodeTraces {
        let t = NodeTraces {
            run_dir: env.run_dir.clone(),
            cgroup: env.env_var("KUBE_TESTENV_CGROUP_ROOT"),
            netns: env.env_var("KUBE_TESTENV_NETNS"),
        };
        assert!(!t.netns.is_empty() && !t.cgroup.is_empty());
        t
    }

    fn processes(&self) -> Vec<u32> {
        let run = self.run_dir.display().to_string();
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let cgroups =
                    std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
                String::from_utf8_lossy(&cmdline).contains(&run) || cgroups.contains(&self.cgroup)
            })
            .collect()
    }

    fn mounts(&self) -> usize {
        std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .lines()
            .filter(|l| l.contains(&self.run_dir.display().to_string()))
            .count()
    }

    fn cgroups(&self) -> Vec<String> {
        std::fs::read_dir("/sys/fs/cgroup")
            .unwrap()
            .flatten()
            .map(|c| c.path().join(self.cgroup.trim_start_matches('/')))
            .filter(|d| d.exists())
            .map(|d| d.display().to_string())
            .collect()
    }

    fn netns_exists(&self) -> bool {
        host_state().1.contains(&self.netns)
    }

    /// Asserts that nothing of the node is left.
    fn assert_gone(&self, after: &str) {
        assert_eq!(
            self.processes(),
            Vec::<u32>::new(),
            "processes left {after}"
        );
        assert_eq!(self.mounts(), 0, "mounts left {after}");
        assert!(
            !self.run_dir.exists(),
            "{} left {after}",
            self.run_dir.display()
        );
        assert_eq!(self.cgroups(), Vec::<String>::new(), "cgroups left {after}");
        assert!(
            !self.netns_exists(),
            "network namespace {} left {after}",
            self.netns
        );
    }
}

/// `node-down.sh` stops every process of the node (the pods' too), and removes its
/// containers, mounts, cgroups, network namespace (with every iptables rule in it) and the
/// pods' logs, and writes back the host's sysctls that node-up.sh changed for kubelet
/// (`protectKernelDefaults`: kubelet checks them and changes nothing itself).
#[test]
fn a_node_leaves_nothing_behind() {
    let _turn = node_lane();
    if std::env::var("CRD_AUDIT_E2E").as_deref() == Ok("off") {
        return;
    }
    the_only_node();
    let _restore = HostSysctls::differ_from_kubelets();
    let before = host_state();
    let sysctls_before = host_sysctls();
    let Some(env) = start_node() else { return };
    let traces = NodeTraces::of(&env);
    // kubelet runs with protectKernelDefaults (its configuration, read through the API
    // server's proxy), so the values it needs are on the host while the node runs.
    let configz = env
        .admin
        .get(&format!(
            "/api/v1/nodes/{}/proxy/configz",
            env.env_var("KUBE_TESTENV_NODE_NAME")
        ))
        .expect("kubelet's /configz");
    assert_eq!(
        configz["kubeletconfig"]["protectKernelDefaults"], true,
        "{configz:#}"
    );
    for (key, value) in KUBELET_SYSCTLS {
        assert_eq!(read_sysctl(key), *value, "{key} while the node runs");
    }
    let pod = running_pod(&env);
    let uid = pod["metadata"]["uid"].as_str().unwrap().to_string();
    assert!(traces.mounts() > 0, "a running pod mounts its volumes");
    assert!(!traces.processes().is_empty());

    drop(env); // node-down.sh
    traces.assert_gone("after node-down.sh");
    let after = host_state();
    assert!(
        !after.2.iter().any(|l| l.contains(&uid)),
        "the pod's logs left: {:?}",
        after.2
    );
    assert_eq!(after.0, before.0, "the host's iptables rules changed");
    let sysctls_after = host_sysctls();
    let changed: Vec<String> = sysctls_before
        .iter()
        .filter(|(k, v)| sysctls_after.get(*k) != Some(*v))
        .map(|(k, v)| format!("{k}: {v} -> {:?}", sysctls_after.get(k)))
        .collect();
    assert_eq!(
        changed,
        Vec::<String>::new(),
        "host sysctls not as they were before node-up.sh"
    );
}

/// A node whose processes were all killed with SIGKILL (a crashed test run: node-down.sh never
/// ran) leaves its processes' traces, mounts, cgroups, network namespace and the sysctls it
/// set; the next node-up.sh reaps all of it (found through its registry entry, by the node's
/// network namespace and cgroup, never by a process's name) and then runs a node that works,
/// whose node-down.sh leaves the host as it was before the first node.
#[test]
fn the_next_start_reaps_a_killed_node() {
    let _turn = node_lane();
    if std::env::var("CRD_AUDIT_E2E").as_deref() == Ok("off") {
        return;
    }
    the_only_node();
    let _restore = HostSysctls::differ_from_kubelets();
    let before = host_state();
    let sysctls_before = host_sysctls();
    let Some(first) = start_node() else { return };
    let traces = NodeTraces::of(&first);
    running_pod(&first);
    let pids = traces.processes();
    assert!(pids.len() > 5, "the node's processes: {pids:?}");
    let killed = Command::new("kill")
        .arg("-KILL")
        .args(pids.iter().map(|p| p.to_string()))
        .status()
        .unwrap();
    assert!(killed.success());
    wait_for("the killed processes to go", || {
        traces.processes().is_empty().then_some(())
    });
    // What a killed node leaves.
    assert!(traces.mounts() > 0, "no mount left by the killed node");
    assert!(
        !traces.cgroups().is_empty(),
        "no cgroup left by the killed node"
    );
    assert!(traces.netns_exists(), "no network namespace left");
    for (key, value) in KUBELET_SYSCTLS {
        assert_eq!(read_sysctl(key), *value, "{key} the killed node set");
    }

    let Some(second) = start_node() else { return };
    traces.assert_gone("after the next node-up.sh");
    assert_ne!(second.run_dir, traces.run_dir);
    running_pod(&second);
    drop(second);
    drop(first); // its run directory is gone: node-down.sh finds nothing to do
    let after = host_state();
    assert_eq!(after.0, before.0, "the host's iptables rules changed");
    let sysctls_after = host_sysctls();
    let changed: Vec<String> = sysctls_before
        .iter()
        .filter(|(k, v)| sysctls_after.get(*k) != Some(*v))
        .map(|(k, v)| format!("{k}: {v} -> {:?}", sysctls_after.get(k)))
        .collect();
    assert_eq!(
        changed,
        Vec::<String>::new(),
        "host sysctls not as they were before the first node-up.sh"
    );
}
