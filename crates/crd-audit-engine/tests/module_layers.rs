//! The engine's top-level modules form layers: a module may use only modules of lower layers
//! (so there is no cycle between them). This test reads the engine's source files and checks
//! every `crate::<module>` path and every `use crate::{...}` group against the order below.

use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first. Modules of one layer may not use each other.
const LAYERS: &[&[&str]] = &[
    // Go standard library behaviour; depends on nothing.
    &["go"],
    // Kubernetes value semantics (kube-openapi strfmt formats) on top of go.
    &["k8s"],
    // Helpers that depend on nothing in the engine: the panic guard, test data lookup.
    &["guard", "testing"],
    &["load", "cause"],
    &["schema"],
    &["crd"],
    &["cel"],
    // The release judged by: its CEL environments, what its server drops from a CRD.
    &["release"],
    &["validate"],
    &["structural"],
    &["diff"],
    &["fuzz"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// One use of another top-level module: (line, used module).
fn crate_references(source: &str) -> Vec<(usize, String)> {
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

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
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
fn top_module(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib").then(|| name.to_string())
}

/// Every use of a module that is not in a lower layer, as `file:line: a uses b`.
fn violations(src: &Path) -> Vec<String> {
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
        let Some(own) = layer_of(&module) else {
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
            match layer_of(&used) {
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

#[test]
fn engine_modules_use_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = violations(&src);
    assert!(bad.is_empty(), "layering violations:\n{}", bad.join("\n"));
}

#[test]
fn every_top_level_module_has_a_layer() {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs");
    let text = fs::read_to_string(&lib).expect("src/lib.rs");
    // `pub mod x;` lines, and the modules listed in `internal_modules!(...)`.
    let mut modules: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .filter_map(|l| l.strip_suffix(';'))
        // The macro's own `pub mod $name;`.
        .filter(|m| !m.starts_with('$'))
        .collect();
    let internal = text
        .split("internal_modules!(")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .expect("an internal_modules!(...) list in src/lib.rs");
    modules.extend(internal.split(',').map(str::trim).filter(|m| !m.is_empty()));
    assert!(modules.len() > 5, "no modules read from src/lib.rs");
    for m in modules {
        assert!(
            layer_of(m).is_some(),
            "module `{m}` of src/lib.rs is in no layer"
        );
    }
}

#[test]
fn references_are_found_in_paths_and_groups() {
    let source = "use crate::go::regexp;\n\
                  // crate::diff in a comment is not a use\n\
                  use crate::{\n    cel::value::Val,\n    schema::{Items, Props},\n    k8s,\n};\n\
                  fn f() { crate::validate::object::run(); }\n";
    let found = crate_references(source);
    let expected: Vec<(usize, String)> = [
        (1, "go"),
        (4, "cel"),
        (5, "schema"),
        (6, "k8s"),
        (8, "validate"),
    ]
    .iter()
    .map(|(l, m)| (*l, m.to_string()))
    .collect();
    assert_eq!(found, expected);
}
