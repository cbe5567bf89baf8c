//! `crd-audit plan NEW-CRD --objects PATH...`: which objects a CRD revision breaks. Objects
//! are judged as stored data (the whole object, status included) under the new CRD, and
//! under the current one when it is given, at the version they are written at.

use super::diff::read_one_crd;
use super::inputs;
use super::output::Format;
use super::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR};
use crate::validate::{CrdValidator, Mode};
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
    /// revision breaks.
    #[arg(long, value_name = "CRD")]
    pub current: Option<PathBuf>,
    /// Read the objects (and the current CRD) from the cluster of the current kubeconfig
    /// context.
    #[arg(long, conflicts_with = "objects")]
    pub cluster: bool,
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

pub fn run(args: &Args) -> u8 {
    if args.cluster {
        eprintln!(
            "error: --cluster is not available in this build yet; export the objects (kubectl get <kind> -A -o yaml) and pass them with --objects"
        );
        return EXIT_INPUT_ERROR;
    }
    let new = match read_one_crd(&args.new) {
        Ok((_, c)) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INPUT_ERROR;
        }
    };
    let current = match &args.current {
        Some(p) => match read_one_crd(p) {
            Ok((_, c)) => Some(c),
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_INPUT_ERROR;
            }
        },
        None => None,
    };
    let files = match inputs::expand(&args.objects) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INPUT_ERROR;
        }
    };
    let new_v = CrdValidator::new(&new);
    let cur_v = current.as_ref().map(CrdValidator::new);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut input_errors = 0;
    let mut summaries: BTreeMap<String, Summary> = BTreeMap::new();
    if new.conversion_strategy == "Webhook" {
        eprintln!(
            "note: {} converts versions with a webhook, which cannot run offline: objects are judged at the version they are written at",
            new.name
        );
    }
    for file in files {
        for doc in inputs::read_file(&file) {
            let doc = match doc {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("error: {e}");
                    input_errors += 1;
                    continue;
                }
            };
            for item in inputs::unpack_lists(doc) {
                let source = item.source();
                let obj = item.doc.value;
                if obj.is_null() || !new_v.is_kind(&obj) {
                    continue; // other kinds are not this CRD's objects
                }
                let before = cur_v
                    .as_ref()
                    .map(|v| v.validate(obj.clone(), Mode::Stored));
                let verdict = new_v.validate(obj, Mode::Stored);
                let s = summaries.entry(verdict.api_version.clone()).or_default();
                s.read += 1;
                let valid_before = before.as_ref().map(|b| b.valid());
                match (valid_before, verdict.valid()) {
                    (Some(true), false) | (None, false) => s.newly_invalid += 1,
                    (Some(false), false) => s.already_invalid += 1,
                    _ => {}
                }
                let written = match args.output {
                    Format::Json => {
                        let mut m = serde_json::Map::new();
                        m.insert("source".into(), Value::String(source.clone()));
                        m.extend(verdict.to_json());
                        m.insert(
                            "validBefore".into(),
                            valid_before.map_or(Value::Null, Value::Bool),
                        );
                        writeln!(out, "{}", Value::Object(m))
                    }
                    Format::Text => {
                        let head = format!("{source} {} {}", verdict.kind, verdict.name);
                        if verdict.valid() {
                            Ok(())
                        } else {
                            let state = match valid_before {
                                Some(true) => "breaks",
                                Some(false) => "already invalid",
                                None => "invalid under the new CRD",
                            };
                            let mut r = writeln!(out, "{head}: {state}");
                            for c in &verdict.errors {
                                r = r.and_then(|()| writeln!(out, "{head}:   {c}"));
                            }
                            if let Some(e) = &verdict.request_error {
                                r = r.and_then(|()| writeln!(out, "{head}:   {e}"));
                            }
                            r
                        }
                    }
                };
                if written.is_err() {
                    return EXIT_INPUT_ERROR;
                }
            }
        }
    }
    let mut breaking = 0;
    for (version, s) in &summaries {
        breaking += s.newly_invalid;
        let line = format!(
            "{version}: {} object(s) read, {} newly invalid, {} already invalid",
            s.read, s.newly_invalid, s.already_invalid
        );
        match args.output {
            Format::Text => {
                let _ = writeln!(out, "{line}");
            }
            Format::Json => eprintln!("{line}"),
        }
    }
    let _ = out.flush();
    if input_errors > 0 {
        EXIT_INPUT_ERROR
    } else if breaking > 0 {
        EXIT_FINDINGS
    } else {
        EXIT_CLEAN
    }
}
