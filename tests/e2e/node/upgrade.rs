//! `helm upgrade` on the node from the previous release of crd-audit to this one: the image
//! and the chart of the newest commit whose chart or binary differs from the working tree's
//! (its image built from that commit by `scripts/build-image-at.sh`, cached by commit id), to
//! the current image and chart. While the pods roll, every `kubectl apply` of a CRD change
//! gets the gate's answer (failurePolicy Ignore would let it through unjudged: the warnings
//! must be in each answer). The report CRD an admin of an older chart has (the newest commit
//! whose report CRD differs) is upgraded: its current schema and short name are served
//! afterwards (Helm leaves `crds/` alone on upgrade; the chart's `apply-crd` pre-upgrade hook
//! applies it), and the upgraded release runs.

use super::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

const REPORT_CRD: &str = "charts/crd-audit/crds";
/// The release an admin upgrades from (`scripts/previous-release.sh`: the commit that made the
/// newest chart and binary other than the working tree's).
fn previous_release_commit() -> String {
    let out = Command::new("bash")
        .arg("scripts/previous-release.sh")
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "scripts/previous-release.sh: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let commit = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert_eq!(
        commit.len(),
        40,
        "scripts/previous-release.sh printed {commit:?}"
    );
    commit
}

/// `git archive` of the chart at `commit`, under `dir`: the chart's path.
fn chart_at(commit: &str, dir: &Path) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let archive = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "git archive {commit} charts/crd-audit | tar -x -C '{}'",
            dir.display()
        ))
        .status()
        .unwrap();
    assert!(archive.success(), "git archive {commit}");
    dir.join("charts/crd-audit").display().to_string()
}

/// The image of `commit` (`scripts/build-image-at.sh`), loaded into the node: (repository,
/// tag).
fn image_at(env: &TestEnv, commit: &str) -> (String, String) {
    let started = Instant::now();
    let built = Command::new("bash")
        .args(["scripts/build-image-at.sh", commit])
        .stderr(std::process::Stdio::inherit())
        .output()
        .unwrap();
    assert!(built.status.success(), "scripts/build-image-at.sh {commit}");
    let line = String::from_utf8(built.stdout).unwrap();
    let (archive, reference) = line.trim().split_once(' ').unwrap();
    eprintln!(
        "FIGURE the image of {} ready in {:.0} s (built, or found in the cache)",
        &commit[..12],
        started.elapsed().as_secs_f64()
    );
    let loaded = Command::new("bash")
        .arg("tests/testenv/node-load-image.sh")
        .arg(&env.kubeconfig)
        .arg(archive)
        .output()
        .unwrap();
    assert!(
        loaded.status.success(),
        "node-load-image.sh: {}",
        String::from_utf8_lossy(&loaded.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&loaded.stdout).trim(), reference);
    let (repository, tag) = reference.rsplit_once(':').unwrap();
    (repository.to_string(), tag.to_string())
}

/// One `kubectl apply` during the rollout: seconds since the probe started, exit code, stderr,
/// and whether a pod of `old_image` was being deleted then (or had been within 3 s).
type Answer = (f64, Option<i32>, String, bool);

/// The gate's answers while a rollout runs: `kubectl apply --dry-run=server` of a tightening
/// every half second on a thread of its own until stopped, and after each, whether a pod of
/// the old image is going.
struct GateProbe {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Vec<Answer>>,
}

impl GateProbe {
    fn start(env: &TestEnv, change: &Path, old_image: String) -> GateProbe {
        let stop = Arc::new(AtomicBool::new(false));
        let (kubectl, kubeconfig, home) = (
            env.kubectl.clone(),
            env.kubeconfig.clone(),
            env.run_dir.clone(),
        );
        let change = change.to_path_buf();
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            let admin = Rest::new(&kubeconfig, None);
            let started = Instant::now();
            let mut answers = Vec::new();
            let mut old_going_at: Option<Instant> = None;
            while !stopping.load(Ordering::Relaxed) {
                let out = Command::new(&kubectl)
                    .args(["apply", "--dry-run=server", "-f"])
                    .arg(&change)
                    .env("KUBECONFIG", &kubeconfig)
                    .env("HOME", &home)
                    .output()
                    .unwrap();
                let pods = list_ok(
                    &admin,
                    &format!(
                        "/api/v1/namespaces/{NAMESPACE}/pods?labelSelector=app.kubernetes.io/name%3Dcrd-audit"
                    ),
                );
                if pods.iter().any(|p| {
                    !p["metadata"]["deletionTimestamp"].is_null()
                        && p["spec"]["containers"][0]["image"] == old_image.as_str()
                }) {
                    old_going_at = Some(Instant::now());
                }
                answers.push((
                    started.elapsed().as_secs_f64(),
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr).into_owned(),
                    old_going_at.is_some_and(|t| t.elapsed() < Duration::from_secs(3)),
                ));
                std::thread::sleep(Duration::from_millis(500));
            }
            answers
        });
        GateProbe { stop, thread }
    }

    fn stop(self) -> Vec<Answer> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

/// The gate's warning for the change to maximum 5 (one of three widgets stuck).
fn warned(stderr: &str) -> bool {
    gate_lines(stderr).first().is_some_and(|l| {
        l.starts_with("Warning: crd-audit: ")
            && l.contains(" of 3 stored widgets become invalid under v1")
    })
}

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
fn helm_upgrade_from_the_previous_release_keeps_the_gate_answering_and_serves_the_current_report_crd()
 {
    let _turn = node_turn();
    let Some(node) = node() else { return };
    let env = &node.env;
    let admin = &env.admin;
    let previous = previous_release_commit();
    let old_chart = chart_at(
        &previous,
        &env.run_dir.join(format!("chart-{}", &previous[..12])),
    );
    let old_image = image_at(env, &previous);
    // The report CRD an admin of an older chart has.
    let commit = previous_chart_commit();
    let old_crd_chart = chart_at(
        &commit,
        &env.run_dir.join(format!("chart-{}", &commit[..12])),
    );

    // A CRD to report on, readable by aggregation, with three widgets (sizes 1, 4, 8).
    apply(admin, &widgets_crd(10));
    owner_roles(admin, "widgets", GROUP, "widgets", &["patch"]);
    apply(
        admin,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}),
    );
    wait_for("widgets to be served", || {
        admin.get("/apis/node.example.com/v1/widgets").ok()
    });
    for (name, size) in [("small", 1), ("medium", 4), ("large", 8)] {
        apply(
            admin,
            &json!({"apiVersion": "node.example.com/v1", "kind": "Widget",
                "metadata": {"name": name, "namespace": "team-a"},
                "spec": {"size": size, "note": ""}}),
        );
    }
    let _release = Release(env);
    let crd_path =
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/schemaaudits.crd-audit.dev";
    // An earlier test on this node may have left the current report CRD (Helm never deletes
    // the CRDs of a chart's crds/, and installs them only where absent): an admin who
    // installed the old chart has the old CRD.
    let _ = admin.delete(crd_path);
    wait_for("the report CRD to be deleted", || {
        absent(admin, crd_path).then_some(())
    });
    apply_file(admin, &format!("{old_crd_chart}/crds/schemaaudit-crd.yaml"));
    wait_for("the older report CRD to be served", || {
        admin.get("/apis/crd-audit.dev/v1alpha1/schemaaudits").ok()
    });
    helm_ok(env, &strs(&install_args(&old_image, &old_chart, "install")));
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
    // Something to upgrade: the older report CRD's short names or served schema are not the
    // current ones.
    assert!(
        before["spec"]["names"]["shortNames"] != current["spec"]["names"]["shortNames"]
            || before["spec"]["versions"][0]["schema"] != current["spec"]["versions"][0]["schema"],
        "the chart of {commit} already installs the current report CRD: nothing to upgrade"
    );

    // The previous release runs and its gate answers.
    wait_for_at_most("two ready pods", Duration::from_secs(120), &mut || {
        let pods = operator_pods(admin);
        (pods.len() == 2 && pods.iter().all(ready)).then_some(())
    });
    let image_of = |pod: &Value| {
        pod["spec"]["containers"][0]["image"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let old_reference = format!("{}:{}", old_image.0, old_image.1);
    assert!(
        operator_pods(admin)
            .iter()
            .all(|p| image_of(p) == old_reference)
    );
    let max5 = write_json(&env.run_dir, "upgrade-max5.json", &widgets_crd(5));
    let first = wait_for_at_most(
        "the previous release's gate",
        Duration::from_secs(60),
        &mut || {
            let (code, _, err) =
                env.kubectl(&["apply", "--dry-run=server", "-f", max5.to_str().unwrap()]);
            (code == Some(0) && warned(&err)).then_some(err)
        },
    );
    eprintln!("the previous release's gate: {first}");

    // helm upgrade to this chart and image, the gate asked all along.
    let probe = GateProbe::start(env, &max5, old_reference.clone());
    let started = Instant::now();
    helm_ok(
        env,
        &strs(&install_args(&node.image, "charts/crd-audit", "upgrade")),
    );
    let upgraded = started.elapsed();
    let new_reference = format!("{}:{}", node.image.0, node.image.1);
    wait_for_at_most("the new pods, ready", Duration::from_secs(180), &mut || {
        let pods = operator_pods(admin);
        (pods.len() == 2
            && pods
                .iter()
                .all(|p| ready(p) && image_of(p) == new_reference))
        .then_some(())
    });
    let rolled = started.elapsed();
    // Until the old pods are gone, and a little after.
    wait_for_at_most("the old pods to go", Duration::from_secs(120), &mut || {
        list_ok(
            admin,
            &format!(
                "/api/v1/namespaces/{NAMESPACE}/pods?labelSelector=app.kubernetes.io/name%3Dcrd-audit"
            ),
        )
        .iter()
        .all(|p| image_of(p) != old_reference)
        .then_some(())
    });
    std::thread::sleep(Duration::from_secs(3));
    let answers = probe.stop();
    eprintln!(
        "FIGURE helm upgrade from {} (image and chart) took {:.1} s, the new pods ready {:.1} s \
         after it started; {} kubectl apply meanwhile",
        &previous[..12],
        upgraded.as_secs_f64(),
        rolled.as_secs_f64(),
        answers.len()
    );
    assert!(
        answers.len() >= 10,
        "too few applies during the rollout: {answers:?}"
    );
    let unanswered: Vec<&Answer> = answers
        .iter()
        .filter(|(_, code, err, _)| *code != Some(0) || !warned(err))
        .collect();
    // A replica drains its gate when its pod is deleted (GATE_DRAIN, src/operator/mod.rs): it
    // answers for 5 s more, each answer closing its connection, while its pod leaves the
    // Service. A release from before that stops listening at once, and a review sent to its
    // pod as it goes is lost (failurePolicy Ignore: the change let through unjudged). From
    // such a release, only those may go unanswered: while one of its pods is being deleted.
    let previous_drains = Command::new("git")
        .args([
            "grep",
            "-q",
            "GATE_DRAIN",
            &previous,
            "--",
            "src/operator/mod.rs",
        ])
        .status()
        .unwrap()
        .success();
    eprintln!(
        "FIGURE during the rollout {} of {} kubectl apply got no answer from the gate (the \
         previous release {} its gate)",
        unanswered.len(),
        answers.len(),
        if previous_drains {
            "drains"
        } else {
            "does not drain"
        }
    );
    if previous_drains {
        assert!(
            unanswered.is_empty(),
            "{} of {} kubectl apply during the rollout got no answer from the gate: {unanswered:#?}",
            unanswered.len(),
            answers.len()
        );
    } else {
        let outside: Vec<&&Answer> = unanswered.iter().filter(|a| !a.3).collect();
        assert!(
            outside.is_empty(),
            "kubectl apply got no answer from the gate while no pod of the previous release \
             was going: {outside:#?} (of {} answers)",
            answers.len()
        );
    }
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
