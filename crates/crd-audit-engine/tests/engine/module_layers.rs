//! The engine's top-level modules form layers: a module may use only modules of lower layers
//! (so there is no cycle between them). This test reads the engine's source files and checks
//! every `crate::<module>` path and every `use crate::{...}` group against the order below.

use crate::layers;

use layers::{crate_references, layer_of, violations};
use std::fs;
use std::path::Path;

/// The layers, lowest first. Modules of one layer may not use each other.
const LAYERS: &[&[&str]] = &[
    // Go standard library behaviour; depends on nothing.
    &["go"],
    // Kubernetes value semantics (kube-openapi strfmt formats) on top of go.
    &["k8s"],
    // Helpers that depend on nothing in the engine: the panic guard, test data lookup.
    &["guard", "testing"],
    &["load", "cause"],
    &["schema"],
    &["crd"],
    &["cel"],
    // The release judged by: its CEL environments, what its server drops from a CRD.
    &["release"],
    &["validate"],
    // What the API server checks and restores in a conversion webhook's answer.
    &["conversion"],
    &["structural"],
    &["diff"],
    &["fuzz"],
];

#[test]
fn engine_modules_use_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let bad = violations(&src, LAYERS);
    assert!(bad.is_empty(), "layering violations:\n{}", bad.join("\n"));
}

#[test]
fn every_top_level_module_has_a_layer() {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs");
    let text = fs::read_to_string(&lib).expect("src/lib.rs");
    // `pub mod x;` lines, and the modules listed in `internal_modules!(...)`.
    let mut modules: Vec<&str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .filter_map(|l| l.strip_suffix(';'))
        // The macro's own `pub mod $name;`.
        .filter(|m| !m.starts_with('$'))
        .collect();
    let internal = text
        .split("internal_modules!(")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .expect("an internal_modules!(...) list in src/lib.rs");
    modules.extend(internal.split(',').map(str::trim).filter(|m| !m.is_empty()));
    assert!(modules.len() > 5, "no modules read from src/lib.rs");
    for m in modules {
        assert!(
            layer_of(LAYERS, m).is_some(),
            "module `{m}` of src/lib.rs is in no layer"
        );
    }
}

#[test]
fn references_are_found_in_paths_and_groups() {
    let source = "use crate::go::regexp;\n\
                  // crate::diff in a comment is not a use\n\
                  use crate::{\n    cel::value::Val,\n    schema::{Items, Props},\n    k8s,\n};\n\
                  fn f() { crate::validate::object::run(); }\n";
    let found = crate_references(source);
    let expected: Vec<(usize, String)> = [
        (1, "go"),
        (4, "cel"),
        (5, "schema"),
        (6, "k8s"),
        (8, "validate"),
    ]
    .iter()
    .map(|(l, m)| (*l, m.to_string()))
    .collect();
    assert_eq!(found, expected);
}
