//! Output formats shared by every command.

use clap::ValueEnum;
use crd_audit_engine::Verdict;

/// `--output`: `text` for people (one finding a line), `json` for machines (one object a line),
/// `junit` for CI test reports (JUnit XML), `sarif` for code scanning (SARIF 2.1.0, as GitHub
/// reads it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
    Junit,
    Sarif,
}

/// The status of a command whose output could not be written completely, given the status
/// of what it did: a closed pipe (the reader wanted no more, as `head` does) ends it
/// quietly with that status, as ripgrep does; any other failure (a full disk) is reported
/// and is an error.
pub fn write_failed(e: &std::io::Error, status: u8) -> u8 {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        status
    } else {
        eprintln!("error: writing the output: {e}");
        super::EXIT_INPUT_ERROR
    }
}

/// `Kind namespace/name`, as kubectl names an object.
pub fn object_name(v: &Verdict) -> String {
    let name = if v.name.is_empty() {
        "<no name>"
    } else {
        &v.name
    };
    if v.namespace.is_empty() {
        format!("{} {name}", v.kind)
    } else {
        format!("{} {}/{name}", v.kind, v.namespace)
    }
}
