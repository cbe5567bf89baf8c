//! Go's text conventions the libraries' messages follow.

// =============================================================================================
// Go string quoting on bytes
// =============================================================================================

/// Go's `strconv.Quote` of a byte string: invalid UTF-8 bytes print as `\xNN`.
pub(super) fn go_quote_bytes(b: &[u8]) -> String {
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

pub(super) fn go_quote(s: &str) -> String {
    crate::gofmt::quote(s)
}

pub(super) fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
