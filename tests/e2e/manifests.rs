//! The shipped manifests against a real API server (kube-apiserver 1.20): every object of every
//! file in `manifests/` is accepted (a server-side dry-run apply), the Prometheus Operator's
//! objects too once its CRDs (from the conformance corpus) are installed; and the
//! kustomization names files that exist.

use crate::support::*;

/// Whether `api_version` is a version this server does not serve of a group it serves at an
/// older version.
fn newer_than_this_server(admin: &Rest, api_version: &str) -> bool {
    let Some((group, _)) = api_version.split_once('/') else {
        return false;
    };
    let served = admin.get(&format!("/apis/{api_version}")).is_ok();
    let group_served = admin.get(&format!("/apis/{group}")).is_ok();
    !served && group_served
}

#[test]
fn every_shipped_manifest_is_accepted_by_the_api_server() {
    let _turn = shared_turn();
    let Some(env) = shared() else {
        return;
    };
    let admin = &env.admin;
    // The current CRDs, as this server takes them (support::corpus_crd_for_1_20).
    for case in [
        "prometheus-operator-servicemonitors",
        "prometheus-operator-prometheusrules",
    ] {
        apply(admin, &corpus_crd_for_1_20(case));
    }
    for plural in ["servicemonitors", "prometheusrules"] {
        wait_for(&format!("{plural} to be served"), || {
            admin
                .get(&format!("/apis/monitoring.coreos.com/v1/{plural}"))
                .ok()
        });
    }
    apply_file(admin, "manifests/namespace.yaml");
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir("manifests")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .filter(|p| !p.ends_with("kustomization.yaml"))
        .collect();
    files.sort();
    let mut kinds = Vec::new();
    for file in &files {
        let name = file.display().to_string();
        let text = std::fs::read_to_string(file).unwrap();
        for doc in crd_audit_engine::load::parse_str(&name, &text) {
            let obj = doc.unwrap().value;
            if obj.is_null() {
                continue;
            }
            let api_version = obj["apiVersion"].as_str().unwrap();
            if newer_than_this_server(admin, api_version) {
                // policy/v1 and flowcontrol v1 came after 1.20: the chart picks the version a
                // cluster serves (tests/e2e/chart.rs installs it here); the static manifests
                // are for current clusters.
                let kind = obj["kind"].as_str().unwrap();
                assert!(
                    [
                        "PodDisruptionBudget",
                        "FlowSchema",
                        "PriorityLevelConfiguration"
                    ]
                    .contains(&kind),
                    "{name}: {kind} {api_version} is not served by this server"
                );
                continue;
            }
            admin
                .apply_dry_run(&path_of(&obj), &obj)
                .unwrap_or_else(|e| panic!("{name}: {} refused: {e}", path_of(&obj)));
            kinds.push(obj["kind"].as_str().unwrap().to_string());
        }
    }
    for kind in [
        "Deployment",
        "Service",
        "ServiceMonitor",
        "PrometheusRule",
        "ClusterRole",
        "Role",
    ] {
        assert!(
            kinds.iter().any(|k| k == kind),
            "no {kind} in manifests/: {kinds:?}"
        );
    }
    let kustomization = std::fs::read_to_string("manifests/kustomization.yaml").unwrap();
    for line in kustomization.lines().filter_map(|l| l.strip_prefix("- ")) {
        assert!(
            std::path::Path::new("manifests")
                .join(line.trim())
                .is_file(),
            "kustomization.yaml names {line}, which does not exist"
        );
    }
}
