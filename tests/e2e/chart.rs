//! The Helm chart installed with `helm install` into kube-apiserver 1.20 (with every optional
//! part on: `ci/all-features-values.yaml`), with the Prometheus Operator's CRDs from the
//! conformance corpus and the wgpolicyk8s.io report CRDs: every rendered object is accepted
//! and stored; `kubectl auth can-i` shows that the ServiceAccount cannot read Secrets or the
//! core group, but can read (and annotate) the objects of a CRD whose owner aggregates its
//! roles to `view` and `edit`, and cannot read those of a CRD whose owner does not (its report
//! says so, with the rule to add). The operator, run with the ServiceAccount's token and the
//! chart's configuration, reports and keeps its webhook configuration, and its real /metrics
//! page exposes what the dashboard reads; cert-manager's CRDs accept the chart's Issuers and
//! Certificates (`gate.certManager.enabled`); then
//! `crd-audit uninstall-cleanup` (what the pre-delete hook runs, with the same identity) takes
//! its Lease, removes all of that while the operator still runs, and nothing comes back;
//! `helm uninstall` removes the rest.

use crate::support::*;
use serde_json::{Value, json};
use std::process::Command;
use std::time::Duration;

fn helm(env: &TestEnv, args: &[&str]) -> String {
    let out = Command::new(helm_binary())
        .args(args)
        .env("KUBECONFIG", &env.kubeconfig)
        .env("HOME", &env.run_dir)
        .env("HELM_CACHE_HOME", env.run_dir.join("helm-cache"))
        .env("HELM_CONFIG_HOME", env.run_dir.join("helm-config"))
        .env("HELM_DATA_HOME", env.run_dir.join("helm-data"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "helm {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn documents(name: &str, text: &str) -> Vec<Value> {
    crd_audit_engine::load::parse_str(name, text)
        .into_iter()
        .map(|d| d.unwrap().value)
        .filter(|v| !v.is_null())
        .collect()
}

/// `kubectl auth can-i VERB RESOURCE` as the chart's ServiceAccount.
fn sa_can(env: &TestEnv, verb: &str, resource: &str, scope: &[&str]) -> bool {
    let mut args = vec![
        "auth",
        "can-i",
        verb,
        resource,
        "--as",
        "system:serviceaccount:crd-audit:crd-audit",
    ];
    args.extend_from_slice(scope);
    let (code, out, err) = env.kubectl(&args);
    match (code, out.trim()) {
        (Some(0), "yes") => true,
        (Some(1), "no") => false,
        other => panic!("kubectl auth can-i {verb} {resource}: {other:?} {err}"),
    }
}

fn widgets_crd(group: &str, plural: &str, kind: &str, maximum: u32) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"plural": plural, "kind": kind},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "integer", "maximum": maximum}}}}}}}]}})
}

#[test]
fn the_chart_installs_grants_least_privilege_and_uninstalls_cleanly() {
    let turn = own_server();
    let Some(env) = start() else { return };
    stop_when_this_process_ends("tests/testenv/down.sh", &env.run_dir);
    let _turn = turn;
    let admin = &env.admin;
    let dir = env.run_dir.join("chart");
    std::fs::create_dir_all(&dir).unwrap();

    // What the optional parts need: the Prometheus Operator's CRDs (from the corpus, their
    // `default: ""` included) and the wgpolicyk8s.io report CRDs.
    for case in [
        "prometheus-operator-servicemonitors",
        "prometheus-operator-prometheusrules",
    ] {
        apply(admin, &corpus_crd_for_1_20(case));
    }
    for f in [
        "tests/data/policyreport/policyreport-crd.yaml",
        "tests/data/policyreport/clusterpolicyreport-crd.yaml",
    ] {
        apply_file(admin, f);
    }
    for path in [
        "/apis/monitoring.coreos.com/v1/servicemonitors",
        "/apis/monitoring.coreos.com/v1/prometheusrules",
        "/apis/wgpolicyk8s.io/v1alpha2/policyreports",
    ] {
        wait_for(&format!("{path} to be served"), || admin.get(path).ok());
    }

    helm(
        &env,
        &[
            "install",
            "crd-audit",
            "charts/crd-audit",
            "--namespace",
            "crd-audit",
            "--create-namespace",
            "--values",
            "charts/crd-audit/ci/all-features-values.yaml",
        ],
    );
    // Every object the release rendered is stored, at the version picked for this server.
    let manifest = helm(&env, &["get", "manifest", "crd-audit", "-n", "crd-audit"]);
    let objects = documents("helm get manifest", &manifest);
    let mut kinds = Vec::new();
    for o in &objects {
        admin
            .get(&path_of(o))
            .unwrap_or_else(|e| panic!("{} not stored: {e}", path_of(o)));
        kinds.push(format!(
            "{} {}",
            o["apiVersion"].as_str().unwrap(),
            o["kind"].as_str().unwrap()
        ));
    }
    for kind in [
        "policy/v1beta1 PodDisruptionBudget",
        "flowcontrol.apiserver.k8s.io/v1beta1 FlowSchema",
        "flowcontrol.apiserver.k8s.io/v1beta1 PriorityLevelConfiguration",
        "monitoring.coreos.com/v1 ServiceMonitor",
        "monitoring.coreos.com/v1 PrometheusRule",
        "networking.k8s.io/v1 NetworkPolicy",
        "apps/v1 Deployment",
    ] {
        assert!(kinds.iter().any(|k| k == kind), "no {kind} in {kinds:?}");
    }
    admin
        .get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/schemaaudits.crd-audit.dev")
        .expect("the report CRD (crds/)");
    // The hook is kept for `helm uninstall`: the cleanup as the operator's ServiceAccount.
    let hooks = documents(
        "helm get hooks",
        &helm(&env, &["get", "hooks", "crd-audit", "-n", "crd-audit"]),
    );
    let job = hooks
        .iter()
        .find(|h| h["kind"] == "Job" && h["metadata"]["name"] == "crd-audit-uninstall-cleanup")
        .expect("the cleanup Job");
    assert_eq!(job["metadata"]["annotations"]["helm.sh/hook"], "pre-delete");
    // And for `helm upgrade`, the report CRD's upgrade (run only then, not on install).
    let upgrade = hooks
        .iter()
        .find(|h| h["kind"] == "Job" && h["metadata"]["name"] == "crd-audit-apply-crd")
        .expect("the CRD upgrade Job");
    assert_eq!(
        upgrade["metadata"]["annotations"]["helm.sh/hook"],
        "pre-upgrade"
    );
    assert_eq!(
        upgrade["spec"]["template"]["spec"]["containers"][0]["args"],
        json!(["apply-crd"])
    );
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], "crd-audit");
    assert_eq!(pod["containers"][0]["args"], json!(["uninstall-cleanup"]));

    // A CRD whose owner grants view and edit by aggregation, and one whose owner does not.
    let (owned, unowned) = ("owned.example.com", "unowned.example.com");
    apply(admin, &widgets_crd(owned, "widgets", "Widget", 10));
    apply(admin, &widgets_crd(unowned, "gadgets", "Gadget", 10));
    owner_roles(
        admin,
        "widgets",
        owned,
        "widgets",
        &["create", "update", "patch", "delete"],
    );
    wait_for("view to aggregate into crd-audit-read", || {
        sa_can(&env, "list", "widgets.owned.example.com", &["-A"]).then_some(())
    });
    assert!(sa_can(&env, "watch", "widgets.owned.example.com", &["-A"]));
    assert!(sa_can(
        &env,
        "patch",
        "widgets.owned.example.com",
        &["-n", "default"]
    ));
    assert!(!sa_can(
        &env,
        "list",
        "gadgets.unowned.example.com",
        &["-A"]
    ));
    for (verb, resource, scope) in [
        ("get", "secrets", &["-A"][..]),
        ("list", "secrets", &["-n", "crd-audit"][..]),
        ("get", "secrets", &["-n", "kube-system"][..]),
        ("list", "configmaps", &["-A"][..]),
        ("get", "pods", &["-A"][..]),
        ("list", "serviceaccounts", &["-A"][..]),
        ("patch", "secrets", &["-n", "crd-audit"][..]),
        ("list", "roles.rbac.authorization.k8s.io", &["-A"][..]),
    ] {
        assert!(
            !sa_can(&env, verb, resource, scope),
            "the ServiceAccount may {verb} {resource} {scope:?}"
        );
    }
    // Its own needs in the core group: Events, and the gate's Secret by name.
    assert!(sa_can(&env, "create", "events", &["-n", "default"]));
    assert!(sa_can(
        &env,
        "get",
        "secret/crd-audit-gate-tls",
        &["-n", "crd-audit"]
    ));
    assert!(sa_can(
        &env,
        "update",
        "lease/crd-audit",
        &["-n", "crd-audit"]
    ));

    // Objects, then a tightening that makes one invalid.
    apply(
        admin,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}),
    );
    wait_for("widgets to be served", || {
        admin.get("/apis/owned.example.com/v1/widgets").ok()
    });
    for (name, size) in [("small", 1), ("large", 8)] {
        apply(
            admin,
            &json!({"apiVersion": "owned.example.com/v1", "kind": "Widget",
                "metadata": {"name": name, "namespace": "team-a"}, "spec": {"size": size}}),
        );
    }
    apply(admin, &widgets_crd(owned, "widgets", "Widget", 5));

    // 1.20 refuses every write to an invalid object (no ratcheting), the operator's annotation
    // too (the report lists it as unwritable). The annotation a run on a newer server leaves
    // is written here the way the operator writes it (a metadata-only server-side apply as
    // `crd-audit`), on a group the operator does not audit (it would judge the object valid
    // and remove the mark itself), readable and patchable by aggregation.
    let leftovers = "other.test";
    apply(admin, &widgets_crd(leftovers, "leftovers", "Leftover", 10));
    owner_roles(admin, "leftovers", leftovers, "leftovers", &["patch"]);
    wait_for("leftovers to be served", || {
        admin.get("/apis/other.test/v1/leftovers").ok()
    });
    let leftover = "/apis/other.test/v1/namespaces/team-a/leftovers/fixed";
    apply(
        admin,
        &json!({"apiVersion": "other.test/v1", "kind": "Leftover",
            "metadata": {"name": "fixed", "namespace": "team-a"}, "spec": {"size": 1}}),
    );
    admin
        .send_patch_apply_as(
            leftover,
            "crd-audit",
            &json!({"apiVersion": "other.test/v1", "kind": "Leftover",
                "metadata": {"name": "fixed", "namespace": "team-a",
                    "annotations": {"crd-audit.dev/violations": "1 violation(s): spec.size: ..."}}}),
        )
        .unwrap();
    wait_for("view and edit of leftovers to aggregate", || {
        sa_can(&env, "patch", "leftovers.other.test", &["-n", "team-a"]).then_some(())
    });

    // The operator as the chart runs it: the ServiceAccount's token, the chart's
    // configuration, leader election in the release's namespace.
    let cm = admin
        .get("/api/v1/namespaces/crd-audit/configmaps/crd-audit")
        .unwrap();
    let config = dir.join("crd-audit.yaml");
    std::fs::write(&config, cm["data"]["crd-audit.yaml"].as_str().unwrap()).unwrap();
    let sa_kc = env.service_account_kubeconfig(&dir).display().to_string();
    let config = config.display().to_string();
    let c = controller(
        &dir,
        "chart-replica",
        &[
            "--kubeconfig",
            &sa_kc,
            "--config",
            &config,
            "--leader-elect",
            "--namespace",
            "crd-audit",
            "--webhook-addr",
            &format!("127.0.0.1:{}", free_port()),
        ],
        &[],
    );
    wait_for_at_most(
        "the policy report of team-a",
        Duration::from_secs(120),
        &mut || {
            admin
                .get("/apis/wgpolicyk8s.io/v1alpha2/namespaces/team-a/policyreports/crd-audit")
                .ok()
        },
    );
    let r = wait_for("the report of the CRD it may not read", || {
        report(admin, "gadgets.unowned.example.com")
            .ok()
            .filter(|r| {
                condition(r, "InstancesValid").is_some_and(|(_, m)| m.contains("aggregate-to-view"))
            })
    });
    let (_, message) = condition(&r, "InstancesValid").unwrap();
    assert!(
        message.contains("{apiGroups: [\"unowned.example.com\"], resources: [\"gadgets\"], verbs: [get, list, watch]}"),
        "{message}"
    );
    wait_for("the gate's webhook configuration", || {
        admin
            .get("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/crd-audit")
            .ok()
    });
    admin
        .get("/api/v1/namespaces/crd-audit/secrets/crd-audit-gate-tls")
        .expect("the gate's self-managed Secret");
    // The dashboard's queries against this operator's real /metrics page: every metric they
    // name that the page exposes by that name (a family without a series yet, such as the
    // gate's before any review, is not on the page at all), and most of them are there.
    let page = c.scrape().expect("/metrics");
    let dashboard = std::fs::read_to_string("charts/crd-audit/dashboards/crd-audit.json").unwrap();
    let mut named: Vec<String> = dashboard
        .split(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
        .filter(|w| w.starts_with("crd_audit_"))
        .map(str::to_string)
        .collect();
    named.sort();
    named.dedup();
    let mut on_the_page = 0;
    for name in &named {
        let sample = page
            .lines()
            .any(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")));
        if sample {
            on_the_page += 1;
            continue;
        }
        let family = ["_total", "_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| name.strip_suffix(suffix))
            .unwrap_or(name);
        assert!(
            !page.contains(&format!("# TYPE {family} ")),
            "the dashboard reads {name}, but /metrics exposes {family} under another name"
        );
    }
    assert!(
        on_the_page * 2 >= named.len(),
        "only {on_the_page} of the dashboard's {} metrics on /metrics",
        named.len()
    );

    // The gate's certificate from cert-manager (gate.certManager.enabled): its Issuers and
    // Certificates are accepted by cert-manager's CRDs (from the corpus).
    for case in ["cert-manager-certificates", "cert-manager-issuers"] {
        // Whole, the ACME solvers' list-map keys with `default: ""` included.
        apply(admin, &corpus_crd_for_1_20(case));
    }
    wait_for(
        "cert-manager's Certificates and Issuers to be served",
        || {
            admin.get("/apis/cert-manager.io/v1/certificates").ok()?;
            admin.get("/apis/cert-manager.io/v1/issuers").ok()
        },
    );
    let issued = chart_objects(
        "crd-audit",
        &[
            "--values",
            "charts/crd-audit/ci/cert-manager-values.yaml",
            "--show-only",
            "templates/certificate.yaml",
        ],
    );
    assert_eq!(issued.len(), 4, "{issued:?}");
    for o in &issued {
        admin
            .apply_dry_run(&path_of(o), o)
            .unwrap_or_else(|e| panic!("{} refused: {e}", path_of(o)));
    }

    // The pre-delete hook's command, as the ServiceAccount, while the operator still runs.
    let (code, out, err) = cli(
        &[
            "uninstall-cleanup",
            "--kubeconfig",
            &sa_kc,
            "--namespace",
            "crd-audit",
        ],
        &[],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains(
            "removed 1 crd-audit.dev/violations annotation(s), 1 policy report(s), 2 SchemaAudit(s)"
        ) && out.contains("the ValidatingWebhookConfiguration crd-audit")
            && out.contains("the Secret crd-audit/crd-audit-gate-tls"),
        "{out}"
    );
    let lease = admin
        .get("/apis/coordination.k8s.io/v1/namespaces/crd-audit/leases/crd-audit")
        .unwrap();
    assert_eq!(
        lease["spec"]["holderIdentity"],
        "crd-audit-uninstall-cleanup"
    );
    let nothing_left = || {
        let annotated =
            admin.get(leftover).unwrap()["metadata"]["annotations"]["crd-audit.dev/violations"]
                .is_string();
        let audits = admin
            .list("/apis/crd-audit.dev/v1alpha1/schemaaudits")
            .unwrap()
            .len();
        let policy = admin
            .list("/apis/wgpolicyk8s.io/v1alpha2/policyreports")
            .unwrap()
            .len()
            + admin
                .list("/apis/wgpolicyk8s.io/v1alpha2/clusterpolicyreports")
                .unwrap()
                .len();
        let vwc = !absent(
            admin,
            "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/crd-audit",
        );
        let secret = !absent(
            admin,
            "/api/v1/namespaces/crd-audit/secrets/crd-audit-gate-tls",
        );
        (annotated, audits, policy, vwc, secret)
    };
    assert_eq!(nothing_left(), (false, 0, 0, false, false));
    // The operator, still running, stopped acting when the Lease was taken: nothing returns.
    std::thread::sleep(Duration::from_secs(8));
    assert_eq!(nothing_left(), (false, 0, 0, false, false));
    let log = c.stop_cleanly();
    assert!(log.contains("became the leader"), "{log}");

    helm(
        &env,
        &[
            "uninstall",
            "crd-audit",
            "--namespace",
            "crd-audit",
            "--no-hooks",
        ],
    );
    for o in &objects {
        assert!(
            absent(admin, &path_of(o)),
            "{} left after helm uninstall",
            path_of(o)
        );
    }
}
