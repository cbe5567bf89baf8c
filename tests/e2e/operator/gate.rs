//! The CRD change gate on kube-apiserver 1.20, reached through `gateUrl` on 127.0.0.1, with
//! the shipped RBAC (a ServiceAccount token): `kubectl apply` of a tightened CRD prints the
//! warnings; a loosening and an opted-out CRD print nothing; deny mode refuses the change and
//! the CRD's generation stays; with the operator stopped the change goes through
//! (`failurePolicy: Ignore`); a standby answers while another replica leads; the metrics
//! count each verdict. 1.20 has no ratcheting: every object a change invalidates is stuck. On
//! the standalone apiextensions-apiserver 1.36 the gate's judging is checked against what a
//! ratcheting server refuses.

use super::*;

/// Deletes the cluster-wide webhook configuration when the test ends, however it ends.
struct WebhookConfiguration<'a>(&'a Rest);

impl Drop for WebhookConfiguration<'_> {
    fn drop(&mut self) {
        let _ = self.0.delete(
            "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/crd-audit",
        );
    }
}

/// Waits until a replica serves the gate with its certificate.
fn serving(c: &Controller) {
    wait_for("the gate's certificate", || {
        c.log_text()
            .contains("the gate serves its certificate")
            .then_some(())
    });
}

/// Waits until the webhook configuration sends CRD changes to `url`.
fn configured(s: &Scenario, url: &str) {
    wait_for("the gate's webhook configuration at the URL", || {
        let w = s
            .admin()
            .get("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/crd-audit")
            .ok()?;
        (w["webhooks"][0]["clientConfig"]["url"] == url).then_some(())
    });
}

fn generation(s: &Scenario) -> i64 {
    s.admin()
        .get(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{}",
            s.crd()
        ))
        .unwrap()["metadata"]["generation"]
        .as_i64()
        .unwrap()
}

/// `kubectl apply -f` of the things CRD at `revision` (annotated to opt out when `opt_out`):
/// exit code and stderr.
fn kubectl_apply(s: &Scenario, revision: u8, opt_out: bool) -> (Option<i32>, String) {
    let mut crd = things_crd(&s.crd(), &s.group, revision);
    if opt_out {
        crd["metadata"]["annotations"] = json!({"crd-audit.dev/gate": "off"});
    }
    let file = s.dir.join(format!("things-{revision}-{opt_out}.json"));
    std::fs::write(&file, crd.to_string()).unwrap();
    let (code, _, err) = s.env.kubectl(&["apply", "-f", file.to_str().unwrap()]);
    (code, err)
}

fn gate_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("crd-audit:"))
        .collect()
}

#[test]
fn the_gate_warns_denies_and_steps_aside() {
    let Some(s) = Scenario::shared_alone("gate") else {
        return;
    };
    install(&s);
    // With the gate on, the chart's Role (bound by install) also grants the gate's Secret.
    for role in chart_objects(
        &s.namespace,
        &[
            "--set",
            "gate.mode=warn",
            "--show-only",
            "templates/rbac.yaml",
        ],
    ) {
        if role["kind"] == "Role" {
            apply(s.admin(), &role);
        }
        // Its ClusterRole's webhook rules, granted apart: other scenarios apply the gate-less
        // ClusterRole of the same name while this one runs.
        if role["kind"] == "ClusterRole" && role["metadata"]["name"] == "crd-audit" {
            let rules: Vec<Value> = role["rules"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["apiGroups"] == json!(["admissionregistration.k8s.io"]))
                .cloned()
                .collect();
            assert_eq!(rules.len(), 2, "the gate's webhook rules: {role:#}");
            let name = "crd-audit-e2e-gate";
            apply(
                s.admin(),
                &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                        "metadata": {"name": name}, "rules": rules}),
            );
            apply(
                s.admin(),
                &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                        "metadata": {"name": name},
                        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                        "subjects": [{"kind": "ServiceAccount", "name": "crd-audit", "namespace": "crd-audit"}]}),
            );
        }
    }
    things(&s, 1);
    create_things(&s);
    let kc = s
        .env
        .service_account_kubeconfig(&s.dir)
        .display()
        .to_string();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let url = format!("https://{addr}/validate-crd");
    let _configuration = WebhookConfiguration(s.admin());
    let start = |mode: &str| {
        let config = s.config(
            &format!("gate-{mode}.yaml"),
            &format!("gate: {mode}\ngateUrl: {url}\n"),
        );
        let c = s.controller(
            &format!("gate-{mode}"),
            &[
                "--kubeconfig",
                &kc,
                "--config",
                &config,
                "--namespace",
                &s.namespace,
                "--webhook-addr",
                &addr,
            ],
        );
        serving(&c);
        // The configuration at `url` may still be the previous process's (the same URL): wait
        // for this one's own write (its CA bundle and failure policy), so that the API server
        // calls this gate as this process configures it.
        wait_for("this process's webhook configuration", || {
            c.log_text()
                .contains("wrote the gate's ValidatingWebhookConfiguration")
                .then_some(())
        });
        configured(&s, &url);
        c
    };

    // warn: the tightening goes through, with the warnings.
    let c = start("warn");
    let (code, err) = kubectl_apply(&s, 2, false);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        gate_lines(&err),
        [
            "Warning: crd-audit: 3 of 3 stored things become invalid under v1: 3 stuck (every update refused), 0 tolerated",
            "Warning: crd-audit: stuck gate/a: spec.tier: Required value",
            "Warning: crd-audit: stuck gate/b: spec.size: Unsupported value: <string, 6 chars>: supported values: \"small\"",
            "Warning: crd-audit: stuck gate/c: spec.tier: Required value",
        ],
        "{err}"
    );
    // A loosening, and a tightening of a CRD that opted out: nothing said.
    let (code, err) = kubectl_apply(&s, 1, false);
    assert_eq!((code, gate_lines(&err)), (Some(0), vec![]), "{err}");
    let (code, err) = kubectl_apply(&s, 2, true);
    assert_eq!((code, gate_lines(&err)), (Some(0), vec![]), "{err}");
    let (code, err) = kubectl_apply(&s, 1, false);
    assert_eq!((code, gate_lines(&err)), (Some(0), vec![]), "{err}");
    let metrics = c.scrape().unwrap();
    assert_eq!(
        metric(
            &metrics,
            "crd_audit_gate_requests_total{verdict=\"warned\"}"
        ),
        Some(1.0)
    );
    assert_eq!(
        metric(
            &metrics,
            "crd_audit_gate_requests_total{verdict=\"allowed\"}"
        ),
        Some(3.0),
        "{metrics}"
    );
    c.stop_cleanly();

    // deny: refused, and the CRD stays as it was.
    let c = start("deny");
    let before = generation(&s);
    let (code, err) = kubectl_apply(&s, 2, false);
    assert_ne!(code, Some(0), "{err}\n{}", c.log_text());
    assert!(
        err.contains("admission webhook \"gate.crd-audit.dev\" denied the request: crd-audit: this change makes 3 stored things stuck (every update refused), first gate/a under v1: spec.tier: Required value"),
        "{err}"
    );
    assert_eq!(generation(&s), before);
    let metrics = c.scrape().unwrap();
    // The API server asks again when a refused update was tried on its cached copy of the
    // CRD (etcd3 store's GuaranteedUpdate retries once with the current object).
    let denied = metric(
        &metrics,
        "crd_audit_gate_requests_total{verdict=\"denied\"}",
    );
    assert!(
        matches!(denied, Some(n) if (1.0..=2.0).contains(&n)),
        "{denied:?}"
    );
    let log = c.stop_cleanly();
    // Errors about this scenario's CRDs, or about none: other scenarios' CRDs on the shared
    // server (this ServiceAccount may not read them) are not this test's.
    let own_errors: Vec<String> = error_lines(&log)
        .into_iter()
        .filter(|l| {
            serde_json::from_str::<Value>(l).is_ok_and(|v| {
                v["fields"]["crd"]
                    .as_str()
                    .is_none_or(|crd| crd.ends_with(&format!(".{}", s.group)))
            })
        })
        .collect();
    assert!(own_errors.is_empty(), "{own_errors:#?}\n{log}");

    // Two leader-elected replicas: the configuration the leader keeps points at the standby
    // (gateUrl), which answers with the certificate of the same Secret.
    let standby_addr = format!("127.0.0.1:{}", free_port());
    let standby_url = format!("https://{standby_addr}/validate-crd");
    let config = s.config(
        "gate-ha.yaml",
        &format!("gate: warn\ngateUrl: {standby_url}\n"),
    );
    let replica = |name: &str, addr: &str| {
        s.controller(
            name,
            &[
                "--kubeconfig",
                &kc,
                "--config",
                &config,
                "--namespace",
                &s.namespace,
                "--leader-elect",
                "--webhook-addr",
                addr,
            ],
        )
    };
    let leader = replica("gate-leader", &format!("127.0.0.1:{}", free_port()));
    let lease = format!(
        "/apis/coordination.k8s.io/v1/namespaces/{}/leases/crd-audit",
        s.namespace
    );
    wait_for("gate-leader to lead", || {
        let l = s.admin().get(&lease).ok()?;
        (l["spec"]["holderIdentity"] == "gate-leader").then_some(())
    });
    let standby = replica("gate-standby", &standby_addr);
    serving(&standby);
    configured(&s, &standby_url);
    let (code, err) = kubectl_apply(&s, 2, false);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(gate_lines(&err).len(), 4, "{err}");
    let metrics = standby.scrape().unwrap();
    assert_eq!(metric(&metrics, "crd_audit_leader"), Some(0.0), "{metrics}");
    assert_eq!(
        metric(
            &metrics,
            "crd_audit_gate_requests_total{verdict=\"warned\"}"
        ),
        Some(1.0),
        "{metrics}"
    );
    let (code, err) = kubectl_apply(&s, 1, false);
    assert_eq!((code, gate_lines(&err)), (Some(0), vec![]), "{err}");

    // Another replica renews the certificate (a new CA here): the replicas watch the Secret
    // and serve it at once (they read it again only hourly otherwise), and the leader's
    // configuration trusts its CA; the standby still answers through it.
    let hosts = crd_audit::gate::tls::serving_hosts("crd-audit", &s.namespace, Some(&standby_url));
    let renewed = crd_audit::gate::tls::SelfMade::new(&hosts).unwrap();
    let path = format!(
        "/api/v1/namespaces/{}/secrets/crd-audit-gate-tls",
        s.namespace
    );
    let current = s.admin().get(&path).unwrap();
    let version = current["metadata"]["resourceVersion"]
        .as_str()
        .map(str::to_string);
    let secret = renewed.to_secret("crd-audit-gate-tls", &s.namespace, version);
    s.admin()
        .send_put(&path, &serde_json::to_value(&secret).unwrap())
        .unwrap();
    let bundle = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(renewed.ca_bundle.as_bytes())
    };
    wait_for_at_most(
        "the leader's configuration to trust the renewed CA",
        std::time::Duration::from_secs(40),
        &mut || {
            let w = s
                .admin()
                .get("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/crd-audit")
                .ok()?;
            (w["webhooks"][0]["clientConfig"]["caBundle"] == bundle.as_str()).then_some(())
        },
    );
    let (code, err) = kubectl_apply(&s, 2, false);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        gate_lines(&err).len(),
        4,
        "the standby serves the renewed certificate: {err}"
    );
    let (code, err) = kubectl_apply(&s, 1, false);
    assert_eq!((code, gate_lines(&err)), (Some(0), vec![]), "{err}");
    standby.stop_cleanly();
    leader.stop_cleanly();
    let before = generation(&s);

    // The operator stopped, its configuration left: the API server ignores the gate.
    let (code, err) = kubectl_apply(&s, 2, false);
    assert_eq!((code, gate_lines(&err)), (Some(0), vec![]), "{err}");
    assert_eq!(generation(&s), before + 1);
}

/// The gate's answer (its response, and the verdict's label) to an UPDATE of `current` to
/// `proposed`, judged in this process against the server of `kubeconfig`.
fn judged_in_process(
    kubeconfig: &std::path::Path,
    mode: crd_audit::audit::config::GateMode,
    current: &Value,
    proposed: &Value,
) -> (Value, &'static str) {
    let body = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "1", "operation": "UPDATE", "name": current["metadata"]["name"],
            "kind": {"group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition"},
            "resource": {"group": "apiextensions.k8s.io", "version": "v1", "resource": "customresourcedefinitions"},
            "userInfo": {"username": "admin"}, "object": proposed, "oldObject": current}});
    let config = crd_audit::audit::config::Config {
        gate: mode,
        ..Default::default()
    };
    let kubeconfig = kubeconfig.to_path_buf();
    let (review, verdict) = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(async move {
            let (client, _) = crd_audit::cluster::client::connect(Some(&kubeconfig), None)
                .await
                .unwrap();
            let gate = crd_audit::gate::review::Gate::new(
                client,
                config,
                crd_audit::gate::GateMetrics::default(),
                crd_audit::judging_pool::JudgingPool::new(2),
            );
            gate.review(&serde_json::to_vec(&body).unwrap()).await
        });
    (
        serde_json::to_value(review.response.unwrap()).unwrap(),
        verdict.label(),
    )
}

/// The gizmos CRD on the 1.36 server: loose, or tightened in ways ratcheting tolerates (a
/// lower maximum, a narrower enum, a status enum) and one it cannot (a rule at the root).
fn gizmos_crd(tight: bool) -> Value {
    let mut spec = json!({"type": "object", "properties": {
        "replicas": {"type": "integer"}, "size": {"type": "string"}, "owner": {"type": "string"}}});
    let mut status = json!({"type": "object", "properties": {"phase": {"type": "string"}}});
    let mut root = json!({"type": "object"});
    if tight {
        spec["properties"]["replicas"]["maximum"] = json!(5);
        spec["properties"]["size"]["enum"] = json!(["small", "medium"]);
        status["properties"]["phase"]["enum"] = json!(["Ready"]);
        root["x-kubernetes-validations"] = json!([{"rule": "!has(self.spec.owner) || self.spec.owner != 'nobody'",
            "message": "an owner is required"}]);
    }
    root["properties"] = json!({"spec": spec, "status": status});
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gizmos.gate.crd-audit.dev"},
        "spec": {"group": "gate.crd-audit.dev", "scope": "Namespaced",
            "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}}, "schema": {"openAPIV3Schema": root}}]}})
}

/// The gate's judging on a ratcheting server (the standalone apiextensions-apiserver 1.36,
/// which serves no webhook configurations, so the review is sent to the gate's code
/// in-process): its counts and the stuck objects it names are what the server answers to a
/// dry-run PUT of every stored object, sent back unchanged, once the change is made.
#[test]
fn the_gates_stuck_objects_are_the_ones_a_ratcheting_server_refuses() {
    let _turn = shared_turn();
    let Some(server) = shared_apiext() else {
        return;
    };
    let (dir, _) = server.scenario("gate", "gate.crd-audit.dev");
    let admin = Rest::new(&server.kubeconfig, None);
    apply(&admin, &gizmos_crd(false));
    let base = "/apis/gate.crd-audit.dev/v1/namespaces/default/gizmos";
    wait_for("the gizmos CRD to be served", || admin.get(base).ok());
    for (name, spec, phase) in [
        ("fine", json!({"replicas": 3, "size": "small"}), None),
        ("too-many", json!({"replicas": 9}), None),
        ("huge", json!({"size": "huge"}), None),
        ("nobody", json!({"owner": "nobody"}), None),
        (
            "nobody-huge",
            json!({"size": "huge", "owner": "nobody"}),
            None,
        ),
        ("broken-status", json!({"replicas": 1}), Some("Broken")),
    ] {
        apply(
            &admin,
            &json!({"apiVersion": "gate.crd-audit.dev/v1", "kind": "Gizmo",
                "metadata": {"name": name, "namespace": "default"}, "spec": spec}),
        );
        if let Some(p) = phase {
            let mut o = admin.get(&format!("{base}/{name}")).unwrap();
            o["status"] = json!({"phase": p});
            admin
                .send_put(&format!("{base}/{name}/status"), &o)
                .unwrap();
        }
    }

    // The gate's answer to the tightening, in deny mode.
    let current = admin
        .get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.gate.crd-audit.dev")
        .unwrap();
    let mut proposed = current.clone();
    proposed["spec"] = gizmos_crd(true)["spec"].clone();
    let (response, verdict) = judged_in_process(
        &server.kubeconfig,
        crd_audit::audit::config::GateMode::Deny,
        &current,
        &proposed,
    );
    std::fs::write(dir.join("gate-response.json"), response.to_string()).unwrap();

    // What the server says once the change is made.
    apply(&admin, &gizmos_crd(true));
    wait_for("the tightened CRD to be served", || {
        let mut o = admin.get(&format!("{base}/fine")).ok()?;
        o["spec"]["replicas"] = json!(8);
        (admin.put_dry_run(&format!("{base}/fine"), &o).0 == 422).then_some(())
    });
    let stored = admin.list(base).unwrap();
    let mut refused: Vec<String> = stored
        .iter()
        .filter(|o| {
            admin
                .put_dry_run(
                    &format!("{base}/{}", o["metadata"]["name"].as_str().unwrap()),
                    o,
                )
                .0
                != 200
        })
        .map(|o| format!("default/{}", o["metadata"]["name"].as_str().unwrap()))
        .collect();
    refused.sort();
    assert_eq!(refused, ["default/nobody", "default/nobody-huge"]);

    assert_eq!(verdict, "denied", "{response}");
    let warnings: Vec<&str> = response["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(
        warnings[0],
        format!(
            "crd-audit: 5 of 6 stored gizmos become invalid under v1: {} stuck (every update refused), 3 tolerated",
            refused.len()
        ),
        "{response}"
    );
    let mut named: Vec<String> = warnings[1..]
        .iter()
        .map(|w| {
            let rest = w.strip_prefix("crd-audit: stuck ").unwrap();
            rest.split(':').next().unwrap().to_string()
        })
        .collect();
    named.sort();
    assert_eq!(named, refused, "{response}");
    assert!(
        warnings[1].ends_with(": <nil>: Invalid value: an owner is required")
            || warnings[1].contains("an owner is required"),
        "{response}"
    );
    assert!(
        response["status"]["message"]
            .as_str()
            .unwrap()
            .starts_with("crd-audit: this change makes 2 stored gizmos stuck (every update refused), first default/nobody"),
        "{response}"
    );
}

/// A CRD of the scenario's group named `plural`, whose `spec.n` is an integer (at most
/// `maximum` when given).
fn numbered_crd(s: &Scenario, plural: &str, maximum: Option<u64>) -> Value {
    let mut n = json!({"type": "integer"});
    if let Some(m) = maximum {
        n["maximum"] = json!(m);
    }
    let kind = format!(
        "{}{}",
        plural[..1].to_uppercase(),
        &plural[1..plural.len() - 1]
    );
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{}", s.group)},
        "spec": {"group": s.group, "scope": "Namespaced",
            "names": {"plural": plural, "singular": &plural[..plural.len() - 1], "kind": kind},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
                    "properties": {"n": n, "blob": {"type": "string"}}}}}}}]}})
}

/// More objects than a page, read both ways: small ones (the rest of the first page read at
/// once from the API server's cache) and large ones (over 8 MiB in all: page by page from
/// etcd). Every object is judged once.
#[test]
fn many_objects_are_judged_once_whether_read_from_the_cache_or_in_pages() {
    let Some(s) = Scenario::shared("gatepages") else {
        return;
    };
    let objects = 1_100;
    // bigs: 600 objects of 16 kB after the first page, 9.6 MB: over the 8 MiB of a cached LIST.
    for (plural, blob) in [("smalls", 1), ("bigs", 16_000)] {
        let loose = numbered_crd(&s, plural, None);
        apply(s.admin(), &loose);
        apply(
            s.admin(),
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": s.namespace}}),
        );
        let path = format!("/apis/{}/v1/namespaces/{}/{plural}", s.group, s.namespace);
        wait_for("the CRD to be served", || s.admin().get(&path).ok());
        let kind = loose["spec"]["names"]["kind"].as_str().unwrap().to_string();
        for i in 0..objects {
            s.admin()
                .create(
                    &path,
                    &json!({"apiVersion": format!("{}/v1", s.group), "kind": kind,
                        "metadata": {"name": format!("o{i:04}")},
                        "spec": {"n": i, "blob": "x".repeat(blob)}}),
                )
                .unwrap();
        }
        let name = format!("{plural}.{}", s.group);
        let current = s
            .admin()
            .get(&format!(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"
            ))
            .unwrap();
        let mut proposed = current.clone();
        proposed["spec"] = numbered_crd(&s, plural, Some(549))["spec"].clone();
        let (response, verdict) = judged_in_process(
            &s.env.kubeconfig,
            crd_audit::audit::config::GateMode::Warn,
            &current,
            &proposed,
        );
        assert_eq!(verdict, "warned", "{plural}: {response}");
        let warnings = response["warnings"].as_array().unwrap();
        assert_eq!(
            warnings[0],
            format!(
                "crd-audit: 550 of 1100 stored {plural} become invalid under v1: 550 stuck (every update refused), 0 tolerated"
            ),
            "{response}"
        );
        assert_eq!(
            warnings[1],
            format!(
                "crd-audit: stuck {}/o0550: spec.n: Invalid value: <number>: spec.n in body should be less than or equal to 549",
                s.namespace
            ),
            "{response}"
        );
    }
}
