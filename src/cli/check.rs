//! `crd-audit check CRD...`: structural violations and CRD-level problems.

use super::inputs::{self, Sourced};
use super::locate::{self, LazyPositions};
use super::output::{self, Format};
use super::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR};
use crate::release::KubeVersion;
use crd_audit_engine::Cause;
use crd_audit_engine::Crd;
use crd_audit_engine::load::positions::{DocumentPositions, Position};
use crd_audit_engine::size_limits::{self, Severity};
use crd_audit_engine::{CheckReport, check_crd};
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
    /// Check as the API server of this Kubernetes release would (1.X, default 1.36): its CEL
    /// rules compile in the CEL environment of that release's new expressions, that of the
    /// previous release (a rule using a library the release lacks does not compile), and
    /// `optionalOldSelf` is dropped before 1.30.
    #[arg(long, value_name = "X.Y")]
    pub kubernetes_version: Option<String>,
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
    let mut out = stdout.lock();
    let (mut input_errors, mut findings, mut checked, mut internal_errors) = (0, 0, 0, 0);
    let mut junit = super::junit::Report::new("check");
    let mut sarif = super::sarif::check_report();
    let sarif_output = args.output == Format::Sarif;
    for file in files {
        let name = inputs::display_name(&file);
        let mut docs = inputs::read_file_located(&file);
        loop {
            // A bug in the reader ends this input, not the run.
            let (doc, text) = match crd_audit_engine::panic_guard::catch(|| docs.next()) {
                Ok(Some(d)) => d,
                Ok(None) => break,
                Err(m) => {
                    let message = format!("crd-audit failed while reading this input (a bug): {m}");
                    eprintln!("error: {name}: {message}");
                    internal_errors += 1;
                    if sarif_output {
                        sarif.notify(super::sarif::Level::Error, format!("{name}: {message}"));
                    }
                    break;
                }
            };
            let doc = match doc {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("error: {e}");
                    input_errors += 1;
                    if args.output == Format::Junit {
                        let written =
                            super::junit::check_input_error(&mut junit, &mut out, &name, &e);
                        if let Err(e) = written {
                            let status = status(input_errors + internal_errors, findings);
                            return output::write_failed(&e, status);
                        }
                    }
                    if sarif_output
                        && let Err(e) = super::sarif::input_error(&mut sarif, &mut out, &name, &e)
                    {
                        let status = status(input_errors + internal_errors, findings);
                        return output::write_failed(&e, status);
                    }
                    continue;
                }
            };
            let paths = locate::item_paths(&doc.doc.value);
            let items = match inputs::try_unpack_lists(doc) {
                Ok(items) => items,
                Err((e, _)) => {
                    eprintln!("error: {e}");
                    input_errors += 1;
                    if sarif_output
                        && let Err(e) = super::sarif::input_error(&mut sarif, &mut out, &name, &e)
                    {
                        let status = status(input_errors + internal_errors, findings);
                        return output::write_failed(&e, status);
                    }
                    continue;
                }
            };
            // The document's positions, read once when a finding needs them.
            let mut positions = LazyPositions::new(text);
            for (k, mut item) in items.into_iter().enumerate() {
                if item.doc.value.is_null() {
                    continue; // an empty document
                }
                let prefix = paths.get(k).map_or("", String::as_str);
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
                        let message = format!("{}: {}", e.path, e.message);
                        eprintln!(
                            "error: {} (line {}): {message}",
                            item.source(),
                            item.doc.line,
                        );
                        input_errors += 1;
                        if sarif_output
                            && let Err(e) = sarif_input_error(&mut sarif, &mut out, &item, message)
                        {
                            let status = status(input_errors + internal_errors, findings);
                            return output::write_failed(&e, status);
                        }
                        continue;
                    }
                    Err(m) => {
                        let message =
                            format!("crd-audit failed while reading this CRD (a bug): {m}");
                        eprintln!(
                            "error: {} (line {}): {message}",
                            item.source(),
                            item.doc.line
                        );
                        internal_errors += 1;
                        if sarif_output {
                            sarif.notify(
                                super::sarif::Level::Error,
                                format!("{} (line {}): {message}", item.source(), item.doc.line),
                            );
                        }
                        continue;
                    }
                };
                let stored_versions = crd.stored_versions.clone();
                let report = check_crd(crd, release);
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
                    if sarif_output
                        && let Err(e) = sarif_input_error(&mut sarif, &mut out, &item, e.clone())
                    {
                        let status = status(input_errors + internal_errors, findings);
                        return output::write_failed(&e, status);
                    }
                }
                let found = Found {
                    report: &report,
                    sizes: &size_findings,
                    stored_versions: &stored_versions,
                };
                let at = found.locate(prefix, item.doc.line, || positions.get());
                let written = match args.output {
                    Format::Json => write_json(&mut out, &item, &found, &sizes, &at),
                    Format::Text => write_text(&mut out, &name, &found, &at),
                    Format::Junit => super::junit::check_case(
                        &mut junit,
                        &mut out,
                        &item,
                        &report,
                        &size_findings,
                    ),
                    Format::Sarif => write_sarif(&mut sarif, &mut out, &item, &found, &at),
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
    if sarif_output {
        written = sarif.finish(&mut out, status);
    }
    match written.and_then(|()| out.flush()) {
        Ok(()) => status,
        Err(e) => output::write_failed(&e, status),
    }
}

/// A CRD that could not be read, as a SARIF result at its document.
fn sarif_input_error(
    r: &mut super::sarif::Report,
    out: &mut impl Write,
    item: &Sourced,
    message: String,
) -> std::io::Result<()> {
    let e = crd_audit_engine::load::LoadError::new(
        item.file.clone(),
        Some(item.doc.index),
        Some(item.doc.line),
        message,
    );
    super::sarif::input_error(r, out, &item.file, &e)
}

/// One CRD's findings as SARIF results, each at its field.
fn write_sarif(
    r: &mut super::sarif::Report,
    out: &mut impl Write,
    item: &Sourced,
    found: &Found,
    at: &Positions,
) -> std::io::Result<()> {
    use super::sarif::{Finding, Location, check_rules};
    let report = found.report;
    let source = item.source();
    let mut result = |rule: &str, message: &str, field: &str, p: &Position| {
        r.result(
            out,
            &Finding {
                rule,
                level: None,
                message,
                location: &Location::File {
                    path: item.file.clone(),
                    line: p.line,
                    column: p.column,
                },
                object: &report.crd,
                field,
                properties: vec![("source", source.clone().into())],
            },
        )
    };
    if let Some(e) = &report.internal_error {
        result(check_rules::INTERNAL_ERROR, e, "", &at.object)?;
    }
    for (c, p) in report.non_structural.iter().zip(&at.non_structural) {
        result(
            check_rules::NON_STRUCTURAL,
            &c.message(),
            c.field.as_str(),
            p,
        )?;
    }
    for (c, p) in report.crd_errors.iter().zip(&at.crd_errors) {
        result(check_rules::CRD_INVALID, &c.message(), c.field.as_str(), p)?;
    }
    for (v, (field, p)) in report
        .stored_versions_not_served
        .iter()
        .zip(&at.stored_versions_not_served)
    {
        let message = format!("version {v:?} is listed in status.storedVersions but is not served");
        result(check_rules::STORED_VERSION_NOT_SERVED, &message, field, p)?;
    }
    for (f, p) in found.sizes.iter().zip(&at.sizes) {
        let rule = super::sarif::size_rule(f.limit_name);
        result(rule, &f.message, "", p)?;
    }
    for (w, (field, p)) in report.warnings.iter().zip(&at.warnings) {
        result(check_rules::CRD_WARNING, &w.message, field, p)?;
    }
    Ok(())
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

/// One CRD's findings.
struct Found<'a> {
    report: &'a CheckReport,
    sizes: &'a [size_limits::Finding],
    /// The CRD's `status.storedVersions`.
    stored_versions: &'a [String],
}

/// Where a CRD and each of its findings stand in its file.
struct Positions {
    object: Position,
    non_structural: Vec<Position>,
    crd_errors: Vec<Position>,
    /// The field of each warning, and where it stands.
    warnings: Vec<(String, Position)>,
    stored_versions_not_served: Vec<(String, Position)>,
    sizes: Vec<Position>,
}

impl Found<'_> {
    fn any(&self) -> bool {
        self.report.has_findings() || !self.report.warnings.is_empty() || !self.sizes.is_empty()
    }

    /// The field of each stored version that is not served (`status.storedVersions[i]`).
    fn stored_version_fields(&self) -> Vec<String> {
        self.report
            .stored_versions_not_served
            .iter()
            .map(|v| match self.stored_versions.iter().position(|s| s == v) {
                Some(i) => format!("status.storedVersions[{i}]"),
                None => "status.storedVersions".to_string(),
            })
            .collect()
    }

    /// Where the CRD (at `prefix` in its document) and its findings stand: each finding at
    /// the deepest node of its field that exists, those about the whole CRD at the CRD.
    /// Documents without findings are not read again.
    fn locate<'p>(
        &self,
        prefix: &str,
        doc_line: usize,
        positions: impl FnOnce() -> Option<&'p DocumentPositions>,
    ) -> Positions {
        let r = self.report;
        let p = self.any().then(positions).flatten();
        let object = locate::object_position(prefix, doc_line, p);
        let at = |field: &str| match p {
            Some(p) if !field.is_empty() => p.locate(&locate::join(
                prefix,
                &locate::crd_document_field(p, prefix, field),
            )),
            _ => object,
        };
        let causes = |list: &[Cause]| list.iter().map(|c| at(c.field.as_str())).collect();
        let with_fields = |fields: Vec<String>| {
            fields
                .into_iter()
                .map(|f| {
                    let p = at(&f);
                    (f, p)
                })
                .collect()
        };
        let warning_fields: Vec<String> = r.warnings.iter().map(|w| w.field.to_string()).collect();
        Positions {
            object,
            non_structural: causes(&r.non_structural),
            crd_errors: causes(&r.crd_errors),
            warnings: with_fields(warning_fields),
            stored_versions_not_served: with_fields(self.stored_version_fields()),
            sizes: self
                .sizes
                .iter()
                .map(|f| match f.limit_name {
                    "lastAppliedAnnotation" => at("metadata.annotations"),
                    _ => object,
                })
                .collect(),
        }
    }
}

fn causes_json(list: &[Cause], at: &[Position]) -> serde_json::Value {
    let mut out = Vec::with_capacity(list.len());
    for (c, p) in list.iter().zip(at) {
        let mut v = c.to_json();
        if let serde_json::Value::Object(m) = &mut v {
            m.insert("line".into(), p.line.into());
            m.insert("column".into(), p.column.into());
        }
        out.push(v);
    }
    serde_json::Value::Array(out)
}

fn write_json(
    out: &mut impl Write,
    item: &Sourced,
    found: &Found,
    sizes: &size_limits::Sizes,
    at: &Positions,
) -> std::io::Result<()> {
    let r = found.report;
    let fields = |list: &[(String, Position)]| {
        list.iter()
            .map(|(f, p)| json!({"field": f, "line": p.line, "column": p.column}))
            .collect::<Vec<_>>()
    };
    let mut v = json!({
        "source": item.source(),
        "line": at.object.line,
        "column": at.object.column,
        "crd": r.crd,
        "nonStructural": causes_json(&r.non_structural, &at.non_structural),
        "crdErrors": causes_json(&r.crd_errors, &at.crd_errors),
        "warnings": r.warnings.iter().map(|w| &w.message).collect::<Vec<_>>(),
        "warningPositions": fields(&at.warnings),
        "storedVersionsNotServed": r.stored_versions_not_served,
        "storedVersionsNotServedPositions": fields(&at.stored_versions_not_served),
        "sizes": {
            "requestBody": sizes.request_body,
            "lastAppliedAnnotation": sizes.last_applied,
            "annotationsWithLastApplied": sizes.annotations_with_last_applied,
            "storedProtobuf": sizes.stored_protobuf,
        },
        "sizeFindings": found.sizes.iter().zip(&at.sizes).map(|(f, p)| {
            let mut v = f.to_json();
            v["line"] = p.line.into();
            v["column"] = p.column.into();
            v
        }).collect::<Vec<_>>(),
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

/// One line a finding, starting with `file:line:column:` as compilers print positions.
fn write_text(
    out: &mut impl Write,
    file: &str,
    found: &Found,
    at: &Positions,
) -> std::io::Result<()> {
    let r = found.report;
    let head = |p: &Position| format!("{file}:{}:{}: {}", p.line, p.column, r.crd);
    if let Some(e) = &r.internal_error {
        writeln!(out, "{}: InternalError: {e}", head(&at.object))?;
    }
    for (c, p) in r.non_structural.iter().zip(&at.non_structural) {
        writeln!(out, "{}: NonStructuralSchema: {}", head(p), c.message())?;
    }
    for (c, p) in r.crd_errors.iter().zip(&at.crd_errors) {
        writeln!(out, "{}: CRDInvalid: {}", head(p), c.message())?;
    }
    for (v, (_, p)) in r
        .stored_versions_not_served
        .iter()
        .zip(&at.stored_versions_not_served)
    {
        writeln!(
            out,
            "{}: StoredVersionNotServed: version {v:?} is listed in status.storedVersions but is not served",
            head(p)
        )?;
    }
    for (f, p) in found.sizes.iter().zip(&at.sizes) {
        match f.severity {
            Severity::Warning => writeln!(out, "{}: Warning: {}", head(p), f.message)?,
            _ => writeln!(out, "{}: TooLarge: {}", head(p), f.message)?,
        }
    }
    for (w, (_, p)) in r.warnings.iter().zip(&at.warnings) {
        writeln!(out, "{}: Warning: {}", head(p), w.message)?;
    }
    if !r.has_findings() && !found.sizes.iter().any(|f| f.severity == Severity::Error) {
        writeln!(out, "{}: ok", head(&at.object))?;
    }
    Ok(())
}
