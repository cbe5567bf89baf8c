//! The book's cluster snippets that call Helm or follow its install (`docs/snippets/`, `# needs:
//! cluster`), run on the node as the pages show them, in the order an admin meets them:
//! install, the gate warning then refusing, a CRD opted out, the cleanup's dry run, the report
//! CRD applied by hand, uninstall. Each runs with bash from the repository's root, with
//! `helm`, the harness's `kubectl` and the `crd-audit` under test on `PATH` and the node's
//! kubeconfig; its exit code must be its `# exit: N` (0 when absent) and each line of its
//! `.expected` file must be in its output (tests/book.rs reads the same headers).
//!
//! The chart's default image (`ghcr.io/crd-audit/crd-audit:<appVersion>`, pulled if not
//! present) is the image under test, tagged so in the node's containerd: the snippets set no
//! image. Not run here: `operator/helm-monitoring.sh` (it needs the Prometheus Operator's
//! CRDs; the chart test installs those on the API server without a node) and
//! `install/helm-release.sh` (`# needs: release`: the published chart).

use super::*;

/// The snippets this test runs, in order.
const RUN: &[&str] = &[
    "install/helm.sh",
    "operator/cleanup-dry-run.sh",
    "gate/helm-warn.sh",
    "gate/opt-out.sh",
    "gate/helm-deny.sh",
    "operator/crd-by-hand.sh",
    "operator/uninstall.sh",
];
/// The cluster snippets that call Helm but are not run here (the module's doc says why).
const NOT_RUN: &[&str] = &["operator/helm-monitoring.sh"];

/// A snippet's `# exit: N` (0 when absent) and the lines of its `.expected` file.
fn header(path: &Path) -> (i32, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let exit = text
        .lines()
        .take_while(|l| l.starts_with('#'))
        .find_map(|l| l.strip_prefix("# exit:"))
        .map_or(0, |n| n.trim().parse().unwrap());
    let expected = std::fs::read_to_string(path.with_extension("expected"))
        .map(|t| {
            t.lines()
                .map(|l| l.trim_end().to_string())
                .filter(|l| !l.is_empty())
                .collect()
        })
        .unwrap_or_default();
    (exit, expected)
}

/// Runs a snippet against the node; its combined output.
fn run_snippet(env: &TestEnv, bin: &Path, name: &str) -> String {
    let path = Path::new("docs/snippets").join(name);
    let (exit, expected) = header(&path);
    let out = Command::new("bash")
        .arg(&path)
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("KUBECONFIG", &env.kubeconfig)
        .env("HOME", &env.run_dir)
        .env("HELM_CACHE_HOME", env.run_dir.join("helm-cache"))
        .env("HELM_CONFIG_HOME", env.run_dir.join("helm-config"))
        .env("HELM_DATA_HOME", env.run_dir.join("helm-data"))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(exit), "{name}:\n{text}");
    for line in &expected {
        assert!(
            text.lines().any(|l| l.contains(line.as_str())),
            "{name}: no line holding {line:?}:\n{text}"
        );
    }
    eprintln!("snippet {name}: exit {exit} as expected");
    text
}

/// Every cluster snippet that calls helm is run here or named as not run.
fn helm_snippets() -> Vec<String> {
    let mut found = Vec::new();
    for dir in std::fs::read_dir("docs/snippets").unwrap().flatten() {
        for file in std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let path = file.path();
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            if path.extension().is_some_and(|e| e == "sh")
                && text.lines().any(|l| l.trim() == "# needs: cluster")
                && text.lines().any(|l| l.trim_start().starts_with("helm "))
            {
                let name = path.strip_prefix("docs/snippets").unwrap();
                found.push(name.display().to_string());
            }
        }
    }
    found.sort();
    found
}

#[test]
fn the_books_helm_snippets_run_on_the_node() {
    let _turn = node_turn();
    let Some(node) = node() else { return };
    let env = &node.env;
    let admin = &env.admin;

    let mut listed: Vec<String> = RUN
        .iter()
        .chain(NOT_RUN)
        .filter(|n| {
            std::fs::read_to_string(Path::new("docs/snippets").join(n))
                .unwrap()
                .contains("helm ")
        })
        .map(|n| n.to_string())
        .collect();
    listed.sort();
    assert_eq!(
        helm_snippets(),
        listed,
        "a cluster snippet calling helm that this test neither runs nor names"
    );

    // helm, kubectl and crd-audit on PATH.
    let bin = env.run_dir.join("snippet-bin");
    std::fs::create_dir_all(&bin).unwrap();
    for (name, target) in [
        ("helm", helm_binary()),
        ("kubectl", env.kubectl.clone()),
        ("crd-audit", PathBuf::from(env!("CARGO_BIN_EXE_crd-audit"))),
    ] {
        let link = bin.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(target, link).unwrap();
    }
    // The chart's default image is the one under test.
    let chart = std::fs::read_to_string("charts/crd-audit/Chart.yaml").unwrap();
    let app_version = chart
        .lines()
        .find_map(|l| l.strip_prefix("appVersion:"))
        .unwrap()
        .trim()
        .trim_matches('"')
        .to_string();
    let default_image = format!("ghcr.io/crd-audit/crd-audit:{app_version}");
    let tagged = Command::new("ctr")
        .args([
            "--address",
            &env.env_var("KUBE_TESTENV_CONTAINERD"),
            "--namespace",
            "k8s.io",
            "images",
            "tag",
            "--force",
            &format!("{}:{}", node.image.0, node.image.1),
            &default_image,
        ])
        .output()
        .unwrap();
    assert!(
        tagged.status.success(),
        "ctr images tag: {}",
        String::from_utf8_lossy(&tagged.stderr)
    );

    // The CRD the gate's pages change and opt out, with objects its owner lets the operator
    // read.
    let crd = "widgets.example.crd-audit.dev";
    let mut widgets = widgets_crd(10);
    widgets["metadata"]["name"] = crd.into();
    widgets["spec"]["group"] = "example.crd-audit.dev".into();
    apply(admin, &widgets);
    owner_roles(
        admin,
        "example-widgets",
        "example.crd-audit.dev",
        "widgets",
        &["patch"],
    );

    // An earlier test may have left the report CRD (Helm never deletes crds/).
    let _release = Release(env);
    run_snippet(env, &bin, "install/helm.sh");
    // (helm install without --wait: the pods start after it returns.)
    let pods = wait_for_at_most("the operator's pod", Duration::from_secs(120), &mut || {
        let pods = operator_pods(admin);
        (pods.len() == 1 && pods.iter().all(ready)).then_some(pods)
    });
    assert_eq!(
        pods[0]["spec"]["containers"][0]["image"],
        default_image.as_str()
    );
    wait_for_at_most("the example CRD's report", EVERY_REPORT_WITHIN, &mut || {
        report(admin, crd).ok()
    });
    let (code, out, err) = env.kubectl(&["get", "schemaaudits"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains(crd), "{out}");

    let dry_run = run_snippet(env, &bin, "operator/cleanup-dry-run.sh");
    assert!(
        report(admin, crd).is_ok(),
        "the dry run removed the report: {dry_run}"
    );

    let vwc = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/crd-audit";
    run_snippet(env, &bin, "gate/helm-warn.sh");
    let warn = wait_for_at_most("the gate warning", Duration::from_secs(120), &mut || {
        admin
            .get(vwc)
            .ok()
            .filter(|v| v["webhooks"][0]["clientConfig"]["caBundle"].is_string())
    });
    assert_eq!(warn["webhooks"][0]["failurePolicy"], "Ignore");

    run_snippet(env, &bin, "gate/opt-out.sh");
    let annotated = admin
        .get(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"
        ))
        .unwrap();
    assert_eq!(
        annotated["metadata"]["annotations"]["crd-audit.dev/gate"],
        "off"
    );

    run_snippet(env, &bin, "gate/helm-deny.sh");
    wait_for_at_most("the deny rollout", Duration::from_secs(120), &mut || {
        let pods = operator_pods(admin);
        (pods.len() == 1 && pods.iter().all(ready)).then_some(())
    });

    run_snippet(env, &bin, "operator/crd-by-hand.sh");
    let report_crd =
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/schemaaudits.crd-audit.dev";
    let managers = admin.get(report_crd).unwrap()["metadata"]["managedFields"].clone();
    assert!(
        managers
            .as_array()
            .is_some_and(|m| m.iter().any(|f| f["manager"] == "crd-audit")),
        "{managers:#}"
    );

    run_snippet(env, &bin, "operator/uninstall.sh");
    wait_for("the report CRD to go", || {
        absent(admin, report_crd).then_some(())
    });
    wait_for_at_most(
        "the operator's pods to go",
        Duration::from_secs(120),
        &mut || operator_pods(admin).is_empty().then_some(()),
    );
    assert!(absent(admin, vwc), "the webhook configuration left");
    admin
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"
        ))
        .unwrap();
}
