//! A conversion webhook to try `crd-audit roundtrip` on (and to measure it with,
//! `benches/roundtrip.sh`): the tests' own (`tests/e2e/support/conversion_webhook.rs`),
//! served over TLS on a free port of 127.0.0.1 until its standard input closes.
//!
//!   cargo run --release --example conversion_webhook GROUP CRD_FILE
//!
//! Writes to CRD_FILE the CRD `crontabs.GROUP` (storage version `v2`, `v1` served too)
//! converted by it (its URL and CA bundle filled in), prints the URL, and serves. A sound
//! conversion loses nothing; an object labelled `flaw=<name>` gets that flaw (see the
//! module). On exit it prints how many reviews it answered, by version asked for.
//!
//!   conversion_webhook --serve ADDR DNS_NAME...
//!
//! Serves on ADDR (`0.0.0.0:8443`) for ever, its certificate naming each DNS_NAME (a
//! Service's `NAME.NAMESPACE.svc`, the webhook run in a pod): prints the CA (PEM) that the
//! CRD's `caBundle` must hold, then the line `serving`.

#[allow(dead_code)]
#[path = "../tests/e2e/support/conversion_webhook.rs"]
mod conversion_webhook;

use std::io::Read;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, addr, names @ ..] = args.as_slice()
        && flag == "--serve"
    {
        let webhook = conversion_webhook::ConversionWebhook::serve(addr, names);
        print!("{}", webhook.ca);
        println!("serving");
        loop {
            std::thread::park();
        }
    }
    let [group, crd_file] = args.as_slice() else {
        eprintln!("usage: conversion_webhook GROUP CRD_FILE");
        std::process::exit(2);
    };
    let webhook = conversion_webhook::ConversionWebhook::start();
    let crd = conversion_webhook::crontabs_crd(group, &webhook.url, &webhook.ca);
    if let Err(e) = std::fs::write(crd_file, crd.to_string()) {
        eprintln!("writing {crd_file}: {e}");
        std::process::exit(2);
    }
    println!("{}", webhook.url);
    // Serves until standard input closes.
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    eprintln!("answered {:?}", webhook.calls.lock().unwrap());
}
