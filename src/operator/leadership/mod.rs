//! Leading: the Lease that makes one replica active (`lease`), and the work of one
//! leadership term (`term`: kube-runtime's Controller, the object audits it starts, the
//! writer of the reports and Events, the reports' watch, the policy report writers, the
//! storage migrations), wired from the parts each task takes.

pub mod lease;
pub mod term;
