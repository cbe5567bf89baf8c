//! `crd-audit`: see `crd-audit --help`.

use crd_audit::{command_line, program};
use std::process::ExitCode;

/// mimalloc for the commands, glibc's malloc for the operator (see `allocator`).
#[global_allocator]
static ALLOCATOR: crd_audit::allocator::Allocator = crd_audit::allocator::Allocator;

fn main() -> ExitCode {
    let (cli, bin_name) = command_line::parse();
    if cli.runs_the_operator() {
        crd_audit::allocator::use_system_allocator();
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
