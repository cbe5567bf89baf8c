//! Leading: the Lease that makes one replica active (`lease`), the work of one leadership
//! term (`term`: kube-runtime's Controller, the writer of the reports and Events, the policy
//! report writers) and
//! what its tasks share (`context`).

pub mod context;
pub mod lease;
pub mod term;
