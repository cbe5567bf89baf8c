//! Reading the command line's inputs: files, directories (recursively, `*.yaml`, `*.yml`,
//! `*.json`), and `-` for standard input; every document with its `file#index` source.

use super::locate::{DocText, POSITIONS_MAX_TEXT, PieceText};
use crd_audit_engine::load::stream::{DocumentStream, Piece, PieceReader};
use crd_audit_engine::load::{Document, LoadError};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One input document with the name of the place it came from.
pub struct Sourced {
    pub file: String,
    pub doc: Document,
}

/// Why a CRD document cannot be read: `file#doc (line n): path: message`.
pub fn unreadable_crd(item: &Sourced, e: &crd_audit_engine::CrdError) -> String {
    format!(
        "{} (line {}): {}: {}",
        item.source(),
        item.doc.line,
        e.path,
        e.message
    )
}

impl Sourced {
    /// `file#docIndex`, as findings name their source.
    pub fn source(&self) -> String {
        format!("{}#{}", self.file, self.doc.index)
    }
}

/// Expands the arguments into files; directories are walked in sorted order, following
/// symbolic links but not into a directory that is already being walked (a loop, which is
/// reported on standard error and skipped). A named file that is not a regular file (a pipe
/// such as `<(cat crd.yaml)`, `/dev/stdin`, a FIFO) is read as a stream; inside a directory
/// only regular files are read.
pub fn expand(args: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for a in args {
        if a.as_os_str() == "-" {
            out.push(a.clone());
            continue;
        }
        match std::fs::metadata(a) {
            Ok(m) if m.is_dir() => {
                let mut ancestors = vec![dir_id(a, &m)];
                walk(a, &mut ancestors, &mut out).map_err(|e| format!("{}: {e}", a.display()))?;
            }
            Ok(_) => out.push(a.clone()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(format!("{}: no such file or directory", a.display()));
            }
            Err(e) => return Err(format!("{}: {e}", a.display())),
        }
    }
    Ok(out)
}

/// What identifies a directory however it is reached: device and inode (on Unix), or the
/// canonical path.
#[derive(Clone, Debug, PartialEq, Eq)]
enum DirId {
    #[cfg_attr(not(unix), allow(dead_code))]
    Inode(u64, u64),
    #[cfg_attr(unix, allow(dead_code))]
    Path(PathBuf),
}

fn dir_id(path: &Path, meta: &std::fs::Metadata) -> DirId {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = path;
        DirId::Inode(meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        DirId::Path(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()))
    }
}

/// Walks `dir`, whose identity and those of the directories above it on the current path
/// are `ancestors`.
fn walk(dir: &Path, ancestors: &mut Vec<DirId>, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for p in entries {
        // Follows symbolic links; a dangling one is left to fail when it is read.
        let meta = std::fs::metadata(&p).ok();
        if let Some(m) = meta.as_ref().filter(|m| m.is_dir()) {
            let id = dir_id(&p, m);
            if ancestors.contains(&id) {
                eprintln!(
                    "warning: {}: skipped: a directory loop (it leads back to a directory being read)",
                    p.display()
                );
                continue;
            }
            ancestors.push(id);
            let walked = walk(&p, ancestors, out);
            ancestors.pop();
            walked?;
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
            && meta.as_ref().is_none_or(std::fs::Metadata::is_file)
        {
            out.push(p);
        }
    }
    Ok(())
}

/// The name an input is reported by: the path as given (`-` for standard input, as it was
/// given).
pub fn display_name(path: &Path) -> String {
    path.display().to_string()
}

/// Reads one file (or stdin for `-`) document by document: memory is bounded by the largest
/// document, not the file.
pub fn read_file(path: &Path) -> Box<dyn Iterator<Item = Result<Sourced, LoadError>>> {
    let name = display_name(path);
    let reader = match open(path) {
        Ok(r) => r,
        Err(e) => return Box::new(std::iter::once(Err(e))),
    };
    let file = name.clone();
    Box::new(DocumentStream::new(&name, reader).map(move |r| {
        r.map(|doc| Sourced {
            file: file.clone(),
            doc,
        })
    }))
}

/// A document read with [`read_file_located`], and its text when it is kept for positions.
pub type LocatedDoc = (Result<Sourced, LoadError>, Option<DocText>);

/// [`read_file`], keeping each document's text (up to [`POSITIONS_MAX_TEXT`] a piece) so
/// that its findings can be placed at their fields.
pub fn read_file_located(path: &Path) -> Box<dyn Iterator<Item = LocatedDoc>> {
    Box::new(LocatedStream {
        pieces: read_pieces(path),
        file: display_name(path),
        next_index: 0,
        ready: VecDeque::new(),
    })
}

struct LocatedStream {
    pieces: Box<dyn Iterator<Item = Result<Piece, LoadError>>>,
    file: String,
    next_index: usize,
    ready: VecDeque<LocatedDoc>,
}

impl Iterator for LocatedStream {
    type Item = LocatedDoc;

    fn next(&mut self) -> Option<LocatedDoc> {
        while self.ready.is_empty() {
            let piece = match self.pieces.next()? {
                Ok(p) => p,
                Err(mut e) => {
                    e.doc = Some(self.next_index);
                    self.next_index += 1;
                    return Some((Err(e), None));
                }
            };
            let docs = piece.parse(&self.file);
            let text = (piece.text.len() <= POSITIONS_MAX_TEXT).then(|| {
                Arc::new(PieceText {
                    text: piece.text,
                    line_offset: piece.line_offset,
                })
            });
            // Numbered after the documents of the pieces before, as `DocumentStream` does;
            // positions are read by the index within the piece.
            for d in docs {
                let index = self.next_index;
                self.next_index += 1;
                self.ready.push_back(match d {
                    Ok(mut doc) => {
                        let at = text.clone().map(|piece| DocText {
                            piece,
                            index: doc.index,
                        });
                        doc.index = index;
                        let file = self.file.clone();
                        (Ok(Sourced { file, doc }), at)
                    }
                    Err(mut e) => {
                        e.doc = Some(index);
                        (Err(e), None)
                    }
                });
            }
        }
        self.ready.pop_front()
    }
}

/// Reads one file (or stdin for `-`) as undecoded pieces of about one document each.
pub fn read_pieces(path: &Path) -> Box<dyn Iterator<Item = Result<Piece, LoadError>>> {
    let name = display_name(path);
    match open(path) {
        Ok(reader) => Box::new(PieceReader::new(&name, reader)),
        Err(e) => Box::new(std::iter::once(Err(e))),
    }
}

fn open(path: &Path) -> Result<Box<dyn BufRead>, LoadError> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(BufReader::with_capacity(
            1 << 16,
            std::io::stdin(),
        )));
    }
    match std::fs::File::open(path) {
        Ok(f) => Ok(Box::new(BufReader::with_capacity(1 << 16, f))),
        Err(e) => Err(LoadError::new(
            display_name(path),
            None,
            None,
            e.to_string(),
        )),
    }
}

/// Unpacks list documents into their items as kubectl does (each keeps the document's
/// source); a list that kubectl could not decode is returned as it is. Prefer
/// [`try_unpack_lists`], which reports such lists.
pub fn unpack_lists(doc: Sourced) -> Vec<Sourced> {
    let copy = Sourced {
        file: doc.file.clone(),
        doc: Document::new(doc.doc.index, doc.doc.line, serde_json::Value::Null),
    };
    match try_unpack_lists(doc) {
        Ok(items) => items,
        Err((_, value)) => vec![Sourced {
            doc: Document::new(copy.doc.index, copy.doc.line, value),
            ..copy
        }],
    }
}

/// Unpacks list documents into their items as kubectl does; each item keeps the document's
/// source. See [`crd_audit_engine::load::list::unpack_list`].
pub fn try_unpack_lists(doc: Sourced) -> Result<Vec<Sourced>, (LoadError, serde_json::Value)> {
    let Sourced { file, doc } = doc;
    let docs = crd_audit_engine::load::list::unpack_list(&file, doc)?;
    Ok(docs
        .into_iter()
        .map(|doc| Sourced {
            file: file.clone(),
            doc,
        })
        .collect())
}
