//! `crd-audit roundtrip CRD-NAME`: every stored object of a CRD that a webhook converts,
//! through the webhook to every other served version and back (`crate::roundtrip`), writing
//! nothing. One line a finding, then a summary; or JSON lines. Exit code 0 clean (or no
//! webhook), 1 findings, 2 errors.

use super::migrate::Output;
use super::progress_bar::Bar;
use super::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR};
use crate::cluster::client::{ClusterArgs, Origin, config};
use crate::cluster::write_budget::{Priority, Writes};
use crate::release::KubeVersion;
use crate::roundtrip::{self, Checker, Finding, Kind, Strategy};
use serde_json::json;
use std::collections::BTreeSet;
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// The CRD's name (`<plural>.<group>`).
    #[arg(value_name = "CRD-NAME")]
    pub crd: String,
    /// Requests a second (GETs, the webhook's posts, dry runs); 0 is no limit.
    #[arg(long, value_name = "N", default_value_t = super::migrate::DEFAULT_QPS, value_parser = super::migrate::parse_qps)]
    pub qps: f64,
    /// Judge the objects converted by the rules of this Kubernetes release (1.X; default: the
    /// cluster's own, from its /version).
    #[arg(long, value_name = "X.Y")]
    pub kubernetes_version: Option<String>,
    /// No progress bar, even on a terminal.
    #[arg(long)]
    pub no_progress: bool,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    pub output: Output,
}

/// What the run found, object by object.
#[derive(Default)]
struct Tally {
    lossy: BTreeSet<(String, String)>,
    invalid: BTreeSet<(String, String)>,
    failed: BTreeSet<(String, String)>,
}

impl Tally {
    fn count(&mut self, f: &Finding) {
        let key = (f.namespace.clone(), f.name.clone());
        match f.kind {
            Kind::Lossy => self.lossy.insert(key),
            Kind::Invalid => self.invalid.insert(key),
            Kind::Failed => self.failed.insert(key),
        };
    }

    fn any(&self) -> bool {
        !(self.lossy.is_empty() && self.invalid.is_empty() && self.failed.is_empty())
    }
}

/// One finding as a line of `format`.
fn line(format: Output, f: &Finding) -> String {
    match format {
        Output::Text => roundtrip::text_line(f),
        Output::Json => {
            let mut v = json!({"record": "object", "namespace": f.namespace, "name": f.name,
                "finding": f.kind.as_str(), "version": f.version, "message": f.message});
            if let Some(rt) = &f.round_trip {
                v["roundTrip"] = json!(rt);
                v["fields"] = json!(f.fields);
                if f.fields_total > f.fields.len() {
                    v["fieldsTotal"] = json!(f.fields_total);
                }
            }
            if let Some(allowed) = f.update_allowed {
                v["update"] = json!({"allowed": allowed});
            }
            v.to_string()
        }
    }
}

pub fn run(args: &Args) -> u8 {
    let (runtime, release) = match super::cluster_command_start(args.kubernetes_version.as_deref())
    {
        Ok(started) => started,
        Err(code) => return code,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let bar = Bar::new(!args.no_progress && std::io::stderr().is_terminal());
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let status = runtime.block_on(async {
        let interrupted = stop.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                interrupted.store(true, Ordering::Relaxed);
                eprintln!(
                    "\ninterrupted: finishing the objects in flight (Ctrl-C again quits at once)"
                );
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(130);
                }
            }
        });
        round_trip(args, release, &stop, &bar, &mut out).await
    });
    bar.finish();
    let status = match status {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_INPUT_ERROR
        }
    };
    match out.flush() {
        Ok(()) => status,
        Err(e) => super::sink::write_failed(&e, status),
    }
}

async fn round_trip(
    args: &Args,
    release: Option<KubeVersion>,
    stop: &AtomicBool,
    bar: &Bar,
    out: &mut impl Write,
) -> Result<u8, String> {
    let (kube_config, origin) = config(
        args.cluster.kubeconfig.as_deref(),
        args.cluster.context.as_deref(),
    )
    .await?;
    let client =
        kube::Client::try_from(kube_config).map_err(|e| format!("creating the client: {e}"))?;
    let release = match release {
        Some(r) => r,
        None => crate::release::of_cluster(&client).await,
    };
    let target = roundtrip::target(&client, &args.crd, release.engine())
        .await
        .map_err(|e| e.to_string())?;
    let target = Arc::new(target);
    let written = |out: &mut dyn Write, text: String| -> Result<(), String> {
        writeln!(out, "{text}").map_err(|e| format!("writing the output: {e}"))
    };
    let summary = |objects: u64, t: &Tally| {
        let versions = target.others.join(", ");
        match args.output {
            Output::Text => format!(
                "round-tripped {objects} {} of {} through {}: {} lossy, {} invalid, {} failed",
                target.plural,
                target.crd,
                if versions.is_empty() {
                    "no other served version".to_string()
                } else {
                    versions
                },
                t.lossy.len(),
                t.invalid.len(),
                t.failed.len()
            ),
            Output::Json => json!({"record": "summary", "crd": target.crd,
                "storageVersion": target.storage, "versions": target.others, "objects": objects,
                "lossy": t.lossy.len(), "invalid": t.invalid.len(), "failed": t.failed.len()})
            .to_string(),
        }
    };
    if let Strategy::None = target.strategy {
        eprintln!(
            "{}: spec.conversion.strategy is None: between its versions only apiVersion changes \
             (and what a version's schema does not hold is pruned); no webhook to round-trip",
            target.crd
        );
        written(out, summary(0, &Tally::default()))?;
        return Ok(EXIT_CLEAN);
    }
    let checker = Checker::new(
        client,
        target.clone(),
        origin == Origin::InCluster,
        Writes::paced(args.qps, Priority::ConversionCheck),
    )
    .map_err(|e| e.to_string())?;
    bar.phase("objects round-tripped", 0);
    let mut tally = Tally::default();
    let mut failure: Option<String> = None;
    let walked = roundtrip::walk(
        &checker,
        &mut |findings| {
            for f in &findings {
                tally.count(f);
                if failure.is_none() {
                    let text = line(args.output, f);
                    if let Err(e) = bar.suspend(|| written(out, text)) {
                        failure = Some(e);
                    }
                }
            }
        },
        &mut |n| bar.at(n),
        stop,
    )
    .await
    .map_err(|e| e.to_string())?;
    if let Some(e) = failure {
        return Err(e);
    }
    written(out, summary(walked.objects - walked.gone, &tally))?;
    if let Some(change) = roundtrip::changed_since(checker.client(), &target)
        .await
        .map_err(|e| e.to_string())?
    {
        return Err(format!(
            "the CRD {} changed during the run ({change}): what was found is of the CRD as it \
             was; run again",
            target.crd
        ));
    }
    if walked.interrupted {
        return Err("interrupted before every object was round-tripped".into());
    }
    Ok(if tally.any() {
        EXIT_FINDINGS
    } else {
        EXIT_CLEAN
    })
}
