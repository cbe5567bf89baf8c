//! What the API server answers a write of one object: [`Verdict`] for a create (or an object
//! judged as stored data), [`UpdateVerdict`] for an update. Each holds an [`Outcome`], whose
//! variants are the answers the server can give, so that no other combination can be built.
//! HTTP status codes and the command line's JSON are the program's business, not the engine's.

use crate::cause::Cause;

/// The server's answer to one write.
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
#[non_exhaustive]
#[serde(tag = "outcome", rename_all = "camelCase")]
pub enum Outcome {
    /// The write is accepted (HTTP 201 for a create, 200 for an update).
    Admitted,
    /// Validation refuses the write (HTTP 422, reason `Invalid`) with these causes, in the
    /// server's order. Never empty.
    Refused {
        /// The causes of the Status the server returns.
        causes: Vec<Cause>,
    },
    /// The request is refused before the object is validated.
    RequestError(RequestError),
    /// Judging the object hit a bug in crd-audit (a panic, caught): the panic's message and
    /// where it happened. The server's answer is unknown.
    InternalError {
        /// `crd-audit failed while judging this object (a bug): ...`
        message: String,
    },
}

/// A request the server refuses before validating the object.
#[derive(serde::Serialize, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
#[serde(rename_all = "camelCase")]
pub struct RequestError {
    /// Why: the HTTP status class of the answer.
    pub reason: RequestErrorReason,
    /// The server's error text.
    pub message: String,
}

/// The kinds of [`RequestError`].
#[derive(serde::Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestErrorReason {
    /// HTTP 400: the object does not decode (wrong kind, `metadata` or an embedded resource
    /// that does not decode, an object that is not a JSON object).
    BadRequest,
    /// HTTP 404: the version is not served by the CRD, or an update of `status` on a version
    /// without the status subresource.
    NotFound,
    /// HTTP 500: the version's schema is not structural and the CRD does not preserve unknown
    /// fields, so the server cannot serve it.
    SchemaNotServable,
}

impl Outcome {
    /// Whether the write is accepted.
    pub fn is_admitted(&self) -> bool {
        matches!(self, Outcome::Admitted)
    }

    /// The causes of a refusal; empty for any other outcome.
    pub fn causes(&self) -> &[Cause] {
        match self {
            Outcome::Refused { causes } => causes,
            _ => &[],
        }
    }

    pub(crate) fn request_error(reason: RequestErrorReason, message: String) -> Outcome {
        Outcome::RequestError(RequestError { reason, message })
    }

    /// `Refused` with `causes`, or `Admitted` when there are none.
    pub(crate) fn from_causes(causes: Vec<Cause>) -> Outcome {
        if causes.is_empty() {
            Outcome::Admitted
        } else {
            Outcome::Refused { causes }
        }
    }

    pub(crate) fn internal_error(panic_message: &str) -> Outcome {
        Outcome::InternalError {
            message: format!("crd-audit failed while judging this object (a bug): {panic_message}"),
        }
    }

    /// The message of the 422 Status (`Kind.group "name" is invalid: ...`): the causes'
    /// messages, de-duplicated, bracketed when there are several. `None` unless refused.
    fn status_message(&self, qualified_kind: &str, name: &str) -> Option<String> {
        let Outcome::Refused { causes } = self else {
            return None;
        };
        let mut seen = std::collections::HashSet::new();
        let msgs: Vec<String> = causes
            .iter()
            .map(Cause::message)
            .filter(|m| seen.insert(m.clone()))
            .collect();
        let agg = if msgs.len() == 1 {
            msgs[0].clone()
        } else {
            format!("[{}]", msgs.join(", "))
        };
        Some(format!(
            "{qualified_kind} {} is invalid: {agg}",
            crate::go::strconv::quote(name)
        ))
    }
}

/// The judgement of one object on create ([`crate::Mode::Create`]) or as stored data
/// ([`crate::Mode::Stored`]).
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
#[non_exhaustive]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    /// The object's `apiVersion`, as written (empty when absent).
    pub api_version: String,
    /// The object's `kind`, as written (empty when absent).
    pub kind: String,
    /// The object's namespace as created: the request's `default` for a namespaced CRD when
    /// the object names none, empty for a cluster-scoped CRD.
    pub namespace: String,
    /// The object's `metadata.name` (empty when absent).
    pub name: String,
    /// The server's answer.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Fields that structural pruning drops, sorted.
    pub pruned: Vec<String>,
    /// The status subresource dropped `.status` (create mode).
    pub status_dropped: bool,
    /// CEL rules of this version that were not evaluated for this object: transition rules
    /// (there is no old object), and rules this engine cannot evaluate (each also has a
    /// cause saying so). 0 when the CEL gate reported the rules as not checked.
    pub rules_not_evaluated: usize,
    /// For a stored object the server refuses ([`crate::CrdValidator::validate_stored`]):
    /// what it answers when the object is sent back unchanged (a no-op update). Refused
    /// means the object is stuck: every write to it is refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub update: Option<Box<UpdateVerdict>>,
}

/// The judgement of one UPDATE ([`crate::CrdValidator::validate_update`]).
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
#[non_exhaustive]
#[serde(rename_all = "camelCase")]
pub struct UpdateVerdict {
    /// The new object's `apiVersion`, as written (empty when absent).
    pub api_version: String,
    /// The new object's `kind`, as written (empty when absent).
    pub kind: String,
    /// The namespace of the request (`default` for a namespaced CRD when the object names
    /// none, empty for a cluster-scoped CRD).
    pub namespace: String,
    /// The new object's `metadata.name` (empty when absent).
    pub name: String,
    /// The server's answer.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Fields of the new object that structural pruning drops, sorted.
    pub pruned: Vec<String>,
    /// The Warning headers the server sends: CEL failures that ratcheting tolerated, then
    /// finalizer advice when the update is accepted.
    pub warnings: Vec<String>,
}

impl Verdict {
    /// The identity of an object, with no outcome yet (`Admitted`).
    pub(crate) fn new(api_version: String, kind: String, namespace: String, name: String) -> Self {
        Verdict {
            api_version,
            kind,
            namespace,
            name,
            outcome: Outcome::Admitted,
            pruned: Vec::new(),
            status_dropped: false,
            rules_not_evaluated: 0,
            update: None,
        }
    }

    /// Whether the create is accepted.
    pub fn is_admitted(&self) -> bool {
        self.outcome.is_admitted()
    }

    /// The causes of a refusal ([`Outcome::causes`]).
    pub fn causes(&self) -> &[Cause] {
        self.outcome.causes()
    }

    /// For an object judged as stored data: whether the server refuses every write to it (it
    /// is invalid, and even sending it back unchanged is refused).
    pub fn is_stuck(&self) -> bool {
        self.update.as_ref().is_some_and(|u| !u.is_admitted())
    }

    /// The message of the 422 Status (`Kind.group "name" is invalid: ...`): the causes'
    /// messages, de-duplicated, bracketed when there are several. `None` unless refused.
    pub fn status_message(&self, qualified_kind: &str) -> Option<String> {
        self.outcome.status_message(qualified_kind, &self.name)
    }
}

impl UpdateVerdict {
    /// Whether the update is accepted.
    pub fn is_admitted(&self) -> bool {
        self.outcome.is_admitted()
    }

    /// The causes of a refusal ([`Outcome::causes`]).
    pub fn causes(&self) -> &[Cause] {
        self.outcome.causes()
    }

    /// The message of the 422 Status, as [`Verdict::status_message`].
    pub fn status_message(&self, qualified_kind: &str) -> Option<String> {
        self.outcome.status_message(qualified_kind, &self.name)
    }
}
