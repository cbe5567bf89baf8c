//! A conversion webhook of the tests' own, served over TLS on 127.0.0.1 (the API server calls
//! it by `url`, trusting its CA; or, run in a pod by the example, behind a Service), for the CRD of [`crontabs_crd`]: `v2` is the storage version
//! (it has `spec.priority`), `v1` the older one (`spec.cronSpec` for `v2`'s `spec.schedule`,
//! no priority). Sound, it keeps a `v2` object's priority in an annotation while the object is
//! at `v1` and puts it back, so that nothing is lost either way. An object labelled
//! `flaw=<name>` gets that flaw:
//! - `drop`: `spec.priority` dropped going down (no annotation kept);
//! - `case`: `spec.color` lower-cased going up (a value changed on the way back);
//! - `refused`: `spec.size` `xl` kept going down, where `v1` refuses it;
//! - `error`: the conversion fails (`result.status: Failure`, message `boom`);
//! - `uid`: the object comes back with another uid; `rename`: with another name;
//! - `slow`: the answer comes after 35 s (the API server gives up after 30 s);
//! - `nil`: a missing `spec.tags` comes back `[]` going up;
//! - `reorder`: `spec.ports` reversed going up;
//! - `label`: the label `converted: "yes"` added going down;
//! - `garbage`: going up, an answer that is not JSON (`200`, `text/plain`);
//! - `nometa`: going down, the object comes back without `metadata`.
//!
//! Each review it answers is counted, by the version asked for.

use rcgen::{CertificateParams, KeyPair};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// The annotation a sound conversion keeps `v2`'s priority in, while at `v1`.
const PRIORITY: &str = "example.com/priority";

/// A running webhook.
pub struct ConversionWebhook {
    pub url: String,
    /// The CA the API server must trust (PEM).
    pub ca: String,
    /// Reviews answered, by `desiredAPIVersion`.
    pub calls: Arc<Mutex<BTreeMap<String, usize>>>,
    /// While set, every review fails (the webhook down).
    pub down: Arc<std::sync::atomic::AtomicBool>,
    _runtime: tokio::runtime::Runtime,
}

/// The CRD `crontabs.<group>`, converted by the webhook at `url` trusting `ca`.
pub fn crontabs_crd(group: &str, url: &str, ca: &str) -> Value {
    let spec = |v2: bool| {
        let mut p = json!({
            "image": {"type": "string"},
            "color": {"type": "string"},
            "size": {"type": "string", "enum": if v2 { json!(["small", "large", "xl"]) } else { json!(["small", "large"]) }},
            "tags": {"type": "array", "items": {"type": "string"}},
            "ports": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
        });
        if v2 {
            p["schedule"] = json!({"type": "string"});
            p["priority"] = json!({"type": "integer"});
        } else {
            p["cronSpec"] = json!({"type": "string"});
        }
        json!({"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": p}}}})
    };
    use base64::Engine;
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("crontabs.{group}")},
        "spec": {"group": group, "scope": "Namespaced",
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
            "versions": [
                {"name": "v1", "served": true, "storage": false, "schema": spec(false)},
                {"name": "v2", "served": true, "storage": true, "schema": spec(true)}],
            "conversion": {"strategy": "Webhook", "webhook": {
                "conversionReviewVersions": ["v1", "v1beta1"],
                "clientConfig": {"url": url,
                    "caBundle": base64::engine::general_purpose::STANDARD.encode(ca)}}}}})
}

impl ConversionWebhook {
    /// Serves the webhook on a free port of 127.0.0.1.
    pub fn start() -> ConversionWebhook {
        ConversionWebhook::serve("127.0.0.1:0", &[])
    }

    /// Serves the webhook on `addr`, its certificate naming 127.0.0.1 and `dns_names` (a
    /// Service's `NAME.NAMESPACE.svc`, for a webhook run in a pod).
    pub fn serve(addr: &str, dns_names: &[String]) -> ConversionWebhook {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(dns_names.to_vec()).unwrap();
        params
            .subject_alt_names
            .push(rcgen::SanType::IpAddress("127.0.0.1".parse().unwrap()));
        let cert = params.self_signed(&key).unwrap();
        let ca = cert.pem();
        let tls = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls_pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(addr))
            .unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let calls: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
        let down = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (c, d) = (calls.clone(), down.clone());
        runtime.spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let (acceptor, calls, down) = (acceptor.clone(), c.clone(), d.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = hyper::service::service_fn(move |req| {
                        let (calls, down) = (calls.clone(), down.clone());
                        async move { answer(req, calls, down).await }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                        .await;
                });
            }
        });
        ConversionWebhook {
            url: format!("https://{addr}/convert"),
            ca,
            calls,
            down,
            _runtime: runtime,
        }
    }

    /// Reviews answered so far, in all.
    pub fn answered(&self) -> usize {
        self.calls.lock().unwrap().values().sum()
    }
}

async fn answer(
    req: hyper::Request<hyper::body::Incoming>,
    calls: Arc<Mutex<BTreeMap<String, usize>>>,
    down: Arc<std::sync::atomic::AtomicBool>,
) -> Result<hyper::Response<http_body_util::Full<bytes::Bytes>>, std::convert::Infallible> {
    use http_body_util::BodyExt;
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let review: Value = serde_json::from_slice(&body).unwrap_or_default();
    let reply = |v: Value| {
        Ok(hyper::Response::builder()
            .header("Content-Type", "application/json")
            .body(http_body_util::Full::new(bytes::Bytes::from(v.to_string())))
            .unwrap())
    };
    if down.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(hyper::Response::builder()
            .status(503)
            .header("Content-Type", "text/plain")
            .body(http_body_util::Full::new(bytes::Bytes::from("down")))
            .unwrap());
    }
    let request = &review["request"];
    let desired = request["desiredAPIVersion"]
        .as_str()
        .unwrap_or("")
        .to_string();
    *calls.lock().unwrap().entry(desired.clone()).or_default() += 1;
    let objects = request["objects"].as_array().cloned().unwrap_or_default();
    let mut converted = Vec::new();
    for o in objects {
        let flaw = o["metadata"]["labels"]["flaw"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let has = |f: &str| flaw.split('.').any(|x| x == f);
        if has("slow") {
            tokio::time::sleep(std::time::Duration::from_secs(35)).await;
        }
        if has("garbage") && desired.ends_with("/v2") {
            return Ok(hyper::Response::builder()
                .header("Content-Type", "text/plain")
                .body(http_body_util::Full::new(bytes::Bytes::from("not json")))
                .unwrap());
        }
        if has("error") {
            return reply(
                json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                "response": {"uid": request["uid"], "result": {"status": "Failure", "message": "boom"}}}),
            );
        }
        converted.push(convert(o, &desired, &flaw));
    }
    reply(
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "response": {"uid": request["uid"], "result": {"status": "Success"},
            "convertedObjects": converted}}),
    )
}

/// One object to `desired`, with its flaw.
fn convert(mut o: Value, desired: &str, flaw: &str) -> Value {
    let has = |f: &str| flaw.split('.').any(|x| x == f);
    let from = o["apiVersion"].as_str().unwrap_or("").to_string();
    if from == desired {
        return o;
    }
    let down = desired.ends_with("/v1");
    let spec = o["spec"].as_object_mut().cloned().unwrap_or_default();
    let mut spec = spec;
    if down {
        if let Some(s) = spec.remove("schedule") {
            spec.insert("cronSpec".into(), s);
        }
        if let Some(p) = spec.remove("priority")
            && !has("drop")
        {
            o["metadata"]["annotations"][PRIORITY] = json!(p.to_string());
        }
        if has("label") {
            o["metadata"]["labels"]["converted"] = json!("yes");
        }
        if !has("refused") && spec.get("size") == Some(&json!("xl")) {
            spec.insert("size".into(), json!("large"));
        }
    } else {
        if let Some(s) = spec.remove("cronSpec") {
            spec.insert("schedule".into(), s);
        }
        if let Some(p) = o["metadata"]["annotations"]
            .as_object_mut()
            .and_then(|a| a.remove(PRIORITY))
            && let Some(n) = p.as_str().and_then(|s| s.parse::<i64>().ok())
        {
            spec.insert("priority".into(), json!(n));
        }
        if o["metadata"]["annotations"]
            .as_object()
            .is_some_and(|a| a.is_empty())
        {
            o["metadata"].as_object_mut().unwrap().remove("annotations");
        }
        if has("case")
            && let Some(c) = spec.get("color").and_then(Value::as_str)
        {
            let lower = c.to_lowercase();
            spec.insert("color".into(), json!(lower));
        }
        if has("nil") && !spec.contains_key("tags") {
            spec.insert("tags".into(), json!([]));
        }
        if has("reorder")
            && let Some(Value::Array(ports)) = spec.get_mut("ports")
        {
            ports.reverse();
        }
    }
    o["spec"] = Value::Object(spec);
    o["apiVersion"] = json!(desired);
    if has("uid") {
        o["metadata"]["uid"] = json!("another-uid");
    }
    if has("nometa") && desired.ends_with("/v1") {
        o.as_object_mut().unwrap().remove("metadata");
    }
    if has("rename") {
        o["metadata"]["name"] = json!("renamed");
    }
    o
}
