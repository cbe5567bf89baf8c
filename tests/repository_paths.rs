//! No file of the repository names an absolute path of one particular machine (a home
//! directory, a workspace checkout): tests and scripts find their data relative to the
//! repository or through variables.

use std::path::{Path, PathBuf};

/// Directories that hold no source of ours.
const SKIP: &[&str] = &[".git", "target", "work", "artifacts"];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == ".git" {
            // The repository's store, or in a git worktree a file naming it: not ours.
            continue;
        }
        if path.is_dir() {
            if !SKIP.contains(&name) {
                files(&path, out);
            }
        } else if name != ".git" {
            // In a git worktree `.git` is a file naming the main repository's directory.
            out.push(path);
        }
    }
}

/// `/work/...`, `/home/...`, `/root/...`, `/Users/...` where a path starts (not inside a
/// relative path such as `fuzz/work/...` or `$CACHE/root/...`).
fn machine_paths(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for prefix in ["/work/", "/home/", "/root/", "/Users/"] {
            let mut from = 0;
            while let Some(at) = line[from..].find(prefix) {
                let start = from + at;
                from = start + prefix.len();
                let before = line[..start].chars().next_back();
                let starts_a_path = before.is_none_or(|c| {
                    !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '}' | '$' | '/'))
                });
                if starts_a_path {
                    found.push((n + 1, line.trim().to_string()));
                }
            }
        }
    }
    found
}

#[test]
fn no_file_names_a_machine_path() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    files(root, &mut all);
    assert!(all.len() > 100, "too few files under {}", root.display());
    let mut bad = Vec::new();
    for file in all {
        // This file spells the patterns out.
        if file.ends_with("tests/repository_paths.rs") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue; // not text
        };
        for (line, content) in machine_paths(&text) {
            let shown = file
                .strip_prefix(root)
                .unwrap_or(&file)
                .display()
                .to_string();
            bad.push(format!("{shown}:{line}: {content}"));
        }
    }
    assert!(
        bad.is_empty(),
        "absolute machine paths:\n{}",
        bad.join("\n")
    );
}

#[test]
fn machine_paths_are_recognised() {
    assert_eq!(
        machine_paths(&format!("let d = \"/{}/shared/conformance\";", "work")).len(),
        1
    );
    assert_eq!(machine_paths(&format!("/{}/me/x", "home")).len(), 1);
    assert!(machine_paths("mkdir -p fuzz/work/load; ETCD=$C/root/usr/bin/etcd").is_empty());
    assert!(machine_paths("../shared/conformance").is_empty());
}
