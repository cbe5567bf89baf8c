//! What runs at rest runs as often as ARCHITECTURE.md says, counted from outside, as the
//! scale measurements did with `perf`: the operator's threads going to sleep (their voluntary
//! context switches) while nothing changes. Without leader election, the gate or policy
//! reports, nothing runs on a timer within a minute: the CRDs' full resyncs are an hour
//! away, the object watches ask for no bookmarks, the connections' pings are 2 minutes apart.
//! A loop that woke every second (every CRD's, or one for all) would show here.

use super::*;
use std::time::Duration;

/// Voluntary context switches of every thread of a process so far: each is a thread that
/// went to sleep, to be woken again (preemptions, which other work on the machine causes,
/// are not counted).
fn sleeps(pid: u32) -> u64 {
    let mut total = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let status =
            std::fs::read_to_string(task.unwrap().path().join("status")).unwrap_or_default();
        total += status
            .lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|n| n.trim().parse::<u64>().ok())
            .unwrap_or(0);
    }
    total
}

#[test]
fn at_rest_nothing_runs_on_a_timer() {
    // A server of its own: the other scenarios' CRDs and reports would wake its watches.
    let turn = own_server();
    let Some(env) = start() else { return };
    let s = Scenario::on_own(&env, "at-rest", turn);
    let admin = s.admin();
    install(&s);
    things(&s, 1);
    create_things(&s);
    let gadgets = format!("gadgets.{}", s.group);
    apply(admin, &things_crd(&gadgets, &s.group, 1));
    let admin_kc = s.env.kubeconfig.display().to_string();
    let config = s.config("at-rest.yaml", "");
    let c = s.controller("at-rest", &["--kubeconfig", &admin_kc, "--config", &config]);
    wait_for("a clean report", || clean_report(admin, &s.crd()));
    wait_for("the gadgets' report", || clean_report(admin, &gadgets));
    // Settled: the last writes and their watch events done.
    std::thread::sleep(Duration::from_secs(10));
    let pid = c.child.id();
    let window = Duration::from_secs(30);
    let before = sleeps(pid);
    std::thread::sleep(window);
    let woken = sleeps(pid) - before;
    eprintln!("{woken} sleeps of the operator's threads in {window:?} at rest");
    assert!(
        woken < window.as_secs(),
        "{woken} sleeps of the operator's threads in {window:?} at rest: something runs on a timer"
    );
    c.stop_cleanly();
}
