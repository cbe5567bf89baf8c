//! String formats as kube-apiserver 1.36 validates them.
//!
//! Two layers decide what a `format` does:
//!
//! * apiextensions-apiserver (`pkg/apiserver/validation/formats.go`) strips every format that is
//!   not supported at the server's compatibility version before the schema validator is built.
//!   For a string (or untyped) schema the supported set at 1.36 is the 1.0 set plus the two
//!   Kubernetes name formats added in 1.34. Names are compared after removing every `-` (the
//!   go-openapi name normalisation), so `date-time`, `datetime` and `date--time` are the same
//!   format, while the comparison is case sensitive (`IPv4` is unknown).
//! * kube-openapi `pkg/validation/strfmt` then checks string values against the registered
//!   validator of the (normalised) name. Each checker below re-implements that validator and the
//!   Go standard-library routine it relies on (`net.ParseIP`, `net.ParseMAC`, `net/url`,
//!   `net/mail`, `time.Parse`, `time.ParseDuration`, ...).
//!
//! The same table drives the CRD-creation warning `unrecognized format "<f>"`
//! (`GetUnrecognizedFormats`), which also depends on the schema type: integers only know
//! `int32`/`int64`, numbers only `float`/`double`, and any other type knows no format at all.

use crate::go::{net, time};
use regex::Regex;
use std::sync::LazyLock;

/// A string format that the API server validates (after name normalisation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    BsonObjectId,
    Uri,
    Email,
    Hostname,
    Ipv4,
    Ipv6,
    Cidr,
    Mac,
    Uuid,
    Uuid3,
    Uuid4,
    Uuid5,
    Isbn,
    Isbn10,
    Isbn13,
    CreditCard,
    Ssn,
    HexColor,
    RgbColor,
    Byte,
    Password,
    Date,
    Duration,
    DateTime,
    K8sShortName,
    K8sLongName,
}

/// Normalised names (no dashes) of every validated format, as kube-apiserver 1.36 has them.
const FORMATS: [(&str, Format); 26] = [
    ("bsonobjectid", Format::BsonObjectId),
    ("uri", Format::Uri),
    ("email", Format::Email),
    ("hostname", Format::Hostname),
    ("ipv4", Format::Ipv4),
    ("ipv6", Format::Ipv6),
    ("cidr", Format::Cidr),
    ("mac", Format::Mac),
    ("uuid", Format::Uuid),
    ("uuid3", Format::Uuid3),
    ("uuid4", Format::Uuid4),
    ("uuid5", Format::Uuid5),
    ("isbn", Format::Isbn),
    ("isbn10", Format::Isbn10),
    ("isbn13", Format::Isbn13),
    ("creditcard", Format::CreditCard),
    ("ssn", Format::Ssn),
    ("hexcolor", Format::HexColor),
    ("rgbcolor", Format::RgbColor),
    ("byte", Format::Byte),
    ("password", Format::Password),
    ("date", Format::Date),
    ("duration", Format::Duration),
    ("datetime", Format::DateTime),
    ("k8sshortname", Format::K8sShortName),
    ("k8slongname", Format::K8sLongName),
];

impl Format {
    /// Resolves a schema's `format` value (for a string or untyped schema) to the validated
    /// format, or `None` when the API server strips it (unknown or unsupported).
    pub fn parse(name: &str) -> Option<Format> {
        if name.contains('-') {
            let normalized: String = name.chars().filter(|&c| c != '-').collect();
            Self::lookup(&normalized)
        } else {
            Self::lookup(name)
        }
    }

    fn lookup(normalized: &str) -> Option<Format> {
        FORMATS
            .iter()
            .find(|(n, _)| *n == normalized)
            .map(|&(_, f)| f)
    }

    #[cfg(test)]
    /// The normalised registry name (`datetime`, `k8sshortname`, ...).
    pub fn normalized_name(self) -> &'static str {
        FORMATS
            .iter()
            .find(|(_, f)| *f == self)
            .map(|&(n, _)| n)
            .unwrap_or("")
    }

    /// Whether `s` is a valid instance of this format.
    pub fn check(self, s: &str) -> bool {
        match self {
            Format::BsonObjectId => is_bson_object_id(s),
            // Go's `url.ParseRequestURI` (one implementation of net/url, shared with the CEL
            // url library).
            Format::Uri => crate::go::url::is_request_uri(s),
            Format::Email => crate::go::mail::parses_one_address(s),
            Format::Hostname => is_hostname(s),
            Format::Ipv4 => net::parse_ip_sloppy(s.as_bytes()) && s.contains('.'),
            Format::Ipv6 => is_ipv6(s),
            Format::Cidr => net::parse_cidr_sloppy(s),
            Format::Mac => net::parse_mac(s.as_bytes()),
            Format::Uuid => RX_UUID.is_match(s),
            Format::Uuid3 => RX_UUID3.is_match(s),
            Format::Uuid4 => RX_UUID4.is_match(s),
            Format::Uuid5 => RX_UUID5.is_match(s),
            Format::Isbn => is_isbn10(s) || is_isbn13(s),
            Format::Isbn10 => is_isbn10(s),
            Format::Isbn13 => is_isbn13(s),
            Format::CreditCard => is_credit_card(s),
            Format::Ssn => s.len() == 11 && RX_SSN.is_match(s),
            Format::HexColor => RX_HEXCOLOR.is_match(s),
            Format::RgbColor => RX_RGBCOLOR.is_match(s),
            Format::Byte => RX_BASE64.is_match(s),
            Format::Password => true,
            Format::Date => crate::go::time::parse_date(s).is_some(),
            Format::Duration => is_duration(s),
            Format::DateTime => is_date_time(s),
            Format::K8sShortName => s.len() <= 63 && RX_SHORT_NAME.is_match(s),
            Format::K8sLongName => s.len() <= 253 && RX_LONG_NAME.is_match(s),
        }
    }
}

/// Whether the API server validates values of this `format` on a string or untyped schema
/// (others are stripped and ignored).
pub fn is_validated(format: &str) -> bool {
    Format::parse(format).is_some()
}

/// Whether `s` is a valid instance of `format`. Formats that are not validated accept anything.
pub fn is_valid(format: &str, s: &str) -> bool {
    Format::parse(format).is_none_or(|f| f.check(s))
}

#[cfg(test)]
/// Whether CRD creation knows this format on a string or untyped schema (else it warns
/// `unrecognized format "<f>"`). The empty format is always fine. See [`format_warning`] for
/// the rule on other types.
pub fn is_recognized(format: &str) -> bool {
    format.is_empty() || is_validated(format)
}

/// Whether the format survives `StripUnsupportedFormatsPostProcessorForVersion` on a schema of
/// this `type` (`""` when the schema has no type). Numeric formats survive only on their type.
pub fn retains_format(type_: &str, format: &str) -> bool {
    if format.is_empty() {
        return false;
    }
    match type_ {
        "" | "string" => is_validated(format),
        "integer" => format == "int32" || format == "int64",
        "number" => format == "float" || format == "double",
        _ => false,
    }
}

/// The CRD-creation warning for a schema's `format` given its `type` (`""` when absent), as
/// `GetUnrecognizedFormats` decides it: `unrecognized format "<f>"` (Go `%q` quoting).
pub fn format_warning(type_: &str, format: &str) -> Option<String> {
    if format.is_empty() || retains_format(type_, format) {
        None
    } else {
        Some(format!(
            "unrecognized format {}",
            crate::go::strconv::quote(format)
        ))
    }
}

// ---------------------------------------------------------------------------------------------
// Regular expressions (Go RE2 translated by hand: Go's `\d` and `\s` are ASCII-only, so they are
// spelled out as explicit classes here).

fn rx(pattern: &str) -> Regex {
    regex::RegexBuilder::new(pattern)
        .size_limit(64 << 20)
        .build()
        .expect("static format regex")
}

static RX_UUID: LazyLock<Regex> = LazyLock::new(|| {
    rx("^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")
});
static RX_UUID3: LazyLock<Regex> = LazyLock::new(|| {
    rx("^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?3[0-9a-fA-F]{3}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")
});
static RX_UUID4: LazyLock<Regex> = LazyLock::new(|| {
    rx("^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?4[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?[0-9a-fA-F]{12}$")
});
static RX_UUID5: LazyLock<Regex> = LazyLock::new(|| {
    rx("^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?5[0-9a-fA-F]{3}-?[89abAB][0-9a-fA-F]{3}-?[0-9a-fA-F]{12}$")
});
/// RFC 1123-ish host names with Unicode letters and symbols; the last label is 2-63 letters.
static RX_HOSTNAME: LazyLock<Regex> = LazyLock::new(|| {
    let c = r"[a-zA-Z0-9\p{S}\p{L}]";
    let ch = r"[a-zA-Z0-9\-\p{S}\p{L}]";
    rx(&format!(
        r"^({c}((-?{c}{{0,62}})?)|({c}(({ch}{{0,61}}{c})?)(\.)){{1,}}([a-zA-Z\p{{L}}]){{2,63}})$"
    ))
});
static RX_SSN: LazyLock<Regex> = LazyLock::new(|| rx("^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$"));
static RX_HEXCOLOR: LazyLock<Regex> = LazyLock::new(|| rx("^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"));
static RX_RGBCOLOR: LazyLock<Regex> = LazyLock::new(|| {
    let n = "(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])";
    let s = r"[\t\n\x0C\r ]*";
    rx(&format!(r"^rgb\({s}{n}{s},{s}{n}{s},{s}{n}{s}\)$"))
});
static RX_BASE64: LazyLock<Regex> = LazyLock::new(|| {
    rx("^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$")
});
static RX_CREDIT_CARD: LazyLock<Regex> = LazyLock::new(|| {
    rx(
        "^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$",
    )
});
static RX_SHORT_NAME: LazyLock<Regex> = LazyLock::new(|| rx("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"));
static RX_LONG_NAME: LazyLock<Regex> =
    LazyLock::new(|| rx(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"));
static RX_DATETIME_TIME: LazyLock<Regex> =
    LazyLock::new(|| rx("^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$"));
static RX_DURATION_PART: LazyLock<Regex> =
    LazyLock::new(|| rx("([0-9]+)[\t\n\x0C\r ]*([A-Za-zµ]+)"));

// ---------------------------------------------------------------------------------------------
// Simple formats.

/// `primitive.ObjectIDFromHex`: exactly 24 hex digits.
fn is_bson_object_id(s: &str) -> bool {
    s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// strfmt `IsHostname`: the pattern plus byte-length limits (255 total, 63 per label).
fn is_hostname(s: &str) -> bool {
    RX_HOSTNAME.is_match(s) && s.len() <= 255 && s.split('.').all(|p| p.len() <= 63)
}

/// Go's `\s` class (RE2 Perl class: tab, newline, form feed, carriage return, space).
fn is_go_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0C | b'\r' | b' ')
}

/// govalidator `IsISBN(s, 10)`: strip `[\s-]`, 9 digits plus a digit or `X`, mod-11 checksum.
fn is_isbn10(s: &str) -> bool {
    let d: Vec<u8> = s
        .bytes()
        .filter(|&b| !is_go_space(b) && b != b'-')
        .collect();
    if d.len() != 10 || !d[..9].iter().all(u8::is_ascii_digit) {
        return false;
    }
    let last = match d[9] {
        b'X' => 10,
        b if b.is_ascii_digit() => u32::from(b - b'0'),
        _ => return false,
    };
    let sum: u32 = d[..9]
        .iter()
        .enumerate()
        .map(|(i, &b)| (i as u32 + 1) * u32::from(b - b'0'))
        .sum::<u32>()
        + 10 * last;
    sum.is_multiple_of(11)
}

/// govalidator `IsISBN(s, 13)`: strip `[\s-]`, 13 digits, alternating 1/3 weights.
fn is_isbn13(s: &str) -> bool {
    let d: Vec<u8> = s
        .bytes()
        .filter(|&b| !is_go_space(b) && b != b'-')
        .collect();
    if d.len() != 13 || !d.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let sum: u32 = d[..12]
        .iter()
        .enumerate()
        .map(|(i, &b)| if i % 2 == 0 { 1 } else { 3 } * u32::from(b - b'0'))
        .sum();
    u32::from(d[12] - b'0') == (10 - sum % 10) % 10
}

/// govalidator `IsCreditCard`: keep only digits, match the issuer pattern, Luhn checksum.
fn is_credit_card(s: &str) -> bool {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    if !RX_CREDIT_CARD.is_match(&digits) {
        return false;
    }
    let mut sum = 0u32;
    for (i, b) in digits.bytes().rev().enumerate() {
        let mut n = u32::from(b - b'0');
        if i % 2 == 1 {
            n *= 2;
            if n >= 10 {
                n = n % 10 + 1;
            }
        }
        sum += n;
    }
    sum.is_multiple_of(10)
}

// ---------------------------------------------------------------------------------------------
// Dates, date-times and durations.

/// strfmt `IsDateTime`: lower-case, split on `t`; the first piece is a full date and the second
/// piece (only the second: any further pieces are ignored) matches the time-of-day pattern with
/// hour <= 23, minute <= 59, second <= 59.
fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    // Go lower-cases with unicode.ToLower; only ASCII characters can influence the outcome
    // (the date must be ASCII, the `.` of the pattern takes any one character either way).
    let lower = s.to_ascii_lowercase();
    let mut parts = lower.split('t');
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if crate::go::time::parse_date(date).is_none() {
        return false;
    }
    let Some(c) = RX_DATETIME_TIME.captures(time) else {
        return false;
    };
    &c[1] <= "23" && &c[2] <= "59" && &c[3] <= "59"
}

/// strfmt `ParseDuration`: Go's `time.ParseDuration`, else the lenient "<n> <unit>" scan.
fn is_duration(s: &str) -> bool {
    if crate::go::time::parse_duration(s).is_ok() {
        return true;
    }
    let mut ok = false;
    for c in RX_DURATION_PART.captures_iter(s) {
        // `strconv.Atoi` of the digits fails only when they overflow an int64.
        if crate::go::strconv::parse_int64(&c[1]).is_none() {
            return false;
        }
        let unit = c[2].to_lowercase();
        if duration_unit_known(&unit) {
            ok = true;
        }
    }
    ok
}

/// The strfmt unit table: each unit's aliases compare case-insensitively, and the last alias
/// of each unit also matches as a prefix (`hours`, `days`, `weeks`, ...).
fn duration_unit_known(unit: &str) -> bool {
    const UNITS: [&[&str]; 8] = [
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    UNITS.iter().any(|variants| {
        let last = variants.len() - 1;
        variants.iter().enumerate().any(|(i, v)| {
            (i == last && unit.starts_with(v)) || crate::go::strings::equal_fold(v, unit)
        })
    })
}

/// govalidator `IsIPv6`: `net.ParseIP` accepts it and it contains a colon.
fn is_ipv6(s: &str) -> bool {
    s.contains(':') && net::parse_ip(s.as_bytes()).is_some()
}

/// strfmt `ParseDateTime`: the layouts of the OpenAPI `date-time` format: RFC 3339
/// with a zone, or a local time read as UTC.
pub fn parse_date_time(s: &str) -> Option<(i128, i32)> {
    if s.is_empty() {
        return Some((0, 0));
    }
    if let Some(t) = time::parse_rfc3339(s) {
        return Some(t);
    }
    let b = s.as_bytes();
    let (t, end) = time::parse_date_time(b)?;
    (end == b.len()).then_some((t, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values from the conformance corpus (`expected.jsonl` of every case whose schema has a
    /// string format): `true` = accepted, `false` = `must be of type <format>`.
    const CORPUS: &[(&str, &str, bool)] = &[
        ("bsonobjectid", "507f1f77bcf86cd79943901", false),
        ("bsonobjectid", "507f1f77bcf86cd799439011", true),
        ("bsonobjectid", "zzzf1f77bcf86cd799439011", false),
        ("byte", "", false),
        ("byte", "!!!", false),
        ("byte", "aGVsbG8", false),
        ("byte", "aGVsbG8=", true),
        ("byte", "aGVsbG8=x", false),
        ("cidr", "10.0.0.0", false),
        ("cidr", "10.0.0.0/08", true),
        ("cidr", "10.0.0.0/33", false),
        ("cidr", "10.0.0.0/8", true),
        ("cidr", "10.0.0.1/8", true),
        ("cidr", "2001:db8::/32", true),
        ("creditcard", "1234567812345678", false),
        ("creditcard", "4111", false),
        ("creditcard", "4111 1111 1111 1111", true),
        ("creditcard", "5500000000000004", true),
        ("date", "2023-02-29", false),
        ("date", "2023-12-31", true),
        ("date", "2024-01-01T00:00:00Z", false),
        ("date", "2024-02-29", true),
        ("date", "2024-13-01", false),
        ("date", "24-01-01", false),
        ("date-time", "2024-01-01", false),
        ("date-time", "2024-01-01 00:00:00Z", false),
        ("date-time", "2024-01-01T00:00:00", false),
        ("date-time", "2024-01-01T00:00:00.123+02:00", true),
        ("date-time", "2024-01-01T00:00:00Z", true),
        ("date-time", "2024-01-01T25:00:00Z", false),
        ("date-time", "2024-01-01t00:00:00z", true),
        ("datetime", "2024-01-01T00:00:00Z", true),
        ("datetime", "yesterday", false),
        ("duration", "-5s", true),
        ("duration", "1.5h", true),
        ("duration", "1d", true),
        ("duration", "1h30m", true),
        ("duration", "1hour", true),
        ("duration", "2 days", true),
        ("duration", "300ms", true),
        ("duration", "5 fortnights", false),
        ("duration", "h", false),
        ("email", "Alice <alice@example.com>", true),
        ("email", "a@", false),
        ("email", "a@example.com", true),
        ("email", "plainaddress", false),
        ("hexcolor", "#FFFFF", false),
        ("hexcolor", "#FFFFFF", true),
        ("hexcolor", "#GGGGGG", false),
        ("hexcolor", "#a1b2c3", true),
        ("hexcolor", "fff", true),
        ("hostname", "-bad.com", false),
        ("hostname", "a-b.c", false),
        ("hostname", "a_b.com", false),
        ("hostname", "example.com", true),
        ("hostname", "example.com.", false),
        ("hostname", "localhost", true),
        (
            "hostname",
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.com",
            false,
        ),
        ("ipv4", "0.0.0.0", true),
        ("ipv4", "01.2.3.4", true),
        ("ipv4", "1.2.3", false),
        ("ipv4", "1.2.3.4", true),
        ("ipv4", "192.168.0.1", true),
        ("ipv4", "256.1.1.1", false),
        ("ipv4", "5.6.7", false),
        ("ipv4", "5.6.7.8", true),
        ("ipv4", "8.8.8.8", true),
        ("ipv4", "::1", false),
        ("ipv4", "not-an-ip", false),
        ("ipv4", "x", false),
        // gateway-api Gateway spec.addresses[*].value (anyOf ipv4/ipv6)
        ("ipv4", "1200:0000:::AB00:1234:0000:2552:7777:1313", false),
        ("ipv4", "21DA:D3:0:2F3B:2AY:FF:FE28:9C5A", false),
        ("ipv4", "2001:db8:3c4d:15:0:d234:3eee:", false),
        ("ipv4", "2001:db8:3c4d:15:0:d234:3eee:::", false),
        ("ipv4", ":::1234::", false),
        ("ipv4", "1.1.1", false),
        ("ipv4", "1.a.3.4", false),
        ("ipv4", "foo.com", false),
        ("ipv4", "256.255.255.255", false),
        ("ipv4", "PLACEHOLDER_UNUSABLE_ADDRS", false),
        ("ipv4", "PLACEHOLDER_USABLE_ADDRS", false),
        ("ipv6", "192.168.0.1", false),
        ("ipv6", "2001:db8::1", true),
        ("ipv6", "2001:db8:::1", false),
        ("ipv6", "::1", true),
        ("ipv6", "::ffff:192.168.0.1", true),
        ("ipv6", "fe80::1%eth0", false),
        ("isbn", "0321751043", true),
        ("isbn", "0321751044", false),
        ("isbn", "12345", false),
        ("isbn", "978-0321751041", true),
        ("isbn10", "0-321-75104-3", true),
        ("isbn10", "0321751043", true),
        ("isbn10", "978-0321751041", false),
        ("isbn13", "0321751043", false),
        ("isbn13", "978-0321751041", true),
        ("isbn13", "978-0321751042", false),
        ("isbn13", "9780321751041", true),
        ("k8s-long-name", "-a.b", false),
        ("k8s-long-name", "A.b", false),
        ("k8s-long-name", "a..b", false),
        ("k8s-long-name", "a.b-c.d", true),
        ("k8s-long-name", "abc", true),
        ("k8s-short-name", "-a", false),
        ("k8s-short-name", "ABC", false),
        ("k8s-short-name", "a", true),
        ("k8s-short-name", "a.b", false),
        ("k8s-short-name", "abc-123", true),
        ("mac", "00-1A-2B-3C-4D-5E", true),
        ("mac", "0000.5e00.5301", true),
        ("mac", "00:1a:2b:3c:4d", false),
        ("mac", "00:1a:2b:3c:4d:5e", true),
        ("mac", "zz:1a:2b:3c:4d:5e", false),
        ("password", "anything goes", true),
        ("rgbcolor", "rgb(0, 0, 0)", true),
        ("rgbcolor", "rgb(255,255,255)", true),
        ("rgbcolor", "rgb(256,0,0)", false),
        ("rgbcolor", "rgba(0,0,0,0)", false),
        ("ssn", "12-345-6789", false),
        ("ssn", "123 45 6789", true),
        ("ssn", "123-45-6789", true),
        ("ssn", "1234-56-789", false),
        ("ssn", "123456789", false),
        ("uri", "/relative/path", true),
        ("uri", "example.com", false),
        ("uri", "https://example.com/a?b=c", true),
        ("uri", "not a uri", false),
        ("uri", "urn:isbn:0451450523", true),
        ("uuid", "123E4567E89B12D3A456426614174000", true),
        ("uuid", "123e4567-e89b-12d3-a456", false),
        ("uuid", "123e4567-e89b-12d3-a456-426614174000", true),
        ("uuid", "g23e4567-e89b-12d3-a456-426614174000", false),
        ("uuid3", "a3bb189e-8bf9-3888-9912-ace4e6543002", true),
        ("uuid3", "a3bb189e-8bf9-4888-9912-ace4e6543002", false),
        ("uuid4", "9b2f6a4e-8d3c-3f5a-9b1e-2c3d4e5f6a7b", false),
        ("uuid4", "9b2f6a4e-8d3c-4f5a-7b1e-2c3d4e5f6a7b", false),
        ("uuid4", "9b2f6a4e-8d3c-4f5a-9b1e-2c3d4e5f6a7b", true),
        ("uuid5", "74738ff5-5367-4958-9aee-98fffdcd1876", false),
        ("uuid5", "74738ff5-5367-5958-9aee-98fffdcd1876", true),
    ];

    /// Edge cases per format, from the upstream implementations' behaviour.
    const EDGES: &[(&str, &str, bool)] = &[
        // bsonobjectid: hex of either case, exactly 24.
        ("bsonobjectid", "507F1F77BCF86CD799439011", true),
        ("bsonobjectid", "507f1f77bcf86cd7994390110", false),
        // byte: standard alphabet with padding.
        ("byte", "+/+/", true),
        ("byte", "-_-_", false),
        ("byte", "aGk=", true),
        ("byte", "aA==", true),
        ("byte", "a===", false),
        ("byte", "aGVsbG8=\n", false),
        // cidr (sloppy: leading zeros).
        ("cidr", "010.0.0.0/8", true),
        ("cidr", "10.0.0.0/", false),
        ("cidr", "::/0", true),
        ("cidr", "::/129", false),
        ("cidr", "::ffff:1.2.3.4/128", true),
        ("cidr", "10.0.0.0/8 ", false),
        ("cidr", "10.0.0.0/+8", false),
        // creditcard: non-digits are ignored, Luhn.
        ("creditcard", "4111-1111-1111-1111", true),
        ("creditcard", "4111111111111112", false),
        ("creditcard", "378282246310005", true),
        // date: real calendar, exact layout.
        ("date", "2000-02-29", true),
        ("date", "1900-02-29", false),
        ("date", "0000-02-29", true),
        ("date", "2024-04-31", false),
        ("date", "2024-00-10", false),
        ("date", "2024-01-00", false),
        ("date", "2024-1-01", false),
        ("date", "2024-01-01 ", false),
        ("date", "+024-01-01", false),
        // date-time: only the piece after the first `t` is checked, offsets are not range
        // checked, the fraction separator is any character.
        ("date-time", "2024-01-01T23:59:59Z", true),
        ("date-time", "2024-01-01T23:60:00Z", false),
        ("date-time", "2024-01-01T23:59:60Z", false),
        ("date-time", "2024-01-01T00:00:00+99:99", true),
        ("date-time", "2024-01-01T00:00:00+0000", false),
        ("date-time", "2024-01-01T00:00:00,5Z", true),
        ("date-time", "2024-01-01T00:00:00.Z", false),
        ("date-time", "2024-01-01T00:00:00ZT", true),
        ("date-time", "2024-02-30T00:00:00Z", false),
        ("date-time", "T00:00:00Z", false),
        ("date--time", "2024-01-01T00:00:00Z", true),
        // duration: Go syntax, then the lenient scan.
        ("duration", "0", true),
        ("duration", "-0", true),
        ("duration", "00", false),
        ("duration", "", false),
        ("duration", ".5s", true),
        ("duration", "5.s", true),
        ("duration", ".s", false),
        ("duration", "1µs", true),
        ("duration", "1μs", true),
        ("duration", "2562047h47m16.854775807s", true),
        // Go overflows, but the lenient scan still finds known units.
        ("duration", "2562047h47m16.854775808s", true),
        ("duration", "9223372036854775807ns", true),
        ("duration", "9223372036854775808ns", false),
        ("duration", "1.5.5s", true), // the scan finds "5s"
        ("duration", "1.5.5", false),
        ("duration", "1h 2x", true),
        ("duration", "-2562047h47m16.854775808s", true),
        ("duration", "3 weeks", true),
        ("duration", "1 fortnight 2 days", true),
        ("duration", "10 Hours", true),
        ("duration", "- 5 min", true),
        ("duration", "5", false),
        ("duration", "99999999999999999999 days", false),
        ("duration", "1 day 99999999999999999999 xyz", false),
        ("duration", "9223372036854775807 ns", true),
        ("duration", "1y", false),
        // email (net/mail).
        ("email", "\"quoted name\"@example.com", true),
        ("email", "\"\"@example.com", false),
        ("email", "a@[192.168.0.1]", true),
        ("email", "a@[300.1.1.1]", false),
        ("email", "a@b", true),
        ("email", "a..b@example.com", false),
        ("email", ".a@example.com", false),
        ("email", "a@example.com (Alice)", true),
        ("email", "a@example.com (unclosed", false),
        ("email", "<a@example.com>", true),
        ("email", "Alice <a@example.com", false),
        ("email", "g: a@example.com;", true),
        ("email", "g: a@example.com, b@example.com;", false),
        ("email", "g: ;", false),
        ("email", "a@example.com, b@example.com", false),
        ("email", "=?utf-8?q?Alice?= <a@example.com>", true),
        ("email", "=?x-unknown?q?Alice?= <a@example.com>", false),
        ("email", "Bob =?x-unknown?q?Alice?= <a@example.com>", true),
        ("email", "  a@example.com  ", true),
        ("email", "ü@例え.jp", true),
        ("email", "", false),
        ("email", "a@example.com (=?x-unknown?q?A?=)", false),
        ("email", "a@example.com (=?utf-8?q?A?=)", true),
        ("email", "g: Alice <a@example.com>;", true),
        ("email", "a.@example.com", false),
        // hostname.
        ("hostname", "a", true),
        ("hostname", "a-", true),
        ("hostname", "a--b", false),
        ("hostname", "1.2.3.4", false),
        ("hostname", "a.bc", true),
        ("hostname", "a.b1", false),
        ("hostname", "ab-.com", false),
        ("hostname", "münchen.de", true),
        ("hostname", "☃.net", true),
        ("hostname", "", false),
        // ipv4 (sloppy) accepts an IPv6 spelling that contains a dot.
        ("ipv4", "::ffff:1.2.3.4", true),
        ("ipv4", "001.002.003.004", true),
        ("ipv4", "1.2.3.4.", false),
        ("ipv4", "1.2.3.-4", false),
        ("ipv4", " 1.2.3.4", false),
        // ipv6 (strict net.ParseIP).
        ("ipv6", "::", true),
        ("ipv6", "1:2:3:4:5:6:7:8", true),
        ("ipv6", "1:2:3:4:5:6:7:8:9", false),
        ("ipv6", "1:2:3:4:5:6:7::", true),
        ("ipv6", "1::2:3:4:5:6:7:8", false),
        ("ipv6", "00001::", false),
        ("ipv6", "::ffff:01.2.3.4", false),
        ("ipv6", "::1.2.3.4", true),
        ("ipv6", "1:2:3:4:5:6:1.2.3.4", true),
        ("ipv6", "1:2:3:4:5:1.2.3.4", false),
        ("ipv6", "FE80::ABCD", true),
        ("ipv6", "[::1]", false),
        // isbn.
        ("isbn10", "080442957X", true),
        ("isbn10", "080442957x", false),
        ("isbn10", "0 321 75104 3", true),
        ("isbn13", "978 0 321 75104 1", true),
        // k8s names.
        ("k8s-short-name", "", false),
        ("k8s-short-name", "a-", false),
        ("k8sshortname", "abc", true),
        ("k8s-long-name", "a.b.", false),
        // mac.
        ("mac", "001122334455", true),
        ("mac", "0011223344556677", true),
        ("mac", "0011223344556677889900aabbccddeeff001122", true),
        ("mac", "00112233445566", false),
        ("mac", "411111111111111", false),
        ("mac", "00112233445g", false),
        ("mac", "00:1a:2b:3c:4d:5e:6f:70", true),
        ("mac", "00-1a-2b-3c-4d-5e:6f:70", false),
        ("mac", "00:1a:2b:3c:4d:5", false),
        ("mac", "0000.5e00.5301.abcd", true),
        ("mac", "0000.5e00-5301", false),
        (
            "mac",
            "00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01",
            true,
        ),
        // rgbcolor.
        ("rgbcolor", "rgb(1,22,199)", true),
        ("rgbcolor", "rgb(01,0,0)", false),
        ("rgbcolor", "RGB(0,0,0)", false),
        ("rgbcolor", "rgb(\t0 ,0,0 )", true),
        // ssn.
        ("ssn", "123-456789", false),
        ("ssn", "12345-6789", false),
        ("ssn", "123-45 6789", true),
        // uri (url.ParseRequestURI).
        ("uri", "*", true),
        ("uri", "", false),
        ("uri", "mailto:a@example.com", true),
        ("uri", "a:", true),
        ("uri", ":foo", false),
        ("uri", "1http://x", false),
        ("uri", "http://example.com:80/x", true),
        ("uri", "http://example.com:8o/x", false),
        ("uri", "http://user:pass@example.com/", true),
        ("uri", "http://us er@example.com/", false),
        ("uri", "http://exa mple.com/", false),
        ("uri", "http://[::1]:8080/", true),
        ("uri", "http://[::1/", false),
        ("uri", "http://[fe80::1%25en0]/", true),
        ("uri", "http://[1.2.3.4]/", false),
        ("uri", "http://example.com/%zz", false),
        ("uri", "http://example.com/a b#frag", true),
        ("uri", "/a?b=%zz", true),
        ("uri", "http://ex%41mple.com/", false),
        ("uri", "http://ex%c3%a4mple.com/", true),
        ("uri", "http://example.com/\u{7f}", false),
        ("uri", "relative/path", false),
        ("uri", "?query", false),
        // uuid (dashes optional, any case).
        ("uuid", "123e4567-e89b12d3-a456-426614174000", true),
        ("uuid4", "9B2F6A4E-8D3C-4F5A-AB1E-2C3D4E5F6A7B", true),
        ("uuid5", "74738ff5-5367-5958-cAee-98fffdcd1876", false),
        // password.
        ("password", "", true),
    ];

    #[test]
    fn corpus_values() {
        for &(f, v, want) in CORPUS {
            assert!(is_validated(f), "{f} should be validated");
            assert_eq!(is_valid(f, v), want, "format {f} value {v:?}");
        }
    }

    #[test]
    fn corpus_long_names() {
        let a63 = "a".repeat(63);
        let a64 = "a".repeat(64);
        assert!(is_valid("k8s-short-name", &a63));
        assert!(!is_valid("k8s-short-name", &a64));
        let a253 = "a".repeat(253);
        let a254 = "a".repeat(254);
        assert!(is_valid("k8s-long-name", &a253));
        assert!(!is_valid("k8s-long-name", &a254));
        // hostname byte limits
        let label63 = "a".repeat(63);
        assert!(is_valid("hostname", &format!("{label63}.com")));
        let long = format!("{label63}.{label63}.{label63}.{label63}.a");
        assert!(long.len() > 255);
        assert!(!is_valid("hostname", &format!("{long}.com")));
    }

    #[test]
    fn edge_values() {
        let bad: Vec<_> = EDGES
            .iter()
            .filter(|&&(f, v, want)| is_valid(f, v) != want)
            .collect();
        assert!(bad.is_empty(), "mismatches: {bad:?}");
    }

    #[test]
    fn validated_set() {
        let expected = [
            "bsonobjectid",
            "uri",
            "email",
            "hostname",
            "ipv4",
            "ipv6",
            "cidr",
            "mac",
            "uuid",
            "uuid3",
            "uuid4",
            "uuid5",
            "isbn",
            "isbn10",
            "isbn13",
            "creditcard",
            "ssn",
            "hexcolor",
            "rgbcolor",
            "byte",
            "password",
            "date",
            "duration",
            "datetime",
            "date-time",
            "k8s-short-name",
            "k8s-long-name",
            "bson-objectid",
            "-ipv4-",
        ];
        for f in expected {
            assert!(is_validated(f), "{f}");
            let parsed = Format::parse(f).unwrap();
            assert_eq!(Format::parse(parsed.normalized_name()), Some(parsed));
        }
        for f in [
            "",
            "-",
            "IPv4",
            "Email",
            "int32",
            "int64",
            "float",
            "double",
            "time",
            "uri-reference",
            "quantity",
            "k8s-ip-sloppy",
            "k8s-dns1123label",
            "string",
            "binary",
            "no-such-format",
        ] {
            assert!(!is_validated(f), "{f}");
            assert!(is_valid(f, "anything at all"), "{f}");
        }
    }

    #[test]
    fn warnings() {
        // synthetic-crd-value-oddities and synthetic-val-formats
        assert_eq!(
            format_warning("string", "no-such-format").as_deref(),
            Some(r#"unrecognized format "no-such-format""#)
        );
        assert_eq!(
            format_warning("string", "int32").as_deref(),
            Some(r#"unrecognized format "int32""#)
        );
        assert_eq!(
            format_warning("integer", "date-time").as_deref(),
            Some(r#"unrecognized format "date-time""#)
        );
        assert_eq!(
            format_warning("integer", "uint8").as_deref(),
            Some(r#"unrecognized format "uint8""#)
        );
        assert_eq!(
            format_warning("string", "IPv4").as_deref(),
            Some(r#"unrecognized format "IPv4""#)
        );
        assert_eq!(format_warning("number", "float"), None);
        assert_eq!(format_warning("number", "double"), None);
        assert_eq!(format_warning("integer", "int32"), None);
        assert_eq!(format_warning("integer", "int64"), None);
        assert_eq!(format_warning("string", "date-time"), None);
        assert_eq!(format_warning("string", "k8s-short-name"), None);
        assert_eq!(format_warning("", "ipv4"), None); // int-or-string
        assert!(format_warning("", "int32").is_some());
        assert_eq!(format_warning("string", ""), None);
        assert_eq!(format_warning("array", ""), None);
        assert!(format_warning("array", "cidr").is_some());
        assert!(format_warning("object", "int32").is_some());
        assert!(format_warning("boolean", "byte").is_some());
        assert!(format_warning("number", "int32").is_some());
        assert_eq!(
            format_warning("string", "a\"b").as_deref(),
            Some(r#"unrecognized format "a\"b""#)
        );
        assert!(is_recognized("date-time") && is_recognized("") && !is_recognized("IPv4"));
        assert!(retains_format("integer", "int32") && !retains_format("integer", "ipv4"));
    }
}
