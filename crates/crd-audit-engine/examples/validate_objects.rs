//! Judges objects against a CRD with the engine alone, as a library user would:
//!
//! ```text
//! cargo run -p crd-audit-engine --example validate_objects -- CRD.yaml OBJECTS.yaml...
//! ```
//!
//! Every document of the object files is judged as stored data ([`Mode::Stored`]): each
//! invalid one is printed with the causes the API server would give, and whether it is stuck
//! (with validation ratcheting, as on 1.30+: every write refused) or only tolerated. The exit
//! status is 1 when an object is invalid, 2 on unreadable input.

use crd_audit_engine::{Crd, CrdValidator, Outcome, Release, check_crd, load};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((crd_file, object_files)) = args.split_first() else {
        eprintln!("usage: validate_objects CRD.yaml OBJECTS.yaml...");
        return ExitCode::from(2);
    };
    match run(crd_file, object_files) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Whether every object is valid.
fn run(crd_file: &str, object_files: &[String]) -> Result<bool, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(crd_file).map_err(|e| format!("{crd_file}: {e}"))?;
    let document = load::parse_str(crd_file, &text)
        .into_iter()
        .next()
        .ok_or_else(|| format!("{crd_file}: no document"))??;
    let crd = Crd::from_value(&document.value).map_err(|e| format!("{crd_file}: {e}"))?;

    // What the API server says of the CRD itself.
    let report = check_crd(&crd, Release::NEWEST);
    for cause in report.non_structural.iter().chain(&report.crd_errors) {
        println!("{}: {cause}", crd.name);
    }

    let validator = CrdValidator::new(&crd)?;
    let mut all_valid = true;
    for file in object_files {
        let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
        for document in load::parse_str(file, &text) {
            let document = document?;
            let verdict = validator.validate_stored(document.value);
            if verdict.is_admitted() {
                continue;
            }
            all_valid = false;
            let stuck = verdict.is_stuck();
            println!(
                "{file}#{} (line {}) {}/{}: {}",
                document.index,
                document.line,
                verdict.kind,
                verdict.name,
                if stuck { "stuck" } else { "invalid, tolerated" }
            );
            match &verdict.outcome {
                Outcome::Refused { causes } => {
                    for cause in causes {
                        println!("  {cause}");
                    }
                }
                Outcome::RequestError(error) => println!("  {}", error.message),
                Outcome::InternalError { message } => println!("  {message}"),
                _ => {}
            }
        }
    }
    Ok(all_valid)
}
