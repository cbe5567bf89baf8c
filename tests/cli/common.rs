//! Shared helpers of the command-line tests: running the built binary, the conformance corpus.
#![allow(dead_code, unused_imports)]

use std::path::PathBuf;

pub use crd_audit_engine::testing::{
    Key, conformance_cases as cases, conformance_dir as corpus_dir, key_of, key_of_normalized,
    multiset_diff, read_json,
};

/// Runs the built `crd-audit` with `args`, feeding `stdin` (closed at once when `None`).
pub fn run(args: &[&str], stdin: Option<&[u8]>) -> std::process::Output {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_crd-audit"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run crd-audit");
    {
        let mut pipe = child.stdin.take().unwrap();
        if let Some(bytes) = stdin {
            pipe.write_all(bytes).unwrap();
        }
    }
    child.wait_with_output().unwrap()
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The per-process temporary directory of these tests (`crd-audit-test-<pid>`). A test binary
/// has no hook at its end to remove it, so the first call removes the directories that earlier
/// runs left behind, those of processes that are gone (on Linux: no `/proc/<pid>`).
pub fn test_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let tmp = std::env::temp_dir();
        if std::path::Path::new("/proc/self").exists()
            && let Ok(entries) = std::fs::read_dir(&tmp)
        {
            for entry in entries.flatten() {
                let name = entry.file_name();
                let pid = name
                    .to_str()
                    .and_then(|n| n.strip_prefix("crd-audit-test-"));
                if pid.is_some_and(|p| {
                    p.parse::<u32>().is_ok() && !std::path::Path::new("/proc").join(p).exists()
                }) {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let dir = tmp.join(format!("crd-audit-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
    .clone()
}

/// Writes a file under the per-process temporary directory ([`test_dir`]).
pub fn temp_file(name: &str, content: &[u8]) -> PathBuf {
    let p = test_dir().join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, content).unwrap();
    p
}

/// Runs the built `crd-audit` with `args` and extra environment variables, feeding `stdin`;
/// fails the test if it has not ended after `limit` (it is killed then).
pub fn run_env_within(
    args: &[&str],
    envs: &[(&str, &str)],
    stdin: Option<&[u8]>,
    limit: std::time::Duration,
) -> std::process::Output {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_crd-audit"))
        .args(args)
        .envs(envs.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run crd-audit");
    let input = stdin.map(<[u8]>::to_vec);
    let mut pipe = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        if let Some(bytes) = input {
            let _ = pipe.write_all(&bytes);
        }
    });
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = stdout.read_to_end(&mut b);
        b
    });
    let err_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = stderr.read_to_end(&mut b);
        b
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("crd-audit {args:?} did not end within {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    feeder.join().unwrap();
    std::process::Output {
        status,
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    }
}

/// The case directories under `tests/data/<area>`, sorted.
pub fn case_dirs(area: &str) -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(area);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

/// JSON lines, each parsed (a bad line fails the test).
pub fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}
