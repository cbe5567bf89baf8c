//! The audits of the objects of every audited CRD: one task per CRD (`tasks`, started and
//! stopped by the CRDs' reconciles), what each runs (`objects`: a watch of the storage
//! version, every object judged and dropped), and the bounded cache of compiled revisions
//! they judge with (`validators`).

pub mod objects;
pub mod tasks;
pub mod validators;
