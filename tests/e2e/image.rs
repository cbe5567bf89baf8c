//! The operator image as `scripts/build-image.sh` writes it (an OCI archive, buildah from
//! scratch, no Docker daemon), built once per test run, and checked against the Dockerfile's
//! final stage: the same user, port, entrypoint and command, the binary and the default
//! configuration at the paths its COPY lines name.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The reference the tests build the image as.
pub const REFERENCE: &str = "localhost/crd-audit:e2e";

/// The archive (built on first use); `None` when end-to-end tests are off.
pub fn archive() -> Option<&'static Path> {
    static ARCHIVE: OnceLock<Option<PathBuf>> = OnceLock::new();
    ARCHIVE
        .get_or_init(|| {
            if std::env::var("CRD_AUDIT_E2E").as_deref() == Ok("off") {
                return None;
            }
            let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("crd-audit-image.tar");
            let built = Command::new("bash")
                .arg("scripts/build-image.sh")
                .arg(&out)
                .env("CRD_AUDIT_IMAGE", REFERENCE)
                .output()
                .unwrap();
            assert!(
                built.status.success(),
                "scripts/build-image.sh: {}",
                String::from_utf8_lossy(&built.stderr)
            );
            assert_eq!(String::from_utf8_lossy(&built.stdout).trim(), REFERENCE);
            Some(out)
        })
        .as_deref()
}

/// The instructions of the Dockerfile's last stage: (instruction, arguments).
fn final_stage() -> Vec<(String, String)> {
    let text = std::fs::read_to_string("Dockerfile").unwrap();
    let mut lines: Vec<(String, String)> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        let word = word.to_uppercase();
        if word == "FROM" {
            lines.clear();
        }
        lines.push((word, rest.trim().to_string()));
    }
    lines
}

fn blob(dir: &Path, digest: &str) -> PathBuf {
    dir.join("blobs/sha256")
        .join(digest.strip_prefix("sha256:").unwrap())
}

fn json_file(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn the_image_has_the_layout_of_the_dockerfiles_final_stage() {
    let Some(archive) = archive() else { return };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("crd-audit-image-layout");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("rootfs")).unwrap();
    let status = Command::new("tar")
        .arg("-xf")
        .arg(archive)
        .arg("-C")
        .arg(&dir)
        .status()
        .unwrap();
    assert!(status.success());
    let index = json_file(&dir.join("index.json"));
    let manifest = &index["manifests"][0];
    assert_eq!(
        manifest["annotations"]["org.opencontainers.image.ref.name"],
        REFERENCE
    );
    let manifest = json_file(&blob(&dir, manifest["digest"].as_str().unwrap()));
    let config = json_file(&blob(&dir, manifest["config"]["digest"].as_str().unwrap()));
    assert_eq!(config["os"], "linux");
    for layer in manifest["layers"].as_array().unwrap() {
        let status = Command::new("tar")
            .arg("-xzf")
            .arg(blob(&dir, layer["digest"].as_str().unwrap()))
            .arg("-C")
            .arg(dir.join("rootfs"))
            .status()
            .unwrap();
        assert!(status.success());
    }
    let rootfs = dir.join("rootfs");
    let c = &config["config"];

    let stage = final_stage();
    let mut checked = Vec::new();
    for (instruction, args) in &stage {
        match instruction.as_str() {
            "FROM" => assert!(
                args.contains(":nonroot"),
                "the final stage's base runs as nonroot (65532): {args}"
            ),
            "USER" => assert_eq!(c["User"], args.as_str(), "USER"),
            "EXPOSE" => {
                for port in args.split_whitespace() {
                    let key = if port.contains('/') {
                        port.to_string()
                    } else {
                        format!("{port}/tcp")
                    };
                    assert!(c["ExposedPorts"].get(&key).is_some(), "EXPOSE {key}: {c:#}");
                }
            }
            "ENTRYPOINT" => {
                let want: Value = serde_json::from_str(args).unwrap();
                assert_eq!(c["Entrypoint"], want, "ENTRYPOINT");
            }
            "CMD" => {
                let want: Value = serde_json::from_str(args).unwrap();
                assert_eq!(c["Cmd"], want, "CMD");
            }
            "COPY" => {
                let words: Vec<&str> = args
                    .split_whitespace()
                    .filter(|w| !w.starts_with("--"))
                    .collect();
                let (source, dest) = (words[0], words[1]);
                let in_image = rootfs.join(dest.trim_start_matches('/'));
                let meta = std::fs::metadata(&in_image)
                    .unwrap_or_else(|e| panic!("COPY {args}: {} in the image: {e}", dest));
                if args.contains("--from=") {
                    // The static binary the build stage makes.
                    use std::os::unix::fs::PermissionsExt;
                    assert!(meta.permissions().mode() & 0o111 != 0, "{dest} executable");
                    let out = Command::new(&in_image).arg("--version").output().unwrap();
                    let version = String::from_utf8_lossy(&out.stdout);
                    assert!(
                        out.status.success() && version.contains("glibc malloc"),
                        "{dest} --version: {version}"
                    );
                } else {
                    assert_eq!(
                        std::fs::read(&in_image).unwrap(),
                        std::fs::read(source).unwrap(),
                        "{dest} is {source}"
                    );
                }
            }
            "WORKDIR" | "ARG" | "LABEL" | "ENV" => {}
            other => panic!("the test does not know the Dockerfile instruction {other}"),
        }
        checked.push(instruction.clone());
    }
    for needed in ["FROM", "USER", "EXPOSE", "ENTRYPOINT", "CMD", "COPY"] {
        assert!(
            checked.iter().any(|i| i == needed),
            "no {needed} in the final stage"
        );
    }
    // What the distroless base gives the Dockerfile's image and the binary uses.
    let passwd = std::fs::read_to_string(rootfs.join("etc/passwd")).unwrap();
    assert!(passwd.contains("nonroot:x:65532:65532:"), "{passwd}");
    assert!(rootfs.join("etc/ssl/certs/ca-certificates.crt").is_file());
    assert!(rootfs.join("tmp").is_dir());
    assert!(
        std::fs::read_dir(&rootfs)
            .unwrap()
            .flatten()
            .all(|e| ["crd-audit", "etc", "tmp"].contains(&e.file_name().to_str().unwrap())),
        "only the binary, /etc and /tmp"
    );
}
