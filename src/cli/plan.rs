//! `crd-audit plan NEW-CRD (--objects PATH... | --cluster)`: which objects a CRD revision
//! breaks. Objects are judged as stored data (the whole object, status included) under the
//! new CRD, and under the current one (given with `--current`, or read from the cluster), at
//! the version they are read at. With `--cluster`, objects are read with paginated LISTs at
//! the storage version and at every other served version whose new schema differs, one page
//! at a time.

use super::diff::read_one_crd;
use super::inputs;
use super::locate::{self, LazyPositions};
use super::sink::{self, Format, PlanSummary, PlannedObject, Sink, Totals};
use super::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR};
use crate::audit::shown_verdict::ShownVerdict;
use crate::cluster::reader::Cluster;
use crd_audit_engine::Crd;
use crd_audit_engine::{CrdValidator, Mode};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The CRD revision to plan for.
    #[arg(value_name = "NEW-CRD")]
    pub new: PathBuf,
    /// Objects to judge: files or directories (`-` for stdin).
    #[arg(long, value_name = "PATH", num_args = 1.., required_unless_present = "cluster")]
    pub objects: Vec<PathBuf>,
    /// The CRD as it is now, to tell objects that were already invalid from those the new
    /// revision breaks (with --cluster it is read from the cluster).
    #[arg(long, value_name = "CRD")]
    pub current: Option<PathBuf>,
    /// Read the current CRD and its objects from the cluster of the kubeconfig context.
    #[arg(long, conflicts_with = "objects")]
    pub cluster: bool,
    /// Kubeconfig for --cluster (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Kubeconfig context (default: the current one).
    #[arg(long)]
    pub context: Option<String>,
    /// Judge objects by the rules of this Kubernetes release (1.X; default: with --cluster
    /// the cluster's own, else the newest modelled): CEL rules run in that release's CEL
    /// environment, and before 1.30 there is no validation ratcheting, so every invalid
    /// object is stuck.
    #[arg(long, value_name = "X.Y")]
    pub kubernetes_version: Option<String>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    pub output: Format,
}

struct Planner<'s> {
    new: CrdValidator,
    current: Option<CrdValidator>,
    sink: Box<dyn Sink + 's>,
    summaries: BTreeMap<String, PlanSummary>,
    /// The first write to the output that failed: nothing more is written (or judged).
    write_error: Option<std::io::Error>,
    /// The CRD's name.
    crd: String,
}

/// Where an object of a file stands: its file, its path in its document (for the items of
/// a `List`), its document's line, and the document's positions (read when needed).
struct Place<'a> {
    file: &'a str,
    prefix: &'a str,
    doc_line: usize,
    positions: &'a mut LazyPositions,
}

impl Planner<'_> {
    /// Judges one object, read from a file (`place`) or from the cluster.
    fn judge(&mut self, source: &str, obj: Value, place: Option<Place>) {
        if self.write_error.is_some() || obj.is_null() || !self.new.is_kind(&obj) {
            return; // other kinds are not this CRD's objects
        }
        let before = self
            .current
            .as_ref()
            .map(|v| ShownVerdict::from(v.validate(obj.clone(), Mode::Stored)));
        let verdict = ShownVerdict::from(self.new.validate_stored(obj));
        let s = self
            .summaries
            .entry(verdict.api_version.clone())
            .or_default();
        s.read += 1;
        s.stuck += usize::from(verdict.update.as_ref().is_some_and(|u| !u.valid()));
        let valid_before = before.as_ref().map(|b| b.valid());
        match (valid_before, verdict.valid()) {
            (Some(true) | None, false) => s.newly_invalid += 1,
            (Some(false), false) => s.already_invalid += 1,
            _ => {}
        }
        // Findings of objects from files stand at their fields; the positions are read only
        // for objects with findings.
        let located = place.map(|pl| {
            let invalid = !verdict.valid();
            let positions = pl.positions;
            let at = locate::locate(&verdict, pl.prefix, pl.doc_line, move || {
                if invalid { positions.get() } else { None }
            });
            (pl.file, at)
        });
        let written = self.sink.planned_object(&PlannedObject {
            source,
            verdict: &verdict,
            valid_before,
            located: located.as_ref().map(|(file, at)| (*file, at)),
            crd: &self.crd,
        });
        if let Err(e) = written {
            self.write_error = Some(e);
        }
    }

    /// Says that a document could not be read.
    fn unreadable(&mut self, file: &str, e: &crd_audit_engine::load::LoadError) {
        if self.write_error.is_none()
            && let Err(w) = self.sink.unreadable(file, e.doc, e)
        {
            self.write_error = Some(w);
        }
    }

    /// Says the summary and ends the output; returns the exit status.
    fn finish(mut self, input_errors: usize) -> u8 {
        let breaking: usize = self.summaries.values().map(|s| s.newly_invalid).sum();
        let status = if input_errors > 0 {
            EXIT_INPUT_ERROR
        } else if breaking > 0 {
            EXIT_FINDINGS
        } else {
            EXIT_CLEAN
        };
        if self.write_error.is_none() {
            // The totals are said when they can be; the end of a JUnit or SARIF document
            // must be written.
            let _ = self.sink.totals(&Totals::Plan(&self.summaries));
            if let Err(e) = self.sink.finish(status) {
                self.write_error = Some(e);
            }
        }
        if let Err(e) = self.sink.flush()
            && self.write_error.is_none()
        {
            self.write_error = Some(e);
        }
        match &self.write_error {
            // A closed pipe ends quietly with the status so far; a full disk is an error.
            Some(e) => sink::write_failed(e, status),
            None => status,
        }
    }
}

pub fn run(args: &Args) -> u8 {
    let new = match read_one_crd(&args.new) {
        Ok((_, c)) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INPUT_ERROR;
        }
    };
    let cluster = if args.cluster {
        match Cluster::connect(args.kubeconfig.as_deref(), args.context.as_deref()) {
            Ok(c) => Some(c),
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_INPUT_ERROR;
            }
        }
    } else {
        None
    };
    let current = match (&args.current, &cluster) {
        (Some(p), _) => match read_one_crd(p) {
            Ok((_, c)) => Some(c),
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_INPUT_ERROR;
            }
        },
        (None, Some(c)) => {
            let read = c.crd(&new.name).and_then(|v| match v {
                Some(v) => Crd::from_value(&v).map(Some).map_err(|e| e.to_string()),
                None => Ok(None),
            });
            match read {
                Ok(Some(c)) => Some(c),
                Ok(None) => {
                    eprintln!(
                        "note: the cluster has no CRD {}: there are no objects to judge",
                        new.name
                    );
                    None
                }
                Err(e) => {
                    eprintln!("error: reading {} from the cluster: {e}", new.name);
                    return EXIT_INPUT_ERROR;
                }
            }
        }
        (None, None) => None,
    };
    if new.conversion_strategy == "Webhook" {
        eprintln!(
            "note: {} converts versions with a webhook, which cannot run offline: objects are judged at the version they are read at",
            new.name
        );
        let storage = |c: &Crd| c.storage_version().map(|v| v.name.clone());
        if let Some(current) = &current
            && storage(current) != storage(&new)
        {
            eprintln!(
                "note: the storage version changes ({} -> {}): every object will be converted by the webhook when it is next written; once applied, `crd-audit roundtrip {}` shows what a round trip through it loses",
                storage(current).unwrap_or_else(|| "none".into()),
                storage(&new).unwrap_or_else(|| "none".into()),
                new.name
            );
        }
    }
    let release = match (args.kubernetes_version.as_deref(), &cluster) {
        (Some(v), _) => match v.parse::<crate::release::KubeVersion>() {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: --kubernetes-version: {e}");
                return EXIT_INPUT_ERROR;
            }
        },
        (None, Some(c)) => c.release(),
        (None, None) => crate::release::KubeVersion::default(),
    };
    let compiled = CrdValidator::for_release(&new, release.engine()).and_then(|new| {
        let current = current
            .as_ref()
            .map(|c| CrdValidator::for_release(c, release.engine()))
            .transpose()?;
        Ok((new, current))
    });
    let (new_validator, current_validator) = match compiled {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INPUT_ERROR;
        }
    };
    let stdout = std::io::stdout();
    let out = std::io::BufWriter::new(stdout.lock());
    let mut p = Planner {
        new: new_validator,
        current: current_validator,
        sink: sink::new(args.output, sink::Command::Plan, out),
        summaries: BTreeMap::new(),
        write_error: None,
        crd: new.name.clone(),
    };
    let mut input_errors = 0;
    if let Some(cluster) = &cluster {
        let served = current.is_some();
        for version in versions_to_read(&new).into_iter().filter(|_| served) {
            let r = cluster.each_object(&new, &version, &mut |obj| {
                let meta = |k: &str| obj["metadata"][k].as_str().unwrap_or("").to_string();
                let source = format!("cluster:{version}/{}/{}", meta("namespace"), meta("name"));
                p.judge(&source, obj, None);
            });
            if let Err(e) = r {
                eprintln!("error: {e}");
                input_errors += 1;
                p.sink.problem(e.to_string());
            }
        }
    } else {
        let files = match inputs::expand(&args.objects) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_INPUT_ERROR;
            }
        };
        for file in files {
            let name = inputs::display_name(&file);
            for (doc, text) in inputs::read_file_located(&file) {
                match doc {
                    Ok(d) => {
                        let paths = locate::item_paths(&d.doc.value);
                        let doc_line = d.doc.line;
                        let mut positions = LazyPositions::new(text);
                        for (k, item) in inputs::unpack_lists(d).into_iter().enumerate() {
                            let source = item.source();
                            let place = Place {
                                file: &name,
                                prefix: paths.get(k).map_or("", String::as_str),
                                doc_line,
                                positions: &mut positions,
                            };
                            p.judge(&source, item.doc.value, Some(place));
                        }
                    }
                    Err(e) => {
                        eprintln!("error: {e}");
                        input_errors += 1;
                        p.unreadable(&name, &e);
                    }
                }
            }
        }
    }
    p.finish(input_errors)
}

/// The storage version, then every other served version whose schema differs from it.
fn versions_to_read(crd: &Crd) -> Vec<String> {
    let storage = crd.storage_version();
    let mut out: Vec<String> = storage.iter().map(|v| v.name.clone()).collect();
    for v in &crd.versions {
        if v.served && storage.is_none_or(|s| s.name != v.name && s.schema != v.schema) {
            out.push(v.name.clone());
        }
    }
    out
}
