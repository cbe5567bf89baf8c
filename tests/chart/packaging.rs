//! What is shipped: Chart.yaml's Artifact Hub annotations, the packaged chart's files, and
//! the commands the hook Jobs run.

use super::*;
use serde_json::Value;
use std::process::Command;

/// Chart.yaml's Artifact Hub annotations: the image is the chart's default one, the CRD the
/// one in crds/, the changes of kinds Artifact Hub knows, the links and examples readable.
#[test]
fn the_artifact_hub_annotations_describe_this_chart() {
    let chart = yaml_file("charts/crd-audit/Chart.yaml");
    let values = yaml_file("charts/crd-audit/values.yaml");
    let notes = &chart["annotations"];
    let list = |key: &str| -> Vec<Value> {
        let text = notes[key].as_str().unwrap_or_else(|| panic!("no {key}"));
        objects(key, text)
            .into_iter()
            .next()
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_else(|| panic!("{key} is not a YAML list"))
    };
    let images = list("artifacthub.io/images");
    let default_image = format!(
        "{}:{}",
        values["image"]["repository"].as_str().unwrap(),
        chart["appVersion"].as_str().unwrap()
    );
    assert_eq!(images[0]["image"], Value::String(default_image));
    let crd = yaml_file("charts/crd-audit/crds/schemaaudit-crd.yaml");
    let crds = list("artifacthub.io/crds");
    assert_eq!(crds[0]["kind"], crd["spec"]["names"]["kind"]);
    assert_eq!(crds[0]["name"], crd["metadata"]["name"]);
    assert_eq!(crds[0]["version"], crd["spec"]["versions"][0]["name"]);
    let examples = list("artifacthub.io/crdsExamples");
    assert_eq!(
        examples[0]["apiVersion"],
        Value::String(format!(
            "{}/{}",
            crd["spec"]["group"].as_str().unwrap(),
            crd["spec"]["versions"][0]["name"].as_str().unwrap()
        ))
    );
    let changes = list("artifacthub.io/changes");
    assert!(changes.len() >= 5, "{changes:?}");
    for c in &changes {
        let kind = c["kind"].as_str().unwrap_or_default();
        assert!(
            [
                "added",
                "changed",
                "deprecated",
                "removed",
                "fixed",
                "security"
            ]
            .contains(&kind),
            "{c}"
        );
        assert!(
            c["description"].as_str().is_some_and(|d| d.len() > 10),
            "{c}"
        );
    }
    assert!(
        changes
            .iter()
            .any(|c| c["description"].as_str().unwrap().contains("crdaudit")),
        "the short name change is not listed"
    );
    for link in list("artifacthub.io/links") {
        assert!(
            link["url"].as_str().unwrap().starts_with("https://"),
            "{link}"
        );
    }
    for flag in [
        "artifacthub.io/prerelease",
        "artifacthub.io/containsSecurityUpdates",
    ] {
        assert!(
            ["true", "false"].contains(&notes[flag].as_str().unwrap()),
            "{flag}"
        );
    }
    assert_eq!(notes["artifacthub.io/license"], "Apache-2.0");
}

/// `helm package` leaves the chart's tests and CI values out (.helmignore), and keeps what
/// the chart needs.
#[test]
fn the_packaged_chart_leaves_the_tests_out() {
    let Some(helm) = helm() else { return };
    let dir = std::env::temp_dir().join(format!("crd-audit-package-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    helm_run(
        helm,
        &["package", CHART, "--destination", dir.to_str().unwrap()],
    )
    .unwrap();
    let archive = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let out = Command::new("tar")
        .arg("tzf")
        .arg(&archive)
        .output()
        .unwrap();
    assert!(out.status.success());
    let files = String::from_utf8(out.stdout).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    for kept in [
        "crd-audit/Chart.yaml",
        "crd-audit/values.schema.json",
        "crd-audit/templates/NOTES.txt",
        "crd-audit/templates/crd-upgrade-hook.yaml",
        "crd-audit/crds/schemaaudit-crd.yaml",
        "crd-audit/dashboards/crd-audit.json",
    ] {
        assert!(
            files.lines().any(|l| l == kept),
            "{kept} not packaged:\n{files}"
        );
    }
    for left_out in ["crd-audit/tests/", "crd-audit/ci/"] {
        assert!(
            !files.lines().any(|l| l.starts_with(left_out)),
            "{left_out} packaged:\n{files}"
        );
    }
}

/// The hook Jobs run commands the binary has, with what the chart gives them: `apply-crd`
/// applies exactly the CRD of crds/ (what `crd-audit manifests` prints), and both take the
/// instance's name from CRD_AUDIT_NAME where they need it.
#[test]
fn the_hook_jobs_run_commands_of_the_binary() {
    let bin = env!("CARGO_BIN_EXE_crd-audit");
    let manifest = Command::new(bin).arg("manifests").output().unwrap();
    assert!(manifest.status.success());
    assert_eq!(
        String::from_utf8(manifest.stdout).unwrap(),
        std::fs::read_to_string(root().join(CHART).join("crds/schemaaudit-crd.yaml")).unwrap(),
        "crds/schemaaudit-crd.yaml is not what `crd-audit manifests` prints (just manifests)"
    );
    // The chart names the instance through CRD_AUDIT_NAME: the commands read it as --name
    // (a name that is no DNS label is refused before anything else, naming the flag).
    for command in ["controller", "uninstall-cleanup"] {
        let out = Command::new(bin)
            .arg(command)
            .env("CRD_AUDIT_NAME", "Not_A_Label")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command}: {err}");
        assert!(
            err.contains("invalid value 'Not_A_Label' for '--name <NAME>'"),
            "{command}: {err}"
        );
    }
    let Some(helm) = helm() else { return };
    let objs = objects("render", &template(helm, &[]).unwrap());
    for job in objs.iter().filter(|o| o["kind"] == "Job") {
        let args: Vec<&str> = job["spec"]["template"]["spec"]["containers"][0]["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let out = Command::new(bin)
            .args(&args)
            .arg("--help")
            .env("CRD_AUDIT_NAME", "audit-prod")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: crd-audit {args:?} --help: {}",
            job["metadata"]["name"],
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let mut names: Vec<&str> = objs
        .iter()
        .filter(|o| o["kind"] == "Job")
        .map(|o| o["metadata"]["name"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["crd-audit-apply-crd", "crd-audit-uninstall-cleanup"]
    );
}
