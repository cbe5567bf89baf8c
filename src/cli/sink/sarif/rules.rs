//! The rules of each command (the catalogue a SARIF log declares), and which rule each kind
//! of finding is filed under.

use super::log::{Level, Report, Rule};
use crate::cli::crd_findings::Kind;
use crd_audit_engine::{Cause, ErrorType};

const fn rule(
    id: &'static str,
    short: &'static str,
    full: &'static str,
    help: &'static str,
    level: Level,
) -> Rule {
    Rule {
        id,
        name: id,
        short,
        full,
        help,
        level,
    }
}

pub(super) const INPUT_ERROR: Rule = rule(
    "InputError",
    "A document could not be read.",
    "The input is not readable YAML or JSON, is too large, or does not hold what the command expects (kubectl and the API server would refuse it too).",
    "Fix the document so that it decodes: the message names the file, the document's index and its line.",
    Level::Error,
);

pub(super) const INTERNAL_ERROR: Rule = rule(
    "InternalError",
    "crd-audit failed on this input (a bug in crd-audit).",
    "Judging this input hit a bug in crd-audit; the input was not judged. The message holds the failure's details.",
    "Report the message and, if you can, the input to the crd-audit project.",
    Level::Error,
);

/// Causes of the API server's field errors, by type.
pub(super) const CAUSES: [(ErrorType, Rule); 9] = [
    (
        ErrorType::Required,
        rule(
            "FieldValueRequired",
            "A required field is missing.",
            "The API server would refuse the object: a field its schema requires is missing or empty (cause type FieldValueRequired).",
            "Set the field named in the message; its position is the object that should hold it.",
            Level::Error,
        ),
    ),
    (
        ErrorType::Invalid,
        rule(
            "FieldValueInvalid",
            "A field's value is invalid.",
            "The API server would refuse the object: a value breaks its schema (a bound, a pattern, a format, a CEL rule, ...) (cause type FieldValueInvalid).",
            "Change the value so that it meets the constraint the message names.",
            Level::Error,
        ),
    ),
    (
        ErrorType::TypeInvalid,
        rule(
            "FieldValueTypeInvalid",
            "A field's value has the wrong type.",
            "The API server would refuse the object: a value is not of the type its schema declares (cause type FieldValueTypeInvalid).",
            "Give the field a value of the type the message names (mind YAML's unquoted numbers and booleans).",
            Level::Error,
        ),
    ),
    (
        ErrorType::NotSupported,
        rule(
            "FieldValueNotSupported",
            "A field's value is not one of the allowed values.",
            "The API server would refuse the object: a value is not in its schema's enum (cause type FieldValueNotSupported).",
            "Use one of the supported values the message lists.",
            Level::Error,
        ),
    ),
    (
        ErrorType::Forbidden,
        rule(
            "FieldValueForbidden",
            "A field is forbidden here.",
            "The API server would refuse the object: a field may not be set, or not in this combination (cause type FieldValueForbidden).",
            "Remove the field or the conflicting setting the message names.",
            Level::Error,
        ),
    ),
    (
        ErrorType::TooLong,
        rule(
            "FieldValueTooLong",
            "A field's value is too long.",
            "The API server would refuse the object: a string or list is longer than its schema allows (cause type FieldValueTooLong).",
            "Shorten the value to the limit the message names.",
            Level::Error,
        ),
    ),
    (
        ErrorType::TooMany,
        rule(
            "FieldValueTooMany",
            "A field has too many items.",
            "The API server would refuse the object: a list or map has more items than its schema allows (cause type FieldValueTooMany).",
            "Remove items down to the limit the message names.",
            Level::Error,
        ),
    ),
    (
        ErrorType::Duplicate,
        rule(
            "FieldValueDuplicate",
            "A list holds a duplicate.",
            "The API server would refuse the object: a set or map list holds the same item or key twice (cause type FieldValueDuplicate).",
            "Remove or rename the duplicate item the message names.",
            Level::Error,
        ),
    ),
    (
        ErrorType::NotFound,
        rule(
            "FieldValueNotFound",
            "A referenced value was not found.",
            "The API server would refuse the object: a value it refers to does not exist (cause type FieldValueNotFound).",
            "Refer to a value that exists.",
            Level::Error,
        ),
    ),
];

pub(super) const UNKNOWN_FIELD: Rule = rule(
    "UnknownField",
    "A field is unknown to the schema and would be pruned.",
    "The API server would drop this field silently when storing the object (structural pruning), or refuse it with fieldValidation=Strict. With --strict it is an error.",
    "Remove the field, fix its spelling, or declare it in the CRD's schema.",
    Level::Warning,
);

pub(super) const UNKNOWN_KIND: Rule = rule(
    "UnknownKind",
    "No CRD given defines the object's kind.",
    "The object's apiVersion and kind match none of the CRDs given with --crd, so it could not be judged; the API server would answer that there is no match for the kind.",
    "Pass the CRD that defines the kind with --crd, or fix the object's apiVersion and kind.",
    Level::Error,
);

pub(super) const REQUEST_REFUSED: Rule = rule(
    "RequestRefused",
    "The API server would refuse the request before validating the object.",
    "The object's version is not served, or its metadata cannot be decoded: the API server refuses such a request before any schema validation.",
    "Write the object at a served version, and fix its metadata as the message says.",
    Level::Error,
);

/// The rule of a cause.
pub(super) fn cause_rule(c: &Cause) -> &'static str {
    if c.kind == ErrorType::Internal {
        return INTERNAL_ERROR.id;
    }
    CAUSES
        .iter()
        .find(|(t, _)| *t == c.kind)
        .map_or(INTERNAL_ERROR.id, |(_, r)| r.id)
}

/// The log of `validate`, with its rules.
pub(super) fn validate_report() -> Report {
    let mut rules: Vec<Rule> = CAUSES.iter().map(|(_, r)| r.clone()).collect();
    rules.extend([
        UNKNOWN_FIELD,
        UNKNOWN_KIND,
        REQUEST_REFUSED,
        INPUT_ERROR,
        INTERNAL_ERROR,
    ]);
    Report::with_rules("validate", &rules)
}

// `check`.

pub(super) const NON_STRUCTURAL: Rule = rule(
    "NonStructuralSchema",
    "A version's schema is not structural.",
    "The API server sets the NonStructuralSchema condition for this: such a schema cannot be created with apiextensions.k8s.io/v1, and pruning, defaulting and CEL rules do not work with it.",
    "Give every field a type, keep value validations out of anyOf/allOf/oneOf/not structure, and set preserveUnknownFields to false, as the message says.",
    Level::Error,
);

pub(super) const CRD_INVALID: Rule = rule(
    "CRDInvalid",
    "The API server would refuse the CRD.",
    "CRD validation refuses this on create or update: an invalid default, list-type misuse, a pattern that is not a valid regular expression, a CEL rule that does not compile or costs too much, ...",
    "Fix the schema at the field the message names.",
    Level::Error,
);

pub(super) const CRD_WARNING: Rule = rule(
    "CRDWarning",
    "The API server would warn about the CRD.",
    "The API server accepts the CRD with a warning: for example a format it does not recognise, which it then does not check.",
    "Use a format the API server knows, or drop it.",
    Level::Warning,
);

pub(super) const STORED_VERSION_NOT_SERVED: Rule = rule(
    "StoredVersionNotServed",
    "A stored version is no longer served.",
    "status.storedVersions lists a version that the CRD no longer serves: objects may still be stored at it, and removing it from the CRD makes them unreadable.",
    "Migrate the stored objects to the storage version (read and write each one), then remove the version from status.storedVersions.",
    Level::Error,
);

pub(super) const REQUEST_BODY_TOO_LARGE: Rule = rule(
    "RequestBodyTooLarge",
    "The CRD is larger than the API server's request limit.",
    "The CRD's JSON request body is above kube-apiserver's limit of 3 MiB: it cannot be created or updated (\"Request entity too large\").",
    "Shrink the schema: drop descriptions, share repeated structures, or split the API.",
    Level::Error,
);

pub(super) const ETCD_REQUEST_TOO_LARGE: Rule = rule(
    "EtcdRequestTooLarge",
    "The CRD is larger than etcd's default request limit.",
    "The CRD as stored (protobuf) is above etcd's default request limit of 1.5 MiB: it cannot be created unless etcd runs with a larger --max-request-bytes.",
    "Shrink the schema: drop descriptions, share repeated structures, or split the API.",
    Level::Error,
);

pub(super) const LAST_APPLIED_TOO_LARGE: Rule = rule(
    "LastAppliedAnnotationTooLarge",
    "Client-side kubectl apply would fail on this CRD.",
    "kubectl apply (client-side) stores the whole CRD in its last-applied-configuration annotation, which makes metadata.annotations larger than the API server's limit of 262144 bytes.",
    "Apply with \"kubectl apply --server-side\" (or kubectl create/replace).",
    Level::Warning,
);

/// The log of `audit`: `check`'s rules for the CRDs, `validate`'s for their objects.
pub(super) fn audit_report() -> Report {
    let mut r = check_report();
    r.command = "audit".to_string();
    for rule in validate_report().rules {
        r.rule(rule);
    }
    r
}

/// The log of `check`, with its rules.
pub(super) fn check_report() -> Report {
    Report::with_rules(
        "check",
        &[
            NON_STRUCTURAL,
            CRD_INVALID,
            CRD_WARNING,
            STORED_VERSION_NOT_SERVED,
            REQUEST_BODY_TOO_LARGE,
            ETCD_REQUEST_TOO_LARGE,
            LAST_APPLIED_TOO_LARGE,
            INPUT_ERROR,
            INTERNAL_ERROR,
        ],
    )
}

/// The rule of a size limit (`requestBody`, `etcdRequest`, `lastAppliedAnnotation`).
pub(super) fn size_rule(limit: &str) -> &'static str {
    match limit {
        "requestBody" => REQUEST_BODY_TOO_LARGE.id,
        "etcdRequest" => ETCD_REQUEST_TOO_LARGE.id,
        _ => LAST_APPLIED_TOO_LARGE.id,
    }
}

/// The rule of a kind of CRD finding (`check`, and `audit`'s CRDs).
pub(super) fn crd_rule(kind: Kind) -> &'static str {
    match kind {
        Kind::InternalError => INTERNAL_ERROR.id,
        Kind::InputError => INPUT_ERROR.id,
        Kind::NonStructuralSchema => NON_STRUCTURAL.id,
        Kind::CrdInvalid => CRD_INVALID.id,
        Kind::StoredVersionNotServed => STORED_VERSION_NOT_SERVED.id,
        Kind::TooLarge(limit) | Kind::SizeWarning(limit) => size_rule(limit),
        Kind::Warning => CRD_WARNING.id,
    }
}

// `diff`.

pub(super) const TIGHTENING: Rule = rule(
    "TighteningChange",
    "The schema change tightens the CRD: existing objects or clients may break.",
    "A change from the current revision to the new one that refuses what was accepted before (a lower maximum, a removed enum value, a new required field, a removed field or version, ...): stored objects may become invalid and clients may fail.",
    "Check the objects with \"crd-audit plan\" before applying the new revision, or make the change in a new version.",
    Level::Error,
);

pub(super) const LOOSENING: Rule = rule(
    "LooseningChange",
    "The schema change loosens the CRD.",
    "A change that accepts more than before: existing objects stay valid, but clients of the old revision may meet values they do not expect.",
    "No action is needed for existing objects.",
    Level::Note,
);

pub(super) const NEUTRAL: Rule = rule(
    "NeutralChange",
    "The schema change neither tightens nor loosens the CRD.",
    "A change that accepts the same objects as before (a description, a new version, a subresource, ...).",
    "No action is needed.",
    Level::Note,
);

/// The log of `diff`, with its rules.
pub(super) fn diff_report() -> Report {
    Report::with_rules("diff", &[TIGHTENING, LOOSENING, NEUTRAL])
}

/// The rule of a change's class.
pub(super) fn change_rule(class: crd_audit_engine::Class) -> &'static str {
    match class {
        crd_audit_engine::Class::Tightening => TIGHTENING.id,
        crd_audit_engine::Class::Loosening => LOOSENING.id,
        _ => NEUTRAL.id,
    }
}

// `plan`.

pub(super) const NEWLY_INVALID: Rule = rule(
    "NewlyInvalid",
    "The new CRD revision makes the object invalid.",
    "The object is valid under the current CRD (or no current CRD was given) but the new revision refuses it as stored data: its next write fails until it is fixed.",
    "Fix or migrate the object before applying the new revision, or loosen the revision.",
    Level::Error,
);

pub(super) const ALREADY_INVALID: Rule = rule(
    "AlreadyInvalid",
    "The object is invalid under both the current and the new CRD.",
    "The object is already invalid under the current CRD, and the new revision refuses it too: its next write fails until it is fixed.",
    "Fix the object.",
    Level::Warning,
);

/// The log of `plan`, with its rules.
pub(super) fn plan_report() -> Report {
    Report::with_rules(
        "plan",
        &[NEWLY_INVALID, ALREADY_INVALID, INPUT_ERROR, INTERNAL_ERROR],
    )
}

/// The rule of an object the new revision refuses, by whether it was valid before.
pub(super) fn plan_rule(valid_before: Option<bool>) -> &'static str {
    match valid_before {
        Some(false) => ALREADY_INVALID.id,
        _ => NEWLY_INVALID.id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_keep_githubs_bounds() {
        for r in [
            validate_report(),
            check_report(),
            diff_report(),
            plan_report(),
        ] {
            let mut ids = std::collections::HashSet::new();
            for rule in &r.rules {
                assert!(ids.insert(rule.id), "{} twice", rule.id);
                assert!(!rule.id.is_empty() && rule.name.len() <= 255);
                for text in [rule.short, rule.full, rule.help] {
                    assert!(!text.is_empty() && text.chars().count() <= 1024, "{text}");
                }
            }
        }
        // Every rule a finding names is declared.
        let validate = validate_report();
        for (t, _) in CAUSES {
            let c = Cause::new(
                t,
                crd_audit_engine::Path::root(),
                crd_audit_engine::BadValue::Omit,
                "",
            );
            assert!(validate.rules.iter().any(|r| r.id == cause_rule(&c)));
        }
        let check = check_report();
        for limit in ["requestBody", "etcdRequest", "lastAppliedAnnotation"] {
            assert!(check.rules.iter().any(|r| r.id == size_rule(limit)));
        }
    }
}
