//! The command line facing bugs and hostile input: a panic while judging one object or CRD
//! is contained (reported once, counted, exit 2, the rest goes on), and the process always
//! ends.

use crate::common::{run_env_within, temp_file, test_dir, text};
use serde_json::Value;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: things, kind: Thing}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              count: {type: integer, maximum: 5}
";

fn thing(name: &str) -> String {
    format!(
        "apiVersion: example.com/v1\nkind: Thing\nmetadata: {{name: {name}}}\nspec: {{count: 1}}\n"
    )
}

fn crd_file(name: &str) -> String {
    temp_file(name, CRD.as_bytes()).display().to_string()
}

fn json_lines(out: &std::process::Output) -> Vec<Value> {
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn a_panic_judging_one_object_is_that_objects_internal_error() {
    let crd = crd_file("robust/panic-crd.yaml");
    let objects = [thing("a"), thing("boom"), thing("c")].join("---\n");
    let inject = [("CRD_AUDIT_INJECT_PANIC", "validate:boom")];
    let out = run_env_within(
        &["validate", "--crd", &crd, "-o", "json", "-"],
        &inject,
        Some(objects.as_bytes()),
        LIMIT,
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        !stderr.contains("panicked"),
        "the panic was printed: {stderr}"
    );
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 3, "{}", text(&out.stdout));
    assert_eq!(lines[0]["valid"], true);
    assert_eq!(lines[2]["valid"], true);
    let boom = &lines[1];
    assert_eq!(boom["name"], "boom");
    assert_eq!(boom["namespace"], "default");
    assert_eq!(boom["code"], 500);
    let errors = boom["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["type"], "InternalError");
    assert_eq!(errors[0]["field"], "<nil>");
    let message = errors[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("<nil>: Internal error: crd-audit failed while judging this object (a bug): injected panic at validate for boom"),
        "{message}"
    );
    // Text output counts it and names it once.
    let out = run_env_within(
        &["validate", "--crd", &crd, "-"],
        &inject,
        Some(objects.as_bytes()),
        LIMIT,
    );
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(stdout.matches("injected panic").count(), 1, "{stdout}");
    assert!(
        stdout.contains("validated 3 object(s): 1 invalid (0 of unknown kind), 0 with unknown fields, 0 input error(s), 1 internal error(s)"),
        "{stdout}"
    );
}

#[test]
fn a_crd_that_cannot_be_compiled_fails_its_objects_only() {
    let crd = crd_file("robust/compile-crd.yaml");
    let objects = [thing("a"), thing("b")].join("---\n");
    let out = run_env_within(
        &["validate", "--crd", &crd, "-o", "json", "-"],
        &[("CRD_AUDIT_INJECT_PANIC", "compile:things.example.com")],
        Some(objects.as_bytes()),
        LIMIT,
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 2);
    for l in &lines {
        assert_eq!(l["code"], 500, "{l}");
        assert_eq!(l["errors"][0]["type"], "InternalError", "{l}");
        assert!(
            l["errors"][0]["detail"]
                .as_str()
                .unwrap()
                .contains("internal error compiling CRD things.example.com: injected panic"),
            "{l}"
        );
    }
}

/// CRDs are compiled only for the objects that need them: a CRD no object uses is never
/// compiled (here it would panic), and one read from a file is read again when an object
/// needs it.
#[test]
fn crds_are_compiled_only_when_their_objects_need_them() {
    let crd = crd_file("robust/lazy-crd.yaml");
    let other = temp_file(
        "robust/lazy-other.yaml",
        CRD.replace("things", "others")
            .replace("Thing", "Other")
            .as_bytes(),
    )
    .display()
    .to_string();
    let judge = |objects: &str| {
        run_env_within(
            &[
                "validate", "--crd", &crd, "--crd", &other, "-o", "json", "-",
            ],
            &[("CRD_AUDIT_INJECT_PANIC", "compile:others.example.com")],
            Some(objects.as_bytes()),
            LIMIT,
        )
    };
    let out = judge(&[thing("a"), thing("b")].join("---\n"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(json_lines(&out).iter().all(|l| l["code"] == 201));
    let out = judge(&thing("a").replace("Thing", "Other"));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(json_lines(&out)[0]["errors"][0]["type"], "InternalError");
}

#[test]
fn a_worker_that_dies_does_not_keep_the_process_alive() {
    let crd = crd_file("robust/worker-crd.yaml");
    let first = temp_file("robust/worker-a.yaml", thing("a").as_bytes());
    let second = temp_file("robust/worker-b.yaml", thing("b").as_bytes());
    let first = first.display().to_string();
    let target = format!("worker:{first}");
    let out = run_env_within(
        &[
            "validate",
            "--crd",
            &crd,
            "-o",
            "json",
            &first,
            second.to_str().unwrap(),
        ],
        &[("CRD_AUDIT_INJECT_PANIC", &target)],
        None,
        LIMIT,
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr
            .matches(
                "error: crd-audit: the validation worker stopped (a bug): injected panic at worker"
            )
            .count(),
        1,
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    // Nothing of the lost job is reported as judged.
    assert!(
        !text(&out.stdout).contains("worker-a.yaml"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn a_panic_checking_one_crd_is_that_crds_internal_error() {
    let other = CRD
        .replace("things.example.com", "others.example.com")
        .replace("plural: things, kind: Thing", "plural: others, kind: Other");
    let input = format!("{CRD}---\n{other}");
    let inject = [("CRD_AUDIT_INJECT_PANIC", "check:things.example.com")];
    let out = run_env_within(&["check", "-"], &inject, Some(input.as_bytes()), LIMIT);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stdout.contains("-:1:1: things.example.com: InternalError: crd-audit failed while checking this CRD (a bug): injected panic at check for things.example.com"),
        "{stdout}"
    );
    // The second CRD starts after the first and the separator line.
    let second = CRD.lines().count() + 2;
    assert!(
        stdout.contains(&format!("-:{second}:1: others.example.com: ok")),
        "{stdout}"
    );
    assert!(
        stdout.contains("checked 2 CRD(s): 1 with findings, 0 input error(s), 1 internal error(s)"),
        "{stdout}"
    );
    let out = run_env_within(
        &["check", "-o", "json", "-"],
        &inject,
        Some(input.as_bytes()),
        LIMIT,
    );
    assert_eq!(out.status.code(), Some(2));
    let lines = json_lines(&out);
    assert!(
        lines[0]["internalError"]
            .as_str()
            .is_some_and(|e| e.contains("injected panic")),
        "{}",
        lines[0]
    );
    assert!(lines[1].get("internalError").is_none());
}

fn fresh_dir(name: &str) -> std::path::PathBuf {
    let dir = test_dir().join(format!("robust-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[cfg(unix)]
#[test]
fn directory_walks_do_not_follow_symlink_loops() {
    use std::os::unix::fs::symlink;
    let dir = fresh_dir("loops");
    let d = dir.join("d");
    std::fs::create_dir_all(d.join("sub")).unwrap();
    std::fs::write(d.join("crd.yaml"), CRD).unwrap();
    std::fs::write(
        d.join("sub/other.yaml"),
        CRD.replace("things", "others").replace("Thing", "Other"),
    )
    .unwrap();
    symlink("..", d.join("sub/up")).unwrap();
    for l in ["a", "b", "c"] {
        symlink(".", d.join(l)).unwrap();
    }
    // A symlink to a directory that is not an ancestor is followed.
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(
        elsewhere.join("third.yaml"),
        CRD.replace("things", "thirds").replace("Thing", "Third"),
    )
    .unwrap();
    symlink(&elsewhere, d.join("sub/linked")).unwrap();
    let out = run_env_within(&["check", d.to_str().unwrap()], &[], None, LIMIT);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let listed: Vec<&str> = stdout.lines().filter(|l| l.ends_with(": ok")).collect();
    let d = d.display();
    assert_eq!(
        listed,
        [
            format!("{d}/crd.yaml:1:1: things.example.com: ok"),
            format!("{d}/sub/linked/third.yaml:1:1: thirds.example.com: ok"),
            format!("{d}/sub/other.yaml:1:1: others.example.com: ok"),
        ],
        "{stdout}"
    );
    // Each loop is named once.
    for l in ["a", "b", "c", "sub/up"] {
        assert_eq!(
            stderr
                .matches(&format!("warning: {d}/{l}: skipped: a directory loop"))
                .count(),
            1,
            "{stderr}"
        );
    }
}

#[cfg(unix)]
#[test]
fn pipes_and_devices_are_read_as_streams() {
    let dir = fresh_dir("fifo");
    let fifo = dir.join("crd.fifo");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let path = fifo.clone();
    let writer = std::thread::spawn(move || std::fs::write(path, CRD).unwrap());
    let out = run_env_within(&["check", fifo.to_str().unwrap()], &[], None, LIMIT);
    writer.join().unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains(&format!("{}:1:1: things.example.com: ok", fifo.display())),
        "{stdout}"
    );

    let out = run_env_within(&["check", "/dev/stdin"], &[], Some(CRD.as_bytes()), LIMIT);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("/dev/stdin:1:1: things.example.com: ok"));

    // A missing file is still an error that names it.
    let missing = dir.join("missing.yaml");
    let out = run_env_within(&["check", missing.to_str().unwrap()], &[], None, LIMIT);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr).trim(),
        format!("error: {}: no such file or directory", missing.display())
    );
}

fn thing_json(name: &str) -> String {
    format!(
        r#"{{"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {{"name": "{name}"}}, "spec": {{"count": 1}}}}"#
    )
}

#[test]
fn a_malformed_json_document_does_not_hide_the_next_ones() {
    let crd = crd_file("robust/json-crd.yaml");
    let input = format!(
        "{}\n{{\"apiVersion\": \"example.com/v1\", \"kind\": \"Thing\", \"spec\": [}}\n{}\n{}\n",
        thing_json("a"),
        thing_json("c"),
        thing_json("d")
    );
    let out = run_env_within(
        &["validate", "--crd", &crd, "-o", "json", "-"],
        &[],
        Some(input.as_bytes()),
        LIMIT,
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.trim(),
        "error: -#1 (line 2): invalid JSON: expected value"
    );
    let lines = json_lines(&out);
    let names: Vec<&str> = lines.iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["a", "c", "d"]);
    let sources: Vec<&str> = lines
        .iter()
        .map(|l| l["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["-#0", "-#2", "-#3"]);
}

#[test]
fn json_with_a_byte_order_mark_is_read() {
    let crd = crd_file("robust/bom-crd.yaml");
    let json = temp_file(
        "robust/bom.json",
        format!("\u{feff}{}\n{}\n", thing_json("a"), thing_json("b")).as_bytes(),
    );
    let out = run_env_within(
        &[
            "validate",
            "--crd",
            &crd,
            "-o",
            "json",
            json.to_str().unwrap(),
        ],
        &[],
        None,
        LIMIT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 2);
    assert!(lines.iter().all(|l| l["valid"] == true));
}

/// Runs `crd-audit` feeding `chunks` of `chunk` to its standard input; returns the output
/// and the peak RSS in KiB.
#[cfg(unix)]
fn run_streaming(
    args: &[&str],
    head: &str,
    chunk: &[u8],
    chunks: usize,
    tail: &str,
) -> (std::process::Output, i64) {
    use std::io::{Read, Write};
    use std::process::{Command, Stdio};
    #[allow(clippy::zombie_processes)] // reaped by wait4 below
    let mut child = Command::new(env!("CARGO_BIN_EXE_crd-audit"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (head, tail, chunk) = (head.to_string(), tail.to_string(), chunk.to_vec());
    let writer = std::thread::spawn(move || {
        stdin.write_all(head.as_bytes())?;
        for _ in 0..chunks {
            stdin.write_all(&chunk)?;
        }
        stdin.write_all(tail.as_bytes())
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
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child; `usage` is a valid rusage to fill.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid);
    writer.join().unwrap().unwrap();
    use std::os::unix::process::ExitStatusExt;
    let output = std::process::Output {
        status: std::process::ExitStatus::from_raw(status),
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    };
    (output, usage.ru_maxrss)
}

#[cfg(unix)]
#[test]
fn a_document_over_64_mib_is_refused_in_bounded_memory() {
    let crd = crd_file("robust/huge-crd.yaml");
    // MiB on one line between two small documents.
    let peak = |mib: usize| {
        let head = format!("{}---\nspec: {{name: \"", thing("before"));
        let tail = format!("\"}}\n---\n{}", thing("after"));
        let (out, peak) = run_streaming(
            &["validate", "--crd", &crd, "-o", "json", "-"],
            &head,
            &[b'x'; 1 << 20],
            mib,
            &tail,
        );
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(
            stderr.trim(),
            "error: -#1 (line 6): document larger than 64 MiB (kube-apiserver accepts requests of up to 3 MiB)"
        );
        let names: Vec<String> = json_lines(&out)
            .iter()
            .map(|l| l["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(names, ["before", "after"]);
        peak
    };
    let (small, large) = (peak(128), peak(512));
    eprintln!("peak RSS refusing a document of 128 MiB: {small} KiB, of 512 MiB: {large} KiB");
    // The first 64 MiB are read (in a doubling buffer) before the document is refused; how much
    // of the freed buffers the allocator has handed back when the peak is taken depends on
    // timing (158 to 226 MiB seen, idle or loaded). A reader holding the document would need
    // at least 512 MiB for the large one and grow by 384 MiB from the small one.
    assert!(
        large < small + 96 * 1024,
        "peak RSS grew from {small} KiB to {large} KiB"
    );
    assert!(large < 320 * 1024, "peak RSS {large} KiB");
}

/// Runs `crd-audit` with its standard output going to `stdout`; returns status and stderr.
fn run_to(args: &[&str], stdout: std::process::Stdio) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_crd-audit"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(stdout)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    (out.status.code(), text(&out.stderr))
}

/// 20,000 valid things (`valid`), and the same with the first invalid: `(objects, status)`.
fn many_things_then_one_invalid() -> [(String, u8); 2] {
    let mut valid = String::new();
    for i in 0..20_000 {
        valid.push_str(&thing(&format!("t{i}")));
        valid.push_str("---\n");
    }
    let invalid = valid.replacen("spec: {count: 1}", "spec: {count: 9}", 1);
    [(valid, 0), (invalid, 1)]
}

/// Runs crd-audit as `crd-audit ARGS | head -1`: its first line, and how it ended.
fn first_line_then_closed(args: &[&str]) -> (String, std::process::Output) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_crd-audit"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    (first, child.wait_with_output().unwrap())
}

#[test]
fn a_closed_pipe_ends_quietly_with_the_status_so_far() {
    let crd = crd_file("robust/pipe-crd.yaml");
    for (objects, status) in many_things_then_one_invalid() {
        let file = temp_file(&format!("robust/pipe-{status}.yaml"), objects.as_bytes());
        let (first, out) =
            first_line_then_closed(&["validate", "--crd", &crd, file.to_str().unwrap()]);
        assert_eq!(
            first.trim_end(),
            format!(
                "{}:{} Thing default/t0: {}",
                file.display(),
                // `path:line:column:`: the document, or the field of the finding.
                if status == 0 { "1:1:" } else { "4:8:" },
                if status == 0 {
                    "valid"
                } else {
                    "spec.count: Invalid value: 9: spec.count in body should be less than or equal to 5"
                }
            )
        );
        assert_eq!(text(&out.stderr), "");
        assert_eq!(out.status.code(), Some(i32::from(status)));
    }
}

/// `plan ... | head -1` as `validate`: the status of what was judged before the pipe closed,
/// and nothing on stderr when the output streams.
#[test]
fn plan_on_a_closed_pipe_ends_quietly_with_the_status_so_far() {
    let crd = crd_file("robust/plan-pipe-crd.yaml");
    for (objects, status) in many_things_then_one_invalid() {
        let file = temp_file(
            &format!("robust/plan-pipe-{status}.yaml"),
            objects.as_bytes(),
        );
        for format in ["text", "json", "sarif"] {
            let (first, out) = first_line_then_closed(&[
                "plan",
                &crd,
                "--objects",
                file.to_str().unwrap(),
                "-o",
                format,
            ]);
            assert!(!first.is_empty(), "{format}");
            if format != "sarif" {
                // SARIF is one document, written whole at the end: its totals are said
                // before it is.
                assert_eq!(text(&out.stderr), "", "{format}");
            }
            assert_eq!(out.status.code(), Some(i32::from(status)), "{format}");
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_an_error() {
    let crd = crd_file("robust/full-crd.yaml");
    let objects = temp_file("robust/full.yaml", thing("a").as_bytes());
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full")
    };
    for args in [
        vec!["validate", "--crd", &crd, objects.to_str().unwrap()],
        vec![
            "validate",
            "--crd",
            &crd,
            "-o",
            "json",
            objects.to_str().unwrap(),
        ],
        vec!["check", &crd],
        vec!["diff", &crd, &crd],
        vec!["plan", &crd, "--objects", objects.to_str().unwrap()],
    ] {
        let (code, stderr) = run_to(&args, full().into());
        assert_eq!(code, Some(2), "{args:?}");
        assert_eq!(
            stderr, "error: writing the output: No space left on device (os error 28)\n",
            "{args:?}"
        );
    }
}

#[test]
fn lists_kubectl_cannot_decode_are_input_errors() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/list-errors");
    let expected = std::fs::read_to_string(dir.join("oracle-errors.txt"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    assert_eq!(expected.lines().count(), 4);
    let crd = dir.join("crd.yaml");
    for line in expected.lines() {
        let (file, message) = line.split_once(": ").unwrap();
        let path = dir.join(file);
        let out = run_env_within(
            &[
                "validate",
                "--crd",
                crd.to_str().unwrap(),
                path.to_str().unwrap(),
            ],
            &[],
            None,
            LIMIT,
        );
        assert_eq!(out.status.code(), Some(2), "{file}");
        assert_eq!(
            text(&out.stderr),
            format!("error: {}#0 (line 1): {message}\n", path.display()),
            "{file}"
        );
    }
}

/// Runs `crd-audit` on files; returns status, stdout, stderr and the peak RSS in KiB.
#[cfg(unix)]
fn run_measured(args: &[&str]) -> (Option<i32>, String, String, i64) {
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};
    #[allow(clippy::zombie_processes)] // reaped by wait4 below
    let mut child = Command::new(env!("CARGO_BIN_EXE_crd-audit"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child; `usage` is a valid rusage to fill.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid);
    (
        std::process::ExitStatus::from_raw(status).code(),
        out_reader.join().unwrap(),
        err_reader.join().unwrap(),
        usage.ru_maxrss,
    )
}

fn crd_with_properties(count: usize, property: impl Fn(usize) -> String) -> String {
    let mut crd = CRD.split_once("          spec:\n").unwrap().0.to_string();
    for i in 0..count {
        crd.push_str(&format!("          p{i}: {}\n", property(i)));
    }
    crd
}

#[cfg(unix)]
#[test]
fn a_large_crd_is_checked_in_bounded_memory() {
    // 200,000 properties, 53 MB: upstream's own limits keep real CRDs under 3 MiB.
    let desc = "d".repeat(200);
    let crd = crd_with_properties(200_000, |_| {
        format!("{{type: string, maxLength: 10, description: \"{desc}\"}}")
    });
    let size = crd.len() as i64;
    let file = temp_file("robust/large-crd.yaml", crd.as_bytes());
    let (code, stdout, stderr, peak) = run_measured(&["check", file.to_str().unwrap()]);
    eprintln!("peak RSS checking a CRD of {size} bytes: {peak} KiB");
    // Far above the API server's and etcd's size limits: findings, and nothing else.
    assert_eq!(code, Some(1), "{stderr}");
    let too_large = stdout
        .lines()
        .filter(|l| l.contains("things.example.com: TooLarge: "))
        .count();
    assert_eq!(too_large, 2, "{stdout}");
    assert!(
        !stdout.contains("NonStructuralSchema") && !stdout.contains("CRDInvalid"),
        "{stdout}"
    );
    // It was 16 times the size; now about 7.
    assert!(
        peak * 1024 < 9 * size,
        "peak RSS {peak} KiB for {size} bytes"
    );
}

#[test]
fn a_schema_of_more_schemas_than_any_cluster_holds_is_refused() {
    let crd = crd_with_properties(500_000, |_| "{}".to_string());
    let file = temp_file("robust/many-schemas.yaml", crd.as_bytes());
    let out = run_env_within(&["check", file.to_str().unwrap()], &[], None, LIMIT);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "error: {}#0 (line 1): spec.versions[0].schema.openAPIV3Schema.properties[p99999]: schema of more than 500000 schemas",
            file.display()
        )),
        "{stderr}"
    );
}
