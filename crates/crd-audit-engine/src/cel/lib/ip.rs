//! The Kubernetes IP library (`ip`, `isIP`, `ip.isCanonical`, the IP predicates) over Go's
//! `net/netip` parsing: leading zeros and IPv4-mapped IPv6 addresses are rejected, zones are
//! rejected by the library.

use super::go::{go_quote, go_quote_bytes, lossy};
use super::{ext, fail, lib_ext, text};
use crate::cel::eval::{EvalResult, owned};
use crate::cel::value::{Ext, Val};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

// =============================================================================================
// net/netip parsing
// =============================================================================================

/// A `netip.Addr` as parsed (zone kept so callers can reject it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct GoAddr {
    pub(super) ip: IpAddr,
    pub(super) zone: String,
}

fn addr_err(input: &[u8], msg: &str, at: Option<&[u8]>) -> String {
    match at {
        Some(at) if !at.is_empty() => format!(
            "ParseAddr({}): {msg} (at {})",
            go_quote_bytes(input),
            go_quote_bytes(at)
        ),
        _ => format!("ParseAddr({}): {msg}", go_quote_bytes(input)),
    }
}

/// `netip.ParseAddr`; the error is the full Go error text.
pub(super) fn go_parse_addr(s: &[u8]) -> Result<GoAddr, String> {
    for &c in s {
        match c {
            b'.' => {
                let f = parse_ipv4_fields(s, 0, s.len())?;
                return Ok(GoAddr {
                    ip: IpAddr::V4(Ipv4Addr::from(f)),
                    zone: String::new(),
                });
            }
            b':' => return parse_ipv6(s),
            b'%' => return Err(addr_err(s, "missing IPv6 address", None)),
            _ => {}
        }
    }
    Err(addr_err(s, "unable to parse IP", None))
}

/// `parseIPv4Fields(in, off, end)`.
fn parse_ipv4_fields(input: &[u8], off: usize, end: usize) -> Result<[u8; 4], String> {
    let s = &input[off..end];
    let mut fields = [0u8; 4];
    let (mut val, mut pos, mut dig_len) = (0u32, 0usize, 0);
    for i in 0..s.len() {
        let c = s[i];
        if c.is_ascii_digit() {
            if dig_len == 1 && val == 0 {
                return Err(addr_err(
                    input,
                    "IPv4 field has octet with leading zero",
                    None,
                ));
            }
            val = val * 10 + u32::from(c - b'0');
            dig_len += 1;
            if val > 255 {
                return Err(addr_err(input, "IPv4 field has value >255", None));
            }
        } else if c == b'.' {
            if i == 0 || i == s.len() - 1 || s[i - 1] == b'.' {
                return Err(addr_err(
                    input,
                    "IPv4 field must have at least one digit",
                    Some(&s[i..]),
                ));
            }
            if pos == 3 {
                return Err(addr_err(input, "IPv4 address too long", None));
            }
            fields[pos] = val as u8;
            pos += 1;
            val = 0;
            dig_len = 0;
        } else {
            return Err(addr_err(input, "unexpected character", Some(&s[i..])));
        }
    }
    if pos < 3 {
        return Err(addr_err(input, "IPv4 address too short", None));
    }
    fields[3] = val as u8;
    Ok(fields)
}

fn parse_ipv6(input: &[u8]) -> Result<GoAddr, String> {
    let mut s = input;
    let mut zone: &[u8] = b"";
    if let Some(i) = s.iter().position(|&c| c == b'%') {
        zone = &s[i + 1..];
        s = &s[..i];
        if zone.is_empty() {
            return Err(addr_err(input, "zone must be a non-empty string", None));
        }
    }
    let done = |ip: [u8; 16], zone: &[u8]| GoAddr {
        ip: IpAddr::V6(Ipv6Addr::from(ip)),
        zone: lossy(zone),
    };
    let mut ip = [0u8; 16];
    let mut ellipsis: i32 = -1;
    if s.len() >= 2 && s[0] == b':' && s[1] == b':' {
        ellipsis = 0;
        s = &s[2..];
        if s.is_empty() {
            return Ok(done(ip, zone));
        }
    }
    let mut i = 0usize;
    while i < 16 {
        let mut off = 0;
        let mut acc: u32 = 0;
        while off < s.len() {
            let c = s[off];
            let d = match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'f' => c - b'a' + 10,
                b'A'..=b'F' => c - b'A' + 10,
                _ => break,
            };
            acc = (acc << 4) + u32::from(d);
            if off > 3 {
                return Err(addr_err(
                    input,
                    "each group must have 4 or less digits",
                    Some(s),
                ));
            }
            if acc > 0xFFFF {
                return Err(addr_err(input, "IPv6 field has value >=2^16", Some(s)));
            }
            off += 1;
        }
        if off == 0 {
            return Err(addr_err(
                input,
                "each colon-separated field must have at least one digit",
                Some(s),
            ));
        }
        if off < s.len() && s[off] == b'.' {
            if ellipsis < 0 && i != 12 {
                return Err(addr_err(
                    input,
                    "embedded IPv4 address must replace the final 2 fields of the address",
                    Some(s),
                ));
            }
            if i + 4 > 16 {
                return Err(addr_err(
                    input,
                    "too many hex fields to fit an embedded IPv4 at the end of the address",
                    Some(s),
                ));
            }
            let mut end = input.len();
            if !zone.is_empty() {
                end -= zone.len() + 1;
            }
            let f = parse_ipv4_fields(input, end - s.len(), end)?;
            ip[i..i + 4].copy_from_slice(&f);
            s = b"";
            i += 4;
            break;
        }
        ip[i] = (acc >> 8) as u8;
        ip[i + 1] = acc as u8;
        i += 2;
        s = &s[off..];
        if s.is_empty() {
            break;
        }
        if s[0] != b':' {
            return Err(addr_err(input, "unexpected character, want colon", Some(s)));
        } else if s.len() == 1 {
            return Err(addr_err(
                input,
                "colon must be followed by more characters",
                Some(s),
            ));
        }
        s = &s[1..];
        if s[0] == b':' {
            if ellipsis >= 0 {
                return Err(addr_err(input, "multiple :: in address", Some(s)));
            }
            ellipsis = i as i32;
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return Err(addr_err(input, "trailing garbage after address", Some(s)));
    }
    if i < 16 {
        if ellipsis < 0 {
            return Err(addr_err(input, "address string too short", None));
        }
        let e = ellipsis as usize;
        let n = 16 - i;
        for j in (e..i).rev() {
            ip[j + n] = ip[j];
        }
        for b in &mut ip[e..e + n] {
            *b = 0;
        }
    } else if ellipsis >= 0 {
        return Err(addr_err(
            input,
            "the :: must expand to at least one field of zeros",
            None,
        ));
    }
    Ok(done(ip, zone))
}

pub(super) fn is_4in6(ip: &IpAddr) -> bool {
    matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some())
}

// =============================================================================================
// IP library (library/ip.go)
// =============================================================================================

/// `parseIPAddr` of the library: `netip.ParseAddr`, then no zones and no IPv4-mapped IPv6.
pub(super) fn lib_parse_ip(raw: &str) -> Result<IpAddr, String> {
    let a = go_parse_addr(raw.as_bytes()).map_err(|e| {
        format!(
            "IP Address {} parse error during conversion from string: {e}",
            go_quote(raw)
        )
    })?;
    if !a.zone.is_empty() {
        return Err(format!(
            "IP address {} with zone value is not allowed",
            go_quote(raw)
        ));
    }
    if is_4in6(&a.ip) {
        return Err(format!(
            "IPv4-mapped IPv6 address {} is not allowed",
            go_quote(raw)
        ));
    }
    Ok(a.ip)
}

/// `ip(<string>)`; the error is the text the evaluation reports.
pub fn parse_ip(s: &str) -> Result<IpAddr, String> {
    lib_parse_ip(s)
}

/// `isIP(<string>)`.
pub fn is_ip(s: &str) -> bool {
    lib_parse_ip(s).is_ok()
}

/// `ip.isCanonical(<string>)`: errors like `ip()`.
pub fn ip_is_canonical(s: &str) -> Result<bool, String> {
    Ok(ip_to_string(&lib_parse_ip(s)?) == s)
}

/// `<IP>.family()`: 4 or 6.
pub fn family(ip: &IpAddr) -> i64 {
    match ip {
        IpAddr::V4(_) => 4,
        IpAddr::V6(_) => 6,
    }
}

/// Unmaps IPv4-mapped IPv6 addresses, as the netip predicates do.
fn unmap(ip: &IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(*ip, IpAddr::V4),
        v4 => *v4,
    }
}

/// `<IP>.isUnspecified()`.
pub fn is_unspecified(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.octets() == [0; 4],
        IpAddr::V6(v6) => v6.octets() == [0; 16],
    }
}

/// `<IP>.isLoopback()`.
pub fn is_loopback(ip: &IpAddr) -> bool {
    match unmap(ip) {
        IpAddr::V4(v4) => v4.octets()[0] == 127,
        IpAddr::V6(v6) => u128::from(v6) == 1,
    }
}

fn is_multicast(ip: &IpAddr) -> bool {
    match unmap(ip) {
        IpAddr::V4(v4) => v4.octets()[0] & 0xf0 == 0xe0,
        IpAddr::V6(v6) => v6.octets()[0] == 0xff,
    }
}

/// `<IP>.isLinkLocalMulticast()`.
pub fn is_link_local_multicast(ip: &IpAddr) -> bool {
    match unmap(ip) {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            o[0] == 224 && o[1] == 0 && o[2] == 0
        }
        IpAddr::V6(v6) => v6.segments()[0] & 0xff0f == 0xff02,
    }
}

/// `<IP>.isLinkLocalUnicast()`.
pub fn is_link_local_unicast(ip: &IpAddr) -> bool {
    match unmap(ip) {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            o[0] == 169 && o[1] == 254
        }
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}

/// `<IP>.isGlobalUnicast()` (Go semantics: private ranges count as global unicast).
pub fn is_global_unicast(ip: &IpAddr) -> bool {
    let u = unmap(ip);
    if let IpAddr::V4(v4) = u
        && (v4.octets() == [0; 4] || v4.octets() == [255; 4])
    {
        return false;
    }
    if let IpAddr::V6(v6) = u
        && v6.octets() == [0; 16]
    {
        return false;
    }
    !is_loopback(&u) && !is_multicast(&u) && !is_link_local_unicast(&u)
}

/// `string(<IP>)` (`netip.Addr.String`).
pub fn ip_to_string(ip: &IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return format!("::ffff:{v4}");
            }
            let seg = v6.segments();
            // Longest run (>= 2) of zero groups, first one on ties.
            let (mut zs, mut ze) = (255usize, 255usize);
            for i in 0..8 {
                let mut j = i;
                while j < 8 && seg[j] == 0 {
                    j += 1;
                }
                let l = j - i;
                if l >= 2 && (zs == 255 || l > ze - zs) {
                    zs = i;
                    ze = j;
                }
            }
            let mut out = String::new();
            let mut i = 0;
            while i < 8 {
                if i == zs {
                    out.push_str("::");
                    i = ze;
                    if i >= 8 {
                        break;
                    }
                } else if i > 0 {
                    out.push(':');
                }
                out.push_str(&format!("{:x}", seg[i]));
                i += 1;
            }
            out
        }
    }
}

/// The IP overload `id` applied to `a` (a receiver first).
pub fn call<'a>(id: &str, a: &[Val<'a>]) -> Option<EvalResult<'a>> {
    let ip0 = match lib_ext(a, 0) {
        Some(Ext::Ip(ip)) => Some(ip),
        _ => None,
    };
    Some(match id {
        "string_to_ip" => parse_ip(text(a, 0)?).map(|i| ext(Ext::Ip(i))).or_else(fail),
        "is_ip" => Ok(Val::Bool(is_ip(text(a, 0)?))),
        "ip_is_canonical" => ip_is_canonical(text(a, 0)?).map(Val::Bool).or_else(fail),
        "ip_family" => Ok(Val::Int(family(ip0?))),
        "ip_is_unspecified" => Ok(Val::Bool(is_unspecified(ip0?))),
        "ip_is_loopback" => Ok(Val::Bool(is_loopback(ip0?))),
        "ip_is_link_local_multicast" => Ok(Val::Bool(is_link_local_multicast(ip0?))),
        "ip_is_link_local_unicast" => Ok(Val::Bool(is_link_local_unicast(ip0?))),
        "ip_is_global_unicast" => Ok(Val::Bool(is_global_unicast(ip0?))),
        "ip_to_string" => Ok(owned(ip_to_string(ip0?))),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_library() {
        let ip = |s: &str| parse_ip(s).unwrap();
        assert_eq!(family(&ip("192.168.0.1")), 4);
        assert_eq!(family(&ip("2001:db8::68")), 6);
        assert_eq!(
            parse_ip("192.168.0.1.0").unwrap_err(),
            r#"IP Address "192.168.0.1.0" parse error during conversion from string: ParseAddr("192.168.0.1.0"): IPv4 address too long"#
        );
        assert_eq!(
            parse_ip("127.0.0.01").unwrap_err(),
            r#"IP Address "127.0.0.01" parse error during conversion from string: ParseAddr("127.0.0.01"): IPv4 field has octet with leading zero"#
        );
        assert_eq!(
            parse_ip("fe80::1%eth0").unwrap_err(),
            r#"IP address "fe80::1%eth0" with zone value is not allowed"#
        );
        assert_eq!(
            parse_ip("::ffff:192.168.0.1").unwrap_err(),
            r#"IPv4-mapped IPv6 address "::ffff:192.168.0.1" is not allowed"#
        );
        assert_eq!(
            parse_ip("1.2.3.x").unwrap_err(),
            r#"IP Address "1.2.3.x" parse error during conversion from string: ParseAddr("1.2.3.x"): unexpected character (at "x")"#
        );
        assert_eq!(
            parse_ip("foo").unwrap_err(),
            r#"IP Address "foo" parse error during conversion from string: ParseAddr("foo"): unable to parse IP"#
        );
        assert!(!is_ip("1:2:3:4:5:6:7:8:9") && !is_ip("00001::"));
        assert!(is_unspecified(&ip("0.0.0.0")) && is_unspecified(&ip("::")));
        assert!(is_loopback(&ip("127.0.0.1")) && is_loopback(&ip("::1")));
        assert!(
            is_link_local_multicast(&ip("224.0.0.1")) && is_link_local_multicast(&ip("ff02::1"))
        );
        assert!(!is_link_local_multicast(&ip("224.0.1.1")));
        assert!(
            is_link_local_unicast(&ip("169.254.169.254")) && is_link_local_unicast(&ip("fe80::1"))
        );
        assert!(is_global_unicast(&ip("192.168.0.1")) && is_global_unicast(&ip("2001:db8::1")));
        assert!(!is_global_unicast(&ip("255.255.255.255")) && !is_global_unicast(&ip("ff00::1")));
        assert_eq!(ip_to_string(&ip("2001:db8:0:0:0:0:2:1")), "2001:db8::2:1");
        assert_eq!(
            ip_to_string(&ip("2001:0db8:0:0:1:0:0:1")),
            "2001:db8::1:0:0:1"
        );
        assert_eq!(ip_to_string(&ip("::1.2.3.4")), "::102:304");
        assert_eq!(ip_is_canonical("2001:db8::68"), Ok(true));
        assert_eq!(ip_is_canonical("2001:DB8::68"), Ok(false));
    }
}
