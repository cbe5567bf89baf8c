//! Records the commit the binary is built from for `--version`: `CRD_AUDIT_GIT_COMMIT` is
//! `git rev-parse --short=12 HEAD`, with `-dirty` when tracked files have uncommitted changes,
//! or `unknown` outside a git checkout of this repository (a source tarball, a Docker build
//! whose context leaves `.git` out). A `CRD_AUDIT_GIT_COMMIT` variable in the build
//! environment wins (e.g. `docker build --build-arg CRD_AUDIT_GIT_COMMIT=$(git rev-parse
//! --short=12 HEAD)`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CRD_AUDIT_GIT_COMMIT");
    let commit = match std::env::var("CRD_AUDIT_GIT_COMMIT") {
        Ok(c) if !c.trim().is_empty() => c.trim().to_string(),
        _ => from_git().unwrap_or_else(|| "unknown".to_string()),
    };
    println!("cargo:rustc-env=CRD_AUDIT_GIT_COMMIT={commit}");
}

/// Runs git in the package directory; `None` when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8(out.stdout).ok()?.trim().to_string())
}

fn from_git() -> Option<String> {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    // Only this repository's own checkout: not a git repository the sources sit inside.
    let top = PathBuf::from(git(&dir, &["rev-parse", "--show-toplevel"])?);
    if top.canonicalize().ok()? != dir.canonicalize().ok()? {
        return None;
    }
    // Rerun when HEAD moves: HEAD itself (in a worktree, `.git` is a file naming the
    // worktree's git directory), the branch it points to, packed refs, and the index.
    let git_dir = absolute(&dir, &git(&dir, &["rev-parse", "--git-dir"])?);
    let common_dir = absolute(&dir, &git(&dir, &["rev-parse", "--git-common-dir"])?);
    let mut watched = vec![git_dir.join("HEAD"), git_dir.join("index")];
    if let Some(reference) = git(&dir, &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(common_dir.join(reference));
    }
    watched.push(common_dir.join("packed-refs"));
    for path in watched.iter().filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    let commit = git(&dir, &["rev-parse", "--short=12", "HEAD"])?;
    // `--no-optional-locks`: a plain `git status` refreshes and rewrites the index, which
    // this script watches, so every build would make the next one run it (and rebuild the
    // binary) again.
    let dirty = git(
        &dir,
        &[
            "--no-optional-locks",
            "status",
            "--porcelain",
            "--untracked-files=no",
        ],
    )
    .is_some_and(|s| !s.is_empty());
    Some(if dirty {
        format!("{commit}-dirty")
    } else {
        commit
    })
}

fn absolute(base: &Path, p: &str) -> PathBuf {
    let p = Path::new(p);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}
