//! Go's `strconv` package (`src/strconv/quote.go`, `ftoa.go`, `atoi.go`, `atof.go`, `atob.go`):
//! quoting strings, parsing integers, floats and booleans, and the shortest formatting of a
//! float64.

use std::fmt::Write;

/// The shortest decimal digits of `f` (no sign, no dot) and the decimal exponent of the
/// first digit, e.g. 1234.5 -> ("12345", 3). `f` must be finite and non-zero.
pub(super) fn shortest_digits(f: f64) -> (String, i32) {
    // Rust's `{:e}` prints the shortest round-trip representation, like Go's.
    let s = format!("{:e}", f.abs());
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    (digits, exp.parse().unwrap_or(0))
}

fn push_exponent(out: &mut String, exp: i32) {
    out.push('e');
    out.push(if exp < 0 { '-' } else { '+' });
    let e = exp.unsigned_abs();
    if e < 10 {
        out.push('0');
    }
    let _ = write!(out, "{e}");
}

/// `%e` with the shortest precision: `d.ddde±XX`.
fn format_e(neg: bool, digits: &str, exp: i32) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    push_exponent(&mut out, exp);
    out
}

/// `%f` with the shortest precision.
pub(super) fn format_f(neg: bool, digits: &str, exp: i32) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    let point = exp + 1; // digits before the decimal point
    if point <= 0 {
        out.push_str("0.");
        for _ in 0..(-point) {
            out.push('0');
        }
        out.push_str(digits);
    } else if point as usize >= digits.len() {
        out.push_str(digits);
        for _ in 0..(point as usize - digits.len()) {
            out.push('0');
        }
    } else {
        out.push_str(&digits[..point as usize]);
        out.push('.');
        out.push_str(&digits[point as usize..]);
    }
    out
}

pub(super) fn special_float(f: f64) -> Option<String> {
    if f.is_nan() {
        Some("NaN".into())
    } else if f.is_infinite() {
        Some(if f > 0.0 { "+Inf" } else { "-Inf" }.into())
    } else if f == 0.0 {
        Some(if f.is_sign_negative() { "-0" } else { "0" }.into())
    } else {
        None
    }
}

/// `strconv.FormatFloat(f, 'g', -1, 64)`: the shortest digits, in `%e` form for exponents
/// below -4 or from 6 on (what `%v` prints for a float64).
pub fn format_float_g(f: f64) -> String {
    if let Some(s) = special_float(f) {
        return s;
    }
    let (digits, exp) = shortest_digits(f);
    // strconv 'g' with the shortest precision decides with a precision of 6.
    if !(-4..6).contains(&exp) {
        format_e(f < 0.0, &digits, exp)
    } else {
        format_f(f < 0.0, &digits, exp)
    }
}

/// `strconv.FormatFloat(float64(f), 'g', -1, 32)`: the shortest digits that read back as the
/// same float32, in `%e` form for exponents below -4 or from 6 on.
pub fn format_float32_g(f: f32) -> String {
    if let Some(s) = special_float(f64::from(f)) {
        return s;
    }
    // Rust's `{:e}` of an f32 prints its shortest round-trip digits, as Go's 32-bit formatting.
    let e = format!("{:e}", f.abs());
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        format_e(f < 0.0, &digits, exp)
    } else {
        format_f(f < 0.0, &digits, exp)
    }
}

/// The integer that the shortest decimal rendering of an integral float spells (Go's
/// `strconv.FormatFloat(f, 'f', -1, 64)`), if it is integral and below 10^40.
pub fn shortest_integer(f: f64) -> Option<i128> {
    if f.fract() != 0.0 || !f.is_finite() {
        return None;
    }
    if f.abs() < 9_007_199_254_740_992.0 {
        return Some(f as i128);
    }
    let s = format!("{:e}", f.abs());
    let (mantissa, exp) = s.split_once('e')?;
    let exp: i32 = exp.parse().ok()?;
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let zeros = exp - (digits.len() as i32 - 1);
    if !(0..=20).contains(&zeros) {
        return None;
    }
    let mut v: i128 = digits.parse().ok()?;
    for _ in 0..zeros {
        v *= 10;
    }
    Some(if f < 0.0 { -v } else { v })
}

/// Go's `strconv.IsPrint` / `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols
/// and the ASCII space. Approximated from Rust's character properties: controls and
/// whitespace other than the space are out, and so are the format characters (Cf), private
/// use areas and noncharacters listed here; unassigned code points (which Go also refuses)
/// are not known here and pass.
pub fn is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(c as u32,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890..=0x891 | 0x8E2 | 0x180E
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0xFEFF | 0xFFF9..=0xFFFB
        | 0x110BD | 0x110CD | 0x13430..=0x1343F | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A
        | 0xE0001 | 0xE0020..=0xE007F | 0xE000..=0xF8FF | 0xF0000..=0x10FFFF
        | 0xFDD0..=0xFDEF | 0xFFFE | 0xFFFF)
}

/// Go's `strconv.Quote` (what `%q` prints for a string).
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            c if is_print(c) => out.push(c),
            c if (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
    out
}
/// Go's `strconv.Quote` of a byte string: invalid UTF-8 bytes print as `\xNN`.
pub fn quote_bytes(b: &[u8]) -> String {
    let mut out = String::from("\"");
    for chunk in b.utf8_chunks() {
        let valid = quote(chunk.valid());
        out.push_str(&valid[1..valid.len() - 1]);
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02x}"));
        }
    }
    out.push('"');
    out
}

/// `strconv.FormatFloat(x, 'f', -1, 64)`: the shortest decimal that reads back as `x`,
/// without an exponent.
pub fn format_float_f(x: f64) -> String {
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // Rust's `{}` is the shortest round-trip representation without an exponent.
    let s = format!("{x}");
    s
}

/// `strconv.ParseInt(s, 10, 64)`, `None` on any error.
pub fn parse_int64(s: &str) -> Option<i64> {
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

/// `strconv.ParseUint(s, 10, 64)`: ASCII digits only (no sign); the error is Go's `NumError`
/// text.
pub fn parse_uint64(s: &str) -> Result<u64, String> {
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "strconv.ParseUint: parsing {}: invalid syntax",
            quote(s)
        ));
    }
    s.parse().map_err(|_| {
        format!(
            "strconv.ParseUint: parsing {}: value out of range",
            quote(s)
        )
    })
}

/// `strconv.ParseBool`.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// `strconv.ParseFloat(s, 64)` (decimal and hexadecimal forms, digit-separating
/// underscores, infinities, NaN); `None` on a syntax error or overflow.
pub fn parse_float64(s: &str) -> Option<f64> {
    if let Some(v) = parse_special_float(s) {
        return Some(v);
    }
    let (hex, underscores) = read_float(s.as_bytes())?;
    if underscores && !underscores_ok(s.as_bytes()) {
        return None;
    }
    let clean: String = s.chars().filter(|&c| c != '_').collect();
    let t = clean.strip_prefix(['+', '-']).unwrap_or(&clean);
    let neg = clean.starts_with('-');
    let v = if hex {
        parse_hex_float(&t[2..].to_ascii_lowercase())?
    } else {
        t.parse::<f64>().ok()?
    };
    if v.is_infinite() {
        return None;
    }
    Some(if neg { -v } else { v })
}

/// `inf`, `infinity` (with a sign) and `nan`, in any case.
fn parse_special_float(s: &str) -> Option<f64> {
    let lower = s.to_ascii_lowercase();
    let (neg, rest) = match lower.as_bytes().first() {
        Some(b'+') => (false, &lower[1..]),
        Some(b'-') => (true, &lower[1..]),
        _ => (false, lower.as_str()),
    };
    match rest {
        "inf" | "infinity" => Some(if neg {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }),
        "nan" if rest.len() == lower.len() => Some(f64::NAN),
        _ => None,
    }
}

/// The syntax check of Go's `readFloat` over the whole string: whether it is hexadecimal,
/// and whether it has underscores (`None`: not a number).
fn read_float(s: &[u8]) -> Option<(bool, bool)> {
    let mut i = 0;
    let mut underscores = false;
    if matches!(s.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let mut hex = false;
    if i + 2 < s.len() && s[i] == b'0' && s[i + 1].eq_ignore_ascii_case(&b'x') {
        hex = true;
        i += 2;
    }
    let (mut sawdot, mut sawdigits) = (false, false);
    while i < s.len() {
        let c = s[i];
        match c {
            b'_' => underscores = true,
            b'.' if !sawdot => sawdot = true,
            b'0'..=b'9' => sawdigits = true,
            _ if hex && c.to_ascii_lowercase().is_ascii_hexdigit() => sawdigits = true,
            _ => break,
        }
        i += 1;
    }
    if !sawdigits {
        return None;
    }
    let exp_char = if hex { b'p' } else { b'e' };
    if i < s.len() && s[i].to_ascii_lowercase() == exp_char {
        i += 1;
        if matches!(s.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !s.get(i).is_some_and(u8::is_ascii_digit) {
            return None;
        }
        while i < s.len() && (s[i].is_ascii_digit() || s[i] == b'_') {
            underscores |= s[i] == b'_';
            i += 1;
        }
    } else if hex {
        return None;
    }
    (i == s.len()).then_some((hex, underscores))
}

/// Go's `underscoreOK`: underscores only between digits (or after a base prefix).
fn underscores_ok(s: &[u8]) -> bool {
    let s = match s.first() {
        Some(b'+' | b'-') => &s[1..],
        _ => s,
    };
    let mut saw = b'^';
    let mut i = 0;
    let mut hex = false;
    if s.len() >= 2 && s[0] == b'0' && matches!(s[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = s[1].eq_ignore_ascii_case(&b'x');
    }
    while i < s.len() {
        let c = s[i];
        if c.is_ascii_digit() || (hex && c.to_ascii_lowercase().is_ascii_hexdigit()) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
        i += 1;
    }
    saw != b'_'
}

fn parse_hex_float(h: &str) -> Option<f64> {
    let (mant, exp) = match h.find('p') {
        Some(i) => (&h[..i], h[i + 1..].parse::<i32>().ok()?),
        None => return None,
    };
    let (int_part, frac_part) = mant.split_once('.').unwrap_or((mant, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut v = 0f64;
    for c in int_part.chars() {
        v = v * 16.0 + f64::from(c.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for c in frac_part.chars() {
        v += f64::from(c.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    Some(v * 2f64.powi(exp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_matches_strconv() {
        assert_eq!(quote("a\"b\\c\n"), r#""a\"b\\c\n""#);
        assert_eq!(quote("\u{1}"), r#""\x01""#);
        assert_eq!(quote("é"), "\"é\"");
        assert_eq!(quote("\u{200b}"), r#""\u200b""#);
    }

    /// `unicode.IsPrint` of Go 1.26 on these code points (a Go program on the oracle's
    /// toolchain printed them).
    #[test]
    fn is_print_as_go() {
        let go = [
            (0xAD, false),
            (0x600, false),
            (0x61C, false),
            (0x6DD, false),
            (0x70F, false),
            (0x890, false),
            (0x8E2, false),
            (0x180E, false),
            (0x200B, false),
            (0x202E, false),
            (0x2064, false),
            (0x2065, false),
            (0x206F, false),
            (0xFEFF, false),
            (0xFFFB, false),
            (0x110BD, false),
            (0x110CD, false),
            (0x13430, false),
            (0x1BCA3, false),
            (0x1D17A, false),
            (0xE0001, false),
            (0xE007F, false),
            (0xE000, false),
            (0x10FFFF, false),
            (0xFDD0, false),
            (0xFFFE, false),
            (0xA0, false),
            (0x2028, false),
            (0x3000, false),
            (0x61, true),
            (0xE9, true),
            (0x1F600, true),
            (0x20, true),
        ];
        for (u, want) in go {
            assert_eq!(is_print(char::from_u32(u).unwrap()), want, "{u:#x}");
        }
    }

    #[test]
    fn quote_bytes_escapes_invalid_utf8() {
        assert_eq!(quote_bytes(b"a\xffb\n"), r#""a\xffb\n""#);
    }
}
