//! Support for the project's own tests, benchmarks and fuzz targets (feature `internals`; not
//! a public API).

use std::path::{Path, PathBuf};

/// The workspace root (the directory holding the top-level `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    // Cargo sets the variable for the test process too. The value compiled in can name
    // another checkout: cargo hashes a workspace member by its path inside the workspace,
    // so two checkouts that share a target directory share test binaries.
    // The variable names the package under test: the engine (two levels down) or the
    // workspace's root package itself. The root is the nearest directory up whose
    // Cargo.toml has a [workspace] table.
    let dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    dir.ancestors()
        .find(|d| {
            std::fs::read_to_string(d.join("Cargo.toml"))
                .is_ok_and(|t| t.lines().any(|l| l.trim() == "[workspace]"))
        })
        .map(Path::to_path_buf)
        .unwrap_or_else(|| dir.join("../.."))
}

/// The one way every test finds the shared conformance corpus: `CRD_AUDIT_CONFORMANCE`
/// (relative paths from the workspace root), else `../shared/conformance` from the
/// workspace root.
///
/// When the corpus is missing this panics if the variable was given or `CI` is set (a test
/// run that cannot find its data must fail there); elsewhere it prints a notice and returns
/// `None`, and the caller skips.
pub fn conformance_dir() -> Option<PathBuf> {
    let given = std::env::var_os("CRD_AUDIT_CONFORMANCE").filter(|v| !v.is_empty());
    let dir = match &given {
        Some(v) => workspace_root().join(v),
        None => workspace_root().join("../shared/conformance"),
    };
    if dir.join("cases").is_dir() {
        return Some(dir);
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    if given.is_some() || ci {
        panic!(
            "the conformance corpus is not at {} ({}): the tests that compare with the upstream code cannot run",
            dir.display(),
            if given.is_some() {
                "CRD_AUDIT_CONFORMANCE"
            } else {
                "../shared/conformance from the workspace root; CI is set"
            }
        );
    }
    eprintln!(
        "NOTICE: conformance corpus not found at {} (set CRD_AUDIT_CONFORMANCE); skipping",
        dir.display()
    );
    None
}

/// The case directories of the corpus (those with a `crd.yaml`), sorted by id.
pub fn conformance_cases(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir.join("cases"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join("cases").display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("crd.yaml").is_file())
        .collect();
    out.sort();
    out
}

/// A JSON file of the corpus or of stored expectations.
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A cause as compared with upstream's: (field, type, message).
pub type Key = (String, String, String);

/// The comparison key of a cause in upstream's JSON form.
pub fn key_of(v: &serde_json::Value) -> Key {
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
    (s("field"), s("type"), s("message"))
}

/// `text` without the random number upstream gives the type of a CEL rule's `self`
/// (`selfType<digits>` becomes `selfType`).
pub fn without_self_type_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("selfType") {
        out.push_str(&rest[..i + "selfType".len()]);
        rest = rest[i + "selfType".len()..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// [`key_of`] without `selfType` numbers (see [`without_self_type_numbers`]).
pub fn key_of_normalized(v: &serde_json::Value) -> Key {
    let (f, t, m) = key_of(v);
    (
        without_self_type_numbers(&f),
        without_self_type_numbers(&t),
        without_self_type_numbers(&m),
    )
}

/// The multiset difference of causes: (expected but missing from ours, extra in ours).
pub fn multiset_diff(expected: &[Key], actual: &[Key]) -> (Vec<Key>, Vec<Key>) {
    let mut rest: Vec<Key> = actual.to_vec();
    let mut missing = Vec::new();
    for e in expected {
        if let Some(i) = rest.iter().position(|a| a == e) {
            rest.swap_remove(i);
        } else {
            missing.push(e.clone());
        }
    }
    (missing, rest)
}
