//! `crd-audit roundtrip` against real API servers and the tests' own conversion webhook
//! (`support::conversion_webhook`: a flaw per object, chosen by its `flaw` label), reached by
//! URL on loopback.
//!
//! - On kube-apiserver 1.20: each flaw is named on exactly its objects and nothing on the
//!   sound ones; the tool's own conversion S→O agrees with the API server's GET at O, value
//!   for value and error for error; nothing is written (every resourceVersion and etcd's mod
//!   revisions unchanged).
//! - Faults on 1.20: the webhook down mid-run then back (the objects of the outage fail, the
//!   others pass), objects deleted mid-run (not counted), the CRD changed mid-run (exit 2).
//! - On the apiextensions-apiserver 1.36, where ratcheting lets the unchanged write of an
//!   invalid object through: the dry run of such an object is a round trip to compare, not a
//!   refusal.

use crate::support::conversion_webhook::{ConversionWebhook, crontabs_crd};
use crate::support::*;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Runs `crd-audit roundtrip CRD -o json --kubeconfig K ...`: exit code, the finding lines,
/// the summary line, stderr.
pub fn roundtrip(
    kubeconfig: &Path,
    crd: &str,
    args: &[&str],
) -> (Option<i32>, Vec<Value>, Value, String) {
    let child = spawn(kubeconfig, crd, args);
    finished(child)
}

fn spawn(kubeconfig: &Path, crd: &str, args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_crd-audit"))
        .args(["roundtrip", crd, "-o", "json", "--kubeconfig"])
        .arg(kubeconfig)
        .args(args)
        .env_remove("KUBECONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run crd-audit roundtrip")
}

fn finished(child: std::process::Child) -> (Option<i32>, Vec<Value>, Value, String) {
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut findings = Vec::new();
    let mut summary = Value::Null;
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}\n{stderr}"));
        match v["record"].as_str() {
            Some("object") => findings.push(v),
            Some("summary") => summary = v,
            other => panic!("a line of record {other:?}: {l}"),
        }
    }
    (out.status.code(), findings, summary, stderr)
}

/// A crontab at `v2` (the storage version) with a flaw (`""`: sound).
pub fn crontab(group: &str, ns: &str, name: &str, flaw: &str, spec: Value) -> Value {
    let mut o = json!({"apiVersion": format!("{group}/v2"), "kind": "CronTab",
        "metadata": {"name": name, "namespace": ns}, "spec": spec});
    if !flaw.is_empty() {
        o["metadata"]["labels"] = json!({"flaw": flaw});
    }
    o
}

/// Findings by object name: (finding, version, roundTrip, fields as `path change`).
pub type Found = BTreeMap<String, BTreeSet<(String, String, String, Vec<String>)>>;

pub fn found(findings: &[Value]) -> Found {
    let mut by = Found::new();
    for f in findings {
        let fields = f["fields"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                format!(
                    "{} {}",
                    c["path"].as_str().unwrap(),
                    c["change"].as_str().unwrap()
                )
            })
            .collect();
        let rt = f["roundTrip"]
            .as_array()
            .map(|v| {
                v.iter()
                    .map(|x| x.as_str().unwrap())
                    .collect::<Vec<_>>()
                    .join("→")
            })
            .unwrap_or_default();
        by.entry(f["name"].as_str().unwrap().to_string())
            .or_default()
            .insert((
                f["finding"].as_str().unwrap().to_string(),
                f["version"].as_str().unwrap().to_string(),
                rt,
                fields,
            ));
    }
    by
}

/// An expected finding: (finding, version, roundTrip, fields).
type Expected<'a> = (&'a str, &'a str, &'a str, &'a [&'a str]);

fn expect(entries: &[(&str, &[Expected])]) -> Found {
    entries
        .iter()
        .map(|(name, fs)| {
            let set = fs
                .iter()
                .map(|(k, v, rt, fields)| {
                    (
                        k.to_string(),
                        v.to_string(),
                        rt.to_string(),
                        fields.iter().map(|s| s.to_string()).collect(),
                    )
                })
                .collect();
            (name.to_string(), set)
        })
        .collect()
}

/// The resourceVersion of every object of a collection, by `namespace/name`.
fn resource_versions(rest: &Rest, path: &str) -> BTreeMap<String, String> {
    rest.list(path)
        .unwrap()
        .into_iter()
        .map(|o| {
            let m = &o["metadata"];
            (
                format!(
                    "{}/{}",
                    m["namespace"].as_str().unwrap_or(""),
                    m["name"].as_str().unwrap()
                ),
                m["resourceVersion"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Applies the CRD and waits until both versions are served.
fn install(rest: &Rest, group: &str, webhook: &ConversionWebhook) {
    apply(rest, &crontabs_crd(group, &webhook.url, &webhook.ca));
    for v in ["v1", "v2"] {
        wait_for(&format!("crontabs at {v} to be served"), || {
            rest.get(&format!("/apis/{group}/{v}/crontabs")).ok()
        });
    }
}

/// The flaws of `support::conversion_webhook`, each on an object of that name, beside three
/// sound objects.
fn flawed_objects(group: &str, ns: &str) -> Vec<Value> {
    let ports = json!([{"name": "a", "port": 1}, {"name": "b", "port": 2}]);
    vec![
        crontab(
            group,
            ns,
            "sound-full",
            "",
            json!({"schedule": "*/5 * * * *", "priority": 3,
            "color": "Blue", "size": "large", "tags": ["x"], "ports": ports}),
        ),
        crontab(group, ns, "sound-bare", "", json!({"image": "busybox"})),
        crontab(
            group,
            ns,
            "sound-zero",
            "",
            json!({"priority": 0, "tags": []}),
        ),
        crontab(
            group,
            ns,
            "drop",
            "drop",
            json!({"schedule": "@daily", "priority": 5}),
        ),
        crontab(group, ns, "case", "case", json!({"color": "Red"})),
        crontab(group, ns, "refused", "refused", json!({"size": "xl"})),
        crontab(group, ns, "error", "error", json!({"image": "x"})),
        crontab(group, ns, "uid", "uid", json!({"image": "x"})),
        crontab(group, ns, "rename", "rename", json!({"image": "x"})),
        crontab(group, ns, "slow", "slow", json!({"image": "x"})),
        crontab(group, ns, "nil", "nil", json!({"image": "x"})),
        crontab(group, ns, "reorder", "reorder", json!({"ports": ports})),
        crontab(group, ns, "label", "label", json!({"image": "x"})),
        crontab(group, ns, "garbage", "garbage", json!({"image": "x"})),
        crontab(group, ns, "nometa", "nometa", json!({"image": "x"})),
    ]
}

/// An object as read, or why it could not be.
type Read = Result<Value, String>;

/// The API server's GET at `version` and the tool's own conversion of the stored object to
/// it, object by object: `(name, server, tool)`, each the object or the error's message.
fn reads_compared(
    env_kubeconfig: &Path,
    rest: &Rest,
    crd: &str,
    group: &str,
    ns: &str,
    stored: &[Value],
    version: &str,
) -> Vec<(String, Read, Read)> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let tool = || -> Vec<Result<Value, String>> {
        runtime.block_on(async {
            let kubeconfig = kube::config::Kubeconfig::read_from(env_kubeconfig).unwrap();
            let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
                .await
                .unwrap();
            let client = kube::Client::try_from(config).unwrap();
            let target =
                crd_audit::roundtrip::target(&client, crd, crd_audit_engine::Release::NEWEST)
                    .await
                    .unwrap();
            let checker = crd_audit::roundtrip::Checker::new(
                client,
                std::sync::Arc::new(target),
                false,
                crd_audit::cluster::write_budget::Writes::paced(
                    0.0,
                    crd_audit::cluster::write_budget::Priority::ConversionCheck,
                ),
            )
            .unwrap();
            futures::future::join_all(stored.iter().map(|o| checker.read_at(o, version))).await
        })
    };
    // Both at once: the slow object's reads each wait out the 30 s timeout.
    let (server, tool) = std::thread::scope(|s| {
        let tool = s.spawn(tool);
        let server: Vec<Result<Value, String>> = {
            let handles: Vec<_> = stored
                .iter()
                .map(|o| {
                    let name = o["metadata"]["name"].as_str().unwrap().to_string();
                    s.spawn(move || {
                        rest.get(&format!(
                            "/apis/{group}/{version}/namespaces/{ns}/crontabs/{name}"
                        ))
                        .map_err(|e| {
                            assert_eq!(e.status, 500, "{e}");
                            e.message
                        })
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        };
        (server, tool.join().unwrap())
    });
    stored
        .iter()
        .zip(server.into_iter().zip(tool))
        .map(|(o, (s, t))| (o["metadata"]["name"].as_str().unwrap().to_string(), s, t))
        .collect()
}

#[test]
fn every_flaw_is_named_on_exactly_its_objects_and_nothing_is_written() {
    let _turn = shared_turn();
    let Some(env) = shared() else { return };
    let admin = &env.admin;
    let etcd = env.env_var("KUBE_TESTENV_ETCD");
    let (group, ns) = ("roundtrip.e2e.crd-audit.dev", "roundtrip");
    let crd = format!("crontabs.{group}");
    let webhook = ConversionWebhook::start();
    apply(
        admin,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
    );
    install(admin, group, &webhook);
    let collection = format!("/apis/{group}/v2/namespaces/{ns}/crontabs");
    for o in flawed_objects(group, ns) {
        admin.create(&collection, &o).unwrap();
    }
    let prefix = format!("/registry/{group}/crontabs/");
    let etcd_before = crate::migrate::stored(&etcd, &prefix);
    let versions_before = resource_versions(admin, &collection);
    assert_eq!(etcd_before.len(), 15);

    let (code, findings, summary, stderr) = roundtrip(&env.kubeconfig, &crd, &["--qps", "0"]);
    assert_eq!(code, Some(1), "{stderr}");
    let s21 = "v2→v1→v2";
    let s12 = "v1→v2→v1";
    assert_eq!(
        found(&findings),
        expect(&[
            ("drop", &[("lossy", "v1", s21, &["spec.priority lost"])]),
            (
                "case",
                &[
                    ("lossy", "v1", s21, &["spec.color changed"]),
                    ("lossy", "v1", s12, &["spec.color changed"]),
                ]
            ),
            ("refused", &[("invalid", "v1", "", &[])]),
            ("error", &[("failed", "v1", "", &[])]),
            ("uid", &[("failed", "v1", "", &[])]),
            ("rename", &[("failed", "v1", "", &[])]),
            ("slow", &[("failed", "v1", "", &[])]),
            (
                "nil",
                &[
                    ("lossy", "v1", s21, &["spec.tags added"]),
                    ("lossy", "v1", s12, &["spec.tags added"]),
                ]
            ),
            (
                "reorder",
                &[
                    ("lossy", "v1", s21, &["spec.ports changed"]),
                    ("lossy", "v1", s12, &["spec.ports changed"]),
                ]
            ),
            (
                "label",
                &[("lossy", "v1", s21, &["metadata.labels[converted] added"])]
            ),
            ("garbage", &[("failed", "v2", "", &[])]),
            ("nometa", &[("failed", "v1", "", &[])]),
        ]),
        "{findings:#?}\n{stderr}"
    );
    assert_eq!(
        summary,
        json!({"record": "summary", "crd": crd, "storageVersion": "v2", "versions": ["v1"],
            "objects": 15, "lossy": 5, "invalid": 1, "failed": 6})
    );
    // The messages: the server's words, or the engine's.
    let message = |name: &str| -> String {
        findings
            .iter()
            .find(|f| f["name"] == name)
            .map(|f| f["message"].as_str().unwrap().to_string())
            .unwrap()
    };
    let p2 = format!("conversion webhook for {group}/v2, Kind=CronTab");
    assert_eq!(message("error"), format!("{p2} failed: boom"));
    assert_eq!(
        message("refused"),
        r#"spec.size: Unsupported value: "xl": supported values: "small", "large""#
    );
    assert!(
        message("slow").starts_with(&format!("{p2} failed: ")),
        "{}",
        message("slow")
    );
    assert!(
        message("uid").starts_with(&format!("{p2} returned invalid")),
        "{}",
        message("uid")
    );
    let invalid = findings.iter().find(|f| f["name"] == "refused").unwrap();
    assert_eq!(
        invalid["update"],
        json!({"allowed": false}),
        "1.20 never ratchets"
    );
    let garbage = message("garbage");
    assert!(
        garbage.starts_with(&format!(
            "conversion webhook for {group}/v1, Kind=CronTab failed: "
        )),
        "{garbage}"
    );

    // Nothing written: not an object's resourceVersion, not a key in etcd.
    assert_eq!(resource_versions(admin, &collection), versions_before);
    assert_eq!(crate::migrate::stored(&etcd, &prefix), etcd_before);
    let calls = webhook.calls.lock().unwrap().clone();
    assert!(
        calls.get(&format!("{group}/v1")).copied().unwrap_or(0) >= 15
            && calls.get(&format!("{group}/v2")).copied().unwrap_or(0) >= 10,
        "{calls:?}"
    );

    // What the tool computes for S→O is what the API server serves at O: the same object,
    // or the same error.
    let stored = admin.list(&collection).unwrap();
    for (name, server, tool) in
        reads_compared(&env.kubeconfig, admin, &crd, group, ns, &stored, "v1")
    {
        match (&server, &tool) {
            (Ok(s), Ok(t)) => assert_eq!(s, t, "{name}: the server's read at v1, then the tool's"),
            // The timeout's words are Go's HTTP client's.
            (Err(s), Err(t)) if name == "slow" => {
                assert!(
                    s.starts_with(&format!("{p2} failed: "))
                        && t.starts_with(&format!("{p2} failed: ")),
                    "{s}\n{t}"
                )
            }
            (Err(s), Err(t)) => assert_eq!(s, t, "{name}: the server's error, then the tool's"),
            _ => panic!("{name}: the server's read {server:?}, the tool's {tool:?}"),
        }
    }
    // `migrate` of a CRD whose objects may still be stored at v1 points here first.
    admin
        .send_patch_merge(
            &format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}/status"),
            &json!({"status": {"storedVersions": ["v1", "v2"]}}),
        )
        .unwrap();
    let kubeconfig = env.kubeconfig.display().to_string();
    let (_, _, err) = cli(
        &["migrate", &crd, "--dry-run", "--kubeconfig", &kubeconfig],
        &[],
    );
    assert!(
        err.contains(&format!("note: {crd} is converted by a webhook"))
            && err.contains(&format!("`crd-audit roundtrip {crd}`")),
        "{err}"
    );
    admin
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"
        ))
        .unwrap();
}

/// Waits until the webhook has answered `at_least` reviews in all.
fn wait_for_calls(webhook: &ConversionWebhook, at_least: usize) {
    wait_for_at_most(
        "the webhook to be called",
        Duration::from_secs(120),
        &mut || (webhook.answered() >= at_least).then_some(()),
    );
}

#[test]
fn faults_mid_run_webhook_down_objects_deleted_crd_changed() {
    let _turn = shared_turn();
    let Some(env) = shared() else { return };
    let admin = &env.admin;
    let (group, ns) = ("roundtrip-faults.e2e.crd-audit.dev", "roundtrip-faults");
    let crd = format!("crontabs.{group}");
    let webhook = ConversionWebhook::start();
    apply(
        admin,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
    );
    install(admin, group, &webhook);
    let collection = format!("/apis/{group}/v2/namespaces/{ns}/crontabs");
    const N: usize = 150;
    for i in 0..N {
        admin
            .create(
                &collection,
                &crontab(
                    group,
                    ns,
                    &format!("c{i:03}"),
                    "",
                    json!({"priority": i, "color": "Blue"}),
                ),
            )
            .unwrap();
    }

    // The webhook down for a while, mid-run: the objects whose turn came then fail, in the
    // server's words, the others are clean; every object is counted.
    let start = webhook.answered();
    let run = spawn(&env.kubeconfig, &crd, &["--qps", "60"]);
    wait_for_calls(&webhook, start + 60);
    webhook
        .down
        .store(true, std::sync::atomic::Ordering::Relaxed);
    // An object that fails costs one request (its GET): at 60 a second, half a second of
    // outage is some 30 objects.
    std::thread::sleep(Duration::from_millis(500));
    webhook
        .down
        .store(false, std::sync::atomic::Ordering::Relaxed);
    let (code, findings, summary, stderr) = finished(run);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        !findings.is_empty() && findings.iter().all(|f| f["finding"] == "failed"),
        "{findings:#?}"
    );
    let failed: BTreeSet<&str> = findings
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    let messages: BTreeSet<(&str, &str)> = findings
        .iter()
        .map(|f| {
            (
                f["version"].as_str().unwrap(),
                f["message"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(
        failed.len() < N / 2,
        "only the outage's objects fail: {failed:?}\n{messages:#?}"
    );
    assert!(
        !failed.contains("c000") && !failed.contains(format!("c{:03}", N - 1).as_str()),
        "the first and the last object pass: {failed:?}"
    );
    for f in &findings {
        let m = f["message"].as_str().unwrap();
        assert!(
            m.contains(&format!("conversion webhook for {group}/")),
            "{m}"
        );
    }
    assert_eq!(summary["objects"], N);
    assert_eq!(summary["failed"], failed.len());

    // Objects deleted mid-run: not counted, nothing found.
    let start = webhook.answered();
    let run = spawn(&env.kubeconfig, &crd, &["--qps", "60"]);
    wait_for_calls(&webhook, start + 10);
    for i in N - 30..N {
        admin.delete(&format!("{collection}/c{i:03}")).unwrap();
    }
    let (code, findings, summary, stderr) = finished(run);
    assert_eq!(code, Some(0), "{findings:#?}\n{stderr}");
    assert_eq!(summary["objects"], N - 30, "{stderr}");

    // The CRD changed mid-run: what was found is told, and the run is an error.
    let start = webhook.answered();
    let run = spawn(&env.kubeconfig, &crd, &["--qps", "60"]);
    wait_for_calls(&webhook, start + 10);
    let mut changed = crontabs_crd(group, &webhook.url, &webhook.ca);
    changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["note"] = json!({"type": "string"});
    apply(admin, &changed);
    let (code, _, summary, stderr) = finished(run);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the CRD {crd} changed during the run (its generation went from"
        )),
        "{stderr}"
    );
    assert!(
        summary["objects"].as_u64().unwrap() <= (N - 30) as u64,
        "{summary}"
    );
    admin
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"
        ))
        .unwrap();
}

#[test]
fn on_a_ratcheting_1_36_server_an_invalid_objects_dry_run_is_a_round_trip() {
    let Some(server) = crate::operator::shared_apiext() else {
        return;
    };
    let admin = Rest::new(&server.kubeconfig, None);
    let (group, ns) = ("roundtrip136.e2e.crd-audit.dev", "default");
    let crd = format!("crontabs.{group}");
    let webhook = ConversionWebhook::start();
    install(&admin, group, &webhook);
    let collection = format!("/apis/{group}/v2/namespaces/{ns}/crontabs");
    let objects = [
        crontab(group, ns, "sound", "", json!({"priority": 1})),
        crontab(group, ns, "refused", "refused", json!({"size": "xl"})),
        crontab(
            group,
            ns,
            "case",
            "refused.case",
            json!({"color": "Red", "size": "xl"}),
        ),
        crontab(group, ns, "drop", "drop", json!({"priority": 2})),
    ];
    for o in &objects {
        admin.create(&collection, o).unwrap();
    }
    let before = resource_versions(&admin, &collection);
    let (code, findings, summary, stderr) = roundtrip(&server.kubeconfig, &crd, &["--qps", "0"]);
    assert_eq!(code, Some(1), "{stderr}");
    // `case` has xl too: invalid at v1, yet its unchanged write at v1 goes through
    // (ratcheting), so the dry run shows its O→S→O loss, which 1.20 refuses to show.
    let s21 = "v2→v1→v2";
    let s12 = "v1→v2→v1";
    assert_eq!(
        found(&findings),
        expect(&[
            ("refused", &[("invalid", "v1", "", &[])]),
            (
                "case",
                &[
                    ("invalid", "v1", "", &[]),
                    ("lossy", "v1", s21, &["spec.color changed"]),
                    ("lossy", "v1", s12, &["spec.color changed"]),
                ]
            ),
            ("drop", &[("lossy", "v1", s21, &["spec.priority lost"])]),
        ]),
        "{findings:#?}"
    );
    for f in findings.iter().filter(|f| f["finding"] == "invalid") {
        assert_eq!(f["update"], json!({"allowed": true}), "{f}");
    }
    assert_eq!(summary["objects"], 4);
    assert_eq!(resource_versions(&admin, &collection), before);
    let stored = admin.list(&collection).unwrap();
    for (name, s, t) in reads_compared(&server.kubeconfig, &admin, &crd, group, ns, &stored, "v1") {
        assert_eq!(s, t, "{name}: the server's read at v1, then the tool's");
    }
    admin
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"
        ))
        .unwrap();
}
