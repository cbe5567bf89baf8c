//! What checking one CRD found, as one list of kinds and messages, for the outputs that show
//! findings one by one (`audit`'s text and SARIF, JUnit test cases).

use super::sarif::{self, check_rules};
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

pub struct Finding {
    /// `NonStructuralSchema`, `CRDInvalid`, `TooLarge`, `Warning`, ...
    pub kind: &'static str,
    /// The SARIF rule (src/cli/sarif.rs).
    pub rule: &'static str,
    pub level: Level,
    pub message: String,
    /// The field of the CRD it is about (empty for the whole CRD).
    pub field: String,
}

/// Every finding of a CRD: errors first, then problems, then warnings.
pub fn list(report: &CheckReport, sizes: &[size_limits::Finding]) -> Vec<Finding> {
    let mut found = Vec::new();
    let mut push = |kind, rule, level, message: String, field: &str| {
        found.push(Finding {
            kind,
            rule,
            level,
            message,
            field: field.to_string(),
        })
    };
    if let Some(e) = &report.internal_error {
        push(
            "InternalError",
            check_rules::INTERNAL_ERROR,
            Level::Error,
            e.clone(),
            "",
        );
    }
    for e in &report.decode_errors {
        push(
            "InputError",
            check_rules::INPUT_ERROR,
            Level::Error,
            e.clone(),
            "",
        );
    }
    for (kind, rule, causes) in [
        (
            "NonStructuralSchema",
            check_rules::NON_STRUCTURAL,
            &report.non_structural,
        ),
        ("CRDInvalid", check_rules::CRD_INVALID, &report.crd_errors),
    ] {
        for c in causes {
            push(kind, rule, Level::Finding, c.message(), c.field.as_str());
        }
    }
    for v in &report.stored_versions_not_served {
        push(
            "StoredVersionNotServed",
            check_rules::STORED_VERSION_NOT_SERVED,
            Level::Finding,
            format!("version {v:?} is listed in status.storedVersions but is not served"),
            "status.storedVersions",
        );
    }
    for f in sizes {
        let rule = sarif::size_rule(f.limit_name);
        match f.severity {
            Severity::Warning => push("Warning", rule, Level::Warning, f.message.clone(), ""),
            _ => push("TooLarge", rule, Level::Finding, f.message.clone(), ""),
        }
    }
    for w in &report.warnings {
        let field = w.field.as_str();
        push(
            "Warning",
            check_rules::CRD_WARNING,
            Level::Warning,
            w.message.clone(),
            field,
        );
    }
    found
}

/// Whether a CRD's findings make a command fail: anything but warnings.
pub fn failing(found: &[Finding]) -> bool {
    found.iter().any(|f| f.level != Level::Warning)
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
        let kinds: Vec<_> = list(&r, &[]).iter().map(|f| f.kind).collect();
        assert_eq!(kinds, ["InternalError", "CRDInvalid", "Warning"]);
        assert!(failing(&list(&r, &[])));
    }
}
