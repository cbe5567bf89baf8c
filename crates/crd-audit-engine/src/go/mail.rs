//! Go's `net/mail` address parsing (`src/net/mail/message.go`, `ParseAddress`), with the
//! parts of `mime` (`src/mime/encodedword.go`) it uses to decode RFC 2047 encoded words in
//! display names and comments. Only whether an address parses is reproduced: the OpenAPI
//! `email` format asks nothing more.

use crate::go::net;

struct MailParser<'a> {
    s: &'a str,
}

fn is_vchar(r: char) -> bool {
    ('!'..='~').contains(&r) || (r as u32) >= 0x80
}

fn is_atext(r: char, dot: bool) -> bool {
    match r {
        '.' => dot,
        '(' | ')' | '<' | '>' | '[' | ']' | ':' | ';' | '@' | '\\' | ',' | '"' => false,
        _ => is_vchar(r),
    }
}

fn is_wsp(r: char) -> bool {
    r == ' ' || r == '\t'
}

/// Outcome of `decodeRFC2047Word`: `Err` only for a well-formed encoded word whose charset the
/// default decoder cannot handle (that error is not ignored upstream).
fn rfc2047_word_ok(word: &str) -> Result<(), ()> {
    let b = word.as_bytes();
    if b.len() < 8
        || !word.starts_with("=?")
        || !word.ends_with("?=")
        || word.matches('?').count() != 4
    {
        return Ok(());
    }
    let inner = &word[2..word.len() - 2];
    let (charset, rest) = inner.split_once('?').unwrap_or((inner, ""));
    if charset.is_empty() {
        return Ok(());
    }
    let (encoding, text) = rest.split_once('?').unwrap_or((rest, ""));
    if encoding.len() != 1 {
        return Ok(());
    }
    let decodes = match encoding.as_bytes()[0] {
        b'B' | b'b' => {
            crate::go::base64::decode(crate::go::base64::Alphabet::Standard, text.as_bytes())
                .is_ok()
        }
        b'Q' | b'q' => q_decode_ok(text.as_bytes()),
        _ => false,
    };
    if !decodes {
        return Ok(());
    }
    let known = ["utf-8", "iso-8859-1", "us-ascii"]
        .iter()
        .any(|c| c.eq_ignore_ascii_case(charset));
    if known { Ok(()) } else { Err(()) }
}

/// `mime` package `qDecode` succeeds.
fn q_decode_ok(s: &[u8]) -> bool {
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c == b'=' {
            if i + 2 >= s.len() || !s[i + 1].is_ascii_hexdigit() || !s[i + 2].is_ascii_hexdigit() {
                return false;
            }
            i += 2;
        } else if !((b' '..=b'~').contains(&c) || c == b'_' || matches!(c, b'\n' | b'\r' | b'\t')) {
            return false;
        }
        i += 1;
    }
    true
}

impl<'a> MailParser<'a> {
    fn empty(&self) -> bool {
        self.s.is_empty()
    }

    fn peek(&self) -> u8 {
        self.s.as_bytes()[0]
    }

    fn consume(&mut self, c: u8) -> bool {
        if self.empty() || self.peek() != c {
            return false;
        }
        self.s = &self.s[1..];
        true
    }

    fn skip_space(&mut self) {
        self.s = self.s.trim_start_matches([' ', '\t']);
    }

    fn skip_cfws(&mut self) -> bool {
        self.skip_space();
        while self.consume(b'(') {
            if self.consume_comment().is_none() {
                return false;
            }
            self.skip_space();
        }
        true
    }

    /// After `(`: the comment text, or `None` when unbalanced.
    fn consume_comment(&mut self) -> Option<String> {
        let mut depth = 1;
        let mut comment = Vec::new();
        let mut b = self.s.as_bytes();
        while !b.is_empty() && depth != 0 {
            if b[0] == b'\\' && b.len() > 1 {
                b = &b[1..];
            } else if b[0] == b'(' {
                depth += 1;
            } else if b[0] == b')' {
                depth -= 1;
            }
            if depth > 0 {
                comment.push(b[0]);
            }
            b = &b[1..];
        }
        // `b` is a suffix of the original string; cutting at a byte boundary keeps it valid
        // where the string was valid, and only ASCII bytes are ever split off.
        let consumed = self.s.len() - b.len();
        self.s = self.s.get(consumed..).unwrap_or("");
        (depth == 0).then(|| String::from_utf8_lossy(&comment).into_owned())
    }

    fn consume_atom(&mut self, dot: bool, permissive: bool) -> Option<&'a str> {
        let n: usize = self
            .s
            .chars()
            .take_while(|&r| is_atext(r, dot))
            .map(char::len_utf8)
            .sum();
        if n == 0 {
            return None;
        }
        let atom = &self.s[..n];
        self.s = &self.s[n..];
        if !permissive && (atom.starts_with('.') || atom.contains("..") || atom.ends_with('.')) {
            return None;
        }
        Some(atom)
    }

    /// After `"` is seen (not consumed): the quoted string's content.
    fn consume_quoted_string(&mut self) -> Option<String> {
        let mut out = String::new();
        let mut escaped = false;
        let mut chars = self.s.char_indices().skip(1);
        loop {
            let (i, r) = chars.next()?;
            if escaped {
                if !is_vchar(r) && !is_wsp(r) {
                    return None;
                }
                out.push(r);
                escaped = false;
            } else if (is_vchar(r) && r != '\\' && r != '"') || is_wsp(r) {
                out.push(r);
            } else if r == '"' {
                self.s = &self.s[i + 1..];
                return Some(out);
            } else if r == '\\' {
                escaped = true;
            } else {
                return None;
            }
        }
    }

    fn consume_domain_literal(&mut self) -> bool {
        if !self.consume(b'[') {
            return false;
        }
        let mut n = 0;
        for r in self.s.chars() {
            if r == ']' {
                break;
            }
            if r == '[' || r == '\\' || !is_vchar(r) {
                return false;
            }
            n += r.len_utf8();
        }
        let dtext = &self.s[..n];
        self.s = &self.s[n..];
        self.consume(b']') && net::parse_ip(dtext.as_bytes()).is_some()
    }

    /// `consumeAddrSpec`; restores the input on failure.
    fn consume_addr_spec(&mut self) -> bool {
        let orig = self.s;
        let ok = self.addr_spec_inner();
        if !ok {
            self.s = orig;
        }
        ok
    }

    fn addr_spec_inner(&mut self) -> bool {
        self.skip_space();
        if self.empty() {
            return false;
        }
        if self.peek() == b'"' {
            match self.consume_quoted_string() {
                Some(q) if !q.is_empty() => {}
                _ => return false,
            }
        } else if self.consume_atom(true, false).is_none() {
            return false;
        }
        if !self.consume(b'@') {
            return false;
        }
        self.skip_space();
        if self.empty() {
            return false;
        }
        if self.peek() == b'[' {
            self.consume_domain_literal()
        } else {
            self.consume_atom(true, false).is_some()
        }
    }

    /// `consumePhrase`: at least one word, else failure. Returns the display name.
    fn consume_phrase(&mut self) -> Option<String> {
        let mut words: Vec<String> = Vec::new();
        loop {
            if !words.is_empty() && !self.skip_cfws() {
                return None;
            }
            self.skip_space();
            if self.empty() {
                break;
            }
            let word = if self.peek() == b'"' {
                self.consume_quoted_string()
            } else {
                match self.consume_atom(true, true) {
                    Some(a) if rfc2047_word_ok(a).is_ok() => Some(a.to_string()),
                    _ => None,
                }
            };
            match word {
                Some(w) => words.push(w),
                None => break,
            }
        }
        (!words.is_empty()).then(|| words.join(" "))
    }

    fn consume_display_name_comment(&mut self) -> bool {
        if !self.consume(b'(') {
            return false;
        }
        let Some(comment) = self.consume_comment() else {
            return false;
        };
        comment
            .split([' ', '\t'])
            .filter(|w| !w.is_empty())
            .all(|w| rfc2047_word_ok(w).is_ok())
    }

    /// `parseAddress`: the number of addresses parsed, or `None` on error.
    fn parse_address(&mut self, handle_group: bool) -> Option<usize> {
        self.skip_space();
        if self.empty() {
            return None;
        }
        if self.consume_addr_spec() {
            self.skip_space();
            if !self.empty() && self.peek() == b'(' && !self.consume_display_name_comment() {
                return None;
            }
            return Some(1);
        }
        if self.peek() != b'<' {
            self.consume_phrase()?;
        }
        self.skip_space();
        if handle_group && self.consume(b':') {
            return self.consume_group_list();
        }
        if !self.consume(b'<') {
            return None;
        }
        if !self.consume_addr_spec() {
            return None;
        }
        self.consume(b'>').then_some(1)
    }

    fn consume_group_list(&mut self) -> Option<usize> {
        let mut count = 0;
        self.skip_space();
        if self.consume(b';') {
            return self.skip_cfws().then_some(0);
        }
        loop {
            self.skip_space();
            count += self.parse_address(false)?;
            if !self.skip_cfws() {
                return None;
            }
            if self.consume(b';') {
                return self.skip_cfws().then_some(count);
            }
            if !self.consume(b',') {
                return None;
            }
        }
    }
}

/// `mail.ParseAddress(s)` succeeds: `s` is exactly one address (alone or as the only member
/// of a group), with optional comments, folding white space and RFC 2047 display names.
pub fn parses_one_address(s: &str) -> bool {
    let mut p = MailParser { s };
    let Some(n) = p.parse_address(true) else {
        return false;
    };
    p.skip_cfws() && p.empty() && n == 1
}
