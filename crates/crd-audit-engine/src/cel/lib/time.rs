//! CEL's own uses of Go's time ([`crate::go::time`]): the range of CEL timestamps, the string
//! form of a duration, cel-go's strict RFC 3339 check and its time zone argument.

use crate::go::strconv::format_float_f;
use crate::go::time::{NANOS_PER_SECOND, digits, location_offset};

/// Seconds from 0001-01-01T00:00:00Z to the Unix epoch (CEL's smallest timestamp).
pub const MIN_UNIX: i64 = -62_135_596_800;
/// 9999-12-31T23:59:59Z (CEL's largest second).
pub const MAX_UNIX: i64 = 253_402_300_799;

/// `strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"`: CEL's string form of a duration.
/// Go's `Duration.Seconds` adds the whole seconds and the fraction as two floats (not the
/// nanoseconds divided at once), which decides the last digits of large durations.
pub fn format_duration(ns: i64) -> String {
    let whole = (ns / NANOS_PER_SECOND as i64) as f64;
    let fraction = (ns % NANOS_PER_SECOND as i64) as f64 / 1e9;
    format!("{}s", format_float_f(whole + fraction))
}

/// cel-go's strict RFC 3339 check before parsing a timestamp string.
pub fn is_strict_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 20 {
        return false;
    }
    let num = |r: std::ops::Range<usize>, max: i64, min: i64| {
        digits(b, r.start, r.len()).is_some_and(|v| v >= min && v <= max)
    };
    if !(num(0..4, 9999, 0)
        && b[4] == b'-'
        && num(5..7, 12, 1)
        && b[7] == b'-'
        && num(8..10, 31, 1)
        && matches!(b[10], b'T' | b't')
        && num(11..13, 23, 0)
        && b[13] == b':'
        && num(14..16, 59, 0)
        && b[16] == b':'
        && num(17..19, 60, 0))
    {
        return false;
    }
    let mut rest = &b[19..];
    if rest.first() == Some(&b'.') {
        rest = &rest[1..];
        let n = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = &rest[n..];
    }
    match rest.len() {
        1 => matches!(rest[0], b'Z' | b'z'),
        6 => {
            matches!(rest[0], b'+' | b'-')
                && digits(rest, 1, 2).is_some_and(|v| v <= 23)
                && rest[3] == b':'
                && digits(rest, 4, 2).is_some_and(|v| v <= 59)
        }
        _ => false,
    }
}

/// The offset (seconds east of UTC) of the zone `tz` at the instant, as cel-go's time zone
/// argument reads it: `±hh:mm` offsets, or a location name for `time.LoadLocation`.
pub fn tz_offset(tz: &str, nanos: i128) -> Result<i32, String> {
    if let Some(colon) = tz.find(':') {
        let go_atoi = |s: &str| -> Result<i64, String> {
            let t = s.strip_prefix('+').unwrap_or(s);
            let digits = t.strip_prefix('-').unwrap_or(t);
            if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return Err(format!(
                    "strconv.Atoi: parsing {}: invalid syntax",
                    crate::go::strconv::quote(s)
                ));
            }
            t.parse::<i64>().map_err(|_| {
                format!(
                    "strconv.Atoi: parsing {}: value out of range",
                    crate::go::strconv::quote(s)
                )
            })
        };
        let hr = go_atoi(&tz[..colon])?;
        let min = go_atoi(&tz[colon + 1..])?;
        if !(-23..=23).contains(&hr) {
            return Err(format!(
                "timezone offset hours out of range [-23, 23]: {tz}"
            ));
        }
        if !(0..=59).contains(&min) {
            return Err(format!(
                "timezone offset minutes out of range [0, 59]: {tz}"
            ));
        }
        let off = if tz.starts_with('-') {
            hr * 60 - min
        } else {
            hr * 60 + min
        };
        return Ok((off * 60) as i32);
    }
    if tz.is_empty() || tz == "UTC" {
        return Ok(0);
    }
    if tz == "Local" {
        // The API server's local zone; taken as UTC (as in the server's container).
        return Ok(0);
    }
    let valid_name = !tz.starts_with('/')
        && !tz.contains('\\')
        && !tz.split('/').any(|p| p == "..")
        && tz.len() <= 255;
    let zone = if valid_name { Some(tz) } else { None };
    match zone {
        Some(z) => location_offset(z, nanos.div_euclid(NANOS_PER_SECOND) as i64)
            .ok_or_else(|| format!("unknown time zone {tz}")),
        None => Err(format!("unknown time zone {tz}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_seconds() {
        assert_eq!(format_duration(1_000_000_000_000_000), "1000000s");
        assert_eq!(format_duration(1), "0.000000001s");
        assert_eq!(format_duration(0), "0s");
        assert_eq!(format_duration(-662_774_400_001_000_000), "-662774400.001s");
        assert_eq!(format_duration(-1_500_000_000), "-1.5s");
        assert_eq!(format_duration(i64::MAX), "9223372036.854776s");
        assert_eq!(format_duration(i64::MIN), "-9223372036.854776s");
    }
}
