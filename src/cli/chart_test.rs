//! `crd-audit chart-test`: what the Helm chart's `helm test` Pod runs, with the operator's own
//! image. It asks the operator's Service for `/readyz` until it answers `200` (the leader has
//! reconciled its first LIST of CRDs, or a standby reads the Lease), then lists the
//! `SchemaAudit` reports with the Pod's ServiceAccount until at least one exists: an operator
//! that runs, is reachable through its Service, and writes reports.

use super::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR};
use crate::audit::schema_audit::SchemaAudit;
use crate::cluster::client::{ClusterArgs, cli_runtime, connect, describe};
use http_body_util::{BodyExt, Empty};
use kube::api::{Api, ListParams};
use std::time::Duration;
use tokio::time::Instant;

/// How often the Service and the reports are asked again while waiting.
const POLL: Duration = Duration::from_secs(2);
/// How long one request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The operator's readiness endpoint, through its Service
    /// (`http://<service>.<namespace>.svc:<port>/readyz`).
    #[arg(long, value_name = "URL")]
    pub url: String,
    /// How long to wait for both (a Go duration such as 120s or 2m, or seconds).
    #[arg(long, value_name = "DURATION", default_value = "2m", value_parser = super::apply_crd::parse_timeout)]
    pub wait: Duration,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

pub fn run(args: &Args) -> u8 {
    let uri: http::Uri = match args.url.parse() {
        Ok(u) => u,
        Err(e) => {
            eprintln!("crd-audit chart-test: --url {:?}: {e}", args.url);
            return EXIT_INPUT_ERROR;
        }
    };
    if uri.scheme_str() != Some("http") || uri.host().is_none() {
        eprintln!(
            "crd-audit chart-test: --url {:?} is not an http:// URL with a host",
            args.url
        );
        return EXIT_INPUT_ERROR;
    }
    let rt = match cli_runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("crd-audit chart-test: {e}");
            return EXIT_INPUT_ERROR;
        }
    };
    rt.block_on(async {
        let deadline = Instant::now() + args.wait;
        if let Err(why) = ready(&uri, deadline).await {
            eprintln!("crd-audit chart-test: {} is not ready: {why}", args.url);
            return EXIT_FINDINGS;
        }
        println!("{} answers 200", args.url);
        let client = match connect(
            args.cluster.kubeconfig.as_deref(),
            args.cluster.context.as_deref(),
        )
        .await
        {
            Ok((c, _)) => c,
            Err(e) => {
                eprintln!("crd-audit chart-test: {e}");
                return EXIT_INPUT_ERROR;
            }
        };
        match reports(&client, deadline).await {
            Ok(n) => {
                println!("{n} SchemaAudit report(s) written");
                EXIT_CLEAN
            }
            Err(why) => {
                eprintln!("crd-audit chart-test: no SchemaAudit report: {why}");
                EXIT_FINDINGS
            }
        }
    })
}

/// Asks `uri` until it answers 200 or the deadline passes; the last answer or error.
async fn ready(uri: &http::Uri, deadline: Instant) -> Result<(), String> {
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Empty<bytes::Bytes>>();
    loop {
        let request = http::Request::get(uri.clone())
            .body(Empty::new())
            .map_err(|e| e.to_string())?;
        let last = match tokio::time::timeout(REQUEST_TIMEOUT, client.request(request)).await {
            Ok(Ok(response)) if response.status() == http::StatusCode::OK => return Ok(()),
            Ok(Ok(response)) => {
                let status = response.status();
                let body = response
                    .into_body()
                    .collect()
                    .await
                    .map(|b| String::from_utf8_lossy(&b.to_bytes()).trim().to_string())
                    .unwrap_or_default();
                format!("it answered {status} {body}")
            }
            Ok(Err(e)) => format!("{e}"),
            Err(_) => format!("no answer within {REQUEST_TIMEOUT:?}"),
        };
        if Instant::now() + POLL > deadline {
            return Err(last);
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Lists the reports until there is one or the deadline passes; how many there are.
async fn reports(client: &kube::Client, deadline: Instant) -> Result<usize, String> {
    let api: Api<SchemaAudit> = Api::all(client.clone());
    loop {
        let last = match api.list_metadata(&ListParams::default().limit(50)).await {
            Ok(list) if !list.items.is_empty() => return Ok(list.items.len()),
            Ok(_) => "none listed yet".to_string(),
            Err(e) => describe(&e),
        };
        if Instant::now() + POLL > deadline {
            return Err(last);
        }
        tokio::time::sleep(POLL).await;
    }
}
