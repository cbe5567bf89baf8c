//! `crd-audit check CRD...`: structural violations and CRD-level problems.

use super::crd_findings::{self, Finding, Kind};
use super::inputs::{self, Sourced};
use super::locate::{self, LazyPositions};
use super::sink::{self, CheckedCrd, Format, Sink, Totals};
use super::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR};
use crate::release::KubeVersion;
use crd_audit_engine::Crd;
use crd_audit_engine::load::LoadError;
use crd_audit_engine::load::positions::{DocumentPositions, Position};
use crd_audit_engine::size_limits::{self, Severity};
use crd_audit_engine::{CheckReport, check_crd};
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
    /// Check as the API server of this Kubernetes release would (1.X, default 1.36): its CEL
    /// rules compile in the CEL environment of that release's new expressions, that of the
    /// previous release (a rule using a library the release lacks does not compile), and
    /// `optionalOldSelf` is dropped before 1.30.
    #[arg(long, value_name = "X.Y")]
    pub kubernetes_version: Option<String>,
}

/// What `check` counts.
#[derive(Default)]
struct Counts {
    checked: usize,
    /// CRDs with findings.
    findings: usize,
    input_errors: usize,
    internal_errors: usize,
}

impl Counts {
    fn status(&self) -> u8 {
        if self.input_errors + self.internal_errors > 0 {
            EXIT_INPUT_ERROR
        } else if self.findings > 0 {
            EXIT_FINDINGS
        } else {
            EXIT_CLEAN
        }
    }
}

pub fn run(args: &Args) -> u8 {
    let release = match args
        .kubernetes_version
        .as_deref()
        .map(str::parse::<KubeVersion>)
    {
        None => KubeVersion::default(),
        Some(Ok(r)) => r,
        Some(Err(e)) => {
            eprintln!("error: --kubernetes-version: {e}");
            return EXIT_INPUT_ERROR;
        }
    }
    .engine();
    let files = match inputs::expand(&args.crds) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INPUT_ERROR;
        }
    };
    let stdout = std::io::stdout();
    let mut sink = sink::new(args.output, sink::Command::Check, stdout.lock());
    let mut n = Counts::default();
    let written = files
        .iter()
        .try_for_each(|file| check_file(file, release, &mut *sink, &mut n))
        .and_then(|()| {
            sink.totals(&Totals::Check {
                checked: n.checked,
                findings: n.findings,
                input_errors: n.input_errors,
                internal_errors: n.internal_errors,
            })
        })
        .and_then(|()| sink.finish(n.status()))
        .and_then(|()| sink.flush());
    match written {
        Ok(()) => n.status(),
        Err(e) => sink::write_failed(&e, n.status()),
    }
}

/// Checks every CRD of one file (`-`: standard input), counting; `Err` only when the output
/// cannot be written.
fn check_file(
    file: &std::path::Path,
    release: crd_audit_engine::Release,
    sink: &mut dyn Sink,
    n: &mut Counts,
) -> std::io::Result<()> {
    let name = inputs::display_name(file);
    let mut docs = inputs::read_file_located(file);
    loop {
        // A bug in the reader ends this input, not the run.
        let (doc, text) = match crd_audit_engine::panic_guard::catch(|| docs.next()) {
            Ok(Some(d)) => d,
            Ok(None) => return Ok(()),
            Err(m) => {
                let message = format!("crd-audit failed while reading this input (a bug): {m}");
                eprintln!("error: {name}: {message}");
                n.internal_errors += 1;
                sink.problem(format!("{name}: {message}"));
                return Ok(());
            }
        };
        let doc = match doc {
            Ok(d) => d,
            Err(e) => {
                eprintln!("error: {e}");
                n.input_errors += 1;
                sink.unreadable(&name, e.doc, &e)?;
                continue;
            }
        };
        let paths = locate::item_paths(&doc.doc.value);
        let items = match inputs::try_unpack_lists(doc) {
            Ok(items) => items,
            Err((e, _)) => {
                eprintln!("error: {e}");
                n.input_errors += 1;
                sink.unreadable_crd(&name, &e)?;
                continue;
            }
        };
        // The document's positions, read once when a finding needs them.
        let mut positions = LazyPositions::new(text);
        for (k, item) in items.into_iter().enumerate() {
            if item.doc.value.is_null() {
                continue; // an empty document
            }
            let prefix = paths.get(k).map_or("", String::as_str);
            check_item(item, prefix, &mut positions, release, sink, n)?;
        }
    }
}

/// Checks one CRD (`prefix`: where it stands in its document) and hands it to the sink.
fn check_item(
    mut item: Sourced,
    prefix: &str,
    positions: &mut LazyPositions,
    release: crd_audit_engine::Release,
    sink: &mut dyn Sink,
    n: &mut Counts,
) -> std::io::Result<()> {
    // Sizes are measured on the document as read, before the CRD takes it.
    let sizes = size_limits::measure(&item.doc.value);
    let size_findings = size_limits::findings(&sizes);
    // The CRD takes the document's schemas, and the check frees them as it decodes them: a
    // large CRD is held about once.
    let value = std::mem::take(&mut item.doc.value);
    let at_document = |message: String| {
        LoadError::new(
            item.file.clone(),
            Some(item.doc.index),
            Some(item.doc.line),
            message,
        )
    };
    let crd = match crd_audit_engine::panic_guard::catch(move || Crd::from_owned(value)) {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => {
            let message = format!("{}: {}", e.path, e.message);
            eprintln!(
                "error: {} (line {}): {message}",
                item.source(),
                item.doc.line,
            );
            n.input_errors += 1;
            return sink.unreadable_crd(&item.file, &at_document(message));
        }
        Err(m) => {
            let message = format!("crd-audit failed while reading this CRD (a bug): {m}");
            let said = format!("{} (line {}): {message}", item.source(), item.doc.line);
            eprintln!("error: {said}");
            n.internal_errors += 1;
            sink.problem(said);
            return Ok(());
        }
    };
    let stored_versions = crd.stored_versions.clone();
    let report = check_crd(crd, release);
    n.checked += 1;
    let too_large = size_findings.iter().any(|f| f.severity == Severity::Error);
    if report.has_findings() || too_large {
        n.findings += 1;
    }
    if report.internal_error.is_some() {
        n.internal_errors += 1;
    }
    for e in &report.decode_errors {
        // Values carry no positions: the line is the document's.
        eprintln!("error: {} (line {}): {e}", item.source(), item.doc.line);
        n.input_errors += 1;
        sink.unreadable_crd(&item.file, &at_document(e.clone()))?;
    }
    let mut found = crd_findings::list(&report, &size_findings);
    name_stored_versions(&mut found, &report, &stored_versions);
    let (object, found) = locate_findings(found, prefix, item.doc.line, || positions.get());
    sink.checked_crd(&CheckedCrd {
        file: &item.file,
        source: &item.source(),
        report: &report,
        sizes: &sizes,
        size_findings: &size_findings,
        found: &found,
        object,
    })
}

/// Names each stored version that is not served by its entry in the CRD's
/// `status.storedVersions` (`status.storedVersions[i]`).
fn name_stored_versions(found: &mut [Finding], report: &CheckReport, stored_versions: &[String]) {
    let findings = found
        .iter_mut()
        .filter(|f| f.kind == Kind::StoredVersionNotServed);
    for (f, v) in findings.zip(&report.stored_versions_not_served) {
        if let Some(i) = stored_versions.iter().position(|s| s == v) {
            f.field = format!("status.storedVersions[{i}]");
        }
    }
}

/// Where the CRD (at `prefix` in its document) and each of its findings stand: each finding
/// at the deepest node of its field that exists, those about the whole CRD at the CRD.
/// Documents without findings are not read again.
fn locate_findings<'p>(
    found: Vec<Finding>,
    prefix: &str,
    doc_line: usize,
    positions: impl FnOnce() -> Option<&'p DocumentPositions>,
) -> (Position, Vec<(Finding, Position)>) {
    let p = (!found.is_empty()).then(positions).flatten();
    let object = locate::object_position(prefix, doc_line, p);
    let at = |field: &str| match p {
        Some(p) if !field.is_empty() => p.locate(&locate::join(
            prefix,
            &locate::crd_document_field(p, prefix, field),
        )),
        _ => object,
    };
    let found = found
        .into_iter()
        .map(|f| {
            let p = match f.kind {
                // The last-applied annotation stands among the annotations; the others are
                // about the whole CRD.
                Kind::SizeWarning("lastAppliedAnnotation")
                | Kind::TooLarge("lastAppliedAnnotation") => at("metadata.annotations"),
                Kind::SizeWarning(_) | Kind::TooLarge(_) => object,
                _ => at(&f.field),
            };
            (f, p)
        })
        .collect();
    (object, found)
}
