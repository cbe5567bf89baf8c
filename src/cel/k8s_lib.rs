//! Value logic of the Kubernetes CEL libraries (`k8s.io/apiserver/pkg/cel/library`) as
//! kube-apiserver 1.36 runs them: quantities, URLs, IPs and CIDRs, semantic versions and the
//! `format` library.
//!
//! Nothing here knows about CEL values: inputs and outputs are plain Rust types, and failures
//! are `Err(String)` holding exactly the text the Go library reports (what the API server
//! shows after `... evaluating rule: `).
//!
//! Go behaviours this module reproduces (beyond the obvious):
//! - `resource.Quantity` keeps either an int64-with-scale or an arbitrary-precision decimal;
//!   `isInteger()`/`asInteger()` only succeed on the first form, so `quantity("1000m")` is not
//!   an integer while `quantity("1k")` is. Both forms are kept here.
//! - `url()` runs `url.ParseRequestURI` and then `url.Parse` (Go 1.25+ host rules: bracketed
//!   hosts must be IPv6 literals), and `getQuery()` honours the default limit of 10000 query
//!   parameters.
//! - `ip()`/`cidr()` follow `net/netip` (leading zeros and IPv4-mapped IPv6 addresses are
//!   rejected, zones are rejected by the library).

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

// =============================================================================================
// Go string quoting on bytes
// =============================================================================================

/// Go's `strconv.Quote` of a byte string: invalid UTF-8 bytes print as `\xNN`.
fn go_quote_bytes(b: &[u8]) -> String {
    let mut out = String::from("\"");
    for chunk in b.utf8_chunks() {
        let valid = crate::gofmt::quote(chunk.valid());
        out.push_str(&valid[1..valid.len() - 1]);
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02x}"));
        }
    }
    out.push('"');
    out
}

fn go_quote(s: &str) -> String {
    crate::gofmt::quote(s)
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

// =============================================================================================
// Minimal unsigned big integer (base 10^9 limbs, little endian)
// =============================================================================================

const LIMB: u64 = 1_000_000_000;
/// Values needing more decimal digits than this are refused (Go would allocate without bound).
const MAX_DIGITS: u64 = 200_000;
const TOO_LARGE: &str = "quantity is too large to be represented";

#[derive(Clone, Debug, PartialEq, Eq, Default)]
struct Big(Vec<u32>);

impl Big {
    fn zero() -> Big {
        Big(Vec::new())
    }
    fn from_u128(mut v: u128) -> Big {
        let mut limbs = Vec::new();
        while v > 0 {
            limbs.push((v % LIMB as u128) as u32);
            v /= LIMB as u128;
        }
        Big(limbs)
    }
    fn from_digits(d: &[u8]) -> Big {
        let mut limbs = Vec::with_capacity(d.len() / 9 + 1);
        let mut end = d.len();
        while end > 0 {
            let start = end.saturating_sub(9);
            let mut v = 0u32;
            for &c in &d[start..end] {
                v = v * 10 + u32::from(c - b'0');
            }
            limbs.push(v);
            end = start;
        }
        let mut b = Big(limbs);
        b.trim();
        b
    }
    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }
    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }
    fn cmp(&self, o: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&o.0.len())
            .then_with(|| self.0.iter().rev().cmp(o.0.iter().rev()))
    }
    fn add(&self, o: &Big) -> Big {
        let mut out = Vec::with_capacity(self.0.len().max(o.0.len()) + 1);
        let mut carry = 0u64;
        for i in 0..self.0.len().max(o.0.len()) {
            let s = u64::from(*self.0.get(i).unwrap_or(&0))
                + u64::from(*o.0.get(i).unwrap_or(&0))
                + carry;
            out.push((s % LIMB) as u32);
            carry = s / LIMB;
        }
        if carry > 0 {
            out.push(carry as u32);
        }
        Big(out)
    }
    /// `self - o`, requires `self >= o`.
    fn sub(&self, o: &Big) -> Big {
        let mut out = Vec::with_capacity(self.0.len());
        let mut borrow = 0i64;
        for i in 0..self.0.len() {
            let mut d = i64::from(self.0[i]) - i64::from(*o.0.get(i).unwrap_or(&0)) - borrow;
            if d < 0 {
                d += LIMB as i64;
                borrow = 1;
            } else {
                borrow = 0;
            }
            out.push(d as u32);
        }
        let mut b = Big(out);
        b.trim();
        b
    }
    fn mul_small(&self, m: u64) -> Big {
        if m == 0 || self.is_zero() {
            return Big::zero();
        }
        let mut out = Vec::with_capacity(self.0.len() + 3);
        let mut carry: u128 = 0;
        for &l in &self.0 {
            let p = u128::from(l) * u128::from(m) + carry;
            out.push((p % LIMB as u128) as u32);
            carry = p / LIMB as u128;
        }
        while carry > 0 {
            out.push((carry % LIMB as u128) as u32);
            carry /= LIMB as u128;
        }
        Big(out)
    }
    fn digit_count(&self) -> u64 {
        match self.0.last() {
            None => 0,
            Some(&top) => {
                (self.0.len() as u64 - 1) * 9 + u64::from(top.checked_ilog10().unwrap_or(0) + 1)
            }
        }
    }
    fn mul_pow10(&self, n: u64) -> Result<Big, String> {
        if self.is_zero() || n == 0 {
            return Ok(self.clone());
        }
        if self.digit_count() + n > MAX_DIGITS {
            return Err(TOO_LARGE.to_string());
        }
        let mut limbs = vec![0u32; (n / 9) as usize];
        limbs.extend_from_slice(&self.0);
        Ok(Big(limbs).mul_small(10u64.pow((n % 9) as u32)))
    }
    fn mul_pow2(&self, n: u32) -> Big {
        let mut b = self.clone();
        let mut left = n;
        while left > 0 {
            let step = left.min(30);
            b = b.mul_small(1u64 << step);
            left -= step;
        }
        b
    }
    /// Divides by a small divisor, returning the remainder.
    fn div_small(&self, d: u64) -> (Big, u64) {
        let mut out = vec![0u32; self.0.len()];
        let mut rem: u128 = 0;
        for i in (0..self.0.len()).rev() {
            let cur = rem * LIMB as u128 + u128::from(self.0[i]);
            out[i] = (cur / u128::from(d)) as u32;
            rem = cur % u128::from(d);
        }
        let mut b = Big(out);
        b.trim();
        (b, rem as u64)
    }
    /// `ceil(self / 10^n)`.
    fn div_pow10_ceil(&self, n: u64) -> Big {
        if self.is_zero() {
            return Big::zero();
        }
        if n > self.digit_count() {
            return Big::from_u128(1);
        }
        let mut b = self.clone();
        let mut inexact = false;
        let whole = (n / 9) as usize;
        if whole > 0 {
            inexact |= b.0[..whole].iter().any(|&l| l != 0);
            b.0.drain(..whole);
        }
        let (q, r) = b.div_small(10u64.pow((n % 9) as u32));
        if inexact || r != 0 {
            q.add(&Big::from_u128(1))
        } else {
            q
        }
    }
    fn to_decimal(&self) -> String {
        match self.0.split_last() {
            None => "0".to_string(),
            Some((top, rest)) => {
                let mut s = top.to_string();
                for l in rest.iter().rev() {
                    s.push_str(&format!("{l:09}"));
                }
                s
            }
        }
    }
    fn to_f64(&self) -> f64 {
        // Rust's float parsing rounds correctly, like big.Float.Float64 (nearest even).
        self.to_decimal().parse().unwrap_or(f64::INFINITY)
    }
}

/// Compares `±d1 * 10^e1` with `±d2 * 10^e2` (digit strings without sign, possibly zero).
fn cmp_decimal(neg1: bool, d1: &str, e1: i64, neg2: bool, d2: &str, e2: i64) -> Ordering {
    let norm = |d: &str, e: i64| -> (String, i64) {
        let t = d.trim_start_matches('0');
        if t.is_empty() {
            return (String::new(), 0);
        }
        let stripped = t.trim_end_matches('0');
        (stripped.to_string(), e + (t.len() - stripped.len()) as i64)
    };
    let (a, ea) = norm(d1, e1);
    let (b, eb) = norm(d2, e2);
    let sa = if a.is_empty() {
        0
    } else if neg1 {
        -1
    } else {
        1
    };
    let sb = if b.is_empty() {
        0
    } else if neg2 {
        -1
    } else {
        1
    };
    if sa != sb || sa == 0 {
        return sa.cmp(&sb);
    }
    let mag = (a.len() as i64 + ea)
        .cmp(&(b.len() as i64 + eb))
        .then_with(|| a.as_bytes().cmp(b.as_bytes()));
    if sa < 0 { mag.reverse() } else { mag }
}

// =============================================================================================
// Quantity (k8s.io/apimachinery/pkg/api/resource)
// =============================================================================================

const QUANTITY_FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const QUANTITY_NUMERIC: &str = "unable to parse numeric part of quantity";
const QUANTITY_SUFFIX: &str = "unable to parse quantity's suffix";
const QUANTITY_NOT_INT: &str = "cannot convert value to integer";

/// How a quantity prints (`resource.Format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantityFormat {
    DecimalExponent,
    BinarySI,
    DecimalSI,
}

#[derive(Clone, Debug)]
enum Amount {
    /// `value * 10^scale` (`int64Amount`).
    Int { value: i64, scale: i32 },
    /// `±mag * 10^-scale` (`inf.Dec`).
    Dec { neg: bool, mag: Big, scale: i64 },
}

/// A `resource.Quantity`.
#[derive(Clone, Debug)]
pub struct Quantity {
    amount: Amount,
    format: QuantityFormat,
    /// The string `String()` returns when parsing kept the input (Go's cached `s`).
    cached: Option<String>,
}

/// Whether `s` parses as a quantity (`isQuantity`).
pub fn is_quantity(s: &str) -> bool {
    parse_quantity(s).is_ok()
}

struct QuantityScan<'a> {
    positive: bool,
    value: &'a str,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

/// `parseQuantityString`.
fn scan_quantity(s: &str) -> Result<QuantityScan<'_>, String> {
    let b = s.as_bytes();
    let end = b.len();
    let mut r = QuantityScan {
        positive: true,
        value: "",
        num: "",
        denom: "",
        suffix: "",
    };
    let mut pos = 0;
    match b.first() {
        Some(b'-') => {
            r.positive = false;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    // Leading zeros.
    loop {
        if pos >= end {
            r.num = "0";
            r.value = "0";
            return Ok(r);
        }
        if b[pos] != b'0' {
            break;
        }
        pos += 1;
    }
    // Numerator.
    let start = pos;
    let mut i = pos;
    while i < end && b[i].is_ascii_digit() {
        i += 1;
    }
    if i >= end {
        r.num = &s[start..];
        r.value = s;
        return Ok(r);
    }
    r.num = if i == start { "0" } else { &s[start..i] };
    pos = i;
    // Fraction.
    if b[pos] == b'.' {
        pos += 1;
        let start = pos;
        let mut i = pos;
        while i < end && b[i].is_ascii_digit() {
            i += 1;
        }
        if i >= end {
            r.denom = &s[start..];
            r.value = s;
            return Ok(r);
        }
        r.denom = &s[start..i];
        pos = i;
    }
    r.value = &s[..pos];
    // Suffix.
    let suffix_start = pos;
    let mut i = pos;
    while i < end && b"eEinumkKMGTP".contains(&b[i]) {
        i += 1;
    }
    if i >= end {
        r.suffix = &s[suffix_start..];
        return Ok(r);
    }
    pos = i;
    if b[pos] == b'-' || b[pos] == b'+' {
        pos += 1;
    }
    let mut i = pos;
    while i < end && b[i].is_ascii_digit() {
        i += 1;
    }
    if i >= end {
        r.suffix = &s[suffix_start..];
        return Ok(r);
    }
    Err(QUANTITY_FORMAT_WRONG.to_string())
}

/// Go's `strconv.ParseInt(s, 10, 64)`.
fn go_parse_int64(s: &str) -> Option<i64> {
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut v: i128 = 0;
    for c in digits.bytes() {
        v = v * 10 + i128::from(c - b'0');
        if v > i128::from(i64::MAX) + 1 {
            return None;
        }
    }
    let v = if neg { -v } else { v };
    i64::try_from(v).ok()
}

/// `quantitySuffixer.interpret`: (base, exponent, format).
fn interpret_suffix(s: &str) -> Option<(u32, i32, QuantityFormat)> {
    use QuantityFormat::*;
    let dec = |e| Some((10, e, DecimalSI));
    let bin = |e| Some((2, e, BinarySI));
    match s {
        "" => dec(0),
        "n" => dec(-9),
        "u" => dec(-6),
        "m" => dec(-3),
        "k" => dec(3),
        "M" => dec(6),
        "G" => dec(9),
        "T" => dec(12),
        "P" => dec(15),
        "E" => dec(18),
        "Ki" => bin(10),
        "Mi" => bin(20),
        "Gi" => bin(30),
        "Ti" => bin(40),
        "Pi" => bin(50),
        "Ei" => bin(60),
        _ if s.len() > 1 && (s.starts_with('e') || s.starts_with('E')) => {
            // Go truncates the parsed int64 to int32.
            go_parse_int64(&s[1..]).map(|e| (10, e as i32, DecimalExponent))
        }
        _ => None,
    }
}

/// Parses a quantity like `resource.ParseQuantity`; errors are the texts `quantity()` reports.
pub fn parse_quantity(s: &str) -> Result<Quantity, String> {
    if s.is_empty() {
        return Err(QUANTITY_FORMAT_WRONG.to_string());
    }
    if s == "0" {
        return Ok(Quantity {
            amount: Amount::Int { value: 0, scale: 0 },
            format: QuantityFormat::DecimalSI,
            cached: Some(s.to_string()),
        });
    }
    let scan = scan_quantity(s)?;
    let (base, exponent, mut format) =
        interpret_suffix(scan.suffix).ok_or_else(|| QUANTITY_SUFFIX.to_string())?;

    let digits = (scan.num.len() + scan.denom.len()) as i64;
    let (precision, mut scale, mantissa): (i64, i32, i64) = match format {
        QuantityFormat::BinarySI => {
            if exponent >= 0 && scan.denom.is_empty() {
                let approx = (exponent as f32 * 3.0 / 10.0) as i64;
                (15 - scan.num.len() as i64 - approx - 1, 0, 1i64 << exponent)
            } else {
                (-1, 0, 1)
            }
        }
        _ => (18 - digits, exponent, 1),
    };

    if precision >= 0 {
        scale = scale.wrapping_sub(scan.denom.len() as i32);
        if scale >= -9 {
            let shifted = format!("{}{}", scan.num, scan.denom);
            let value: i64 = shifted.parse().map_err(|_| QUANTITY_NUMERIC.to_string())?;
            if let Some(result) = value.checked_mul(mantissa) {
                let result = if scan.positive { result } else { -result };
                let canonical = match format {
                    QuantityFormat::BinarySI => exponent % 10 == 0 && (value & 0x07) != 0,
                    _ => scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0'),
                };
                return Ok(Quantity {
                    amount: Amount::Int {
                        value: result,
                        scale,
                    },
                    format,
                    cached: canonical.then(|| s.to_string()),
                });
            }
        }
    }

    // inf.Dec path.
    let (neg, mut mag, mut inf_scale) =
        parse_inf_dec(scan.value).ok_or_else(|| QUANTITY_NUMERIC.to_string())?;
    if base == 10 {
        inf_scale = inf_scale.wrapping_add(exponent.wrapping_neg());
    } else {
        mag = mag.mul_pow2(exponent as u32);
    }
    let mut scale64 = i64::from(inf_scale);
    if !mag.is_zero() {
        // Round up (away from zero) to nanos.
        if scale64 > 9 {
            mag = mag.div_pow10_ceil((scale64 - 9) as u64);
        } else if scale64 < 9 {
            mag = mag.mul_pow10((9 - scale64) as u64)?;
        }
        scale64 = 9;
    }
    if format == QuantityFormat::BinarySI {
        let max_nanos = Big::from_u128(i64::MAX as u128 * 1_000_000_000);
        if !mag.is_zero() && mag.cmp(&max_nanos) == Ordering::Greater {
            mag = Big::from_u128(i64::MAX as u128);
            scale64 = 0;
        } else if !mag.is_zero() && mag.cmp(&Big::from_u128(1_000_000_000)) == Ordering::Less {
            format = QuantityFormat::DecimalSI;
        }
    }
    let neg = neg && !mag.is_zero();
    Ok(Quantity {
        amount: Amount::Dec {
            neg,
            mag,
            scale: scale64,
        },
        format,
        cached: None,
    })
}

/// `inf.Dec.SetString` on `[+-]?digits[.digits]`: (negative, unscaled, scale).
fn parse_inf_dec(v: &str) -> Option<(bool, Big, i32)> {
    let (neg, rest) = match v.as_bytes().first() {
        Some(b'-') => (true, &v[1..]),
        Some(b'+') => (false, &v[1..]),
        _ => (false, v),
    };
    let (int_part, frac) = match rest.find('.') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, ""),
    };
    if int_part.is_empty() && frac.is_empty() {
        return None;
    }
    let mut digits = Vec::with_capacity(int_part.len() + frac.len());
    digits.extend_from_slice(int_part.as_bytes());
    digits.extend_from_slice(frac.as_bytes());
    Some((neg, Big::from_digits(&digits), frac.len() as i32))
}

/// `positiveScaleInt64`: `base * 10^n` if it fits.
fn positive_scale(base: i64, n: i64) -> Option<i64> {
    if base == 0 {
        return Some(0);
    }
    let mut v = base;
    for _ in 0..n {
        v = v.checked_mul(10)?;
    }
    Some(v)
}

/// `int64Amount.Add`; `None` when the int64 form overflows.
fn int_add(a: (i64, i32), b: (i64, i32)) -> Option<(i64, i32)> {
    let ((av, as_), (bv, bs)) = (a, b);
    if bv == 0 {
        return Some(a);
    }
    if av == 0 {
        return Some(b);
    }
    match as_.cmp(&bs) {
        Ordering::Equal => Some((av.checked_add(bv)?, as_)),
        Ordering::Greater => {
            let c = positive_scale(av, i64::from(as_) - i64::from(bs))?;
            Some((c.checked_add(bv)?, bs))
        }
        Ordering::Less => {
            let c = positive_scale(bv, i64::from(bs) - i64::from(as_))?;
            Some((av.checked_add(c)?, as_))
        }
    }
}

impl Amount {
    fn to_dec(&self) -> (bool, Big, i64) {
        match self {
            Amount::Int { value, scale } => (
                *value < 0,
                Big::from_u128(u128::from(value.unsigned_abs())),
                -i64::from(*scale),
            ),
            Amount::Dec { neg, mag, scale } => (*neg, mag.clone(), *scale),
        }
    }
    fn is_zero(&self) -> bool {
        match self {
            Amount::Int { value, .. } => *value == 0,
            Amount::Dec { mag, .. } => mag.is_zero(),
        }
    }
    /// Sign and decimal digits of the magnitude and base-10 exponent of the value.
    fn parts(&self) -> (bool, String, i64) {
        match self {
            Amount::Int { value, scale } => (
                *value < 0,
                value.unsigned_abs().to_string(),
                i64::from(*scale),
            ),
            Amount::Dec { neg, mag, scale } => (*neg, mag.to_decimal(), -*scale),
        }
    }
}

/// Signed sum of two decimals (`inf.Dec.Add`), aligned to the larger scale.
fn dec_add(a: (bool, Big, i64), b: (bool, Big, i64)) -> Result<Amount, String> {
    let scale = a.2.max(b.2);
    let am = a.1.mul_pow10((scale - a.2) as u64)?;
    let bm = b.1.mul_pow10((scale - b.2) as u64)?;
    let (neg, mag) = if a.0 == b.0 {
        (a.0, am.add(&bm))
    } else {
        match am.cmp(&bm) {
            Ordering::Less => (b.0, bm.sub(&am)),
            _ => (a.0, am.sub(&bm)),
        }
    };
    let neg = neg && !mag.is_zero();
    Ok(Amount::Dec { neg, mag, scale })
}

fn go_pow10(n: i64) -> f64 {
    const TAB: [f64; 32] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31,
    ];
    const POS: [f64; 10] = [
        1e0, 1e32, 1e64, 1e96, 1e128, 1e160, 1e192, 1e224, 1e256, 1e288,
    ];
    const NEG: [f64; 11] = [
        1e-0, 1e-32, 1e-64, 1e-96, 1e-128, 1e-160, 1e-192, 1e-224, 1e-256, 1e-288, 1e-320,
    ];
    if (0..=308).contains(&n) {
        return POS[(n / 32) as usize] * TAB[(n % 32) as usize];
    }
    if (-323..=0).contains(&n) {
        let m = -n;
        return NEG[(m / 32) as usize] / TAB[(m % 32) as usize];
    }
    if n > 0 { f64::INFINITY } else { 0.0 }
}

impl Quantity {
    /// The quantity `value` with scale 0 in `DecimalExponent` format (`resource.NewQuantity`,
    /// as the library converts integer operands of `add`/`sub`).
    pub fn from_int(value: i64) -> Quantity {
        Quantity {
            amount: Amount::Int { value, scale: 0 },
            format: QuantityFormat::DecimalExponent,
            cached: None,
        }
    }

    /// The format this quantity prints in.
    pub fn format(&self) -> QuantityFormat {
        self.format
    }

    /// Exact comparison (`Quantity.Cmp`); also available as `Ord::cmp`.
    pub fn compare(&self, other: &Quantity) -> Ordering {
        if let (
            Amount::Int {
                value: a,
                scale: sa,
            },
            Amount::Int {
                value: b,
                scale: sb,
            },
        ) = (&self.amount, &other.amount)
        {
            if sa == sb {
                return a.cmp(b);
            }
        }
        let (n1, d1, e1) = self.amount.parts();
        let (n2, d2, e2) = other.amount.parts();
        cmp_decimal(n1, &d1, e1, n2, &d2, e2)
    }

    /// `Quantity.Sign`: -1, 0 or 1.
    pub fn sign(&self) -> i64 {
        match &self.amount {
            Amount::Int { value, .. } => value.signum(),
            Amount::Dec { neg, mag, .. } => {
                if mag.is_zero() {
                    0
                } else if *neg {
                    -1
                } else {
                    1
                }
            }
        }
    }

    fn as_int64(&self) -> Option<i64> {
        match self.amount {
            Amount::Int { value, scale } => match scale.cmp(&0) {
                Ordering::Equal => Some(value),
                Ordering::Less => None,
                Ordering::Greater => positive_scale(value, i64::from(scale)),
            },
            Amount::Dec { .. } => None,
        }
    }

    /// `isInteger()`: whether `AsInt64` succeeds (only on the int64 representation).
    pub fn is_integer(&self) -> bool {
        self.as_int64().is_some()
    }

    /// `asInteger()`.
    pub fn as_integer(&self) -> Result<i64, String> {
        self.as_int64().ok_or_else(|| QUANTITY_NOT_INT.to_string())
    }

    /// `asApproximateFloat()` (`AsApproximateFloat64`).
    pub fn as_approximate_float(&self) -> f64 {
        let (base, exp) = match &self.amount {
            Amount::Int { value, scale } => (*value as f64, i64::from(*scale)),
            Amount::Dec { neg, mag, scale } => {
                let f = mag.to_f64();
                (if *neg { -f } else { f }, -*scale)
            }
        };
        if exp == 0 { base } else { base * go_pow10(exp) }
    }

    /// `add(<quantity>)`. Errs only when the exact sum would need an absurd number of digits
    /// (Go would try to allocate it).
    pub fn add(&self, other: &Quantity) -> Result<Quantity, String> {
        let mut q = Quantity {
            cached: None,
            ..self.clone()
        };
        if let (
            Amount::Int {
                value: av,
                scale: as_,
            },
            Amount::Int {
                value: bv,
                scale: bs,
            },
        ) = (&self.amount, &other.amount)
        {
            if *av == 0 {
                q.format = other.format;
            }
            if let Some((value, scale)) = int_add((*av, *as_), (*bv, *bs)) {
                q.amount = Amount::Int { value, scale };
                return Ok(q);
            }
        } else if self.amount.is_zero() {
            q.format = other.format;
        }
        q.amount = dec_add(self.amount.to_dec(), other.amount.to_dec())?;
        Ok(q)
    }

    /// `sub(<quantity>)`.
    pub fn sub(&self, other: &Quantity) -> Result<Quantity, String> {
        let mut q = Quantity {
            cached: None,
            ..self.clone()
        };
        if self.amount.is_zero() {
            q.format = other.format;
        }
        if let (
            Amount::Int {
                value: av,
                scale: as_,
            },
            Amount::Int {
                value: bv,
                scale: bs,
            },
        ) = (&self.amount, &other.amount)
        {
            if *bv != i64::MIN {
                if let Some((value, scale)) = int_add((*av, *as_), (-*bv, *bs)) {
                    q.amount = Amount::Int { value, scale };
                    return Ok(q);
                }
            }
        }
        let (bn, bm, bs) = other.amount.to_dec();
        q.amount = dec_add(self.amount.to_dec(), (!bn && !bm.is_zero(), bm, bs))?;
        Ok(q)
    }

    /// `add(<int>)`.
    pub fn add_int(&self, v: i64) -> Result<Quantity, String> {
        self.add(&Quantity::from_int(v))
    }

    /// `sub(<int>)`.
    pub fn sub_int(&self, v: i64) -> Result<Quantity, String> {
        self.sub(&Quantity::from_int(v))
    }

    /// Canonical text (`Quantity.String`).
    fn canonical(&self) -> String {
        if let Some(s) = &self.cached {
            return s.clone();
        }
        if self.amount.is_zero() {
            return "0".to_string();
        }
        let (neg, digits, exp) = self.amount.parts();
        let mut format = self.format;
        if format == QuantityFormat::BinarySI {
            let lo = Quantity::from_int(-1024);
            let hi = Quantity::from_int(1024);
            let small = self.cmp(&lo) == Ordering::Greater && self.cmp(&hi) == Ordering::Less;
            let integral =
                exp >= 0 || digits.trim_end_matches('0').len() as i64 <= digits.len() as i64 + exp;
            if small || !integral {
                format = QuantityFormat::DecimalSI;
            }
        }
        let sign = if neg { "-" } else { "" };
        match format {
            QuantityFormat::BinarySI => {
                // Exact integer: strip factors of 1024.
                let mut v = Big::from_digits(digits.as_bytes());
                if exp > 0 {
                    v = match v.mul_pow10(exp as u64) {
                        Ok(v) => v,
                        Err(_) => return format!("{sign}{digits}e{exp}"),
                    };
                } else if exp < 0 {
                    v = v.div_pow10_ceil((-exp) as u64);
                }
                let mut times = 0;
                loop {
                    if v.cmp(&Big::from_u128(1024)) == Ordering::Less {
                        break;
                    }
                    let (q, r) = v.div_small(1024);
                    if r != 0 {
                        break;
                    }
                    v = q;
                    times += 1;
                }
                let suffix = match times {
                    1 => "Ki",
                    2 => "Mi",
                    3 => "Gi",
                    4 => "Ti",
                    5 => "Pi",
                    6 => "Ei",
                    _ => "",
                };
                format!("{sign}{}{suffix}", v.to_decimal())
            }
            _ => {
                let t = digits.trim_end_matches('0');
                let mut e = exp + (digits.len() - t.len()) as i64;
                let mut m = t.to_string();
                while e.rem_euclid(3) != 0 {
                    m.push('0');
                    e -= 1;
                }
                let suffix = if format == QuantityFormat::DecimalExponent {
                    if e == 0 {
                        String::new()
                    } else {
                        format!("e{}", e as i32)
                    }
                } else {
                    match e {
                        -9 => "n",
                        -6 => "u",
                        -3 => "m",
                        3 => "k",
                        6 => "M",
                        9 => "G",
                        12 => "T",
                        15 => "P",
                        18 => "E",
                        _ => "",
                    }
                    .to_string()
                };
                format!("{sign}{m}{suffix}")
            }
        }
    }
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Quantity) -> bool {
        self.compare(other) == Ordering::Equal
    }
}

impl Eq for Quantity {}

impl PartialOrd for Quantity {
    fn partial_cmp(&self, other: &Quantity) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Quantity {
    /// Exact numeric order (`Quantity.Cmp`).
    fn cmp(&self, other: &Quantity) -> Ordering {
        self.compare(other)
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical())
    }
}

// =============================================================================================
// net/netip parsing
// =============================================================================================

/// A `netip.Addr` as parsed (zone kept so callers can reject it).
#[derive(Clone, Debug, PartialEq, Eq)]
struct GoAddr {
    ip: IpAddr,
    zone: String,
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
fn go_parse_addr(s: &[u8]) -> Result<GoAddr, String> {
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

fn is_4in6(ip: &IpAddr) -> bool {
    matches!(ip, IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some())
}

// =============================================================================================
// IP library (library/ip.go)
// =============================================================================================

/// `parseIPAddr` of the library: `netip.ParseAddr`, then no zones and no IPv4-mapped IPv6.
fn lib_parse_ip(raw: &str) -> Result<IpAddr, String> {
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
    if let IpAddr::V4(v4) = u {
        if v4.octets() == [0; 4] || v4.octets() == [255; 4] {
            return false;
        }
    }
    if let IpAddr::V6(v6) = u {
        if v6.octets() == [0; 16] {
            return false;
        }
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
    let err = |msg: &str| format!("netip.ParsePrefix({}): {msg}", go_quote(s));
    let Some(i) = s.rfind('/') else {
        return Err(err("no '/'"));
    };
    let a = go_parse_addr(&s.as_bytes()[..i]).map_err(|e| err(&e))?;
    if matches!(a.ip, IpAddr::V6(_)) && !a.zone.is_empty() {
        return Err(err("IPv6 zones cannot be present in a prefix"));
    }
    let bits_str = &s[i + 1..];
    let bad = || err(&format!("bad bits after slash: {}", go_quote(bits_str)));
    let first = bits_str.as_bytes().first().copied().unwrap_or(0);
    if bits_str.len() > 1 && !(b'1'..=b'9').contains(&first) {
        return Err(bad());
    }
    let bits = go_parse_int64(bits_str).ok_or_else(bad)?;
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
            go_quote(s)
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
        write!(f, "{}/{}", ip_to_string(&self.addr), self.bits)
    }
}

// =============================================================================================
// URL library (library/urls.go over Go's net/url)
// =============================================================================================

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
    let escape_err = |e: &[u8]| format!("invalid URL escape {}", go_quote_bytes(e));
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
                        go_quote_bytes(&s[i..i + 1])
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
    let invalid_port = |p: &[u8]| format!("invalid port {} after host", go_quote_bytes(p));
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
            let addr = go_parse_addr(&unescaped).map_err(|e| format!("invalid host: {e}"))?;
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
            if let Some(i) = host.iter().rposition(|&c| c == b':') {
                if !valid_optional_port(&host[i..]) {
                    return Err(invalid_port(&host[i..]));
                }
            }
        }
    }
    unescape(host, Enc::Host)
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct RawUrl {
    scheme: String,
    opaque: Vec<u8>,
    host: Vec<u8>,
    path: Vec<u8>,
    raw_path: Vec<u8>,
    raw_query: Vec<u8>,
    fragment: Vec<u8>,
}

/// Go's `parse(rawURL, viaRequest)`; the error is the inner error text.
fn go_url_parse(raw: &[u8], via_request: bool) -> Result<RawUrl, String> {
    if raw.iter().any(|&c| c < 0x20 || c == 0x7f) {
        return Err("net/url: invalid control character in URL".to_string());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".to_string());
    }
    let mut u = RawUrl::default();
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

/// A URL as the CEL `url()` function holds it (Go's `url.Parse` result).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    u: RawUrl,
}

const URL_ERR_PREFIX: &str = "URL parse error during conversion from string: ";

/// Whether Go's `url.ParseRequestURI` accepts the string (govalidator's `IsRequestURI`, the
/// `uri` format).
pub fn is_request_uri(s: &str) -> bool {
    go_url_parse(s.as_bytes(), true).is_ok()
}

/// `url.ParseRequestURI`, with Go's `*url.Error` text on failure.
fn parse_request_uri(s: &str) -> Result<RawUrl, String> {
    go_url_parse(s.as_bytes(), true).map_err(|e| format!("parse {}: {e}", go_quote(s)))
}

/// `url.Parse`, with Go's `*url.Error` text on failure.
fn go_url_parse_full(s: &str) -> Result<RawUrl, String> {
    let b = s.as_bytes();
    let (head, frag) = match b.iter().position(|&c| c == b'#') {
        Some(i) => (&b[..i], Some(&b[i + 1..])),
        None => (b, None),
    };
    let mut u =
        go_url_parse(head, false).map_err(|e| format!("parse {}: {e}", go_quote_bytes(head)))?;
    if let Some(f) = frag.filter(|f| !f.is_empty()) {
        u.fragment =
            unescape(f, Enc::Fragment).map_err(|e| format!("parse {}: {e}", go_quote(s)))?;
    }
    Ok(u)
}

/// `url(<string>)`: the error is the full text the evaluation reports.
pub fn parse_url(s: &str) -> Result<Url, String> {
    parse_request_uri(s).map_err(|e| format!("{URL_ERR_PREFIX}{e}"))?;
    let u = go_url_parse_full(s).map_err(|e| format!("{URL_ERR_PREFIX}{e}"))?;
    Ok(Url { u })
}

/// `isURL(<string>)` (only `url.ParseRequestURI`).
pub fn is_url(s: &str) -> bool {
    parse_request_uri(s).is_ok()
}

/// Default of Go's `urlmaxqueryparams`.
const MAX_QUERY_PARAMS: usize = 10000;

impl Url {
    fn split_host_port(&self) -> (&[u8], &[u8]) {
        let h = self.u.host.as_slice();
        let (mut host, mut port): (&[u8], &[u8]) = (h, b"");
        if let Some(c) = h.iter().rposition(|&c| c == b':') {
            if valid_optional_port(&h[c..]) {
                host = &h[..c];
                port = &h[c + 1..];
            }
        }
        if host.len() >= 2 && host.starts_with(b"[") && host.ends_with(b"]") {
            host = &host[1..host.len() - 1];
        }
        (host, port)
    }

    /// `getScheme()`.
    pub fn scheme(&self) -> String {
        self.u.scheme.clone()
    }

    /// `getHost()` (IPv6 with brackets, port included).
    pub fn host(&self) -> String {
        lossy(&self.u.host)
    }

    /// `getHostname()`.
    pub fn hostname(&self) -> String {
        lossy(self.split_host_port().0)
    }

    /// `getPort()`.
    pub fn port(&self) -> String {
        lossy(self.split_host_port().1)
    }

    /// `getEscapedPath()`.
    pub fn escaped_path(&self) -> String {
        let u = &self.u;
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

    /// `getQuery()`: unescaped keys to all their values, in order; malformed pairs dropped.
    pub fn query(&self) -> BTreeMap<String, Vec<String>> {
        let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let q = self.u.raw_query.as_slice();
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

/// Go's `strconv.ParseUint(s, 10, 64)` with its error text.
fn go_parse_uint(s: &str) -> Result<u64, String> {
    if s.is_empty() || !only_digits(s) {
        return Err(format!(
            "strconv.ParseUint: parsing {}: invalid syntax",
            go_quote(s)
        ));
    }
    s.parse().map_err(|_| {
        format!(
            "strconv.ParseUint: parsing {}: value out of range",
            go_quote(s)
        )
    })
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
                go_quote(p)
            ));
        }
        if leading_zero(p) {
            return Err(format!(
                "{cap} number must not contain leading zeroes {}",
                go_quote(p)
            ));
        }
        go_parse_uint(p)
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
                    go_quote(p)
                ));
            }
            pre.push(PreRelease::Num(go_parse_uint(p)?));
        } else if only_alphanum(p) {
            pre.push(PreRelease::Str(p.to_string()));
        } else {
            return Err(format!(
                "Invalid character(s) found in prerelease {}",
                go_quote(p)
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
                go_quote(b)
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

// =============================================================================================
// Format library (library/format.go)
// =============================================================================================

const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const QUALIFIED_NAME_PART_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const QUALIFIED_NAME_SLASHES_MSG: &str = "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

const FORMAT_NAMES: &[&str] = &[
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

/// The `MaxRegexSize` of a named format (for the cost of `validate`).
pub fn format_max_regex_size(name: &str) -> u64 {
    match name {
        "dns1123Label" | "dns1035Label" | "dns1123LabelPrefix" | "dns1035LabelPrefix" => 30,
        "dns1123Subdomain" | "qualifiedName" | "dns1123SubdomainPrefix" => 60,
        "labelValue" => 40,
        "uri" => 1103,
        // len(strfmt.UUIDPattern)
        "uuid" => 70,
        "byte" => 84,
        // len(strfmt.DateTimePattern)
        "date" | "datetime" => 71,
        _ => 0,
    }
}

/// Names accepted by `format.named(name)` (each also exists as `format.<name>()`).
pub fn format_names() -> &'static [&'static str] {
    FORMAT_NAMES
}

fn lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

fn is_dns1123_label(s: &[u8]) -> bool {
    matches!((s.first(), s.last()), (Some(&f), Some(&l)) if lower_alnum(f) && lower_alnum(l))
        && s.iter().all(|&c| lower_alnum(c) || c == b'-')
}

fn is_dns1123_subdomain(s: &[u8]) -> bool {
    !s.is_empty() && s.split(|&c| c == b'.').all(is_dns1123_label)
}

fn is_dns1035_label(s: &[u8]) -> bool {
    matches!((s.first(), s.last()), (Some(&f), Some(&l)) if f.is_ascii_lowercase() && lower_alnum(l))
        && s.iter().all(|&c| lower_alnum(c) || c == b'-')
}

fn is_qualified_name_part(s: &[u8]) -> bool {
    matches!((s.first(), s.last()), (Some(&f), Some(&l)) if f.is_ascii_alphanumeric() && l.is_ascii_alphanumeric())
        && s.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn dns1123_label_errors(s: &[u8]) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !is_dns1123_label(s) {
        errs.push(
            if is_dns1123_subdomain(s) {
                "must not contain dots"
            } else {
                DNS1123_LABEL_MSG
            }
            .to_string(),
        );
    }
    errs
}

fn dns1123_subdomain_errors(s: &[u8]) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    if !is_dns1123_subdomain(s) {
        errs.push(DNS1123_SUBDOMAIN_MSG.to_string());
    }
    errs
}

fn dns1035_label_errors(s: &[u8]) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !is_dns1035_label(s) {
        errs.push(DNS1035_LABEL_MSG.to_string());
    }
    errs
}

/// `apimachinery/pkg/api/validation.maskTrailingDash` for the `...Prefix` formats.
fn mask_trailing_dash(s: &str, prefix: bool) -> Vec<u8> {
    let b = s.as_bytes();
    if prefix && b.len() > 1 && b[b.len() - 1] == b'-' {
        let mut m = b[..b.len() - 2].to_vec();
        m.push(b'a');
        return m;
    }
    b.to_vec()
}

fn qualified_name_errors(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut errs = Vec::new();
    let parts: Vec<&[u8]> = b.split(|&c| c == b'/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > 253 {
                    errs.push("prefix part must be no more than 253 bytes".to_string());
                }
                if !is_dns1123_subdomain(prefix) {
                    errs.push(format!("prefix part {DNS1123_SUBDOMAIN_MSG}"));
                }
            }
            *name
        }
        _ => return vec![QUALIFIED_NAME_SLASHES_MSG.to_string()],
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 bytes".to_string());
    }
    if !is_qualified_name_part(name) {
        errs.push(QUALIFIED_NAME_PART_MSG.to_string());
    }
    errs
}

fn label_value_errors(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut errs = Vec::new();
    if b.len() > 63 {
        errs.push("must be no more than 63 bytes".to_string());
    }
    if !b.is_empty() && !is_qualified_name_part(b) {
        errs.push(LABEL_VALUE_MSG.to_string());
    }
    errs
}

fn strfmt_errors(format: &str, s: &str, msg: &str) -> Vec<String> {
    if crate::validate::formats::is_valid(format, s) {
        Vec::new()
    } else {
        vec![msg.to_string()]
    }
}

/// `format.named(name).validate(s)`: `None` when `s` is valid (or `name` is unknown; use
/// [`format_names`] to tell), else the error messages.
pub fn format_validate(name: &str, s: &str) -> Option<Vec<String>> {
    let errs = match name {
        "dns1123Label" => dns1123_label_errors(s.as_bytes()),
        "dns1123LabelPrefix" => dns1123_label_errors(&mask_trailing_dash(s, true)),
        "dns1123Subdomain" => dns1123_subdomain_errors(s.as_bytes()),
        "dns1123SubdomainPrefix" => dns1123_subdomain_errors(&mask_trailing_dash(s, true)),
        "dns1035Label" => dns1035_label_errors(s.as_bytes()),
        "dns1035LabelPrefix" => dns1035_label_errors(&mask_trailing_dash(s, true)),
        "qualifiedName" => qualified_name_errors(s),
        "labelValue" => label_value_errors(s),
        "uri" => match parse_request_uri(s) {
            Ok(_) => Vec::new(),
            Err(e) => vec![e],
        },
        "uuid" => strfmt_errors("uuid", s, "does not match the UUID format"),
        "byte" => strfmt_errors("byte", s, "invalid base64"),
        "date" => strfmt_errors("date", s, "invalid date"),
        "datetime" => strfmt_errors("datetime", s, "invalid datetime"),
        _ => Vec::new(),
    };
    if errs.is_empty() { None } else { Some(errs) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        parse_quantity(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn quantity_parse_and_errors() {
        assert!(
            is_quantity("20") && is_quantity("20M") && is_quantity("20Mi") && is_quantity("1.3G")
        );
        assert!(!is_quantity("20Mo") && !is_quantity("10Mm") && !is_quantity("1,3G"));
        assert_eq!(parse_quantity("10Mo").unwrap_err(), QUANTITY_FORMAT_WRONG);
        assert_eq!(
            parse_quantity("10Mm").unwrap_err(),
            "unable to parse quantity's suffix"
        );
        assert_eq!(
            parse_quantity("200K").unwrap_err(),
            "unable to parse quantity's suffix"
        );
        assert_eq!(parse_quantity("Three").unwrap_err(), QUANTITY_FORMAT_WRONG);
        assert_eq!(parse_quantity("").unwrap_err(), QUANTITY_FORMAT_WRONG);
        assert_eq!(
            parse_quantity(".e-10").unwrap_err(),
            "unable to parse numeric part of quantity"
        );
        // Scanner quirks: a lone sign or dot is zero.
        assert_eq!(q("+").sign(), 0);
        assert_eq!(q(".").sign(), 0);
    }

    #[test]
    fn quantity_compare() {
        assert_eq!(q("200M").cmp(&q("0.2G")), Ordering::Equal);
        assert_eq!(q("2M"), q("0.002G"));
        assert_eq!(q("2000k"), q("2M"));
        assert_ne!(q("200M"), q("0.3G"));
        assert_eq!(q("50M").cmp(&q("50Mi")), Ordering::Less);
        assert_eq!(q("50Mi").cmp(&q("50M")), Ordering::Greater);
        assert_eq!(q("150Mi").cmp(&q("100Mi")), Ordering::Greater);
        assert_eq!(
            q("9999999999999999999999999999999999999G")
                .cmp(&q("9999999999999999999999999999999999998G")),
            Ordering::Greater
        );
        assert_eq!(q("-1").cmp(&q("1n")), Ordering::Less);
        assert_eq!(q("0.1n"), q("1n")); // rounded up to nanos
    }

    #[test]
    fn quantity_arithmetic() {
        assert_eq!(q("50k").add(&q("20")).unwrap(), q("50.02k"));
        assert_eq!(
            q("50k").add_int(20).unwrap().cmp(&q("50020")),
            Ordering::Equal
        );
        assert_eq!(q("50k").sub(&q("20")).unwrap(), q("49.98k"));
        assert_eq!(q("50k").sub_int(20).unwrap(), q("49980"));
        let chain = q("50k").add_int(20).unwrap().sub(&q("100k")).unwrap();
        assert_eq!(chain.as_integer(), Ok(-49980));
        assert_eq!(chain.sub_int(-50000).unwrap().as_integer(), Ok(20));
        // Binary quantities are capped at 2^63-1 when parsed; sums are not.
        assert_eq!(q("8Ei").to_string(), "9223372036854775807");
        let big = q("4Ei").add(&q("4Ei")).unwrap();
        assert!(!big.is_integer());
        assert_eq!(big.to_string(), "8Ei");
        // Overflow of the int64 form moves to the decimal form (not an integer any more).
        let sum = q("9223372036854775807").add_int(1).unwrap();
        assert!(!sum.is_integer());
        assert_eq!(sum.to_string(), "9223372036854775808");
        assert_eq!(
            q("1").sub_int(i64::MIN).unwrap().to_string(),
            "9223372036854775809"
        );
    }

    #[test]
    fn quantity_scalars() {
        assert_eq!(q("50k").as_integer(), Ok(50000));
        assert!(q("50").is_integer());
        assert!(q("50000000G").is_integer());
        let huge = q("9999999999999999999999999999999999999G");
        assert!(!huge.is_integer());
        assert_eq!(
            huge.as_integer().unwrap_err(),
            "cannot convert value to integer"
        );
        // int64 form with a negative scale is not an integer, even when whole.
        assert!(!q("1000m").is_integer());
        assert!(!q("1.0").is_integer());
        assert_eq!(q("50.703k").as_approximate_float(), 50703.0);
        assert_eq!(q("1.5Ki").as_approximate_float(), 1536.0);
        assert_eq!(q("-3m").sign(), -1);
        assert_eq!(q("0").sign(), 0);
        assert_eq!(q("5").sign(), 1);
    }

    #[test]
    fn quantity_display() {
        for (input, want) in [
            ("1.5", "1500m"),
            ("1.5Gi", "1536Mi"),
            ("12Mi", "12Mi"),
            ("1024Ki", "1Mi"),
            ("1500", "1500"),
            ("1000", "1k"),
            ("1e3", "1e3"),
            ("0.5Ki", "512"),
            ("0.1n", "1n"),
            ("-1500k", "-1500k"),
            ("01Ki", "01Ki"),
            ("0", "0"),
        ] {
            assert_eq!(q(input).to_string(), want, "{input}");
        }
    }

    #[test]
    fn url_parsing() {
        let err = parse_url("hTPp\\\u{8}lah").unwrap_err();
        assert_eq!(
            err,
            r#"URL parse error during conversion from string: parse "hTPp\\\blah": net/url: invalid control character in URL"#
        );
        assert!(is_url(
            "https://user:pass@example.com:80/path?query=val#fragment"
        ));
        assert!(is_url("/absolute-path"));
        assert!(!is_url("https://a:b:c/"));
        assert!(!is_url("../relative-path"));
        assert_eq!(
            parse_url("https://a:b:c/").unwrap_err(),
            r#"URL parse error during conversion from string: parse "https://a:b:c/": invalid port ":c" after host"#
        );
        assert_eq!(
            parse_url("../relative-path").unwrap_err(),
            r#"URL parse error during conversion from string: parse "../relative-path": invalid URI for request"#
        );
        assert_eq!(
            parse_url("https://[1.2.3.4]/").unwrap_err(),
            r#"URL parse error during conversion from string: parse "https://[1.2.3.4]/": invalid IP-literal"#
        );
        assert_eq!(
            parse_url("https://example.com/%zz").unwrap_err(),
            r#"URL parse error during conversion from string: parse "https://example.com/%zz": invalid URL escape "%zz""#
        );
        assert_eq!(
            parse_url("https://a{b}/").unwrap_err(),
            r#"URL parse error during conversion from string: parse "https://a{b}/": invalid character "{" in host name"#
        );
        // ParseRequestURI passes, Parse rejects the fragment.
        assert_eq!(
            parse_url("http://h/?q#%zz").unwrap_err(),
            r#"URL parse error during conversion from string: parse "http://h/?q#%zz": invalid URL escape "%zz""#
        );
    }

    #[test]
    fn url_accessors() {
        let u = |s: &str| parse_url(s).unwrap();
        assert_eq!(u("/path").scheme(), "");
        assert_eq!(u("https://example.com/").scheme(), "https");
        assert_eq!(u("HTTPS://example.com/").scheme(), "https");
        assert_eq!(u("https://example.com:80/").host(), "example.com:80");
        assert_eq!(u("https://example.com/").host(), "example.com");
        assert_eq!(u("https://[::1]:80/").host(), "[::1]:80");
        assert_eq!(u("https://[::1]/").host(), "[::1]");
        assert_eq!(u("/path").host(), "");
        assert_eq!(u("https://example.com:80/").hostname(), "example.com");
        assert_eq!(u("https://127.0.0.1:80/").hostname(), "127.0.0.1");
        assert_eq!(u("https://[::1]:80/").hostname(), "::1");
        assert_eq!(u("https://example.com:80/").port(), "80");
        assert_eq!(u("https://example.com/").port(), "");
        assert_eq!(u("https://example.com/path").escaped_path(), "/path");
        assert_eq!(
            u("https://example.com/path with spaces/").escaped_path(),
            "/path%20with%20spaces/"
        );
        assert_eq!(u("https://example.com").escaped_path(), "");
        assert_eq!(u("https://example.com/a%2fb").escaped_path(), "/a%2fb");
        let qm = u("https://example.com/path?k1=a&k2=b&k2=c").query();
        assert_eq!(qm.get("k1"), Some(&vec!["a".to_string()]));
        assert_eq!(qm.get("k2"), Some(&vec!["b".to_string(), "c".to_string()]));
        let qm = u("https://example.com/path?key with spaces=value with spaces").query();
        assert_eq!(
            qm.get("key with spaces"),
            Some(&vec!["value with spaces".to_string()])
        );
        assert!(u("https://example.com/path?").query().is_empty());
        assert!(u("https://example.com/path").query().is_empty());
        // Parse (not ParseRequestURI) reads the authority of a scheme-relative URL.
        assert_eq!(u("//host/p").host(), "host");
    }

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
        assert_eq!(ip_to_string(&v4.ip()), "192.168.0.0");
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

    #[test]
    fn format_library() {
        assert_eq!(format_names().len(), 13);
        assert_eq!(format_validate("dns1123Label", "my-label-name"), None);
        assert_eq!(
            format_validate("dns1123Label", "contains a space"),
            Some(vec![DNS1123_LABEL_MSG.to_string()])
        );
        assert_eq!(
            format_validate("dns1123Label", "a.b"),
            Some(vec!["must not contain dots".to_string()])
        );
        assert_eq!(
            format_validate("dns1123Subdomain", "apiextensions.k8s.io"),
            None
        );
        assert_eq!(format_validate("dns1035Label", "my-label-name"), None);
        assert_eq!(
            format_validate("dns1035Label", "1abc"),
            Some(vec![DNS1035_LABEL_MSG.to_string()])
        );
        assert_eq!(
            format_validate("qualifiedName", "apiextensions.k8s.io/v1beta1"),
            None
        );
        assert_eq!(
            format_validate("qualifiedName", "a/b/c"),
            Some(vec![QUALIFIED_NAME_SLASHES_MSG.to_string()])
        );
        assert_eq!(
            format_validate("dns1123LabelPrefix", "my-label-prefix-"),
            None
        );
        assert_eq!(
            format_validate("dns1123SubdomainPrefix", "mysubdomain.prefix.-"),
            None
        );
        assert_eq!(
            format_validate("dns1035LabelPrefix", "my-label-prefix-"),
            None
        );
        assert_eq!(format_validate("labelValue", ""), None);
        assert_eq!(
            format_validate("labelValue", &"a".repeat(64)),
            Some(vec!["must be no more than 63 bytes".to_string()])
        );
        assert_eq!(format_validate("uri", "http://example.com"), None);
        assert_eq!(
            format_validate("uri", "example"),
            Some(vec![
                r#"parse "example": invalid URI for request"#.to_string()
            ])
        );
        assert_eq!(
            format_validate("uuid", "123e4567-e89b-12d3-a456-426614174000"),
            None
        );
        assert_eq!(
            format_validate("uuid", "123"),
            Some(vec!["does not match the UUID format".to_string()])
        );
        assert_eq!(format_validate("byte", "aGVsbG8="), None);
        assert_eq!(
            format_validate("byte", "aGVsbG8"),
            Some(vec!["invalid base64".to_string()])
        );
        assert_eq!(format_validate("date", "2021-01-01"), None);
        assert_eq!(
            format_validate("date", "2021-13-01"),
            Some(vec!["invalid date".to_string()])
        );
        assert_eq!(format_validate("datetime", "2021-01-01T00:00:00Z"), None);
        assert_eq!(
            format_validate("datetime", "2021-01-01"),
            Some(vec!["invalid datetime".to_string()])
        );
    }
}
