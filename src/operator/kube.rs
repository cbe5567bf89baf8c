//! A small Kubernetes API client: bearer-token authentication from a kubeconfig or the
//! in-cluster ServiceAccount, paginated LISTs, streaming WATCHes, server-side apply, and
//! plain creates and deletes. JSON in, JSON out; errors carry the HTTP status and the
//! server's message.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::sync::Arc;
use std::time::Duration;

/// An API error: the HTTP status (0 for transport errors) and the message.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiError {
    pub status: u16,
    pub message: String,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.status == 0 {
            write!(f, "{}", self.message)
        } else {
            write!(f, "HTTP {}: {}", self.status, self.message)
        }
    }
}

impl ApiError {
    fn transport(e: impl std::fmt::Display) -> ApiError {
        ApiError {
            status: 0,
            message: e.to_string(),
        }
    }

    /// The watch's resource version is too old (410 Gone, or an `Expired` status).
    pub fn is_gone(&self) -> bool {
        self.status == 410
    }
}

/// One watch event.
#[derive(Debug)]
pub struct WatchEvent {
    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    pub kind: String,
    pub object: Value,
}

/// A token bucket for write requests (`apiQps`, `apiBurst`).
#[derive(Debug)]
struct Bucket {
    qps: f64,
    burst: f64,
    tokens: f64,
    last: std::time::Instant,
}

impl Bucket {
    /// Waits until a request may go.
    fn take(&mut self) {
        loop {
            let now = std::time::Instant::now();
            self.tokens = (self.tokens + now.duration_since(self.last).as_secs_f64() * self.qps)
                .min(self.burst);
            self.last = now;
            if self.tokens >= 1.0 {
                self.tokens -= 1.0;
                return;
            }
            std::thread::sleep(Duration::from_secs_f64((1.0 - self.tokens) / self.qps));
        }
    }
}

/// Requests sent, for the request-rate metric.
pub static REQUESTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

#[derive(Clone)]
pub struct Kube {
    agent: ureq::Agent,
    watch_agent: ureq::Agent,
    server: String,
    token: Option<String>,
    writes: Option<Arc<std::sync::Mutex<Bucket>>>,
}

impl std::fmt::Debug for Kube {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Kube({})", self.server)
    }
}

fn tls_config(ca_pem: Option<&[u8]>) -> Result<Arc<rustls::ClientConfig>, String> {
    let mut roots = rustls::RootCertStore::empty();
    if let Some(pem) = ca_pem {
        let mut reader = std::io::Cursor::new(pem);
        for cert in rustls_pemfile::certs(&mut reader) {
            let cert = cert.map_err(|e| format!("reading the CA certificate: {e}"))?;
            roots
                .add(cert)
                .map_err(|e| format!("adding the CA certificate: {e}"))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut cur = v;
    for p in path {
        cur = cur.get(*p)?;
    }
    cur.as_str()
}

/// The entry `name` of a kubeconfig list (`clusters`, `users`, `contexts`).
fn named<'a>(cfg: &'a Value, list: &str, name: &str) -> Option<&'a Value> {
    cfg.get(list)?
        .as_array()?
        .iter()
        .find(|e| e.get("name").and_then(Value::as_str) == Some(name))
}

impl Kube {
    fn new(server: &str, ca_pem: Option<&[u8]>, token: Option<String>) -> Result<Kube, String> {
        let tls = tls_config(ca_pem)?;
        let build = |read: Option<Duration>| {
            let mut b = ureq::AgentBuilder::new()
                .tls_config(tls.clone())
                .timeout_connect(Duration::from_secs(10));
            if let Some(r) = read {
                b = b.timeout_read(r);
            }
            b.build()
        };
        Ok(Kube {
            agent: build(Some(Duration::from_secs(60))),
            // Watches stay open; the server ends them (timeoutSeconds).
            watch_agent: build(Some(Duration::from_secs(330))),
            server: server.trim_end_matches('/').to_string(),
            token,
            writes: None,
        })
    }

    /// Limits write requests to `qps` a second with bursts of `burst` (client-side rate
    /// limiting; reads are paginated and watches are long-lived).
    pub fn with_write_limit(mut self, qps: f64, burst: u32) -> Kube {
        if qps > 0.0 {
            self.writes = Some(Arc::new(std::sync::Mutex::new(Bucket {
                qps,
                burst: f64::from(burst.max(1)),
                tokens: f64::from(burst.max(1)),
                last: std::time::Instant::now(),
            })));
        }
        self
    }

    /// From a kubeconfig file (its current context, or `context`); token authentication.
    pub fn from_kubeconfig(path: &std::path::Path, context: Option<&str>) -> Result<Kube, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let cfg = crate::load::parse_str(&path.display().to_string(), &text)
            .into_iter()
            .next()
            .ok_or_else(|| format!("{}: empty kubeconfig", path.display()))?
            .map_err(|e| e.to_string())?
            .value;
        let ctx_name = context
            .map(str::to_string)
            .or_else(|| str_at(&cfg, &["current-context"]).map(str::to_string))
            .ok_or_else(|| format!("{}: no current context", path.display()))?;
        let ctx = named(&cfg, "contexts", &ctx_name)
            .and_then(|c| c.get("context"))
            .ok_or_else(|| format!("{}: context {ctx_name:?} not found", path.display()))?;
        let cluster_name = str_at(ctx, &["cluster"]).unwrap_or_default();
        let user_name = str_at(ctx, &["user"]).unwrap_or_default();
        let cluster = named(&cfg, "clusters", cluster_name)
            .and_then(|c| c.get("cluster"))
            .ok_or_else(|| format!("cluster {cluster_name:?} not found"))?;
        let server = str_at(cluster, &["server"]).ok_or("the cluster has no server")?;
        let ca = match (
            str_at(cluster, &["certificate-authority-data"]),
            str_at(cluster, &["certificate-authority"]),
        ) {
            (Some(data), _) => Some(
                crate::cel::stdlib::base64_decode(data.trim())
                    .ok_or("certificate-authority-data is not base64")?,
            ),
            (None, Some(file)) => Some(std::fs::read(file).map_err(|e| format!("{file}: {e}"))?),
            _ => None,
        };
        let user = named(&cfg, "users", user_name).and_then(|u| u.get("user"));
        let token = match user {
            Some(u) => match (str_at(u, &["token"]), str_at(u, &["tokenFile"])) {
                (Some(t), _) => Some(t.to_string()),
                (None, Some(f)) => Some(
                    std::fs::read_to_string(f)
                        .map_err(|e| format!("{f}: {e}"))?
                        .trim()
                        .to_string(),
                ),
                _ => None,
            },
            None => None,
        };
        Kube::new(server, ca.as_deref(), token)
    }

    /// The client a command uses: the given kubeconfig; else, inside a pod, the
    /// ServiceAccount (when `in_cluster`); else `$KUBECONFIG`, then `~/.kube/config`.
    pub fn from_environment(
        kubeconfig: Option<&std::path::Path>,
        context: Option<&str>,
        in_cluster: bool,
    ) -> Result<Kube, String> {
        if let Some(p) = kubeconfig {
            return Kube::from_kubeconfig(p, context);
        }
        if in_cluster && let Ok(k) = Kube::in_cluster() {
            return Ok(k);
        }
        let path = std::env::var_os("KUBECONFIG")
            .map(std::path::PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".kube/config"))
            })
            .ok_or("no kubeconfig: pass --kubeconfig or set KUBECONFIG")?;
        Kube::from_kubeconfig(&path, context)
    }

    /// Inside a pod: the ServiceAccount token and CA, and the service's address.
    pub fn in_cluster() -> Result<Kube, String> {
        let dir = std::path::Path::new("/var/run/secrets/kubernetes.io/serviceaccount");
        let host = std::env::var("KUBERNETES_SERVICE_HOST").map_err(|_| "not in a cluster")?;
        let port = std::env::var("KUBERNETES_SERVICE_PORT").unwrap_or_else(|_| "443".into());
        let token = std::fs::read_to_string(dir.join("token")).map_err(|e| e.to_string())?;
        let ca = std::fs::read(dir.join("ca.crt")).map_err(|e| e.to_string())?;
        let host = if host.contains(':') {
            format!("[{host}]")
        } else {
            host
        };
        Kube::new(
            &format!("https://{host}:{port}"),
            Some(&ca),
            Some(token.trim().to_string()),
        )
    }

    fn request(&self, agent: &ureq::Agent, method: &str, path: &str) -> ureq::Request {
        REQUESTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if method != "GET"
            && let Some(b) = &self.writes
        {
            b.lock().unwrap_or_else(|e| e.into_inner()).take();
        }
        let mut r = agent.request(method, &format!("{}{path}", self.server));
        if let Some(t) = &self.token {
            r = r.set("Authorization", &format!("Bearer {t}"));
        }
        r.set("Accept", "application/json")
    }

    fn result(r: Result<ureq::Response, ureq::Error>) -> Result<Value, ApiError> {
        match r {
            Ok(resp) => {
                let mut body = String::new();
                resp.into_reader()
                    .take(256 << 20)
                    .read_to_string(&mut body)
                    .map_err(ApiError::transport)?;
                serde_json::from_str(&body).map_err(ApiError::transport)
            }
            Err(ureq::Error::Status(code, resp)) => {
                let text = resp.into_string().unwrap_or_default();
                let message = serde_json::from_str::<Value>(&text)
                    .ok()
                    .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_string))
                    .unwrap_or(text);
                Err(ApiError {
                    status: code,
                    message,
                })
            }
            Err(e) => Err(ApiError::transport(e)),
        }
    }

    pub fn get(&self, path: &str) -> Result<Value, ApiError> {
        Self::result(self.request(&self.agent, "GET", path).call())
    }

    pub fn delete(&self, path: &str) -> Result<Value, ApiError> {
        Self::result(self.request(&self.agent, "DELETE", path).call())
    }

    pub fn create(&self, path: &str, body: &Value) -> Result<Value, ApiError> {
        Self::result(
            self.request(&self.agent, "POST", path)
                .set("Content-Type", "application/json")
                .send_string(&body.to_string()),
        )
    }

    /// Replaces an object (PUT); the body's `resourceVersion` makes it conditional.
    pub fn replace(&self, path: &str, body: &Value) -> Result<Value, ApiError> {
        Self::result(
            self.request(&self.agent, "PUT", path)
                .set("Content-Type", "application/json")
                .send_string(&body.to_string()),
        )
    }

    /// Server-side apply (`force`: take over conflicting fields).
    pub fn apply(&self, path: &str, body: &Value, manager: &str) -> Result<Value, ApiError> {
        let sep = if path.contains('?') { '&' } else { '?' };
        Self::result(
            self.request(
                &self.agent,
                "PATCH",
                &format!("{path}{sep}fieldManager={manager}&force=true"),
            )
            .set("Content-Type", "application/apply-patch+yaml")
            .send_string(&body.to_string()),
        )
    }

    /// Lists a collection page by page (`limit` items each); calls `each` on every item.
    /// Returns the collection's resource version.
    pub fn list(
        &self,
        path: &str,
        limit: usize,
        each: &mut dyn FnMut(Value),
    ) -> Result<String, ApiError> {
        let mut cont = String::new();
        loop {
            let mut p = format!("{path}?limit={limit}");
            if !cont.is_empty() {
                p.push_str("&continue=");
                p.push_str(&cont);
            }
            let mut page = self.get(&p)?;
            let rv = str_at(&page, &["metadata", "resourceVersion"])
                .unwrap_or_default()
                .to_string();
            cont = str_at(&page, &["metadata", "continue"])
                .unwrap_or_default()
                .to_string();
            if let Some(Value::Array(items)) = page.get_mut("items").map(std::mem::take) {
                for item in items {
                    each(item);
                }
            }
            if cont.is_empty() {
                return Ok(rv);
            }
        }
    }

    /// Watches a collection from `resource_version`, calling `each` for every event until
    /// it returns false or the server ends the watch.
    pub fn watch(
        &self,
        path: &str,
        resource_version: &str,
        each: &mut dyn FnMut(WatchEvent) -> bool,
    ) -> Result<(), ApiError> {
        let p = format!(
            "{path}?watch=true&allowWatchBookmarks=true&timeoutSeconds=300&resourceVersion={resource_version}"
        );
        let resp = match self.request(&self.watch_agent, "GET", &p).call() {
            Ok(r) => r,
            Err(e) => return Self::result(Err(e)).map(|_| ()),
        };
        let reader = BufReader::new(resp.into_reader());
        for line in reader.lines() {
            let line = line.map_err(ApiError::transport)?;
            if line.trim().is_empty() {
                continue;
            }
            let mut ev: Value = serde_json::from_str(&line).map_err(ApiError::transport)?;
            let kind = ev["type"].as_str().unwrap_or("").to_string();
            let object = ev.get_mut("object").map(std::mem::take).unwrap_or_default();
            if kind == "ERROR" {
                let code = object["code"].as_u64().unwrap_or(500) as u16;
                return Err(ApiError {
                    status: code,
                    message: object["message"]
                        .as_str()
                        .unwrap_or("watch error")
                        .to_string(),
                });
            }
            if !each(WatchEvent { kind, object }) {
                return Ok(());
            }
        }
        Ok(())
    }
}
