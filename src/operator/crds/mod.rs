//! The CRDs as the Controller reconciles them: the reconcile and its error policy
//! (`reconcile`, `error`), what reading a CRD does (`revision`), a CRD that went away
//! (`removal`), and the state machine that alone changes a tracked CRD's state (`state`).

pub mod error;
pub mod reconcile;
pub mod removal;
pub mod revision;
pub mod state;
