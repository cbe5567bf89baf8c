//! The audits of the objects of every audited CRD.

pub mod tasks;
