//! The Kubernetes client of every command that talks to a cluster (`controller`,
//! `plan --cluster`, `manifests --rbac-for-cluster`): kube's own kubeconfig handling, so that
//! every kubeconfig kubectl accepts works (client certificates, bearer tokens and token files,
//! exec credential plugins, OIDC and GCP auth providers, several files in `KUBECONFIG`,
//! proxies, `insecure-skip-tls-verify`, `tls-server-name`) and in-cluster ServiceAccount
//! credentials, which kube re-reads when they rotate.

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Where the client's credentials came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A kubeconfig file (`--kubeconfig`, `KUBECONFIG`, `~/.kube/config`).
    Kubeconfig,
    /// The pod's ServiceAccount.
    InCluster,
}

/// The flags that choose the cluster, for the commands that always talk to one (`audit`,
/// `controller`, `uninstall-cleanup`, `apply-crd`).
#[derive(Debug, Clone, clap::Args)]
pub struct ClusterArgs {
    /// Kubeconfig to use (default: $KUBECONFIG, then ~/.kube/config, then the in-cluster
    /// ServiceAccount).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<std::path::PathBuf>,
    /// Kubeconfig context (default: the current one).
    #[arg(long)]
    pub context: Option<String>,
}

/// A client for the context the user chose: `--kubeconfig FILE` (else `KUBECONFIG`, whose
/// files are merged as kubectl merges them, else `~/.kube/config`, else the in-cluster
/// ServiceAccount), and `--context` (else the current context).
pub async fn connect(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
) -> Result<(Client, Origin), String> {
    let (config, origin) = config(kubeconfig, context).await?;
    let client = Client::try_from(config).map_err(|e| format!("creating the client: {e}"))?;
    Ok((client, origin))
}

/// The kube configuration for the context the user chose (see `connect`).
pub async fn config(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
) -> Result<(Config, Origin), String> {
    let options = KubeConfigOptions {
        context: context.map(str::to_string),
        ..Default::default()
    };
    let (config, origin) = match kubeconfig {
        Some(path) => {
            let kc = Kubeconfig::read_from(path)
                .map_err(|e| format!("reading kubeconfig {}: {e}", path.display()))?;
            let config = Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|e| format!("kubeconfig {}: {e}", path.display()))?;
            (config, Origin::Kubeconfig)
        }
        None if context.is_some() => (
            Config::from_kubeconfig(&options)
                .await
                .map_err(|e| format!("kubeconfig: {e}"))?,
            Origin::Kubeconfig,
        ),
        None => match Config::from_kubeconfig(&options).await {
            Ok(c) => (c, Origin::Kubeconfig),
            Err(kube_err) => match Config::incluster() {
                Ok(c) => (c, Origin::InCluster),
                Err(_) => {
                    return Err(format!(
                        "no cluster to talk to: {kube_err} (set KUBECONFIG or --kubeconfig, or run in a pod)"
                    ));
                }
            },
        },
    };
    Ok((config, origin))
}

/// How often a connection that carries requests pings the server when it has read nothing
/// (HTTP/2 keep-alive): a connection that died silently is found within 50 s.
const KEEP_ALIVE: Duration = Duration::from_secs(30);

/// How often a connection that carries only long watches pings the server when it has read
/// nothing: a dead one is found within 2 minutes 20 s (a quiet watch otherwise waits for its
/// 30-minute timeout). Each ping wakes the process twice and costs a TLS record each way; at
/// 2,000 CRDs on 23 connections, every 30 s kept most of the operator's CPU at rest.
const WATCH_KEEP_ALIVE: Duration = Duration::from_secs(120);

/// How long a ping waits for its answer before the connection is taken for dead.
const KEEP_ALIVE_TIMEOUT: Duration = Duration::from_secs(20);

/// kube's client stack over HTTP/2 when the server offers it (API servers do): requests and
/// watches share one connection instead of holding one each. Behind a proxy, kube's own
/// client (HTTP/1.1) is used.
pub fn multiplexed(config: &Config) -> Result<Client, String> {
    multiplexed_pinging(config, KEEP_ALIVE)
}

/// [`multiplexed`], pinging the server every `keep_alive` the connection reads nothing.
fn multiplexed_pinging(config: &Config, keep_alive: Duration) -> Result<Client, String> {
    use hyper_util::client::legacy::connect::HttpConnector;
    use hyper_util::rt::{TokioExecutor, TokioTimer};
    use kube::client::ConfigExt;
    if config.proxy_url.is_some() {
        return Client::try_from(config.clone()).map_err(|e| format!("creating the client: {e}"));
    }
    let tls = config
        .rustls_client_config()
        .map_err(|e| format!("TLS configuration: {e}"))?;
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_connect_timeout(config.connect_timeout);
    let builder = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http();
    let builder = match &config.tls_server_name {
        Some(name) => {
            let name = rustls_pki_types::ServerName::try_from(name.clone())
                .map_err(|e| format!("tls-server-name {name:?}: {e}"))?;
            builder.with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name))
        }
        None => builder,
    };
    let https = builder.enable_http1().enable_http2().wrap_connector(http);
    // Keep-alive pings find a dead connection (a watch would otherwise wait on it forever).
    let hyper = hyper_util::client::legacy::Client::builder(TokioExecutor::new())
        .timer(TokioTimer::new())
        .pool_timer(TokioTimer::new())
        .http2_keep_alive_interval(keep_alive)
        .http2_keep_alive_timeout(KEEP_ALIVE_TIMEOUT)
        .http2_keep_alive_while_idle(true)
        .build(https);
    let auth = config
        .auth_layer()
        .map_err(|e| format!("credentials: {e}"))?;
    let headers = config
        .extra_headers_layer()
        .map_err(|e| format!("headers: {e}"))?;
    let service = tower::ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(auth)
        .layer(headers)
        .map_err(tower::BoxError::from)
        .service(hyper);
    Ok(Client::new(service, config.default_namespace.clone()))
}

/// Clients for long watches, each carrying at most `WATCHES_PER_CONNECTION` of them (API
/// servers allow 100 concurrent streams on an HTTP/2 connection, 250 before 1.29; the rest
/// is left for the LISTs that start watches again), so that an audited CRD costs a stream,
/// not a connection, and few connections ping the server (`WATCH_KEEP_ALIVE`).
pub struct WatchClients {
    config: Config,
    shards: Mutex<Vec<(Client, usize)>>,
}

pub const WATCHES_PER_CONNECTION: usize = 90;

/// A watch's place on a shared connection; given back when the watch ends.
pub struct WatchSlot {
    pub client: Client,
    pool: Arc<WatchClients>,
    shard: usize,
}

impl Drop for WatchSlot {
    fn drop(&mut self) {
        let mut shards = self.pool.shards.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = shards.get_mut(self.shard) {
            s.1 = s.1.saturating_sub(1);
        }
    }
}

impl WatchClients {
    pub fn new(config: Config) -> Arc<WatchClients> {
        Arc::new(WatchClients {
            config,
            shards: Mutex::new(Vec::new()),
        })
    }

    /// A client with room for one more watch.
    pub fn slot(self: &Arc<Self>) -> Result<WatchSlot, String> {
        let mut shards = self.shards.lock().unwrap_or_else(|e| e.into_inner());
        let shard = match shards.iter().position(|s| s.1 < WATCHES_PER_CONNECTION) {
            Some(i) => i,
            None => {
                shards.push((multiplexed_pinging(&self.config, WATCH_KEEP_ALIVE)?, 0));
                shards.len() - 1
            }
        };
        shards[shard].1 += 1;
        Ok(WatchSlot {
            client: shards[shard].0.clone(),
            pool: self.clone(),
            shard,
        })
    }

    /// Whether the connections ping the server (HTTP/2 keep-alive, which finds a connection
    /// that died silently within `WATCH_KEEP_ALIVE` and its answer's timeout): not through a
    /// proxy, whose connections are kube's own.
    pub fn ping(&self) -> bool {
        self.config.proxy_url.is_none()
    }

    /// Connections in use for watches.
    pub fn connections(&self) -> usize {
        self.shards
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|s| s.1 > 0)
            .count()
    }
}

/// A single-threaded runtime for the CLI commands that read from a cluster.
pub fn cli_runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting the async runtime: {e}"))
}

/// The message of an API error as kubectl shows it (`the server ... (Forbidden)`).
pub fn describe(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => format!("{} ({}, HTTP {})", s.message, s.reason, s.code),
        other => other.to_string(),
    }
}

/// The HTTP status of an API error, if the server answered.
pub fn status_code(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}
