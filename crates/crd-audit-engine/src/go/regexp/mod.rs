//! Go's `regexp` package (RE2 syntax, `regexp.Compile` / `MatchString`) on top of the `regex`
//! crate. Mirrors `src/regexp/regexp.go` (compiling, matching) and, in the submodules,
//! `src/regexp/syntax/parse.go` ([`syntax`]) and `src/unicode/tables.go` ([`unicode`]).
//!
//! Kubernetes evaluates OpenAPI `pattern`s with Go's `regexp` package (RE2 syntax with the
//! Perl flags, UTF-8). This module contains a small parser that follows the algorithm of Go's
//! `regexp/syntax` closely enough to reject exactly what Go rejects, with Go's error text
//! (``error parsing regexp: <code>: `<expr>` ``), and to build a syntax tree with Go's meaning.
//! The tree is then written out ([`emit`]) in a canonical, fully explicit syntax for the `regex` crate:
//! every character class becomes a list of code point ranges (so `\d`, `\w`, `\s`, POSIX
//! classes and case folding keep Go's ASCII / simple-folding semantics), every group becomes
//! non-capturing (Go allows duplicate group names, Rust does not), and the word boundary
//! assertions become their ASCII forms.
//!
//! Known approximations, all in corners no real CRD pattern reaches:
//! - Go's "expression too large" and "expression nests too deeply" limits are computed on this
//!   module's tree, which does not factor alternations the way Go's parser does, and the size
//!   check is applied eagerly (Go starts checking only past a cheap heuristic).
//! - Unicode tables come from `regex-syntax` (its Unicode version may be newer than Go's).
//! - Go 1.25+ looks up `\p{Name}` after canonicalising the name (case, `_`, `-` and spaces are
//!   ignored); multi-word script names are matched the same way here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

mod emit;
mod syntax;
#[cfg(test)]
mod tests;
mod unicode;

use emit::emit;
use syntax::Parser;

/// A compiled Go regular expression.
#[derive(Clone, Debug)]
pub struct GoRegex {
    re: regex::Regex,
}

/// Go's `regexp.Compile` error text, e.g. ``error parsing regexp: missing closing ]: `[a` ``.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct GoRegexError(pub String);

/// Prefix of errors that Go would not report: the pattern is valid Go, but the Rust engine
/// refuses it (its compiled form exceeds [`RUST_SIZE_LIMIT`]).
pub const ENGINE_LIMIT_PREFIX: &str = "crd-audit: pattern accepted by Go but too large to compile";

/// Size limit handed to `regex::RegexBuilder` (compiled program and lazy DFA cache).
pub const RUST_SIZE_LIMIT: usize = 64 << 20;

/// How many compiled patterns [`compile_cached`] keeps.
const CACHE_CAPACITY: usize = 4096;

/// Compiles `pattern` with Go's syntax and semantics.
pub fn compile(pattern: &str) -> Result<GoRegex, GoRegexError> {
    let translated = translate(pattern)?;
    regex::RegexBuilder::new(&translated)
        .size_limit(RUST_SIZE_LIMIT)
        .dfa_size_limit(RUST_SIZE_LIMIT)
        .nest_limit(10_000)
        .build()
        .map(|re| GoRegex { re })
        .map_err(|e| {
            let detail = match e {
                regex::Error::CompiledTooBig(limit) => {
                    format!("compiled size exceeds {limit} bytes")
                }
                other => other.to_string(),
            };
            GoRegexError(format!("{ENGINE_LIMIT_PREFIX}: {detail}: `{pattern}`"))
        })
}

/// [`compile`] through a process-wide, bounded cache (thread-safe).
pub fn compile_cached(pattern: &str) -> Result<Arc<GoRegex>, GoRegexError> {
    type Cache = Mutex<HashMap<String, Result<Arc<GoRegex>, GoRegexError>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(hit) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(pattern) {
        return hit.clone();
    }
    let result = compile(pattern).map(Arc::new);
    let mut map = cache.lock().unwrap_or_else(|p| p.into_inner());
    if map.len() >= CACHE_CAPACITY {
        map.clear();
    }
    map.insert(pattern.to_owned(), result.clone());
    result
}

impl GoRegex {
    /// The leftmost match (Go's `FindString`).
    pub fn find(&self, s: &str) -> Option<String> {
        self.re.find(s).map(|m| m.as_str().to_string())
    }

    /// All non-overlapping matches (Go's `FindAllString`).
    pub fn find_all(&self, s: &str) -> Vec<String> {
        self.re
            .find_iter(s)
            .map(|m| m.as_str().to_string())
            .collect()
    }

    /// Whether the pattern matches anywhere in `s` (Go's `MatchString`).
    pub fn is_match(&self, s: &str) -> bool {
        self.re.is_match(s)
    }

    #[cfg(test)]
    /// The pattern handed to the `regex` crate (for diagnostics).
    pub fn translated(&self) -> &str {
        self.re.as_str()
    }
}

/// Translates a Go pattern into an equivalent pattern for the `regex` crate, or returns Go's
/// parse error.
pub fn translate(pattern: &str) -> Result<String, GoRegexError> {
    let tree = Parser::new(pattern).parse()?;
    let mut out = String::with_capacity(pattern.len() * 2);
    emit(&tree, &mut out);
    Ok(out)
}
