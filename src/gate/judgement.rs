//! What the CRD change gate decides, without I/O: whether a CRD change needs its stored
//! objects judged ([`decide`]), how one stored object fares under the proposed revision
//! ([`Judges::judge`], the judgement `validate --stored`, `plan` and the reports give), the
//! tally per version and the texts of the answer (docs/reference/configuration.md, "The CRD
//! change gate").

use super::GateError;
use crate::audit::config::{Config, GateMode};
use crate::audit::judge::{Judgement, judge};
use crd_audit_engine::{Crd, CrdValidator, Mode};
use serde_json::Value;

/// The annotation that keeps the gate away from one CRD (`"off"`).
pub const OPT_OUT_ANNOTATION: &str = "crd-audit.dev/gate";

/// At most this many objects are named after a version's summary line.
pub const NAMED_OBJECTS: usize = 5;

/// The admission operation of a request, as the review says it.
pub const UPDATE: &str = "UPDATE";

/// A CRD change the gate judges: the revision in place and the proposed one.
pub struct Change {
    pub current: Crd,
    pub proposed: Crd,
    /// Served versions whose schema the change alters (in the proposed order): their stored
    /// objects are judged, each read at that version.
    pub versions: Vec<String>,
    /// Versions the change stops serving while `status.storedVersions` lists them.
    pub unserved_stored: Vec<String>,
}

/// What to do with a request.
pub enum Decision {
    /// Allowed at once, without a warning.
    Allow,
    /// Judge the stored objects (and warn about unserved stored versions).
    Judge(Box<Change>),
}

/// Whether a request needs judging: an UPDATE of an audited CRD that is not opted out and
/// changes a served version's schema, or stops serving a stored version. An unreadable CRD
/// is an error (the request is allowed: the API server's own validation answers it).
pub fn decide(
    operation: &str,
    current: Option<&Value>,
    proposed: &Value,
    config: &Config,
) -> Result<Decision, GateError> {
    let Some(current) = current.filter(|_| operation == UPDATE) else {
        return Ok(Decision::Allow);
    };
    let opted_out = proposed
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(OPT_OUT_ANNOTATION))
        .and_then(Value::as_str)
        == Some("off");
    if config.gate == GateMode::Off || opted_out {
        return Ok(Decision::Allow);
    }
    let current = Crd::from_value(current).map_err(|source| GateError::UnreadableCrd {
        which: "the CRD in place",
        source,
    })?;
    let proposed = Crd::from_value(proposed).map_err(|source| GateError::UnreadableCrd {
        which: "the proposed CRD",
        source,
    })?;
    if !config.audits_group(&proposed.group) {
        return Ok(Decision::Allow);
    }
    let served_before = |name: &str| current.versions.iter().find(|v| v.name == name && v.served);
    let versions: Vec<String> = proposed
        .versions
        .iter()
        .filter(|v| v.served)
        .filter(|v| {
            served_before(&v.name).is_some_and(|before| {
                before.schema != v.schema
                    || current.preserve_unknown_fields != proposed.preserve_unknown_fields
            })
        })
        .map(|v| v.name.clone())
        .collect();
    let served_now = |name: &str| proposed.versions.iter().any(|v| v.name == name && v.served);
    let unserved_stored: Vec<String> = current
        .stored_versions
        .iter()
        .filter(|s| served_before(s).is_some() && !served_now(s))
        .cloned()
        .collect();
    if versions.is_empty() && unserved_stored.is_empty() {
        return Ok(Decision::Allow);
    }
    Ok(Decision::Judge(Box::new(Change {
        current,
        proposed,
        versions,
        unserved_stored,
    })))
}

/// The two revisions compiled, to judge stored objects by.
pub struct Judges {
    current: CrdValidator,
    proposed: CrdValidator,
    redact: bool,
}

/// How one stored object fares under the proposed revision.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// Valid under the proposed revision.
    Valid,
    /// Invalid, as it already was under the revision in place (no worse).
    AlreadyInvalid,
    /// The change makes it invalid, and its next unchanged update is refused.
    Stuck(Named),
    /// The change makes it invalid, but its next unchanged update is accepted (ratcheting).
    Tolerated(Named),
}

/// An object the change makes invalid: `namespace/name` and its first error.
#[derive(Clone, Debug, PartialEq)]
pub struct Named {
    pub namespace: String,
    pub name: String,
    pub message: String,
}

impl Named {
    /// The object, and the first error of its refused update (of its stored data when the
    /// update is accepted).
    fn of(j: &Judgement) -> Named {
        Named {
            namespace: j.key.0.clone(),
            name: j.key.1.clone(),
            message: j
                .refusal
                .clone()
                .or_else(|| j.messages.first().cloned())
                .unwrap_or_default(),
        }
    }
}

impl Judges {
    /// Compiles both revisions for a release (`engine`), with CEL as the configuration says.
    pub fn compile(
        change: &Change,
        release: crate::release::KubeVersion,
        config: &Config,
    ) -> Result<Judges, GateError> {
        let compile = |crd: &Crd| {
            CrdValidator::options()
                .release(release.engine())
                .cel(config.cel_enabled)
                .build(crd)
                .map_err(|source| GateError::Compile {
                    crd: crd.name.clone(),
                    source,
                })
        };
        Ok(Judges {
            current: compile(&change.current)?,
            proposed: compile(&change.proposed)?,
            redact: config.redact_values,
        })
    }

    /// Judges one stored object as its next unchanged update under the proposed revision. An
    /// object invalid under both revisions counts against the change only when the change
    /// makes its updates refused.
    pub fn judge(&self, obj: Value) -> Outcome {
        let proposed = judge(&self.proposed, obj.clone(), self.redact);
        if proposed.messages.is_empty() && !proposed.internal_error {
            return Outcome::Valid;
        }
        let before = self.current.validate(obj.clone(), Mode::Stored);
        let worse = before.is_admitted()
            || (proposed.updates_blocked
                && self
                    .current
                    .validate_stored(obj)
                    .update
                    .is_some_and(|u| u.is_admitted()));
        match (worse, proposed.updates_blocked) {
            (false, _) => Outcome::AlreadyInvalid,
            (true, true) => Outcome::Stuck(Named::of(&proposed)),
            (true, false) => Outcome::Tolerated(Named::of(&proposed)),
        }
    }
}

/// The objects of one version judged so far.
#[derive(Debug, Default)]
pub struct Tally {
    pub version: String,
    pub judged: usize,
    /// How many objects the version holds in all (judged, plus what the LIST said remained
    /// when judging stopped); `None` when the server did not say.
    pub total: Option<usize>,
    pub stuck: usize,
    pub tolerated: usize,
    /// The first objects made stuck, and made invalid but tolerated.
    pub first_stuck: Vec<Named>,
    pub first_tolerated: Vec<Named>,
}

impl Tally {
    pub fn new(version: &str) -> Tally {
        Tally {
            version: version.to_string(),
            ..Tally::default()
        }
    }

    pub fn add(&mut self, outcome: Outcome) {
        self.judged += 1;
        match outcome {
            Outcome::Valid | Outcome::AlreadyInvalid => {}
            Outcome::Stuck(n) => {
                self.stuck += 1;
                if self.first_stuck.len() < NAMED_OBJECTS {
                    self.first_stuck.push(n);
                }
            }
            Outcome::Tolerated(n) => {
                self.tolerated += 1;
                if self.first_tolerated.len() < NAMED_OBJECTS {
                    self.first_tolerated.push(n);
                }
            }
        }
    }

    /// How many objects the change makes invalid.
    pub fn invalid(&self) -> usize {
        self.stuck + self.tolerated
    }
}

/// The gate's answer to a judged change.
#[derive(Debug, PartialEq)]
pub struct Answer {
    /// The admission warnings, in order.
    pub warnings: Vec<String>,
    /// `Some(message)`: the change is refused.
    pub denial: Option<String>,
    /// Judging stopped at the budget.
    pub unfinished: bool,
}

/// The answer to a change, from each version's tally. `finished`: every object was judged.
pub fn answer(change: &Change, tallies: &[Tally], finished: bool, mode: GateMode) -> Answer {
    let plural = &change.proposed.plural;
    let mut warnings = Vec::new();
    for t in tallies.iter().filter(|t| t.invalid() > 0) {
        let total = t.total.unwrap_or(t.judged);
        warnings.push(format!(
            "crd-audit: {} of {total} stored {plural} become invalid under {}: {} stuck (every update refused), {} tolerated",
            t.invalid(),
            t.version,
            t.stuck,
            t.tolerated
        ));
        let (kind, named) = if t.first_stuck.is_empty() {
            ("tolerated", &t.first_tolerated)
        } else {
            ("stuck", &t.first_stuck)
        };
        for n in named {
            warnings.push(format!(
                "crd-audit: {kind} {}/{}: {}",
                n.namespace, n.name, n.message
            ));
        }
    }
    for v in &change.unserved_stored {
        warnings.push(format!(
            "crd-audit: version {v} is no longer served but status.storedVersions still lists it: objects stored at {v} must be rewritten at the storage version before it is removed (crd-audit migrate {})",
            change.proposed.name
        ));
    }
    if !finished {
        let judged: usize = tallies.iter().map(|t| t.judged).sum();
        // Unknown when any version's total is (or nothing was read at all).
        let total: Option<usize> = if tallies.is_empty() {
            None
        } else {
            tallies.iter().map(|t| t.total).sum()
        };
        let of = total.map_or_else(String::new, |m| format!(" of {m}"));
        warnings.push(format!(
            "crd-audit: judged {judged}{of} stored objects before the deadline; the rest are audited after the change"
        ));
    }
    let stuck: usize = tallies.iter().map(|t| t.stuck).sum();
    let denial = (mode == GateMode::Deny && stuck > 0).then(|| {
        let (t, first) = tallies
            .iter()
            .find_map(|t| t.first_stuck.first().map(|n| (t, n)))
            .expect("a stuck object is named");
        format!(
            "crd-audit: this change makes {stuck} stored {plural} stuck (every update refused), first {}/{} under {}: {}",
            first.namespace, first.name, t.version, first.message
        )
    });
    Answer {
        warnings,
        denial,
        unfinished: !finished,
    }
}

#[cfg(test)]
mod tests;
