//! The binary crate's top-level modules form layers, as the engine's do: the one-shot
//! commands (`cli`) and the operator share the cluster and audit core and never use each
//! other; only the command line reaches both.

#[path = "../crates/crd-audit-engine/tests/engine/layers.rs"]
mod layers;

use std::path::Path;

/// The layers, lowest first. Modules of one layer may not use each other.
const LAYERS: &[&[&str]] = &[
    // What the program says about itself; the release judged by; a CRD kept compact; the
    // threads engine work runs on.
    &[
        "program",
        "release",
        "packed_crd",
        "allocator",
        "judging_pool",
    ],
    // Talking to a cluster: the client, the resources, paginated reading.
    &["cluster"],
    // What an audit is: configuration, judging an object, the report types.
    &["audit"],
    // The CRD change gate (served by the operator's process); storage version migration
    // (run by `migrate` and by the operator); conversion round trips (run by `roundtrip`
    // and by the operator).
    &["gate", "migration", "roundtrip"],
    // The one-shot commands and the operator: neither uses the other.
    &["cli", "operator"],
    // The command line, and the program's entry point.
    &["command_line", "main"],
];

#[test]
fn binary_modules_use_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = layers::violations(&src, LAYERS);
    assert!(bad.is_empty(), "layering violations:\n{}", bad.join("\n"));
}

#[test]
fn every_module_of_lib_rs_has_a_layer() {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs");
    let text = std::fs::read_to_string(&lib).expect("src/lib.rs");
    let modules: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .filter_map(|l| l.strip_suffix(';'))
        .collect();
    assert!(modules.len() >= 5, "no modules read from src/lib.rs");
    for m in modules {
        assert!(
            layers::layer_of(LAYERS, m).is_some(),
            "module `{m}` of src/lib.rs is in no layer"
        );
    }
}

#[test]
fn a_command_using_the_operator_is_a_violation() {
    // The check itself: a one-shot command that reaches into the operator is reported.
    let dir = std::env::temp_dir().join(format!("crd-audit-layers-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("cli")).unwrap();
    std::fs::create_dir_all(src.join("operator")).unwrap();
    for i in 0..21 {
        std::fs::write(
            src.join(format!("operator/m{i}.rs")),
            "use crate::audit::x;\n",
        )
        .unwrap();
    }
    std::fs::write(
        src.join("cli/audit.rs"),
        "use crate::cluster::reader;\nuse crate::operator::leadership::term::Ctx;\n",
    )
    .unwrap();
    let bad = layers::violations(&src, LAYERS);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(
        bad,
        vec![
            "src/cli/audit.rs:2: `cli` uses `operator`, which is not in a lower layer".to_string()
        ]
    );
}

/// Every use of an output format's name (`Format::`) in the `.rs` files under `src` but
/// outside `src/cli/sink/`, as `src/file.rs:line: ...` (comments are not code).
fn formats_told_apart_outside_the_sinks(src: &Path) -> Vec<String> {
    fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, files);
            } else if p.extension().is_some_and(|e| e == "rs") {
                files.push(p);
            }
        }
    }
    let sinks = src.join("cli").join("sink");
    let root = src.parent().unwrap_or(src);
    let mut files = Vec::new();
    walk(src, &mut files);
    let mut found = Vec::new();
    for file in files.iter().filter(|f| !f.starts_with(&sinks)) {
        let text = std::fs::read_to_string(file).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let named = code.match_indices("Format::").any(|(at, _)| {
                !code[..at]
                    .chars()
                    .next_back()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_')
            });
            if named {
                let path = file.strip_prefix(root).unwrap_or(file);
                found.push(format!(
                    "{}:{}: `Format::` outside src/cli/sink/: only the sinks tell output formats apart (hand the sink what was found)",
                    path.display(),
                    i + 1
                ));
            }
        }
    }
    found
}

#[test]
fn only_the_sinks_tell_output_formats_apart() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = formats_told_apart_outside_the_sinks(&src);
    assert!(
        bad.is_empty(),
        "output formats told apart:\n{}",
        bad.join("\n")
    );
}

#[test]
fn a_command_matching_an_output_format_is_a_violation() {
    // The check itself: a command that tells formats apart is reported; the sinks, other
    // names ending in `Format` and comments are not.
    let dir = std::env::temp_dir().join(format!("crd-audit-formats-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("cli/sink")).unwrap();
    std::fs::write(
        src.join("cli/sink/mod.rs"),
        "match format {\n    Format::Text => text(),\n}\n",
    )
    .unwrap();
    std::fs::write(
        src.join("cli/check.rs"),
        "// Format::Json is for machines.\nlet f = OutputFormat::X;\nif args.output == Format::Junit {}\n",
    )
    .unwrap();
    let bad = formats_told_apart_outside_the_sinks(&src);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(
        bad,
        vec![
            "src/cli/check.rs:3: `Format::` outside src/cli/sink/: only the sinks tell output formats apart (hand the sink what was found)".to_string()
        ]
    );
}

/// The operator's modules that each one uses, outside tests. A module is a file of
/// `src/operator/` or of one of its folders (`crds/reconcile.rs` is `crds::reconcile`), a
/// folder below that counting as one (`reports/policy_writer/` is `reports::policy_writer`), and a folder's
/// `mod.rs` the folder (`migrations`). Uses are `crate::operator::` paths and `super::`
/// paths, resolved from the file's place.
fn operator_module_uses(operator: &Path) -> std::collections::BTreeMap<String, Vec<String>> {
    let mut files = Vec::new();
    layers::rust_files(operator, &mut files);
    // The file's module path: `reports/policy_writer/mod.rs` is [reports, policy_writer].
    let path_of = |file: &Path| -> Vec<String> {
        let rel = file.strip_prefix(operator).unwrap().with_extension("");
        let mut parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_str().unwrap().to_string())
            .collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        parts
    };
    let paths: Vec<Vec<String>> = files.iter().map(|f| path_of(f)).collect();
    let unit_of = |path: &[String]| -> Option<String> {
        let first = path.first()?;
        let two = path.iter().take(2).cloned().collect::<Vec<_>>().join("::");
        if path.len() >= 2
            && paths
                .iter()
                .any(|p| p.len() >= 2 && p[..2].join("::") == two)
        {
            Some(two)
        } else if paths.iter().any(|p| p.first() == Some(first)) {
            Some(first.clone())
        } else {
            None
        }
    };
    let mut uses: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for (file, path) in files.iter().zip(&paths) {
        let Some(module) = unit_of(path) else {
            continue; // `mod.rs` of the operator itself
        };
        if module == "fake_api" || file.file_name().is_some_and(|n| n == "tests.rs") {
            continue; // test code
        }
        let text = std::fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
        let code: String = code
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut used = Vec::new();
        let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let mut rest = code.as_str();
        while let Some(at) = rest.find(['s', 'c']) {
            let before = &rest[..at];
            let tail = &rest[at..];
            rest = &rest[at + 1..];
            if before.ends_with(|c: char| ident(c) || c == ':') {
                continue; // inside a path or a name
            }
            // The path the chain of `super::` or `crate::operator::` names.
            let (mut target, mut tail) = if let Some(t) = tail.strip_prefix("crate::operator::") {
                (Vec::new(), t)
            } else if tail.starts_with("super::") {
                let mut target = path.clone();
                let mut t = tail;
                while let Some(after) = t.strip_prefix("super::") {
                    target.pop();
                    t = after;
                }
                (target, t)
            } else {
                continue;
            };
            for _ in 0..2 {
                let name: String = tail.chars().take_while(|c| ident(*c)).collect();
                if name.is_empty() {
                    break;
                }
                target.push(name.clone());
                match tail[name.len()..].strip_prefix("::") {
                    Some(t) => tail = t,
                    None => break,
                }
            }
            if let Some(unit) = unit_of(&target)
                && unit != module
                && !used.contains(&unit)
            {
                used.push(unit);
            }
        }
        uses.entry(module).or_default().extend(used);
    }
    for list in uses.values_mut() {
        list.sort();
        list.dedup();
    }
    uses
}

/// A circle among the modules of `uses` (`a -> b -> ... -> a`), if any.
fn a_circle(uses: &std::collections::BTreeMap<String, Vec<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        uses: &std::collections::BTreeMap<String, Vec<String>>,
        path: &mut Vec<String>,
        done: &mut std::collections::BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == m) {
            let mut circle = path[at..].to_vec();
            circle.push(m.to_string());
            return Some(circle);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for next in uses.get(m).into_iter().flatten() {
            if let Some(c) = visit(next, uses, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = Default::default();
    uses.keys()
        .find_map(|m| visit(m, uses, &mut Vec::new(), &mut done))
}

/// The operator's modules use each other without a circle: the tracked CRDs live in `state`
/// (whose map only it may change: the compiler holds that rule, a private field), and
/// nothing below the term reaches back up.
#[test]
fn operator_modules_form_no_circle() {
    let operator = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/operator");
    let uses = operator_module_uses(&operator);
    assert!(uses.len() >= 25, "too few operator modules read: {uses:?}");
    for (from, to) in [
        ("leadership::term", "crds"),
        ("crds::reconcile", "crds"),
        ("audits::objects", "state"),
        ("reports::writer", "reports::report"),
    ] {
        assert!(
            uses[from].contains(&to.to_string()),
            "{from} -> {to} not read: {uses:?}"
        );
    }
    if let Some(circle) = a_circle(&uses) {
        panic!(
            "the operator's modules use each other in a circle: {}",
            circle.join(" -> ")
        );
    }
}

/// The uses between the operator's folders and top-level files: each module counted as the
/// folder (or file) of `src/operator/` it is in.
fn operator_folder_uses(
    uses: &std::collections::BTreeMap<String, Vec<String>>,
) -> std::collections::BTreeMap<String, Vec<String>> {
    let top = |m: &str| m.split("::").next().unwrap_or(m).to_string();
    let mut folders: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for (from, to) in uses {
        let entry = folders.entry(top(from)).or_default();
        for t in to {
            let t = top(t);
            if t != top(from) && !entry.contains(&t) {
                entry.push(t);
            }
        }
    }
    for list in folders.values_mut() {
        list.sort();
    }
    folders
}

/// The operator's folders are layers: no folder (or top-level file) of `src/operator/`
/// uses one that uses it back, directly or through others. The state of the tracked CRDs
/// and what a report says sit low; the Controller's reconcile above the audits, reports,
/// migrations and conversion round trips it drives; the leadership term on top.
#[test]
fn operator_folders_form_layers() {
    let operator = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/operator");
    let folders = operator_folder_uses(&operator_module_uses(&operator));
    for folder in [
        "state",
        "status",
        "audits",
        "reports",
        "migrations",
        "conversions",
        "crds",
        "leadership",
    ] {
        assert!(
            folders.contains_key(folder),
            "no folder {folder}: {folders:?}"
        );
    }
    if let Some(circle) = a_circle(&folders) {
        panic!(
            "the operator's folders use each other in a circle: {}",
            circle.join(" -> ")
        );
    }
    // Below the others: what a report says uses no other folder, and the state only that.
    let uses = |f: &str| -> Vec<&str> { folders[f].iter().map(String::as_str).collect() };
    for folder in [
        "status",
        "state",
        "audits",
        "reports",
        "migrations",
        "conversions",
    ] {
        for upper in ["crds", "leadership"] {
            assert!(
                !uses(folder).contains(&upper),
                "{folder} uses {upper}: {:?}",
                uses(folder)
            );
        }
    }
    for (a, b) in [
        ("audits", "reports"),
        ("reports", "audits"),
        ("audits", "migrations"),
        ("migrations", "audits"),
        ("reports", "migrations"),
        ("migrations", "reports"),
        ("conversions", "audits"),
        ("conversions", "reports"),
        ("conversions", "migrations"),
        ("audits", "conversions"),
        ("reports", "conversions"),
        ("migrations", "conversions"),
    ] {
        assert!(!uses(a).contains(&b), "{a} uses {b}: {:?}", uses(a));
    }
    for lower in ["status", "state"] {
        for upper in ["audits", "reports", "migrations", "conversions"] {
            assert!(
                !uses(lower).contains(&upper),
                "{lower} uses {upper}: {:?}",
                uses(lower)
            );
        }
    }
    assert!(!uses("status").contains(&"state"));
}

#[test]
fn a_circle_of_folders_is_found_through_their_files() {
    // Files of two folders that use each other make a circle of the folders, though no
    // file uses a file that uses it back.
    let uses = |edges: &[(&str, &[&str])]| -> std::collections::BTreeMap<String, Vec<String>> {
        edges
            .iter()
            .map(|(m, u)| (m.to_string(), u.iter().map(|s| s.to_string()).collect()))
            .collect()
    };
    let files = uses(&[
        ("crds::reconcile", &["reports::due", "state"]),
        ("reports::due", &["state"]),
        ("reports::watch", &["crds::removal"]),
        ("crds::removal", &["state"]),
        ("state", &[]),
    ]);
    assert_eq!(a_circle(&files), None);
    let folders = operator_folder_uses(&files);
    assert_eq!(
        a_circle(&folders).map(|c| c.join(" -> ")).as_deref(),
        Some("crds -> reports -> crds")
    );
}

#[test]
fn a_circle_of_modules_is_found() {
    let uses = |edges: &[(&str, &[&str])]| -> std::collections::BTreeMap<String, Vec<String>> {
        edges
            .iter()
            .map(|(m, u)| (m.to_string(), u.iter().map(|s| s.to_string()).collect()))
            .collect()
    };
    let circle = a_circle(&uses(&[
        ("controller", &["context", "reconcile"]),
        ("reconcile", &["state"]),
        ("state", &["controller"]),
        ("context", &[]),
    ]));
    assert_eq!(
        circle.map(|c| c.join(" -> ")).as_deref(),
        Some("controller -> reconcile -> state -> controller")
    );
    assert_eq!(
        a_circle(&uses(&[("a", &["b"]), ("b", &["c"]), ("c", &[])])),
        None
    );
}
