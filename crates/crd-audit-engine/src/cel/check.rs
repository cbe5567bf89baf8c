//! The type checker: cel-go's checker over the Kubernetes 1.36 environment (the
//! declarations of [`super::decls`]), with `self`/`oldSelf` typed by the schema as
//! kube-apiserver declares them, then the AST validators the environment enables (duration,
//! timestamp and regex literals, homogeneous aggregate literals, `string.format` strings)
//! and the constant folding that makes program creation fail.
//!
//! Macros are checked in the form cel-go expands them into (comprehensions over an
//! accumulator `@result`), so the types and errors are cel-go's.

use super::ast::{Expr, ExprKind, Literal, Loop};
use super::decls::{CelType, Overload, functions};
use super::parser::{ACCUMULATOR, RESERVED};
use super::types::{DeclTypes, Kind, TypeId, escape_field};
use std::collections::HashMap;
use std::sync::Arc as Rc;

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

/// Checks an expression: its type, or the errors (type-check errors, then validator errors).
pub fn check(expr: &Expr, types: &DeclTypes, vars: &Vars) -> Result<Checked, Vec<CheckError>> {
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

/// Protocol buffer message types cel-go's checker knows but the Kubernetes runtime does not.
const PROTO_MESSAGES: [&str; 15] = [
    "google.protobuf.Any",
    "google.protobuf.BoolValue",
    "google.protobuf.BytesValue",
    "google.protobuf.DoubleValue",
    "google.protobuf.FloatValue",
    "google.protobuf.Int32Value",
    "google.protobuf.Int64Value",
    "google.protobuf.ListValue",
    "google.protobuf.StringValue",
    "google.protobuf.Struct",
    "google.protobuf.UInt32Value",
    "google.protobuf.UInt64Value",
    "google.protobuf.Value",
    "google.protobuf.Empty",
    "google.protobuf.FieldMask",
];

struct Checker<'t> {
    types: &'t DeclTypes,
    names: HashMap<TypeId, Rc<str>>,
    globals: Vec<(String, CelType)>,
    /// Comprehension variables, innermost last.
    scopes: Vec<(String, CelType)>,
    mapping: HashMap<Rc<str>, CelType>,
    counter: usize,
    errors: Vec<CheckError>,
    node_types: HashMap<*const Expr, CelType>,
    undefined_types: Vec<String>,
    tree: Vec<TNode>,
}

/// A node of a macro's expansion: the user's sub-expressions and the nodes cel-go adds
/// (at the macro call's position).
enum Low<'e> {
    Real(&'e Expr),
    Ident(String),
    Lit(Literal),
    Call(&'static str, Vec<Low<'e>>),
    Member(&'static str, Box<Low<'e>>, Vec<Low<'e>>),
    List(Vec<Low<'e>>),
    EmptyMap,
    Compr(Box<Compr<'e>>),
}

struct Compr<'e> {
    range: Low<'e>,
    var: String,
    var2: Option<String>,
    accu: String,
    init: Low<'e>,
    cond: Low<'e>,
    step: Low<'e>,
    result: Low<'e>,
}

fn accu<'e>() -> Low<'e> {
    Low::Ident(ACCUMULATOR.to_string())
}

/// cel-go's expansion of a macro node.
fn lower<'e>(
    kind: Loop,
    var: &str,
    var2: Option<&str>,
    range: &'e Expr,
    filter: Option<&'e Expr>,
    transform: Option<&'e Expr>,
) -> Compr<'e> {
    let real = |e: Option<&'e Expr>| e.map_or(Low::Lit(Literal::Null), Low::Real);
    let comp = |init: Low<'e>, cond: Low<'e>, step: Low<'e>, result: Low<'e>| Compr {
        range: Low::Real(range),
        var: var.to_string(),
        var2: var2.map(str::to_string),
        accu: ACCUMULATOR.to_string(),
        init,
        cond,
        step,
        result,
    };
    let filtered = |step: Low<'e>| match filter {
        Some(p) => Low::Call("_?_:_", vec![Low::Real(p), step, accu()]),
        None => step,
    };
    match kind {
        Loop::All => comp(
            Low::Lit(Literal::Bool(true)),
            Low::Call("@not_strictly_false", vec![accu()]),
            Low::Call("_&&_", vec![accu(), real(filter)]),
            accu(),
        ),
        Loop::Exists => comp(
            Low::Lit(Literal::Bool(false)),
            Low::Call("@not_strictly_false", vec![Low::Call("!_", vec![accu()])]),
            Low::Call("_||_", vec![accu(), real(filter)]),
            accu(),
        ),
        Loop::ExistsOne => comp(
            Low::Lit(Literal::Int(0)),
            Low::Lit(Literal::Bool(true)),
            Low::Call(
                "_?_:_",
                vec![
                    real(filter),
                    Low::Call("_+_", vec![accu(), Low::Lit(Literal::Int(1))]),
                    accu(),
                ],
            ),
            Low::Call("_==_", vec![accu(), Low::Lit(Literal::Int(1))]),
        ),
        Loop::Map | Loop::TransformList => comp(
            Low::List(Vec::new()),
            Low::Lit(Literal::Bool(true)),
            filtered(Low::Call(
                "_+_",
                vec![accu(), Low::List(vec![real(transform)])],
            )),
            accu(),
        ),
        Loop::Filter => comp(
            Low::List(Vec::new()),
            Low::Lit(Literal::Bool(true)),
            filtered(Low::Call(
                "_+_",
                vec![accu(), Low::List(vec![Low::Ident(var.to_string())])],
            )),
            accu(),
        ),
        Loop::TransformMap => comp(
            Low::EmptyMap,
            Low::Lit(Literal::Bool(true)),
            filtered(Low::Call(
                "cel.@mapInsert",
                vec![accu(), Low::Ident(var.to_string()), real(transform)],
            )),
            accu(),
        ),
        Loop::TransformMapEntry => comp(
            Low::EmptyMap,
            Low::Lit(Literal::Bool(true)),
            filtered(Low::Call("cel.@mapInsert", vec![accu(), real(transform)])),
            accu(),
        ),
        Loop::OptMap | Loop::OptFlatMap => {
            let is_ident = matches!(range.kind, ExprKind::Ident(_));
            let target = || {
                if is_ident {
                    Low::Real(range)
                } else {
                    Low::Ident("@target".into())
                }
            };
            let bound = Low::Compr(Box::new(Compr {
                range: Low::List(Vec::new()),
                var: "#unused".into(),
                var2: None,
                accu: var.to_string(),
                init: Low::Member("value", Box::new(target()), Vec::new()),
                cond: Low::Lit(Literal::Bool(false)),
                step: Low::Ident(var.to_string()),
                result: real(transform),
            }));
            let mapped = if kind == Loop::OptMap {
                Low::Call("optional.of", vec![bound])
            } else {
                bound
            };
            let res = Low::Call(
                "_?_:_",
                vec![
                    Low::Member("hasValue", Box::new(target()), Vec::new()),
                    mapped,
                    Low::Call("optional.none", Vec::new()),
                ],
            );
            if is_ident {
                // A comprehension binding nothing, returning `res`.
                Compr {
                    range: Low::List(Vec::new()),
                    var: "#unused".into(),
                    var2: None,
                    accu: "#none".into(),
                    init: Low::Lit(Literal::Null),
                    cond: Low::Lit(Literal::Bool(false)),
                    step: Low::Lit(Literal::Null),
                    result: res,
                }
            } else {
                Compr {
                    range: Low::List(Vec::new()),
                    var: "#unused".into(),
                    var2: None,
                    accu: "@target".into(),
                    init: Low::Real(range),
                    cond: Low::Lit(Literal::Bool(false)),
                    step: Low::Ident("@target".into()),
                    result: res,
                }
            }
        }
        Loop::SortBy => {
            let input = "@__sortBy_input__";
            let mapped = Low::Compr(Box::new(Compr {
                range: Low::Ident(input.into()),
                var: var.to_string(),
                var2: None,
                accu: ACCUMULATOR.to_string(),
                init: Low::List(Vec::new()),
                cond: Low::Lit(Literal::Bool(true)),
                step: Low::Call("_+_", vec![accu(), Low::List(vec![real(transform)])]),
                result: accu(),
            }));
            Compr {
                range: Low::List(Vec::new()),
                var: "#unused".into(),
                var2: None,
                accu: input.into(),
                init: Low::Real(range),
                cond: Low::Lit(Literal::Bool(false)),
                step: Low::Ident(input.into()),
                result: Low::Member(
                    "@sortByAssociatedKeys",
                    Box::new(Low::Ident(input.into())),
                    vec![mapped],
                ),
            }
        }
    }
}

fn literal_type(l: &Literal) -> CelType {
    match l {
        Literal::Null => CelType::Null,
        Literal::Bool(_) => CelType::Bool,
        Literal::Int(_) => CelType::Int,
        Literal::Uint(_) => CelType::Uint,
        Literal::Double(_) => CelType::Double,
        Literal::String(_) => CelType::String,
        Literal::Bytes(_) => CelType::Bytes,
    }
}

fn is_dyn(t: &CelType) -> bool {
    matches!(t, CelType::Dyn)
}

fn is_dyn_or_error(t: &CelType) -> bool {
    matches!(t, CelType::Dyn | CelType::Error)
}

/// `t.IsAssignableType(from)` of cel-go's types.
fn type_accepts(t: &CelType, from: &CelType) -> bool {
    if t == from || matches!(t, CelType::Dyn | CelType::Param(_)) {
        return true;
    }
    if t.kind() != from.kind() || t.type_name() != from.type_name() {
        return false;
    }
    let (a, b) = (t.params(), from.params());
    a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| type_accepts(x, y))
}

fn nullable(t: &CelType) -> bool {
    matches!(
        t,
        CelType::Opaque(..) | CelType::Struct(..) | CelType::Duration | CelType::Timestamp
    ) || type_accepts(t, &CelType::Null)
}

fn is_equal_or_less_specific(t1: &CelType, t2: &CelType) -> bool {
    if matches!(t1, CelType::Dyn | CelType::Param(_)) {
        return true;
    }
    if matches!(t2, CelType::Dyn | CelType::Param(_)) {
        return false;
    }
    if t1.kind() != t2.kind() {
        return false;
    }
    match (t1, t2) {
        (CelType::Opaque(n1, p1), CelType::Opaque(n2, p2)) => {
            n1 == n2
                && p1.len() == p2.len()
                && p1
                    .iter()
                    .zip(p2)
                    .all(|(a, b)| is_equal_or_less_specific(a, b))
        }
        (CelType::List(a), CelType::List(b)) => is_equal_or_less_specific(a, b),
        (CelType::Map(k1, v1), CelType::Map(k2, v2)) => {
            is_equal_or_less_specific(k1, k2) && is_equal_or_less_specific(v1, v2)
        }
        (CelType::Type(_), CelType::Type(_)) => true,
        _ => t1 == t2,
    }
}

fn most_general(t1: &CelType, t2: &CelType) -> CelType {
    if is_equal_or_less_specific(t1, t2) {
        t1.clone()
    } else {
        t2.clone()
    }
}

type Mapping = HashMap<Rc<str>, CelType>;

fn find<'m>(m: &'m Mapping, t: &CelType) -> Option<&'m CelType> {
    match t {
        CelType::Param(n) => m.get(n),
        _ => None,
    }
}

fn not_referenced_in(m: &Mapping, t: &CelType, within: &CelType) -> bool {
    if t == within {
        return false;
    }
    match within {
        CelType::Param(_) => match find(m, within) {
            None => true,
            Some(sub) => {
                let sub = sub.clone();
                not_referenced_in(m, t, &sub)
            }
        },
        CelType::Opaque(..) | CelType::List(_) | CelType::Map(..) | CelType::Type(_) => within
            .params()
            .into_iter()
            .all(|p| not_referenced_in(m, t, p)),
        _ => true,
    }
}

fn valid_substitution(m: &mut Mapping, t1: &CelType, t2: &CelType) -> (bool, bool) {
    if t1.kind() == t2.kind() && t1 == t2 {
        return (true, true);
    }
    if let Some(sub) = find(m, t2).cloned() {
        if t1.kind() == sub.kind() && *t1 == sub {
            return (true, true);
        }
        if assignable(m, t1, &sub) {
            let new = most_general(t1, &sub);
            if not_referenced_in(m, t2, &new)
                && let CelType::Param(n) = t2
            {
                m.insert(n.clone(), new);
            }
            return (true, true);
        }
        return (false, true);
    }
    if not_referenced_in(m, t2, t1) {
        if let CelType::Param(n) = t2 {
            m.insert(n.clone(), t1.clone());
        }
        return (true, false);
    }
    (false, false)
}

/// cel-go's `internalIsAssignable`: whether `t1` is assignable to `t2`, binding type
/// parameters in `m`.
fn assignable(m: &mut Mapping, t1: &CelType, t2: &CelType) -> bool {
    if matches!(t2, CelType::Param(_)) {
        let (valid, has_sub) = valid_substitution(m, t1, t2);
        if valid {
            return true;
        }
        if has_sub {
            return false;
        }
    }
    if matches!(t1, CelType::Param(_)) {
        return valid_substitution(m, t2, t1).0;
    }
    if is_dyn_or_error(t1) || is_dyn_or_error(t2) {
        return true;
    }
    if matches!(t1, CelType::Null) {
        return nullable(t2);
    }
    if matches!(t2, CelType::Null) {
        return nullable(t1);
    }
    match t1 {
        CelType::Bool
        | CelType::Bytes
        | CelType::Double
        | CelType::Int
        | CelType::String
        | CelType::Uint
        | CelType::Duration
        | CelType::Timestamp
        | CelType::Struct(..) => type_accepts(t2, t1),
        CelType::Type(_) => matches!(t2, CelType::Type(_)),
        CelType::Opaque(..) | CelType::List(_) | CelType::Map(..) => {
            t1.kind() == t2.kind()
                && t1.type_name() == t2.type_name()
                && assignable_list(m, &t1.params(), &t2.params())
        }
        _ => false,
    }
}

fn assignable_list(m: &mut Mapping, l1: &[&CelType], l2: &[&CelType]) -> bool {
    l1.len() == l2.len() && l1.iter().zip(l2).all(|(a, b)| assignable(m, a, b))
}

fn substitute_in(m: &Mapping, t: &CelType, to_dyn: bool) -> CelType {
    if let Some(sub) = find(m, t) {
        return substitute_in(m, sub, to_dyn);
    }
    match t {
        CelType::Param(_) if to_dyn => CelType::Dyn,
        CelType::Opaque(n, p) => CelType::Opaque(
            n.clone(),
            p.iter().map(|x| substitute_in(m, x, to_dyn)).collect(),
        ),
        CelType::List(e) => CelType::list(substitute_in(m, e, to_dyn)),
        CelType::Map(k, v) => {
            CelType::map(substitute_in(m, k, to_dyn), substitute_in(m, v, to_dyn))
        }
        CelType::Type(Some(p)) => CelType::type_of(substitute_in(m, p, to_dyn)),
        _ => t.clone(),
    }
}

/// Renames the type parameters of an overload's signature to fresh variables.
fn instantiate(t: &CelType, fresh: &HashMap<Rc<str>, CelType>) -> CelType {
    match t {
        CelType::Param(n) => fresh.get(n).cloned().unwrap_or_else(|| t.clone()),
        CelType::Opaque(n, p) => {
            CelType::Opaque(n.clone(), p.iter().map(|x| instantiate(x, fresh)).collect())
        }
        CelType::List(e) => CelType::list(instantiate(e, fresh)),
        CelType::Map(k, v) => CelType::map(instantiate(k, fresh), instantiate(v, fresh)),
        CelType::Type(Some(p)) => CelType::type_of(instantiate(p, fresh)),
        _ => t.clone(),
    }
}

/// The type identifiers of the environment and their types.
fn type_ident(name: &str) -> Option<CelType> {
    let mut params = Vec::new();
    let t = match name {
        "bool"
        | "bytes"
        | "double"
        | "int"
        | "string"
        | "uint"
        | "null_type"
        | "google.protobuf.Duration"
        | "google.protobuf.Timestamp"
        | "net.IP"
        | "net.CIDR" => super::decls::parse_type(name, &mut params),
        "list" => CelType::list(CelType::Param("A".into())),
        "map" => CelType::map(CelType::Param("A".into()), CelType::Param("B".into())),
        "type" => CelType::Type(None),
        "optional_type" => CelType::optional(CelType::Param("T".into())),
        _ => return None,
    };
    Some(CelType::type_of(t))
}

impl<'t> Checker<'t> {
    fn err(&mut self, offset: u32, message: String) {
        self.errors.push(CheckError {
            offset: offset as usize,
            message,
        });
    }

    fn substitute(&self, t: &CelType, to_dyn: bool) -> CelType {
        substitute_in(&self.mapping, t, to_dyn)
    }

    fn is_assignable(&mut self, t1: &CelType, t2: &CelType) -> bool {
        let mut m = self.mapping.clone();
        if assignable(&mut m, t1, t2) {
            self.mapping = m;
            true
        } else {
            false
        }
    }

    fn new_var(&mut self) -> CelType {
        let v = CelType::Param(format!("_var{}", self.counter).into());
        self.counter += 1;
        v
    }

    fn record(&mut self, e: &Expr, t: &CelType) {
        self.node_types.insert(e as *const Expr, t.clone());
    }

    fn local(&self, name: &str) -> Option<CelType> {
        self.scopes
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.clone())
    }

    /// A global identifier (variables, type names).
    fn global(&mut self, name: &str) -> Option<CelType> {
        if let Some((_, t)) = self.globals.iter().find(|(n, _)| n == name) {
            return Some(t.clone());
        }
        if let Some(t) = type_ident(name) {
            return Some(t);
        }
        if PROTO_MESSAGES.contains(&name) {
            self.undefined_types.push(name.to_string());
            return Some(CelType::type_of(CelType::Struct(name.into(), None)));
        }
        None
    }

    fn resolve_simple(&mut self, name: &str) -> Option<CelType> {
        if let Some(stripped) = name.strip_prefix('.') {
            return self.global(stripped);
        }
        if let Some(t) = self.local(name) {
            return Some(t);
        }
        self.global(name)
    }

    fn node(&mut self, kind: TKind, ty: &CelType, offset: u32) -> usize {
        self.tree.push(TNode {
            kind,
            ty: ty.clone(),
            offset,
        });
        self.tree.len() - 1
    }

    fn expr(&mut self, e: &Expr) -> (CelType, usize) {
        let (t, kind) = self.expr_inner(e);
        self.record(e, &t);
        let id = self.node(kind, &t, e.offset);
        (t, id)
    }

    fn expr_inner(&mut self, e: &Expr) -> (CelType, TKind) {
        match &e.kind {
            ExprKind::Lit(l) => (literal_type(l), TKind::Lit(l.clone())),
            ExprKind::Ident(n) => {
                let t = match self.resolve_simple(n) {
                    Some(t) => t,
                    None => {
                        self.err(
                            e.offset,
                            format!("undeclared reference to '{n}' (in container '')"),
                        );
                        CelType::Error
                    }
                };
                (t, TKind::Ident(n.trim_start_matches('.').to_string()))
            }
            ExprKind::Select {
                operand,
                field,
                test_only,
                optional,
            } => {
                if !*test_only
                    && !*optional
                    && let Some(q) = qualified_name(e)
                {
                    let parts: Vec<&str> = q.split('.').collect();
                    let local_first = self.local(parts[0]).is_some() && !parts[0].starts_with('.');
                    if !local_first && let Some(t) = self.global(q.trim_start_matches('.')) {
                        return (t, TKind::Ident(q.trim_start_matches('.').to_string()));
                    }
                }
                let (r, op) = self.select_field(e, operand, field, *optional);
                if *test_only {
                    let kind = TKind::Select {
                        operand: op,
                        field: field.clone(),
                        test_only: true,
                    };
                    (CelType::Bool, kind)
                } else if *optional {
                    let name = self.node(
                        TKind::Lit(Literal::String(field.clone())),
                        &CelType::String,
                        e.offset,
                    );
                    let kind = TKind::Call {
                        function: "_?._".into(),
                        target: None,
                        args: vec![op, name],
                        overloads: vec!["select_optional_field"],
                    };
                    (self.substitute(&r, false), kind)
                } else {
                    let kind = TKind::Select {
                        operand: op,
                        field: field.clone(),
                        test_only: false,
                    };
                    (self.substitute(&r, false), kind)
                }
            }
            ExprKind::Call {
                function,
                target,
                args,
            } => self.call(e, function, target.as_deref(), args),
            ExprKind::List { elements, optional } => {
                let mut elem: Option<CelType> = None;
                let mut ids = Vec::new();
                for (i, x) in elements.iter().enumerate() {
                    let (mut t, id) = self.expr(x);
                    ids.push(id);
                    if optional.contains(&i) {
                        match t.unwrap_optional() {
                            Some(inner) => t = inner.clone(),
                            None if !is_dyn(&t) => {
                                let msg = format!(
                                    "expected type '{}' but found '{}'",
                                    CelType::optional(t.clone()).format(),
                                    t.format()
                                );
                                self.err(x.offset, msg);
                            }
                            None => {}
                        }
                    }
                    elem = Some(self.join(elem, t));
                }
                let elem = match elem {
                    Some(t) => t,
                    None => self.new_var(),
                };
                (CelType::list(elem), TKind::List(ids))
            }
            ExprKind::Map { entries } => {
                let mut kt: Option<CelType> = None;
                let mut vt: Option<CelType> = None;
                let mut ids = Vec::new();
                for (k, v, opt) in entries {
                    let (t, kid) = self.expr(k);
                    kt = Some(self.join(kt, t));
                    let (mut t, vid) = self.expr(v);
                    ids.push((kid, vid));
                    if *opt {
                        match t.unwrap_optional() {
                            Some(inner) => t = inner.clone(),
                            None if !is_dyn(&t) => {
                                let msg = format!(
                                    "expected type '{}' but found '{}'",
                                    CelType::optional(t.clone()).format(),
                                    t.format()
                                );
                                self.err(v.offset, msg);
                            }
                            None => {}
                        }
                    }
                    vt = Some(self.join(vt, t));
                }
                let t = match (kt, vt) {
                    (Some(k), Some(v)) => CelType::map(k, v),
                    _ => {
                        let k = self.new_var();
                        let v = self.new_var();
                        CelType::map(k, v)
                    }
                };
                (t, TKind::Map(ids))
            }
            ExprKind::Struct { name, fields } => {
                self.err(
                    e.offset,
                    format!(
                        "undeclared reference to '{}' (in container '')",
                        name.trim_start_matches('.')
                    ),
                );
                let _ = fields;
                (CelType::Error, TKind::Struct(Vec::new()))
            }
            ExprKind::Bind { var, init, body } => {
                let (t, init_id) = self.expr(init);
                self.scopes.push((var.clone(), t));
                let (r, body_id) = self.expr(body);
                self.scopes.pop();
                let empty = self.node(
                    TKind::List(Vec::new()),
                    &CelType::list(CelType::Dyn),
                    e.offset,
                );
                let stop = self.node(TKind::Lit(Literal::Bool(false)), &CelType::Bool, e.offset);
                let kind = TKind::Compr {
                    range: empty,
                    var: "#unused".into(),
                    var2: None,
                    accu: var.clone(),
                    init: init_id,
                    cond: stop,
                    step: init_id,
                    result: body_id,
                };
                (r, kind)
            }
            ExprKind::Loop {
                kind,
                var,
                var2,
                range,
                filter,
                transform,
            } => {
                let c = lower(
                    *kind,
                    var,
                    var2.as_deref(),
                    range,
                    filter.as_deref(),
                    transform.as_deref(),
                );
                self.comprehension(e.offset, &c)
            }
        }
    }

    /// Joins the element types of a literal (dyn on disagreement; the validator reports).
    fn join(&mut self, prev: Option<CelType>, cur: CelType) -> CelType {
        match prev {
            None => cur,
            Some(p) => {
                if self.is_assignable(&p, &cur) {
                    most_general(&p, &cur)
                } else {
                    CelType::Dyn
                }
            }
        }
    }

    fn select_field(
        &mut self,
        e: &Expr,
        operand: &Expr,
        field: &str,
        optional: bool,
    ) -> (CelType, usize) {
        let (ot, op) = self.expr(operand);
        let ot = self.substitute(&ot, false);
        let (target, was_opt) = match ot.unwrap_optional() {
            Some(inner) => (inner.clone(), true),
            None => (ot.clone(), false),
        };
        let result = match &target {
            CelType::Map(_, v) => (**v).clone(),
            CelType::Struct(name, node) => match node {
                Some(id) => match self.field_type(*id, field) {
                    Some(t) => t,
                    None => {
                        self.err(e.offset, format!("undefined field '{field}'"));
                        CelType::Error
                    }
                },
                None => {
                    self.err(
                        e.offset,
                        format!("unexpected failed resolution of '{name}'"),
                    );
                    CelType::Error
                }
            },
            CelType::Param(_) => {
                self.is_assignable(&CelType::Dyn, &target);
                CelType::Dyn
            }
            t => {
                if !is_dyn_or_error(t) {
                    let msg = format!("type '{}' does not support field selection", t.format());
                    self.err(e.offset, msg);
                }
                CelType::Dyn
            }
        };
        let t = if was_opt || optional {
            CelType::optional(result)
        } else {
            result
        };
        (t, op)
    }

    /// The type of the field `field` (a CEL name) of a schema object; a reserved word also
    /// names its escaped field (`self.namespace` is `self.__namespace__`).
    fn field_type(&self, id: TypeId, field: &str) -> Option<CelType> {
        let n = self.types.node(id);
        let find = |name: &str| {
            n.fields
                .iter()
                .find(|(k, _)| escape_field(k).as_deref() == Some(name))
                .map(|(_, &c)| type_of_node(self.types, &self.names, c))
        };
        find(field).or_else(|| {
            if RESERVED.contains(&field) {
                find(&format!("__{field}__"))
            } else {
                None
            }
        })
    }

    fn call(
        &mut self,
        e: &Expr,
        f: &str,
        target: Option<&Expr>,
        args: &[Expr],
    ) -> (CelType, TKind) {
        let (arg_types, arg_ids): (Vec<CelType>, Vec<usize>) =
            args.iter().map(|a| self.expr(a)).unzip();
        let call = |function: &str, target: Option<usize>, overloads| TKind::Call {
            function: function.to_string(),
            target,
            args: arg_ids.clone(),
            overloads,
        };
        let Some(target) = target else {
            let name = f.trim_start_matches('.');
            return match functions().get(name) {
                Some(fd) => {
                    let (t, ids) = self.resolve(e.offset, name, fd, None, arg_types, args);
                    (t, call(name, None, ids))
                }
                None => {
                    self.err(
                        e.offset,
                        format!("undeclared reference to '{name}' (in container '')"),
                    );
                    (CelType::Error, call(name, None, Vec::new()))
                }
            };
        };
        if let Some(q) = qualified_name(target) {
            let full = format!("{}.{f}", q.trim_start_matches('.'));
            if let Some(fd) = functions().get(full.as_str()) {
                let (t, ids) = self.resolve(e.offset, &full, fd, None, arg_types, args);
                return (t, call(&full, None, ids));
            }
        }
        let (tt, target_id) = self.expr(target);
        match functions().get(f) {
            Some(fd) => {
                let (t, ids) = self.resolve(e.offset, f, fd, Some(tt), arg_types, args);
                (t, call(f, Some(target_id), ids))
            }
            None => {
                self.err(
                    e.offset,
                    format!("undeclared reference to '{f}' (in container '')"),
                );
                (CelType::Error, call(f, Some(target_id), Vec::new()))
            }
        }
    }

    /// Overload resolution (`resolveOverload`); the error is reported at `offset`.
    fn resolve(
        &mut self,
        offset: u32,
        name: &str,
        overloads: &[Overload],
        target: Option<CelType>,
        args: Vec<CelType>,
        arg_exprs: &[Expr],
    ) -> (CelType, Vec<&'static str>) {
        let member = target.is_some();
        let mut all: Vec<CelType> = target.into_iter().collect();
        all.extend(args);
        self.resolve_types(offset, name, overloads, member, all, arg_exprs)
    }

    fn resolve_types(
        &mut self,
        offset: u32,
        name: &str,
        overloads: &[Overload],
        member: bool,
        mut all: Vec<CelType>,
        arg_exprs: &[Expr],
    ) -> (CelType, Vec<&'static str>) {
        let mut result: Option<CelType> = None;
        let mut ids = Vec::new();
        for o in overloads {
            if o.member != member {
                continue;
            }
            if name == "_&&_" || name == "_||_" {
                let mut bad = false;
                for (i, t) in all.iter().enumerate() {
                    if !self.is_assignable(t, &CelType::Bool) {
                        let at = arg_exprs.get(i).map_or(offset, |a| a.offset);
                        self.err(
                            at,
                            format!("expected type 'bool' but found '{}'", t.format()),
                        );
                        bad = true;
                    }
                }
                let t = if bad { CelType::Error } else { CelType::Bool };
                return (t, vec![o.id]);
            }
            let (args, res) = if o.params.is_empty() {
                (o.args.clone(), o.result.clone())
            } else {
                let fresh: HashMap<Rc<str>, CelType> = o
                    .params
                    .iter()
                    .map(|p| (p.clone(), self.new_var()))
                    .collect();
                (
                    o.args.iter().map(|a| instantiate(a, &fresh)).collect(),
                    instantiate(&o.result, &fresh),
                )
            };
            let mut m = self.mapping.clone();
            let a: Vec<&CelType> = all.iter().collect();
            let b: Vec<&CelType> = args.iter().collect();
            if assignable_list(&mut m, &a, &b) {
                self.mapping = m;
                ids.push(o.id);
                let r = self.substitute(&res, false);
                result = Some(match result {
                    None => r,
                    Some(prev) if !is_dyn(&prev) && prev != r => CelType::Dyn,
                    Some(prev) => prev,
                });
            }
        }
        match result {
            Some(r) => (r, ids),
            None => {
                for t in all.iter_mut() {
                    *t = self.substitute(t, true);
                }
                let shown = if member {
                    let rest: Vec<String> = all[1..].iter().map(CelType::format).collect();
                    format!("{}.({})", all[0].format(), rest.join(", "))
                } else {
                    let v: Vec<String> = all.iter().map(CelType::format).collect();
                    format!("({})", v.join(", "))
                };
                self.err(
                    offset,
                    format!("found no matching overload for '{name}' applied to '{shown}'"),
                );
                (CelType::Error, ids)
            }
        }
    }

    fn low(&mut self, at: u32, l: &Low) -> (CelType, usize) {
        let (t, kind) = match l {
            Low::Real(e) => return self.expr(e),
            Low::Ident(n) => {
                let t = match self.resolve_simple(n) {
                    Some(t) => t,
                    None => {
                        self.err(
                            at,
                            format!("undeclared reference to '{n}' (in container '')"),
                        );
                        CelType::Error
                    }
                };
                (t, TKind::Ident(n.clone()))
            }
            Low::Lit(lit) => (literal_type(lit), TKind::Lit(lit.clone())),
            Low::Call(f, args) => {
                let (ts, arg_ids): (Vec<CelType>, Vec<usize>) =
                    args.iter().map(|a| self.low(at, a)).unzip();
                let exprs = self.low_offsets(at, args);
                let (t, ids) = match functions().get(f) {
                    Some(fd) => self.resolve_types(at, f, fd, false, ts, &exprs),
                    None => (CelType::Error, Vec::new()),
                };
                let kind = TKind::Call {
                    function: f.to_string(),
                    target: None,
                    args: arg_ids,
                    overloads: ids,
                };
                (t, kind)
            }
            Low::Member(f, target, args) => {
                let (ts, arg_ids): (Vec<CelType>, Vec<usize>) =
                    args.iter().map(|a| self.low(at, a)).unzip();
                let (tt, target_id) = self.low(at, target);
                let mut all = vec![tt];
                all.extend(ts);
                let (t, ids) = match functions().get(f) {
                    Some(fd) => self.resolve_types(at, f, fd, true, all, &[]),
                    None => (CelType::Error, Vec::new()),
                };
                let kind = TKind::Call {
                    function: f.to_string(),
                    target: Some(target_id),
                    args: arg_ids,
                    overloads: ids,
                };
                (t, kind)
            }
            Low::List(elems) => {
                let mut elem: Option<CelType> = None;
                let mut ids = Vec::new();
                for x in elems {
                    let (t, id) = self.low(at, x);
                    ids.push(id);
                    elem = Some(self.join(elem, t));
                }
                let t = match elem {
                    Some(t) => CelType::list(t),
                    None => {
                        let v = self.new_var();
                        CelType::list(v)
                    }
                };
                (t, TKind::List(ids))
            }
            Low::EmptyMap => {
                let k = self.new_var();
                let v = self.new_var();
                (CelType::map(k, v), TKind::Map(Vec::new()))
            }
            Low::Compr(c) => self.comprehension(at, c),
        };
        let id = self.node(kind, &t, at);
        (t, id)
    }

    /// Positions of a lowered call's arguments (for `&&`/`||` argument errors): synthetic
    /// nodes sit at the macro's position.
    fn low_offsets(&self, at: u32, args: &[Low]) -> Vec<Expr> {
        args.iter()
            .map(|a| {
                let off = match a {
                    Low::Real(e) => e.offset,
                    _ => at,
                };
                Expr {
                    offset: off,
                    kind: ExprKind::Lit(Literal::Null),
                }
            })
            .collect()
    }

    fn comprehension(&mut self, at: u32, c: &Compr) -> (CelType, TKind) {
        let (range_t, range) = self.low(at, &c.range);
        let (accu_t, init) = self.low(at, &c.init);
        let range_t = self.substitute(&range_t, false);
        let scope_base = self.scopes.len();
        self.scopes.push((c.accu.clone(), accu_t.clone()));
        let (v1, v2) = match &range_t {
            CelType::List(e) => {
                if c.var2.is_some() {
                    (CelType::Int, (**e).clone())
                } else {
                    ((**e).clone(), CelType::Error)
                }
            }
            CelType::Map(k, v) => ((**k).clone(), (**v).clone()),
            CelType::Dyn | CelType::Error | CelType::Param(_) => {
                self.is_assignable(&CelType::Dyn, &range_t);
                (CelType::Dyn, CelType::Dyn)
            }
            t => {
                let range_at = match &c.range {
                    Low::Real(e) => e.offset,
                    _ => at,
                };
                let msg = format!(
                    "expression of type '{}' cannot be range of a comprehension (must be list, map, or dynamic)",
                    t.format()
                );
                self.err(range_at, msg);
                (CelType::Error, CelType::Error)
            }
        };
        self.scopes.push((c.var.clone(), v1));
        if let Some(v) = &c.var2 {
            self.scopes.push((v.clone(), v2));
        }
        let (cond_t, cond) = self.low(at, &c.cond);
        if !self.is_assignable(&CelType::Bool, &cond_t) {
            let msg = format!("expected type 'bool' but found '{}'", cond_t.format());
            self.err(low_at(at, &c.cond), msg);
        }
        let (step_t, step) = self.low(at, &c.step);
        if !self.is_assignable(&accu_t, &step_t) {
            let msg = format!(
                "expected type '{}' but found '{}'",
                accu_t.format(),
                step_t.format()
            );
            self.err(low_at(at, &c.step), msg);
        }
        // Leave the loop's scope (iteration variables) before the result.
        self.scopes.truncate(scope_base + 1);
        let (r, result) = self.low(at, &c.result);
        self.scopes.truncate(scope_base);
        let kind = TKind::Compr {
            range,
            var: c.var.clone(),
            var2: c.var2.clone(),
            accu: c.accu.clone(),
            init,
            cond,
            step,
            result,
        };
        (self.substitute(&r, false), kind)
    }
}

fn low_at(at: u32, l: &Low) -> u32 {
    match l {
        Low::Real(e) => e.offset,
        _ => at,
    }
}

/// `a.b.c` when the expression is a chain of plain selections on an identifier.
fn qualified_name(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Ident(n) => Some(n.clone()),
        ExprKind::Select {
            operand,
            field,
            test_only: false,
            optional: false,
        } => qualified_name(operand).map(|q| format!("{q}.{field}")),
        _ => None,
    }
}

// =============================================================================================
// AST validators
// =============================================================================================

struct Validators<'a> {
    types: &'a HashMap<*const Expr, CelType>,
    errors: Vec<CheckError>,
}

impl Validators<'_> {
    fn type_of(&self, e: &Expr) -> CelType {
        self.types
            .get(&(e as *const Expr))
            .cloned()
            .unwrap_or(CelType::Dyn)
    }

    fn err(&mut self, at: u32, message: String) {
        self.errors.push(CheckError {
            offset: at as usize,
            message,
        });
    }

    /// Walks the tree; `in_format` when inside a `format` call (literals there may mix
    /// types).
    fn walk(&mut self, e: &Expr, in_format: bool) {
        match &e.kind {
            ExprKind::List { elements, optional } => {
                if !in_format {
                    let mut first: Option<CelType> = None;
                    for (i, x) in elements.iter().enumerate() {
                        let mut t = self.type_of(x);
                        if optional.contains(&i) {
                            t = t.unwrap_optional().cloned().unwrap_or(CelType::Dyn);
                        }
                        match &first {
                            None => first = Some(t),
                            Some(f) => {
                                if !equivalent(f, &t) {
                                    let msg = format!(
                                        "expected type '{}' but found '{}'",
                                        f.format(),
                                        t.format()
                                    );
                                    self.err(x.offset, msg);
                                    break;
                                }
                            }
                        }
                    }
                }
                elements.iter().for_each(|x| self.walk(x, in_format));
            }
            ExprKind::Map { entries } => {
                if !in_format {
                    let mut first: Option<(CelType, CelType)> = None;
                    for (k, v, opt) in entries {
                        let kt = self.type_of(k);
                        let mut vt = self.type_of(v);
                        if *opt {
                            vt = vt.unwrap_optional().cloned().unwrap_or(CelType::Dyn);
                        }
                        match &first {
                            None => first = Some((kt, vt)),
                            Some((fk, fv)) => {
                                let (fk, fv) = (fk.clone(), fv.clone());
                                if !equivalent(&fk, &kt) {
                                    let msg = format!(
                                        "expected type '{}' but found '{}'",
                                        fk.format(),
                                        kt.format()
                                    );
                                    self.err(k.offset, msg);
                                }
                                if !equivalent(&fv, &vt) {
                                    let msg = format!(
                                        "expected type '{}' but found '{}'",
                                        fv.format(),
                                        vt.format()
                                    );
                                    self.err(v.offset, msg);
                                }
                            }
                        }
                    }
                }
                for (k, v, _) in entries {
                    self.walk(k, in_format);
                    self.walk(v, in_format);
                }
            }
            ExprKind::Call {
                function,
                target,
                args,
            } => {
                let fmt = in_format || function == "format";
                self.literal_args(e, function, target.as_deref(), args);
                if let Some(t) = target {
                    self.walk(t, fmt);
                }
                args.iter().for_each(|a| self.walk(a, fmt));
            }
            ExprKind::Select { operand, .. } => self.walk(operand, in_format),
            ExprKind::Loop {
                range,
                filter,
                transform,
                ..
            } => {
                self.walk(range, in_format);
                if let Some(p) = filter {
                    self.walk(p, in_format);
                }
                if let Some(t) = transform {
                    self.walk(t, in_format);
                }
            }
            ExprKind::Bind { init, body, .. } => {
                self.walk(init, in_format);
                self.walk(body, in_format);
            }
            ExprKind::Struct { fields, .. } => {
                fields.iter().for_each(|(_, v, _)| self.walk(v, in_format))
            }
            ExprKind::Lit(_) | ExprKind::Ident(_) => {}
        }
    }

    /// Literal arguments of `duration`, `timestamp`, `matches` and `format`.
    fn literal_args(&mut self, e: &Expr, f: &str, target: Option<&Expr>, args: &[Expr]) {
        let first_lit = args.first().and_then(|a| match &a.kind {
            ExprKind::Lit(l) => Some((a, l)),
            _ => None,
        });
        match f {
            "duration" | "timestamp" => {
                if let Some((a, l)) = first_lit
                    && super::fold::eval_conversion(f, l).is_err()
                {
                    self.err(a.offset, format!("invalid {f} argument"));
                }
            }
            "matches" => {
                if let Some((a, Literal::String(p))) = first_lit
                    && crate::go::regexp::compile(p).is_err()
                {
                    self.err(a.offset, "invalid matches argument".into());
                }
            }
            "format" => self.format_call(e, target, args),
            _ => {}
        }
    }

    /// `'...'.format([...])` with a literal format string and list: the format string is
    /// parsed and each clause checked against its argument's type.
    fn format_call(&mut self, e: &Expr, target: Option<&Expr>, args: &[Expr]) {
        let (
            Some(Expr {
                kind: ExprKind::Lit(Literal::String(fmt)),
                ..
            }),
            [
                Expr {
                    kind: ExprKind::List { elements, .. },
                    ..
                },
            ],
        ) = (target, args)
        else {
            return;
        };
        let types = self.types;
        let type_of = |x: &Expr| {
            types
                .get(&(x as *const Expr))
                .cloned()
                .unwrap_or(CelType::Dyn)
        };
        if let Some(err) =
            super::lib::string_format::check_literal(fmt, elements, e.offset, &type_of)
        {
            self.errors.push(err);
        }
    }
}

/// `IsEquivalentType`: equal types, ignoring type parameter names.
fn equivalent(a: &CelType, b: &CelType) -> bool {
    match (a, b) {
        (CelType::Param(_), CelType::Param(_)) => true,
        _ => {
            a.kind() == b.kind()
                && a.type_name() == b.type_name()
                && a.params().len() == b.params().len()
                && a.params()
                    .iter()
                    .zip(b.params())
                    .all(|(x, y)| equivalent(x, y))
        }
    }
}
