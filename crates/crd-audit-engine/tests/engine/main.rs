//! The engine's integration tests, in one test binary (one module per area):
//! `cargo test -p crd-audit-engine --test engine [module::]`.
//!
//! - `conformance_check`, `conformance_validate`, `conformance_prune`: the conformance corpus
//!   (`../shared/conformance`) against the oracle's outputs;
//! - `cel_suite` (data in `tests/cel_suite/`), `cel_spec`, `cel_no_panic`: CEL;
//! - `update_cases`: UPDATEs with ratcheting against the oracle's answers;
//! - `loader_cases` (data in `tests/data/loader/`), `serialize`: documents in and out;
//! - `proptest_keywords`, `fuzz_smoke`: property tests and the fuzz corpora replayed;
//! - `panic_hook`: the panic guard and a program's hook (in a child process of its own);
//! - `module_layers`: the engine's modules form layers;
//! - `conversion_coerce`: a converted object pruned and defaulted at its version.

mod common;
mod layers;

mod cel_no_panic;
mod cel_spec;
mod cel_suite;
mod conformance_check;
mod conformance_prune;
mod conformance_validate;
mod conversion_coerce;
mod fuzz_smoke;
mod loader_cases;
mod module_layers;
mod panic_hook;
mod proptest_keywords;
mod serialize;
mod update_cases;
