//! The CRDs `validate` judges against, by group and kind, each compiled only when an object
//! of its kind first needs it. A CRD read from a regular file is not kept in memory: the
//! catalog remembers where it stands and reads it again when it is needed (a cluster's CRD
//! set can be thousands of generated CRDs of up to 1.7 MB each, and the compiled form of one
//! is several times its YAML); a CRD from standard input, a pipe or the cluster is kept as
//! decoded until it is compiled.

use super::inputs::{self, Sourced, unreadable_crd};
use crate::packed_crd::PackedCrd;
use crate::release::KubeVersion;
use crd_audit_engine::{Crd, CrdValidator};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// Where a CRD can be had again.
enum Origin {
    /// Item `item` of document `doc` of a regular file (item 0 of a document that is not a
    /// `List`).
    File {
        path: PathBuf,
        doc: usize,
        item: usize,
    },
    /// Decoded and kept packed (standard input, a pipe, the cluster), until compiled.
    Held(Box<PackedCrd>),
}

struct Entry {
    /// `file#doc` (or `cluster:NAME`), for messages.
    source: String,
    origin: Mutex<Option<Origin>>,
    compiled: OnceLock<Result<CrdValidator, String>>,
}

/// The CRDs given, by group and kind, compiled on first use (or why one could not be).
pub struct Catalog {
    by_kind: HashMap<(String, String), Entry>,
    /// The release whose CEL environment the CRDs are compiled in.
    release: KubeVersion,
    /// Where the CRDs come from, for the message about an object none defines.
    pub origin: &'static str,
    /// CRDs of the cluster that could not be read (an internal error each).
    pub unreadable: usize,
}

/// CRDs as read: (source, where to read it again or the CRD itself).
pub struct Indexed(Vec<(String, (String, String), Origin)>);

impl Indexed {
    /// The number of CRDs.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The group and kind of every CRD.
    pub fn kinds(&self) -> impl Iterator<Item = &(String, String)> {
        self.0.iter().map(|(_, k, _)| k)
    }

    /// Adds CRDs held in memory (from the cluster).
    pub fn extend_held(&mut self, crds: Vec<(String, PackedCrd)>) {
        for (source, crd) in crds {
            let shell = crd.shell();
            let key = (shell.group.clone(), shell.kind.clone());
            self.0.push((source, key, Origin::Held(Box::new(crd))));
        }
    }
}

/// Whether a path can be read a second time (a regular file, not standard input or a pipe).
fn rereadable(path: &Path) -> bool {
    path != Path::new("-") && std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// Reads the CRDs of files, directories or `-`, checking that each decodes, and keeps only
/// where each stands (or, for a stream, the CRD). Documents that are not CRDs are skipped.
pub fn index_crds(args: &[PathBuf]) -> Result<Indexed, Vec<String>> {
    let files = inputs::expand(args).map_err(|e| vec![e])?;
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for file in files {
        let again = rereadable(&file);
        for doc in inputs::read_file(&file) {
            let doc = match doc {
                Ok(d) => d,
                Err(e) => {
                    errors.push(e.to_string());
                    continue;
                }
            };
            let index = doc.doc.index;
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
                        let key = (c.group.clone(), c.kind.clone());
                        let origin = if again {
                            Origin::File {
                                path: file.clone(),
                                doc: index,
                                item: k,
                            }
                        } else {
                            Origin::Held(Box::new(PackedCrd::pack(c)))
                        };
                        out.push((item.source(), key, origin));
                    }
                    Err(e) => errors.push(unreadable_crd(&item, &e)),
                }
                crd_audit_engine::load::drop_value(item.doc.value);
            }
        }
    }
    if errors.is_empty() {
        Ok(Indexed(out))
    } else {
        Err(errors)
    }
}

/// Reads a CRD again from where [`index_crds`] found it.
fn reread(path: &Path, doc: usize, item: usize) -> Result<Crd, String> {
    let display = inputs::display_name(path);
    for d in inputs::read_file(path) {
        let d = d.map_err(|e| e.to_string())?;
        if d.doc.index != doc {
            crd_audit_engine::load::drop_value(d.doc.value);
            continue;
        }
        let items = inputs::try_unpack_lists(d).map_err(|(e, _)| e.to_string())?;
        let found: Option<Sourced> = items.into_iter().nth(item);
        let found = found.ok_or_else(|| format!("{display}#{doc}: the CRD is gone"))?;
        return Crd::from_value(&found.doc.value).map_err(|e| unreadable_crd(&found, &e));
    }
    Err(format!(
        "{display}#{doc}: the CRD is gone (the file changed)"
    ))
}

impl Catalog {
    /// The catalog of the CRDs read, to be compiled for a release; two CRDs for one group
    /// and kind are an input error.
    pub fn new(crds: Indexed, release: KubeVersion) -> Result<Catalog, String> {
        let mut by_kind = HashMap::with_capacity(crds.0.len());
        for (source, key, origin) in crds.0 {
            if let Some(first) = by_kind.get(&key).map(|e: &Entry| e.source.clone()) {
                return Err(format!(
                    "{source}: a second CRD for kind {} in group {} (the first is {first})",
                    key.1, key.0
                ));
            }
            let entry = Entry {
                source,
                origin: Mutex::new(Some(origin)),
                compiled: OnceLock::new(),
            };
            by_kind.insert(key, entry);
        }
        Ok(Catalog {
            by_kind,
            release,
            origin: "given with --crd",
            unreadable: 0,
        })
    }

    /// The compiled CRD for an object's `apiVersion` and `kind` (`Err` with the message of
    /// the error when it could not be read again or compiled). The first object of a kind
    /// compiles its CRD; others of that kind wait for it.
    pub fn find(&self, obj: &Value) -> Option<Result<&CrdValidator, &str>> {
        let api_version = obj.get("apiVersion")?.as_str()?;
        let kind = obj.get("kind")?.as_str()?;
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        let entry = self.by_kind.get(&(group.to_string(), kind.to_string()))?;
        let compile = |crd: &Crd| {
            CrdValidator::for_release(crd, self.release.engine()).map_err(|e| e.to_string())
        };
        let compiled = entry.compiled.get_or_init(|| {
            let origin = entry
                .origin
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            match origin {
                Some(Origin::Held(crd)) => crd
                    .unpack()
                    .map_err(|e| e.to_string())
                    .and_then(|crd| compile(&crd)),
                Some(Origin::File { path, doc, item }) => {
                    reread(&path, doc, item).and_then(|crd| compile(&crd))
                }
                None => Err(format!("{}: the CRD could not be compiled", entry.source)),
            }
        });
        Some(compiled.as_ref().map_err(String::as_str))
    }
}
