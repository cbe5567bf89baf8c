//! `ARCHITECTURE.md` says what the code is; these tests fail when a sentence they can check
//! stops being true: every module path it names exists (and every item it names in one), the
//! unstable kube-runtime parts it lists are the ones the code calls, and the periods of what
//! runs at rest are the code's.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn architecture() -> String {
    std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap()
}

/// The texts in backticks.
fn quoted(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// Every `.rs` file under `dir` (or the file itself).
fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for e in std::fs::read_dir(path).unwrap() {
            rust_files(&e.unwrap().path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

/// The module at `segments` under `src` (a file, or a directory with `mod.rs`), if any.
fn module(src: &Path, segments: &[&str]) -> Option<PathBuf> {
    let base = segments.iter().fold(src.to_path_buf(), |p, s| p.join(s));
    let file = base.with_extension("rs");
    if file.is_file() {
        return Some(file);
    }
    base.join("mod.rs").is_file().then_some(base)
}

/// Whether an item `name` is defined in the module at `path` (or below it).
fn defines(path: &Path, name: &str) -> bool {
    let mut files = Vec::new();
    rust_files(path, &mut files);
    let kinds = [
        "struct", "enum", "fn", "const", "static", "trait", "type", "mod",
    ];
    files.iter().any(|f| {
        let text = std::fs::read_to_string(f).unwrap();
        text.lines().any(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
            let l = l.strip_prefix("pub(super) ").unwrap_or(l);
            let l = l.strip_prefix("pub ").unwrap_or(l);
            let l = l.strip_prefix("async ").unwrap_or(l);
            kinds.iter().any(|k| {
                l.strip_prefix(k)
                    .and_then(|r| r.strip_prefix(' '))
                    .is_some_and(|r| {
                        r.strip_prefix(name).is_some_and(|after| {
                            !after.starts_with(|c: char| c.is_alphanumeric() || c == '_')
                        })
                    })
            })
        })
    })
}

const TOP: &[&str] = &[
    "operator",
    "gate",
    "cluster",
    "audit",
    "cli",
    "migration",
    "judging_pool",
    "packed_crd",
    "release",
    "program",
    "allocator",
];

#[test]
fn every_module_and_item_it_names_exists() {
    let src = root().join("src");
    let mut checked = 0;
    let mut missing = Vec::new();
    for q in quoted(&architecture()) {
        let path = q.replace('/', "::");
        let segments: Vec<&str> = path.split("::").collect();
        if !TOP.contains(&segments[0])
            || segments
                .iter()
                .any(|s| s.is_empty() || !s.chars().all(|c| c.is_alphanumeric() || c == '_'))
        {
            continue;
        }
        // The longest prefix that is a module; what follows is an item of it (a method
        // after its type is not looked for).
        let Some((at, file)) = (1..=segments.len())
            .rev()
            .find_map(|n| module(&src, &segments[..n]).map(|f| (n, f)))
        else {
            missing.push(format!("{q}: no module {}", segments[0]));
            continue;
        };
        if let Some(item) = segments.get(at)
            && !defines(&file, item)
        {
            missing.push(format!("{q}: {item} is not defined in {}", file.display()));
        }
        checked += 1;
    }
    assert!(missing.is_empty(), "{missing:#?}");
    assert!(checked >= 40, "only {checked} paths checked");
}

/// kube-runtime's `Controller` methods behind its `unstable-runtime-*` features.
const UNSTABLE: &[&str] = &[
    "for_stream",
    "for_shared_stream",
    "owns_stream",
    "owns_shared_stream",
    "watches_stream",
    "watches_shared_stream",
    "reconcile_on",
];

#[test]
fn the_unstable_kube_runtime_parts_it_lists_are_the_ones_called() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut called = BTreeSet::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for m in UNSTABLE {
                if line.contains(&format!(".{m}(")) || line.contains(&format!("::{m}(")) {
                    called.insert(*m);
                }
            }
        }
    }
    let text = architecture();
    let at = text
        .find("unstable kube-runtime parts")
        .expect("the sentence about kube-runtime's unstable parts");
    let from = text[..at].rfind(". ").map_or(0, |i| i + 2);
    let to = at
        + [". ", ".\n"]
            .iter()
            .filter_map(|end| text[at..].find(end))
            .min()
            .unwrap_or(text.len() - at);
    let sentence = &text[from..to];
    let listed: BTreeSet<&str> = quoted(sentence)
        .into_iter()
        .filter(|q| UNSTABLE.contains(q))
        .collect();
    assert_eq!(listed, called, "{sentence}");
    let count = ["", "One", "Two", "Three", "Four", "Five"][called.len()];
    assert!(
        sentence.contains(&format!("{count} unstable kube-runtime parts")),
        "{sentence}"
    );
}

/// A constant of a source file, as written.
fn constant(file: &str, line_start: &str) -> String {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    text.lines()
        .find(|l| l.starts_with(line_start))
        .unwrap_or_else(|| panic!("{file}: no `{line_start}`"))
        .to_string()
}

#[test]
fn what_runs_at_rest_runs_as_often_as_it_says() {
    let text = architecture()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let cases = [
        (
            "src/operator/leadership/lease.rs",
            "pub const RETRY: Duration",
            "Duration::from_secs(2)",
            "the Lease's renewal every 2 s",
        ),
        (
            "src/gate/webhook_config.rs",
            "const CHECK: Duration",
            "Duration::from_secs(15)",
            "its webhook configuration every 15 s",
        ),
        (
            "src/gate/mod.rs",
            "const RENEW_CHECK: Duration",
            "Duration::from_secs(3600)",
            "watched, and checked hourly",
        ),
        (
            "src/gate/mod.rs",
            "const RELOAD: Duration",
            "Duration::from_secs(60)",
            "certificate files read every minute",
        ),
        (
            "src/cluster/client.rs",
            "const WATCH_KEEP_ALIVE: Duration",
            "Duration::from_secs(120)",
            "a ping every 2 minutes on each connection of object watches",
        ),
    ];
    for (file, start, value, said) in cases {
        let line = constant(file, start);
        assert!(
            line.contains(value),
            "{file}: {line} (ARCHITECTURE.md: {said})"
        );
        assert!(
            text.contains(said),
            "ARCHITECTURE.md no longer says {said:?}"
        );
    }
}

/// What ARCHITECTURE.md says of the writer of the reports and Events: how many reports it
/// writes at once (the order it takes writes in is tested on the fake API:
/// `reports_with_findings_are_written_first`).
#[test]
fn the_writer_works_as_it_says() {
    let text = architecture()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let line = constant(
        "src/operator/reports/writer.rs",
        "const REPORTS_IN_FLIGHT: usize",
    );
    assert!(line.contains("= 4;"), "{line}");
    // The policy report writers' only timer at rest, the LIST at the full resync, is held by
    // their unit test (`at_rest_a_writer_sleeps_until_its_first_deadline`).
    assert!(text.contains("each writer's LIST of its reports at the full resync"));
    for said in [
        "writes up to four at once",
        "a report with findings, then the oldest Event, then a clean report",
    ] {
        assert!(
            text.contains(said),
            "ARCHITECTURE.md no longer says {said:?}"
        );
    }
}
