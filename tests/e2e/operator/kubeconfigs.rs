//! Every kind of kubeconfig (client certificates, exec plugins, two files, a token file),
//! and a start from a laptop.

use super::*;
use serde_json::{Value, json};
use std::time::Duration;

/// A kubeconfig with an exec credential plugin (`tests/testenv/exec-credential.sh`) whose
/// token is the admin's, split over two files: clusters and users in one, contexts in the
/// other (as `KUBECONFIG=a:b` merges them).
fn split_exec_kubeconfig(env: &TestEnv) -> (String, std::path::PathBuf) {
    let ca = std::fs::read(&env.ca).unwrap();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testenv/exec-credential.sh");
    let calls = env.run_dir.join("exec-calls.log");
    let users = env.run_dir.join("users.kubeconfig");
    let contexts = env.run_dir.join("contexts.kubeconfig");
    let users_doc = json!({"apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "e2e", "cluster": {"server": env.server,
            "certificate-authority-data": base64(&ca)}}],
        "users": [{"name": "plugin", "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "bash", "args": [script.display().to_string()],
            "env": [{"name": "E2E_TOKEN", "value": env.admin_token},
                    {"name": "E2E_EXEC_LOG", "value": calls.display().to_string()}],
            "interactiveMode": "Never"}}}]});
    let contexts_doc = json!({"apiVersion": "v1", "kind": "Config",
        "contexts": [{"name": "via-plugin", "context": {"cluster": "e2e", "user": "plugin"}}],
        "current-context": "via-plugin"});
    std::fs::write(&users, users_doc.to_string()).unwrap();
    std::fs::write(&contexts, contexts_doc.to_string()).unwrap();
    (format!("{}:{}", users.display(), contexts.display()), calls)
}

fn base64(b: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in b.chunks(3) {
        let n = chunk.iter().fold(0u32, |a, &x| (a << 8) | x as u32) << (8 * (3 - chunk.len()));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Client certificates, exec credential plugins and `KUBECONFIG` with two files, for
/// `plan --cluster` and the controller; and the controller started as from a laptop: only
/// the report CRD applied, no operator namespace, no flags.
#[test]
fn every_kind_of_kubeconfig_works_and_a_laptop_start_needs_no_namespace() {
    let turn = own_server();
    let Some(env) = start() else { return };
    let s = Scenario::on_own(&env, "kubeconfigs", turn);
    let admin = &env.admin;
    let crd = s.crd();
    apply_file(admin, "manifests/schemaaudit-crd.yaml");
    things(&s, 1);
    create_things(&s);
    let rev2 = env.run_dir.join("things-v2.yaml");
    std::fs::write(&rev2, things_crd(&crd, &s.group, 2).to_string()).unwrap();
    let rev2_s = rev2.display().to_string();
    let admin_kc = env.kubeconfig.display().to_string();
    let plan_breaks_all = |out: &(Option<i32>, String, String), how: &str| {
        assert_eq!(out.0, Some(1), "{how}: {}", out.2);
        let lines: Vec<Value> = out
            .1
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3, "{how}: {}", out.1);
        assert!(
            lines
                .iter()
                .all(|l| l["valid"] == false && l["validBefore"] == true),
            "{how}"
        );
    };
    // 1. A client-certificate user.
    let out = cli(
        &[
            "plan",
            &rev2_s,
            "--cluster",
            "-o",
            "json",
            "--kubeconfig",
            &admin_kc,
            "--context",
            "admin-cert",
        ],
        &[],
    );
    plan_breaks_all(&out, "client certificate");
    // 2 + 3. An exec credential plugin, with KUBECONFIG naming two files.
    let (kubeconfig_env, calls) = split_exec_kubeconfig(&env);
    let out = cli(
        &["plan", &rev2_s, "--cluster", "-o", "json"],
        &[("KUBECONFIG", &kubeconfig_env)],
    );
    plan_breaks_all(&out, "exec plugin, KUBECONFIG=a:b");
    assert!(
        std::fs::read_to_string(&calls)
            .unwrap_or_default()
            .contains("called")
    );
    // A kubeconfig that cannot work says why, naming the file.
    let out = cli(
        &[
            "plan",
            &rev2_s,
            "--cluster",
            "--kubeconfig",
            "/nonexistent/kubeconfig",
        ],
        &[],
    );
    assert_eq!(out.0, Some(2));
    assert!(out.2.contains("/nonexistent/kubeconfig"), "{}", out.2);

    // 4. The controller from a laptop: current kubeconfig, no namespace, no flags.
    assert!(matches!(admin.get("/api/v1/namespaces/crd-audit"), Err(e) if e.status == 404));
    let c = controller(
        &env.run_dir,
        "laptop-cert",
        &["--kubeconfig", &admin_kc, "--context", "admin-cert"],
        &[],
    );
    let r = wait_for("a report from the client-certificate controller", || {
        clean_report(admin, &crd)
    });
    assert_eq!(r["status"]["versions"][0]["objects"], 3, "{r}");
    let log = c.stop_cleanly();
    assert!(error_lines(&log).is_empty(), "{log}");
    admin
        .delete(&format!("/apis/crd-audit.dev/v1alpha1/schemaaudits/{crd}"))
        .unwrap();
    let c = controller(
        &env.run_dir,
        "laptop-plugin",
        &[],
        &[("KUBECONFIG", &kubeconfig_env)],
    );
    wait_for("a report from the exec-plugin controller", || {
        clean_report(admin, &crd)
    });
    let log = c.stop_cleanly();
    assert!(error_lines(&log).is_empty(), "{log}");
    // A token file is read again when it changes (kube re-reads it after a minute): the
    // controller starts with a wrong token and works once the file holds a right one.
    admin
        .delete(&format!("/apis/crd-audit.dev/v1alpha1/schemaaudits/{crd}"))
        .unwrap();
    let token_file = env.run_dir.join("token");
    std::fs::write(&token_file, "not-a-valid-token").unwrap();
    let token_kc = env.run_dir.join("token-file.kubeconfig");
    std::fs::write(
        &token_kc,
        json!({"apiVersion": "v1", "kind": "Config", "current-context": "t",
            "clusters": [{"name": "t", "cluster": {"server": env.server,
                "certificate-authority-data": base64(&std::fs::read(&env.ca).unwrap())}}],
            "users": [{"name": "t", "user": {"tokenFile": token_file.display().to_string()}}],
            "contexts": [{"name": "t", "context": {"cluster": "t", "user": "t"}}]})
        .to_string(),
    )
    .unwrap();
    let token_kc_s = token_kc.display().to_string();
    let c = controller(
        &env.run_dir,
        "token-file",
        &["--kubeconfig", &token_kc_s],
        &[],
    );
    std::thread::sleep(Duration::from_secs(3));
    assert!(
        matches!(report(admin, &crd), Err(e) if e.status == 404),
        "a report written with a wrong token"
    );
    std::fs::write(&token_file, &env.admin_token).unwrap();
    wait_for_at_most(
        "a report once the token file holds a valid token",
        Duration::from_secs(120),
        &mut || report(admin, &crd).ok(),
    );
    c.stop_cleanly();

    // Leader election asked for where its namespace does not exist: one clear line, exit 2.
    let mut c = controller(
        &env.run_dir,
        "laptop-elect",
        &["--kubeconfig", &admin_kc, "--leader-elect"],
        &[],
    );
    let status = wait_for("the controller to refuse", || c.child.try_wait().unwrap());
    assert_eq!(status.code(), Some(2));
    let log = c.log_text();
    let line = log.lines().find(|l| l.starts_with("error:")).unwrap_or("");
    assert!(
        line.contains("\"crd-audit\"") && line.contains("create"),
        "{log}"
    );
}
