//! The book's commands that need a cluster (`# needs: cluster` under `docs/snippets/`), run
//! as a reader runs them: in one shell, in the order the pages give them, on the test
//! cluster the walk-through starts (`tests/testenv/up.sh`). Each snippet must exit as its
//! `# exit:` header says (0 without one) and print the lines of its `.expected` file (each
//! within some line of its output). The offline snippets are `tests/book.rs`'s; the ones that
//! need Helm and pods run on the node (`node`).

use crate::support::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A snippet's `# exit:` header (0 when absent).
fn expected_exit(text: &str) -> i32 {
    text.lines()
        .take_while(|l| l.starts_with('#'))
        .find_map(|l| l.strip_prefix("# exit:"))
        .map_or(0, |n| n.trim().parse().unwrap())
}

/// A scratch directory that looks like the repository's root (every top-level entry linked)
/// where the snippets write what they write, and a directory of commands for `PATH`:
/// `crd-audit`, and the kubectl plugin's name for it.
fn scratch(name: &str) -> (PathBuf, PathBuf) {
    let root = std::env::current_dir().unwrap();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("book-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    let work = dir.join("work");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    for entry in std::fs::read_dir(&root).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" || name == ".git" {
            continue;
        }
        std::os::unix::fs::symlink(entry.path(), work.join(&name)).unwrap();
    }
    for command in ["crd-audit", "kubectl-crd_audit"] {
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_crd-audit"), bin.join(command)).unwrap();
    }
    (work, bin)
}

/// Runs the snippets `names` (paths under `docs/snippets/` without `.sh`) in one shell, in
/// order, and checks each one's exit code and expected lines. The cluster a snippet starts
/// is stopped at the end.
fn run_in_one_shell(sequence: &str, names: &[&str]) {
    run_snippets(
        sequence,
        names,
        "stop() { kill $(jobs -p) 2>/dev/null; [ -n \"$KUBECONFIG\" ] && [ -d \"$(dirname \"$KUBECONFIG\")\" ] && bash tests/testenv/down.sh \"$KUBECONFIG\" >/dev/null 2>&1; }\n\
         trap stop EXIT\n",
    );
}

/// Runs the snippets `names` in one shell on the cluster of `env` (set up by the test: the
/// shell's `KUBECONFIG`, its kubectl on `PATH`), left running.
fn run_on(env: &TestEnv, sequence: &str, names: &[&str]) {
    let kubectl_dir = env.kubectl.parent().unwrap().display().to_string();
    run_snippets(
        sequence,
        names,
        &format!(
            "export KUBECONFIG='{}'\nPATH='{kubectl_dir}':$PATH\n",
            env.kubeconfig.display()
        ),
    );
}

fn run_snippets(sequence: &str, names: &[&str], prelude: &str) {
    let (work, bin) = scratch(sequence);
    let snippets = Path::new("docs/snippets");
    let mut script = format!("set +e\n{prelude}");
    for (i, name) in names.iter().enumerate() {
        let path = snippets.join(format!("{name}.sh"));
        assert!(path.is_file(), "no snippet {}", path.display());
        script.push_str(&format!(
            "echo '@@@ {i}'\n. '{}' 2>&1\necho \"@@@ {i} exit $?\"\n",
            path.display()
        ));
    }
    let path_var = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = Command::new("timeout")
        .args(["600", "setsid", "bash", "-c", &script])
        .current_dir(&work)
        .env("PATH", path_var)
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let logs = logs_written(&work);
    for (i, name) in names.iter().enumerate() {
        let begin = format!("@@@ {i}\n");
        let end = format!("@@@ {i} exit ");
        let from = text
            .find(&begin)
            .unwrap_or_else(|| panic!("{name} did not run:\n{text}{logs}"))
            + begin.len();
        let to = text[from..]
            .find(&end)
            .unwrap_or_else(|| panic!("{name} did not end:\n{text}{logs}"))
            + from;
        let output = &text[from..to];
        let code: i32 = text[to + end.len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let source = std::fs::read_to_string(snippets.join(format!("{name}.sh"))).unwrap();
        assert_eq!(
            code,
            expected_exit(&source),
            "{name} exited {code}:\n{output}{logs}"
        );
        if let Ok(expected) = std::fs::read_to_string(snippets.join(format!("{name}.expected"))) {
            for line in expected.lines().filter(|l| !l.trim().is_empty()) {
                assert!(
                    output.lines().any(|o| o.contains(line)),
                    "{name}: no line of its output holds {line:?}:\n{output}{logs}"
                );
            }
        }
    }
}

/// The end of each log the snippets wrote in `work` (the operator's `2>operator.log`), for a
/// failure's message: a background command that stopped says why there.
fn logs_written(work: &Path) -> String {
    let mut logs: Vec<_> = std::fs::read_dir(work)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    let mut text = String::new();
    for log in logs {
        // A log cut in the middle of a character is still read.
        let content =
            String::from_utf8_lossy(&std::fs::read(&log).unwrap_or_default()).into_owned();
        let lines: Vec<&str> = content.lines().collect();
        text.push_str(&format!("\n--- the last lines of {}:\n", log.display()));
        for line in &lines[lines.len().saturating_sub(40)..] {
            text.push_str(line);
            text.push('\n');
        }
    }
    text
}

/// Whether the snippets may start the test cluster: end-to-end tests on, and (unless they are
/// required, as under CI) root, which the harness needs.
fn can_start_a_cluster() -> bool {
    match std::env::var("CRD_AUDIT_E2E").as_deref() {
        Ok("off") => false,
        Ok("required") => true,
        _ => {
            let root = Command::new("id")
                .arg("-u")
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
            if !root {
                eprintln!("NOTICE: the book's cluster snippets need root; skipped");
            }
            root
        }
    }
}

/// The walk-through of the README and the getting-started guide, and the cluster commands of
/// the other pages that read the state it builds: `plan --cluster` and `validate
/// --crds-from-cluster` before the tightening, `audit` (text, JSON, JUnit, as a kubectl
/// plugin) and `manifests --rbac-for-cluster` after it.
#[test]
fn the_walk_through_and_the_cluster_commands_run_as_the_book_shows_them() {
    let _turn = own_server();
    if !can_start_a_cluster() {
        return;
    }
    run_in_one_shell(
        "walkthrough",
        &[
            "walkthrough/1-cluster",
            "walkthrough/2-objects",
            "walkthrough/3-operator",
            "walkthrough/4-reports",
            "diff-plan/plan-cluster",
            "audit/crds-from-cluster",
            "walkthrough/5-tighten",
            "audit/audit",
            "audit/json",
            "audit/junit",
            "audit/plugin",
            "operator/rbac-for-cluster",
            "walkthrough/6-stuck",
            "walkthrough/7-stop",
        ],
    );
}

/// The gate run from a laptop (the operator outside the cluster, the API server calling it
/// at `gateUrl`): `kubectl apply` of the tightening prints the gate's warnings; the webhook
/// configuration removed by hand afterwards.
#[test]
fn the_gate_from_a_laptop_runs_as_the_book_shows_it() {
    let _turn = own_server();
    if !can_start_a_cluster() {
        return;
    }
    run_in_one_shell(
        "gate",
        &[
            "walkthrough/1-cluster",
            "walkthrough/2-objects",
            "walkthrough/3-operator",
            "gate/laptop",
            "gate/apply",
            "operator/delete-webhook",
            "walkthrough/7-stop",
        ],
    );
}

/// The worked example of the conversion round trips guide: `crontabs.stable.example.com`,
/// stored at `v2` and served at `v1` too, converted by the tests' webhook
/// (`support::conversion_webhook`) with three flaws on three of its four objects.
#[test]
fn the_conversion_round_trip_example_runs_as_the_book_shows_it() {
    use crate::support::conversion_webhook::{ConversionWebhook, crontabs_crd};
    use serde_json::json;
    let _turn = shared_turn();
    if !can_start_a_cluster() {
        return;
    }
    let Some(env) = shared() else { return };
    let group = "stable.example.com";
    let webhook = ConversionWebhook::start();
    apply(&env.admin, &crontabs_crd(group, &webhook.url, &webhook.ca));
    wait_for("crontabs at v1 to be served", || {
        env.admin.get(&format!("/apis/{group}/v1/crontabs")).ok()
    });
    let collection = format!("/apis/{group}/v2/namespaces/default/crontabs");
    for (name, flaw, spec) in [
        (
            "nightly",
            "",
            json!({"schedule": "0 2 * * *", "priority": 1}),
        ),
        (
            "reports",
            "drop",
            json!({"schedule": "0 6 * * 1", "priority": 5}),
        ),
        (
            "cleanup",
            "case",
            json!({"schedule": "@hourly", "color": "Green"}),
        ),
        (
            "legacy",
            "refused",
            json!({"schedule": "@daily", "size": "xl"}),
        ),
    ] {
        let mut o = json!({"apiVersion": format!("{group}/v2"), "kind": "CronTab",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec});
        if !flaw.is_empty() {
            o["metadata"]["labels"] = json!({"flaw": flaw});
        }
        env.admin.create(&collection, &o).unwrap();
    }
    run_on(
        env,
        "roundtrip",
        &["roundtrip/text", "roundtrip/json", "roundtrip/rbac"],
    );
    // The RBAC of the page is enough, and its update rule is needed: the run as the
    // ServiceAccount it binds (impersonated by the admin's kubeconfig).
    let mut kubeconfig = kube::config::Kubeconfig::read_from(&env.kubeconfig).unwrap();
    for a in &mut kubeconfig.auth_infos {
        if let Some(info) = a.auth_info.as_mut() {
            info.impersonate = Some("system:serviceaccount:default:roundtrip".into());
        }
    }
    let as_sa = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("roundtrip-as-sa.kubeconfig");
    std::fs::write(&as_sa, serde_json::to_string(&kubeconfig).unwrap()).unwrap();
    let as_sa = as_sa.display().to_string();
    let crd = format!("crontabs.{group}");
    let (code, out, err) = cli(&["roundtrip", &crd, "--kubeconfig", &as_sa], &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(out.contains("2 lossy, 1 invalid, 0 failed"), "{out}");
    let rules = "/apis/rbac.authorization.k8s.io/v1/clusterroles/crd-audit-roundtrip-crontabs";
    let mut role = env.admin.get(rules).unwrap();
    role["rules"][1]["verbs"] = json!(["get", "list"]);
    env.admin.send_put(rules, &role).unwrap();
    let (code, _, err) = wait_for("the narrower role to hold", || {
        let r = cli(&["roundtrip", &crd, "--kubeconfig", &as_sa], &[]);
        (r.0 == Some(2)).then_some(r)
    });
    assert_eq!(code, Some(2));
    assert!(
        err.contains(&format!("it needs update on crontabs.{group}")) && err.contains("forbidden"),
        "{err}"
    );
    for path in [
        rules.to_string(),
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/crd-audit-roundtrip-crontabs"
            .into(),
        "/api/v1/namespaces/default/serviceaccounts/roundtrip".into(),
    ] {
        env.admin.delete(&path).unwrap();
    }
    env.admin
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.{group}"
        ))
        .unwrap();
}
