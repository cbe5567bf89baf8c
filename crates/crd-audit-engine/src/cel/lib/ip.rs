//! The Kubernetes IP library (`ip`, `isIP`, `ip.isCanonical`, the IP predicates) over Go's
//! `net/netip` parsing: leading zeros and IPv4-mapped IPv6 addresses are rejected, zones are
//! rejected by the library.

use super::{ext, fail, lib_ext, text};
use crate::cel::eval::{EvalResult, owned};
use crate::cel::value::{Ext, Val};
use crate::go::net::{
    addr_string, is_4in6, is_global_unicast, is_link_local_multicast, is_link_local_unicast,
    is_loopback, is_unspecified, parse_addr,
};
use crate::go::strconv::quote;
use std::net::IpAddr;

/// `parseIPAddr` of the library: `netip.ParseAddr`, then no zones and no IPv4-mapped IPv6.
pub(super) fn lib_parse_ip(raw: &str) -> Result<IpAddr, String> {
    let a = parse_addr(raw.as_bytes()).map_err(|e| {
        format!(
            "IP Address {} parse error during conversion from string: {e}",
            quote(raw)
        )
    })?;
    if !a.zone.is_empty() {
        return Err(format!(
            "IP address {} with zone value is not allowed",
            quote(raw)
        ));
    }
    if is_4in6(&a.ip) {
        return Err(format!(
            "IPv4-mapped IPv6 address {} is not allowed",
            quote(raw)
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
    Ok(addr_string(&lib_parse_ip(s)?) == s)
}

/// `<IP>.family()`: 4 or 6.
pub fn family(ip: &IpAddr) -> i64 {
    match ip {
        IpAddr::V4(_) => 4,
        IpAddr::V6(_) => 6,
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
        "ip_to_string" => Ok(owned(addr_string(ip0?))),
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
        assert_eq!(addr_string(&ip("2001:db8:0:0:0:0:2:1")), "2001:db8::2:1");
        assert_eq!(
            addr_string(&ip("2001:0db8:0:0:1:0:0:1")),
            "2001:db8::1:0:0:1"
        );
        assert_eq!(addr_string(&ip("::1.2.3.4")), "::102:304");
        assert_eq!(ip_is_canonical("2001:db8::68"), Ok(true));
        assert_eq!(ip_is_canonical("2001:DB8::68"), Ok(false));
    }
}
