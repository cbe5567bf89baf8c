//! Failover on the node: the leader's pod deleted (kubelet sends SIGTERM: the Lease is
//! released), its container killed through the runtime (SIGKILL: nothing released, the Lease
//! expires), its process frozen (SIGSTOP: the Lease expires, the thawed replica stays a
//! standby). docs/development/testing.md quotes the figures these measure.

use super::*;

pub(super) fn lease(admin: &Rest) -> Option<Value> {
    admin
        .get(&format!(
            "/apis/coordination.k8s.io/v1/namespaces/{NAMESPACE}/leases/crd-audit"
        ))
        .ok()
        .map(|l| l["spec"].clone())
}

pub(super) fn lease_holder(admin: &Rest) -> Option<String> {
    lease(admin)?["holderIdentity"]
        .as_str()
        .filter(|h| !h.is_empty())
        .map(str::to_string)
}

/// The Lease's spec names a holder other than `pod`.
fn held_by_other_than(pod: &str) -> impl Fn(&Value) -> bool + '_ {
    move |spec| {
        spec["holderIdentity"]
            .as_str()
            .is_some_and(|h| !h.is_empty() && h != pod)
    }
}

/// The Lease's spec records a transition after `transitions`: a process other than the one
/// that held it took it (a restarted container of the same pod counts: its identity is the
/// pod's, but it acquires the Lease as a new holder).
fn taken_after(transitions: i64) -> impl Fn(&Value) -> bool {
    move |spec| {
        spec["leaseTransitions"].as_i64().unwrap_or(0) > transitions
            && spec["holderIdentity"]
                .as_str()
                .is_some_and(|h| !h.is_empty())
    }
}

fn signal(pid: u32, sig: &str) {
    let status = Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{sig} {pid}");
}

/// While leadership moves: `kubectl apply --dry-run=server` of `probe` (if any) every quarter
/// second, each of which must get the gate's warning, until the Lease's spec shows a new
/// leader (`new_leader`) and the report shows `reported` of the change made at `changed`.
/// (time to the new leader from `since`, time to the report from `changed`, how many applies).
fn watch_failover(
    env: &TestEnv,
    probe: Option<&Path>,
    since: Instant,
    changed: Instant,
    new_leader: &dyn Fn(&Value) -> bool,
    reported: &dyn Fn(&Value) -> bool,
) -> (Duration, Duration, usize) {
    let admin = &env.admin;
    let mut applies = 0;
    let mut took_over = None;
    let mut seen = None;
    while took_over.is_none() || seen.is_none() {
        assert!(
            since.elapsed() < Duration::from_secs(90),
            "after 90 s: new leader after {took_over:?}, report after {seen:?}"
        );
        // The Lease first: the time is taken as close to the read as the loop allows.
        if took_over.is_none() && lease(admin).is_some_and(|spec| new_leader(&spec)) {
            took_over = Some(since.elapsed());
        }
        if let Some(probe) = probe {
            let (code, _, err) =
                env.kubectl(&["apply", "--dry-run=server", "-f", probe.to_str().unwrap()]);
            applies += 1;
            assert_eq!(code, Some(0), "{err}");
            assert!(
                gate_lines(&err)
                    .first()
                    .is_some_and(|l| l.starts_with("Warning: crd-audit: ")
                        && l.contains(" of 3 stored widgets become invalid under v1")),
                "kubectl apply {:.1} s into the failover got no answer from the gate: {err}",
                since.elapsed().as_secs_f64()
            );
        }
        if seen.is_none() && report(admin, CRD).ok().is_some_and(|r| reported(&r)) {
            seen = Some(changed.elapsed());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    (took_over.unwrap(), seen.unwrap(), applies)
}

/// `watch_failover` for the change to maximum 5: one object invalid, the schema tightened.
fn failover(
    env: &TestEnv,
    probe: Option<&Path>,
    since: Instant,
    changed: Instant,
    new_leader: &dyn Fn(&Value) -> bool,
) -> (Duration, Duration, usize) {
    watch_failover(env, probe, since, changed, new_leader, &|r| {
        condition(r, "SchemaTightened").is_some_and(|(s, _)| s == "True")
            && r["status"]["versions"][0]["invalidObjects"] == 1
    })
}

/// `watch_failover` for the change back to maximum 10: every object valid again.
fn failover_loosened(
    env: &TestEnv,
    probe: Option<&Path>,
    since: Instant,
    changed: Instant,
    new_leader: &dyn Fn(&Value) -> bool,
) -> (Duration, Duration, usize) {
    watch_failover(env, probe, since, changed, new_leader, &|r| {
        condition(r, "InstancesValid").is_some_and(|(s, _)| s == "True")
            && condition(r, "SchemaTightened").is_some_and(|(s, _)| s == "False")
    })
}

/// SIGKILL to a container's task through the node's containerd: no SIGTERM, nothing released.
fn kill_in_runtime(env: &TestEnv, container_id: &str) {
    let id = container_id.trim_start_matches("containerd://");
    let out = Command::new("ctr")
        .args([
            "--address",
            &env.env_var("KUBE_TESTENV_CONTAINERD"),
            "--namespace",
            "k8s.io",
            "tasks",
            "kill",
            "--signal",
            "SIGKILL",
            id,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ctr tasks kill {id}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The leader's pod deleted (`kubectl delete pod --grace-period=0 --force`): kubelet still
/// sends it SIGTERM, so it releases the Lease and another replica leads at its next try (a
/// few seconds: a broken release, waiting for the 15 s expiry, fails); every `kubectl apply`
/// meanwhile gets the gate's answer; a CRD change made right after reaches its report
/// within 30 s.
pub(super) fn when_the_leader_is_deleted(env: &TestEnv, leader: &str, max5: &Path, max3: &Path) {
    let admin = &env.admin;
    // Failover: the leader's pod is killed (`--grace-period=0 --force`). Another replica
    // leads within the Lease's timing; every `kubectl apply` meanwhile gets the gate's
    // answer; a CRD change made right after reaches its report within 30 s.
    let (code, _, err) = env.kubectl(&[
        "-n",
        NAMESPACE,
        "delete",
        "pod",
        leader,
        "--grace-period=0",
        "--force",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let killed = Instant::now();
    let (code, _, err) = env.kubectl(&["apply", "-f", max5.to_str().unwrap()]);
    let changed = Instant::now();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(gate_lines(&err).len(), 2, "the change right after: {err}");
    let (took_over, reported, applies) = failover(
        env,
        Some(max3),
        killed,
        changed,
        &held_by_other_than(leader),
    );
    eprintln!(
        "FIGURE failover after the leader's pod was killed: another replica led {:.1} s later; \
         the change reached its report {:.1} s after it was made; {applies} kubectl apply \
         meanwhile, each warned",
        took_over.as_secs_f64(),
        reported.as_secs_f64()
    );
    // The killed leader released the Lease (kubelet sent SIGTERM): the standby takes it at
    // its next try, not after the lease's 15 s.
    assert!(
        took_over <= RELEASED_WITHIN,
        "another replica led {took_over:?} after the leader's pod was deleted: the Lease was \
         not released (lease {LEASE_DURATION:?}, retry {RETRY:?})"
    );
    assert!(
        reported <= CHANGE_REPORTED_WITHIN,
        "the change reached its report after {reported:?}"
    );
    // The Deployment replaces the killed pod, which becomes a ready standby.
    wait_for_at_most(
        "two ready pods again",
        Duration::from_secs(120),
        &mut || {
            let pods = operator_pods(admin);
            (pods.len() == 2 && pods.iter().all(ready)).then_some(())
        },
    );
}

/// The leader's container killed with SIGKILL through containerd (as the OOM killer or a
/// crash does): no SIGTERM, nothing released. Another process (the standby, or the pod's
/// restarted container, which acquires the Lease as a new holder) leads once the Lease has
/// gone unrenewed for the lease duration (at most a retry period later), and not before the
/// lease duration less a retry period: it waited for the expiry.
pub(super) fn when_the_leader_is_killed_by_the_runtime(env: &TestEnv) {
    let admin = &env.admin;
    // A leader killed by the runtime (SIGKILL to its container through containerd, as the
    // OOM killer or a crash does): no SIGTERM, nothing released. Another process (the
    // standby, or the pod's restarted container, which acquires the Lease as a new holder)
    // leads once the Lease has gone unrenewed for the lease duration, not before.
    let killed_leader = wait_for("a leader", || lease_holder(admin));
    let killed_pod = operator_pods(admin)
        .into_iter()
        .find(|p| p["metadata"]["name"] == killed_leader.as_str())
        .expect("the leader's pod");
    let transitions = lease(admin).unwrap()["leaseTransitions"]
        .as_i64()
        .unwrap_or(0);
    kill_in_runtime(
        env,
        killed_pod["status"]["containerStatuses"][0]["containerID"]
            .as_str()
            .unwrap(),
    );
    let killed = Instant::now();
    apply(admin, &widgets_crd(10));
    let changed = Instant::now();
    // (No gate probes: until kubelet sees the container dead and the endpoints follow, the
    // Service may still send a review to the killed replica; failurePolicy Ignore lets the
    // change through.)
    let (took_over, reported, _) =
        failover_loosened(env, None, killed, changed, &taken_after(transitions));
    let new_holder = lease_holder(admin).unwrap_or_default();
    eprintln!(
        "FIGURE failover after the leader's container was killed (SIGKILL through containerd): \
         {new_holder} led {:.1} s later; the change reached its report {:.1} s after it was made",
        took_over.as_secs_f64(),
        reported.as_secs_f64()
    );
    assert!(
        took_over >= LEASE_DURATION - RETRY && took_over <= LEASE_DURATION + RETRY + POLL,
        "a new leader {took_over:?} after the leader was killed without releasing the Lease \
         (lease {LEASE_DURATION:?}, retry {RETRY:?})"
    );
    assert!(
        reported <= CHANGE_REPORTED_WITHIN,
        "the change reached its report after {reported:?}"
    );
    wait_for_at_most(
        "two ready pods again",
        Duration::from_secs(120),
        &mut || {
            let pods = operator_pods(admin);
            (pods.len() == 2 && pods.iter().all(ready)).then_some(())
        },
    );
    let restarted = operator_pods(admin)
        .into_iter()
        .find(|p| p["metadata"]["name"] == killed_leader.as_str())
        .expect("the killed container's pod, its container restarted");
    assert!(
        startup::container_state(&restarted).2 >= 1,
        "kubelet restarted the killed container: {:#}",
        restarted["status"]
    );
    // Back to the tightened schema for the frozen leader's change.
    apply(admin, &widgets_crd(5));
    wait_for("the tightening reported", || {
        report(admin, CRD)
            .ok()
            .filter(|r| condition(r, "SchemaTightened").is_some_and(|(s, _)| s == "True"))
    });
}

/// A leader that stops without giving the Lease up (its process frozen, as a hung or cut off
/// replica): a standby takes the Lease once it has gone unrenewed for the lease duration, and
/// the frozen leader, thawed, does not act (it lost the Lease).
pub(super) fn when_the_leader_freezes(env: &TestEnv) {
    let admin = &env.admin;
    // A leader that stops without giving the Lease up (its process frozen, as a hung or cut
    // off replica): a standby takes the Lease once it has gone unrenewed for the lease
    // duration, and the frozen leader, thawed, does not act (it lost the Lease).
    let frozen = wait_for("a leader", || lease_holder(admin));
    let frozen_pod = operator_pods(admin)
        .into_iter()
        .find(|p| p["metadata"]["name"] == frozen.as_str())
        .expect("the leader's pod");
    let pid = container_pid(
        env,
        frozen_pod["status"]["containerStatuses"][0]["containerID"]
            .as_str()
            .unwrap(),
    );
    signal(pid, "STOP");
    let stopped = Instant::now();
    apply(admin, &widgets_crd(10));
    let changed = Instant::now();
    // (No gate probes here: the frozen replica stays behind the Service until its readiness
    // probe fails, and a review sent to it times out; failurePolicy Ignore lets the change
    // through. docs/development/testing.md says so.)
    let (took_over, reported, _) =
        failover_loosened(env, None, stopped, changed, &held_by_other_than(&frozen));
    signal(pid, "CONT");
    eprintln!(
        "FIGURE failover after the leader froze: a standby led {:.1} s later; the change \
         reached its report {:.1} s after it was made",
        took_over.as_secs_f64(),
        reported.as_secs_f64()
    );
    assert!(
        took_over >= LEASE_DURATION - RETRY && took_over <= LEASE_DURATION + 2 * RETRY,
        "a standby led {took_over:?} after the leader froze (lease {LEASE_DURATION:?}, retry {RETRY:?})"
    );
    assert!(
        reported <= CHANGE_REPORTED_WITHIN,
        "the change reached its report after {reported:?}"
    );
    // Thawed, the old leader stays a standby: the Lease stays with the new holder.
    std::thread::sleep(Duration::from_secs(5));
    let holder = lease_holder(admin).unwrap();
    assert_ne!(holder, frozen, "the thawed replica took the Lease back");
}
