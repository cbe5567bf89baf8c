//! What checking one CRD found, as one list of kinds and messages: the one place that names
//! the kinds of CRD finding. Every sink of `check` and `audit` writes its CRDs' findings from
//! this list (the text lines, the SARIF results, the JUnit test cases); `audit` counts its
//! CRDs' findings and warnings with it.

use crd_audit_engine::CheckReport;
use crd_audit_engine::size_limits::{self, Severity};

/// How much a finding weighs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// The CRD could not be judged (a bug in crd-audit, a schema that cannot be decoded).
    Error,
    /// A problem: the CRD is not structural, would be refused, is too large, ...
    Finding,
    /// Worth knowing, not a problem on its own.
    Warning,
}

/// A kind of CRD finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Checking the CRD hit a bug in crd-audit.
    InternalError,
    /// A value of the CRD could not be decoded.
    InputError,
    /// A version's schema is not structural.
    NonStructuralSchema,
    /// CRD validation refuses the CRD.
    CrdInvalid,
    /// `status.storedVersions` lists a version that is not served.
    StoredVersionNotServed,
    /// The CRD is above a size limit (`requestBody`, `etcdRequest`) that refuses it.
    TooLarge(&'static str),
    /// The CRD is above a size limit (`lastAppliedAnnotation`) that only client-side
    /// `kubectl apply` minds.
    SizeWarning(&'static str),
    /// The API server would warn about the CRD.
    Warning,
}

impl Kind {
    /// The kind's name, as the text output and JUnit's test cases write it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::InternalError => "InternalError",
            Kind::InputError => "InputError",
            Kind::NonStructuralSchema => "NonStructuralSchema",
            Kind::CrdInvalid => "CRDInvalid",
            Kind::StoredVersionNotServed => "StoredVersionNotServed",
            Kind::TooLarge(_) => "TooLarge",
            Kind::SizeWarning(_) | Kind::Warning => "Warning",
        }
    }

    pub fn level(self) -> Level {
        match self {
            Kind::InternalError | Kind::InputError => Level::Error,
            Kind::NonStructuralSchema
            | Kind::CrdInvalid
            | Kind::StoredVersionNotServed
            | Kind::TooLarge(_) => Level::Finding,
            Kind::SizeWarning(_) | Kind::Warning => Level::Warning,
        }
    }
}

pub struct Finding {
    pub kind: Kind,
    pub message: String,
    /// The field of the CRD it is about (empty for the whole CRD).
    pub field: String,
}

impl Finding {
    pub fn level(&self) -> Level {
        self.kind.level()
    }
}

/// Every finding of a CRD: errors first, then problems, then warnings.
pub fn list(report: &CheckReport, sizes: &[size_limits::Finding]) -> Vec<Finding> {
    let mut found = Vec::new();
    let mut push = |kind, message: String, field: &str| {
        found.push(Finding {
            kind,
            message,
            field: field.to_string(),
        })
    };
    if let Some(e) = &report.internal_error {
        push(Kind::InternalError, e.clone(), "");
    }
    for e in &report.decode_errors {
        push(Kind::InputError, e.clone(), "");
    }
    for c in &report.non_structural {
        push(Kind::NonStructuralSchema, c.message(), c.field.as_str());
    }
    for c in &report.crd_errors {
        push(Kind::CrdInvalid, c.message(), c.field.as_str());
    }
    for v in &report.stored_versions_not_served {
        push(
            Kind::StoredVersionNotServed,
            format!(
                "version {v:?} is listed in status.storedVersions but is not served: crd-audit migrate {} rewrites its objects and prunes it",
                report.crd
            ),
            "status.storedVersions",
        );
    }
    for f in sizes {
        let kind = match f.severity {
            Severity::Warning => Kind::SizeWarning(f.limit_name),
            _ => Kind::TooLarge(f.limit_name),
        };
        push(kind, f.message.clone(), "");
    }
    for w in &report.warnings {
        push(Kind::Warning, w.message.clone(), w.field.as_str());
    }
    found
}

/// Whether a CRD's findings make a command fail: anything but warnings.
pub fn failing<'a>(found: impl IntoIterator<Item = &'a Finding>) -> bool {
    found.into_iter().any(|f| f.level() != Level::Warning)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crd_audit_engine::{Cause, Path, Warning};

    #[test]
    fn errors_come_first_and_warnings_alone_do_not_fail() {
        let mut r = CheckReport::default();
        r.crd = "a.b".into();
        r.warnings = vec![Warning::new("w", Path::new("spec"))];
        assert!(!failing(&list(&r, &[])));
        r.crd_errors.push(Cause::required(Path::new("spec"), "x"));
        r.internal_error = Some("boom".into());
        let kinds: Vec<_> = list(&r, &[]).iter().map(|f| f.kind.name()).collect();
        assert_eq!(kinds, ["InternalError", "CRDInvalid", "Warning"]);
        assert!(failing(&list(&r, &[])));
    }
}
