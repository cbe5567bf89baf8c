//! `crd-audit audit`: a read-only, one-shot audit of a cluster: every CRD is checked as
//! `check` does, and every object of every CRD is judged as stored data at the CRD's storage
//! version, as the operator judges it, with the operator's group and namespace filters.
//!
//! Only GET and LIST requests are sent. Objects are read a page at a time, judged and
//! dropped: what stays is a row of counts per CRD. Findings are written as they are found;
//! a summary table ends the text output. On a terminal, stderr shows a progress bar.

mod progress;

use super::EXIT_INPUT_ERROR;
use super::crd_findings;
use super::sink::{self, AuditTotals, AuditedCrd, Format, Row, Sink, Totals};
use crate::audit::config::Config;
use crate::audit::judge::redact_verdict;
use crate::audit::read_crd::{UnreadableCrd, read_crd};
use crate::audit::schema_audit::is_report_crd;
use crate::audit::shown_verdict::ShownVerdict;
use crate::cluster::reader::{Cluster, ReadError};
use crate::packed_crd::PackedCrd;
use crate::release::KubeVersion;
use crd_audit_engine::size_limits;
use crd_audit_engine::{CheckReport, CrdValidator};
use progress::Progress;
use serde_json::Value;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

/// Objects handed from the reading thread to the judging one at a time.
const BATCH: usize = 128;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub cluster: crate::cluster::client::ClusterArgs,
    /// The operator's configuration file: its `includeGroups`, `excludeGroups`,
    /// `excludeNamespaces`, `celEnabled` and `redactValues` apply.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Audit only CRDs whose group matches the glob (repeat for several; default: all).
    #[arg(long = "include-group", value_name = "GLOB")]
    pub include_groups: Vec<String>,
    /// Skip CRDs whose group matches the glob.
    #[arg(long = "exclude-group", value_name = "GLOB")]
    pub exclude_groups: Vec<String>,
    /// Skip objects in namespaces that match the glob.
    #[arg(long = "exclude-namespace", value_name = "GLOB")]
    pub exclude_namespaces: Vec<String>,
    /// Replace values in messages by their type and length, as the operator's reports do
    /// (the default unless --config says otherwise is to show them, as `validate` does).
    #[arg(long)]
    pub redact_values: bool,
    /// No progress bar, even on a terminal.
    #[arg(long)]
    pub no_progress: bool,
    /// Judge CRDs and objects by the rules of this Kubernetes release (1.X; default: the
    /// cluster's own, from its /version): CRD checks and CEL rules use that release's CEL
    /// environments, and before 1.30 there is no validation ratcheting, so every invalid
    /// object is stuck.
    #[arg(long, value_name = "X.Y")]
    pub kubernetes_version: Option<String>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    pub output: Format,
}

/// The settings of the audit: the operator's configuration (from --config, or its defaults
/// with values shown), and the filters of the command line added to it.
pub fn settings(args: &Args) -> Result<Config, String> {
    let mut config = match &args.config {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            Config::parse(&path.display().to_string(), &text)?
        }
        None => Config {
            redact_values: false,
            ..Config::default()
        },
    };
    config
        .include_groups
        .extend(args.include_groups.iter().cloned());
    config
        .exclude_groups
        .extend(args.exclude_groups.iter().cloned());
    config
        .exclude_namespaces
        .extend(args.exclude_namespaces.iter().cloned());
    config.redact_values |= args.redact_values;
    Ok(config)
}

/// A CRD to audit, checked.
struct Checked {
    /// The CRD, packed: a cluster of generated CRDs holds hundreds of megabytes of schemas,
    /// and each is compiled only when its objects are judged.
    revision: PackedCrd,
    report: CheckReport,
    sizes: Vec<size_limits::Finding>,
}

/// Reads and checks every CRD the settings audit; the CRDs that cannot be read are an
/// internal error each (`audit::read_crd`), and the others are audited all the same.
fn read_crds(
    cluster: &Cluster,
    config: &Config,
    release: KubeVersion,
) -> Result<(Vec<Checked>, Vec<UnreadableCrd>), String> {
    let mut checked = Vec::new();
    let mut unreadable = Vec::new();
    cluster
        .each_crd(&mut |raw| {
            let group = raw["spec"]["group"].as_str().unwrap_or("");
            let kind = raw["spec"]["names"]["kind"].as_str().unwrap_or("");
            if !config.audits_group(group) || is_report_crd(group, kind) {
                return;
            }
            let crd = match read_crd(&raw) {
                Ok(c) => c,
                Err(e) => {
                    unreadable.push(e);
                    return;
                }
            };
            let sizes =
                size_limits::findings(&size_limits::measure(&size_limits::as_manifest(raw)));
            let report = crd_audit_engine::check_crd(&crd, release.engine());
            checked.push(Checked {
                revision: PackedCrd::pack(crd),
                report,
                sizes,
            });
        })
        .map_err(|e| format!("reading the CRDs: {e}"))?;
    Ok((checked, unreadable))
}

/// The row of a CRD that cannot be read.
fn unreadable_row(e: &UnreadableCrd) -> Row {
    Row {
        crd: e.name.clone(),
        error: Some(e.to_string()),
        internal_errors: 1,
        ..Row::default()
    }
}

pub fn run(args: &Args) -> u8 {
    let started = Instant::now();
    let config = match settings(args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INPUT_ERROR;
        }
    };
    let cluster = match Cluster::connect(
        args.cluster.kubeconfig.as_deref(),
        args.cluster.context.as_deref(),
    ) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INPUT_ERROR;
        }
    };
    let release = match args
        .kubernetes_version
        .as_deref()
        .map(str::parse::<KubeVersion>)
    {
        Some(Ok(r)) => r,
        Some(Err(e)) => {
            eprintln!("error: --kubernetes-version: {e}");
            return EXIT_INPUT_ERROR;
        }
        None => cluster.release(),
    };
    let (checked, unreadable) = match read_crds(&cluster, &config, release) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INPUT_ERROR;
        }
    };
    let shown = !args.no_progress && std::io::stderr().is_terminal();
    let mut progress = Progress::new(shown, checked.len());
    if shown {
        // The bar's total: the servers' counts (one small LIST per CRD).
        let mut total = 0;
        for (i, c) in checked.iter().enumerate() {
            progress.counting(i, &c.revision.shell().name);
            if let Some(v) = c.revision.shell().storage_version() {
                total += cluster
                    .count_objects(c.revision.shell(), &v.name)
                    .unwrap_or(0);
            }
        }
        progress.set_total(total);
    }
    let stdout = std::io::stdout();
    let mut w = Writer {
        // stdout is the terminal the progress bar is drawn on: each finding is flushed at once.
        flush_each: shown && stdout.is_terminal(),
        sink: sink::new(
            args.output,
            sink::Command::Audit,
            std::io::BufWriter::with_capacity(1 << 16, stdout.lock()),
        ),
        redact: config.redact_values,
    };
    let mut rows = Vec::with_capacity(checked.len() + unreadable.len());
    let mut written = Ok(());
    for e in &unreadable {
        progress.suspend(|| eprintln!("error: {e}"));
        let row = unreadable_row(e);
        written = written.and_then(|()| w.crd_done(&row));
        rows.push(row);
    }
    for c in checked {
        progress.crd(&c.revision.shell().name);
        let row = audit_crd(&cluster, &config, &c, &mut w, &progress, release);
        progress.crd_done();
        match row {
            Ok(row) => rows.push(row),
            Err(e) => {
                written = Err(e);
                break;
            }
        }
    }
    progress.finish();
    let totals = AuditTotals::of(&rows);
    let status = totals.status();
    if written.is_ok() {
        written = progress.suspend(|| {
            let elapsed = started.elapsed();
            w.sink
                .totals(&Totals::Audit {
                    rows: &rows,
                    totals: &totals,
                    elapsed,
                })
                .and_then(|()| w.sink.finish(status))
        });
    }
    match written.and_then(|()| w.sink.flush()) {
        Ok(()) => status,
        Err(e) => sink::write_failed(&e, status),
    }
}

/// Hands the findings to the sink: object values redacted first when the settings ask so,
/// each finding flushed at once when a progress bar shares the terminal.
struct Writer<'s> {
    sink: Box<dyn Sink + 's>,
    redact: bool,
    flush_each: bool,
}

impl Writer<'_> {
    fn flushed(&mut self, written: std::io::Result<()>) -> std::io::Result<()> {
        written?;
        if self.flush_each {
            self.sink.flush()?;
        }
        Ok(())
    }

    fn crd(&mut self, c: &Checked, found: &[crd_findings::Finding]) -> std::io::Result<()> {
        let written = self.sink.audited_crd(&AuditedCrd {
            name: &c.revision.shell().name,
            report: &c.report,
            sizes: &c.sizes,
            found,
        });
        self.flushed(written)
    }

    /// An object with findings (invalid, or with fields its schema does not know).
    fn object(&mut self, crd: &str, mut verdict: ShownVerdict) -> std::io::Result<()> {
        if self.redact {
            redact_verdict(&mut verdict);
        }
        let written = self.sink.audited_object(crd, &verdict);
        self.flushed(written)
    }

    /// The end of a CRD's objects.
    fn crd_done(&mut self, row: &Row) -> std::io::Result<()> {
        let written = self.sink.audited_row(row);
        self.flushed(written)
    }
}

/// Audits one CRD's objects; `Err` only when the output cannot be written.
fn audit_crd(
    cluster: &Cluster,
    config: &Config,
    c: &Checked,
    w: &mut Writer,
    progress: &Progress,
    release: KubeVersion,
) -> std::io::Result<Row> {
    let found = crd_findings::list(&c.report, &c.sizes);
    let mut row = Row::new(&c.revision.shell().name, &found);
    if c.report.internal_error.is_some() {
        row.internal_errors += 1;
    }
    progress.suspend(|| w.crd(c, &found))?;
    let Some(storage) = c.revision.shell().storage_version().map(|v| v.name.clone()) else {
        progress.suspend(|| w.crd_done(&row))?;
        return Ok(row);
    };
    row.storage = storage.clone();
    // Compiled when the first objects arrive: most CRDs of a large cluster have none.
    let mut validator: Option<Result<CrdValidator, String>> = None;
    let compile = || {
        let crd = c.revision.unpack().map_err(|e| e.to_string())?;
        CrdValidator::options()
            .release(release.engine())
            .cel(config.cel_enabled)
            .build(&crd)
            .map_err(|e| e.to_string())
    };
    // One thread reads pages while this one judges what was read: the LIST's transfer and
    // decoding overlap the judging. A few batches at most are in between.
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Value>>(4);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let mut failed_write: Option<std::io::Error> = None;
    let read = std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let mut batch = Vec::with_capacity(BATCH);
            let read = crd_audit_engine::panic_guard::catch(|| {
                cluster.each_object_while(c.revision.shell(), &storage, &mut |obj| {
                    progress.object();
                    let ns = obj["metadata"]["namespace"].as_str().unwrap_or("");
                    if config.audits_namespace(ns) {
                        batch.push(obj);
                    }
                    if batch.len() >= BATCH && tx.send(std::mem::take(&mut batch)).is_err() {
                        return false;
                    }
                    !stop.load(std::sync::atomic::Ordering::Relaxed)
                })
            });
            if !batch.is_empty() {
                let _ = tx.send(batch);
            }
            drop(tx);
            read.unwrap_or_else(|panic| {
                Err(ReadError {
                    status: None,
                    message: format!("reading the objects failed (internal error): {panic}"),
                })
            })
        });
        for batch in rx.iter() {
            if failed_write.is_some() || validator.as_ref().is_some_and(|v| v.is_err()) {
                continue; // drain, so that the reader can finish
            }
            let Ok(validator) = validator.get_or_insert_with(compile) else {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                continue;
            };
            for obj in batch {
                let verdict = ShownVerdict::from(validator.validate_stored(obj));
                row.objects += 1;
                if verdict.update.as_ref().is_some_and(|u| !u.valid()) {
                    row.blocked += 1;
                }
                if verdict.internal_error {
                    row.internal_errors += 1;
                }
                if !verdict.valid() {
                    row.invalid += 1;
                }
                if !verdict.pruned.is_empty() {
                    row.unknown_fields += 1;
                }
                if (!verdict.valid() || !verdict.pruned.is_empty())
                    && let Err(e) = progress.suspend(|| w.object(&c.revision.shell().name, verdict))
                {
                    failed_write = Some(e);
                    stop.store(true, std::sync::atomic::Ordering::Relaxed);
                    break;
                }
            }
        }
        reader.join().unwrap_or_else(|_| {
            Err(ReadError {
                status: None,
                message: "the reader stopped (internal error)".into(),
            })
        })
    });
    if let Some(e) = failed_write {
        return Err(e);
    }
    if let Some(Err(e)) = validator {
        row.error = Some(format!("compiling the CRD failed (internal error): {e}"));
        row.internal_errors += 1;
    } else if let Err(e) = read {
        if e.message.contains("internal error") {
            row.internal_errors += 1;
        }
        row.error = Some(describe_read_error(&e));
    }
    progress.suspend(|| w.crd_done(&row))?;
    Ok(row)
}

fn describe_read_error(e: &ReadError) -> String {
    if e.forbidden() {
        format!("{e} (the audit needs get and list on every audited resource)")
    } else {
        e.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{EXIT_CLEAN, EXIT_FINDINGS};

    #[test]
    fn findings_fail_errors_fail_harder() {
        let mut rows = vec![Row {
            crd: "a".into(),
            crd_warnings: 2,
            ..Row::default()
        }];
        assert_eq!(AuditTotals::of(&rows).status(), EXIT_CLEAN);
        rows[0].invalid = 1;
        assert_eq!(AuditTotals::of(&rows).status(), EXIT_FINDINGS);
        rows[0].invalid = 0;
        rows[0].crd_findings = 1;
        assert_eq!(AuditTotals::of(&rows).status(), EXIT_FINDINGS);
        rows[0].error = Some("x".into());
        assert_eq!(AuditTotals::of(&rows).status(), EXIT_INPUT_ERROR);
    }

    #[test]
    fn command_line_filters_add_to_the_configuration() {
        use clap::Parser;
        #[derive(Parser)]
        struct Audit {
            #[command(flatten)]
            args: Args,
        }
        let args = Audit::parse_from([
            "audit",
            "--exclude-group",
            "*.k8s.io",
            "--include-group",
            "example.com",
            "--exclude-namespace",
            "kube-*",
        ])
        .args;
        let c = settings(&args).unwrap();
        assert!(!c.redact_values);
        assert!(c.audits_group("example.com"));
        assert!(!c.audits_group("other.com"));
        assert!(!c.audits_namespace("kube-system"));
        assert!(c.audits_namespace("default"));
    }
}
