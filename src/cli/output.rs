//! Output formats shared by every command.

use clap::ValueEnum;
use crd_audit_engine::{Cause, Verdict};
use serde_json::{Map, Value, json};

/// `--output`: `text` for people (one finding a line), `json` for machines (one object a line),
/// `junit` for CI test reports (JUnit XML), `sarif` for code scanning (SARIF 2.1.0, as GitHub
/// reads it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Format {
    #[default]
    Text,
    Json,
    Junit,
    Sarif,
}

/// The status of a command whose output could not be written completely, given the status
/// of what it did: a closed pipe (the reader wanted no more, as `head` does) ends it
/// quietly with that status, as ripgrep does; any other failure (a full disk) is reported
/// and is an error.
pub fn write_failed(e: &std::io::Error, status: u8) -> u8 {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        status
    } else {
        eprintln!("error: writing the output: {e}");
        super::EXIT_INPUT_ERROR
    }
}

/// `Kind namespace/name`, as kubectl names an object.
pub fn object_name(v: &Verdict) -> String {
    let name = if v.name.is_empty() {
        "<no name>"
    } else {
        &v.name
    };
    if v.namespace.is_empty() {
        format!("{} {name}", v.kind)
    } else {
        format!("{} {}/{name}", v.kind, v.namespace)
    }
}

/// The JSON line of `crd-audit validate --output json` (without `source`), which `plan` and
/// `audit` extend: the verdict as DESIGN.md fixes it.
pub fn verdict_json(v: &Verdict) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("apiVersion".into(), json!(v.api_version));
    m.insert("kind".into(), json!(v.kind));
    m.insert("namespace".into(), json!(v.namespace));
    m.insert("name".into(), json!(v.name));
    m.insert("valid".into(), json!(v.valid()));
    m.insert("code".into(), json!(v.code));
    if let Some(e) = &v.request_error {
        m.insert("requestError".into(), json!(e));
    } else {
        let errors: Vec<Value> = v.errors.iter().map(Cause::to_json).collect();
        m.insert("errors".into(), Value::Array(errors));
    }
    m.insert("pruned".into(), json!(v.pruned));
    if v.status_dropped {
        m.insert("statusDropped".into(), json!(true));
    }
    if v.rules_not_evaluated > 0 {
        m.insert("celRulesNotEvaluated".into(), json!(v.rules_not_evaluated));
    }
    if v.is_update {
        m.insert("warnings".into(), json!(v.warnings));
    }
    if let Some(u) = &v.update {
        let errors: Vec<Value> = u.errors.iter().map(Cause::to_json).collect();
        let mut o = Map::new();
        o.insert("allowed".into(), json!(u.valid()));
        o.insert("errors".into(), Value::Array(errors));
        o.insert("warnings".into(), json!(u.warnings));
        m.insert("update".into(), Value::Object(o));
    }
    m
}

/// A create of the Widget `default/w` refused (422) with one cause, for unit tests of the
/// writers.
#[cfg(test)]
pub(crate) fn refused_widget(cause: Cause) -> Verdict {
    let mut v = Verdict::default();
    v.api_version = "example.com/v1".into();
    v.kind = "Widget".into();
    v.namespace = "default".into();
    v.name = "w".into();
    v.code = 422;
    v.errors = vec![cause];
    v
}
