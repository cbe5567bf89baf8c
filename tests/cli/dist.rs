//! Distribution: shell completions, the commit in `--version`, the kubectl plugin name and the
//! krew manifest.

use crate::common::{run, text};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn completions_name_the_subcommands() {
    for shell in ["bash", "zsh", "fish"] {
        let out = run(&["completions", shell], None);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        assert!(script.len() > 200, "{shell}: {script}");
        for word in ["crd-audit", "validate", "check", "diff", "completions"] {
            assert!(
                script.contains(word),
                "{shell} script lacks {word}:\n{script}"
            );
        }
    }
    let out = run(&["completions", "no-such-shell"], None);
    assert_eq!(out.status.code(), Some(2));
}

/// The commit of this checkout, if this package is one (`git` present, the package directory
/// its top level), as build.rs records it.
fn checkout_commit() -> Option<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let top = PathBuf::from(git(&["rev-parse", "--show-toplevel"])?);
    if top.canonicalize().ok()? != dir.canonicalize().ok()? {
        return None;
    }
    git(&["rev-parse", "--short=12", "HEAD"])
}

#[test]
fn version_names_the_commit() {
    let out = run(&["--version"], None);
    assert_eq!(out.status.code(), Some(0));
    let version = text(&out.stdout);
    assert!(
        version.starts_with(&format!("crd-audit {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{version}"
    );
    match checkout_commit() {
        Some(commit) => {
            assert_eq!(commit.len(), 12);
            assert!(
                version.contains(&format!("(commit {commit}")),
                "{version} vs {commit}"
            );
        }
        // A source tree without git: build.rs could not know the commit either.
        None => assert!(version.contains("(commit unknown)"), "{version}"),
    }
}

/// The allocator is chosen when the binary is built, and `--version` says which: mimalloc
/// by default, glibc's malloc with the feature the operator's image is built with.
#[test]
fn version_names_the_allocator_the_build_chose() {
    let out = run(&["--version"], None);
    let version = text(&out.stdout);
    let allocator = if cfg!(feature = "system-allocator") {
        "glibc malloc"
    } else {
        "mimalloc"
    };
    assert!(
        version.trim_end().ends_with(&format!(", {allocator})")),
        "{version}"
    );
}

/// The built binary under the kubectl plugin's file name, in a fresh directory per test.
fn plugin_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("crd-audit-plugin-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plugin = dir.join("kubectl-crd_audit");
    let _ = std::fs::remove_file(&plugin);
    // A symbolic link, not a copy: a copy is a file open for writing, and a process that
    // another test thread forks at that moment keeps it open, so running the copy fails
    // with "Text file busy" (ETXTBSY). The name under which it runs is the link's.
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_crd-audit"), &plugin).expect("link the binary");
    dir
}

#[test]
fn as_kubectl_plugin_usage_reads_kubectl_crd_audit() {
    let dir = plugin_dir("usage");
    let plugin = dir.join("kubectl-crd_audit");
    let out = Command::new(&plugin).arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    assert!(
        help.contains("Usage: kubectl crd-audit <COMMAND>"),
        "{help}"
    );
    let out = Command::new(&plugin)
        .args(["check", "--help"])
        .output()
        .unwrap();
    assert!(
        text(&out.stdout).contains("Usage: kubectl crd-audit check"),
        "{}",
        text(&out.stdout)
    );
    // A usage error names it the same way.
    let out = Command::new(&plugin)
        .arg("no-such-command")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("kubectl crd-audit"),
        "{}",
        text(&out.stderr)
    );
    // Under its own name it is crd-audit.
    let help = text(&run(&["--help"], None).stdout);
    assert!(help.contains("Usage: crd-audit <COMMAND>"), "{help}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `kubectl crd-audit --version` through kubectl's plugin lookup, when kubectl is installed
/// (set CRD_AUDIT_KUBECTL=required to fail without it).
#[test]
fn kubectl_finds_the_plugin() {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kubectl = std::env::split_paths(&path)
        .map(|d| d.join("kubectl"))
        .find(|p| p.is_file());
    let Some(kubectl) = kubectl else {
        assert!(
            std::env::var("CRD_AUDIT_KUBECTL").as_deref() != Ok("required"),
            "kubectl is not on PATH"
        );
        eprintln!("NOTICE: kubectl is not on PATH; kubectl_finds_the_plugin skipped");
        return;
    };
    let dir = plugin_dir("kubectl");
    let mut dirs = vec![dir.clone()];
    dirs.extend(std::env::split_paths(&path));
    let out = Command::new(&kubectl)
        .args(["crd-audit", "--version"])
        .env("PATH", std::env::join_paths(dirs).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with(&format!("crd-audit {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{}",
        text(&out.stdout)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The krew manifest has the fields krew's validation requires.
#[test]
fn krew_manifest_is_well_formed() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("plugins/krew/crd-audit.yaml");
    let text = std::fs::read_to_string(&path).expect("plugins/krew/crd-audit.yaml");
    let mut docs = crd_audit_engine::load::parse_str("crd-audit.yaml", &text);
    assert_eq!(docs.len(), 1);
    let m = docs.remove(0).expect("readable YAML").value;
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    assert_eq!(
        s(&m["apiVersion"]),
        "krew.googlecontainertools.github.com/v1alpha2"
    );
    assert_eq!(s(&m["kind"]), "Plugin");
    // The name is the file name and the plugin's name as kubectl sees it.
    assert_eq!(s(&m["metadata"]["name"]), "crd-audit");
    let spec = &m["spec"];
    let version = s(&spec["version"]);
    let numbers: Vec<&str> = version
        .strip_prefix('v')
        .expect("v prefix")
        .split('.')
        .collect();
    assert_eq!(numbers.len(), 3, "{version}");
    assert!(
        numbers
            .iter()
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    );
    assert_eq!(
        version.strip_prefix('v'),
        Some(env!("CARGO_PKG_VERSION")),
        "the manifest names the package version"
    );
    let short = s(&spec["shortDescription"]);
    assert!(!short.is_empty() && !short.contains('\n'));
    assert!(s(&spec["homepage"]).starts_with("https://"));
    let platforms = spec["platforms"].as_array().expect("platforms");
    assert!(!platforms.is_empty());
    let mut linux_amd64 = false;
    for p in platforms {
        let labels = p["selector"]["matchLabels"]
            .as_object()
            .expect("matchLabels");
        assert!(labels.keys().all(|k| k == "os" || k == "arch"));
        let label = |k: &str| labels.get(k).and_then(Value::as_str);
        linux_amd64 |= label("os") == Some("linux") && label("arch") == Some("amd64");
        let uri = s(&p["uri"]);
        assert!(
            uri.starts_with("https://") && uri.ends_with(".tar.gz"),
            "{uri}"
        );
        assert!(
            uri.contains(&format!("/releases/download/{version}/")),
            "{uri}"
        );
        let sha = s(&p["sha256"]);
        assert!(sha.len() == 64 && sha.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')));
        assert_eq!(s(&p["bin"]), "kubectl-crd_audit");
    }
    assert!(linux_amd64);
}
