//! What the operator writes about the CRDs: the status a `SchemaAudit` report should have
//! (`status`), the report object and its write (`report`), when a CRD's report is written
//! (`writer`), what an earlier operator reported (`earlier`), and the policy reports
//! (`policy`: the objects; `policy_writer`: their writers, with `policyReports: true`).

pub mod earlier;
pub mod policy;
pub mod policy_writer;
pub mod report;
pub mod status;
pub mod writer;
