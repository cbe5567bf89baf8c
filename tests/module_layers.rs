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
