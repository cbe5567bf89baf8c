//! End-to-end: the `crd-audit controller` process against a real kube-apiserver 1.20 and etcd
//! on loopback, started by the project's harness (`tests/testenv/up.sh`; the first run builds
//! kube-apiserver from Debian's source package, later runs reuse the cached binary). The
//! controller runs with a ServiceAccount token bound to the shipped RBAC (`manifests/`).
//!
//! `CRD_AUDIT_E2E=off` skips; `CRD_AUDIT_E2E=required` (what `.ci/run` sets) fails when the
//! API server cannot be started; otherwise the test is skipped with a notice when it cannot.

mod common;

use crd_audit::operator::kube::{ApiError, Kube};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Env {
    run_dir: PathBuf,
    admin: Kube,
    server: String,
    ca: PathBuf,
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg("tests/testenv/down.sh")
            .arg(&self.run_dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

fn start() -> Option<Env> {
    let mode = std::env::var("CRD_AUDIT_E2E").unwrap_or_default();
    if mode == "off" {
        eprintln!("NOTICE: CRD_AUDIT_E2E=off: end-to-end tests skipped");
        return None;
    }
    let out = Command::new("bash")
        .arg("tests/testenv/up.sh")
        .stderr(Stdio::inherit())
        .output();
    let kubeconfig = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        other => {
            assert_ne!(
                mode, "required",
                "the test API server could not be started: {other:?}"
            );
            eprintln!("NOTICE: the test API server could not be started; end-to-end tests skipped");
            return None;
        }
    };
    let run_dir = Path::new(&kubeconfig).parent().unwrap().to_path_buf();
    let env_text = std::fs::read_to_string(run_dir.join("env")).unwrap();
    let var = |k: &str| {
        env_text
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .unwrap_or_default()
            .to_string()
    };
    let admin = Kube::from_kubeconfig(Path::new(&kubeconfig), None).unwrap();
    Some(Env {
        server: var("KUBE_TESTENV_SERVER"),
        ca: PathBuf::from(var("KUBE_TESTENV_CA")),
        run_dir,
        admin,
    })
}

/// The API path of an object, for the kinds these tests use.
fn path_of(obj: &Value) -> String {
    let api = obj["apiVersion"].as_str().unwrap();
    let kind = obj["kind"].as_str().unwrap();
    let name = obj["metadata"]["name"].as_str().unwrap();
    let ns = obj["metadata"]["namespace"].as_str();
    let base = if api.contains('/') {
        format!("/apis/{api}")
    } else {
        format!("/api/{api}")
    };
    let plural = match kind {
        "Namespace" => "namespaces".to_string(),
        "ServiceAccount" => "serviceaccounts".to_string(),
        "ClusterRole" => "clusterroles".to_string(),
        "ClusterRoleBinding" => "clusterrolebindings".to_string(),
        "Role" => "roles".to_string(),
        "RoleBinding" => "rolebindings".to_string(),
        "ConfigMap" => "configmaps".to_string(),
        "CustomResourceDefinition" => "customresourcedefinitions".to_string(),
        other => format!("{}s", other.to_lowercase()),
    };
    match ns {
        Some(ns) => format!("{base}/namespaces/{ns}/{plural}/{name}"),
        None => format!("{base}/{plural}/{name}"),
    }
}

fn apply(kube: &Kube, obj: &Value) {
    kube.apply(&path_of(obj), obj, "e2e")
        .unwrap_or_else(|e| panic!("applying {}: {e}", path_of(obj)));
}

fn apply_file(kube: &Kube, file: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    for doc in crd_audit::load::parse_str(file, &text) {
        let v = doc.unwrap().value;
        if !v.is_null() {
            apply(kube, &v);
        }
    }
}

fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn report(kube: &Kube, crd: &str) -> Result<Value, ApiError> {
    kube.get(&format!("/apis/crd-audit.dev/v1alpha1/schemaaudits/{crd}"))
}

fn condition(report: &Value, ty: &str) -> Option<(String, String)> {
    report["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == ty)
        .map(|c| {
            (
                c["status"].as_str().unwrap_or("").to_string(),
                c["message"].as_str().unwrap_or("").to_string(),
            )
        })
}

fn events(kube: &Kube, reason: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for path in [
        "/apis/events.k8s.io/v1/namespaces/default/events",
        "/api/v1/namespaces/default/events",
    ] {
        let _ = kube.list(path, 500, &mut |e| {
            if e["reason"] == reason {
                out.push(e);
            }
        });
    }
    out
}

fn things_crd(revision: u8) -> Value {
    // 1: baseline; 2: tightened (required tier, narrower enum); 3: loosened again.
    let mut spec = json!({"type": "object", "properties": {
        "size": {"type": "string", "enum": ["small", "medium", "large"]},
        "tier": {"type": "string"}}});
    match revision {
        2 => {
            spec["required"] = json!(["tier"]);
            spec["properties"]["size"]["enum"] = json!(["small"]);
        }
        3 => {}
        _ => {
            spec["properties"].as_object_mut().unwrap().remove("tier");
        }
    }
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.e2e.crd-audit.dev"},
        "spec": {"group": "e2e.crd-audit.dev", "scope": "Namespaced",
            "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]}})
}

fn controller(env: &Env, identity: &str) -> (Child, PathBuf) {
    // A token of the shipped ServiceAccount, so that the shipped RBAC is what is tested.
    let token = env
        .admin
        .create(
            "/api/v1/namespaces/crd-audit/serviceaccounts/crd-audit/token",
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                "spec": {"expirationSeconds": 3600}}),
        )
        .expect("a ServiceAccount token");
    let token = token["status"]["token"].as_str().unwrap();
    let ca = std::fs::read(&env.ca).unwrap();
    let kc = env.run_dir.join("crd-audit.kubeconfig");
    let b64 = base64(&ca);
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: sa\nclusters:\n- name: t\n  cluster:\n    server: {}\n    certificate-authority-data: {b64}\ncontexts:\n- name: sa\n  context: {{cluster: t, user: sa}}\nusers:\n- name: sa\n  user:\n    token: {token}\n",
            env.server
        ),
    )
    .unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = env.run_dir.join("crd-audit.yaml");
    std::fs::write(
        &config,
        "annotateObjects: true\nexcludeGroups: ['excluded.*']\n",
    )
    .unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_crd-audit"))
        .args(["controller", "--kubeconfig"])
        .arg(&kc)
        .arg("--config")
        .arg(&config)
        .args(["--metrics-addr", &format!("127.0.0.1:{port}")])
        .env("POD_NAME", identity)
        .stderr(std::fs::File::create(env.run_dir.join(format!("{identity}.log"))).unwrap())
        .spawn()
        .unwrap();
    (child, env.run_dir.join(format!("{identity}.log")))
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

#[test]
fn controller_audits_a_real_api_server() {
    let Some(env) = start() else { return };
    let admin = &env.admin;
    for f in [
        "manifests/namespace.yaml",
        "manifests/schemaaudit-crd.yaml",
        "manifests/rbac.yaml",
        "manifests/rbac-annotate.yaml",
    ] {
        apply_file(admin, f);
    }
    // 1. Existing CRDs and objects at start-up.
    apply(admin, &things_crd(1));
    wait_for("the things CRD to be served", || {
        admin
            .get("/apis/e2e.crd-audit.dev/v1/namespaces/default/things")
            .ok()
    });
    for (name, size) in [("a", "small"), ("b", "medium"), ("c", "small")] {
        apply(
            admin,
            &json!({"apiVersion": "e2e.crd-audit.dev/v1", "kind": "Thing",
                "metadata": {"name": name, "namespace": "default"}, "spec": {"size": size}}),
        );
    }
    let (child, _a_log) = controller(&env, "replica-a");
    // Stops the controller even when an assertion fails.
    struct Guard(Child);
    impl Drop for Guard {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Guard(child);
    let crd = "things.e2e.crd-audit.dev";
    let r = wait_for("a clean report", || {
        report(admin, crd)
            .ok()
            .filter(|r| condition(r, "InstancesValid").is_some_and(|c| c.0 == "True"))
    });
    assert_eq!(r["status"]["versions"][0]["objects"], 3, "{r}");
    assert_eq!(condition(&r, "NonStructuralSchema").unwrap().0, "False");

    // `plan --cluster` with the tightening revision agrees with `validate --stored` on the
    // same objects.
    let rev2 = env.run_dir.join("things-v2.yaml");
    std::fs::write(&rev2, things_crd(2).to_string()).unwrap();
    let admin_kc = env.run_dir.join("kubeconfig");
    let plan = Command::new(env!("CARGO_BIN_EXE_crd-audit"))
        .arg("plan")
        .arg(&rev2)
        .args(["--cluster", "-o", "json", "--kubeconfig"])
        .arg(&admin_kc)
        .output()
        .unwrap();
    assert_eq!(
        plan.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&plan.stderr)
    );
    let plan_lines: Vec<Value> = String::from_utf8_lossy(&plan.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(plan_lines.len(), 3);
    assert!(
        plan_lines
            .iter()
            .all(|l| l["validBefore"] == true && l["valid"] == false)
    );
    let mut listed = Vec::new();
    admin
        .list("/apis/e2e.crd-audit.dev/v1/things", 500, &mut |mut o| {
            o["apiVersion"] = "e2e.crd-audit.dev/v1".into();
            o["kind"] = "Thing".into();
            listed.push(o.to_string());
        })
        .unwrap();
    let objects = env.run_dir.join("things.json");
    std::fs::write(&objects, listed.join("\n")).unwrap();
    let validate = Command::new(env!("CARGO_BIN_EXE_crd-audit"))
        .args(["validate", "--stored", "-o", "json", "--crd"])
        .arg(&rev2)
        .arg(&objects)
        .output()
        .unwrap();
    let validate_lines: Vec<Value> = String::from_utf8_lossy(&validate.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (p, v) in plan_lines.iter().zip(&validate_lines) {
        assert_eq!((&p["name"], &p["errors"]), (&v["name"], &v["errors"]));
    }

    // 2. Tightening: every object lacks the new required field, one has a narrowed value.
    apply(admin, &things_crd(2));
    let r = wait_for("the tightened report", || {
        report(admin, crd).ok().filter(|r| {
            condition(r, "InstancesValid").is_some_and(|c| c.0 == "False")
                && r["status"]["observedGeneration"] == 2
        })
    });
    assert_eq!(condition(&r, "SchemaTightened").unwrap().0, "True", "{r}");
    let listed: Vec<&str> = r["status"]["invalidObjects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, vec!["a", "b", "c"]);
    let b_errors = r["status"]["invalidObjects"][1]["errors"].to_string();
    assert!(b_errors.contains("spec.tier: Required value"), "{b_errors}");
    assert!(
        b_errors.contains("spec.size: Unsupported value"),
        "{b_errors}"
    );
    // Values are redacted in reports by default.
    assert!(!b_errors.contains("\"medium\""), "{b_errors}");
    // 1.20 has no validation ratcheting: it refuses the annotation of every invalid object,
    // and the report says so.
    let r = wait_for("unwritable objects in the report", || {
        report(admin, crd)
            .ok()
            .filter(|r| r["status"]["versions"][0]["unwritableObjects"] == 3)
    });
    assert_eq!(r["status"]["versions"][0]["invalidObjects"], 3);
    let tightened = wait_for("a SchemaTightened event", || {
        let e = events(admin, "SchemaTightened");
        (!e.is_empty()).then_some(e)
    });
    let note = tightened[0]["note"]
        .as_str()
        .or(tightened[0]["message"].as_str())
        .unwrap_or("");
    assert!(note.starts_with("3 object(s) newly invalid"), "{note}");

    // 3. Loosening clears everything.
    apply(admin, &things_crd(3));
    let r = wait_for("the loosened report", || {
        report(admin, crd).ok().filter(|r| {
            condition(r, "InstancesValid").is_some_and(|c| c.0 == "True")
                && r["status"]["observedGeneration"] == 3
        })
    });
    assert_eq!(condition(&r, "SchemaTightened").unwrap().0, "False", "{r}");
    assert_eq!(r["status"]["versions"][0]["unwritableObjects"], 0, "{r}");
    wait_for("a SchemaAuditClean event", || {
        (!events(admin, "SchemaAuditClean").is_empty()).then_some(())
    });

    // High availability: a second replica waits; when the leader dies it takes over within
    // the lease duration and carries on without lost or duplicated findings.
    let lease = "/apis/coordination.k8s.io/v1/namespaces/crd-audit/leases/crd-audit";
    let holder = |k: &Kube| {
        k.get(lease)
            .ok()
            .and_then(|l| l["spec"]["holderIdentity"].as_str().map(str::to_string))
    };
    assert_eq!(holder(admin).as_deref(), Some("replica-a"));
    let (b, b_log) = controller(&env, "replica-b");
    let mut b = Guard(b);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        holder(admin).as_deref(),
        Some("replica-a"),
        "the standby must not take over"
    );
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    let took_over = Instant::now();
    wait_for("the standby to take over", || {
        (holder(admin).as_deref() == Some("replica-b")).then_some(())
    });
    assert!(
        took_over.elapsed() < Duration::from_secs(25),
        "failover took {:?}",
        took_over.elapsed()
    );
    apply(admin, &things_crd(2));
    let r = wait_for("the new leader's report", || {
        report(admin, crd).ok().filter(|r| {
            r["status"]["observedGeneration"] == 4
                && condition(r, "InstancesValid").is_some_and(|c| c.0 == "False")
        })
    });
    let listed: Vec<&str> = r["status"]["invalidObjects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, vec!["a", "b", "c"]);
    // A restarted operator knows the revision it audited last: change the CRD while no
    // replica runs, then start one.
    b.0.kill().unwrap();
    b.0.wait().unwrap();
    drop(b_log);
    apply(admin, &things_crd(3));
    let (c, c_log) = controller(&env, "replica-c");
    let mut c = Guard(c);
    let r = wait_for("the restarted operator's report", || {
        report(admin, crd).ok().filter(|r| {
            r["status"]["observedGeneration"] == 5
                && condition(r, "InstancesValid").is_some_and(|c| c.0 == "True")
        })
    });
    assert_eq!(r["status"]["lastSchemaChange"]["fromGeneration"], 4, "{r}");
    assert_eq!(condition(&r, "SchemaTightened").unwrap().0, "False", "{r}");
    let (log, child) = (c_log, &mut c);
    // 4. A legacy v1beta1 CRD with a non-structural schema (1.20 still accepts it): our
    // condition matches the one the server sets on the CRD.
    let legacy = json!({"apiVersion": "apiextensions.k8s.io/v1beta1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.e2e.crd-audit.dev"},
        "spec": {"group": "e2e.crd-audit.dev", "scope": "Namespaced", "version": "v1",
            "names": {"plural": "gadgets", "kind": "Gadget"},
            "validation": {"openAPIV3Schema": {"properties": {"spec": {"properties": {
                "port": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}}}}}}});
    apply(admin, &legacy);
    let server_condition = wait_for("the server's NonStructuralSchema condition", || {
        let c = admin
            .get(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.e2e.crd-audit.dev",
            )
            .ok()?;
        c["status"]["conditions"]
            .as_array()?
            .iter()
            .find(|x| x["type"] == "NonStructuralSchema")
            .map(|x| x["message"].as_str().unwrap_or("").to_string())
    });
    let r = wait_for("the legacy report", || {
        report(admin, "gadgets.e2e.crd-audit.dev")
            .ok()
            .filter(|r| condition(r, "NonStructuralSchema").is_some_and(|c| c.0 == "True"))
    });
    assert_eq!(
        condition(&r, "NonStructuralSchema").unwrap().1,
        server_condition
    );

    // 5. Deleting a CRD removes its report.
    admin
        .delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.e2e.crd-audit.dev")
        .unwrap();
    wait_for("the report to go", || {
        matches!(report(admin, crd), Err(e) if e.status == 404).then_some(())
    });

    // RBAC revoked mid-run: the controller keeps running (backing off), and picks up again
    // when access is restored.
    let binding = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/crd-audit";
    let saved = admin.get(binding).unwrap();
    admin.delete(binding).unwrap();
    apply(
        admin,
        &json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "later.e2e.crd-audit.dev"},
        "spec": {"group": "e2e.crd-audit.dev", "scope": "Cluster", "names": {"plural": "later", "kind": "Later"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object"}}}]}}),
    );
    std::thread::sleep(Duration::from_secs(4));
    assert!(
        child.0.try_wait().unwrap().is_none(),
        "the controller died without RBAC"
    );
    let mut restored = saved.clone();
    if let Some(m) = restored["metadata"].as_object_mut() {
        m.retain(|k, _| k == "name");
    }
    apply(admin, &restored);
    wait_for("the report of a CRD created while forbidden", || {
        report(admin, "later.e2e.crd-audit.dev").ok()
    });

    // With a ClusterRole narrowed to the CRD groups present (what `manifests
    // --rbac-for-cluster` prints), a CRD of another group cannot be read: its report says
    // Forbidden instead of the controller failing.
    let narrowed = Command::new(env!("CARGO_BIN_EXE_crd-audit"))
        .args(["manifests", "--rbac-for-cluster", "--kubeconfig"])
        .arg(env.run_dir.join("kubeconfig"))
        .output()
        .unwrap();
    let mut narrowed: Value = serde_json::from_slice(&narrowed.stdout).unwrap();
    let mut role = admin
        .get("/apis/rbac.authorization.k8s.io/v1/clusterroles/crd-audit")
        .unwrap();
    let mut rules: Vec<Value> = role["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["apiGroups"] != json!(["*"]))
        .cloned()
        .collect();
    rules.push(narrowed["rules"][0].take());
    role["rules"] = Value::Array(rules);
    if let Some(m) = role["metadata"].as_object_mut() {
        m.retain(|k, _| k == "name");
    }
    apply(admin, &role);
    apply(
        admin,
        &json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "secrets.forbidden.crd-audit.test"},
        "spec": {"group": "forbidden.crd-audit.test", "scope": "Cluster",
            "names": {"plural": "secrets", "kind": "Secret"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object"}}}]}}),
    );
    let r = wait_for("a Forbidden report", || {
        report(admin, "secrets.forbidden.crd-audit.test")
            .ok()
            .filter(|r| {
                r["status"]["conditions"].as_array().is_some_and(|c| {
                    c.iter()
                        .any(|c| c["type"] == "InstancesValid" && c["reason"] == "Forbidden")
                })
            })
    });
    assert_eq!(condition(&r, "InstancesValid").unwrap().0, "Unknown");
    assert!(child.0.try_wait().unwrap().is_none());

    // Graceful shutdown on SIGTERM.
    // SAFETY: signals our own child process.
    unsafe {
        libc::kill(child.0.id() as libc::pid_t, libc::SIGTERM);
    }
    let status = child.0.wait().unwrap();
    let log_text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(status.success(), "controller exit {status:?}\n{log_text}");
    // Errors are logged only while RBAC was revoked.
    for line in log_text
        .lines()
        .filter(|l| l.contains("\"level\":\"error\""))
    {
        assert!(line.contains("403") || line.contains("forbidden"), "{line}");
    }
}
