//! The Kubernetes CIDR library (`cidr`, `isCIDR`, `containsIP`, `containsCIDR`, `ip`,
//! `masked`, `prefixLength`) over Go's `net/netip` prefixes.

use super::ip::lib_parse_ip;
use super::{ext, fail, lib_ext, text};
use crate::cel::eval::{EvalResult, owned};
use crate::cel::value::{Ext, Val};
use crate::go::net::{Prefix, addr_string, is_4in6, parse_prefix};
use crate::go::strconv::quote;
use std::fmt;
use std::net::IpAddr;

// =============================================================================================
// CIDR library (library/cidr.go)
// =============================================================================================

/// A `netip.Prefix` as the CIDR library holds it (address not masked).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr(Prefix);

const CIDR_ERR_PREFIX: &str = "network address parse error during conversion from string: ";

/// `cidr(<string>)`; the error is the text the evaluation reports (the prefix appears twice,
/// as in the library).
pub fn parse_cidr(s: &str) -> Result<Cidr, String> {
    let p = parse_prefix(s).map_err(|e| format!("{CIDR_ERR_PREFIX}{CIDR_ERR_PREFIX}{e}"))?;
    if is_4in6(&p.addr) {
        return Err(format!(
            "{CIDR_ERR_PREFIX}IPv4-mapped IPv6 address {} is not allowed",
            quote(s)
        ));
    }
    Ok(Cidr(p))
}

/// `isCIDR(<string>)`.
pub fn is_cidr(s: &str) -> bool {
    parse_cidr(s).is_ok()
}

impl Cidr {
    /// `<CIDR>.prefixLength()`.
    pub fn prefix_length(&self) -> i64 {
        i64::from(self.0.bits)
    }

    /// `<CIDR>.ip()`: the address as written (not masked).
    pub fn ip(&self) -> IpAddr {
        self.0.addr
    }

    /// `<CIDR>.masked()`.
    pub fn masked(&self) -> Cidr {
        Cidr(self.0.masked())
    }

    /// `<CIDR>.containsIP(<IP>)`.
    pub fn contains_ip(&self, ip: &IpAddr) -> bool {
        self.0.contains(ip)
    }

    /// `<CIDR>.containsIP(<string>)`: an unparsable IP yields `no such overload` (the library
    /// hands the parse error to a binding that only reports the overload mismatch).
    pub fn contains_ip_str(&self, ip: &str) -> Result<bool, String> {
        match lib_parse_ip(ip) {
            Ok(ip) => Ok(self.contains_ip(&ip)),
            Err(_) => Err("no such overload".to_string()),
        }
    }

    /// `<CIDR>.containsCIDR(<CIDR>)`: the library's `Overlaps` of the two prefixes masked to
    /// the shorter one, and `other` no shorter than this one.
    pub fn contains_cidr(&self, other: &Cidr) -> bool {
        self.0.overlaps(&other.0) && self.0.bits <= other.0.bits
    }

    /// `<CIDR>.containsCIDR(<string>)`: the parse error of the string propagates.
    pub fn contains_cidr_str(&self, other: &str) -> Result<bool, String> {
        Ok(self.contains_cidr(&parse_cidr(other)?))
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", addr_string(&self.0.addr), self.0.bits)
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
