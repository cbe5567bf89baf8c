//! `crd-audit`: see `crd-audit --help`.

use crd_audit::{command_line, program};
use std::process::ExitCode;

/// Chosen when the binary is built: mimalloc, or glibc's malloc with the feature
/// `system-allocator` (the operator's image; see `crd_audit::allocator`).
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
#[cfg(feature = "system-allocator")]
#[global_allocator]
static ALLOCATOR: std::alloc::System = std::alloc::System;

fn main() -> ExitCode {
    let (cli, bin_name) = command_line::parse();
    if cli.runs_the_operator() {
        crd_audit::allocator::tune_for_operator();
    }
    // A panic caught while judging one document is reported with that document (as an
    // internal error), not printed as well.
    crd_audit_engine::panic_guard::install_quiet_hook();
    // The engine walks schemas and documents recursively; give it a roomy stack.
    std::thread::Builder::new()
        .name("crd-audit".into())
        .stack_size(256 << 20)
        .spawn(move || command_line::run(cli, bin_name))
        .expect("spawn the main thread")
        .join()
        .unwrap_or(ExitCode::from(program::EXIT_INPUT_ERROR))
}
