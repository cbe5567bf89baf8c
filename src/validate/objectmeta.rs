//! ObjectMeta validation of custom resources.
//!
//! STUB: being replaced by the full implementation.
