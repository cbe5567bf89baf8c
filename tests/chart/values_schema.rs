//! values.schema.json: closed at every level and covering values.yaml; `config` is the
//! operator's keys; a misspelled key fails `helm lint`, `helm template` and `helm install`.

use super::*;
use serde_json::Value;
use std::process::Command;

/// A minimal API server for `helm install` to talk to: its version, empty discovery, no
/// releases. Enough for Helm to check the values before it writes anything.
fn fake_api_server() -> (String, std::thread::JoinHandle<()>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        listener.set_nonblocking(false).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
            if path == "/stop" {
                return;
            }
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).is_err() || header.trim().is_empty() {
                    break;
                }
            }
            let path = path.split('?').next().unwrap_or("").to_string();
            let (code, body) = match path.as_str() {
                "/version" => (200, r#"{"major":"1","minor":"30","gitVersion":"v1.30.0"}"#.to_string()),
                "/api" => (200, r#"{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[]}"#.to_string()),
                "/apis" => (200, r#"{"kind":"APIGroupList","apiVersion":"v1","groups":[]}"#.to_string()),
                p if p.ends_with("/secrets") => (200, r#"{"kind":"SecretList","apiVersion":"v1","metadata":{},"items":[]}"#.to_string()),
                _ => (404, r#"{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"not here"}"#.to_string()),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            if std::time::Instant::now() > deadline {
                return;
            }
        }
    });
    (address, handle)
}

/// A misspelled key, at the top or nested, fails `helm lint`, `helm template` and
/// `helm install` with its name (values.schema.json is closed at every level).
#[test]
fn a_misspelled_key_fails_lint_template_and_install_naming_it() {
    let Some(helm) = helm() else { return };
    let mistakes = [
        (
            "replicaCount=2",
            "at '': additional properties 'replicaCount' not allowed",
        ),
        (
            "metrics.serviceMonitor.intervall=1m",
            "at '/metrics/serviceMonitor': additional properties 'intervall' not allowed",
        ),
        (
            "config.fullResyncIntervall=2h",
            "at '/config': additional properties 'fullResyncIntervall' not allowed",
        ),
    ];
    for (set, says) in mistakes {
        // helm lint prints its findings on standard output, and fails.
        let out = Command::new(helm)
            .current_dir(root())
            .args(["lint", "--strict", CHART, "--set", set])
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.status.success(), "helm lint {set} passed: {said}");
        assert!(said.contains(says), "helm lint {set}: {said}");
        let e = template(helm, &["--set", set]).expect_err(set);
        assert!(e.contains(says), "helm template {set}: {e}");
    }
    // helm install checks the values before it writes anything (--skip-crds: the CRD of
    // crds/ is created before the check, and this server serves no CRDs).
    let (address, server) = fake_api_server();
    let home = std::env::temp_dir().join(format!("crd-audit-helm-install-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let kubeconfig = home.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters: [{{name: fake, cluster: {{server: \"{address}\"}}}}]\n\
             users: [{{name: fake, user: {{}}}}]\ncontexts: [{{name: fake, context: {{cluster: fake, user: fake}}}}]\n\
             current-context: fake\n"
        ),
    )
    .unwrap();
    for (set, says) in mistakes {
        let out = Command::new(helm)
            .current_dir(root())
            .env("KUBECONFIG", &kubeconfig)
            .env("HOME", &home)
            .env("HELM_CACHE_HOME", home.join("cache"))
            .env("HELM_CONFIG_HOME", home.join("config"))
            .env("HELM_DATA_HOME", home.join("data"))
            .args([
                "install",
                "crd-audit",
                CHART,
                "--namespace",
                "crd-audit",
                "--skip-crds",
                "--set",
                set,
            ])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "helm install {set} succeeded");
        assert!(
            err.contains("INSTALLATION FAILED") && err.contains(says),
            "helm install {set}: {err}"
        );
    }
    let _ = std::net::TcpStream::connect(address.trim_start_matches("http://"))
        .map(|mut s| std::io::Write::write_all(&mut s, b"GET /stop HTTP/1.1\r\n\r\n"));
    let _ = server.join();
    std::fs::remove_dir_all(&home).ok();
}

/// A schema node with its `$ref` followed.
fn resolved<'a>(schema: &'a Value, node: &'a Value) -> &'a Value {
    match node["$ref"].as_str() {
        Some(r) => {
            let name = r.strip_prefix("#/definitions/").unwrap();
            &schema["definitions"][name]
        }
        None => node,
    }
}

/// Every schema object that lists its properties refuses others, and every key of
/// values.yaml is one the schema lists (or lies under an object it leaves open); every
/// property it lists is in values.yaml, but for the few that have no default.
#[test]
fn the_values_schema_is_closed_and_covers_values_yaml() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join(CHART).join("values.schema.json")).unwrap(),
    )
    .unwrap();
    let values = yaml_file("charts/crd-audit/values.yaml");
    fn closed(schema: &Value, node: &Value, at: &str, count: &mut usize) {
        let node = resolved(schema, node);
        if let Some(props) = node["properties"].as_object() {
            *count += 1;
            assert_eq!(
                node["additionalProperties"],
                Value::Bool(false),
                "{at}: an object whose properties are listed must refuse others"
            );
            for (k, v) in props {
                closed(schema, v, &format!("{at}/{k}"), count);
            }
        }
        if let Some(items) = node.get("items") {
            closed(schema, items, &format!("{at}[]"), count);
        }
    }
    let mut count = 0;
    closed(&schema, &schema, "", &mut count);
    assert!(count >= 25, "{count} closed objects");
    // Keys without a default (an empty object in values.yaml, such as gate.objectSelector, is
    // not checked for its fields either).
    let without_default = ["/global", "/config/gateUrl"];
    fn covered(schema: &Value, node: &Value, value: &Value, at: &str, without_default: &[&str]) {
        // A definition ($ref: the probes, the monitors) lists every field Kubernetes or the
        // Prometheus Operator takes; values.yaml sets some.
        let shared = node.get("$ref").is_some();
        let node = resolved(schema, node);
        let (Some(props), Some(map)) = (node["properties"].as_object(), value.as_object()) else {
            return;
        };
        for (k, v) in map {
            let Some(child) = props.get(k) else {
                panic!("values.yaml {at}/{k} is not in values.schema.json");
            };
            covered(schema, child, v, &format!("{at}/{k}"), without_default);
        }
        if shared || map.is_empty() {
            return;
        }
        for k in props.keys() {
            let path = format!("{at}/{k}");
            assert!(
                map.contains_key(k) || without_default.contains(&path.as_str()),
                "values.schema.json lists {path}, which values.yaml does not set"
            );
        }
    }
    covered(&schema, &schema, &values, "", &without_default);
}

/// The keys of the operator's configuration (docs/reference/configuration.md): the `config`
/// values are every one of them but those the chart sets from `gate` and `metrics.perCrd`,
/// and the rendered configuration uses only keys the operator knows.
#[test]
fn the_config_values_are_the_operators_keys() {
    let doc = std::fs::read_to_string(root().join("docs/reference/configuration.md")).unwrap();
    let table = &doc[..doc.find("## The `controller` command").unwrap()];
    let documented: std::collections::BTreeSet<&str> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .collect();
    assert!(documented.contains("gateTimeoutSeconds"), "{documented:?}");
    let from_other_values = [
        "gate",
        "gateBudget",
        "gateTimeoutSeconds",
        "gateFailurePolicy",
        "gateObjectSelector",
        "gateMatchConditions",
        "gateCertDir",
        "perCrdMetrics",
    ];
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join(CHART).join("values.schema.json")).unwrap(),
    )
    .unwrap();
    let mut listed: Vec<&str> = schema["properties"]["config"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .chain(from_other_values)
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        documented.iter().copied().collect::<Vec<_>>(),
        "values.schema.json's config and the documented keys differ"
    );
    let Some(helm) = helm() else { return };
    for file in values_files() {
        let args = values_args(&file);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let config = config_of(&template(helm, &args).unwrap());
        let rendered = objects("config", &config).into_iter().next().unwrap();
        for key in rendered.as_object().unwrap().keys() {
            assert!(
                documented.contains(key.as_str()),
                "{file:?}: {key} is no operator key"
            );
        }
    }
}
