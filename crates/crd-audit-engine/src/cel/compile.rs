//! Compiling a validation rule or message expression as kube-apiserver does: parse, type
//! check in the rule's environment, require the result type, and create the program.

use super::ast::Expr;
use super::check::{TKind, Typed, Vars, check_in};
use super::decls::CelType;
use super::env::Env;
use super::parser::{ParseError, parse_in, render_errors};
use super::types::{DeclTypes, TypeId};

/// A compiled expression.
#[derive(Debug)]
pub struct Program {
    pub expr: Expr,
    /// Whether `oldSelf` is referred to.
    pub uses_old_self: bool,
    /// The checked expression (for the cost estimate).
    pub typed: Typed,
    /// The calls the checker resolved to one overload: offset, function, overload. cel-go
    /// runs such a call through that overload only (with its type guard). Sorted by offset.
    pub single_overloads: Vec<(u32, String, &'static str)>,
}

/// Why an expression did not compile.
#[derive(Debug, Clone, PartialEq)]
pub enum CompileError {
    /// Parse or type-check errors, rendered as cel-go renders them.
    Compilation(String),
    /// The result type is not the one required.
    ResultType,
    /// Program creation failed (constant folding).
    Instantiation(String),
}

impl CompileError {
    /// The detail kube-apiserver reports for a rule.
    pub fn rule_detail(&self) -> String {
        match self {
            CompileError::Compilation(m) => format!("compilation failed: {m}"),
            CompileError::ResultType => "cel expression must evaluate to a bool".into(),
            CompileError::Instantiation(m) => format!("program instantiation failed: {m}"),
        }
    }

    /// The detail kube-apiserver reports for a message expression.
    pub fn message_expression_detail(&self) -> String {
        match self {
            CompileError::Compilation(m) => format!("messageExpression compilation failed: {m}"),
            CompileError::ResultType => "messageExpression must evaluate to a string".into(),
            CompileError::Instantiation(m) => {
                format!("messageExpression instantiation failed: {m}")
            }
        }
    }
}

/// Compiles `src` in the newest environment with `self` typed by the schema node `node`;
/// `want_string` for message expressions (which must give a string), otherwise a bool is
/// required.
#[cfg_attr(not(feature = "internals"), allow(dead_code))]
pub fn compile(
    src: &str,
    types: &DeclTypes,
    node: TypeId,
    optional_old_self: bool,
    want_string: bool,
) -> Result<Program, CompileError> {
    compile_in(
        src,
        types,
        node,
        optional_old_self,
        want_string,
        Env::LATEST,
    )
}

/// [`compile`] in the environment `env`.
pub fn compile_in(
    src: &str,
    types: &DeclTypes,
    node: TypeId,
    optional_old_self: bool,
    want_string: bool,
    env: Env,
) -> Result<Program, CompileError> {
    let expr = parse_in(src, env).map_err(|e| CompileError::Compilation(render_errors(src, &e)))?;
    let vars = Vars {
        self_node: node,
        old_self: true,
        optional_old_self,
        extra: Vec::new(),
    };
    let checked = check_in(&expr, types, &vars, env).map_err(|errs| {
        let errs: Vec<ParseError> = errs
            .into_iter()
            .map(|e| ParseError {
                offset: e.offset,
                message: e.message,
            })
            .collect();
        CompileError::Compilation(render_errors(src, &errs))
    })?;
    let want = if want_string {
        CelType::String
    } else {
        CelType::Bool
    };
    if checked.result != want {
        return Err(CompileError::ResultType);
    }
    if let Some(e) = checked.program_error {
        return Err(CompileError::Instantiation(e));
    }
    let uses_old_self = expr.references("oldSelf");
    let mut single_overloads: Vec<(u32, String, &'static str)> = checked
        .typed
        .nodes
        .iter()
        .filter_map(|n| match &n.kind {
            TKind::Call {
                function,
                overloads,
                ..
            } if overloads.len() == 1 => Some((n.offset, function.clone(), overloads[0])),
            _ => None,
        })
        .collect();
    // Sorted by offset: the interpreter looks calls up by binary search.
    single_overloads.sort_by_key(|(offset, _, _)| *offset);
    Ok(Program {
        expr,
        uses_old_self,
        typed: checked.typed,
        single_overloads,
    })
}
