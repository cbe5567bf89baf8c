//! `crd-audit diff OLD NEW`: every schema change between two revisions of one CRD.

use super::inputs;
use super::locate::{self, DocText};
use super::sink::{self, Format, SchemaChange, Totals};
use super::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR};
use crd_audit_engine::Crd;
use crd_audit_engine::load::positions::{DocumentPositions, Position};
use crd_audit_engine::{Change, Class, diff};
use std::cell::OnceCell;
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
    // Each change stands in the new CRD's file: its document is read again when a sink
    // first asks where one stands.
    let positions: OnceCell<Option<DocumentPositions>> = OnceCell::new();
    let at = |c: &Change| -> Position {
        let positions = positions
            .get_or_init(|| place.text.as_ref().and_then(DocText::positions))
            .as_ref();
        let object = locate::object_position(&place.prefix, place.doc_line, positions);
        match positions {
            Some(p) => p.locate(&locate::join(
                &place.prefix,
                &change_field(c, &new, p, &place.prefix),
            )),
            None => object,
        }
    };
    let stdout = std::io::stdout();
    let mut sink = sink::new(args.output, sink::Command::Diff, stdout.lock());
    let written = changes
        .iter()
        .try_for_each(|c| {
            sink.schema_change(&SchemaChange {
                crd: &new.name,
                file: &place.file,
                change: c,
                at: &|| at(c),
            })
        })
        .and_then(|()| {
            sink.totals(&Totals::Diff {
                crd: &new.name,
                changes: &changes,
            })
        })
        .and_then(|()| sink.finish(status))
        .and_then(|()| sink.flush());
    match written {
        Ok(()) => status,
        Err(e) => sink::write_failed(&e, status),
    }
}
