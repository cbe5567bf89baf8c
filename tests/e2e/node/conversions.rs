//! Conversion round trips on the node: the tests' conversion webhook runs in a pod behind a
//! Service (the example `conversion_webhook --serve`, built static and run in the operator's
//! image from a hostPath volume), the CRD's `clientConfig.service` names it. `crd-audit
//! roundtrip` from outside the cluster reaches it through the API server's service proxy, and
//! the operator (`config.auditConversions: true`) from inside, by the Service's DNS name: each
//! names the flaw on exactly its object.

use super::*;
use crate::roundtrip::{crontab, found, roundtrip};
use crate::support::conversion_webhook::crontabs_crd;

const WEBHOOK_NS: &str = "roundtrip-node";
const WEBHOOK: &str = "conversion-webhook";

/// The example `conversion_webhook`, built static as the image's binary is (the flags of
/// scripts/build-static.sh, whose build it shares), copied into a directory of its own: the
/// directory.
fn static_webhook(dir: &Path) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = "x86_64-unknown-linux-gnu";
    let built = Command::new(cargo)
        .args(["build", "--release", "--locked", "--target", target])
        .args(["-p", "crd-audit", "--features", "system-allocator"])
        .args(["--example", "conversion_webhook"])
        .env("RUSTFLAGS", "-C target-feature=+crt-static")
        .status()
        .unwrap();
    assert!(built.success(), "building the example conversion_webhook");
    let target_dir = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
    let bin = Path::new(&target_dir).join(format!("{target}/release/examples/conversion_webhook"));
    let out = dir.join("conversion-webhook");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::copy(&bin, out.join("conversion_webhook")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(
        out.join("conversion_webhook"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    out
}

/// The webhook's pod and Service in WEBHOOK_NS: the CA its certificate is signed with (PEM),
/// once it serves.
fn webhook_pod(env: &TestEnv, image: &(String, String), bin_dir: &Path) -> String {
    let admin = &env.admin;
    apply(
        admin,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": WEBHOOK_NS}}),
    );
    // A pod in a new namespace is refused until its ServiceAccount has its token (1.20's
    // token controller makes it a moment after the namespace).
    wait_for(
        "the namespace's default ServiceAccount and its token",
        || {
            admin
                .get(&format!(
                    "/api/v1/namespaces/{WEBHOOK_NS}/serviceaccounts/default"
                ))
                .ok()
                .filter(|sa| sa["secrets"][0]["name"].is_string())
        },
    );
    apply(
        admin,
        &json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": WEBHOOK, "namespace": WEBHOOK_NS},
            "spec": {"selector": {"app": WEBHOOK},
                "ports": [{"port": 443, "targetPort": 8443, "protocol": "TCP"}]}}),
    );
    apply(
        admin,
        &json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": WEBHOOK, "namespace": WEBHOOK_NS, "labels": {"app": WEBHOOK}},
            "spec": {
                "automountServiceAccountToken": false,
                "containers": [{"name": "webhook",
                    "image": format!("{}:{}", image.0, image.1), "imagePullPolicy": "Never",
                    "command": ["/webhook/conversion_webhook", "--serve", "0.0.0.0:8443",
                        format!("{WEBHOOK}.{WEBHOOK_NS}.svc")],
                    "ports": [{"containerPort": 8443}],
                    "readinessProbe": {"tcpSocket": {"port": 8443}, "periodSeconds": 1},
                    "volumeMounts": [{"name": "bin", "mountPath": "/webhook", "readOnly": true}]}],
                "volumes": [{"name": "bin",
                    "hostPath": {"path": bin_dir.display().to_string(), "type": "Directory"}}]}}),
    );
    let pod = format!("/api/v1/namespaces/{WEBHOOK_NS}/pods/{WEBHOOK}");
    wait_for_at_most(
        "the webhook's pod ready",
        Duration::from_secs(120),
        &mut || admin.get(&pod).ok().filter(ready),
    );
    wait_for("the webhook's Service to have its endpoint", || {
        admin
            .get(&format!(
                "/api/v1/namespaces/{WEBHOOK_NS}/endpoints/{WEBHOOK}"
            ))
            .ok()
            .filter(|e| e["subsets"][0]["addresses"][0]["ip"].is_string())
    });
    let (code, logs, err) = env.kubectl(&["logs", "-n", WEBHOOK_NS, WEBHOOK]);
    assert_eq!(code, Some(0), "kubectl logs: {err}");
    let (ca, rest) = logs
        .split_once("serving")
        .unwrap_or_else(|| panic!("the webhook's log: {logs}"));
    assert!(rest.trim().is_empty(), "{logs}");
    assert!(ca.contains("BEGIN CERTIFICATE"), "{logs}");
    ca.to_string()
}

#[test]
fn a_webhook_behind_a_service_is_checked_through_the_proxy_and_from_inside() {
    let _turn = node_turn();
    let Some(node) = node() else { return };
    let env = &node.env;
    let admin = &env.admin;
    let group = "roundtrip.node.crd-audit.dev";
    let crd = format!("crontabs.{group}");
    let bin_dir = static_webhook(&env.run_dir);
    let ca = webhook_pod(env, &node.image, &bin_dir);

    // The CRD converted by the Service, as an owner grants reading and updating it.
    let mut definition = crontabs_crd(group, "", &ca);
    let client = &mut definition["spec"]["conversion"]["webhook"]["clientConfig"];
    client.as_object_mut().unwrap().remove("url");
    client["service"] =
        json!({"namespace": WEBHOOK_NS, "name": WEBHOOK, "path": "/convert", "port": 443});
    apply(admin, &definition);
    owner_roles(admin, "crontabs-node", group, "crontabs", &["update"]);
    let ns = "roundtrip-objects";
    apply(
        admin,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
    );
    let collection = format!("/apis/{group}/v2/namespaces/{ns}/crontabs");
    wait_for("crontabs to be served", || admin.get(&collection).ok());
    for o in [
        crontab(
            group,
            ns,
            "sound",
            "",
            json!({"priority": 1, "color": "Blue"}),
        ),
        crontab(group, ns, "drop", "drop", json!({"priority": 2})),
    ] {
        admin.create(&collection, &o).unwrap();
    }
    // The API server reaches the webhook through the Service: a read at v1.
    let at_v1 = wait_for("a read at v1 through the webhook's Service", || {
        admin
            .get(&format!("/apis/{group}/v1/namespaces/{ns}/crontabs/sound"))
            .ok()
    });
    assert_eq!(at_v1["apiVersion"], format!("{group}/v1"));

    // From outside the cluster: the review goes through the API server's service proxy.
    let (code, findings, summary, stderr) = roundtrip(&env.kubeconfig, &crd, &[]);
    assert_eq!(code, Some(1), "{stderr}\n{summary:#}");
    let by_object = found(&findings);
    let want: crate::roundtrip::Found = [(
        "drop".to_string(),
        [(
            "lossy".to_string(),
            "v1".to_string(),
            "v2→v1→v2".to_string(),
            vec!["spec.priority lost".to_string()],
        )]
        .into(),
    )]
    .into();
    assert_eq!(by_object, want, "{stderr}");

    // From inside: the operator's leader, by the Service's DNS name.
    let _release = Release(env);
    let mut args = install_args(&node.image, "charts/crd-audit", "install");
    args.extend(["--set".into(), "config.auditConversions=true".into()]);
    helm_ok(env, &strs(&args));
    let condition = wait_for_at_most(
        "the report's ConversionsLossless False",
        Duration::from_secs(180),
        &mut || {
            let r = report(admin, &crd).ok()?;
            let c = r["status"]["conditions"]
                .as_array()?
                .iter()
                .find(|c| c["type"] == "ConversionsLossless" && c["status"] == "False")?
                .clone();
            Some(c)
        },
    );
    assert_eq!(condition["reason"], "LossyConversion", "{condition:#}");
    let message = condition["message"].as_str().unwrap();
    assert!(
        message.starts_with("of 2 stored object(s), 1 ")
            && message.contains(&format!("lossy {ns}/drop v2→v1→v2: spec.priority lost"))
            && !message.contains("sound"),
        "{message}"
    );

    for path in [
        format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"),
        format!("/api/v1/namespaces/{ns}"),
        format!("/api/v1/namespaces/{WEBHOOK_NS}"),
    ] {
        let _ = admin.delete(&path);
    }
}
