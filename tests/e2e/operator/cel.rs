//! CEL rules on live data, against the standalone apiextensions-apiserver 1.36.

use super::*;
use serde_json::{Value, json};

fn widgets_crd(max: u32) -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.cel.crd-audit.dev"},
        "spec": {"group": "cel.crd-audit.dev", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object",
                    "properties": {"replicas": {"type": "integer"}},
                    "x-kubernetes-validations": [{"rule": format!("self.replicas <= {max}"),
                        "message": format!("at most {max} replicas")}]}}}}}]}})
}

/// CEL on live data: `plan --cluster` and the controller against the standalone
/// apiextensions-apiserver 1.36 (which 1.20 cannot do: it drops CEL rules). That server has
/// no Events and no Leases; the controller says so once and carries on.
#[test]
fn cel_rules_tighten_on_a_1_36_apiextensions_server() {
    let _turn = shared_turn();
    let Some(server) = shared_apiext() else {
        return;
    };
    let (dir, config) = server.scenario("cel", "cel.crd-audit.dev");
    let admin = Rest::new(&server.kubeconfig, None);
    apply_file(&admin, "manifests/schemaaudit-crd.yaml");
    apply(&admin, &widgets_crd(10));
    wait_for("the widgets CRD to be served", || {
        admin
            .get("/apis/cel.crd-audit.dev/v1/namespaces/default/widgets")
            .ok()
    });
    for (name, replicas) in [("w3", 3), ("w7", 7), ("w9", 9)] {
        apply(
            &admin,
            &json!({"apiVersion": "cel.crd-audit.dev/v1", "kind": "Widget",
                "metadata": {"name": name, "namespace": "default"}, "spec": {"replicas": replicas}}),
        );
    }
    // The server itself enforces the rule: this is live CEL.
    let refused = admin.apply(
        "/apis/cel.crd-audit.dev/v1/namespaces/default/widgets/w11",
        &json!({"apiVersion": "cel.crd-audit.dev/v1", "kind": "Widget",
            "metadata": {"name": "w11", "namespace": "default"}, "spec": {"replicas": 11}}),
    );
    assert!(
        matches!(&refused, Err(e) if e.status == 422 && e.message.contains("at most 10 replicas")),
        "{refused:?}"
    );
    let kc = server.kubeconfig.display().to_string();
    let c = controller(
        &dir,
        "apiext",
        &["--kubeconfig", &kc, "--leader-elect", "--config", &config],
        &[],
    );
    let crd = "widgets.cel.crd-audit.dev";
    wait_for("a clean report", || clean_report(&admin, crd));
    let rev = dir.join("widgets-5.yaml");
    std::fs::write(&rev, widgets_crd(5).to_string()).unwrap();
    let rev_s = rev.display().to_string();
    let (code, stdout, stderr) = cli(
        &[
            "plan",
            &rev_s,
            "--cluster",
            "-o",
            "json",
            "--kubeconfig",
            &kc,
        ],
        &[],
    );
    assert_eq!(code, Some(1), "{stderr}");
    let broken: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["valid"] == false)
        .collect();
    let names: Vec<&str> = broken.iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["w7", "w9"], "{stdout}");
    assert!(
        broken[0]["errors"]
            .to_string()
            .contains("at most 5 replicas"),
        "{stdout}"
    );
    apply(&admin, &widgets_crd(5));
    let r = wait_for("the tightened report", || {
        report(&admin, crd).ok().filter(|r| {
            r["status"]["crdGeneration"] == 2
                && condition(r, "InstancesValid").is_some_and(|c| c.0 == "False")
        })
    });
    assert_eq!(invalid_names(&r), vec!["w7", "w9"]);
    assert!(
        r["status"]["invalidObjects"][0]["errors"]
            .to_string()
            .contains("at most 5 replicas"),
        "{r}"
    );
    assert_eq!(condition(&r, "SchemaTightened").unwrap().0, "True", "{r}");
    let log = c.stop_cleanly();
    let said = |needle: &str| log.lines().filter(|l| l.contains(needle)).count();
    assert_eq!(said("serves no coordination.k8s.io/v1 Leases"), 1, "{log}");
    assert_eq!(said("serves no Events"), 1, "{log}");
    assert!(error_lines(&log).is_empty(), "{log}");
}
