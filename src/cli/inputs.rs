//! Reading the command line's inputs: files, directories (recursively, `*.yaml`, `*.yml`,
//! `*.json`), and `-` for standard input; every document with its `file#index` source.

use crate::load::{self, Document, LoadError};
use std::io::Read;
use std::path::{Path, PathBuf};

/// One input document with the name of the place it came from.
pub struct Sourced {
    pub file: String,
    pub doc: Document,
}

impl Sourced {
    /// `file#docIndex`, as findings name their source.
    pub fn source(&self) -> String {
        format!("{}#{}", self.file, self.doc.index)
    }
}

/// Expands the arguments into files; directories are walked in sorted order.
pub fn expand(args: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for a in args {
        if a.as_os_str() == "-" {
            out.push(a.clone());
        } else if a.is_dir() {
            walk(a, &mut out).map_err(|e| format!("{}: {e}", a.display()))?;
        } else if a.is_file() {
            out.push(a.clone());
        } else {
            return Err(format!("{}: no such file or directory", a.display()));
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out)?;
        } else if p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
        {
            out.push(p);
        }
    }
    Ok(())
}

/// Reads one file (or stdin for `-`) and returns its documents.
pub fn read_file(path: &Path) -> Vec<Result<Sourced, LoadError>> {
    let name = if path.as_os_str() == "-" {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    };
    let mut text = String::new();
    let read = if path.as_os_str() == "-" {
        std::io::stdin().read_to_string(&mut text).map(|_| ())
    } else {
        std::fs::read(path).and_then(|bytes| {
            text = String::from_utf8(bytes).map_err(|e| {
                std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not UTF-8: {e}"))
            })?;
            Ok(())
        })
    };
    if let Err(e) = read {
        return vec![Err(LoadError {
            source_name: name,
            doc: None,
            line: None,
            message: e.to_string(),
        })];
    }
    load::parse_str(&name, &text)
        .into_iter()
        .map(|r| {
            r.map(|doc| Sourced {
                file: name.clone(),
                doc,
            })
        })
        .collect()
}

/// Unpacks `kind: List` documents into their items (each keeps the document's source).
pub fn unpack_lists(doc: Sourced) -> Vec<Sourced> {
    let is_list = doc
        .doc
        .value
        .get("kind")
        .and_then(|k| k.as_str())
        .is_some_and(|k| k == "List" || k.ends_with("List"))
        && doc.doc.value.get("items").is_some_and(|i| i.is_array());
    if !is_list {
        return vec![doc];
    }
    let Sourced { file, doc } = doc;
    let items = match doc.value {
        serde_json::Value::Object(mut m) => match m.remove("items") {
            Some(serde_json::Value::Array(items)) => items,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    items
        .into_iter()
        .map(|value| Sourced {
            file: file.clone(),
            doc: Document {
                index: doc.index,
                line: doc.line,
                value,
            },
        })
        .collect()
}
