//! The conditions that sum up a report's others (`Ready`, `Reconciling`, `Stalled`), as the
//! tools that read a resource's health from its conditions read them, and the report's own
//! generation that its status describes.

use super::condition;
use crate::audit::schema_audit::SchemaAuditStatus;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

/// The reason of `Ready` when nothing is wrong.
pub const READY: &str = "Clean";

/// What needs a person before the report can be `Ready`, worst first: the condition, the
/// status that is a problem, and the reason `Ready` (and `Stalled`) then give. A condition
/// whose own reason names the problem better (a conversion's finding, an internal error,
/// a forbidden LIST) gives that.
const PROBLEMS: [(&str, &str, &str); 7] = [
    ("UpdatesAccepted", "False", "BlockedObjects"),
    ("NonStructuralSchema", "True", "NonStructural"),
    ("StoredVersionsServed", "False", "StoredVersionNotServed"),
    ("ConversionsLossless", "False", ""),
    ("InstancesValid", "False", "InvalidInstances"),
    ("InstancesValid", "Unknown", ""),
    ("NonStructuralSchema", "Unknown", ""),
];

/// The conditions that sum up the others, as kstatus, Flux, Argo CD and `kubectl wait` read
/// them:
/// - `Ready`: `True` when the audit of the current revision is complete and nothing is
///   wrong; `False` with the first problem's reason and message; `Unknown` while auditing
///   (with nothing wrong known yet).
/// - `Reconciling` (kstatus: InProgress): `True` while the audit runs.
/// - `Stalled` (kstatus: Failed): `True` once the audit is complete and the report is not
///   `Ready`: what it found needs a person. Never `True` with `Reconciling`.
pub fn summary(conditions: &[Condition], audited: bool, generation: i64) -> [Condition; 3] {
    let problem = PROBLEMS.iter().find_map(|(ty, status, reason)| {
        let c = conditions
            .iter()
            .find(|c| c.type_ == *ty && c.status == *status)?;
        // Still auditing is no problem yet.
        if c.reason == "Auditing" {
            return None;
        }
        let reason = if reason.is_empty() || c.reason == "InternalError" {
            c.reason.as_str()
        } else {
            reason
        };
        Some((reason.to_string(), first_line(&c.message)))
    });
    let (ready, stalled) = match (&problem, audited) {
        (Some((reason, message)), _) => (
            condition("Ready", "False", reason, message.clone(), generation),
            if audited {
                condition(
                    "Stalled",
                    "True",
                    reason,
                    format!("the audit is complete and needs a person: {message}"),
                    generation,
                )
            } else {
                condition(
                    "Stalled",
                    "False",
                    "Auditing",
                    "the stored objects are being audited".into(),
                    generation,
                )
            },
        ),
        (None, false) => (
            condition(
                "Ready",
                "Unknown",
                "Auditing",
                format!("auditing the stored objects of generation {generation}"),
                generation,
            ),
            condition(
                "Stalled",
                "False",
                "Auditing",
                "the stored objects are being audited".into(),
                generation,
            ),
        ),
        (None, true) => (
            condition(
                "Ready",
                "True",
                READY,
                "the schemas are structural and every stored object is valid and updatable".into(),
                generation,
            ),
            condition(
                "Stalled",
                "False",
                READY,
                "nothing needs a person".into(),
                generation,
            ),
        ),
    };
    let reconciling = if audited {
        condition(
            "Reconciling",
            "False",
            "Audited",
            format!("the stored objects of generation {generation} are audited"),
            generation,
        )
    } else {
        condition(
            "Reconciling",
            "True",
            "Auditing",
            format!("auditing the stored objects of generation {generation}"),
            generation,
        )
    };
    // Reconciling before Stalled: a reader that takes the first of the two that is True
    // (kstatus) reads a running audit as InProgress.
    [ready, reconciling, stalled]
}

/// The first line of a message (a condition's message can list many things).
fn first_line(message: &str) -> String {
    message.lines().next().unwrap_or("").to_string()
}

/// The report's own generation, once it is written: what its status describes
/// (`status.observedGeneration`, and each condition's `observedGeneration`), as kstatus,
/// Flux and `kubectl wait` read it.
pub fn observe_generation(s: &mut SchemaAuditStatus, report_generation: i64) {
    s.observed_generation = Some(report_generation);
    for c in &mut s.conditions {
        c.observed_generation = Some(report_generation);
    }
}
