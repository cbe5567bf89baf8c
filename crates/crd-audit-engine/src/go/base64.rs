//! Go's `encoding/base64` decoding (`src/encoding/base64/base64.go`): the padded standard and
//! URL alphabets as `StdEncoding.DecodeString` and `URLEncoding.DecodeString` read them. Line
//! breaks (`\r`, `\n`) anywhere in the input are skipped; bits left over in the last quantum
//! are ignored (the encodings are not strict); an error is Go's `CorruptInputError`, the offset
//! of the first byte that cannot be read.

/// Which 64-character alphabet the text uses (both padded with `=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alphabet {
    /// `A-Z a-z 0-9 + /` (`base64.StdEncoding`).
    Standard,
    /// `A-Z a-z 0-9 - _` (`base64.URLEncoding`).
    Url,
}

impl Alphabet {
    fn sextet(self, c: u8) -> Option<u8> {
        match (c, self) {
            (b'A'..=b'Z', _) => Some(c - b'A'),
            (b'a'..=b'z', _) => Some(c - b'a' + 26),
            (b'0'..=b'9', _) => Some(c - b'0' + 52),
            (b'+', Alphabet::Standard) | (b'-', Alphabet::Url) => Some(62),
            (b'/', Alphabet::Standard) | (b'_', Alphabet::Url) => Some(63),
            _ => None,
        }
    }
}

/// A `CorruptInputError`: the input byte offset at which decoding failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CorruptInput(pub usize);

impl std::fmt::Display for CorruptInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "illegal base64 data at input byte {}", self.0)
    }
}

fn is_line_break(c: u8) -> bool {
    c == b'\n' || c == b'\r'
}

/// Decodes `src` as Go does; on error, the offset Go reports.
pub fn decode(alphabet: Alphabet, src: &[u8]) -> Result<Vec<u8>, CorruptInput> {
    let mut out = Vec::with_capacity(src.len() / 4 * 3);
    let mut at = 0;
    while at < src.len() {
        let (next, done) = quantum(alphabet, src, at, &mut out)?;
        at = next;
        if done {
            break;
        }
    }
    Ok(out)
}

/// Reads one quantum (up to four characters, line breaks skipped) starting at `at`, appends
/// its bytes; returns where the next one starts and whether the input ended with padding.
fn quantum(
    alphabet: Alphabet,
    src: &[u8],
    mut at: usize,
    out: &mut Vec<u8>,
) -> Result<(usize, bool), CorruptInput> {
    let mut sextets = [0u8; 4];
    let mut have = 0;
    while have < 4 {
        let Some(&c) = src.get(at) else {
            // The input ends inside a quantum: the encodings require padding.
            if have == 0 {
                return Ok((at, true));
            }
            return Err(CorruptInput(at - have));
        };
        at += 1;
        if let Some(v) = alphabet.sextet(c) {
            sextets[have] = v;
            have += 1;
            continue;
        }
        if is_line_break(c) {
            continue;
        }
        if c != b'=' || have < 2 {
            // Not in the alphabet, or padding after fewer than two characters.
            return Err(CorruptInput(at - 1));
        }
        if have == 2 {
            // A second `=` must follow (line breaks between them are skipped).
            while src.get(at).copied().is_some_and(is_line_break) {
                at += 1;
            }
            match src.get(at) {
                None => return Err(CorruptInput(src.len())),
                Some(b'=') => at += 1,
                Some(_) => return Err(CorruptInput(at - 1)),
            }
        }
        // Padding ends the input: only line breaks may follow it.
        while src.get(at).copied().is_some_and(is_line_break) {
            at += 1;
        }
        if at < src.len() {
            return Err(CorruptInput(at));
        }
        push_bytes(&sextets, have, out);
        return Ok((at, true));
    }
    push_bytes(&sextets, 4, out);
    Ok((at, false))
}

/// The `have - 1` bytes that `have` sextets carry.
fn push_bytes(sextets: &[u8; 4], have: usize, out: &mut Vec<u8>) {
    let n = sextets
        .iter()
        .fold(0u32, |acc, &s| (acc << 6) | u32::from(s));
    out.extend_from_slice(&n.to_be_bytes()[1..have]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn std(s: &str) -> Result<Vec<u8>, usize> {
        decode(Alphabet::Standard, s.as_bytes()).map_err(|e| e.0)
    }

    /// Outputs and error offsets of Go 1.26's `base64.StdEncoding.DecodeString` (a Go program
    /// on the oracle's toolchain printed them).
    #[test]
    fn decodes_and_fails_where_go_does() {
        assert_eq!(std(""), Ok(vec![]));
        assert_eq!(std("QUJD"), Ok(b"ABC".to_vec()));
        assert_eq!(std("QUI="), Ok(b"AB".to_vec()));
        assert_eq!(std("QQ=="), Ok(b"A".to_vec()));
        assert_eq!(std("QU\r\nJD\n"), Ok(b"ABC".to_vec()));
        assert_eq!(std("QQ=\n="), Ok(b"A".to_vec()));
        assert_eq!(std("QQ==\r\n"), Ok(b"A".to_vec()));
        // Leftover bits are ignored (the encoding is not strict).
        assert_eq!(std("QR=="), Ok(b"A".to_vec()));
        assert_eq!(std("QUJD/w=="), Ok(b"ABC\xff".to_vec()));
        assert_eq!(std("Q"), Err(0));
        assert_eq!(std("QUJDQQ"), Err(4));
        assert_eq!(std("QU\nJDQ"), Err(5));
        assert_eq!(std("QU*D"), Err(2));
        assert_eq!(std("=QUJ"), Err(0));
        assert_eq!(std("Q==="), Err(1));
        assert_eq!(std("QQ="), Err(3));
        assert_eq!(std("QQ=A"), Err(2));
        assert_eq!(std("QQ==QQ=="), Err(4));
        assert_eq!(std("QUI=\nx"), Err(5));
        assert_eq!(std("QUJD="), Err(4));
        assert_eq!(std("QUJDQUJDQUJD*A=="), Err(12));
        assert_eq!(std("QUJDQUJD\nQUJD"), Ok(b"ABCABCABC".to_vec()));
        assert_eq!(std("QUJDQUJDQUJDQQ"), Err(12));
    }

    #[test]
    fn the_url_alphabet_swaps_two_characters() {
        assert_eq!(decode(Alphabet::Url, b"_-8="), Ok(vec![0xff, 0xef]));
        assert_eq!(decode(Alphabet::Url, b"QU+/"), Err(CorruptInput(2)));
        assert_eq!(
            CorruptInput(2).to_string(),
            "illegal base64 data at input byte 2"
        );
        assert_eq!(decode(Alphabet::Standard, b"_-8="), Err(CorruptInput(0)));
    }
}
