//! The command-line tests: the built `crd-audit` binary run as users run it, one module per
//! area, in one test binary (as ripgrep does; one link instead of twelve). Helpers are in
//! `common`.

mod common;

mod check;
mod diff_plan;
mod dist;
mod junit;
mod oracle_cases;
mod positions;
mod robust;
mod sarif;
mod size_limits;
mod stdin;
mod unreadable_crds;
mod updates;
mod validate;
