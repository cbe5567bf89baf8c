//! The chart's startup probe on the node.

use super::*;

/// The operator's container of a pod: (started, ready) as kubelet reports them, and its
/// restart count.
pub(super) fn container_state(pod: &Value) -> (bool, bool, u64) {
    let status = &pod["status"]["containerStatuses"][0];
    (
        status["started"] == true,
        status["ready"] == true,
        status["restartCount"].as_u64().unwrap_or(0),
    )
}

/// The chart's startup probe gates readiness. A Deployment `crd-audit-startup` runs the
/// installed Deployment's pod template (the chart's probes as rendered, unchanged) as a
/// ServiceAccount the chart's roles are not bound to, so that its `/readyz` cannot pass (a
/// standby is ready once it can read the Lease) while `/healthz` does: kubelet reports the
/// container neither started nor ready, and does not restart it, for as long as the test
/// looks. Once the ServiceAccount may read the Lease (the chart's Role bound to it), the
/// startup probe passes and only then the pod becomes ready. Without the chart's startup
/// probe, kubelet reports a container started as soon as it runs; with one that cannot pass,
/// the pod never becomes ready.
pub(super) fn startup_probe_gates_readiness(env: &TestEnv) {
    let admin = &env.admin;
    let deployment = admin
        .get(&format!(
            "/apis/apps/v1/namespaces/{NAMESPACE}/deployments/crd-audit"
        ))
        .unwrap();
    let mut template = deployment["spec"]["template"].clone();
    let startup = template["spec"]["containers"][0]["startupProbe"].clone();
    assert!(
        startup["httpGet"]["path"] == "/readyz",
        "the chart's startup probe: {startup:#}"
    );
    let labels = json!({"app.kubernetes.io/name": "crd-audit-startup"});
    template["metadata"]["labels"] = labels.clone();
    template["spec"]["serviceAccountName"] = "crd-audit-startup".into();
    apply(
        admin,
        &json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "crd-audit-startup", "namespace": NAMESPACE}}),
    );
    let path = format!("/apis/apps/v1/namespaces/{NAMESPACE}/deployments/crd-audit-startup");
    apply(
        admin,
        &json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "crd-audit-startup", "namespace": NAMESPACE},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                "template": template}}),
    );
    let pod = || {
        list_ok(
            admin,
            &format!(
                "/api/v1/namespaces/{NAMESPACE}/pods?labelSelector=app.kubernetes.io/name%3Dcrd-audit-startup"
            ),
        )
        .into_iter()
        .find(|p| p["metadata"]["deletionTimestamp"].is_null())
    };
    let running = wait_for_at_most(
        "the startup probe's pod to run",
        Duration::from_secs(60),
        &mut || {
            pod().filter(|p| p["status"]["containerStatuses"][0]["state"]["running"].is_object())
        },
    );
    let name = running["metadata"]["name"].as_str().unwrap().to_string();
    // Longer than the liveness probe's 3 x 20 s would take to restart it were the startup probe
    // not holding it back, and than six rounds of the startup probe (every 5 s).
    let blocked = Instant::now();
    while blocked.elapsed() < Duration::from_secs(35) {
        let p = pod().expect("the startup probe's pod");
        assert_eq!(p["metadata"]["name"], name.as_str(), "the pod was replaced");
        let (started, is_ready, restarts) = container_state(&p);
        assert!(
            !started && !is_ready && restarts == 0,
            "{:.0} s after it ran, /readyz failing: started {started}, ready {is_ready}, \
             restarts {restarts}: {:#}",
            blocked.elapsed().as_secs_f64(),
            p["status"]
        );
        std::thread::sleep(Duration::from_secs(1));
    }
    // The Lease readable: the chart's Role bound to the ServiceAccount.
    apply(
        admin,
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "crd-audit-startup", "namespace": NAMESPACE},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                "name": "crd-audit-leader"},
            "subjects": [{"kind": "ServiceAccount", "name": "crd-audit-startup",
                "namespace": NAMESPACE}]}),
    );
    let granted = Instant::now();
    let mut first_started = None;
    let first_ready = wait_for_at_most(
        "the startup probe's pod to become ready once it can read the Lease",
        Duration::from_secs(60),
        &mut || {
            let p = pod()?;
            let (started, is_ready, _) = container_state(&p);
            if started && first_started.is_none() {
                first_started = Some(granted.elapsed());
            }
            assert!(
                started || !is_ready,
                "ready before started: {:#}",
                p["status"]
            );
            is_ready.then(|| granted.elapsed())
        },
    );
    let first_started = first_started.unwrap_or(first_ready);
    eprintln!(
        "FIGURE startup probe: /readyz failing, neither started nor ready for 35 s; once the \
         Lease was readable, started after {:.1} s, ready after {:.1} s",
        first_started.as_secs_f64(),
        first_ready.as_secs_f64()
    );
    assert!(first_started <= first_ready);
    admin.delete(&path).unwrap();
    admin
        .delete(&format!(
            "/apis/rbac.authorization.k8s.io/v1/namespaces/{NAMESPACE}/rolebindings/crd-audit-startup"
        ))
        .unwrap();
    wait_for("the startup probe's pod to go", || {
        pod().is_none().then_some(())
    });
}
