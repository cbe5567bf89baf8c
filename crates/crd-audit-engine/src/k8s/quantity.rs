//! `resource.Quantity` of `k8s.io/apimachinery/pkg/api/resource` (`quantity.go`,
//! `amount.go`, `suffix.go`, `math.go`): parsing, canonical form, comparisons and arithmetic
//! as the CEL quantity library uses them. A quantity keeps either an
//! int64-with-scale or an arbitrary-precision decimal: `isInteger()`/`asInteger()` only
//! succeed on the first form, so `quantity("1000m")` is not an integer while
//! `quantity("1k")` is. Both forms are kept here. Failures are `Err(String)` holding the text
//! the Go library reports.

use crate::go::strconv::parse_int64;
use std::cmp::Ordering;
use std::fmt;

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
            parse_int64(&s[1..]).map(|e| (10, e as i32, DecimalExponent))
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
            && sa == sb
        {
            return a.cmp(b);
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
            && *bv != i64::MIN
            && let Some((value, scale)) = int_add((*av, *as_), (-*bv, *bs))
        {
            q.amount = Amount::Int { value, scale };
            return Ok(q);
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
}
