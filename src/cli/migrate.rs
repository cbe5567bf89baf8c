//! `crd-audit migrate CRD-NAME`: storage version migration (`crate::migration`), so that an
//! old version can leave `status.storedVersions`, and then the CRD.
//!
//! Reads the CRD, judges every stored object's unchanged update at the storage version (the
//! server's release, ratcheting: what `audit` says of it), then, unless `--dry-run`, rewrites
//! every object at the storage version and prunes `status.storedVersions` to it when every
//! object was rewritten and the CRD did not change meanwhile.
//!
//! Output (stdout): a line per object the rewrite was refused for (with `--dry-run`: would be
//! refused), then a summary; `-o json` writes them as JSON lines (`record: object` and
//! `record: summary`). What it is about to do and the preflight's count go to stderr, with a
//! progress bar on a terminal. Exit 0 when `storedVersions` is the storage version alone
//! (pruned now, or before), 1 when stuck objects block it (listed), 2 on errors (the CRD
//! changed meanwhile, an interrupt, an unreachable or refusing server).

use super::progress_bar::Bar;
use super::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR};
use crate::cluster::client::{ClusterArgs, connect};
use crate::cluster::write_budget::{Priority, Writes};
use crate::migration::{self, MigrationError, Prune, Refusal, Rewrite, Target};
use crate::release::KubeVersion;
use crd_audit_engine::CrdValidator;
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Writes a second by default: gentle on a busy API server (a controller's own default
/// client-side limit), about a minute for 1,000 objects.
pub const DEFAULT_QPS: f64 = 20.0;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    /// One line per refused object, then a summary line.
    #[default]
    Text,
    /// One JSON object a line: `record: object` per refused object, then `record: summary`.
    Json,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// The CRD's name (`<plural>.<group>`).
    #[arg(value_name = "CRD-NAME")]
    pub crd: String,
    /// Write nothing: judge every stored object's unchanged update at the storage version and
    /// list the objects whose rewrite the server would refuse (stuck).
    #[arg(long)]
    pub dry_run: bool,
    /// Rewrites (and their reads) a second; 0 is no limit.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_QPS, value_parser = parse_qps)]
    pub qps: f64,
    /// Have the API server migrate (a storagemigration.k8s.io StorageVersionMigration, where
    /// the server serves that API: 1.35 and newer with it enabled) instead of writing each
    /// object; the preflight still runs first, since that API stops at the first refused
    /// object.
    #[arg(long)]
    pub using_server: bool,
    /// Judge the objects by the rules of this Kubernetes release (1.X; default: the cluster's
    /// own, from its /version).
    #[arg(long, value_name = "X.Y")]
    pub kubernetes_version: Option<String>,
    /// No progress bar, even on a terminal.
    #[arg(long)]
    pub no_progress: bool,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    pub output: Output,
}

pub(crate) fn parse_qps(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(q) if q.is_finite() && (0.0..=1_000_000.0).contains(&q) => Ok(q),
        _ => Err(format!(
            "{text:?} is not a rate from 0 (no limit) to 1000000 requests a second"
        )),
    }
}

/// How the run ended, and its exit code.
#[derive(Debug, PartialEq)]
enum Ending {
    /// `storedVersions` is the storage version alone.
    Pruned,
    /// Stuck (or refused) objects keep the old versions in `storedVersions`.
    Blocked,
    /// A dry run that found nothing stuck.
    WouldPrune,
    Failed(String),
}

impl Ending {
    fn code(&self) -> u8 {
        match self {
            Ending::Pruned | Ending::WouldPrune => EXIT_CLEAN,
            Ending::Blocked => EXIT_FINDINGS,
            Ending::Failed(_) => EXIT_INPUT_ERROR,
        }
    }
}

/// The summary of a run, as the last line says it.
#[derive(Debug, Default)]
struct Summary {
    crd: String,
    plural: String,
    version: String,
    objects: u64,
    rewritten: u64,
    stuck: u64,
    stored_versions: Vec<String>,
    pruned: bool,
    dry_run: bool,
    /// `storedVersions` was the storage version alone already: nothing was read or written.
    already_migrated: bool,
}

/// A JSON line of a refused object (`-o json`; docs/reference/migrate.md shows the records).
#[derive(serde::Serialize)]
struct ObjectLine<'a> {
    record: &'static str,
    #[serde(skip_serializing_if = "str::is_empty")]
    namespace: &'a str,
    name: &'a str,
    refused: bool,
    message: &'a str,
}

/// The JSON summary line.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct SummaryLine<'a> {
    record: &'static str,
    crd: &'a str,
    version: &'a str,
    objects: u64,
    rewritten: u64,
    stuck: u64,
    stored_versions: &'a [String],
    pruned: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    dry_run: bool,
}

/// The lines on stdout, in the chosen format.
struct Report<W: Write> {
    out: W,
    format: Output,
}

impl<W: Write> Report<W> {
    fn refused(&mut self, r: &Refusal) -> std::io::Result<()> {
        match self.format {
            Output::Text => {
                let who = if r.namespace.is_empty() {
                    r.name.clone()
                } else {
                    format!("{}/{}", r.namespace, r.name)
                };
                writeln!(self.out, "stuck {who}: {}", r.message)?;
            }
            Output::Json => {
                let line = ObjectLine {
                    record: "object",
                    namespace: &r.namespace,
                    name: &r.name,
                    refused: true,
                    message: &r.message,
                };
                serde_json::to_writer(&mut self.out, &line)?;
                writeln!(self.out)?;
            }
        }
        self.out.flush()
    }

    fn summary(&mut self, s: &Summary) -> std::io::Result<()> {
        match self.format {
            Output::Text => {
                let versions = s.stored_versions.join(" ");
                if s.already_migrated {
                    writeln!(
                        self.out,
                        "nothing to migrate: storedVersions of {} is [{versions}], its storage version",
                        s.crd
                    )?;
                } else if s.dry_run {
                    writeln!(
                        self.out,
                        "dry run: {} of {} {} of {} would migrate to {}; {} stuck; storedVersions [{versions}]",
                        s.objects - s.stuck,
                        s.objects,
                        s.plural,
                        s.crd,
                        s.version,
                        s.stuck
                    )?;
                } else {
                    writeln!(
                        self.out,
                        "migrated {} of {} {} of {} to {}; {} stuck; storedVersions [{versions}]",
                        s.rewritten, s.objects, s.plural, s.crd, s.version, s.stuck
                    )?;
                }
            }
            Output::Json => {
                let line = SummaryLine {
                    record: "summary",
                    crd: &s.crd,
                    version: &s.version,
                    objects: s.objects,
                    rewritten: s.rewritten,
                    stuck: s.stuck,
                    stored_versions: &s.stored_versions,
                    pruned: s.pruned,
                    dry_run: s.dry_run,
                };
                serde_json::to_writer(&mut self.out, &line)?;
                writeln!(self.out)?;
            }
        }
        self.out.flush()
    }
}

pub fn run(args: &Args) -> u8 {
    let (runtime, release) = match super::cluster_command_start(args.kubernetes_version.as_deref())
    {
        Ok(started) => started,
        Err(code) => return code,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let stdout = std::io::stdout();
    let mut report = Report {
        out: std::io::BufWriter::new(stdout.lock()),
        format: args.output,
    };
    let bar = Bar::new(!args.no_progress && std::io::stderr().is_terminal());
    let ending = runtime.block_on(async {
        // Ctrl-C: the writes in flight end, no new one starts, the summary is written.
        let interrupted = stop.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                interrupted.store(true, Ordering::Relaxed);
                eprintln!(
                    "\ninterrupted: finishing the writes in flight (Ctrl-C again quits at once)"
                );
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(130);
                }
            }
        });
        migrate(args, release, &stop, &mut report, &bar).await
    });
    bar.finish();
    let ending = match ending {
        Ok(e) => e,
        Err(e) => Ending::Failed(e.to_string()),
    };
    if let Ending::Failed(why) = &ending {
        eprintln!("error: {why}");
    }
    ending.code()
}

/// The whole run; `Err` for what stops it (the summary is then not written).
async fn migrate<W: Write>(
    args: &Args,
    release: Option<KubeVersion>,
    stop: &AtomicBool,
    report: &mut Report<W>,
    bar: &Bar,
) -> Result<Ending, MigrationError> {
    let (client, _) = connect(
        args.cluster.kubeconfig.as_deref(),
        args.cluster.context.as_deref(),
    )
    .await
    .map_err(MigrationError::Judge)?;
    let target = migration::target(&client, &args.crd).await?;
    let release = match release {
        Some(r) => r,
        None => crate::release::of_cluster(&client).await,
    };
    let server_api = migration::served_migration_api(&client).await;
    bar.suspend(|| {
        eprintln!(
            "crd-audit migrate: {}: storage version {}; storedVersions [{}]; judged as Kubernetes 1.{}{}",
            target.crd,
            target.storage,
            target.stored_versions.join(" "),
            release.minor,
            if release.ratchets() { " (ratcheting)" } else { "" }
        );
        if target.definition.conversion_strategy == "Webhook" && !target.migrated() {
            eprintln!(
                "note: {} is converted by a webhook: each rewrite at {} goes through it; \
                 `crd-audit roundtrip {}` shows first what a round trip through it loses",
                target.crd, target.storage, target.crd
            );
        }
        match &server_api {
            Some(gv) => eprintln!(
                "the server offers StorageVersionMigration ({gv}): --using-server has it rewrite the objects"
            ),
            None if args.using_server => {}
            None => {}
        }
    });
    let mut summary = Summary {
        crd: target.crd.clone(),
        plural: target.plural.clone(),
        version: target.storage.clone(),
        stored_versions: target.stored_versions.clone(),
        dry_run: args.dry_run,
        ..Summary::default()
    };
    if target.migrated() && !args.dry_run {
        summary.pruned = true;
        summary.already_migrated = true;
        report.summary(&summary).map_err(output_failed)?;
        return Ok(Ending::Pruned);
    }
    if args.using_server && server_api.is_none() {
        return Err(MigrationError::Judge(
            "--using-server: the server does not serve storagemigration.k8s.io \
             (Kubernetes 1.35 and newer, with the API enabled); migrate without it"
                .into(),
        ));
    }

    // The preflight: which objects' rewrite will be refused.
    let validator = CrdValidator::options()
        .release(release.engine())
        .build(&target.definition)
        .map_err(|e| MigrationError::Judge(format!("compiling {}: {e}", target.crd)))?;
    let qualified_kind = format!("{}.{}", target.kind, target.group);
    let mut judge = |obj| stuck_message(&validator, obj, &qualified_kind);
    bar.phase("objects judged (preflight)", 0);
    let mut written = Ok(());
    let mut listed_stuck = |r: Refusal| {
        if args.dry_run && written.is_ok() {
            written = bar.suspend(|| report.refused(&r));
        }
    };
    let found = migration::preflight(&client, &target, &mut judge, &mut listed_stuck, stop).await?;
    written.map_err(output_failed)?;
    summary.objects = found.objects;
    summary.stuck = found.stuck;
    if stop.load(Ordering::Relaxed) {
        return Ok(Ending::Failed(format!(
            "interrupted during the preflight, after {} objects: nothing was written",
            found.objects
        )));
    }
    if args.dry_run {
        report.summary(&summary).map_err(output_failed)?;
        return Ok(if found.stuck > 0 {
            Ending::Blocked
        } else {
            Ending::WouldPrune
        });
    }
    if found.stuck > 0 {
        bar.suspend(|| {
            eprintln!(
                "preflight: {} of {} stored {} are stuck: their rewrite will be refused, and storedVersions \
                 keeps [{}] until they are fixed (crd-audit migrate --dry-run lists them)",
                found.stuck,
                found.objects,
                target.plural,
                target.stored_versions.join(" ")
            )
        });
    }

    let rewrite = if let (true, Some(group_version)) = (args.using_server, &server_api) {
        if found.stuck > 0 {
            // The server's migration stops at the first refused object: do not start one.
            report.summary(&summary).map_err(output_failed)?;
            return Ok(Ending::Blocked);
        }
        bar.suspend(|| eprintln!("the API server migrates the objects ({group_version})"));
        match migration::server_migration(
            &client,
            &target,
            group_version,
            Duration::from_secs(1),
            stop,
        )
        .await?
        {
            Some(migration::ServerMigration::Succeeded { name }) => {
                bar.suspend(|| eprintln!("StorageVersionMigration {name} succeeded"));
                Rewrite {
                    objects: found.objects,
                    rewritten: found.objects,
                    ..Rewrite::default()
                }
            }
            Some(migration::ServerMigration::Failed { name, message }) => {
                bar.suspend(|| eprintln!("StorageVersionMigration {name} failed: {message}"));
                report.summary(&summary).map_err(output_failed)?;
                return Ok(Ending::Blocked);
            }
            None => Rewrite {
                objects: found.objects,
                interrupted: true,
                ..Rewrite::default()
            },
        }
    } else {
        rewrite_objects(&client, &target, args.qps, stop, report, bar, found.objects).await?
    };
    summary.objects = rewrite.objects;
    summary.rewritten = rewrite.migrated();
    summary.stuck = rewrite.refused;
    if rewrite.written_by_others > 0 {
        bar.suspend(|| {
            eprintln!(
                "{} {} written by another writer after they were listed (their rewrite conflicted): \
                 that write stored them at {}, so they were not sent again",
                rewrite.written_by_others,
                if rewrite.written_by_others == 1 { "object was" } else { "objects were" },
                target.storage
            )
        });
    }
    if rewrite.interrupted {
        report.summary(&summary).map_err(output_failed)?;
        return Ok(Ending::Failed(format!(
            "interrupted after {} of {} objects; storedVersions stays [{}]: run again to finish",
            rewrite.finished(),
            rewrite.objects,
            target.stored_versions.join(" ")
        )));
    }
    if !rewrite.complete() {
        report.summary(&summary).map_err(output_failed)?;
        return Ok(Ending::Blocked);
    }
    let pace = Writes::paced(args.qps, Priority::Migration);
    let ending = match migration::prune(&client, &target, &pace).await? {
        Prune::Pruned => {
            summary.stored_versions = vec![target.storage.clone()];
            summary.pruned = true;
            Ending::Pruned
        }
        Prune::CrdGone => Ending::Failed(format!("the CRD {} was deleted meanwhile", target.crd)),
        Prune::CrdChanged {
            generation,
            storage,
        } => Ending::Failed(format!(
            "the CRD {} changed during the migration (generation {} to {generation}, storage \
             version {storage}): storedVersions was not pruned; run again",
            target.crd, target.generation
        )),
    };
    report.summary(&summary).map_err(output_failed)?;
    Ok(ending)
}

async fn rewrite_objects<W: Write>(
    client: &kube::Client,
    target: &Target,
    qps: f64,
    stop: &AtomicBool,
    report: &mut Report<W>,
    bar: &Bar,
    expected: u64,
) -> Result<Rewrite, MigrationError> {
    bar.phase("objects rewritten", expected);
    let pace = Writes::paced(qps, Priority::Migration);
    let mut written = Ok(());
    let mut refused = |r: Refusal| {
        if written.is_ok() {
            written = bar.suspend(|| report.refused(&r));
        }
    };
    let mut progress = |done: &Rewrite| bar.at(done.finished());
    let done = migration::rewrite(client, target, &pace, &mut refused, &mut progress, stop).await?;
    written.map_err(output_failed)?;
    Ok(done)
}

/// For a stuck object, the message of the server's refusal of its unchanged update (what a
/// rewrite gets back); `None` when that update is accepted.
fn stuck_message(
    validator: &CrdValidator,
    obj: serde_json::Value,
    qualified_kind: &str,
) -> Option<String> {
    let verdict = validator.validate_stored(obj);
    if !verdict.is_stuck() {
        return None;
    }
    let update = verdict.update.as_deref()?;
    Some(
        update
            .status_message(qualified_kind)
            .or_else(|| update.causes().first().map(|c| c.message().to_string()))
            .unwrap_or_else(|| format!("{:?}", update.outcome)),
    )
}

fn output_failed(e: std::io::Error) -> MigrationError {
    MigrationError::Judge(format!("writing the output: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn qps_is_a_rate_or_no_limit() {
        assert_eq!(parse_qps("0"), Ok(0.0));
        assert_eq!(parse_qps("2.5"), Ok(2.5));
        for bad in ["-1", "NaN", "inf", "1e9", "fast"] {
            assert!(parse_qps(bad).is_err(), "{bad}");
        }
    }

    fn written(format: Output, f: impl FnOnce(&mut Report<&mut Vec<u8>>)) -> String {
        let mut out = Vec::new();
        let mut r = Report {
            out: &mut out,
            format,
        };
        f(&mut r);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn lines_say_what_the_design_names() {
        let refusal = Refusal {
            namespace: "team-a".into(),
            name: "large".into(),
            message: "Widget.example.com \"large\" is invalid: spec.size: Required value".into(),
        };
        let summary = Summary {
            crd: "widgets.example.com".into(),
            plural: "widgets".into(),
            version: "v1".into(),
            objects: 3,
            rewritten: 2,
            stuck: 1,
            stored_versions: vec!["v1alpha1".into(), "v1".into()],
            ..Summary::default()
        };
        let text = written(Output::Text, |r| {
            r.refused(&refusal).unwrap();
            r.refused(&Refusal {
                namespace: String::new(),
                ..refusal.clone()
            })
            .unwrap();
            r.summary(&summary).unwrap();
        });
        assert_eq!(
            text,
            "stuck team-a/large: Widget.example.com \"large\" is invalid: spec.size: Required value\n\
             stuck large: Widget.example.com \"large\" is invalid: spec.size: Required value\n\
             migrated 2 of 3 widgets of widgets.example.com to v1; 1 stuck; storedVersions [v1alpha1 v1]\n"
        );
        let json = written(Output::Json, |r| {
            r.refused(&refusal).unwrap();
            r.summary(&summary).unwrap();
        });
        let lines: Vec<serde_json::Value> = json
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            lines[0],
            json!({"record": "object", "namespace": "team-a", "name": "large", "refused": true,
                "message": refusal.message})
        );
        assert_eq!(
            lines[1],
            json!({"record": "summary", "crd": "widgets.example.com", "version": "v1",
                "objects": 3, "rewritten": 2, "stuck": 1, "storedVersions": ["v1alpha1", "v1"],
                "pruned": false})
        );
        let dry = written(Output::Text, |r| {
            r.summary(&Summary {
                dry_run: true,
                rewritten: 0,
                ..summary
            })
            .unwrap()
        });
        assert_eq!(
            dry,
            "dry run: 2 of 3 widgets of widgets.example.com would migrate to v1; 1 stuck; storedVersions [v1alpha1 v1]\n"
        );
    }

    #[test]
    fn exit_codes() {
        assert_eq!(Ending::Pruned.code(), 0);
        assert_eq!(Ending::WouldPrune.code(), 0);
        assert_eq!(Ending::Blocked.code(), 1);
        assert_eq!(Ending::Failed("x".into()).code(), 2);
    }
}
