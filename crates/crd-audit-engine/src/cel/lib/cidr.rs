//! The Kubernetes CIDR library (`cidr`, `isCIDR`, `containsIP`, `containsCIDR`, `ip`,
//! `masked`, `prefixLength`) over Go's `net/netip` prefixes.

use super::ip::lib_parse_ip;
use super::{ext, fail, lib_ext, text};
use crate::cel::eval::{EvalResult, owned};
use crate::cel::value::{Ext, Val};
use crate::go::net::{addr_string, is_4in6, parse_addr};
use crate::go::strconv::parse_int64;
use crate::go::strconv::quote;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

// =============================================================================================
// CIDR library (library/cidr.go)
// =============================================================================================

/// A `netip.Prefix` as the CIDR library holds it (address not masked).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    bits: u8,
}

const CIDR_ERR_PREFIX: &str = "network address parse error during conversion from string: ";

fn go_parse_prefix(s: &str) -> Result<Cidr, String> {
    let err = |msg: &str| format!("netip.ParsePrefix({}): {msg}", quote(s));
    let Some(i) = s.rfind('/') else {
        return Err(err("no '/'"));
    };
    let a = parse_addr(&s.as_bytes()[..i]).map_err(|e| err(&e))?;
    if matches!(a.ip, IpAddr::V6(_)) && !a.zone.is_empty() {
        return Err(err("IPv6 zones cannot be present in a prefix"));
    }
    let bits_str = &s[i + 1..];
    let bad = || err(&format!("bad bits after slash: {}", quote(bits_str)));
    let first = bits_str.as_bytes().first().copied().unwrap_or(0);
    if bits_str.len() > 1 && !(b'1'..=b'9').contains(&first) {
        return Err(bad());
    }
    let bits = parse_int64(bits_str).ok_or_else(bad)?;
    let max = if matches!(a.ip, IpAddr::V4(_)) {
        32
    } else {
        128
    };
    if !(0..=max).contains(&bits) {
        return Err(err("prefix length out of range"));
    }
    Ok(Cidr {
        addr: a.ip,
        bits: bits as u8,
    })
}

/// `cidr(<string>)`; the error is the text the evaluation reports (the prefix appears twice,
/// as in the library).
pub fn parse_cidr(s: &str) -> Result<Cidr, String> {
    let p = go_parse_prefix(s).map_err(|e| format!("{CIDR_ERR_PREFIX}{CIDR_ERR_PREFIX}{e}"))?;
    if is_4in6(&p.addr) {
        return Err(format!(
            "{CIDR_ERR_PREFIX}IPv4-mapped IPv6 address {} is not allowed",
            quote(s)
        ));
    }
    Ok(p)
}

/// `isCIDR(<string>)`.
pub fn is_cidr(s: &str) -> bool {
    parse_cidr(s).is_ok()
}

fn mask_addr(ip: &IpAddr, bits: u8) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => {
            let m = if bits == 0 {
                0
            } else {
                u32::MAX << (32 - u32::from(bits))
            };
            IpAddr::V4(Ipv4Addr::from(u32::from(*v4) & m))
        }
        IpAddr::V6(v6) => {
            let m = if bits == 0 {
                0
            } else {
                u128::MAX << (128 - u32::from(bits))
            };
            IpAddr::V6(Ipv6Addr::from(u128::from(*v6) & m))
        }
    }
}

impl Cidr {
    /// `<CIDR>.prefixLength()`.
    pub fn prefix_length(&self) -> i64 {
        i64::from(self.bits)
    }

    /// `<CIDR>.ip()`: the address as written (not masked).
    pub fn ip(&self) -> IpAddr {
        self.addr
    }

    /// `<CIDR>.masked()`.
    pub fn masked(&self) -> Cidr {
        Cidr {
            addr: mask_addr(&self.addr, self.bits),
            bits: self.bits,
        }
    }

    /// `<CIDR>.containsIP(<IP>)`.
    pub fn contains_ip(&self, ip: &IpAddr) -> bool {
        match (self.addr, ip) {
            (IpAddr::V4(_), IpAddr::V4(_)) | (IpAddr::V6(_), IpAddr::V6(_)) => {
                mask_addr(ip, self.bits) == mask_addr(&self.addr, self.bits)
            }
            _ => false,
        }
    }

    /// `<CIDR>.containsIP(<string>)`: an unparsable IP yields `no such overload` (the library
    /// hands the parse error to a binding that only reports the overload mismatch).
    pub fn contains_ip_str(&self, ip: &str) -> Result<bool, String> {
        match lib_parse_ip(ip) {
            Ok(ip) => Ok(self.contains_ip(&ip)),
            Err(_) => Err("no such overload".to_string()),
        }
    }

    /// `<CIDR>.containsCIDR(<CIDR>)`.
    pub fn contains_cidr(&self, other: &Cidr) -> bool {
        let same_family = matches!(
            (self.addr, other.addr),
            (IpAddr::V4(_), IpAddr::V4(_)) | (IpAddr::V6(_), IpAddr::V6(_))
        );
        // netip's `Overlaps` (both masked to the shorter prefix) and a prefix no longer.
        same_family
            && self.bits <= other.bits
            && mask_addr(&other.addr, self.bits) == mask_addr(&self.addr, self.bits)
    }

    /// `<CIDR>.containsCIDR(<string>)`: the parse error of the string propagates.
    pub fn contains_cidr_str(&self, other: &str) -> Result<bool, String> {
        Ok(self.contains_cidr(&parse_cidr(other)?))
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", addr_string(&self.addr), self.bits)
    }
}

/// The CIDR overload `id` applied to `a` (a receiver first).
pub fn call<'a>(id: &str, a: &[Val<'a>]) -> Option<EvalResult<'a>> {
    let c0 = match lib_ext(a, 0) {
        Some(Ext::Cidr(c)) => Some(c),
        _ => None,
    };
    Some(match id {
        "string_to_cidr" => parse_cidr(text(a, 0)?)
            .map(|c| ext(Ext::Cidr(c)))
            .or_else(fail),
        "is_cidr" => Ok(Val::Bool(is_cidr(text(a, 0)?))),
        "cidr_to_string" => Ok(owned(c0?.to_string())),
        "cidr_ip" => Ok(ext(Ext::Ip(c0?.ip()))),
        "cidr_masked" => Ok(ext(Ext::Cidr(c0?.masked()))),
        "cidr_prefix_length" => Ok(Val::Int(c0?.prefix_length())),
        "cidr_contains_ip_string" => c0?
            .contains_ip_str(text(a, 1)?)
            .map(Val::Bool)
            .or_else(fail),
        "cidr_contains_ip_ip" => match lib_ext(a, 1) {
            Some(Ext::Ip(ip)) => Ok(Val::Bool(c0?.contains_ip(ip))),
            _ => return None,
        },
        "cidr_contains_cidr_string" => c0?
            .contains_cidr_str(text(a, 1)?)
            .map(Val::Bool)
            .or_else(fail),
        "cidr_contains_cidr" => match lib_ext(a, 1) {
            Some(Ext::Cidr(o)) => Ok(Val::Bool(c0?.contains_cidr(o))),
            _ => return None,
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::lib::ip::parse_ip;

    #[test]
    fn cidr_library() {
        let c = |s: &str| parse_cidr(s).unwrap();
        assert_eq!(
            parse_cidr("192.168.0.0/").unwrap_err(),
            "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"192.168.0.0/\"): bad bits after slash: \"\""
        );
        assert_eq!(
            parse_cidr("2001:db8::/").unwrap_err(),
            "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"2001:db8::/\"): bad bits after slash: \"\""
        );
        assert_eq!(
            parse_cidr("192.168.0.0/33").unwrap_err(),
            "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"192.168.0.0/33\"): prefix length out of range"
        );
        assert_eq!(
            parse_cidr("::ffff:1.2.3.4/120").unwrap_err(),
            "network address parse error during conversion from string: IPv4-mapped IPv6 address \"::ffff:1.2.3.4/120\" is not allowed"
        );
        assert!(!is_cidr("10.0.0.0/08") && is_cidr("10.0.0.0/8"));
        let v4 = c("192.168.0.0/24");
        assert!(v4.contains_ip(&parse_ip("192.168.0.1").unwrap()));
        assert!(!v4.contains_ip(&parse_ip("192.168.1.1").unwrap()));
        assert_eq!(v4.contains_ip_str("192.168.0.1"), Ok(true));
        assert!(v4.contains_cidr(&c("192.168.0.0/25")));
        assert!(!v4.contains_cidr(&c("192.168.0.0/23")));
        assert_eq!(v4.contains_cidr_str("192.168.0.0/25"), Ok(true));
        assert_eq!(addr_string(&v4.ip()), "192.168.0.0");
        assert_eq!(c("192.168.0.1/24").masked().to_string(), "192.168.0.0/24");
        assert_eq!(c("192.168.0.1/24").to_string(), "192.168.0.1/24");
        assert_eq!(v4.prefix_length(), 24);
        let v6 = c("2001:db8::/32");
        assert!(v6.contains_ip(&parse_ip("2001:db8::1").unwrap()));
        assert!(!v6.contains_ip(&parse_ip("2001:dc8::1").unwrap()));
        assert!(v6.contains_cidr(&c("2001:db8::/33")));
        assert!(!v6.contains_cidr(&c("2001:db8::/31")));
        assert_eq!(c("2001:db8:1::/32").masked().to_string(), "2001:db8::/32");
        assert_eq!(v6.prefix_length(), 32);
    }
}
