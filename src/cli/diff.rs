//! `crd-audit diff OLD NEW`: every schema change between two revisions of one CRD.

use super::inputs;
use super::output::{self, Format};
use super::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR};
use crd_audit_engine::Crd;
use crd_audit_engine::{Class, diff};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The CRD as it is (a file holding one CRD, or `-`).
    #[arg(value_name = "OLD")]
    pub old: PathBuf,
    /// The CRD as it will be.
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    pub output: Format,
}

/// The one CRD in a file (an input error otherwise).
pub fn read_one_crd(path: &Path) -> Result<(String, Crd), String> {
    let mut crds = inputs::read_crds(&[path.to_path_buf()]).map_err(|e| e.join("\n"))?;
    match crds.len() {
        1 => Ok(crds.remove(0)),
        0 => Err(format!(
            "{}: no CustomResourceDefinition found",
            path.display()
        )),
        n => Err(format!(
            "{}: {n} CustomResourceDefinitions found, expected one",
            path.display()
        )),
    }
}

pub fn run(args: &Args) -> u8 {
    let (old, new) = match (read_one_crd(&args.old), read_one_crd(&args.new)) {
        (Ok((_, o)), Ok((_, n))) => (o, n),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return EXIT_INPUT_ERROR;
        }
    };
    if old.group != new.group || old.kind != new.kind {
        eprintln!(
            "error: {} and {} are not revisions of one CRD ({} vs {})",
            args.old.display(),
            args.new.display(),
            old.name,
            new.name
        );
        return EXIT_INPUT_ERROR;
    }
    let changes = diff(&old, &new);
    let tightening = changes
        .iter()
        .filter(|c| c.class == Class::Tightening)
        .count();
    let status = if tightening > 0 {
        EXIT_FINDINGS
    } else {
        EXIT_CLEAN
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.output == Format::Junit {
        let written = super::junit::diff_report(&mut out, &new.name, &changes);
        return match written.and_then(|()| out.flush()) {
            Ok(()) => status,
            Err(e) => output::write_failed(&e, status),
        };
    }
    for c in &changes {
        let written = match args.output {
            Format::Json | Format::Junit => writeln!(out, "{}", c.to_json()),
            Format::Text => {
                let version = if c.version.is_empty() {
                    "*"
                } else {
                    &c.version
                };
                let path = if c.path.is_empty() {
                    "<version>"
                } else {
                    &c.path
                };
                writeln!(
                    out,
                    "{version} {path}: {} ({}): {}",
                    c.class.as_str(),
                    c.kind,
                    c.reason
                )
            }
        };
        if let Err(e) = written {
            return output::write_failed(&e, status);
        }
    }
    let mut written = Ok(());
    if args.output == Format::Text {
        written = writeln!(
            out,
            "{} change(s): {tightening} tightening, {} loosening, {} neutral",
            changes.len(),
            changes
                .iter()
                .filter(|c| c.class == Class::Loosening)
                .count(),
            changes.iter().filter(|c| c.class == Class::Neutral).count()
        );
    }
    match written.and_then(|()| out.flush()) {
        Ok(()) => status,
        Err(e) => output::write_failed(&e, status),
    }
}
