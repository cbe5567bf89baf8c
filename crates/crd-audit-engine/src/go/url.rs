//! Go's `net/url` package (`src/net/url/url.go`): `Parse`, `ParseRequestURI` (Go 1.25+ host
//! rules: bracketed hosts must be IPv6 literals), escaping and the accessors of a `URL`
//! (`Hostname`, `Port`, `EscapedPath`, `Query` with the default limit of 10000 parameters).

use super::lossy;
use super::net::parse_addr;
use super::strconv::{quote, quote_bytes};
use std::collections::BTreeMap;
use std::net::IpAddr;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Enc {
    Path,
    Host,
    Zone,
    UserPassword,
    QueryComponent,
    Fragment,
}

fn should_escape(c: u8, mode: Enc) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if (mode == Enc::Host || mode == Enc::Zone)
        && matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'['
                | b']'
                | b'<'
                | b'>'
                | b'"'
        )
    {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => return false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Enc::Path => return c == b'?',
            Enc::UserPassword => return matches!(c, b'@' | b'/' | b'?' | b':'),
            Enc::QueryComponent => return true,
            Enc::Fragment => return false,
            _ => {}
        },
        _ => {}
    }
    if mode == Enc::Fragment && matches!(c, b'!' | b'(' | b')' | b'*') {
        return false;
    }
    true
}

fn unhex(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

/// Go's `unescape`.
fn unescape(s: &[u8], mode: Enc) -> Result<Vec<u8>, String> {
    let escape_err = |e: &[u8]| format!("invalid URL escape {}", quote_bytes(e));
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'%' => {
                if i + 2 >= s.len()
                    || !s[i + 1].is_ascii_hexdigit()
                    || !s[i + 2].is_ascii_hexdigit()
                {
                    let rest = &s[i..];
                    return Err(escape_err(&rest[..rest.len().min(3)]));
                }
                if mode == Enc::Host && unhex(s[i + 1]) < 8 && &s[i..i + 3] != b"%25" {
                    return Err(escape_err(&s[i..i + 3]));
                }
                if mode == Enc::Zone {
                    let v = (unhex(s[i + 1]) << 4) | unhex(s[i + 2]);
                    if &s[i..i + 3] != b"%25" && v != b' ' && should_escape(v, Enc::Host) {
                        return Err(escape_err(&s[i..i + 3]));
                    }
                }
                i += 3;
            }
            c => {
                if (mode == Enc::Host || mode == Enc::Zone)
                    && c < 0x80
                    && c != b'+'
                    && should_escape(c, mode)
                {
                    return Err(format!(
                        "invalid character {} in host name",
                        quote_bytes(&s[i..i + 1])
                    ));
                }
                i += 1;
            }
        }
    }
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'%' => {
                out.push((unhex(s[i + 1]) << 4) | unhex(s[i + 2]));
                i += 3;
            }
            b'+' if mode == Enc::QueryComponent => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// Go's `escape`.
fn escape(s: &[u8], mode: Enc) -> Vec<u8> {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = Vec::with_capacity(s.len());
    for &c in s {
        if c == b' ' && mode == Enc::QueryComponent {
            out.push(b'+');
        } else if should_escape(c, mode) {
            out.extend_from_slice(&[b'%', HEX[usize::from(c >> 4)], HEX[usize::from(c & 15)]]);
        } else {
            out.push(c);
        }
    }
    out
}

fn valid_encoded(s: &[u8], mode: Enc) -> bool {
    s.iter().all(|&c| {
        matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'@'
                | b'['
                | b']'
                | b'%'
        ) || !should_escape(c, mode)
    })
}

fn valid_optional_port(p: &[u8]) -> bool {
    match p.split_first() {
        None => true,
        Some((&b':', digits)) => digits.iter().all(u8::is_ascii_digit),
        Some(_) => false,
    }
}

fn valid_userinfo(s: &[u8]) -> bool {
    // Go ranges over runes: any non-ASCII rune is invalid, like any other byte outside the set.
    s.iter().all(|&c| {
        c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'-' | b'.'
                    | b'_'
                    | b':'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b'%'
                    | b'@'
            )
    })
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w == n)
}

/// Go's `parseHost` (Go 1.25.2+: bracketed hosts must be IPv6 literals).
fn parse_host(host: &[u8]) -> Result<Vec<u8>, String> {
    let invalid_port = |p: &[u8]| format!("invalid port {} after host", quote_bytes(p));
    match host.iter().rposition(|&c| c == b'[') {
        Some(i) if i > 0 => return Err("invalid IP-literal".to_string()),
        Some(_) => {
            let Some(close) = host.iter().rposition(|&c| c == b']') else {
                return Err("missing ']' in host".to_string());
            };
            let colon_port = &host[close + 1..];
            if !valid_optional_port(colon_port) {
                return Err(invalid_port(colon_port));
            }
            let colon_port = unescape(colon_port, Enc::Host)?;
            let hostname = &host[1..close];
            let unescaped = match find(hostname, b"%25") {
                Some(z) => {
                    let mut h = unescape(&hostname[..z], Enc::Host)?;
                    h.extend(unescape(&hostname[z..], Enc::Zone)?);
                    h
                }
                None => unescape(hostname, Enc::Host)?,
            };
            let addr = parse_addr(&unescaped).map_err(|e| format!("invalid host: {e}"))?;
            if matches!(addr.ip, IpAddr::V4(_)) {
                return Err("invalid IP-literal".to_string());
            }
            let mut out = b"[".to_vec();
            out.extend(unescaped);
            out.push(b']');
            out.extend(colon_port);
            return Ok(out);
        }
        None => {
            if let Some(i) = host.iter().rposition(|&c| c == b':')
                && !valid_optional_port(&host[i..])
            {
                return Err(invalid_port(&host[i..]));
            }
        }
    }
    unescape(host, Enc::Host)
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Url {
    scheme: String,
    opaque: Vec<u8>,
    host: Vec<u8>,
    path: Vec<u8>,
    raw_path: Vec<u8>,
    raw_query: Vec<u8>,
    fragment: Vec<u8>,
}

/// Go's unexported `parse(rawURL, viaRequest)`; the error is the inner error text.
fn parse_inner(raw: &[u8], via_request: bool) -> Result<Url, String> {
    if raw.iter().any(|&c| c < 0x20 || c == 0x7f) {
        return Err("net/url: invalid control character in URL".to_string());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".to_string());
    }
    let mut u = Url::default();
    if raw == b"*" {
        u.path = b"*".to_vec();
        return Ok(u);
    }
    // Scheme.
    let mut rest: &[u8] = raw;
    for (i, &c) in raw.iter().enumerate() {
        if c.is_ascii_alphabetic() {
            continue;
        }
        if c.is_ascii_digit() || c == b'+' || c == b'-' || c == b'.' {
            if i == 0 {
                break;
            }
            continue;
        }
        if c == b':' {
            if i == 0 {
                return Err("missing protocol scheme".to_string());
            }
            u.scheme = lossy(&raw[..i]).to_ascii_lowercase();
            rest = &raw[i + 1..];
        }
        break;
    }
    let qcount = rest.iter().filter(|&&c| c == b'?').count();
    if rest.last() == Some(&b'?') && qcount == 1 {
        rest = &rest[..rest.len() - 1];
    } else if let Some(q) = rest.iter().position(|&c| c == b'?') {
        u.raw_query = rest[q + 1..].to_vec();
        rest = &rest[..q];
    }
    if !rest.starts_with(b"/") {
        if !u.scheme.is_empty() {
            u.opaque = rest.to_vec();
            return Ok(u);
        }
        if via_request {
            return Err("invalid URI for request".to_string());
        }
        let seg_end = rest.iter().position(|&c| c == b'/').unwrap_or(rest.len());
        if rest[..seg_end].contains(&b':') {
            return Err("first path segment in URL cannot contain colon".to_string());
        }
    }
    if (!u.scheme.is_empty() || !via_request && !rest.starts_with(b"///"))
        && rest.starts_with(b"//")
    {
        let mut authority = &rest[2..];
        rest = b"";
        if let Some(i) = authority.iter().position(|&c| c == b'/') {
            rest = &authority[i..];
            authority = &authority[..i];
        }
        let at = authority.iter().rposition(|&c| c == b'@');
        u.host = parse_host(match at {
            Some(i) => &authority[i + 1..],
            None => authority,
        })?;
        if let Some(i) = at {
            let userinfo = &authority[..i];
            if !valid_userinfo(userinfo) {
                return Err("net/url: invalid userinfo".to_string());
            }
            match userinfo.iter().position(|&c| c == b':') {
                None => {
                    unescape(userinfo, Enc::UserPassword)?;
                }
                Some(c) => {
                    unescape(&userinfo[..c], Enc::UserPassword)?;
                    unescape(&userinfo[c + 1..], Enc::UserPassword)?;
                }
            }
        }
    }
    u.path = unescape(rest, Enc::Path)?;
    if escape(&u.path, Enc::Path) != rest {
        u.raw_path = rest.to_vec();
    }
    Ok(u)
}

/// Whether Go's `url.ParseRequestURI` accepts the string (govalidator's `IsRequestURI`, the
/// `uri` format).
pub fn is_request_uri(s: &str) -> bool {
    parse_inner(s.as_bytes(), true).is_ok()
}

/// `url.ParseRequestURI`, with Go's `*url.Error` text on failure.
pub fn parse_request_uri(s: &str) -> Result<Url, String> {
    parse_inner(s.as_bytes(), true).map_err(|e| format!("parse {}: {e}", quote(s)))
}

/// `url.Parse`, with Go's `*url.Error` text on failure.
pub fn parse(s: &str) -> Result<Url, String> {
    let b = s.as_bytes();
    let (head, frag) = match b.iter().position(|&c| c == b'#') {
        Some(i) => (&b[..i], Some(&b[i + 1..])),
        None => (b, None),
    };
    let mut u =
        parse_inner(head, false).map_err(|e| format!("parse {}: {e}", quote_bytes(head)))?;
    if let Some(f) = frag.filter(|f| !f.is_empty()) {
        u.fragment = unescape(f, Enc::Fragment).map_err(|e| format!("parse {}: {e}", quote(s)))?;
    }
    Ok(u)
}

/// Default of Go's `urlmaxqueryparams`.
const MAX_QUERY_PARAMS: usize = 10000;

impl Url {
    fn split_host_port(&self) -> (&[u8], &[u8]) {
        let h = self.host.as_slice();
        let (mut host, mut port): (&[u8], &[u8]) = (h, b"");
        if let Some(c) = h.iter().rposition(|&c| c == b':')
            && valid_optional_port(&h[c..])
        {
            host = &h[..c];
            port = &h[c + 1..];
        }
        if host.len() >= 2 && host.starts_with(b"[") && host.ends_with(b"]") {
            host = &host[1..host.len() - 1];
        }
        (host, port)
    }

    /// The scheme (`URL.Scheme`).
    pub fn scheme(&self) -> String {
        self.scheme.clone()
    }

    /// `URL.Host` (IPv6 with brackets, port included).
    pub fn host(&self) -> String {
        lossy(&self.host)
    }

    /// `URL.Hostname()`.
    pub fn hostname(&self) -> String {
        lossy(self.split_host_port().0)
    }

    /// `URL.Port()`.
    pub fn port(&self) -> String {
        lossy(self.split_host_port().1)
    }

    /// `URL.EscapedPath()`.
    pub fn escaped_path(&self) -> String {
        let u = self;
        if !u.raw_path.is_empty()
            && valid_encoded(&u.raw_path, Enc::Path)
            && unescape(&u.raw_path, Enc::Path).is_ok_and(|p| p == u.path)
        {
            return lossy(&u.raw_path);
        }
        if u.path == b"*" {
            return "*".to_string();
        }
        lossy(&escape(&u.path, Enc::Path))
    }

    /// `URL.Query()` (`ParseQuery`): unescaped keys to all their values, in order; malformed pairs dropped.
    pub fn query(&self) -> BTreeMap<String, Vec<String>> {
        let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let q = self.raw_query.as_slice();
        if q.iter().filter(|&&c| c == b'&').count() >= MAX_QUERY_PARAMS {
            return m;
        }
        for pair in q.split(|&c| c == b'&') {
            if pair.is_empty() || pair.contains(&b';') {
                continue;
            }
            let (k, v) = match pair.iter().position(|&c| c == b'=') {
                Some(i) => (&pair[..i], &pair[i + 1..]),
                None => (pair, &b""[..]),
            };
            let (Ok(k), Ok(v)) = (
                unescape(k, Enc::QueryComponent),
                unescape(v, Enc::QueryComponent),
            ) else {
                continue;
            };
            m.entry(lossy(&k)).or_default().push(lossy(&v));
        }
        m
    }
}
