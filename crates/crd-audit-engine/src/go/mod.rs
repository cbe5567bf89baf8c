//! Go standard library behaviour the engine reproduces.
//!
//! Each module is named after the Go package it mirrors and names the upstream source files
//! it follows. Nothing here knows about Kubernetes, CEL or schemas: this is the bottom of the
//! engine, used by everything above it.

pub mod regexp;
