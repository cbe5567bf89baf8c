//! What cel-go does when it creates a program with `OptOptimize`: conversions of constants
//! (`int('x')`, `string(b'\xff')`...) are evaluated, and constant regular expressions of
//! `find`/`findAll` are compiled; an error there fails program creation
//! (`program instantiation failed: ...`).

use super::ast::{Expr, ExprKind, Literal};
use super::eval::{Env, Interp, go_type_name};
use super::types::DeclTypes;
use super::value::Val;
use std::sync::OnceLock;

const CONVERSIONS: [&str; 10] = [
    "bool",
    "bytes",
    "double",
    "duration",
    "dyn",
    "int",
    "string",
    "timestamp",
    "type",
    "uint",
];

/// Identifiers naming types (no schema variable is named like these).
const TYPE_NAMES: [&str; 11] = [
    "bool",
    "bytes",
    "double",
    "int",
    "string",
    "uint",
    "null_type",
    "list",
    "map",
    "type",
    "optional_type",
];

fn no_types() -> &'static DeclTypes {
    static EMPTY: OnceLock<DeclTypes> = OnceLock::new();
    EMPTY.get_or_init(DeclTypes::empty)
}

/// Evaluates `f(literal)` (the duration and timestamp literal validators).
pub fn eval_conversion(f: &str, lit: &Literal) -> Result<(), String> {
    let e = Expr::new(
        0,
        ExprKind::Call {
            function: f.to_string(),
            target: None,
            args: vec![Expr::new(0, ExprKind::Lit(lit.clone()))],
        },
    );
    let mut it = Interp::new(no_types(), u64::MAX);
    let mut env: Env = Vec::new();
    it.eval(&e, &mut env).map(|_| ()).map_err(|e| e.0)
}

/// The first error of program creation, in planning order.
pub fn constant_errors(e: &Expr) -> Option<String> {
    fold(e).err()
}

/// Whether the expression is a constant after folding, or the planning error.
fn fold(e: &Expr) -> Result<bool, String> {
    match &e.kind {
        ExprKind::Lit(_) => Ok(true),
        // Type names are constants (type values).
        ExprKind::Ident(n) => Ok(TYPE_NAMES.contains(&n.trim_start_matches('.'))),
        ExprKind::List { elements, .. } => {
            let mut all = true;
            for x in elements {
                all &= fold(x)?;
            }
            Ok(all)
        }
        ExprKind::Map { entries } => {
            let mut all = true;
            for (k, v, _) in entries {
                all &= fold(k)?;
                all &= fold(v)?;
            }
            Ok(all)
        }
        ExprKind::Select { operand, .. } => {
            fold(operand)?;
            Ok(false)
        }
        ExprKind::Struct { fields, .. } => {
            for (_, v, _) in fields {
                fold(v)?;
            }
            Ok(false)
        }
        ExprKind::Loop {
            range,
            filter,
            transform,
            ..
        } => {
            fold(range)?;
            if let Some(p) = filter {
                fold(p)?;
            }
            if let Some(t) = transform {
                fold(t)?;
            }
            Ok(false)
        }
        ExprKind::Call {
            function,
            target,
            args,
        } => {
            if let Some(t) = target {
                fold(t)?;
            }
            let mut consts = Vec::with_capacity(args.len());
            for a in args {
                consts.push(fold(a)?);
            }
            // An index that is a constant must be one a qualifier can be made of.
            if target.is_none()
                && matches!(function.as_str(), "_[_]" | "_[?_]")
                && consts.get(1) == Some(&true)
            {
                let mut it = Interp::new(no_types(), u64::MAX);
                let mut env: Env = Vec::new();
                let v = it.eval(&args[1], &mut env).map_err(|e| e.0)?;
                if !matches!(
                    v,
                    Val::Str(_) | Val::Int(_) | Val::Uint(_) | Val::Bool(_) | Val::Double(_)
                ) {
                    return Err(format!("invalid qualifier type: {}", go_type_name(&v)));
                }
            }
            if target.is_none()
                && args.len() == 1
                && consts[0]
                && CONVERSIONS.contains(&function.as_str())
            {
                let mut it = Interp::new(no_types(), u64::MAX);
                let mut env: Env = Vec::new();
                return match it.eval(e, &mut env) {
                    Ok(_) => Ok(true),
                    Err(err) => Err(err.0),
                };
            }
            if target.is_some()
                && matches!(function.as_str(), "find" | "findAll" | "matches")
                && let Some(Expr {
                    kind: ExprKind::Lit(Literal::String(p)),
                    ..
                }) = args.first()
                && let Err(err) = crate::go::regexp::compile(p)
            {
                return Err(err.to_string());
            }
            Ok(false)
        }
    }
}
