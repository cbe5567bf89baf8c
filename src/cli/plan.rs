//! `crd-audit plan NEW-CRD (--objects PATH... | --cluster)`: which objects a CRD revision
//! breaks. Objects are judged as stored data (the whole object, status included) under the
//! new CRD, and under the current one (given with `--current`, or read from the cluster), at
//! the version they are read at. With `--cluster`, objects are read with paginated LISTs at
//! the storage version and at every other served version whose new schema differs, one page
//! at a time.

use super::diff::read_one_crd;
use super::inputs;
use super::locate::{self, LazyPositions, Located};
use super::output::Format;
use super::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR};
use crate::cluster::reader::Cluster;
use crd_audit_engine::Crd;
use crd_audit_engine::load::positions::Position;
use crd_audit_engine::{CrdValidator, Mode, Verdict};
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

#[derive(Default)]
struct Summary {
    read: usize,
    newly_invalid: usize,
    already_invalid: usize,
    /// Invalid objects the API server would refuse to update at all under the new CRD.
    stuck: usize,
}

struct Planner<W: Write> {
    new: CrdValidator,
    current: Option<CrdValidator>,
    out: W,
    format: Format,
    summaries: BTreeMap<String, Summary>,
    failed: bool,
    junit: super::junit::Report,
    sarif: super::sarif::Report,
    /// The CRD's name (objects read from the cluster are named after it in SARIF).
    crd: String,
    /// The API server validates updates with ratcheting.
    ratcheting: bool,
}

/// Where an object of a file stands: its file, its path in its document (for the items of
/// a `List`), its document's line, and the document's positions (read when needed).
struct Place<'a> {
    file: &'a str,
    prefix: &'a str,
    doc_line: usize,
    positions: &'a mut LazyPositions,
}

impl<W: Write> Planner<W> {
    /// Judges one object, read from a file (`place`) or from the cluster.
    fn judge(&mut self, source: &str, obj: Value, place: Option<Place>) {
        if obj.is_null() || !self.new.is_kind(&obj) {
            return; // other kinds are not this CRD's objects
        }
        let before = self
            .current
            .as_ref()
            .map(|v| v.validate(obj.clone(), Mode::Stored));
        let verdict = self.new.validate_stored(obj, self.ratcheting);
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
        let written = match self.format {
            Format::Json => {
                let mut m = serde_json::Map::new();
                m.insert("source".into(), Value::String(source.to_string()));
                if let Some((_, at)) = &located {
                    m.insert("line".into(), at.object.line.into());
                    m.insert("column".into(), at.object.column.into());
                }
                m.extend(super::output::verdict_json(&verdict));
                if let (Some((_, at)), Some(Value::Array(errors))) = (&located, m.get_mut("errors"))
                {
                    for (e, p) in errors.iter_mut().zip(&at.errors) {
                        if let Value::Object(e) = e {
                            e.insert("line".into(), p.line.into());
                            e.insert("column".into(), p.column.into());
                        }
                    }
                }
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
            Format::Sarif if verdict.valid() => Ok(()),
            Format::Sarif => {
                let object = match (verdict.namespace.as_str(), &located) {
                    (_, Some(_)) => String::new(),
                    ("", None) => format!("{}/{}", self.crd, verdict.name),
                    (ns, None) => format!("{}/{ns}/{}", self.crd, verdict.name),
                };
                let place = match &located {
                    Some((file, at)) => super::sarif::Place::File { file, source, at },
                    None => super::sarif::Place::Cluster { object: &object },
                };
                super::sarif::object_results(
                    &mut self.sarif,
                    &mut self.out,
                    &verdict,
                    &place,
                    true,
                    false,
                    Some(super::sarif::plan_rule(valid_before)),
                )
            }
            Format::Text if verdict.valid() => Ok(()),
            Format::Text => write_text(&mut self.out, source, &verdict, valid_before, &located),
        };
        if written.is_err() {
            self.failed = true;
        }
    }

    /// Prints the summary and ends the output; returns the exit status.
    fn finish(mut self, input_errors: usize) -> u8 {
        let mut breaking = 0;
        for (version, s) in &self.summaries {
            breaking += s.newly_invalid;
            let line = format!(
                "{version}: {} object(s) read, {} newly invalid, {} already invalid; {} stuck (the API server would refuse every update of them)",
                s.read, s.newly_invalid, s.already_invalid, s.stuck
            );
            match self.format {
                Format::Text => {
                    let _ = writeln!(self.out, "{line}");
                }
                Format::Json | Format::Junit | Format::Sarif => eprintln!("{line}"),
            }
        }
        let status = if input_errors > 0 || self.failed {
            EXIT_INPUT_ERROR
        } else if breaking > 0 {
            EXIT_FINDINGS
        } else {
            EXIT_CLEAN
        };
        if self.format == Format::Junit && !self.failed {
            let junit = std::mem::replace(&mut self.junit, super::junit::Report::new("plan"));
            let _ = junit.finish(&mut self.out);
        }
        if self.format == Format::Sarif && !self.failed {
            let sarif = std::mem::replace(&mut self.sarif, super::sarif::plan_report());
            let _ = sarif.finish(&mut self.out, status);
        }
        let _ = self.out.flush();
        status
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
    let mut p = Planner {
        new: new_validator,
        current: current_validator,
        out: std::io::BufWriter::new(stdout.lock()),
        format: args.output,
        summaries: BTreeMap::new(),
        failed: false,
        junit: super::junit::Report::new("plan"),
        sarif: super::sarif::plan_report(),
        crd: new.name.clone(),
        ratcheting: release.ratchets(),
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
                p.sarif.notify(super::sarif::Level::Error, e.to_string());
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
                        if args.output == Format::Junit {
                            let written = super::junit::check_input_error(
                                &mut p.junit,
                                &mut p.out,
                                &name,
                                &e,
                            );
                            p.failed |= written.is_err();
                        }
                        if args.output == Format::Sarif {
                            let written =
                                super::sarif::input_error(&mut p.sarif, &mut p.out, &name, &e);
                            p.failed |= written.is_err();
                        }
                    }
                }
            }
        }
    }
    p.finish(input_errors)
}

/// An object the new CRD refuses: a line saying so, then one a finding, each starting with
/// `file:line:column:` as compilers print positions (objects from the cluster: with their
/// source instead).
fn write_text(
    out: &mut impl Write,
    source: &str,
    verdict: &Verdict,
    valid_before: Option<bool>,
    located: &Option<(&str, Located)>,
) -> std::io::Result<()> {
    let name = format!("{} {}", verdict.kind, verdict.name);
    let head = |p: Option<&Position>| match (located, p) {
        (Some((file, _)), Some(p)) => format!("{file}:{}:{}: {name}", p.line, p.column),
        _ => format!("{source} {name}"),
    };
    let object = located.as_ref().map(|(_, at)| &at.object);
    let state = match valid_before {
        Some(true) => "breaks",
        Some(false) => "already invalid",
        None => "invalid under the new CRD",
    };
    writeln!(out, "{}: {state}", head(object))?;
    for (i, c) in verdict.errors.iter().enumerate() {
        let p = located.as_ref().and_then(|(_, at)| at.errors.get(i));
        writeln!(out, "{}:   {c}", head(p))?;
    }
    if let Some(e) = &verdict.request_error {
        writeln!(out, "{}:   {e}", head(object))?;
    }
    if let Some(u) = &verdict.update {
        let said = super::updates::stuck_or_tolerated(u);
        writeln!(out, "{}: {said}", head(object))?;
    }
    Ok(())
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
