//! ANTLR's error reporting and recovery as the parser cel-go generates does it: the first
//! error of a run is reported (`extraneous input`, `missing X at Y`, `mismatched input`), then
//! tokens are skipped until one can follow, with the same `expecting` sets.

use super::{AFTER_OPERAND, FIRST_EXPR, ParseError, Parser, starts_member};
use crate::cel::lexer::{Tk, Token};

/// ANTLR's display of token text in messages (`\n`, `\r`, `\t` escaped).
pub(super) fn antlr_escape(s: &str) -> String {
    s.replace('\n', "\\n")
        .replace('\r', "\\r")
        .replace('\t', "\\t")
}

impl Parser<'_> {
    pub(super) fn syntax_error(&mut self, offset: usize, msg: String) {
        if self.recovering {
            return;
        }
        self.recovering = true;
        self.syntax.push(ParseError {
            offset,
            message: format!("Syntax error: {msg}"),
        });
    }

    /// ANTLR's report of token `t` where one of `expected` was wanted: `extraneous input`
    /// (the caller then deletes it) or `mismatched input`.
    pub(super) fn report_unexpected(&mut self, t: Token, extraneous: bool, expected: &[Tk]) {
        let msg = format!(
            "{} input {} expecting {}",
            if extraneous {
                "extraneous"
            } else {
                "mismatched"
            },
            self.display(t),
            Self::expecting(expected)
        );
        self.syntax_error(t.start, msg);
    }

    pub(super) fn expecting(set: &[Tk]) -> String {
        if set.len() == 1 {
            set[0].display().to_string()
        } else {
            let mut v: Vec<Tk> = set.to_vec();
            v.sort();
            v.dedup();
            format!(
                "{{{}}}",
                v.iter().map(|t| t.display()).collect::<Vec<_>>().join(", ")
            )
        }
    }

    /// Whether `k` can follow a complete operand in the enclosing constructs.
    pub(super) fn can_follow_operand(&self, k: Tk) -> bool {
        if AFTER_OPERAND.contains(&k) || self.closers.contains(&k) {
            return true;
        }
        k == Tk::Comma
            && self
                .closers
                .iter()
                .any(|c| matches!(c, Tk::RParen | Tk::RBracket | Tk::RBrace))
    }

    /// ANTLR's failed prediction on `-`: a run of `-` that no operand follows is reported
    /// as `no viable alternative` at the token after it, and the last `-` is left to be read
    /// as a binary minus.
    pub(super) fn minus_without_operand(&mut self) -> bool {
        let mut j = self.i;
        while self.tokens.get(j).is_some_and(|t| t.kind == Tk::Minus) {
            j += 1;
        }
        let Some(&x) = self.tokens.get(j) else {
            return false;
        };
        if j == self.i || starts_member(x.kind) {
            return false;
        }
        let last = self.tokens[j - 1];
        let end = if x.kind == Tk::Eof { last.end } else { x.end };
        let msg = format!(
            "no viable alternative at input '{}'",
            antlr_escape(&self.src[last.start..end])
        );
        self.syntax_error(x.start, msg);
        self.i = j - 1;
        true
    }

    /// ANTLR's sync before the optional `,` that closes a list, map or message literal
    /// after an element (`{']', ','}` expected): one unwanted token is dropped, otherwise
    /// the literal is left.
    pub(super) fn sync_literal_end(&mut self, close: Tk) -> bool {
        if self.recovering || matches!(self.kind(), Tk::Comma) || self.kind() == close {
            return true;
        }
        let set = [close, Tk::Comma];
        let t = self.la(1);
        if set.contains(&self.la(2).kind) {
            self.report_unexpected(t, true, &set);
            self.i += 1;
            self.recovering = false;
            if self.kind() == Tk::Comma {
                self.bump();
            }
            return true;
        }
        self.report_unexpected(t, false, &set);
        self.recover();
        false
    }

    /// Skips tokens until one error recovery can resume at.
    pub(super) fn recover(&mut self) {
        while !(self.can_follow_operand(self.kind()) || self.kind() == Tk::Eof) {
            self.i += 1;
        }
    }

    /// Recovery from an error in an index or member call: the `member` rule is left, so
    /// only what can follow a whole operand stops the skipping (not `.` or `[`).
    pub(super) fn recover_member(&mut self) {
        while !((self.can_follow_operand(self.kind())
            && !matches!(self.kind(), Tk::Dot | Tk::LBracket))
            || self.kind() == Tk::Eof)
        {
            self.i += 1;
        }
    }

    /// Whether `k` can follow the token `want` here (ANTLR's single-token insertion).
    pub(super) fn can_follow_closer(&self, want: Tk, k: Tk) -> bool {
        if want == Tk::Colon {
            FIRST_EXPR.contains(&k)
        } else {
            self.can_follow_operand(k)
        }
    }

    /// Matches the token `want` with ANTLR's single-token deletion and insertion.
    pub(super) fn expect(&mut self, want: Tk) -> bool {
        self.expect_in(want, false)
    }

    /// [`Self::expect`]; `in_member`: the token closes an index or member call (recovery
    /// leaves the member).
    pub(super) fn expect_in(&mut self, want: Tk, in_member: bool) -> bool {
        if self.kind() == want {
            self.bump();
            return true;
        }
        let t = self.la(1);
        if self.la(2).kind == want {
            self.report_unexpected(t, true, &[want]);
            self.i += 1;
            self.bump();
            return true;
        }
        if self.can_follow_closer(want, t.kind) {
            let msg = format!("missing {} at {}", want.display(), self.display(t));
            self.syntax_error(t.start, msg);
            return true;
        }
        self.report_unexpected(t, false, &[want]);
        if in_member {
            self.recover_member();
        } else {
            self.recover();
        }
        false
    }

    pub(super) fn expect_eof(&mut self) {
        let t = self.la(1);
        if t.kind == Tk::Eof {
            return;
        }
        if self.la(2).kind == Tk::Eof {
            let msg = format!("extraneous input {} expecting <EOF>", self.display(t));
            self.syntax_error(t.start, msg);
        } else {
            let msg = format!("mismatched input {} expecting <EOF>", self.display(t));
            self.syntax_error(t.start, msg);
        }
    }
}
