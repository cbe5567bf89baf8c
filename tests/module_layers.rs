//! The binary crate's top-level modules form layers, as the engine's do: the one-shot
//! commands (`cli`) and the operator share the cluster and audit core and never use each
//! other; only the command line reaches both.

#[path = "../crates/crd-audit-engine/tests/layers/mod.rs"]
mod layers;

use std::path::Path;

/// The layers, lowest first. Modules of one layer may not use each other.
const LAYERS: &[&[&str]] = &[
    // What the program says about itself; the release judged by; a CRD kept compact.
    &["program", "release", "packed_crd", "allocator"],
    // Talking to a cluster: the client, the resources, paginated reading.
    &["cluster"],
    // What an audit is: configuration, judging an object, the report types.
    &["audit"],
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
        "use crate::cluster::reader;\nuse crate::operator::controller::Ctx;\n",
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
