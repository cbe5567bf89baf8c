//! Checking that a crate's top-level modules form layers: a module may use only modules of
//! lower layers. Shared by the engine's `module_layers` test and the binary crate's
//! (`tests/module_layers.rs` of the workspace root includes this file).

use std::fs;
use std::path::{Path, PathBuf};

/// The layer of `module` in `layers` (lowest first).
pub fn layer_of(layers: &[&[&str]], module: &str) -> Option<usize> {
    layers.iter().position(|l| l.contains(&module))
}

/// One use of another top-level module: (line, used module).
pub fn crate_references(source: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    // Comments are not dependencies (doc links may point anywhere).
    let code: String = source
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("//") {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let bytes = code.as_bytes();
    let line_at = |i: usize| code[..i].matches('\n').count() + 1;
    let mut from = 0;
    while let Some(at) = code[from..].find("crate::") {
        let start = from + at;
        from = start + "crate::".len();
        // `crd_audit_engine::crate::` cannot occur; skip identifiers ending in `crate`.
        if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
            continue;
        }
        let rest = &code[from..];
        if rest.starts_with('{') {
            // The first segment of each item of the group, at brace depth 1.
            let mut depth = 0usize;
            let mut expect_item = false;
            for (k, c) in rest.char_indices() {
                match c {
                    '{' => {
                        depth += 1;
                        expect_item = depth == 1;
                    }
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => expect_item = true,
                    c if expect_item && (c.is_ascii_alphabetic() || c == '_') => {
                        expect_item = false;
                        let name: String = rest[k..]
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                            .collect();
                        found.push((line_at(from + k), name));
                    }
                    _ => {}
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.push((line_at(from), name));
            }
        }
    }
    found
}

pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file under `src` belongs to (`None` for lib.rs).
pub fn top_module(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib").then(|| name.to_string())
}

/// Every use of a module that is not in a lower layer of `layers`, as `file:line: a uses
/// b`.
pub fn violations(src: &Path, layers: &[&[&str]]) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    assert!(files.len() > 20, "too few sources under {}", src.display());
    let mut bad = Vec::new();
    for file in &files {
        let Some(module) = top_module(src, file) else {
            continue;
        };
        let shown = file.strip_prefix(src).unwrap_or(file).display().to_string();
        let Some(own) = layer_of(layers, &module) else {
            bad.push(format!(
                "{shown}: module `{module}` is in no layer of this test"
            ));
            continue;
        };
        let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{shown}: {e}"));
        for (line, used) in crate_references(&text) {
            if used == module {
                continue;
            }
            match layer_of(layers, &used) {
                Some(l) if l < own => {}
                Some(_) => bad.push(format!(
                    "src/{shown}:{line}: `{module}` uses `{used}`, which is not in a lower layer"
                )),
                None => bad.push(format!(
                    "src/{shown}:{line}: `{module}` uses `{used}`, which is in no layer of this test"
                )),
            }
        }
    }
    bad
}
