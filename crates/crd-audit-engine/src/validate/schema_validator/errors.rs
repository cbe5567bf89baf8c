//! Error names and results: kube-openapi's `errors.Validation` values (name, `Error()` text) as
//! the validators build them, and their conversion into field errors by apiextensions'
//! `kubeOpenAPIResultToFieldErrors` (`pkg/apiserver/validation/validation.go`).

use super::*;

// ---------------------------------------------------------------------------------------------
// Error names and results

/// The kube-openapi name of the value being validated, as a list of segments on the stack.
pub(super) enum Seg<'a> {
    Root,
    /// A declared property: `parent.name`, or `name` at the root.
    Prop(&'a Seg<'a>, &'a str),
    /// A map key or derived name: always `parent.key`.
    Key(&'a Seg<'a>, &'a str),
    /// An array item: `parent[i]`.
    Index(&'a Seg<'a>, usize),
}

impl Seg<'_> {
    pub(super) fn render(&self) -> String {
        let mut parts: Vec<&Seg> = Vec::new();
        let mut cur = self;
        loop {
            match cur {
                Seg::Root => break,
                Seg::Prop(p, _) | Seg::Key(p, _) | Seg::Index(p, _) => {
                    parts.push(cur);
                    cur = p;
                }
            }
        }
        let mut s = String::new();
        for part in parts.iter().rev() {
            match part {
                Seg::Prop(_, name) => {
                    if !s.is_empty() {
                        s.push('.');
                    }
                    s.push_str(name);
                }
                Seg::Key(_, key) => {
                    s.push('.');
                    s.push_str(key);
                }
                Seg::Index(_, i) => {
                    let _ = write!(s, "[{i}]");
                }
                Seg::Root => {}
            }
        }
        s
    }
}

/// How an error becomes a field error (`kubeOpenAPIResultToFieldErrors`).
pub(super) enum Conv {
    Required,
    NotSupported(BadValue, Vec<String>),
    TooLong(BadValue, i64),
    TooMany(i64, i64),
    TypeInvalid(BadValue),
    Invalid(BadValue),
    /// Not an `errors.Validation`: reported at the base path with an empty value.
    Plain,
}

/// One kube-openapi error: its name, its `Error()` text and its conversion.
pub(super) struct OErr {
    pub(super) name: String,
    pub(super) msg: String,
    pub(super) conv: Conv,
}

/// Collects errors, or only counts them (for `anyOf`/`oneOf`/`not` branches whose errors may
/// be dropped).
pub(super) struct Sink {
    pub(super) errs: Vec<OErr>,
    pub(super) count: usize,
    pub(super) record: bool,
}

impl Sink {
    pub(super) fn recording() -> Sink {
        Sink {
            errs: Vec::new(),
            count: 0,
            record: true,
        }
    }

    pub(super) fn counting() -> Sink {
        Sink {
            errs: Vec::new(),
            count: 0,
            record: false,
        }
    }

    #[inline]
    pub(super) fn err(&mut self, f: impl FnOnce() -> OErr) {
        self.count += 1;
        if self.record {
            self.errs.push(f());
        }
    }
}

pub(super) fn type_error(name: String, type_name: &str, got: &str) -> OErr {
    let msg = format!(
        "{name} in body must be of type {type_name}: {}",
        go::strconv::quote(got)
    );
    OErr {
        name,
        msg,
        conv: Conv::TypeInvalid(BadValue::Str(got.to_string())),
    }
}

pub(super) fn plain(msg: String) -> OErr {
    OErr {
        name: String::new(),
        msg,
        conv: Conv::Plain,
    }
}

pub(super) fn invalid(name: String, msg: String, value: BadValue) -> OErr {
    OErr {
        name,
        msg,
        conv: Conv::Invalid(value),
    }
}

/// `kubeOpenAPIResultToFieldErrors` for one error.
pub(super) fn convert(e: OErr, base: &Path) -> Cause {
    if let Conv::Plain = e.conv {
        return Cause::invalid(base.clone(), BadValue::Str(String::new()), e.msg);
    }
    let field = if !e.name.is_empty() && e.name != "." {
        base.child(e.name.strip_prefix('.').unwrap_or(&e.name))
    } else {
        base.clone()
    };
    match e.conv {
        Conv::Required => Cause::required(field, ""),
        Conv::NotSupported(value, supported) => Cause::not_supported(field, value, &supported),
        Conv::TooLong(value, max) => Cause::too_long(field, value, max),
        Conv::TooMany(actual, max) => Cause::too_many(field, actual, max),
        Conv::TypeInvalid(value) => Cause::new(ErrorType::TypeInvalid, field, value, e.msg),
        Conv::Invalid(value) => Cause::invalid(field, value, e.msg),
        Conv::Plain => unreachable!(),
    }
}
