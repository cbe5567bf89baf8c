//! `crd-audit plan NEW-CRD (--objects PATH... | --cluster)`: which objects a CRD revision
//! breaks. Objects are judged as stored data (the whole object, status included) under the
//! new CRD, and under the current one (given with `--current`, or read from the cluster), at
//! the version they are read at. With `--cluster`, objects are read with paginated LISTs at
//! the storage version and at every other served version whose new schema differs, one page
//! at a time.

use super::cluster::Cluster;
use super::diff::read_one_crd;
use super::inputs;
use super::output::Format;
use super::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR};
use crd_audit_engine::Crd;
use crd_audit_engine::{CrdValidator, Mode};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
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
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    pub output: Format,
}

#[derive(Default)]
struct Summary {
    read: usize,
    newly_invalid: usize,
    already_invalid: usize,
}

struct Planner<W: Write> {
    new: CrdValidator,
    current: Option<CrdValidator>,
    out: W,
    format: Format,
    summaries: BTreeMap<String, Summary>,
    failed: bool,
    junit: super::junit::Report,
}

impl<W: Write> Planner<W> {
    fn judge(&mut self, source: &str, obj: Value) {
        if obj.is_null() || !self.new.is_kind(&obj) {
            return; // other kinds are not this CRD's objects
        }
        let before = self
            .current
            .as_ref()
            .map(|v| v.validate(obj.clone(), Mode::Stored));
        let verdict = self.new.validate(obj, Mode::Stored);
        let s = self
            .summaries
            .entry(verdict.api_version.clone())
            .or_default();
        s.read += 1;
        let valid_before = before.as_ref().map(|b| b.valid());
        match (valid_before, verdict.valid()) {
            (Some(true) | None, false) => s.newly_invalid += 1,
            (Some(false), false) => s.already_invalid += 1,
            _ => {}
        }
        let written = match self.format {
            Format::Json => {
                let mut m = serde_json::Map::new();
                m.insert("source".into(), Value::String(source.to_string()));
                m.extend(verdict.to_json());
                m.insert(
                    "validBefore".into(),
                    valid_before.map_or(Value::Null, Value::Bool),
                );
                writeln!(self.out, "{}", Value::Object(m))
            }
            Format::Junit => {
                let suite = source.rsplit_once('#').map_or("cluster", |(f, _)| f);
                let name = if verdict.namespace.is_empty() {
                    format!("{} {}", verdict.kind, verdict.name)
                } else {
                    format!("{} {}/{}", verdict.kind, verdict.namespace, verdict.name)
                };
                let outcome = super::junit::object_outcome(&verdict, false);
                self.junit
                    .case(&mut self.out, suite, source, &name, &outcome)
            }
            Format::Text if verdict.valid() => Ok(()),
            Format::Text => {
                let head = format!("{source} {} {}", verdict.kind, verdict.name);
                let state = match valid_before {
                    Some(true) => "breaks",
                    Some(false) => "already invalid",
                    None => "invalid under the new CRD",
                };
                let mut r = writeln!(self.out, "{head}: {state}");
                for c in &verdict.errors {
                    r = r.and_then(|()| writeln!(self.out, "{head}:   {c}"));
                }
                if let Some(e) = &verdict.request_error {
                    r = r.and_then(|()| writeln!(self.out, "{head}:   {e}"));
                }
                r
            }
        };
        if written.is_err() {
            self.failed = true;
        }
    }

    /// Prints the summary; returns the number of objects the revision breaks.
    fn finish(mut self) -> usize {
        let mut breaking = 0;
        for (version, s) in &self.summaries {
            breaking += s.newly_invalid;
            let line = format!(
                "{version}: {} object(s) read, {} newly invalid, {} already invalid",
                s.read, s.newly_invalid, s.already_invalid
            );
            match self.format {
                Format::Text => {
                    let _ = writeln!(self.out, "{line}");
                }
                Format::Json | Format::Junit => eprintln!("{line}"),
            }
        }
        if self.format == Format::Junit && !self.failed {
            let junit = std::mem::replace(&mut self.junit, super::junit::Report::new("plan"));
            let _ = junit.finish(&mut self.out);
        }
        let _ = self.out.flush();
        breaking
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
    }
    let stdout = std::io::stdout();
    let mut p = Planner {
        new: CrdValidator::new(&new),
        current: current.as_ref().map(CrdValidator::new),
        out: std::io::BufWriter::new(stdout.lock()),
        format: args.output,
        summaries: BTreeMap::new(),
        failed: false,
        junit: super::junit::Report::new("plan"),
    };
    let mut input_errors = 0;
    if let Some(cluster) = &cluster {
        let served = current.is_some();
        for version in versions_to_read(&new).into_iter().filter(|_| served) {
            let r = cluster.each_object(&new, &version, &mut |obj| {
                let meta = |k: &str| obj["metadata"][k].as_str().unwrap_or("").to_string();
                let source = format!("cluster:{version}/{}/{}", meta("namespace"), meta("name"));
                p.judge(&source, obj);
            });
            if let Err(e) = r {
                eprintln!("error: {e}");
                input_errors += 1;
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
            for doc in inputs::read_file(&file) {
                match doc {
                    Ok(d) => {
                        for item in inputs::unpack_lists(d) {
                            let source = item.source();
                            p.judge(&source, item.doc.value);
                        }
                    }
                    Err(e) => {
                        eprintln!("error: {e}");
                        input_errors += 1;
                        if args.output == Format::Junit {
                            let file = inputs::display_name(&file);
                            let written = super::junit::check_input_error(
                                &mut p.junit,
                                &mut p.out,
                                &file,
                                &e,
                            );
                            p.failed |= written.is_err();
                        }
                    }
                }
            }
        }
    }
    let failed = p.failed;
    let breaking = p.finish();
    if input_errors > 0 || failed {
        EXIT_INPUT_ERROR
    } else if breaking > 0 {
        EXIT_FINDINGS
    } else {
        EXIT_CLEAN
    }
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
