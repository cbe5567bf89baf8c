//! `helm upgrade` on the node from the chart of the newest commit whose report CRD differs
//! from the current one: the report CRD's current schema and short name are served afterwards
//! (Helm leaves `crds/` alone on upgrade; the chart's `apply-crd` pre-upgrade hook applies
//! it), and the upgraded release runs.

use super::*;

const REPORT_CRD: &str = "charts/crd-audit/crds";

/// The newest commit whose report CRD differs from the working tree's: the chart an admin
/// upgrades from when the report CRD changes. (The newest commit that changed the chart at
/// all may already hold the current report CRD.)
fn previous_chart_commit() -> String {
    let out = Command::new("git")
        .args(["log", "--first-parent", "--format=%H"])
        .output()
        .expect("git");
    assert!(out.status.success(), "git log: {out:?}");
    let commits = String::from_utf8(out.stdout).unwrap();
    commits
        .lines()
        .find(|c| {
            !Command::new("git")
                .args(["diff", "--quiet", c, "--", REPORT_CRD])
                .status()
                .unwrap()
                .success()
        })
        .expect("a commit whose report CRD differs from this one (the checkout needs its history)")
        .to_string()
}

#[test]
fn helm_upgrade_from_the_previous_chart_serves_the_current_report_crd() {
    let _turn = node_turn();
    let Some(node) = node() else { return };
    let env = &node.env;
    let admin = &env.admin;
    let commit = previous_chart_commit();
    let old = env.run_dir.join(format!("chart-{}", &commit[..12]));
    std::fs::create_dir_all(&old).unwrap();
    let archive = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "git archive {commit} charts/crd-audit | tar -x -C '{}'",
            old.display()
        ))
        .status()
        .unwrap();
    assert!(archive.success(), "git archive {commit}");
    let old_chart = old.join("charts/crd-audit").display().to_string();

    // A CRD to report on, readable by aggregation.
    apply(admin, &widgets_crd(10));
    owner_roles(admin, "widgets", GROUP, "widgets", &["patch"]);
    let _release = Release(env);
    let crd_path =
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/schemaaudits.crd-audit.dev";
    // An earlier test on this node may have left the current report CRD (Helm never deletes
    // the CRDs of a chart's crds/, and installs them only where absent): an admin who
    // installed the old chart has the old CRD.
    let _ = admin.delete(crd_path);
    wait_for("the report CRD to be deleted", || {
        admin.get(crd_path).is_err().then_some(())
    });
    helm_ok(env, &strs(&install_args(node, &old_chart, "install")));
    let before = admin.get(crd_path).unwrap();
    let current = crd_audit_engine::load::parse_str(
        "crds",
        &std::fs::read_to_string("charts/crd-audit/crds/schemaaudit-crd.yaml").unwrap(),
    )
    .into_iter()
    .next()
    .unwrap()
    .unwrap()
    .value;
    assert_ne!(
        before["spec"]["names"]["shortNames"], current["spec"]["names"]["shortNames"],
        "the chart of {commit} already installs the current report CRD's names: nothing to upgrade"
    );

    helm_ok(
        env,
        &strs(&install_args(node, "charts/crd-audit", "upgrade")),
    );
    let after = admin.get(crd_path).unwrap();
    assert_eq!(
        after["spec"]["names"]["shortNames"], current["spec"]["names"]["shortNames"],
        "{:#}",
        after["spec"]["names"]
    );
    assert_eq!(
        after["status"]["acceptedNames"]["shortNames"],
        current["spec"]["names"]["shortNames"]
    );
    assert_eq!(
        after["spec"]["versions"][0]["schema"], current["spec"]["versions"][0]["schema"],
        "the served schema is the current one"
    );
    // The short name is served (discovery, read afresh: kubectl keeps what it discovered for
    // ten minutes), and reads the reports.
    let fresh_cache = env.run_dir.join(format!("kubectl-cache-{}", &commit[..12]));
    let (code, out, err) = env.kubectl(&[
        "--cache-dir",
        fresh_cache.to_str().unwrap(),
        "get",
        current["spec"]["names"]["shortNames"][0].as_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    // The upgraded release runs: its pods ready, a report for every CRD.
    wait_for_at_most("two ready pods", Duration::from_secs(120), &mut || {
        let pods = operator_pods(admin);
        (pods.len() == 2 && pods.iter().all(ready)).then_some(())
    });
    wait_for_at_most("a report of every CRD", EVERY_REPORT_WITHIN, &mut || {
        every_crd_reported(admin).then_some(())
    });
    helm_ok(
        env,
        &["uninstall", "crd-audit", "--namespace", NAMESPACE, "--wait"],
    );
}
