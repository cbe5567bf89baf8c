//! The type checker: cel-go's checker over a Kubernetes CEL environment ([`Env`]: the
//! declarations of [`super::decls`] it has), with `self`/`oldSelf` typed by the schema as
//! kube-apiserver declares them, then the AST validators the environment enables (duration,
//! timestamp and regex literals, homogeneous aggregate literals, `string.format` strings)
//! and the constant folding that makes program creation fail.
//!
//! Macros are checked in the form cel-go expands them into (comprehensions over an
//! accumulator `@result`), so the types and errors are cel-go's.
//!
//! Cut as cel-go's checker is: [`checker`] (`checker/checker.go`, `checker/env.go`),
//! [`macros`] (the expansions of `parser/macro.go` as the checker sees them),
//! [`assignability`] (`checker/types.go`, `checker/mapping.go`), [`validators`]
//! (`cel/validator.go`). This module holds the checker's inputs and outputs and [`check`].

use super::ast::{Expr, ExprKind, Literal, Loop};
use super::decls::{CelType, Overload, functions_in};
use super::env::{Env, Feature};
use super::parser::{ACCUMULATOR, RESERVED};
use super::types::{DeclTypes, Kind, TypeId, escape_field};
use std::collections::HashMap;
use std::sync::Arc as Rc;

mod assignability;
mod checker;
mod macros;
mod validators;

use assignability::*;
use checker::Checker;
use macros::lower;
use validators::Validators;

/// A compile error: byte offset and message.
#[derive(Debug, PartialEq, Clone)]
pub struct CheckError {
    pub offset: usize,
    pub message: String,
}

/// The outcome of checking an expression.
#[derive(Debug)]
pub struct Checked {
    pub result: CelType,
    /// Errors of program creation (`program instantiation failed: ...`).
    pub program_error: Option<String>,
    /// The checked expression, as cel-go's checker leaves it.
    pub typed: Typed,
}

/// A checked expression as cel-go's checker leaves it (what its cost estimator reads):
/// macros expanded into comprehensions, qualified names resolved into identifiers and
/// global calls, `a.?b` as a call of `_?._`, every node with its final type (type parameters
/// bound or `dyn`) and every call with the overloads its argument types match.
#[derive(Debug, Clone, Default)]
pub struct Typed {
    pub nodes: Vec<TNode>,
    pub root: usize,
}

/// A node of a [`Typed`] expression; children are indices into [`Typed::nodes`].
#[derive(Debug, Clone)]
pub struct TNode {
    pub kind: TKind,
    pub ty: CelType,
    /// The source offset of the expression the node comes from (a macro's for the nodes of
    /// its expansion).
    pub offset: u32,
}

#[derive(Debug, Clone)]
pub enum TKind {
    Lit(Literal),
    Ident(String),
    Select {
        operand: usize,
        field: String,
        test_only: bool,
    },
    Call {
        function: String,
        target: Option<usize>,
        args: Vec<usize>,
        overloads: Vec<&'static str>,
    },
    List(Vec<usize>),
    Map(Vec<(usize, usize)>),
    Struct(Vec<usize>),
    Compr {
        range: usize,
        var: String,
        var2: Option<String>,
        accu: String,
        init: usize,
        cond: usize,
        step: usize,
        result: usize,
    },
}

/// The root type name of a rule's `self` (upstream adds the nanoseconds of the creation
/// time; messages are compared without them).
pub const SELF_TYPE: &str = "selfType0";

/// The variables a rule sees.
pub struct Vars {
    /// The schema node of `self`.
    pub self_node: TypeId,
    /// Whether `oldSelf` is declared (rules; not message expressions' own checks).
    pub old_self: bool,
    /// `oldSelf` is an optional (`optionalOldSelf: true`).
    pub optional_old_self: bool,
    /// Other variables, with their types (none in Kubernetes rules).
    pub extra: Vec<(String, CelType)>,
}

/// The CEL type of a schema node, with object types named from `names`.
pub fn type_of_node(types: &DeclTypes, names: &HashMap<TypeId, Rc<str>>, t: TypeId) -> CelType {
    let n = types.node(t);
    match n.kind {
        Kind::Object | Kind::Any => {
            let name = names.get(&t).cloned().unwrap_or_else(|| "object".into());
            CelType::Struct(name, Some(t))
        }
        Kind::Map => CelType::map(
            CelType::String,
            n.elem
                .map_or(CelType::Dyn, |e| type_of_node(types, names, e)),
        ),
        Kind::List => CelType::list(
            n.elem
                .map_or(CelType::Dyn, |e| type_of_node(types, names, e)),
        ),
        Kind::String => CelType::String,
        Kind::Int => CelType::Int,
        Kind::Double => CelType::Double,
        Kind::Bool => CelType::Bool,
        Kind::IntOrString => CelType::Dyn,
        Kind::Bytes => CelType::Bytes,
        Kind::Duration => CelType::Duration,
        Kind::Timestamp => CelType::Timestamp,
    }
}

/// The names kube-apiserver gives the object types under a rule's node (`selfType.a.@idx`).
pub fn object_names(types: &DeclTypes, root: TypeId) -> HashMap<TypeId, Rc<str>> {
    let mut out = HashMap::new();
    fn walk(types: &DeclTypes, t: TypeId, name: String, out: &mut HashMap<TypeId, Rc<str>>) {
        let n = types.node(t);
        match n.kind {
            Kind::Object | Kind::Any => {
                for (k, &c) in &n.fields {
                    if let Some(esc) = escape_field(k) {
                        walk(types, c, format!("{name}.{esc}"), out);
                    }
                }
                out.insert(t, name.into());
            }
            Kind::Map => {
                if let Some(e) = n.elem {
                    walk(types, e, format!("{name}.@elem"), out);
                }
            }
            Kind::List => {
                if let Some(e) = n.elem {
                    walk(types, e, format!("{name}.@idx"), out);
                }
            }
            _ => {}
        }
    }
    walk(types, root, SELF_TYPE.to_string(), &mut out);
    out
}

/// Checks an expression in the newest environment: its type, or the errors (type-check
/// errors, then validator errors).
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
pub fn check(expr: &Expr, types: &DeclTypes, vars: &Vars) -> Result<Checked, Vec<CheckError>> {
    check_in(expr, types, vars, Env::LATEST)
}

/// Checks an expression in the environment `env` (its functions, type names, checker
/// behaviours and AST validators).
pub fn check_in(
    expr: &Expr,
    types: &DeclTypes,
    vars: &Vars,
    env: Env,
) -> Result<Checked, Vec<CheckError>> {
    let names = object_names(types, vars.self_node);
    let self_ty = type_of_node(types, &names, vars.self_node);
    let mut globals = vec![("self".to_string(), self_ty.clone())];
    if vars.old_self {
        let old = if vars.optional_old_self {
            CelType::optional(self_ty)
        } else {
            self_ty
        };
        globals.push(("oldSelf".to_string(), old));
    }
    globals.extend(vars.extra.iter().cloned());
    let mut c = Checker {
        types,
        env,
        names,
        globals,
        scopes: Vec::new(),
        mapping: HashMap::new(),
        counter: 0,
        errors: Vec::new(),
        node_types: HashMap::new(),
        undefined_types: Vec::new(),
        tree: Vec::new(),
    };
    let (t, root) = c.expr(expr);
    let result = c.substitute(&t, true);
    if !c.errors.is_empty() {
        return Err(c.errors);
    }
    let mut nodes = std::mem::take(&mut c.tree);
    for n in &mut nodes {
        n.ty = c.substitute(&n.ty, true);
    }
    let typed = Typed { nodes, root };
    let final_types: HashMap<*const Expr, CelType> = c
        .node_types
        .iter()
        .map(|(k, v)| (*k, c.substitute(v, true)))
        .collect();
    let mut v = Validators {
        types: &final_types,
        env,
        errors: Vec::new(),
    };
    v.walk(expr, false);
    if !v.errors.is_empty() {
        return Err(v.errors);
    }
    let program_error = c
        .undefined_types
        .first()
        .map(|n| format!("reference to undefined type: {n}"))
        .or_else(|| super::fold::constant_errors(expr));
    Ok(Checked {
        result,
        program_error,
        typed,
    })
}
