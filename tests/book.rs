//! The book (`docs/`, built by mdBook; `README.md` is its front page) cannot drift from the
//! program: every command a page shows is a snippet file under `docs/snippets/`, included with
//! mdBook's include directive, and the snippets that need no cluster run here.
//!
//! A snippet `NAME.sh` starts with comment lines that say what it expects:
//! - `# exit: N`: its exit code (0 when absent);
//! - `# needs: cluster`: it runs against a cluster (the end-to-end tests run those);
//!   `# needs: cargo`: it builds the project (`cargo test`, `cargo install`);
//!   `# needs: release`: it fetches a published release. Snippets with a `needs` are not run
//!   here.
//!
//! `NAME.expected` beside it holds lines its output must contain: each (without trailing
//! blanks) within a line of standard output or error, in any order (a table row without its
//! AGE column is a line of `NAME.expected`).
//! A snippet runs with bash from a directory that stands for the repository's root: a
//! symlink to each of the root's entries (but `target` and `.git`), so that relative paths
//! read the repository and what a snippet writes (`> crd-audit.sarif`) lands there; with
//! `crd-audit` on `PATH`, the binary under test.
//!
//! Also checked: every include of a page names a file that exists; every snippet is shown by
//! a page (and every other file under `docs/snippets/` is shown or named by a snippet); a
//! shell block of a page holds includes of snippets and nothing else; every command of
//! `README.md` is a snippet line (`cargo run --release --` standing for `crd-audit`).

use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SNIPPETS: &str = "docs/snippets";
/// What `# needs:` may name.
const NEEDS: &[&str] = &["cluster", "cargo", "release"];
/// The fence languages of shell blocks.
const SHELL: &[&str] = &["sh", "bash", "shell", "console", "zsh"];
/// How long one snippet may run.
const TIMEOUT: Duration = Duration::from_secs(120);

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every file under `dir`, recursively, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A path relative to the repository's root, for messages.
fn shown(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// `a/b/../c` as `a/c`, without touching the file system (an include may name a file that
/// does not exist yet).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The book's pages: every Markdown file under `docs/` but the snippets.
fn pages() -> Vec<PathBuf> {
    let snippets = root().join(SNIPPETS);
    files_under(&root().join("docs"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "md") && !p.starts_with(&snippets))
        .collect()
}

/// The files a text includes (`{{#include PATH}}`, `{{#include PATH:LINES}}`,
/// `{{#include PATH:ANCHOR}}`; an include escaped with a backslash is text), resolved
/// against the including file's directory.
fn includes(file: &Path, text: &str) -> Vec<PathBuf> {
    let dir = file.parent().expect("a page's directory");
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("{{#include") {
        let start = from + at;
        from = start + "{{#include".len();
        if text[..start].ends_with('\\') {
            continue;
        }
        let Some(end) = text[from..].find("}}") else {
            panic!("{}: an include without its closing braces", shown(file));
        };
        let argument = text[from..from + end].trim();
        let path = argument.split(':').next().unwrap_or("").trim();
        assert!(
            !path.is_empty(),
            "{}: an include names no file",
            shown(file)
        );
        found.push(normalize(&dir.join(path)));
        from += end;
    }
    found
}

/// The shell blocks of a Markdown text: (first line number, lines).
fn shell_blocks(text: &str) -> Vec<(usize, Vec<String>)> {
    let mut blocks = Vec::new();
    let mut open: Option<(bool, usize, Vec<String>)> = None;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            match open.take() {
                None => {
                    let language = info
                        .split(|c: char| c == ',' || c.is_whitespace())
                        .next()
                        .unwrap_or("");
                    open = Some((SHELL.contains(&language), n + 1, Vec::new()));
                }
                Some((shell, first, lines)) => {
                    if shell {
                        blocks.push((first, lines));
                    }
                }
            }
        } else if let Some((_, _, lines)) = open.as_mut() {
            lines.push(line.to_string());
        }
    }
    blocks
}

struct Snippet {
    /// Relative to the repository's root.
    path: PathBuf,
    exit: i32,
    needs: Vec<String>,
}

/// A snippet's header: its leading comment lines.
fn snippet(path: &Path) -> Snippet {
    let text = read(path);
    let mut exit = 0;
    let mut needs = Vec::new();
    for line in text.lines() {
        let Some(comment) = line.trim_start().strip_prefix('#') else {
            break;
        };
        let comment = comment.trim();
        if let Some(code) = comment.strip_prefix("exit:") {
            exit = code
                .trim()
                .parse()
                .unwrap_or_else(|e| panic!("{}: `# exit:` {code:?}: {e}", shown(path)));
        } else if let Some(what) = comment.strip_prefix("needs:") {
            for word in what.split([',', ' ']).filter(|w| !w.is_empty()) {
                assert!(
                    NEEDS.contains(&word),
                    "{}: `# needs: {word}` is none of {NEEDS:?}",
                    shown(path)
                );
                needs.push(word.to_string());
            }
        }
    }
    Snippet {
        path: path.strip_prefix(root()).unwrap_or(path).to_path_buf(),
        exit,
        needs,
    }
}

fn snippets() -> Vec<Snippet> {
    let all: Vec<Snippet> = files_under(&root().join(SNIPPETS))
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "sh"))
        .map(|p| snippet(p))
        .collect();
    assert!(all.len() >= 20, "only {} snippets", all.len());
    all
}

/// Every file the pages include, as absolute normalized paths.
fn included() -> BTreeSet<PathBuf> {
    pages()
        .iter()
        .flat_map(|page| includes(page, &read(page)))
        .collect()
}

#[test]
fn every_include_names_a_file_that_exists() {
    let mut missing = Vec::new();
    for page in pages() {
        for target in includes(&page, &read(&page)) {
            if !target.is_file() {
                missing.push(format!("{} includes {}", shown(&page), shown(&target)));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "includes of files that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_snippet_is_shown_by_a_page() {
    let included = included();
    let texts: Vec<String> = snippets()
        .iter()
        .map(|s| read(&root().join(&s.path)))
        .collect();
    let mut problems = Vec::new();
    for file in files_under(&root().join(SNIPPETS)) {
        let name = shown(&file);
        match file.extension().and_then(|e| e.to_str()) {
            Some("sh") => {
                if !included.contains(&file) {
                    problems.push(format!("{name}: no page includes it"));
                }
            }
            Some("expected") => {
                if !file.with_extension("sh").is_file() {
                    problems.push(format!("{name}: no snippet beside it"));
                }
            }
            _ => {
                if !included.contains(&file) && !texts.iter().any(|t| t.contains(&name)) {
                    problems.push(format!(
                        "{name}: neither shown by a page nor named by a snippet"
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn shell_blocks_show_only_snippets() {
    let snippets = root().join(SNIPPETS);
    let mut problems = Vec::new();
    for page in pages() {
        let text = read(&page);
        for (first, lines) in shell_blocks(&text) {
            for line in lines.iter().filter(|l| !l.trim().is_empty()) {
                let targets = includes(&page, line);
                let only_includes = line.trim().starts_with("{{#include")
                    && line.trim().ends_with("}}")
                    && targets.len() == 1;
                if !only_includes || !targets.iter().all(|t| t.starts_with(&snippets)) {
                    problems.push(format!(
                        "{}:{first}: a shell block shows {line:?}, not a snippet of {SNIPPETS}",
                        shown(&page)
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_readme_commands_are_snippets() {
    let lines: BTreeSet<String> = snippets()
        .iter()
        .flat_map(|s| {
            read(&root().join(&s.path))
                .lines()
                .map(|l| l.trim().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    let readme = read(&root().join("README.md"));
    let mut commands = 0;
    let mut missing = Vec::new();
    for (first, block) in shell_blocks(&readme) {
        for line in block.iter().map(|l| l.trim()).filter(|l| !l.is_empty()) {
            commands += 1;
            let command = line.replace("cargo run --release -- ", "crd-audit ");
            if !lines.contains(&command) {
                missing.push(format!("README.md:{first}: {line}"));
            }
        }
    }
    assert!(commands >= 10, "README.md shows {commands} commands");
    assert!(
        missing.is_empty(),
        "README.md commands that are no snippet line:\n{}",
        missing.join("\n")
    );
}

/// The ids `.pre-commit-config.yaml` of the pre-commit page names are hooks of
/// `.pre-commit-hooks.yaml`.
#[test]
fn the_pre_commit_page_names_hooks_that_exist() {
    fn ids(text: &str) -> BTreeSet<String> {
        text.lines()
            .filter_map(|l| {
                let l = l.trim_start().trim_start_matches("- ").trim_start();
                l.strip_prefix("id:")
            })
            .map(|id| {
                id.trim()
                    .trim_matches(|c| c == '"' || c == '\'')
                    .to_string()
            })
            .collect()
    }
    let used = ids(&read(
        &root().join(SNIPPETS).join("ci/pre-commit-config.yaml"),
    ));
    let offered = ids(&read(&root().join(".pre-commit-hooks.yaml")));
    assert!(!used.is_empty());
    let unknown: Vec<&String> = used.difference(&offered).collect();
    assert!(
        unknown.is_empty(),
        "docs/snippets/ci/pre-commit-config.yaml names hooks .pre-commit-hooks.yaml lacks: {unknown:?}"
    );
}

/// A directory standing for the repository's root, and one with `crd-audit` in it.
fn scratch(name: &str) -> (PathBuf, PathBuf) {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("book-snippets-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&base);
    let (work, bin) = (base.join("work"), base.join("bin"));
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_crd-audit"), bin.join("crd-audit")).unwrap();
    for entry in std::fs::read_dir(root()).unwrap() {
        let entry = entry.unwrap();
        let file_name = entry.file_name();
        if file_name == "target" || file_name == ".git" {
            continue;
        }
        std::os::unix::fs::symlink(entry.path(), work.join(&file_name)).unwrap();
    }
    (work, bin)
}

/// Runs one snippet; what went wrong, if anything.
fn run(snippet: &Snippet, index: usize) -> Option<String> {
    let name = shown(&snippet.path);
    let stem = snippet.path.file_stem().unwrap().to_string_lossy();
    let (work, bin) = scratch(&format!("{index:02}-{stem}"));
    let out_path = work.join(".snippet.stdout");
    let err_path = work.join(".snippet.stderr");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin];
    paths.extend(std::env::split_paths(&path));
    let mut child = Command::new("bash")
        .arg(root().join(&snippet.path))
        .current_dir(&work)
        .env("PATH", std::env::join_paths(paths).unwrap())
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(File::create(&out_path).unwrap())
        .stderr(File::create(&err_path).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("bash {name}: {e}"));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Some(format!("{name}: still running after {TIMEOUT:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = read(&out_path);
    let stderr = read(&err_path);
    let mut problems = Vec::new();
    if status.code() != Some(snippet.exit) {
        problems.push(format!(
            "exit {:?}, expected {}",
            status.code(),
            snippet.exit
        ));
    }
    let expected = root().join(&snippet.path).with_extension("expected");
    if expected.is_file() {
        let output: Vec<&str> = stdout.lines().chain(stderr.lines()).collect();
        for line in read(&expected).lines().map(str::trim_end) {
            if !line.is_empty() && !output.iter().any(|l| l.contains(line)) {
                problems.push(format!("no line holds {line:?}"));
            }
        }
    }
    if problems.is_empty() {
        None
    } else {
        Some(format!(
            "{name}: {}\n--- stdout\n{stdout}--- stderr\n{stderr}",
            problems.join("; ")
        ))
    }
}

#[test]
fn the_snippets_that_need_no_cluster_run() {
    let all = snippets();
    let offline: Vec<&Snippet> = all.iter().filter(|s| s.needs.is_empty()).collect();
    assert!(
        offline.len() >= 15,
        "only {} snippets run here",
        offline.len()
    );
    let failures: Vec<String> = offline
        .iter()
        .enumerate()
        .filter_map(|(i, s)| run(s, i))
        .collect();
    let _ = std::fs::remove_dir_all(
        Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("book-snippets-{}", std::process::id())),
    );
    assert!(
        failures.is_empty(),
        "{} of {} snippets failed:\n{}",
        failures.len(),
        offline.len(),
        failures.join("\n")
    );
}

#[test]
fn includes_and_blocks_are_found() {
    let page = root().join("docs/guides/x.md");
    let text =
        "a {{#include ../snippets/a.sh}} b \\{{#include nope}} {{#include ../../CHANGELOG.md:8:}}";
    assert_eq!(
        includes(&page, text),
        vec![
            root().join("docs/snippets/a.sh"),
            root().join("CHANGELOG.md")
        ]
    );
    let blocks = shell_blocks("```sh\nx\n```\n```text\ny\n```\n```bash,ignore\nz\n```\n");
    assert_eq!(
        blocks,
        vec![(1, vec!["x".to_string()]), (7, vec!["z".to_string()])]
    );
}
