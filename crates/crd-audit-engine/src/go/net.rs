//! Go's `net` and `net/netip` address parsing (`src/net/netip/netip.go`): `netip.ParseAddr`,
//! `Addr.String`, `Addr.Is4In6`, `Addr.Unmap` and the `Addr` predicates, `netip.ParsePrefix`
//! and `Prefix`; `net.ParseIP` (`src/net/ip.go`, which since Go 1.17 parses with `netip` and
//! rejects zones), `net.ParseMAC` (`src/net/mac.go`), and the Go 1.16 `net.ParseIP` /
//! `net.ParseCIDR` that `k8s.io/utils/net` keeps as `ParseIPSloppy` / `ParseCIDRSloppy`
//! (`k8s.io/utils/internal/third_party/forked/golang/net/ip.go`): leading zeros allowed in
//! IPv4 fields.

use super::lossy;
use super::strconv::quote_bytes;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A `netip.Addr` as parsed (zone kept so callers can reject it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Addr {
    pub ip: IpAddr,
    pub zone: String,
}

fn addr_err(input: &[u8], msg: &str, at: Option<&[u8]>) -> String {
    match at {
        Some(at) if !at.is_empty() => format!(
            "ParseAddr({}): {msg} (at {})",
            quote_bytes(input),
            quote_bytes(at)
        ),
        _ => format!("ParseAddr({}): {msg}", quote_bytes(input)),
    }
}

/// `netip.ParseAddr`; the error is the full Go error text.
pub fn parse_addr(s: &[u8]) -> Result<Addr, String> {
    for &c in s {
        match c {
            b'.' => {
                let f = parse_ipv4_fields(s, 0, s.len())?;
                return Ok(Addr {
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

fn parse_ipv6(input: &[u8]) -> Result<Addr, String> {
    let mut s = input;
    let mut zone: &[u8] = b"";
    if let Some(i) = s.iter().position(|&c| c == b'%') {
        zone = &s[i + 1..];
        s = &s[..i];
        if zone.is_empty() {
            return Err(addr_err(input, "zone must be a non-empty string", None));
        }
    }
    let done = |ip: [u8; 16], zone: &[u8]| Addr {
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

/// A `netip.Prefix`: an address (not masked) and a prefix length that fits its family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefix {
    pub addr: IpAddr,
    pub bits: u8,
}

/// `netip.ParsePrefix`; the error is the full Go error text.
pub fn parse_prefix(s: &str) -> Result<Prefix, String> {
    let err = |msg: &str| format!("netip.ParsePrefix({}): {msg}", super::strconv::quote(s));
    let Some(i) = s.rfind('/') else {
        return Err(err("no '/'"));
    };
    let a = parse_addr(&s.as_bytes()[..i]).map_err(|e| err(&e))?;
    if matches!(a.ip, IpAddr::V6(_)) && !a.zone.is_empty() {
        return Err(err("IPv6 zones cannot be present in a prefix"));
    }
    let bits_str = &s[i + 1..];
    let bad = || {
        err(&format!(
            "bad bits after slash: {}",
            super::strconv::quote(bits_str)
        ))
    };
    let first = bits_str.as_bytes().first().copied().unwrap_or(0);
    if bits_str.len() > 1 && !(b'1'..=b'9').contains(&first) {
        return Err(bad());
    }
    let bits = super::strconv::parse_int64(bits_str).ok_or_else(bad)?;
    let max = if matches!(a.ip, IpAddr::V4(_)) {
        32
    } else {
        128
    };
    if !(0..=max).contains(&bits) {
        return Err(err("prefix length out of range"));
    }
    Ok(Prefix {
        addr: a.ip,
        bits: bits as u8,
    })
}

/// The first `bits` bits of `ip`, the rest zero.
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

fn same_family(a: &IpAddr, b: &IpAddr) -> bool {
    matches!(
        (a, b),
        (IpAddr::V4(_), IpAddr::V4(_)) | (IpAddr::V6(_), IpAddr::V6(_))
    )
}

impl Prefix {
    /// `Prefix.Masked`.
    pub fn masked(&self) -> Prefix {
        Prefix {
            addr: mask_addr(&self.addr, self.bits),
            bits: self.bits,
        }
    }

    /// `Prefix.Contains`: `ip` of the same family within the prefix.
    pub fn contains(&self, ip: &IpAddr) -> bool {
        same_family(&self.addr, ip) && mask_addr(ip, self.bits) == self.masked().addr
    }

    /// `Prefix.Overlaps`: both of one family and equal when masked to the shorter length.
    pub fn overlaps(&self, other: &Prefix) -> bool {
        let bits = self.bits.min(other.bits);
        same_family(&self.addr, &other.addr)
            && mask_addr(&self.addr, bits) == mask_addr(&other.addr, bits)
    }
}

/// `Addr.Unmap`: an IPv4-mapped IPv6 address as its IPv4 address.
pub fn unmap(ip: &IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(*ip, IpAddr::V4),
        v4 => *v4,
    }
}

/// `Addr.IsUnspecified`.
pub fn is_unspecified(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.octets() == [0; 4],
        IpAddr::V6(v6) => v6.octets() == [0; 16],
    }
}

/// `Addr.IsLoopback`.
pub fn is_loopback(ip: &IpAddr) -> bool {
    match unmap(ip) {
        IpAddr::V4(v4) => v4.octets()[0] == 127,
        IpAddr::V6(v6) => u128::from(v6) == 1,
    }
}

/// `Addr.IsMulticast`.
pub fn is_multicast(ip: &IpAddr) -> bool {
    match unmap(ip) {
        IpAddr::V4(v4) => v4.octets()[0] & 0xf0 == 0xe0,
        IpAddr::V6(v6) => v6.octets()[0] == 0xff,
    }
}

/// `Addr.IsLinkLocalMulticast`.
pub fn is_link_local_multicast(ip: &IpAddr) -> bool {
    match unmap(ip) {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            o[0] == 224 && o[1] == 0 && o[2] == 0
        }
        IpAddr::V6(v6) => v6.segments()[0] & 0xff0f == 0xff02,
    }
}

/// `Addr.IsLinkLocalUnicast`.
pub fn is_link_local_unicast(ip: &IpAddr) -> bool {
    match unmap(ip) {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            o[0] == 169 && o[1] == 254
        }
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}

/// `Addr.IsGlobalUnicast` (private ranges count as global unicast).
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

/// `netip.Addr.Is4In6`: an IPv4-mapped IPv6 address.
pub fn is_4in6(ip: &IpAddr) -> bool {
    matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some())
}

/// `netip.Addr.String` (of an address without zone).
pub fn addr_string(ip: &IpAddr) -> String {
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

/// `net.ParseIP`: `netip.ParseAddr` without a zone (an IPv4-mapped IPv6 address stays one).
pub fn parse_ip(s: &[u8]) -> Option<IpAddr> {
    parse_addr(s)
        .ok()
        .filter(|a| a.zone.is_empty())
        .map(|a| a.ip)
}

/// Decimal digits as the pre-1.17 `net` package reads them (`dtoi`): any number of digits,
/// leading zeros allowed, failing at 0xFFFFFF.
fn dtoi(s: &[u8]) -> Option<(u32, usize)> {
    let mut n: u32 = 0;
    let mut i = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        n = n * 10 + u32::from(s[i] - b'0');
        if n >= 0xFF_FFFF {
            return None;
        }
        i += 1;
    }
    (i > 0).then_some((n, i))
}

/// Hex digits as the pre-1.17 `net` package reads them (`xtoi`).
fn xtoi(s: &[u8]) -> Option<(u32, usize)> {
    let mut n: u32 = 0;
    let mut i = 0;
    while i < s.len() {
        let d = match s[i] {
            c @ b'0'..=b'9' => c - b'0',
            c @ b'a'..=b'f' => c - b'a' + 10,
            c @ b'A'..=b'F' => c - b'A' + 10,
            _ => break,
        };
        n = n * 16 + u32::from(d);
        if n >= 0xFF_FFFF {
            return None;
        }
        i += 1;
    }
    (i > 0).then_some((n, i))
}

/// Sloppy (pre-Go-1.17, `k8s.io/utils/net`) IPv4: four decimal fields <= 255, leading zeros ok.
fn parse_ipv4_sloppy(mut s: &[u8]) -> bool {
    for i in 0..4 {
        if s.is_empty() {
            return false;
        }
        if i > 0 {
            if s[0] != b'.' {
                return false;
            }
            s = &s[1..];
        }
        match dtoi(s) {
            Some((n, c)) if n <= 0xFF => s = &s[c..],
            _ => return false,
        }
    }
    s.is_empty()
}

/// Sloppy (pre-Go-1.17) IPv6, no zone; an embedded IPv4 tail is parsed sloppily.
fn parse_ipv6_sloppy(mut s: &[u8]) -> bool {
    let mut ellipsis: Option<usize> = None;
    if s.len() >= 2 && s[0] == b':' && s[1] == b':' {
        ellipsis = Some(0);
        s = &s[2..];
        if s.is_empty() {
            return true;
        }
    }
    let mut i = 0;
    while i < 16 {
        let Some((n, c)) = xtoi(s) else {
            return false;
        };
        if n > 0xFFFF {
            return false;
        }
        if c < s.len() && s[c] == b'.' {
            if (ellipsis.is_none() && i != 12) || i + 4 > 16 {
                return false;
            }
            if !parse_ipv4_sloppy(s) {
                return false;
            }
            s = &[];
            i += 4;
            break;
        }
        i += 2;
        s = &s[c..];
        if s.is_empty() {
            break;
        }
        if s[0] != b':' || s.len() == 1 {
            return false;
        }
        s = &s[1..];
        if s[0] == b':' {
            if ellipsis.is_some() {
                return false;
            }
            ellipsis = Some(i);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return false;
    }
    if i < 16 {
        ellipsis.is_some()
    } else {
        ellipsis.is_none()
    }
}

/// Go 1.16's `net.ParseIP(s) != nil`, as `k8s.io/utils/net` keeps it (`ParseIPSloppy`).
pub fn parse_ip_sloppy(s: &[u8]) -> bool {
    for &c in s {
        match c {
            b'.' => return parse_ipv4_sloppy(s),
            b':' => return parse_ipv6_sloppy(s),
            _ => {}
        }
    }
    false
}

/// Go 1.16's `net.ParseCIDR` succeeds, as `k8s.io/utils/net` keeps it (`ParseCIDRSloppy`).
pub fn parse_cidr_sloppy(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(slash) = b.iter().position(|&c| c == b'/') else {
        return false;
    };
    let (addr, mask) = (&b[..slash], &b[slash + 1..]);
    let bits = if parse_ipv4_sloppy(addr) {
        32
    } else if parse_ipv6_sloppy(addr) {
        128
    } else {
        return false;
    };
    matches!(dtoi(mask), Some((n, c)) if c == mask.len() && n <= bits)
}

/// Go's `net.ParseMAC` succeeds: 6, 8 or 20 octets as `xx:xx..`, `xx-xx..`, `xxxx.xxxx..` or
/// `xxxx..` without separators (as Go 1.26, the oracle's toolchain, parses them).
pub fn parse_mac(s: &[u8]) -> bool {
    fn hex2(s: &[u8], sep: Option<u8>) -> bool {
        if s.len() > 2
            && let Some(e) = sep
            && s[2] != e
        {
            return false;
        }
        s.len() >= 2 && s[0].is_ascii_hexdigit() && s[1].is_ascii_hexdigit()
    }
    if s.len() < 12 {
        return false;
    }
    if s[2] == b':' || s[2] == b'-' {
        if !(s.len() + 1).is_multiple_of(3) {
            return false;
        }
        let n = (s.len() + 1) / 3;
        if n != 6 && n != 8 && n != 20 {
            return false;
        }
        (0..n).all(|i| hex2(&s[3 * i..], Some(s[2])))
    } else if s[4] == b'.' {
        if !(s.len() + 1).is_multiple_of(5) {
            return false;
        }
        let n = 2 * (s.len() + 1) / 5;
        if n != 6 && n != 8 && n != 20 {
            return false;
        }
        (0..n / 2).all(|i| {
            let x = 5 * i;
            hex2(&s[x..x + 2], None) && hex2(&s[x + 2..], Some(s[4]))
        })
    } else {
        let n = s.len() / 2;
        s.len().is_multiple_of(2)
            && (n == 6 || n == 8 || n == 20)
            && s.chunks(2).all(|pair| hex2(pair, None))
    }
}
