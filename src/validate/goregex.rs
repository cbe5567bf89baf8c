//! Go (RE2) regular expressions on top of the `regex` crate.
//!
//! STUB: being replaced by the full translation (Go syntax and Go error texts).

/// A compiled Go regular expression.
#[derive(Clone, Debug)]
pub struct GoRegex {
    re: regex::Regex,
}

/// Go's `regexp.Compile` error text, e.g. ``error parsing regexp: missing closing ]: `[a` ``.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct GoRegexError(pub String);

/// Compiles `pattern` with Go's syntax and semantics.
pub fn compile(pattern: &str) -> Result<GoRegex, GoRegexError> {
    regex::Regex::new(pattern)
        .map(|re| GoRegex { re })
        .map_err(|e| GoRegexError(format!("error parsing regexp: {e}")))
}

impl GoRegex {
    /// Whether the pattern matches anywhere in `s` (Go's `MatchString`).
    pub fn is_match(&self, s: &str) -> bool {
        self.re.is_match(s)
    }
}
