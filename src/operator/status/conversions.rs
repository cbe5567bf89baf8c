//! What the conversion round trips of a CRD's stored objects found (`auditConversions`, a
//! CRD converted by a webhook), and the report's `ConversionsLossless` condition made of it.
//! Pure: the round trips are `operator::conversions`'.

use super::condition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

/// The condition's type.
pub const CONDITION: &str = "ConversionsLossless";

/// The findings a condition names, at most.
pub const NAMED: usize = 5;

/// Where the conversion round trips of a CRD stand.
#[derive(Clone, Debug, PartialEq)]
pub enum Conversions {
    /// The first round trips run.
    Checking,
    /// A complete round trip of every stored object.
    Checked(ConversionFindings),
    /// The round trips could not run (a refused or failed request): why, in the API server's
    /// words. Tried again after a backoff.
    Failed { forbidden: bool, message: String },
    /// What an earlier operator's report said, until the round trips run again.
    Reported {
        status: String,
        reason: String,
        message: String,
    },
}

/// What one complete round trip of a CRD's stored objects found: counts of objects.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConversionFindings {
    /// The CRD's generation the round trips ran on.
    pub generation: i64,
    pub objects: u64,
    /// Objects a round trip changes.
    pub lossy: u64,
    /// Objects invalid at a served version once converted to it.
    pub invalid: u64,
    /// Objects whose conversion fails.
    pub failed: u64,
    /// The first findings (at most [`NAMED`]), as `crd-audit roundtrip` prints them.
    pub first: Vec<String>,
}

impl ConversionFindings {
    pub fn any(&self) -> bool {
        self.lossy + self.invalid + self.failed > 0
    }

    /// The reason of a condition `False`: the worst finding (a conversion that fails now,
    /// then data lost, then an object a client at the other version cannot write back).
    pub fn reason(&self) -> &'static str {
        if self.failed > 0 {
            "ConversionFailed"
        } else if self.lossy > 0 {
            "LossyConversion"
        } else {
            "InvalidConversion"
        }
    }
}

/// The `ConversionsLossless` condition of a report whose CRD's generation is `generation`.
pub fn conversions_lossless(c: &Conversions, generation: i64) -> Condition {
    let cond = |status: &str, reason: &str, message: String| {
        condition(CONDITION, status, reason, message, generation)
    };
    match c {
        Conversions::Checking => cond(
            "Unknown",
            "Checking",
            "the stored objects are being round-tripped through the conversion webhook".into(),
        ),
        Conversions::Failed { forbidden, message } => cond(
            "Unknown",
            if *forbidden {
                "Forbidden"
            } else {
                "CheckFailed"
            },
            format!("the round trips through the conversion webhook could not run: {message}"),
        ),
        Conversions::Reported {
            status,
            reason,
            message,
        } => cond(status, reason, message.clone()),
        Conversions::Checked(f) => {
            let of = if f.generation == generation {
                String::new()
            } else {
                format!(" (generation {})", f.generation)
            };
            if !f.any() {
                return cond(
                    "True",
                    "Lossless",
                    format!(
                        "every one of {} stored object(s) round-trips through the conversion webhook unchanged{of}",
                        f.objects
                    ),
                );
            }
            let mut parts = Vec::new();
            if f.failed > 0 {
                parts.push(format!("{} fail to convert", f.failed));
            }
            if f.lossy > 0 {
                parts.push(format!("{} lose data in a round trip", f.lossy));
            }
            if f.invalid > 0 {
                parts.push(format!("{} are invalid at a served version", f.invalid));
            }
            cond(
                "False",
                f.reason(),
                format!(
                    "of {} stored object(s){of}, {}: {}",
                    f.objects,
                    parts.join(", "),
                    f.first.join("; ")
                ),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(lossy: u64, invalid: u64, failed: u64) -> ConversionFindings {
        ConversionFindings {
            generation: 3,
            objects: 10,
            lossy,
            invalid,
            failed,
            first: vec!["lossy default/a v2→v1→v2: spec.priority lost".into()],
        }
    }

    #[test]
    fn the_worst_finding_is_the_reason() {
        let c = |f| conversions_lossless(&Conversions::Checked(f), 3);
        let clean = c(found(0, 0, 0));
        assert_eq!(
            (clean.status.as_str(), clean.reason.as_str()),
            ("True", "Lossless")
        );
        assert!(
            clean
                .message
                .starts_with("every one of 10 stored object(s)")
        );
        assert_eq!(c(found(2, 1, 1)).reason, "ConversionFailed");
        assert_eq!(c(found(2, 1, 0)).reason, "LossyConversion");
        assert_eq!(c(found(0, 1, 0)).reason, "InvalidConversion");
        let m = c(found(2, 1, 0)).message;
        assert_eq!(
            m,
            "of 10 stored object(s), 2 lose data in a round trip, 1 are invalid at a served version: lossy default/a v2→v1→v2: spec.priority lost"
        );
        // Findings of an older generation say so.
        let older = conversions_lossless(&Conversions::Checked(found(0, 0, 0)), 4);
        assert!(
            older.message.ends_with("unchanged (generation 3)"),
            "{}",
            older.message
        );
    }

    #[test]
    fn a_check_that_cannot_run_is_unknown() {
        let f = conversions_lossless(
            &Conversions::Failed {
                forbidden: true,
                message: "nope".into(),
            },
            1,
        );
        assert_eq!(
            (f.status.as_str(), f.reason.as_str()),
            ("Unknown", "Forbidden")
        );
        let r = conversions_lossless(
            &Conversions::Reported {
                status: "False".into(),
                reason: "LossyConversion".into(),
                message: "m".into(),
            },
            1,
        );
        assert_eq!(
            (r.status.as_str(), r.reason.as_str(), r.message.as_str()),
            ("False", "LossyConversion", "m")
        );
        assert_eq!(
            conversions_lossless(&Conversions::Checking, 1).status,
            "Unknown"
        );
    }
}
