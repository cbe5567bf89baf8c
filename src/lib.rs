//! The `crd-audit` command line and operator, on the engine crate `crd_audit_engine`
//! (`crates/crd-audit-engine`).

pub mod allocator;
pub mod audit;
pub mod cli;
pub mod cluster;
pub mod command_line;
pub mod gate;
pub mod judging_pool;
pub mod migration;
pub mod operator;
pub mod packed_crd;
pub mod program;
pub mod release;
pub mod roundtrip;
