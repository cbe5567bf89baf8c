//! What an audit of a cluster is, shared by `crd-audit audit` and the operator: its
//! configuration (`config`), judging one stored object and the per-CRD tally of
//! judgements with redaction (`judge`), reading a CRD the server served (`read_crd`: one
//! policy for a CRD that cannot be read), the `SchemaAudit` report types and CRD
//! (`schema_audit`), a verdict as the program shows it (`shown_verdict`), and the names of
//! the objects an operator instance keeps by name (`instance_names`). No I/O: the callers
//! read the cluster (`crate::cluster`) and write.

pub mod config;
pub mod instance_names;
pub mod judge;
pub mod read_crd;
pub mod schema_audit;
pub mod shown_verdict;
