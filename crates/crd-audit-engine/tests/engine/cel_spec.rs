//! cel-spec's "simple" conformance tests against our CEL engine in the Kubernetes 1.36
//! environment (a measurement, not a gate: the Kubernetes environment differs from the one
//! the tests assume, e.g. no heterogeneous equality at compile time, no protobuf messages).
//!
//!   CEL_SPEC_DIR=<cel-spec checkout>/tests/simple/testdata \
//!     cargo test -p crd-audit-engine --test engine cel_spec -- --ignored --nocapture
//!
//! prints the number of passing tests of the in-scope files (every test of those files
//! counts; tests needing protobuf messages, containers or unknowns fail). Without
//! `CEL_SPEC_DIR` it fails; it is ignored unless asked for. `CEL_SPEC_VERBOSE=1` lists failures.

use crd_audit_engine::cel::check::{Vars, check};
use crd_audit_engine::cel::decls::CelType;
use crd_audit_engine::cel::eval::Interp;
use crd_audit_engine::cel::parser::parse;
use crd_audit_engine::cel::types::DeclTypes;
use crd_audit_engine::cel::value::{Str, Val};
use std::path::PathBuf;
use std::rc::Rc;

/// The files whose features the Kubernetes environment has.
const IN_SCOPE: [&str; 16] = [
    "basic",
    "comparisons",
    "conversions",
    "fields",
    "fp_math",
    "integer_math",
    "lists",
    "logic",
    "macros",
    "macros2",
    "optionals",
    "parse",
    "plumbing",
    "string",
    "string_ext",
    "timestamps",
];

// ---- a small text-format protobuf reader ----

#[derive(Debug, Clone)]
enum Tp {
    /// A scalar: its token (strings unescaped, as bytes).
    Scalar(Vec<u8>),
    Msg(Vec<(String, Tp)>),
}

impl Tp {
    fn fields<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Tp> + 'a {
        let list: &[(String, Tp)] = match self {
            Tp::Msg(m) => m,
            Tp::Scalar(_) => &[],
        };
        list.iter().filter(move |(k, _)| k == name).map(|(_, v)| v)
    }
    fn get(&self, name: &str) -> Option<&Tp> {
        self.entries()
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }
    fn text(&self) -> Option<String> {
        match self {
            Tp::Scalar(b) => Some(String::from_utf8_lossy(b).into_owned()),
            Tp::Msg(_) => None,
        }
    }
    fn bytes(&self) -> Option<&[u8]> {
        match self {
            Tp::Scalar(b) => Some(b),
            Tp::Msg(_) => None,
        }
    }
    fn str_field(&self, name: &str) -> Option<String> {
        self.get(name).and_then(Tp::text)
    }
    fn flag(&self, name: &str) -> bool {
        self.str_field(name).is_some_and(|v| v == "true")
    }
    fn entries(&self) -> &[(String, Tp)] {
        match self {
            Tp::Msg(m) => m,
            Tp::Scalar(_) => &[],
        }
    }
}

#[derive(Debug, PartialEq)]
enum Tok {
    Punct(u8),
    Str(Vec<u8>),
    Word(String),
}

fn unescape(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 >= b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = b[i + 1];
        i += 2;
        match c {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'v' => out.push(11),
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                let mut n = 1;
                while n < 3 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                    v = v * 8 + u32::from(b[i] - b'0');
                    i += 1;
                    n += 1;
                }
                out.push(v as u8);
            }
            b'x' | b'X' => {
                let mut v = 0u32;
                let mut n = 0;
                while n < 2 && i < b.len() && b[i].is_ascii_hexdigit() {
                    v = v * 16 + (b[i] as char).to_digit(16).unwrap_or(0);
                    i += 1;
                    n += 1;
                }
                out.push(v as u8);
            }
            b'u' | b'U' => {
                let len = if c == b'u' { 4 } else { 8 };
                let hex = std::str::from_utf8(&b[i..(i + len).min(b.len())]).unwrap_or("0");
                i += len;
                let ch = u32::from_str_radix(hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{fffd}');
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            other => out.push(other),
        }
    }
    out
}

fn tokenize(s: &[u8]) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'#' {
            while i < s.len() && s[i] != b'\n' {
                i += 1;
            }
        } else if b"{}:<>[],;".contains(&c) {
            out.push(Tok::Punct(c));
            i += 1;
        } else if c == b'"' || c == b'\'' {
            let mut j = i + 1;
            while j < s.len() && s[j] != c {
                j += if s[j] == b'\\' { 2 } else { 1 };
            }
            out.push(Tok::Str(unescape(&s[i + 1..j.min(s.len())])));
            i = j + 1;
        } else {
            let start = i;
            while i < s.len() && (s[i].is_ascii_alphanumeric() || b"_.+-/".contains(&s[i])) {
                i += 1;
            }
            if i == start {
                i += 1;
                continue;
            }
            out.push(Tok::Word(
                String::from_utf8_lossy(&s[start..i]).into_owned(),
            ));
        }
    }
    out
}

fn parse_msg(toks: &[Tok], i: &mut usize) -> Tp {
    let mut fields = Vec::new();
    while *i < toks.len() {
        let name = match &toks[*i] {
            Tok::Punct(b'}' | b'>') => {
                *i += 1;
                break;
            }
            Tok::Word(w) => w.clone(),
            // `[type.googleapis.com/...]` extension or Any names.
            Tok::Punct(b'[') => {
                let mut n = String::new();
                *i += 1;
                while *i < toks.len() && toks[*i] != Tok::Punct(b']') {
                    if let Tok::Word(w) = &toks[*i] {
                        n.push_str(w);
                    }
                    *i += 1;
                }
                n
            }
            _ => {
                *i += 1;
                continue;
            }
        };
        *i += 1;
        if toks.get(*i) == Some(&Tok::Punct(b':')) {
            *i += 1;
        }
        match toks.get(*i) {
            Some(Tok::Punct(b'{' | b'<')) => {
                *i += 1;
                fields.push((name, parse_msg(toks, i)));
            }
            Some(Tok::Punct(b'[')) => {
                *i += 1;
                while *i < toks.len() && toks[*i] != Tok::Punct(b']') {
                    match &toks[*i] {
                        Tok::Punct(b'{' | b'<') => {
                            *i += 1;
                            fields.push((name.clone(), parse_msg(toks, i)));
                        }
                        Tok::Str(b) => {
                            fields.push((name.clone(), Tp::Scalar(b.clone())));
                            *i += 1;
                        }
                        Tok::Word(w) => {
                            fields.push((name.clone(), Tp::Scalar(w.as_bytes().to_vec())));
                            *i += 1;
                        }
                        _ => *i += 1,
                    }
                }
                *i += 1;
            }
            Some(Tok::Str(_)) => {
                // Adjacent string literals concatenate.
                let mut v = Vec::new();
                while let Some(Tok::Str(b)) = toks.get(*i) {
                    v.extend_from_slice(b);
                    *i += 1;
                }
                fields.push((name, Tp::Scalar(v)));
            }
            Some(Tok::Word(w)) => {
                fields.push((name, Tp::Scalar(w.as_bytes().to_vec())));
                *i += 1;
            }
            _ => {}
        }
        if matches!(toks.get(*i), Some(Tok::Punct(b',' | b';'))) {
            *i += 1;
        }
    }
    Tp::Msg(fields)
}

// ---- values and types ----

fn go_float(s: &str) -> Option<f64> {
    match s.to_ascii_lowercase().as_str() {
        "inf" | "infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
        "nan" => Some(f64::NAN),
        t => t.trim_end_matches('f').parse().ok(),
    }
}

/// A `cel.expr.Value` as a runtime value (`None`: not supported here).
fn value_of(v: &Tp) -> Option<Val<'static>> {
    let (k, x) = v.entries().first()?;
    Some(match k.as_str() {
        "null_value" => Val::Null,
        "bool_value" => Val::Bool(x.text()? == "true"),
        "int64_value" => Val::Int(x.text()?.parse().ok()?),
        "uint64_value" => Val::Uint(x.text()?.parse().ok()?),
        "double_value" => Val::Double(go_float(&x.text()?)?),
        "string_value" => Val::Str(Str::Owned(Rc::from(
            String::from_utf8(x.bytes()?.to_vec()).ok()?.as_str(),
        ))),
        "bytes_value" => Val::Bytes(Rc::from(x.bytes()?)),
        "type_value" => Val::Type(Rc::from(x.text()?.as_str())),
        "list_value" => Val::List(Rc::new(
            x.fields("values")
                .map(value_of)
                .collect::<Option<Vec<_>>>()?,
        )),
        "map_value" => Val::Map(Rc::new(
            x.fields("entries")
                .map(|e| Some((value_of(e.get("key")?)?, value_of(e.get("value")?)?)))
                .collect::<Option<Vec<_>>>()?,
        )),
        _ => return None,
    })
}

fn type_of(t: &Tp) -> Option<CelType> {
    let (k, x) = t.entries().first()?;
    Some(match k.as_str() {
        "primitive" => match x.text()?.as_str() {
            "BOOL" => CelType::Bool,
            "INT64" => CelType::Int,
            "UINT64" => CelType::Uint,
            "DOUBLE" => CelType::Double,
            "STRING" => CelType::String,
            "BYTES" => CelType::Bytes,
            _ => return None,
        },
        "dyn" => CelType::Dyn,
        "null" => CelType::Null,
        "list_type" => CelType::list(type_of(x.get("elem_type")?)?),
        "map_type" => CelType::map(type_of(x.get("key_type")?)?, type_of(x.get("value_type")?)?),
        "message_type" | "well_known" => match x.text()?.as_str() {
            "google.protobuf.Duration" | "DURATION" => CelType::Duration,
            "google.protobuf.Timestamp" | "TIMESTAMP" => CelType::Timestamp,
            _ => return None,
        },
        _ => return None,
    })
}

fn same(got: &Val, want: &Val, types: &DeclTypes) -> bool {
    match (got, want) {
        (Val::Null, Val::Null) => true,
        (Val::Bool(a), Val::Bool(b)) => a == b,
        (Val::Int(a), Val::Int(b)) => a == b,
        (Val::Uint(a), Val::Uint(b)) => a == b,
        (Val::Double(a), Val::Double(b)) => a == b || (a.is_nan() && b.is_nan()),
        (Val::Str(a), Val::Str(b)) => a.as_str() == b.as_str(),
        (Val::Bytes(a), Val::Bytes(b)) => a == b,
        (Val::Type(a), Val::Type(b)) => a == b,
        (_, Val::List(w)) => match got.list_items(types) {
            Some(g) => g.len() == w.len() && g.iter().zip(w.iter()).all(|(x, y)| same(x, y, types)),
            None => false,
        },
        (_, Val::Map(w)) => match got.map_entries(types) {
            Some(g) => {
                g.len() == w.len()
                    && w.iter().all(|(wk, wv)| {
                        g.iter()
                            .any(|(gk, gv)| same(gk, wk, types) && same(gv, wv, types))
                    })
            }
            None => false,
        },
        _ => false,
    }
}

/// Runs one test: `Err` says why it fails.
fn run(t: &Tp) -> Result<(), String> {
    let src = t.str_field("expr").ok_or("no expr")?;
    if t.str_field("container").is_some_and(|c| !c.is_empty()) {
        return Err("container".into());
    }
    let types = DeclTypes::empty();
    let mut extra = Vec::new();
    for d in t.fields("type_env") {
        let name = d.str_field("name").ok_or("decl")?;
        let ty = d
            .get("ident")
            .and_then(|i| i.get("type"))
            .and_then(type_of)
            .ok_or_else(|| format!("unsupported declaration of {name}"))?;
        extra.push((name, ty));
    }
    let mut bindings: Vec<(String, Val<'static>)> = Vec::new();
    for b in t.fields("bindings") {
        let key = b.str_field("key").ok_or("binding")?;
        let v = b
            .get("value")
            .and_then(|v| v.get("value"))
            .and_then(value_of)
            .ok_or_else(|| format!("unsupported binding of {key}"))?;
        bindings.push((key, v));
    }
    let expr = parse(&src).map_err(|e| format!("parse: {e:?}"))?;
    let want_error = t.get("eval_error").is_some() || t.get("any_eval_errors").is_some();
    if t.get("unknown").is_some() || t.get("any_unknowns").is_some() {
        return Err("unknowns".into());
    }
    if !t.flag("disable_check") {
        let vars = Vars {
            self_node: types.root(),
            old_self: false,
            optional_old_self: false,
            extra,
        };
        let checked = check(&expr, &types, &vars).map_err(|e| format!("check: {e:?}"))?;
        if let Some(e) = checked.program_error {
            return if want_error {
                Ok(())
            } else {
                Err(format!("program: {e}"))
            };
        }
        if t.flag("check_only") {
            return Ok(());
        }
    }
    let mut it = Interp::new(&types, u64::MAX);
    let mut env: Vec<(&str, Val)> = bindings
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    let got = it.eval(&expr, &mut env);
    let got = match got {
        Ok(Val::Err(e)) => Err(e.to_string()),
        Ok(v) => Ok(v),
        Err(e) => Err(e.0),
    };
    if want_error {
        return match got {
            Err(_) => Ok(()),
            Ok(v) => Err(format!("want an error, got {v:?}")),
        };
    }
    let want = match t
        .get("value")
        .or_else(|| t.get("typed_result").and_then(|r| r.get("result")))
    {
        Some(v) => value_of(v).ok_or("unsupported expected value")?,
        None => Val::Bool(true),
    };
    match got {
        Ok(v) if same(&v, &want, &types) => Ok(()),
        Ok(v) => Err(format!("got {v:?}, want {want:?}")),
        Err(e) => Err(format!("error {e}, want {want:?}")),
    }
}

/// A measurement, not a gate: cel-spec's files are not part of this repository, so the test
/// runs only when asked (`cargo test -p crd-audit-engine --test engine cel_spec -- --ignored`) and then needs them.
#[test]
#[ignore = "measurement: needs CEL_SPEC_DIR (cel-spec's tests/simple/testdata)"]
fn cel_spec_simple_tests() {
    let dir = std::env::var_os("CEL_SPEC_DIR")
        .map(PathBuf::from)
        .expect("set CEL_SPEC_DIR to cel-spec's tests/simple/testdata");
    let verbose = std::env::var_os("CEL_SPEC_VERBOSE").is_some();
    let (mut total, mut pass) = (0, 0);
    for file in IN_SCOPE {
        let Ok(text) = std::fs::read(dir.join(format!("{file}.textproto"))) else {
            eprintln!("cel-spec conformance: {file}.textproto not found");
            continue;
        };
        let toks = tokenize(&text);
        let root = parse_msg(&toks, &mut 0);
        let (mut ft, mut fp) = (0, 0);
        for section in root.fields("section") {
            let sname = section.str_field("name").unwrap_or_default();
            for t in section.fields("test") {
                ft += 1;
                // Tests run in their own thread-free sandbox: a panic is a failure.
                let r = std::panic::catch_unwind(|| run(t)).unwrap_or_else(|_| Err("panic".into()));
                match r {
                    Ok(()) => fp += 1,
                    Err(why) if verbose => {
                        let name = t.str_field("name").unwrap_or_default();
                        eprintln!("FAIL {file}/{sname}/{name}: {why}");
                    }
                    Err(_) => {}
                }
            }
        }
        eprintln!("cel-spec conformance: {file}: {fp}/{ft}");
        total += ft;
        pass += fp;
    }
    eprintln!("cel-spec conformance: {pass}/{total} tests pass");
}
