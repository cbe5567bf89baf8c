//! The parsed tree written out for the `regex` crate, in a canonical, fully explicit syntax
//! (no Go counterpart: this is how Go's semantics are carried over to the Rust engine).

use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};

use super::syntax::{Kind, Node, RepOp};

/// A class that matches nothing.
pub(super) const NEVER: &str = r"[^\x{0}-\x{10FFFF}]";

pub(super) fn push_char(c: char, out: &mut String) {
    if c.is_ascii_alphanumeric() {
        out.push(c);
    } else {
        out.push_str(&format!("\\x{{{:X}}}", c as u32));
    }
}

pub(super) fn emit_class(class: &ClassUnicode, out: &mut String) {
    let ranges = class.ranges();
    if ranges.is_empty() {
        out.push_str(NEVER);
        return;
    }
    if let [r] = ranges
        && r.start() == r.end()
    {
        push_char(r.start(), out);
        return;
    }
    out.push('[');
    for r in ranges {
        push_char(r.start(), out);
        if r.end() != r.start() {
            out.push('-');
            push_char(r.end(), out);
        }
    }
    out.push(']');
}

pub(super) fn emit_lit(runes: &[u32], fold: bool, out: &mut String) {
    for &r in runes {
        let Some(c) = char::from_u32(r) else {
            out.push_str(NEVER);
            continue;
        };
        if fold {
            let mut class = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
            class.case_fold_simple();
            emit_class(&class, out);
        } else {
            push_char(c, out);
        }
    }
}

/// Whether `node` is emitted as a single atom (no group needed before a repetition).
pub(super) fn is_atom(node: &Node) -> bool {
    match &node.kind {
        Kind::Lit(runes, _) => runes.len() == 1,
        Kind::Class(_) | Kind::Any | Kind::AnyNotNl => true,
        _ => false,
    }
}

pub(super) fn emit(node: &Node, out: &mut String) {
    match &node.kind {
        Kind::Empty => out.push_str("(?:)"),
        Kind::Lit(runes, fold) => emit_lit(runes, *fold, out),
        Kind::Class(class) => emit_class(class, out),
        Kind::AnyNotNl => out.push_str(r"[^\n]"),
        Kind::Any => out.push_str(r"(?s:.)"),
        Kind::BeginLine => out.push_str("(?m:^)"),
        Kind::EndLine => out.push_str("(?m:$)"),
        Kind::BeginText => out.push_str(r"\A"),
        Kind::EndText => out.push_str(r"\z"),
        Kind::WordBoundary => out.push_str(r"(?-u:\b)"),
        Kind::NoWordBoundary => out.push_str(r"(?-u:\B)"),
        Kind::Capture(sub) => {
            out.push_str("(?:");
            emit(sub, out);
            out.push(')');
        }
        Kind::Repeat(op, greedy, sub) => {
            if is_atom(sub) {
                emit(sub, out);
            } else {
                out.push_str("(?:");
                emit(sub, out);
                out.push(')');
            }
            match op {
                RepOp::Star => out.push('*'),
                RepOp::Plus => out.push('+'),
                RepOp::Quest => out.push('?'),
                RepOp::Count(min, None) => out.push_str(&format!("{{{min},}}")),
                RepOp::Count(min, Some(max)) if min == max => out.push_str(&format!("{{{min}}}")),
                RepOp::Count(min, Some(max)) => out.push_str(&format!("{{{min},{max}}}")),
            }
            if !greedy {
                out.push('?');
            }
        }
        Kind::Concat(subs) => {
            for sub in subs {
                if matches!(sub.kind, Kind::Alternate(_)) {
                    out.push_str("(?:");
                    emit(sub, out);
                    out.push(')');
                } else {
                    emit(sub, out);
                }
            }
        }
        Kind::Alternate(subs) => {
            for (k, sub) in subs.iter().enumerate() {
                if k > 0 {
                    out.push('|');
                }
                emit(sub, out);
            }
        }
    }
}
