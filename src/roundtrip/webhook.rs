//! Calling a CRD's conversion webhook as kube-apiserver calls it: a `POST` of a
//! `ConversionReview` with `?timeout=30s`, `Content-Type: application/json`, a 30 s deadline,
//! no credentials, trusting the CRD's `caBundle` (the system's roots without one).
//!
//! How it is reached depends on where crd-audit runs: a webhook by `url` directly; a webhook
//! behind a Service directly at `https://<name>.<namespace>.svc:<port><path>` from inside the
//! cluster (as the API server dials it), and from outside through the API server's service
//! proxy (`.../services/https:<name>:<port>/proxy<path>`), which needs `create` on
//! `services/proxy` and does not verify the webhook's certificate (the proxy never does).

use crate::roundtrip::review::http_error;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::Value;
use std::time::Duration;

/// The API server's deadline for a conversion webhook's answer (not configurable).
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The largest answer read from a webhook: one object converted (etcd holds objects of at most
/// 1.5 MiB by default), many times over. A larger answer is the webhook's failure, not this
/// process's memory.
const MAX_ANSWER: usize = 64 << 20;

/// A response body, read whole up to `limit` bytes; past it, an error saying so.
async fn read_at_most<B>(body: B, limit: usize) -> Result<Bytes, String>
where
    B: hyper::body::Body<Data = Bytes>,
    B::Error: std::fmt::Display + Send + Sync + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    match http_body_util::Limited::new(body, limit).collect().await {
        Ok(c) => Ok(c.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            Err(format!("the answer is larger than {} MiB", limit >> 20))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Where a CRD's conversion webhook is, from `spec.conversion.webhook.clientConfig`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    Url(String),
    Service {
        namespace: String,
        name: String,
        port: u16,
        path: String,
    },
}

impl Location {
    /// From a CRD's `clientConfig`.
    pub fn of(client_config: &Value) -> Result<Location, String> {
        if let Some(url) = client_config["url"].as_str() {
            return Ok(Location::Url(url.to_string()));
        }
        let s = &client_config["service"];
        let name = s["name"].as_str().unwrap_or("");
        let namespace = s["namespace"].as_str().unwrap_or("");
        if name.is_empty() || namespace.is_empty() {
            return Err("the CRD's conversion webhook names neither a url nor a service".into());
        }
        let path = s["path"].as_str().unwrap_or("/");
        Ok(Location::Service {
            namespace: namespace.into(),
            name: name.into(),
            port: s["port"]
                .as_u64()
                .and_then(|p| u16::try_from(p).ok())
                .unwrap_or(443),
            path: clean_path(path),
        })
    }

    /// How the API server names it in its errors: the URL it posts to.
    pub fn url(&self) -> String {
        match self {
            Location::Url(u) => with_timeout(u),
            Location::Service {
                namespace,
                name,
                port,
                path,
            } => with_timeout(&format!("https://{name}.{namespace}.svc:{port}{path}")),
        }
    }
}

/// Go's `path.Join("/", p)` of a webhook's path: no trailing slash, `/` when empty.
fn clean_path(p: &str) -> String {
    let parts: Vec<&str> = p
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    format!("/{}", parts.join("/"))
}

fn with_timeout(url: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}timeout=30s")
}

/// A way to a webhook.
pub enum Webhook {
    /// Dialled directly, trusting the CA bundle.
    Direct {
        url: String,
        /// The TLS name the certificate must hold (`<name>.<namespace>.svc` for a Service).
        server_name: Option<String>,
        client: Box<
            hyper_util::client::legacy::Client<
                hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
                Full<Bytes>,
            >,
        >,
    },
    /// Through the API server's service proxy (from outside the cluster).
    Proxy { client: kube::Client, path: String },
}

/// An answer: its status, content type and body.
pub struct Answer {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Bytes,
}

impl Webhook {
    /// The way to the webhook at `location` with the CRD's `ca_bundle` (base64-decoded PEM):
    /// directly unless it is a Service and crd-audit runs outside the cluster (`in_cluster`
    /// false), then through `client`'s API server.
    pub fn new(
        location: &Location,
        ca_bundle: &[u8],
        in_cluster: bool,
        client: &kube::Client,
    ) -> Result<Webhook, String> {
        match location {
            Location::Service {
                namespace,
                name,
                port,
                path,
            } if !in_cluster => Ok(Webhook::Proxy {
                client: client.clone(),
                path: format!(
                    "/api/v1/namespaces/{namespace}/services/https:{name}:{port}/proxy{path}?timeout=30s"
                ),
            }),
            Location::Service {
                namespace, name, ..
            } => direct(
                &location.url(),
                Some(format!("{name}.{namespace}.svc")),
                ca_bundle,
            ),
            Location::Url(_) => direct(&location.url(), None, ca_bundle),
        }
    }

    /// Posts `review`, within [`TIMEOUT`]; the answer, or why there is none (as the API
    /// server words a failed post: `Post "<url>": <error>`).
    pub async fn post(&self, review: &Value) -> Result<Answer, String> {
        let body = Bytes::from(serde_json::to_vec(review).map_err(|e| e.to_string())?);
        match self {
            Webhook::Direct { url, client, .. } => {
                let request = http::Request::post(url.as_str())
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .header(http::header::ACCEPT, "application/json, */*")
                    .header(http::header::USER_AGENT, "kube-apiserver-admission")
                    .body(Full::new(body))
                    .map_err(|e| e.to_string())?;
                let answered = tokio::time::timeout(TIMEOUT, async {
                    let response = client.request(request).await.map_err(describe)?;
                    let (parts, body) = response.into_parts();
                    let body = read_at_most(body, MAX_ANSWER).await?;
                    Ok::<_, String>((parts, body))
                })
                .await;
                let (parts, body) = match answered {
                    Ok(Ok(a)) => a,
                    Ok(Err(e)) => return Err(format!("Post {}: {e}", quoted(url))),
                    Err(_) => {
                        return Err(format!(
                            "Post {}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                            quoted(url)
                        ));
                    }
                };
                Ok(Answer {
                    status: parts.status.as_u16(),
                    content_type: content_type(&parts.headers),
                    body,
                })
            }
            Webhook::Proxy { client, path } => {
                let request = http::Request::post(path.as_str())
                    .header(http::header::CONTENT_TYPE, "application/json")
                    .body(body.to_vec())
                    .map_err(|e| e.to_string())?;
                let answered = tokio::time::timeout(TIMEOUT, async {
                    let response = client.send(request.map(kube::client::Body::from)).await;
                    let response = response.map_err(|e| crate::cluster::client::describe(&e))?;
                    let (parts, body) = response.into_parts();
                    let body = read_at_most(body, MAX_ANSWER).await?;
                    Ok::<_, String>((parts, body))
                })
                .await;
                let (parts, body) = match answered {
                    Ok(Ok(a)) => a,
                    Ok(Err(e)) => {
                        return Err(format!(
                            "Post (through the API server's service proxy) {}: {e}",
                            quoted(path)
                        ));
                    }
                    Err(_) => {
                        return Err(format!(
                            "Post (through the API server's service proxy) {}: context deadline exceeded",
                            quoted(path)
                        ));
                    }
                };
                Ok(Answer {
                    status: parts.status.as_u16(),
                    content_type: content_type(&parts.headers),
                    body,
                })
            }
        }
    }
}

impl Answer {
    /// The answer's body when it is a 2xx, else the API server's error text for it (after
    /// `<prefix> failed: `).
    pub fn body_or_error(self) -> Result<Bytes, String> {
        if (200..300).contains(&self.status) {
            Ok(self.body)
        } else {
            Err(http_error(
                self.status,
                self.content_type.as_deref(),
                &self.body,
            ))
        }
    }
}

fn content_type(headers: &http::HeaderMap) -> Option<String> {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

fn quoted(s: &str) -> String {
    crd_audit_engine::render::quote(s)
}

/// A transport error with its causes, as one line.
fn describe(e: hyper_util::client::legacy::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// A direct way to `url`, trusting `ca_bundle` (PEM; the system's roots when empty) and
/// checking the certificate for `server_name` (else the URL's host).
fn direct(url: &str, server_name: Option<String>, ca_bundle: &[u8]) -> Result<Webhook, String> {
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    let bundle = String::from_utf8_lossy(ca_bundle);
    if bundle.trim().is_empty() {
        let native = rustls_native_certs::load_native_certs();
        for cert in native.certs {
            let _ = roots.add(cert);
        }
    } else {
        for cert in rustls_pki_types::CertificateDer::pem_slice_iter(ca_bundle) {
            let cert = cert.map_err(|e| format!("the CRD's caBundle: {e}"))?;
            roots
                .add(cert)
                .map_err(|e| format!("the CRD's caBundle: {e}"))?;
        }
    }
    let tls = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let mut http = hyper_util::client::legacy::connect::HttpConnector::new();
    http.enforce_http(false);
    http.set_connect_timeout(Some(TIMEOUT));
    let builder = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_only();
    let builder = match &server_name {
        Some(name) => {
            let name = rustls_pki_types::ServerName::try_from(name.clone())
                .map_err(|e| format!("{name:?}: {e}"))?;
            builder.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name))
        }
        None => builder,
    };
    let https = builder.enable_http1().wrap_connector(http);
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build(https);
    Ok(Webhook::Direct {
        url: url.to_string(),
        server_name,
        client: Box::new(client),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An answer past the bound is an error that says so, read no further than the bound.
    #[tokio::test]
    async fn an_answer_past_the_bound_is_refused() {
        let small = Full::new(Bytes::from(vec![b'x'; 1000]));
        assert_eq!(read_at_most(small, 1000).await.unwrap().len(), 1000);
        let large = Full::new(Bytes::from(vec![b'x'; (2 << 20) + 1]));
        assert_eq!(
            read_at_most(large, 2 << 20).await,
            Err("the answer is larger than 2 MiB".to_string())
        );
    }

    #[test]
    fn a_webhook_is_found_by_url_or_service() {
        assert_eq!(
            Location::of(&json!({"url": "https://127.0.0.1:9443/convert"}))
                .unwrap()
                .url(),
            "https://127.0.0.1:9443/convert?timeout=30s"
        );
        let s = Location::of(&json!({"service": {"namespace": "ops", "name": "conv",
            "path": "/convert/"}}))
        .unwrap();
        assert_eq!(s.url(), "https://conv.ops.svc:443/convert?timeout=30s");
        let s = Location::of(&json!({"service": {"namespace": "ops", "name": "conv",
            "port": 8443}}))
        .unwrap();
        assert_eq!(s.url(), "https://conv.ops.svc:8443/?timeout=30s");
        assert!(Location::of(&json!({})).is_err());
    }
}
