//! No source file of ours is over `MAX_LINES` lines: a longer file is split by concern. The
//! exceptions are engine modules that each mirror one piece of upstream code, kept whole so
//! that they can be read side by side with it; the list stays honest (an entry whose file is
//! gone or no longer long fails too).

use std::path::{Path, PathBuf};

/// The most lines a source file may have.
const MAX_LINES: usize = 800;

/// Files allowed over `MAX_LINES` (from the repository root), each with the upstream code it
/// mirrors.
const ALLOWED: &[(&str, &str)] = &[
    (
        "crates/crd-audit-engine/src/go/time.rs",
        "Go's time package: formatting and parsing (src/time/format.go)",
    ),
    (
        "crates/crd-audit-engine/src/cel/parser/mod.rs",
        "cel-go's parser (parser/parser.go) with its ANTLR parser's errors",
    ),
    (
        "crates/crd-audit-engine/src/go/regexp/syntax.rs",
        "Go's regexp/syntax parser (src/regexp/syntax/parse.go)",
    ),
    (
        "crates/crd-audit-engine/src/cel/functions.rs",
        "cel-go's standard library overloads and their dispatch",
    ),
    (
        "crates/crd-audit-engine/src/k8s/formats.rs",
        "kube-openapi's strfmt formats (pkg/validation/strfmt)",
    ),
    (
        "crates/crd-audit-engine/src/k8s/quantity.rs",
        "apimachinery's resource.Quantity (pkg/api/resource/quantity.go)",
    ),
    (
        "crates/crd-audit-engine/src/cel/cost_estimate.rs",
        "cel-go's checker cost estimator (checker/cost.go)",
    ),
];

/// Where our Rust sources are, from the repository root; `*` stands for every directory
/// there (each crate of `crates/`).
const SOURCES: &[&str] = &[
    "build.rs",
    "src",
    "tests",
    "examples",
    "benches",
    "fuzz",
    "crates/*/build.rs",
    "crates/*/src",
    "crates/*/tests",
    "crates/*/benches",
    "crates/*/examples",
];

/// Directories that hold no source of ours: third-party code (`vendor/`), build output.
const SKIP: &[&str] = &["vendor", "target", ".git"];

/// `pattern` with its `*` expanded (at most one).
fn expand(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let Some((before, after)) = pattern.split_once("/*/") else {
        return vec![root.join(pattern)];
    };
    let Ok(entries) = std::fs::read_dir(root.join(before)) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_dir())
        .map(|p| p.join(after))
        .collect();
    out.sort();
    out
}

/// Every `*.rs` file at or under `path`.
fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.to_path_buf());
        }
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return; // absent: not every crate has benches or examples
    };
    for entry in entries {
        let path = entry.expect("directory entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() && SKIP.contains(&name) {
            continue;
        }
        rust_files(&path, out);
    }
}

fn lines(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().count()
}

#[test]
fn no_source_file_is_over_the_limit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for pattern in SOURCES {
        for path in expand(root, pattern) {
            rust_files(&path, &mut files);
        }
    }
    files.sort();
    files.dedup();
    assert!(
        files.iter().any(|f| f.ends_with("src/main.rs"))
            && files
                .iter()
                .any(|f| f.ends_with("crates/crd-audit-engine/src/lib.rs")),
        "the source files were not found under {} ({} files)",
        root.display(),
        files.len()
    );
    let mut bad = Vec::new();
    for file in &files {
        let shown = file.strip_prefix(root).unwrap_or(file);
        let allowed = ALLOWED.iter().any(|(p, _)| shown == Path::new(p));
        let n = lines(file);
        if n > MAX_LINES && !allowed {
            bad.push(format!(
                "{}: {n} lines (at most {MAX_LINES}: split it by concern)",
                shown.display()
            ));
        }
    }
    for (path, _) in ALLOWED {
        let file = root.join(path);
        if !files.contains(&file) {
            bad.push(format!(
                "{path}: allowed over {MAX_LINES} lines but not found: take it off ALLOWED"
            ));
        } else if lines(&file) <= MAX_LINES {
            bad.push(format!(
                "{path}: allowed over {MAX_LINES} lines but has {}: take it off ALLOWED",
                lines(&file)
            ));
        }
    }
    assert!(bad.is_empty(), "source files too long:\n{}", bad.join("\n"));
}

#[test]
fn every_allowed_file_names_what_it_mirrors() {
    for (i, (path, upstream)) in ALLOWED.iter().enumerate() {
        assert!(
            path.starts_with("crates/crd-audit-engine/src/"),
            "{path}: only engine modules mirroring upstream code may be long"
        );
        assert!(
            !upstream.trim().is_empty(),
            "{path}: no upstream code named"
        );
        assert!(
            ALLOWED[..i].iter().all(|(p, _)| p != path),
            "{path}: listed twice"
        );
    }
}
