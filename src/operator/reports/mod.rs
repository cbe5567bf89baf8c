//! What the operator writes about the CRDs: the report object and its write (`report`), when
//! a CRD's report is due (`due`, in a reconcile), the reports due (`queue`), the task that
//! writes them and the Events (`writer`), the reports' watch (`watch`), what an earlier
//! operator reported (`earlier`), and the policy reports (`policy`: the objects;
//! `policy_writer`: their writers, with `policyReports: true`). What a report says is
//! `status`'s, from the tracked state (`state`).

pub mod due;
pub mod earlier;
pub mod policy;
pub mod policy_writer;
pub mod queue;
pub mod report;
pub mod watch;
pub mod writer;
