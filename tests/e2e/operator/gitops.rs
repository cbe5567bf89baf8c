//! The reports as GitOps tools read them, checked with the tools' own code
//! (`scripts/gitops-health`: kstatus from sigs.k8s.io/cli-utils, the Argo CD health check of
//! `integrations/argocd/argocd-cm.yaml` in gopher-lua as Argo CD runs it, and the Flux
//! `healthCheckExprs` of `integrations/flux/kustomization.yaml` evaluated by Flux's own CEL
//! health code) over reports the operator wrote on a real API server: a clean one, one with
//! stuck objects, and one whose audit cannot complete (its CRD's names are refused, so its
//! objects are not served).

use super::*;
use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

/// The path of the gitops-health tool (built once by its install script).
fn gitops_health() -> std::path::PathBuf {
    let out = Command::new("bash")
        .arg("scripts/install-gitops-health.sh")
        .stderr(std::process::Stdio::inherit())
        .output()
        .expect("scripts/install-gitops-health.sh");
    assert!(
        out.status.success(),
        "scripts/install-gitops-health.sh could not build the GitOps health checks"
    );
    std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// What a subcommand of the tool says of each report file: name -> (status, message).
fn verdicts(tool: &std::path::Path, args: &[&str]) -> BTreeMap<String, (String, String)> {
    let out = Command::new(tool).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "gitops-health {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["name"].as_str().unwrap().to_string(),
                (
                    v["status"].as_str().unwrap().to_string(),
                    v["message"].as_str().unwrap_or("").to_string(),
                ),
            )
        })
        .collect()
}

/// The reason of a report's condition.
fn reason(r: &Value, ty: &str) -> String {
    r["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == ty))
        .and_then(|c| c["reason"].as_str())
        .unwrap_or("")
        .to_string()
}

#[test]
fn gitops_tools_read_the_reports_as_they_mean() {
    let Some(s) = Scenario::shared("gitops") else {
        return;
    };
    let tool = gitops_health();
    let admin = s.admin();
    install(&s);
    // Clean: things (revision 1) and its three objects.
    things(&s, 1);
    create_things(&s);
    // Stuck: gadgets, tightened under its two objects (1.20 has no ratcheting: stuck).
    let gadgets = format!("gadgets.{}", s.group);
    apply(admin, &things_crd(&gadgets, &s.group, 1));
    let gadgets_path = format!("/apis/{}/v1/namespaces/{}/gadgets", s.group, s.namespace);
    wait_for("gadgets served", || admin.get(&gadgets_path).ok());
    for name in ["g1", "g2"] {
        apply(
            admin,
            &json!({"apiVersion": format!("{}/v1", s.group), "kind": "Gadget",
                "metadata": {"name": name, "namespace": s.namespace}, "spec": {"size": "large"}}),
        );
    }
    apply(admin, &things_crd(&gadgets, &s.group, 2));
    // Never audited: widgets names the kind Thing, which things holds already; the server
    // refuses its names and serves none of its objects.
    let widgets = format!("widgets.{}", s.group);
    let mut conflicting = things_crd(&widgets, &s.group, 1);
    conflicting["spec"]["names"]["kind"] = json!("Thing");
    apply(admin, &conflicting);
    let admin_kc = s.env.kubeconfig.display().to_string();
    let config = s.config("gitops.yaml", "");
    let c = s.controller("gitops", &["--kubeconfig", &admin_kc, "--config", &config]);
    let crd = s.crd();
    let has = |r: &Value, ty: &str, status: &str| condition(r, ty).is_some_and(|c| c.0 == status);
    let clean = wait_for("the clean report", || {
        report(admin, &crd).ok().filter(|r| has(r, "Ready", "True"))
    });
    let stuck = wait_for("the stuck report", || {
        report(admin, &gadgets)
            .ok()
            .filter(|r| has(r, "UpdatesAccepted", "False") && has(r, "Ready", "False"))
    });
    // A report waits a minute for an audit to complete before it says the audit runs.
    let auditing = wait_for_at_most(
        "the report of the audit that cannot complete",
        Duration::from_secs(120),
        &mut || {
            report(admin, &widgets)
                .ok()
                .filter(|r| has(r, "Reconciling", "True"))
        },
    );
    for r in [&clean, &stuck, &auditing] {
        assert_eq!(
            r["status"]["observedGeneration"], r["metadata"]["generation"],
            "the status describes the report itself: {r}"
        );
        assert!(r["status"]["crdGeneration"].as_i64().is_some(), "{r}");
    }
    assert_eq!(reason(&stuck, "Ready"), "BlockedObjects");
    assert!(has(&stuck, "Stalled", "True") && has(&stuck, "Reconciling", "False"));
    assert!(has(&auditing, "Ready", "Unknown") && has(&auditing, "Stalled", "False"));
    assert!(has(&clean, "Stalled", "False") && has(&clean, "Reconciling", "False"));
    c.stop_cleanly();

    // The reports as the tools read them, from files written as the API server served them.
    let dir = s.dir.join("reports");
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    for (file, r) in [
        ("clean", &clean),
        ("stuck", &stuck),
        ("auditing", &auditing),
    ] {
        let path = dir.join(format!("{file}.json"));
        std::fs::write(&path, r.to_string()).unwrap();
        files.push(path.display().to_string());
    }
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    let run = |sub: &[&str]| {
        let mut args: Vec<&str> = sub.to_vec();
        args.extend(&files);
        verdicts(&tool, &args)
    };
    let kstatus = run(&["kstatus"]);
    let argo = run(&[
        "argocd-lua",
        "integrations/argocd/argocd-cm.yaml",
        "--print",
    ]);
    let flux = run(&["flux-cel", "integrations/flux/kustomization.yaml"]);
    let status = |m: &BTreeMap<String, (String, String)>, name: &str| m[name].0.clone();
    eprintln!("kstatus {kstatus:?}\nargo {argo:?}\nflux {flux:?}");
    assert_eq!(status(&kstatus, &crd), "Current");
    assert_eq!(status(&kstatus, &gadgets), "Failed");
    assert_eq!(status(&kstatus, &widgets), "InProgress");
    assert_eq!(status(&argo, &crd), "Healthy");
    assert_eq!(status(&argo, &gadgets), "Degraded");
    assert_eq!(status(&argo, &widgets), "Progressing");
    assert_eq!(status(&flux, &crd), "Current");
    assert_eq!(status(&flux, &gadgets), "Failed");
    assert_eq!(status(&flux, &widgets), "InProgress");
    // The messages are the Ready condition's.
    assert_eq!(
        argo[&gadgets].1,
        condition(&stuck, "Ready").unwrap().1,
        "{argo:?}"
    );
}
