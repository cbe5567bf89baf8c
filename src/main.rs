//! `crd-audit`: see `crd-audit --help`.

use crd_audit::{command_line, program};
use std::process::ExitCode;

/// mimalloc: decoding documents allocates many small values, and the system allocator was a
/// sixth of the validate command's time.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let (cli, bin_name) = command_line::parse();
    // The engine walks schemas and documents recursively; give it a roomy stack.
    std::thread::Builder::new()
        .name("crd-audit".into())
        .stack_size(256 << 20)
        .spawn(move || command_line::run(cli, bin_name))
        .expect("spawn the main thread")
        .join()
        .unwrap_or(ExitCode::from(program::EXIT_INPUT_ERROR))
}
