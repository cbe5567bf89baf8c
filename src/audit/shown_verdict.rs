//! A verdict as the program shows and counts it: the engine's create, stored or update verdict
//! flattened into the fields every output format writes (the HTTP status code, the request
//! error, the causes, the warnings). The engine's types say which answers are possible; this
//! is their rendering, kept out of the engine with the JSON the command line prints.

use crd_audit_engine::{Cause, Outcome, Path, RequestErrorReason, UpdateVerdict, Verdict};

/// One object's judgement, as written by the command line's formats and the operator.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShownVerdict {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// The HTTP status of the answer: 201 (create) or 200 (update) when accepted, 422, 400,
    /// 404, or 500 (a schema the server cannot serve, or a bug in crd-audit).
    pub code: u16,
    /// For 400, 404 and a 500 that is not a bug: the server's error text.
    pub request_error: Option<String>,
    /// For 422: the causes. For a bug: one `InternalError` cause at the root.
    pub errors: Vec<Cause>,
    pub pruned: Vec<String>,
    pub status_dropped: bool,
    pub rules_not_evaluated: usize,
    /// An update's Warning headers.
    pub warnings: Vec<String>,
    pub is_update: bool,
    /// A stored object's no-op update.
    pub update: Option<Box<ShownVerdict>>,
    /// Judging hit a bug in crd-audit.
    pub internal_error: bool,
}

impl ShownVerdict {
    /// Whether the write is accepted.
    pub fn valid(&self) -> bool {
        self.code == 201 || self.code == 200
    }

    fn with_outcome(mut self, outcome: Outcome) -> ShownVerdict {
        match outcome {
            Outcome::Admitted => self.code = if self.is_update { 200 } else { 201 },
            Outcome::Refused { causes } => {
                self.code = 422;
                self.errors = causes;
            }
            Outcome::RequestError(e) => {
                self.code = match e.reason {
                    RequestErrorReason::BadRequest => 400,
                    RequestErrorReason::NotFound => 404,
                    _ => 500,
                };
                self.request_error = Some(e.message);
            }
            Outcome::InternalError { message } => self.internal(message),
            other => self.internal(format!("crd-audit cannot show the outcome {other:?}")),
        }
        self
    }

    fn internal(&mut self, message: String) {
        self.code = 500;
        self.errors = vec![Cause::internal(Path::root(), message)];
        self.internal_error = true;
    }
}

impl From<Verdict> for ShownVerdict {
    fn from(v: Verdict) -> ShownVerdict {
        ShownVerdict {
            api_version: v.api_version,
            kind: v.kind,
            namespace: v.namespace,
            name: v.name,
            pruned: v.pruned,
            status_dropped: v.status_dropped,
            rules_not_evaluated: v.rules_not_evaluated,
            update: v.update.map(|u| Box::new(ShownVerdict::from(*u))),
            ..ShownVerdict::default()
        }
        .with_outcome(v.outcome)
    }
}

impl From<UpdateVerdict> for ShownVerdict {
    fn from(v: UpdateVerdict) -> ShownVerdict {
        ShownVerdict {
            api_version: v.api_version,
            kind: v.kind,
            namespace: v.namespace,
            name: v.name,
            pruned: v.pruned,
            warnings: v.warnings,
            is_update: true,
            ..ShownVerdict::default()
        }
        .with_outcome(v.outcome)
    }
}
