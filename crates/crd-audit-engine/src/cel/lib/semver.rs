//! The Kubernetes semver library (`semver`, `isSemver`, accessors and comparisons) over
//! `github.com/blang/semver/v4`, with the library's optional normalization.

use super::{ext, fail, lib_ext, text};
use crate::cel::eval::EvalResult;
use crate::cel::value::{Ext, Val};
use crate::go::strconv::{parse_uint64, quote};
use std::cmp::Ordering;
use std::fmt;

// =============================================================================================
// Semver library (library/semverlib.go over blang/semver/v4)
// =============================================================================================

#[derive(Clone, Debug, PartialEq, Eq)]
enum PreRelease {
    Num(u64),
    Str(String),
}

/// A `semver.Version`. Equality and order are semver precedence (build metadata ignored), as
/// the CEL type compares.
#[derive(Clone, Debug)]
pub struct Semver {
    major: u64,
    minor: u64,
    patch: u64,
    pre: Vec<PreRelease>,
    build: Vec<String>,
}

fn only_digits(s: &str) -> bool {
    s.bytes().all(|c| c.is_ascii_digit())
}

fn only_alphanum(s: &str) -> bool {
    s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
}

fn leading_zero(s: &str) -> bool {
    s.len() > 1 && s.starts_with('0')
}

/// `semver.Parse`.
fn semver_parse(s: &str) -> Result<Semver, String> {
    if s.is_empty() {
        return Err("Version string empty".to_string());
    }
    let parts: Vec<&str> = s.splitn(3, '.').collect();
    if parts.len() != 3 {
        return Err("No Major.Minor.Patch elements found".to_string());
    }
    let number = |p: &str, what: &str, cap: &str| -> Result<u64, String> {
        if !only_digits(p) {
            return Err(format!(
                "Invalid character(s) found in {what} number {}",
                quote(p)
            ));
        }
        if leading_zero(p) {
            return Err(format!(
                "{cap} number must not contain leading zeroes {}",
                quote(p)
            ));
        }
        parse_uint64(p)
    };
    let major = number(parts[0], "major", "Major")?;
    let minor = number(parts[1], "minor", "Minor")?;
    let mut patch_str = parts[2];
    let mut build_parts: Vec<&str> = Vec::new();
    let mut pre_parts: Vec<&str> = Vec::new();
    if let Some(i) = patch_str.find('+') {
        build_parts = patch_str[i + 1..].split('.').collect();
        patch_str = &patch_str[..i];
    }
    if let Some(i) = patch_str.find('-') {
        pre_parts = patch_str[i + 1..].split('.').collect();
        patch_str = &patch_str[..i];
    }
    let patch = number(patch_str, "patch", "Patch")?;
    let mut pre = Vec::new();
    for p in pre_parts {
        if p.is_empty() {
            return Err("Prerelease is empty".to_string());
        }
        if only_digits(p) {
            if leading_zero(p) {
                return Err(format!(
                    "Numeric PreRelease version must not contain leading zeroes {}",
                    quote(p)
                ));
            }
            pre.push(PreRelease::Num(parse_uint64(p)?));
        } else if only_alphanum(p) {
            pre.push(PreRelease::Str(p.to_string()));
        } else {
            return Err(format!(
                "Invalid character(s) found in prerelease {}",
                quote(p)
            ));
        }
    }
    let mut build = Vec::new();
    for b in build_parts {
        if b.is_empty() {
            return Err("Build meta data is empty".to_string());
        }
        if !only_alphanum(b) {
            return Err(format!(
                "Invalid character(s) found in build meta data {}",
                quote(b)
            ));
        }
        build.push(b.to_string());
    }
    Ok(Semver {
        major,
        minor,
        patch,
        pre,
        build,
    })
}

/// The library's `normalizeAndParse`.
fn semver_normalize_and_parse(s: &str) -> Result<Semver, String> {
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s.splitn(3, '.').map(str::to_string).collect();
    for p in &mut parts {
        if p.len() > 1 {
            let t = p.trim_start_matches('0');
            *p = if t.is_empty() || !t.as_bytes()[0].is_ascii_digit() {
                format!("0{t}")
            } else {
                t.to_string()
            };
        }
    }
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return Err("short version cannot contain PreRelease/Build meta data".to_string());
        }
        while parts.len() < 3 {
            parts.push("0".to_string());
        }
    }
    semver_parse(&parts.join("."))
}

/// `semver(s)` / `semver(s, normalize)`: errors are the texts the evaluation reports.
pub fn parse_semver(s: &str, normalize: bool) -> Result<Semver, String> {
    if normalize {
        semver_normalize_and_parse(s)
    } else {
        semver_parse(s)
    }
}

/// `isSemver(s)` / `isSemver(s, normalize)`.
pub fn is_semver(s: &str, normalize: bool) -> bool {
    parse_semver(s, normalize).is_ok()
}

impl Semver {
    /// `major()` (Go converts the uint64 to int64).
    pub fn major(&self) -> i64 {
        self.major as i64
    }
    /// `minor()`.
    pub fn minor(&self) -> i64 {
        self.minor as i64
    }
    /// `patch()`.
    pub fn patch(&self) -> i64 {
        self.patch as i64
    }

    /// Semver precedence (`Version.Compare`; build metadata ignored); also `Ord::cmp`.
    pub fn compare(&self, o: &Semver) -> Ordering {
        let core = (self.major, self.minor, self.patch).cmp(&(o.major, o.minor, o.patch));
        if core != Ordering::Equal {
            return core;
        }
        match (self.pre.is_empty(), o.pre.is_empty()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Greater,
            (false, true) => return Ordering::Less,
            _ => {}
        }
        for (a, b) in self.pre.iter().zip(&o.pre) {
            let c = match (a, b) {
                (PreRelease::Num(x), PreRelease::Num(y)) => x.cmp(y),
                (PreRelease::Num(_), PreRelease::Str(_)) => Ordering::Less,
                (PreRelease::Str(_), PreRelease::Num(_)) => Ordering::Greater,
                (PreRelease::Str(x), PreRelease::Str(y)) => x.cmp(y),
            };
            if c != Ordering::Equal {
                return c;
            }
        }
        self.pre.len().cmp(&o.pre.len())
    }
}

impl PartialEq for Semver {
    fn eq(&self, other: &Semver) -> bool {
        self.compare(other) == Ordering::Equal
    }
}

impl Eq for Semver {}

impl PartialOrd for Semver {
    fn partial_cmp(&self, other: &Semver) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Semver {
    fn cmp(&self, other: &Semver) -> Ordering {
        self.compare(other)
    }
}

impl fmt::Display for Semver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        for (i, p) in self.pre.iter().enumerate() {
            f.write_str(if i == 0 { "-" } else { "." })?;
            match p {
                PreRelease::Num(n) => write!(f, "{n}")?,
                PreRelease::Str(s) => f.write_str(s)?,
            }
        }
        for (i, b) in self.build.iter().enumerate() {
            f.write_str(if i == 0 { "+" } else { "." })?;
            f.write_str(b)?;
        }
        Ok(())
    }
}

/// The semver overload `id` applied to `a` (a receiver first).
pub fn call<'a>(id: &str, a: &[Val<'a>]) -> Option<EvalResult<'a>> {
    let v0 = match lib_ext(a, 0) {
        Some(Ext::Semver(v)) => Some(v),
        _ => None,
    };
    let v1 = match lib_ext(a, 1) {
        Some(Ext::Semver(v)) => Some(v),
        _ => None,
    };
    let normalize = matches!(a.get(1), Some(Val::Bool(true)));
    Some(match id {
        "string_to_semver" | "string_bool_to_semver" => parse_semver(text(a, 0)?, normalize)
            .map(|v| ext(Ext::Semver(v)))
            .or_else(fail),
        "is_semver_string" | "is_semver_string_bool" => {
            Ok(Val::Bool(is_semver(text(a, 0)?, normalize)))
        }
        "semver_major" => Ok(Val::Int(v0?.major())),
        "semver_minor" => Ok(Val::Int(v0?.minor())),
        "semver_patch" => Ok(Val::Int(v0?.patch())),
        "semver_is_less_than" => Ok(Val::Bool(v0?.compare(v1?).is_lt())),
        "semver_is_greater_than" => Ok(Val::Bool(v0?.compare(v1?).is_gt())),
        "semver_compare_to" => Ok(Val::Int(v0?.compare(v1?) as i64)),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semver_library() {
        let v = |s: &str| parse_semver(s, false).unwrap();
        assert!(is_semver("1.0.0", false) && is_semver("1.2.3-alpha.1+build.5", false));
        assert!(
            !is_semver("v1.0.0", false) && !is_semver("1.0", false) && !is_semver("01.0.0", false)
        );
        assert!(is_semver("v1.0", true) && is_semver("01.01.01", true) && is_semver("1", true));
        assert_eq!(parse_semver("v01.02.03", true).unwrap(), v("1.2.3"));
        assert_eq!(
            parse_semver("1.0", false).unwrap_err(),
            "No Major.Minor.Patch elements found"
        );
        assert_eq!(parse_semver("", false).unwrap_err(), "Version string empty");
        assert_eq!(
            parse_semver("v1.0.0", false).unwrap_err(),
            "Invalid character(s) found in major number \"v1\""
        );
        assert_eq!(
            parse_semver("1.01.0", false).unwrap_err(),
            "Minor number must not contain leading zeroes \"01\""
        );
        assert_eq!(
            parse_semver("1.0-alpha", true).unwrap_err(),
            "short version cannot contain PreRelease/Build meta data"
        );
        assert_eq!(
            parse_semver("1.0.0-01", false).unwrap_err(),
            "Numeric PreRelease version must not contain leading zeroes \"01\""
        );
        assert_eq!(
            parse_semver("1.0.0+", false).unwrap_err(),
            "Build meta data is empty"
        );
        assert_eq!(v("1.2.3").major(), 1);
        assert_eq!(v("1.2.3").minor(), 2);
        assert_eq!(v("1.2.3").patch(), 3);
        assert_eq!(v("1.2.3").cmp(&v("1.2.3")), Ordering::Equal);
        assert_eq!(v("1.2.3").cmp(&v("2.0.0")), Ordering::Less);
        assert_eq!(v("1.2.3").cmp(&v("0.1.2")), Ordering::Greater);
        // SemVer 2.0 precedence example chain.
        let chain = [
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-alpha.beta",
            "1.0.0-beta",
            "1.0.0-beta.2",
            "1.0.0-beta.11",
            "1.0.0-rc.1",
            "1.0.0",
        ];
        for w in chain.windows(2) {
            assert_eq!(v(w[0]).cmp(&v(w[1])), Ordering::Less, "{} < {}", w[0], w[1]);
        }
        assert_eq!(v("1.0.0+a").cmp(&v("1.0.0+b")), Ordering::Equal);
    }
}
