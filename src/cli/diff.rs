//! `crd-audit diff OLD NEW`: every schema change between two revisions of one CRD.

use super::inputs;
use super::locate::{self, DocText};
use super::output::{self, Format};
use super::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR};
use crd_audit_engine::Crd;
use crd_audit_engine::load::positions::{DocumentPositions, Position};
use crd_audit_engine::{Change, Class, diff};
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
    read_one_crd_located(path).map(|(source, crd, _)| (source, crd))
}

/// Where a CRD stands in its file: the file (as given), its document's line, its path in
/// the document (for the items of a `List`), and the document's text.
pub struct CrdPlace {
    pub file: String,
    pub doc_line: usize,
    pub prefix: String,
    pub text: Option<DocText>,
}

/// [`read_one_crd`], with where the CRD stands.
pub fn read_one_crd_located(path: &Path) -> Result<(String, Crd, CrdPlace), String> {
    let mut crds = Vec::new();
    let mut errors = Vec::new();
    for (doc, text) in inputs::read_file_located(path) {
        let doc = match doc {
            Ok(d) => d,
            Err(e) => {
                errors.push(e.to_string());
                continue;
            }
        };
        let paths = locate::item_paths(&doc.doc.value);
        let doc_line = doc.doc.line;
        let items = match inputs::try_unpack_lists(doc) {
            Ok(items) => items,
            Err((e, _)) => {
                errors.push(e.to_string());
                continue;
            }
        };
        for (k, item) in items.into_iter().enumerate() {
            if !Crd::is_crd(&item.doc.value) {
                continue;
            }
            match Crd::from_value(&item.doc.value) {
                Ok(c) => {
                    let place = CrdPlace {
                        file: item.file.clone(),
                        doc_line,
                        prefix: paths.get(k).cloned().unwrap_or_default(),
                        text: text.clone(),
                    };
                    crds.push((item.source(), c, place));
                }
                Err(e) => errors.push(inputs::unreadable_crd(&item, &e)),
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors.join("\n"));
    }
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

/// A change as the text output prints it: `version path: class (kind): reason`.
pub fn change_line(c: &Change) -> String {
    format!("{}: {}", change_head(c), c.reason)
}

/// What a change is, without why: `version path: class (kind)` (`*` for every version,
/// `<version>` for the version itself).
pub fn change_head(c: &Change) -> String {
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
    format!("{version} {path}: {} ({})", c.class.as_str(), c.kind)
}

/// The field of the new CRD's document (at `prefix`) a change is about: a CRD field
/// (`spec.scope`), a version (`spec.versions[i]`), or a node of the version's schema. A
/// change's schema path starts with a property of the root (`spec.properties[replicas]`
/// is `properties[spec].properties[replicas]`) or, for the root's own keywords, with the
/// keyword (`required`); the one that exists in the document is taken.
fn change_field(c: &Change, new: &Crd, p: &DocumentPositions, prefix: &str) -> String {
    if c.version.is_empty() {
        return c.path.clone();
    }
    let Some(i) = new.versions.iter().position(|v| v.name == c.version) else {
        return "spec.versions".to_string(); // a removed version
    };
    let version = format!("spec.versions[{i}]");
    if c.path.is_empty() {
        return version;
    }
    if c.path.starts_with("subresources") {
        return format!("{version}.{}", c.path);
    }
    let root = locate::crd_document_field(p, prefix, &format!("{version}.schema.openAPIV3Schema"));
    let (first, rest) = c
        .path
        .split_at(c.path.find(['.', '[']).unwrap_or(c.path.len()));
    let property = format!("{root}.properties[{first}]{rest}");
    let keyword = format!("{root}.{}", c.path);
    let exists = |f: &str| p.find(&locate::join(prefix, f)).is_some();
    if !exists(&property) && exists(&keyword) {
        keyword
    } else {
        property
    }
}

pub fn run(args: &Args) -> u8 {
    let (old, (new, place)) = match (read_one_crd(&args.old), read_one_crd_located(&args.new)) {
        (Ok((_, o)), Ok((_, n, place))) => (o, (n, place)),
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
    // Each change stands in the new CRD's file (positions read only for JSON and SARIF).
    let positions = match args.output {
        Format::Json | Format::Sarif if !changes.is_empty() => {
            place.text.as_ref().and_then(DocText::positions)
        }
        _ => None,
    };
    let at = |c: &Change| -> Position {
        let object = locate::object_position(&place.prefix, place.doc_line, positions.as_ref());
        match &positions {
            Some(p) => p.locate(&locate::join(
                &place.prefix,
                &change_field(c, &new, p, &place.prefix),
            )),
            None => object,
        }
    };
    if args.output == Format::Sarif {
        let mut sarif = super::sarif::diff_report();
        let mut written = Ok(());
        for c in &changes {
            let p = at(c);
            written = sarif.result(
                &mut out,
                &super::sarif::Finding {
                    rule: super::sarif::change_rule(c.class),
                    level: None,
                    message: &change_line(c),
                    location: &super::sarif::Location::File {
                        path: place.file.clone(),
                        line: p.line,
                        column: p.column,
                    },
                    object: &new.name,
                    field: &format!("{}:{}", c.version, c.path),
                    properties: vec![
                        ("version", c.version.clone().into()),
                        ("path", c.path.clone().into()),
                        ("changeKind", c.kind.into()),
                        ("class", c.class.as_str().into()),
                    ],
                },
            );
            if written.is_err() {
                break;
            }
        }
        let written = written.and_then(|()| sarif.finish(&mut out, status));
        return match written.and_then(|()| out.flush()) {
            Ok(()) => status,
            Err(e) => output::write_failed(&e, status),
        };
    }
    if args.output == Format::Junit {
        let written = super::junit::diff_report(&mut out, &new.name, &changes);
        return match written.and_then(|()| out.flush()) {
            Ok(()) => status,
            Err(e) => output::write_failed(&e, status),
        };
    }
    for c in &changes {
        let written = match args.output {
            Format::Json | Format::Junit | Format::Sarif => {
                let mut v = c.to_json();
                let p = at(c);
                v["line"] = p.line.into();
                v["column"] = p.column.into();
                writeln!(out, "{v}")
            }
            Format::Text => writeln!(out, "{}", change_line(c)),
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
