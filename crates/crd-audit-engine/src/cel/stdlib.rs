//! Helpers of the CEL standard library that the rest of the crate uses outside CEL
//! (the operator reads durations, timestamps and base64 data the same way).

/// Standard base64 (with or without padding), as the server decodes `format: byte` strings.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let t = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(t.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for &c in t.as_bytes() {
        acc = (acc << 6) | val(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Go's `time.ParseDuration`, in nanoseconds.
pub fn parse_duration(s: &str) -> Result<i128, String> {
    super::lib::time::parse_duration(s).map(i128::from)
}

/// RFC 3339 timestamps, in nanoseconds since the epoch.
pub fn parse_timestamp(s: &str) -> Result<i128, String> {
    super::lib::time::parse_rfc3339(s)
        .map(|(nanos, _)| nanos)
        .ok_or_else(|| format!("invalid timestamp \"{s}\""))
}
