//! How `validate` writes a verdict: one JSON line, or text lines that start with the
//! position as compilers print it.

use crate::cli::locate::Located;
use crate::cli::output::object_name;
use crate::cli::updates::stuck_or_tolerated;
use crd_audit_engine::Verdict;
use crd_audit_engine::load::positions::Position;
use serde_json::Value;
use std::io::Write;

/// One JSON line a verdict, with the positions of the object and of each error.
pub(super) fn write_json(
    out: &mut impl Write,
    source: &str,
    v: &Verdict,
    at: &Located,
) -> std::io::Result<()> {
    let mut m = serde_json::Map::new();
    m.insert("source".into(), Value::String(source.to_string()));
    m.insert("line".into(), at.object.line.into());
    m.insert("column".into(), at.object.column.into());
    m.extend(crate::cli::output::verdict_json(v));
    if let Some(Value::Array(errors)) = m.get_mut("errors") {
        for (e, p) in errors.iter_mut().zip(&at.errors) {
            if let Value::Object(e) = e {
                e.insert("line".into(), p.line.into());
                e.insert("column".into(), p.column.into());
            }
        }
    }
    serde_json::to_writer(&mut *out, &m)?;
    out.write_all(b"\n")
}

/// One line a finding, starting with `file:line:column:` as compilers print positions.
pub(super) fn write_text(
    out: &mut impl Write,
    file: &str,
    v: &Verdict,
    at: &Located,
) -> std::io::Result<()> {
    let name = object_name(v);
    let pos = |p: &Position| format!("{file}:{}:{}:", p.line, p.column);
    for (f, p) in v.pruned.iter().zip(&at.pruned) {
        writeln!(
            out,
            "{} {name}: warning: unknown field {}",
            pos(p),
            crd_audit_engine::render::quote(f)
        )?;
    }
    if let Some(e) = &v.request_error {
        return writeln!(out, "{} {name}: error: {e}", pos(&at.object));
    }
    for w in &v.warnings {
        writeln!(out, "{} {name}: warning: {w}", pos(&at.object))?;
    }
    if v.errors.is_empty() {
        return writeln!(out, "{} {name}: valid", pos(&at.object));
    }
    for (c, p) in v.errors.iter().zip(&at.errors) {
        writeln!(out, "{} {name}: {c}", pos(p))?;
    }
    if let Some(u) = &v.update {
        writeln!(out, "{} {name}: {}", pos(&at.object), stuck_or_tolerated(u))?;
    }
    Ok(())
}
