//! `crd-audit completions SHELL`: the shell completion script (clap_complete).

use std::io::Write;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell to complete for: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// Writes the script of the command line `cmd` for `bin_name` (the name the shell runs: `crd-audit`, or
/// `kubectl-crd_audit` when installed as a kubectl plugin).
pub fn run(args: &Args, mut cmd: clap::Command, bin_name: &str) -> u8 {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, bin_name, &mut script);
    let mut out = std::io::stdout().lock();
    match out.write_all(&script).and_then(|()| out.flush()) {
        Ok(()) => super::EXIT_CLEAN,
        Err(e) => super::sink::write_failed(&e, super::EXIT_CLEAN),
    }
}
