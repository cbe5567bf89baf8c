//! Go standard library behaviour the engine reproduces.
//!
//! Each module is named after the Go package it mirrors and names the upstream source files
//! it follows. Nothing here knows about Kubernetes, CEL or schemas: this is the bottom of the
//! engine, used by everything above it.

pub mod base64;
pub mod fmt;
pub mod json;
pub mod mail;
pub mod net;
pub mod regexp;
pub mod strconv;
pub mod strings;
pub mod time;
pub mod url;

/// Go's `string(b)` as a Rust `String`: Go keeps invalid UTF-8, Rust replaces it with U+FFFD.
pub fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
