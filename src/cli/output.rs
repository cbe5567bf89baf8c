//! Output formats shared by every command.

use clap::ValueEnum;

/// `--output`: `text` for people (one finding a line), `json` for machines (one object a line).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
}
