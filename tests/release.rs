//! The release workflow (.github/workflows/release.yml) agrees with what it ships: the krew
//! manifest's platforms, the platforms the workflow builds binaries and the image for, and the
//! targets scripts/build-static.sh supports are one set; every script the workflow runs
//! exists; its Rust release is the Dockerfile's. And scripts/build-static.sh, run by a test
//! (the e2e tests build the image), builds without what cargo set for that test.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

#[path = "common/crate_variables.rs"]
mod crate_variables;
use crate_variables::is_crate_variable;

const WORKFLOW: &str = ".github/workflows/release.yml";
const KREW_MANIFEST: &str = "plugins/krew/crd-audit.yaml";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The single YAML document of a file.
fn yaml(path: &str) -> Value {
    let mut docs = crd_audit_engine::load::parse_str(path, &read(path));
    assert_eq!(docs.len(), 1, "{path}: one document");
    docs.remove(0)
        .unwrap_or_else(|e| panic!("{path}: {e:?}"))
        .value
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// `os/arch` of each platform of the krew manifest.
fn krew_platforms(manifest: &Value) -> Vec<String> {
    let platforms = manifest["spec"]["platforms"]
        .as_array()
        .expect("spec.platforms");
    platforms
        .iter()
        .map(|p| {
            let labels = &p["selector"]["matchLabels"];
            format!("{}/{}", text(&labels["os"]), text(&labels["arch"]))
        })
        .collect()
}

/// The (platform, target) pairs of the workflow's binary matrix.
fn matrix_targets(workflow: &Value) -> Vec<(String, String)> {
    let include = workflow["jobs"]["binaries"]["strategy"]["matrix"]["include"]
        .as_array()
        .expect("jobs.binaries.strategy.matrix.include");
    include
        .iter()
        .map(|m| {
            (
                text(&m["platform"]).to_string(),
                text(&m["target"]).to_string(),
            )
        })
        .collect()
}

/// The platforms of every docker/build-push-action step of the workflow.
fn image_platforms(workflow: &Value) -> Vec<Vec<String>> {
    let jobs = workflow["jobs"].as_object().expect("jobs");
    let mut found = Vec::new();
    for job in jobs.values() {
        for step in job["steps"].as_array().into_iter().flatten() {
            if text(&step["uses"]).starts_with("docker/build-push-action@") {
                found.push(
                    text(&step["with"]["platforms"])
                        .split(',')
                        .map(|p| p.trim().to_string())
                        .filter(|p| !p.is_empty())
                        .collect(),
                );
            }
        }
    }
    found
}

/// `scripts/build-static.sh --list-targets`: (target, platform) lines.
fn build_script_targets() -> Vec<(String, String)> {
    let out = Command::new("bash")
        .arg("scripts/build-static.sh")
        .arg("--list-targets")
        .current_dir(root())
        .output()
        .expect("bash");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|line| {
            let mut words = line.split_whitespace();
            let target = words.next().unwrap_or_default().to_string();
            let platform = words.next().unwrap_or_default().to_string();
            assert!(
                !target.is_empty() && !platform.is_empty() && words.next().is_none(),
                "--list-targets line {line:?}"
            );
            (target, platform)
        })
        .collect()
}

/// What does not agree between the platform lists (empty when all agree).
fn disagreements(
    krew: &[String],
    matrix: &[(String, String)],
    images: &[Vec<String>],
    script: &[(String, String)],
) -> Vec<String> {
    let mut problems = Vec::new();
    let set = |v: &mut dyn Iterator<Item = String>| v.collect::<BTreeSet<String>>();
    let krew_set = set(&mut krew.iter().cloned());
    if krew_set.len() != krew.len() {
        problems.push(format!("the krew manifest repeats a platform: {krew:?}"));
    }
    let lists = [
        (
            "the workflow's binary matrix",
            set(&mut matrix.iter().map(|(p, _)| p.clone())),
        ),
        (
            "scripts/build-static.sh --list-targets",
            set(&mut script.iter().map(|(_, p)| p.clone())),
        ),
    ];
    for (name, platforms) in lists {
        if platforms != krew_set {
            problems.push(format!(
                "{name} builds {platforms:?}, the krew manifest has {krew_set:?}"
            ));
        }
    }
    if images.is_empty() {
        problems.push("no docker/build-push-action step".to_string());
    }
    for image in images {
        let platforms = set(&mut image.iter().cloned());
        if platforms != krew_set {
            problems.push(format!(
                "the image is built for {platforms:?}, the krew manifest has {krew_set:?}"
            ));
        }
    }
    for (platform, target) in matrix {
        if !script.iter().any(|(t, p)| t == target && p == platform) {
            problems.push(format!(
                "the workflow builds {target} for {platform}: scripts/build-static.sh does not \
                 support that pair ({script:?})"
            ));
        }
    }
    problems
}

#[test]
fn platforms_agree() {
    let workflow = yaml(WORKFLOW);
    let krew = krew_platforms(&yaml(KREW_MANIFEST));
    let matrix = matrix_targets(&workflow);
    let images = image_platforms(&workflow);
    let script = build_script_targets();
    assert!(!krew.is_empty() && !script.is_empty());
    let problems = disagreements(&krew, &matrix, &images, &script);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_platform_missing_anywhere_is_a_disagreement() {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let pairs = |v: &[(&str, &str)]| {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect::<Vec<_>>()
    };
    let krew = s(&["linux/amd64", "linux/arm64"]);
    let matrix = pairs(&[
        ("linux/amd64", "x86_64-unknown-linux-gnu"),
        ("linux/arm64", "aarch64-unknown-linux-gnu"),
    ]);
    let script = pairs(&[
        ("x86_64-unknown-linux-gnu", "linux/amd64"),
        ("aarch64-unknown-linux-gnu", "linux/arm64"),
    ]);
    let images = vec![krew.clone()];
    assert!(disagreements(&krew, &matrix, &images, &script).is_empty());
    // The manifest lacks arm64.
    assert_eq!(
        disagreements(&krew[..1], &matrix, &images, &script).len(),
        3
    );
    // The image is amd64 only.
    assert_eq!(
        disagreements(&krew, &matrix, &[krew[..1].to_vec()], &script).len(),
        1
    );
    // The script does not support arm64.
    assert_eq!(
        disagreements(&krew, &matrix, &images, &script[..1]).len(),
        2
    );
    // The matrix pairs arm64 with another target.
    let wrong = pairs(&[
        ("linux/amd64", "x86_64-unknown-linux-gnu"),
        ("linux/arm64", "aarch64-unknown-linux-musl"),
    ]);
    assert_eq!(disagreements(&krew, &wrong, &images, &script).len(), 1);
}

/// `scripts/...` paths named in `text` (a word starting there, up to a character that cannot
/// be in a path).
fn script_references(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("scripts/") {
        let start = from + at;
        from = start + "scripts/".len();
        let before = text[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')) {
            continue; // inside another path
        }
        let len = text[start..]
            .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')))
            .unwrap_or(text.len() - start);
        let path = text[start..start + len].trim_end_matches(['.', '/']);
        if path.len() > "scripts/".len() {
            found.insert(path.to_string());
        }
    }
    found
}

/// Every `run:` block of the workflow.
fn run_blocks(workflow: &Value) -> Vec<String> {
    let mut runs = Vec::new();
    for job in workflow["jobs"].as_object().expect("jobs").values() {
        for step in job["steps"].as_array().into_iter().flatten() {
            if let Some(run) = step["run"].as_str() {
                runs.push(run.to_string());
            }
        }
    }
    runs
}

#[test]
fn the_scripts_the_workflow_runs_exist() {
    let workflow = yaml(WORKFLOW);
    let mut named = BTreeSet::new();
    for run in run_blocks(&workflow) {
        named.extend(script_references(&run));
    }
    let missing: Vec<&String> = named.iter().filter(|p| !root().join(p).is_file()).collect();
    assert!(
        missing.is_empty(),
        "{WORKFLOW} runs scripts that do not exist: {missing:?}"
    );
    // The steps the workflow shares with CI are run, not only mentioned.
    for shared in [
        "scripts/check-release-version.sh",
        "scripts/build-static.sh",
        "scripts/krew-archive.sh",
        "scripts/krew-manifest.sh",
        "scripts/install-helm.sh",
    ] {
        assert!(named.contains(shared), "the workflow does not run {shared}");
    }
}

#[test]
fn script_references_are_found() {
    let found = script_references(
        "bash scripts/a.sh x\nKREW=1 bash scripts/krew-manifest.sh \"$T\" dist >o\n\
         echo \"$(bash scripts/install-helm.sh)\"; ls fuzz/scripts/no.sh",
    );
    let expected: BTreeSet<String> = [
        "scripts/a.sh",
        "scripts/install-helm.sh",
        "scripts/krew-manifest.sh",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(found, expected);
}

#[test]
fn the_workflow_builds_with_the_dockerfiles_rust() {
    let workflow = yaml(WORKFLOW);
    let rust = text(&workflow["env"]["RUST_VERSION"]).to_string();
    assert!(!rust.is_empty(), "{WORKFLOW}: env.RUST_VERSION");
    let dockerfile = read("Dockerfile");
    let from = dockerfile
        .lines()
        .find(|l| l.starts_with("FROM ") && l.contains(" AS build"))
        .expect("the Dockerfile's build stage");
    assert!(
        from.contains(&format!(" rust:{rust}-")),
        "the Dockerfile builds with {from:?}, {WORKFLOW} with Rust {rust}"
    );
}

/// This test runs under `cargo test`, with the variables cargo sets for it: the environment
/// scripts/lib/crate-env.sh leaves to the cargo build of scripts/build-static.sh has none of
/// them, and keeps the rest.
#[test]
fn the_static_build_runs_without_what_cargo_set_for_the_test() {
    let inherited: Vec<String> = std::env::vars().map(|(name, _)| name).collect();
    assert!(
        inherited.iter().any(|n| n == "CARGO_PKG_NAME")
            && inherited.iter().any(|n| n == "CARGO_MANIFEST_DIR"),
        "cargo test sets CARGO_PKG_NAME and CARGO_MANIFEST_DIR: {inherited:?}"
    );
    let out = Command::new("bash")
        .args([
            "-c",
            "source scripts/lib/crate-env.sh && without_crate_env env -0",
        ])
        .current_dir(root())
        .env("OUT_DIR", env!("CARGO_TARGET_TMPDIR"))
        .env("CARGO_PRIMARY_PACKAGE", "1")
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .split('\0')
        .filter_map(|entry| entry.split_once('=').map(|(name, _)| name.to_string()))
        .collect();
    let crate_variables: Vec<&String> = left.iter().filter(|n| is_crate_variable(n)).collect();
    assert!(
        crate_variables.is_empty(),
        "left for cargo: {crate_variables:?}"
    );
    for kept in ["PATH", "HOME"] {
        if std::env::var_os(kept).is_some() {
            assert!(left.iter().any(|n| n == kept), "{kept} was removed");
        }
    }
    if std::env::var_os("CARGO").is_some() {
        assert!(left.iter().any(|n| n == "CARGO"), "CARGO was removed");
    }
}
