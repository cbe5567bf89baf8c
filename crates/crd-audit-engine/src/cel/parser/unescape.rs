//! String and bytes literal unescaping (cel-go `parser/unescape.go`).

/// cel-go's `unescape` of a string or bytes literal's text (quotes and raw prefix included).
pub(super) fn unescape(text: &str, bytes: bool) -> Result<Vec<u8>, String> {
    let err = || "unable to unescape string".to_string();
    let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut v = normalized.as_str();
    if v.len() < 2 {
        return Err(err());
    }
    let raw = v.starts_with(['r', 'R']);
    if raw {
        v = &v[1..];
    }
    let b = v.as_bytes();
    let n = b.len();
    if n < 2 || b[0] != b[n - 1] || (b[0] != b'"' && b[0] != b'\'') {
        return Err(err());
    }
    let body = if n >= 6 && (v.starts_with("'''") || v.starts_with("\"\"\"")) {
        let q = &v[..3];
        if !v.ends_with(q) {
            return Err(err());
        }
        &v[3..n - 3]
    } else {
        &v[1..n - 1]
    };
    if raw || !body.contains('\\') {
        return Ok(body.as_bytes().to_vec());
    }
    let mut out = Vec::with_capacity(body.len());
    let mut rest = body;
    while !rest.is_empty() {
        let c = rest.as_bytes()[0];
        if c != b'\\' {
            let ch = rest.chars().next().unwrap_or_default();
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            rest = &rest[ch.len_utf8()..];
            continue;
        }
        let eb = rest.as_bytes();
        if eb.len() <= 1 {
            return Err("unable to unescape string, found '\\' as last character".into());
        }
        let e = eb[1];
        rest = &rest[2..];
        let simple = match e {
            b'a' => Some(7u8),
            b'b' => Some(8),
            b'f' => Some(12),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(11),
            b'\\' | b'\'' | b'"' | b'`' | b'?' => Some(e),
            _ => None,
        };
        if let Some(s) = simple {
            out.push(s);
            continue;
        }
        let push_rune = |out: &mut Vec<u8>, v: u32| -> Result<(), String> {
            let ch = char::from_u32(v).ok_or("invalid unicode code point")?;
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            Ok(())
        };
        match e {
            b'x' | b'X' | b'u' | b'U' => {
                let n = match e {
                    b'x' | b'X' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                if bytes && n > 2 {
                    return Err(err());
                }
                let hex = rest.get(..n).ok_or_else(err)?;
                if !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
                    return Err(err());
                }
                let v = u32::from_str_radix(hex, 16).map_err(|_| err())?;
                rest = &rest[n..];
                if bytes {
                    out.push(v as u8);
                } else {
                    push_rune(&mut out, v)?;
                }
            }
            b'0'..=b'3' => {
                let oct = rest
                    .get(..2)
                    .filter(|o| o.bytes().all(|c| (b'0'..=b'7').contains(&c)))
                    .ok_or("unable to unescape octal sequence in string")?;
                let v = u32::from(e - b'0') * 64
                    + u32::from(oct.as_bytes()[0] - b'0') * 8
                    + u32::from(oct.as_bytes()[1] - b'0');
                rest = &rest[2..];
                if bytes {
                    out.push(v as u8);
                } else {
                    push_rune(&mut out, v)?;
                }
            }
            _ => return Err(err()),
        }
    }
    Ok(out)
}
