//! `crd-audit check CRD...`: structural violations and CRD-level problems.

use super::inputs::{self, Sourced};
use super::output::{self, Format};
use super::size_limits::{self, Severity};
use super::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR};
use crd_audit_engine::Cause;
use crd_audit_engine::Crd;
use crd_audit_engine::{CheckReport, check_crd_owned_guarded};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// CRD files or directories (`-` reads standard input). Multi-document YAML and JSON;
    /// `kind: List` documents are unpacked.
    #[arg(required = true, value_name = "CRD")]
    pub crds: Vec<PathBuf>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    pub output: Format,
}

pub fn run(args: &Args) -> u8 {
    let files = match inputs::expand(&args.crds) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INPUT_ERROR;
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let (mut input_errors, mut findings, mut checked, mut internal_errors) = (0, 0, 0, 0);
    let mut junit = super::junit::Report::new("check");
    for file in files {
        let mut docs = inputs::read_file(&file);
        loop {
            // A bug in the reader ends this input, not the run.
            let doc = match crd_audit_engine::panic_guard::catch(|| docs.next()) {
                Ok(Some(d)) => d,
                Ok(None) => break,
                Err(m) => {
                    eprintln!(
                        "error: {}: crd-audit failed while reading this input (a bug): {m}",
                        inputs::display_name(&file)
                    );
                    internal_errors += 1;
                    break;
                }
            };
            let doc = match doc {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("error: {e}");
                    input_errors += 1;
                    if args.output == Format::Junit {
                        let file = inputs::display_name(&file);
                        let written =
                            super::junit::check_input_error(&mut junit, &mut out, &file, &e);
                        if let Err(e) = written {
                            let status = status(input_errors + internal_errors, findings);
                            return output::write_failed(&e, status);
                        }
                    }
                    continue;
                }
            };
            let items = match inputs::try_unpack_lists(doc) {
                Ok(items) => items,
                Err((e, _)) => {
                    eprintln!("error: {e}");
                    input_errors += 1;
                    continue;
                }
            };
            for mut item in items {
                if item.doc.value.is_null() {
                    continue; // an empty document
                }
                // Sizes are measured on the document as read, before the CRD takes it.
                let sizes = size_limits::measure(&item.doc.value);
                let size_findings = size_limits::findings(&sizes);
                // The CRD takes the document's schemas, and the check frees them as it
                // decodes them: a large CRD is held about once.
                let value = std::mem::take(&mut item.doc.value);
                let crd = match crd_audit_engine::panic_guard::catch(move || Crd::from_owned(value))
                {
                    Ok(Ok(c)) => c,
                    Ok(Err(e)) => {
                        eprintln!(
                            "error: {} (line {}): {}: {}",
                            item.source(),
                            item.doc.line,
                            e.path,
                            e.message
                        );
                        input_errors += 1;
                        continue;
                    }
                    Err(m) => {
                        eprintln!(
                            "error: {} (line {}): crd-audit failed while reading this CRD (a bug): {m}",
                            item.source(),
                            item.doc.line
                        );
                        internal_errors += 1;
                        continue;
                    }
                };
                let report = check_crd_owned_guarded(crd);
                checked += 1;
                let too_large = size_findings.iter().any(|f| f.severity == Severity::Error);
                if report.has_findings() || too_large {
                    findings += 1;
                }
                if report.internal_error.is_some() {
                    internal_errors += 1;
                }
                for e in &report.decode_errors {
                    // Values carry no positions: the line is the document's.
                    eprintln!("error: {} (line {}): {e}", item.source(), item.doc.line);
                    input_errors += 1;
                }
                let written = match args.output {
                    Format::Json => write_json(&mut out, &item, &report, &sizes, &size_findings),
                    Format::Text => write_text(&mut out, &item, &report, &size_findings),
                    Format::Junit => super::junit::check_case(
                        &mut junit,
                        &mut out,
                        &item,
                        &report,
                        &size_findings,
                    ),
                };
                if let Err(e) = written {
                    let status = status(input_errors + internal_errors, findings);
                    return output::write_failed(&e, status);
                }
            }
        }
    }
    let mut written = Ok(());
    if args.output == Format::Text {
        written = writeln!(
            out,
            "checked {checked} CRD(s): {findings} with findings, {input_errors} input error(s){}",
            match internal_errors {
                0 => String::new(),
                n => format!(", {n} internal error(s) (bugs in crd-audit)"),
            }
        );
    }
    if args.output == Format::Junit {
        written = junit.finish(&mut out);
    }
    let status = status(input_errors + internal_errors, findings);
    match written.and_then(|()| out.flush()) {
        Ok(()) => status,
        Err(e) => output::write_failed(&e, status),
    }
}

fn status(errors: usize, findings: usize) -> u8 {
    if errors > 0 {
        EXIT_INPUT_ERROR
    } else if findings > 0 {
        EXIT_FINDINGS
    } else {
        EXIT_CLEAN
    }
}

fn causes_json(list: &[Cause]) -> serde_json::Value {
    serde_json::Value::Array(list.iter().map(Cause::to_json).collect())
}

fn write_json(
    out: &mut impl Write,
    item: &Sourced,
    r: &CheckReport,
    sizes: &size_limits::Sizes,
    size_findings: &[size_limits::Finding],
) -> std::io::Result<()> {
    let mut v = json!({
        "source": item.source(),
        "crd": r.crd,
        "nonStructural": causes_json(&r.non_structural),
        "crdErrors": causes_json(&r.crd_errors),
        "warnings": r.warnings,
        "storedVersionsNotServed": r.stored_versions_not_served,
        "sizes": {
            "requestBody": sizes.request_body,
            "lastAppliedAnnotation": sizes.last_applied,
            "annotationsWithLastApplied": sizes.annotations_with_last_applied,
            "storedProtobuf": sizes.stored_protobuf,
        },
        "sizeFindings": size_findings.iter().map(|f| json!({
            "severity": f.severity.as_str(),
            "limit": f.limit_name,
            "bytes": f.bytes,
            "limitBytes": f.limit_bytes,
            "message": f.message,
        })).collect::<Vec<_>>(),
    });
    if let Some(e) = &r.internal_error {
        v["internalError"] = json!(e);
    }
    if let Some(c) = &r.condition {
        v["nonStructuralCondition"] =
            json!({"status": c.status, "reason": c.reason, "message": c.message});
    }
    writeln!(out, "{v}")
}

fn write_text(
    out: &mut impl Write,
    item: &Sourced,
    r: &CheckReport,
    size_findings: &[size_limits::Finding],
) -> std::io::Result<()> {
    let head = format!("{} {}", item.source(), r.crd);
    if let Some(e) = &r.internal_error {
        writeln!(out, "{head}: InternalError: {e}")?;
    }
    for c in &r.non_structural {
        writeln!(out, "{head}: NonStructuralSchema: {}", c.message())?;
    }
    for c in &r.crd_errors {
        writeln!(out, "{head}: CRDInvalid: {}", c.message())?;
    }
    for v in &r.stored_versions_not_served {
        writeln!(
            out,
            "{head}: StoredVersionNotServed: version {v:?} is listed in status.storedVersions but is not served"
        )?;
    }
    for f in size_findings {
        match f.severity {
            Severity::Error => writeln!(out, "{head}: TooLarge: {}", f.message)?,
            Severity::Warning => writeln!(out, "{head}: Warning: {}", f.message)?,
        }
    }
    for w in &r.warnings {
        writeln!(out, "{head}: Warning: {w}")?;
    }
    if !r.has_findings() && !size_findings.iter().any(|f| f.severity == Severity::Error) {
        writeln!(out, "{head}: ok")?;
    }
    Ok(())
}
