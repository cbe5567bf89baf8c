//! Static cost estimation of `x-kubernetes-validations` rules, as kube-apiserver performs it
//! when a CRD is created or updated.
//!
//! Three layers reproduce the upstream behaviour:
//! - the estimator of cel-go's checker: per-node cost ranges, size ranges for strings, bytes,
//!   lists and maps, and comprehension costs (range + iterations × (condition + step) +
//!   result) over the macro expansions cel-go builds;
//! - the Kubernetes size estimates: sizes of schema-typed values come from the declared type
//!   reached by the value's *field path* (`maxLength`×4, `maxItems`, `maxProperties`, or what
//!   fits in a 3 MiB request), and the Kubernetes library's call cost estimates;
//! - the CRD accounting: each rule's cost is multiplied by how many times the rule's schema
//!   node can occur (its cardinality), checked against the per-rule limit, and summed over the
//!   whole schema against the per-CRD limit.
//!
//! Quirks of the upstream estimator are kept on purpose (they change which CRDs are accepted):
//! e.g. a path that starts at something other than a schema variable resolves to the rule's
//! own type, and map keys of schema maps have size 0.

use super::ast::{Expr, ExprKind, Literal, Loop};
use super::types::{DeclTypes, Kind, MAX_REQUEST_SIZE_BYTES, TypeId, unescape_field};
use crate::cause::{Cause, Path};
use crate::schema::{Items, Props, SchemaOrBool};

/// The largest estimated cost of one rule (times its cardinality).
pub const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;
/// The largest estimated cost of all rules of one schema.
pub const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;

const STRING_TRAVERSAL_FACTOR: f64 = 0.1;
const REGEX_LENGTH_FACTOR: f64 = 0.25;
const LIST_CREATE_COST: u64 = 10;
const MAP_CREATE_COST: u64 = 30;

/// A cost range (cel-go's `CostEstimate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Estimate {
    pub min: u64,
    pub max: u64,
}

/// A size range of a string, bytes, list or map (cel-go's `SizeEstimate`).
type Size = Estimate;

const UNKNOWN: Estimate = Estimate {
    min: 0,
    max: u64::MAX,
};

fn fixed(v: u64) -> Estimate {
    Estimate { min: v, max: v }
}

fn by_factor(x: u64, f: f64) -> u64 {
    let xf = x as f64;
    if xf > 0.0 && f > 0.0 && xf > u64::MAX as f64 / f {
        return u64::MAX;
    }
    let c = (xf * f).ceil();
    if c >= 18_446_744_073_709_551_616.0 {
        u64::MAX
    } else {
        c as u64
    }
}

impl Estimate {
    fn add(self, o: Estimate) -> Estimate {
        Estimate {
            min: self.min.saturating_add(o.min),
            max: self.max.saturating_add(o.max),
        }
    }
    fn mul(self, o: Estimate) -> Estimate {
        Estimate {
            min: self.min.saturating_mul(o.min),
            max: self.max.saturating_mul(o.max),
        }
    }
    fn factor(self, f: f64) -> Estimate {
        Estimate {
            min: by_factor(self.min, f),
            max: by_factor(self.max, f),
        }
    }
    fn union(self, o: Estimate) -> Estimate {
        Estimate {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }
}

/// The static type of a sub-expression, as far as the estimator needs it.
#[derive(Clone, Debug, PartialEq)]
enum Ty {
    /// A value typed by a schema node.
    Node(TypeId),
    Str,
    Bytes,
    Int,
    Uint,
    Double,
    Bool,
    Null,
    Duration,
    Timestamp,
    Type,
    List(Box<Ty>),
    Map(Box<Ty>, Box<Ty>),
    Opt(Box<Ty>),
    /// Library types (quantity, url, ip, cidr, semver, format).
    Opaque,
    Dyn,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tk {
    List,
    Map,
    Struct,
    Str,
    Bytes,
    Int,
    Uint,
    Double,
    Bool,
    Null,
    Duration,
    Timestamp,
    Type,
    Opt,
    Opaque,
    Dyn,
}

/// Sizes of list or map entries (cel-go's `entrySizeEstimate`).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Entry {
    list: bool,
    key: Size,
    val: Size,
}

fn entry_union(a: Option<Entry>, b: Option<Entry>) -> Option<Entry> {
    let (a, b) = (a?, b?);
    Some(Entry {
        list: a.list,
        key: a.key.union(b.key),
        val: a.val.union(b.val),
    })
}

/// What the estimator knows about one evaluated node.
#[derive(Clone, Debug)]
struct Info {
    cost: Estimate,
    ty: Ty,
    /// The field path (first element a variable), `None` when the node has none.
    path: Option<Vec<String>>,
    /// A size known from the expression itself (literals, call results).
    size: Option<Size>,
    /// The size of the local variable an identifier refers to (the last resort).
    var_size: Option<Size>,
    entry: Option<Entry>,
    /// The value of a non-negative integer literal (for `split`'s limit).
    lit_uint: Option<u64>,
}

impl Info {
    fn new(cost: Estimate, ty: Ty) -> Info {
        Info {
            cost,
            ty,
            path: None,
            size: None,
            var_size: None,
            entry: None,
            lit_uint: None,
        }
    }
}

#[derive(Clone, Debug)]
struct Var {
    name: String,
    ty: Ty,
    path: Option<Vec<String>>,
    size: Option<Size>,
    entry: Option<Entry>,
}

struct Coster<'t> {
    types: &'t DeclTypes,
    root: TypeId,
    old_self_optional: bool,
    vars: Vec<Var>,
    /// A type error the checker would report (the rule then has no cost).
    error: bool,
}

/// The result of estimating one expression: its cost, and whether it type-checks to the
/// expected kind as far as the estimator can tell.
struct Outcome {
    cost: Estimate,
    ty: Ty,
    error: bool,
}

/// Static cost of one rule expression whose `self` has type node `self_type`.
pub fn estimate(expr: &Expr, types: &DeclTypes, self_type: TypeId) -> Estimate {
    run(expr, types, self_type, false).cost
}

fn run(expr: &Expr, types: &DeclTypes, self_type: TypeId, old_self_optional: bool) -> Outcome {
    let mut c = Coster {
        types,
        root: self_type,
        old_self_optional,
        vars: Vec::new(),
        error: false,
    };
    let info = c.cost(expr);
    let ty = c.resolve(&info.ty);
    Outcome {
        cost: info.cost,
        ty,
        error: c.error,
    }
}

impl Coster<'_> {
    // ---- types ----

    fn exposed(&self, id: TypeId) -> bool {
        self.types.node(id).min_size.is_some()
    }

    /// Replaces scalar schema nodes by their CEL type.
    fn resolve(&self, t: &Ty) -> Ty {
        let Ty::Node(id) = t else {
            return t.clone();
        };
        match self.types.node(*id).kind {
            Kind::String => Ty::Str,
            Kind::Int => Ty::Int,
            Kind::Double => Ty::Double,
            Kind::Bool => Ty::Bool,
            Kind::Bytes => Ty::Bytes,
            Kind::Duration => Ty::Duration,
            Kind::Timestamp => Ty::Timestamp,
            Kind::IntOrString => Ty::Dyn,
            Kind::Any if !self.exposed(*id) => Ty::Dyn,
            _ => t.clone(),
        }
    }

    fn kind(&self, t: &Ty) -> Tk {
        match self.resolve(t) {
            Ty::Node(id) => match self.types.node(id).kind {
                Kind::List => Tk::List,
                Kind::Map => Tk::Map,
                _ => Tk::Struct,
            },
            Ty::Str => Tk::Str,
            Ty::Bytes => Tk::Bytes,
            Ty::Int => Tk::Int,
            Ty::Uint => Tk::Uint,
            Ty::Double => Tk::Double,
            Ty::Bool => Tk::Bool,
            Ty::Null => Tk::Null,
            Ty::Duration => Tk::Duration,
            Ty::Timestamp => Tk::Timestamp,
            Ty::Type => Tk::Type,
            Ty::List(_) => Tk::List,
            Ty::Map(..) => Tk::Map,
            Ty::Opt(_) => Tk::Opt,
            Ty::Opaque => Tk::Opaque,
            Ty::Dyn => Tk::Dyn,
        }
    }

    /// List items, or map keys (the first type parameter).
    fn elem(&self, t: &Ty) -> Ty {
        match self.resolve(t) {
            Ty::Node(id) => {
                let n = self.types.node(id);
                match n.kind {
                    Kind::List => n.elem.map_or(Ty::Dyn, Ty::Node),
                    Kind::Map => Ty::Str,
                    _ => Ty::Dyn,
                }
            }
            Ty::List(e) => *e,
            Ty::Map(k, _) => *k,
            _ => Ty::Dyn,
        }
    }

    fn map_value(&self, t: &Ty) -> Ty {
        match self.resolve(t) {
            Ty::Node(id) => self.types.node(id).elem.map_or(Ty::Dyn, Ty::Node),
            Ty::Map(_, v) => *v,
            _ => Ty::Dyn,
        }
    }

    fn has_params(&self, t: &Ty) -> bool {
        matches!(self.kind(t), Tk::List | Tk::Map)
    }

    fn field(&mut self, t: &Ty, name: &str) -> Ty {
        match self.resolve(t) {
            Ty::Node(id) => {
                let n = self.types.node(id);
                match n.kind {
                    Kind::Map => n.elem.map_or(Ty::Dyn, Ty::Node),
                    Kind::List => {
                        self.error = true;
                        Ty::Dyn
                    }
                    _ => match n.fields.get(unescape_field(name).as_ref()) {
                        Some(f) if self.exposed(*f) => Ty::Node(*f),
                        _ => {
                            self.error = true;
                            Ty::Dyn
                        }
                    },
                }
            }
            Ty::Map(_, v) => *v,
            Ty::Opt(inner) => Ty::Opt(Box::new(self.field(&inner, name))),
            Ty::Dyn => Ty::Dyn,
            _ => {
                self.error = true;
                Ty::Dyn
            }
        }
    }

    // ---- sizes ----

    /// The Kubernetes size estimator: the declared `MaxElements` at the end of a field path
    /// (the first element, a variable, always stands for the rule's `self` type).
    fn path_size(&self, path: &[String]) -> Option<Size> {
        if path.is_empty() {
            return None;
        }
        // `None` node = the string key type of a map (MaxElements 0, no children).
        let mut cur = Some(self.root);
        for p in &path[1..] {
            let id = cur?;
            let n = self.types.node(id);
            cur = match p.as_str() {
                "@items" | "@values" => match n.kind {
                    Kind::List | Kind::Map => Some(n.elem?),
                    _ => return None,
                },
                "@keys" => match n.kind {
                    Kind::Map => None,
                    _ => return None,
                },
                f => match n.kind {
                    Kind::Object | Kind::Any => {
                        let f = n.fields.get(unescape_field(f).as_ref())?;
                        if !self.exposed(*f) {
                            return None;
                        }
                        Some(*f)
                    }
                    _ => return None,
                },
            };
            if cur.is_none() && p != "@keys" {
                return None;
            }
        }
        Some(Estimate {
            min: 0,
            max: cur.map_or(0, |id| self.types.node(id).max_elements),
        })
    }

    fn is_scalar(&self, t: &Ty) -> bool {
        match self.resolve(t) {
            Ty::Bool | Ty::Double | Ty::Duration | Ty::Int | Ty::Timestamp | Ty::Uint => true,
            Ty::Opt(inner) => self.is_scalar(&inner),
            _ => false,
        }
    }

    /// cel-go's `computeSize`: known size, then the path-based estimate, then scalar types,
    /// then the size of the local variable.
    fn size_of(&self, i: &Info) -> Option<Size> {
        if let Some(s) = i.size {
            return Some(s);
        }
        if let Some(p) = &i.path
            && let Some(s) = self.path_size(p)
        {
            return Some(s);
        }
        if self.is_scalar(&i.ty) {
            return Some(fixed(1));
        }
        i.var_size
    }

    fn size_or_unknown(&self, i: &Info) -> Size {
        self.size_of(i).unwrap_or(UNKNOWN)
    }

    // ---- variables ----

    fn lookup(&self, name: &str) -> Option<&Var> {
        self.vars.iter().rev().find(|v| v.name == name)
    }

    fn push(&mut self, name: &str, ty: Ty, path: Option<Vec<String>>, size: Option<Size>) {
        self.push_entry(name, ty, path, size, None);
    }

    fn push_entry(
        &mut self,
        name: &str,
        ty: Ty,
        path: Option<Vec<String>>,
        size: Option<Size>,
        entry: Option<Entry>,
    ) {
        self.vars.push(Var {
            name: name.to_string(),
            ty,
            path,
            size,
            entry,
        });
    }

    fn pop(&mut self, n: usize) {
        let keep = self.vars.len().saturating_sub(n);
        self.vars.truncate(keep);
    }

    // ---- nodes ----

    fn cost(&mut self, e: &Expr) -> Info {
        match &e.kind {
            ExprKind::Lit(l) => {
                let (ty, size) = match l {
                    Literal::String(s) => (Ty::Str, s.chars().count() as u64),
                    Literal::Bytes(b) => (Ty::Bytes, b.len() as u64),
                    Literal::Null => (Ty::Null, 1),
                    Literal::Bool(_) => (Ty::Bool, 1),
                    Literal::Int(_) => (Ty::Int, 1),
                    Literal::Uint(_) => (Ty::Uint, 1),
                    Literal::Double(_) => (Ty::Double, 1),
                };
                let mut i = Info::new(fixed(0), ty);
                i.size = Some(fixed(size));
                i.lit_uint = match l {
                    Literal::Int(v) => u64::try_from(*v).ok(),
                    Literal::Uint(v) => Some(*v),
                    _ => None,
                };
                i
            }
            ExprKind::Ident(name) => self.ident(name),
            ExprKind::Select {
                operand,
                field,
                test_only,
                optional,
            } => {
                let op = self.cost(operand);
                if *test_only {
                    let _ = self.field(&op.ty, field);
                    return Info::new(op.cost.add(fixed(1)), Ty::Bool);
                }
                if *optional {
                    // `_?._(operand, "field")`: an ordinary O(1) call without a path
                    let ty = Ty::Opt(Box::new(self.field(&op.ty, field)));
                    return Info::new(op.cost.add(fixed(1)), ty);
                }
                let mut cost = op.cost;
                if matches!(self.kind(&op.ty), Tk::Map | Tk::Struct) {
                    cost = cost.add(fixed(1));
                }
                let ty = self.field(&op.ty, field);
                let mut path = op.path.unwrap_or_default();
                path.push(field.clone());
                let mut i = Info::new(cost, ty);
                i.path = Some(path);
                i
            }
            ExprKind::List { elements, .. } => {
                let mut sum = fixed(0);
                let mut item = Estimate {
                    min: if elements.is_empty() { 0 } else { u64::MAX },
                    max: 0,
                };
                let mut elem_ty: Option<Ty> = None;
                for el in elements {
                    let i = self.cost(el);
                    sum = sum.add(i.cost);
                    item = item.union(self.size_or_unknown(&i));
                    let t = self.resolve(&i.ty);
                    elem_ty = Some(match elem_ty {
                        None => t,
                        Some(p) if p == t => p,
                        Some(_) => Ty::Dyn,
                    });
                }
                let mut i = Info::new(
                    sum.add(fixed(LIST_CREATE_COST)),
                    Ty::List(Box::new(elem_ty.unwrap_or(Ty::Dyn))),
                );
                i.size = Some(fixed(elements.len() as u64));
                i.entry = Some(Entry {
                    list: true,
                    key: fixed(1),
                    val: item,
                });
                i
            }
            ExprKind::Map { entries } => {
                let mut sum = fixed(0);
                let empty = entries.is_empty();
                let start = Estimate {
                    min: if empty { 0 } else { u64::MAX },
                    max: 0,
                };
                let (mut ks, mut vs) = (start, start);
                let (mut kt, mut vt): (Option<Ty>, Option<Ty>) = (None, None);
                for (k, v, _) in entries {
                    let ki = self.cost(k);
                    let vi = self.cost(v);
                    sum = sum.add(ki.cost).add(vi.cost);
                    ks = ks.union(self.size_or_unknown(&ki));
                    vs = vs.union(self.size_or_unknown(&vi));
                    kt = Some(merge_ty(kt, self.resolve(&ki.ty)));
                    vt = Some(merge_ty(vt, self.resolve(&vi.ty)));
                }
                let mut i = Info::new(
                    sum.add(fixed(MAP_CREATE_COST)),
                    Ty::Map(
                        Box::new(kt.unwrap_or(Ty::Dyn)),
                        Box::new(vt.unwrap_or(Ty::Dyn)),
                    ),
                );
                i.size = Some(fixed(entries.len() as u64));
                i.entry = Some(Entry {
                    list: false,
                    key: ks,
                    val: vs,
                });
                i
            }
            ExprKind::Struct { .. } => {
                self.error = true;
                Info::new(fixed(0), Ty::Dyn)
            }
            ExprKind::Bind { var, init, body } => {
                let ii = self.cost(init);
                let size = self.size_of(&ii);
                self.push_entry(var, ii.ty.clone(), ii.path.clone(), size, ii.entry);
                let bi = self.cost(body);
                self.pop(1);
                // the lazily evaluated empty iteration range is still charged
                let mut i = Info::new(
                    fixed(LIST_CREATE_COST).add(ii.cost).add(bi.cost),
                    bi.ty.clone(),
                );
                i.size = self.size_of(&bi);
                i.entry = bi.entry;
                i
            }
            ExprKind::Loop {
                kind,
                var,
                var2,
                range,
                filter,
                transform,
            } => self.comprehension(*kind, var, var2.as_deref(), range, filter, transform),
            ExprKind::Call {
                function,
                target,
                args,
            } => self.call(function, target.as_deref(), args),
        }
    }

    fn ident(&mut self, name: &str) -> Info {
        if let Some(v) = self.lookup(name) {
            let mut i = Info::new(fixed(1), v.ty.clone());
            i.path = v.path.clone();
            i.var_size = v.size;
            i.entry = v.entry;
            return i;
        }
        let ty = match name {
            "self" => Ty::Node(self.root),
            "oldSelf" if self.old_self_optional => Ty::Opt(Box::new(Ty::Node(self.root))),
            "oldSelf" => Ty::Node(self.root),
            "int" | "uint" | "double" | "bool" | "string" | "bytes" | "list" | "map"
            | "null_type" | "type" => Ty::Type,
            _ => {
                self.error = true;
                Ty::Dyn
            }
        };
        let mut i = Info::new(fixed(1), ty);
        i.path = Some(vec![name.to_string()]);
        i
    }

    #[allow(clippy::too_many_arguments)]
    fn comprehension(
        &mut self,
        kind: Loop,
        var: &str,
        var2: Option<&str>,
        range: &Expr,
        filter: &Option<Box<Expr>>,
        transform: &Option<Box<Expr>>,
    ) -> Info {
        let r = self.cost(range);
        let mut sum = r.cost;
        // The accumulator's initial value.
        let (init_cost, accu_ty, accu_size, accu_entry, container_result) = match kind {
            Loop::All | Loop::Exists => (0, Ty::Bool, fixed(1), None, false),
            Loop::ExistsOne => (0, Ty::Int, fixed(1), None, false),
            Loop::Map | Loop::Filter | Loop::TransformList => (
                LIST_CREATE_COST,
                Ty::List(Box::new(Ty::Dyn)),
                fixed(0),
                Some(Entry {
                    list: true,
                    key: fixed(1),
                    val: fixed(0),
                }),
                true,
            ),
            Loop::OptMap | Loop::OptFlatMap | Loop::SortBy => (0, Ty::Dyn, fixed(1), None, false),
            Loop::TransformMap | Loop::TransformMapEntry => (
                MAP_CREATE_COST,
                Ty::Map(Box::new(Ty::Dyn), Box::new(Ty::Dyn)),
                fixed(0),
                Some(Entry {
                    list: false,
                    key: fixed(0),
                    val: fixed(0),
                }),
                true,
            ),
        };
        sum = sum.add(fixed(init_cost));
        self.push_entry("@result", accu_ty, None, Some(accu_size), accu_entry);

        // The iteration variables.
        let rk = self.kind(&r.ty);
        let is_list = match r.entry {
            Some(en) => en.list,
            None => rk == Tk::List,
        };
        if !matches!(rk, Tk::List | Tk::Map | Tk::Dyn) {
            self.error = true;
        }
        let sub = |s: &str| {
            let mut p = r.path.clone().unwrap_or_default();
            p.push(s.to_string());
            Some(p)
        };
        let elem_ty = self.elem(&r.ty);
        let val_ty = if is_list {
            elem_ty.clone()
        } else {
            self.map_value(&r.ty)
        };
        let mut pushed = 2;
        match var2 {
            Some(v2) => {
                let (kp, kt) = if is_list {
                    (sub("@indices"), Ty::Int)
                } else {
                    (sub("@keys"), elem_ty.clone())
                };
                self.push(var, kt, kp, r.entry.map(|e| e.key));
                let vp = sub(if is_list { "@items" } else { "@values" });
                self.push(v2, val_ty.clone(), vp, r.entry.map(|e| e.val));
                pushed += 1;
            }
            None => {
                if is_list {
                    self.push(var, elem_ty.clone(), sub("@items"), r.entry.map(|e| e.val));
                } else {
                    self.push(var, elem_ty.clone(), sub("@keys"), r.entry.map(|e| e.key));
                }
            }
        }

        let pred = filter.as_ref().map(|p| self.cost(p));
        let tr = transform.as_ref().map(|t| self.cost(t));
        // the iteration variable itself, for `filter`'s `[x]`
        let iter_info = self.ident(var);
        self.pop(pushed);

        let pred_cost = pred.as_ref().map_or(fixed(0), |p| p.cost);
        // `_+_(@result, [item])` adds 1 (the call) + 1 (the accumulator) + the list creation.
        let append = |item: Estimate| fixed(2 + LIST_CREATE_COST).add(item);
        let (cond, step, result) = match kind {
            Loop::All => (
                fixed(2),
                Estimate {
                    min: 1,
                    max: 1u64.saturating_add(pred_cost.max),
                },
                fixed(1),
            ),
            Loop::Exists => (
                fixed(3),
                Estimate {
                    min: 1,
                    max: 1u64.saturating_add(pred_cost.max),
                },
                fixed(1),
            ),
            Loop::ExistsOne => (fixed(0), pred_cost.add(fixed(1).union(fixed(2))), fixed(2)),
            Loop::Map | Loop::TransformList => {
                let t = tr.as_ref().map_or(fixed(0), |t| t.cost);
                let add = append(t);
                let step = match &pred {
                    Some(p) => p.cost.add(add.union(fixed(1))),
                    None => add,
                };
                (fixed(0), step, fixed(1))
            }
            Loop::Filter => (
                fixed(0),
                pred_cost.add(append(fixed(1)).union(fixed(1))),
                fixed(1),
            ),
            Loop::OptMap | Loop::OptFlatMap | Loop::SortBy => {
                let t = tr.as_ref().map_or(fixed(0), |t| t.cost);
                (fixed(0), t, fixed(1))
            }
            Loop::TransformMap | Loop::TransformMapEntry => {
                let t = tr.as_ref().map_or(fixed(0), |t| t.cost);
                let insert = fixed(if kind == Loop::TransformMap { 3 } else { 2 }).add(t);
                let step = match &pred {
                    Some(p) => p.cost.add(insert.union(fixed(1))),
                    None => insert,
                };
                (fixed(0), step, fixed(1))
            }
        };
        sum = sum.add(result);
        let count = self.size_or_unknown(&r);
        sum = sum.add(count.mul(step.add(cond)));

        let ty = match kind {
            Loop::All | Loop::Exists | Loop::ExistsOne => Ty::Bool,
            Loop::Map | Loop::TransformList => Ty::List(Box::new(
                tr.as_ref().map_or(Ty::Dyn, |t| self.resolve(&t.ty)),
            )),
            Loop::Filter | Loop::SortBy => Ty::List(Box::new(elem_ty)),
            Loop::OptMap | Loop::OptFlatMap => Ty::Opt(Box::new(Ty::Dyn)),
            Loop::TransformMapEntry => Ty::Map(Box::new(Ty::Dyn), Box::new(Ty::Dyn)),
            Loop::TransformMap => Ty::Map(
                Box::new(elem_ty),
                Box::new(tr.as_ref().map_or(Ty::Dyn, |t| self.resolve(&t.ty))),
            ),
        };
        let mut i = Info::new(sum, ty);
        if container_result {
            i.size = Some(count);
            let item = match kind {
                Loop::Map | Loop::TransformList => tr.as_ref().map(|t| self.size_or_unknown(t)),
                Loop::Filter => Some(self.size_or_unknown(&iter_info)),
                _ => None,
            };
            i.entry = item.map(|v| Entry {
                list: true,
                key: fixed(1),
                val: fixed(0).union(v),
            });
        } else {
            i.size = Some(accu_size);
        }
        i
    }

    fn call(&mut self, function: &str, target: Option<&Expr>, args: &[Expr]) -> Info {
        // `optional.of(x)`, `format.dns1123Label()`: namespaced global functions.
        if let Some(Expr {
            kind: ExprKind::Ident(ns),
            ..
        }) = target
            && matches!(
                ns.as_str(),
                "optional" | "format" | "math" | "strings" | "base64" | "sets" | "lists" | "ip"
            )
            && self.lookup(ns).is_none()
        {
            let name = format!("{ns}.{function}");
            return self.call_resolved(&name, None, args);
        }
        self.call_resolved(function, target, args)
    }

    fn call_resolved(&mut self, function: &str, target: Option<&Expr>, args: &[Expr]) -> Info {
        if function == "dyn" && target.is_none() && args.len() == 1 {
            let a = self.cost(&args[0]);
            let mut i = Info::new(fixed(1).add(a.cost), Ty::Dyn);
            i.size = self.size_of(&a);
            i.entry = a.entry;
            return i;
        }
        let ai: Vec<Info> = args.iter().map(|a| self.cost(a)).collect();
        let ti = target.map(|t| self.cost(t));
        let arg_sum = ai.iter().fold(fixed(0), |s, a| s.add(a.cost));
        let mut sum = ti.as_ref().map_or(fixed(0), |t| t.cost);

        let kinds: Vec<Tk> = ai.iter().map(|a| self.kind(&a.ty)).collect();
        let tk = ti.as_ref().map(|t| self.kind(&t.ty));
        let ty = self.result_type(function, ti.as_ref(), &ai);

        // Index operations carry a path and the entry size of the container.
        let mut path = None;
        let mut result_size: Option<Size> = None;
        let mut entry = None;
        let fn_cost = match function {
            "_&&_" | "_||_" if ai.len() == 2 => Estimate {
                min: ai[0].cost.min,
                max: ai[0].cost.max.saturating_add(ai[1].cost.max),
            },
            "_?_:_" if ai.len() == 3 => {
                result_size = Some(
                    self.size_or_unknown(&ai[1])
                        .union(self.size_or_unknown(&ai[2])),
                );
                entry = entry_union(ai[1].entry, ai[2].entry);
                ai[0].cost.add(ai[1].cost.union(ai[2].cost))
            }
            "_[_]" if ai.len() == 2 => {
                let ck = kinds[0];
                let sub = match ck {
                    Tk::List => "@items",
                    Tk::Map => "@values",
                    _ => "@items",
                };
                if matches!(ck, Tk::List | Tk::Map | Tk::Dyn) {
                    let mut p = ai[0].path.clone().unwrap_or_default();
                    p.push(sub.to_string());
                    path = Some(p);
                    result_size = ai[0].entry.map(|e| e.val);
                } else {
                    self.error = true;
                }
                fixed(1).add(arg_sum)
            }
            _ => {
                let ovls = self.overloads(function, tk, &kinds);
                let mut cost = Estimate {
                    min: u64::MAX,
                    max: 0,
                };
                for o in &ovls {
                    let (c, rs) = self.overload_cost(function, *o, ti.as_ref(), &ai, arg_sum);
                    cost = cost.union(c);
                    if let Some(rs) = rs {
                        result_size = Some(result_size.map_or(rs, |p| p.union(rs)));
                    }
                }
                if ovls.contains(&Ovl::AddList) || ovls.contains(&Ovl::AddStr) {
                    entry = entry_union(ai[0].entry, ai[1].entry);
                }
                cost
            }
        };
        sum = sum.add(fn_cost);
        let mut i = Info::new(sum, ty);
        i.path = path;
        i.entry = entry;
        i.size = match result_size {
            Some(s) => Some(s),
            // computeSize of the call node itself
            None => {
                let probe = Info {
                    size: None,
                    var_size: None,
                    ..i.clone()
                };
                self.size_of(&probe)
            }
        };
        i
    }

    fn overloads(&mut self, f: &str, target: Option<Tk>, k: &[Tk]) -> Vec<Ovl> {
        use Ovl::*;
        let sized = |t: Tk| matches!(t, Tk::Str | Tk::Bytes);
        match (f, target) {
            ("_==_" | "_!=_", None) => vec![SizedCompare],
            ("_<_" | "_<=_" | "_>_" | "_>=_", None) if k.len() == 2 => {
                if k.iter().any(|t| sized(*t)) {
                    vec![SizedCompare]
                } else if k.iter().all(|t| *t == Tk::Dyn) {
                    vec![SizedCompare, Default]
                } else {
                    vec![Default]
                }
            }
            ("_+_", None) if k.len() == 2 => {
                let concrete: Vec<Tk> = k.iter().copied().filter(|t| *t != Tk::Dyn).collect();
                let pick = |t: Tk| match t {
                    Tk::Str => AddStr,
                    Tk::Bytes => AddBytes,
                    Tk::List => AddList,
                    _ => Default,
                };
                match concrete.as_slice() {
                    [] => vec![AddStr, AddBytes, AddList, Default],
                    [a] => vec![pick(*a)],
                    [a, b] => {
                        let ok = a == b
                            || matches!(
                                (a, b),
                                (Tk::Duration, Tk::Timestamp) | (Tk::Timestamp, Tk::Duration)
                            );
                        if !ok {
                            self.error = true;
                        }
                        vec![pick(*a)]
                    }
                    _ => vec![Default],
                }
            }
            ("@in", None) if k.len() == 2 => match k[1] {
                Tk::List => vec![InList],
                Tk::Dyn => vec![InList, Default],
                _ => vec![Default],
            },
            ("matches", Some(_)) => vec![Matches],
            ("contains", Some(Tk::Str)) => vec![ContainsStr],
            ("contains", Some(Tk::Dyn)) => vec![ContainsStr],
            ("startsWith" | "endsWith", Some(_)) => vec![StartsEnds],
            ("bytes", None) if k.len() == 1 => match k[0] {
                Tk::Str => vec![StrToBytes],
                Tk::Dyn => vec![StrToBytes, Default],
                _ => vec![Default],
            },
            ("string", None) if k.len() == 1 => match k[0] {
                Tk::Bytes => vec![BytesToStr],
                Tk::Dyn => vec![BytesToStr, Default],
                _ => vec![Default],
            },
            _ => vec![Default],
        }
    }

    /// One overload's cost (arguments included) and result size: the Kubernetes library
    /// estimator first, then cel-go's built-in estimates, then O(1).
    fn overload_cost(
        &mut self,
        f: &str,
        o: Ovl,
        target: Option<&Info>,
        a: &[Info],
        arg_sum: Estimate,
    ) -> (Estimate, Option<Size>) {
        if let Some((c, rs)) = self.k8s_call(f, target, a) {
            return (c.add(arg_sum), rs);
        }
        let sz = |s: &Self, i: usize| s.size_or_unknown(&a[i]);
        let est = match o {
            Ovl::StrToBytes => {
                let s = sz(self, 0);
                return (
                    s.factor(STRING_TRAVERSAL_FACTOR).add(arg_sum),
                    Some(Estimate {
                        min: s.min,
                        max: s.max.saturating_mul(4),
                    }),
                );
            }
            Ovl::BytesToStr => {
                let s = sz(self, 0);
                return (
                    s.factor(STRING_TRAVERSAL_FACTOR).add(arg_sum),
                    Some(Estimate {
                        min: s.min / 4,
                        max: s.max,
                    }),
                );
            }
            Ovl::StartsEnds if a.len() == 1 => sz(self, 0).factor(STRING_TRAVERSAL_FACTOR),
            Ovl::InList if a.len() == 2 => sz(self, 1),
            Ovl::Matches if a.len() == 1 => {
                let t = self.size_or_unknown(target.expect("member call"));
                let s = t.add(fixed(1)).factor(STRING_TRAVERSAL_FACTOR);
                let r = sz(self, 0).factor(REGEX_LENGTH_FACTOR);
                s.mul(r)
            }
            Ovl::ContainsStr if a.len() == 1 => {
                let t = self.size_or_unknown(target.expect("member call"));
                t.factor(STRING_TRAVERSAL_FACTOR)
                    .mul(sz(self, 0).factor(STRING_TRAVERSAL_FACTOR))
            }
            Ovl::AddStr | Ovl::AddBytes | Ovl::AddList if a.len() == 2 => {
                let r = sz(self, 0).add(sz(self, 1));
                let c = if o == Ovl::AddList {
                    fixed(1)
                } else {
                    r.factor(STRING_TRAVERSAL_FACTOR)
                };
                return (c.add(arg_sum), Some(r));
            }
            Ovl::SizedCompare if a.len() == 2 => {
                let smallest = sz(self, 0).max.min(sz(self, 1).max);
                Estimate {
                    min: u64::from(smallest > 0),
                    max: smallest,
                }
                .factor(STRING_TRAVERSAL_FACTOR)
            }
            _ => fixed(1),
        };
        (est.add(arg_sum), None)
    }

    /// `k8s.io/apiserver/pkg/cel/library` `CostEstimator.EstimateCallCost` (without the
    /// argument costs, which the caller adds).
    fn k8s_call(
        &self,
        f: &str,
        target: Option<&Info>,
        a: &[Info],
    ) -> Option<(Estimate, Option<Size>)> {
        let sz = |i: &Info| self.size_or_unknown(i);
        let trav = STRING_TRAVERSAL_FACTOR;
        let one = Some((fixed(1), None));
        match f {
            "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
                let t = target?;
                if self.has_params(&t.ty) {
                    let mut el = fixed(1);
                    let et = self.resolve(&self.elem(&t.ty));
                    if matches!(et, Ty::Str | Ty::Bytes) {
                        let ep = t.path.as_ref().filter(|p| !is_accu_path(p)).map(|p| {
                            let mut p = p.clone();
                            p.push("@items".into());
                            p
                        });
                        let es = ep.and_then(|p| self.path_size(&p)).unwrap_or(UNKNOWN);
                        el = el.add(es.factor(trav));
                    }
                    Some((sz(t).mul(el), None))
                } else {
                    Some((sz(t).factor(trav), None))
                }
            }
            "url" if a.len() == 1 => Some((sz(&a[0]).factor(trav), None)),
            "lowerAscii" | "upperAscii" | "substring" | "trim" => {
                let s = sz(target?);
                Some((s.factor(trav), Some(s)))
            }
            "replace" if a.len() >= 2 => {
                let s = sz(target?);
                let from = sz(&a[0]);
                let with = sz(&a[1]);
                let (mut count, mut kept) = (fixed(0), fixed(0));
                if from.min == 0 {
                    count.max = if s.max < u64::MAX { s.max + 1 } else { s.max };
                    kept.max = s.max;
                } else if with.max <= from.min {
                    count.max = 0;
                    kept.max = s.max;
                } else {
                    count.max = (s.max as f64 / from.min as f64).ceil() as u64;
                }
                if from.max == 0 {
                    count.min = if s.min < u64::MAX { s.min + 1 } else { s.min };
                    kept.min = s.min;
                } else if from.max <= with.min {
                    count.min = 0;
                    kept.min = s.min;
                } else {
                    count.min = (s.min as f64 / from.max as f64).ceil() as u64;
                }
                let size = count.mul(with).add(kept);
                Some((s.factor(2.0 * trav), Some(size)))
            }
            "split" => {
                let s = sz(target?);
                let mut max = s.max;
                if a.len() > 1
                    && let Some(n) = literal_as_uint(&a[1])
                {
                    max = n;
                }
                Some((s.factor(2.0 * trav), Some(Estimate { min: 0, max })))
            }
            "join" => {
                let t = target?;
                let list = sz(t);
                let mut s = fixed(0);
                if self.has_params(&t.ty) {
                    let ep = t.path.as_ref().filter(|p| !is_accu_path(p)).map(|p| {
                        let mut p = p.clone();
                        p.push("@items".into());
                        p
                    });
                    let es = ep.and_then(|p| self.path_size(&p)).unwrap_or(UNKNOWN);
                    s = list.mul(es);
                }
                if let Some(sep) = a.first() {
                    let seps = Estimate {
                        min: list.min.saturating_sub(1),
                        max: list.max.saturating_sub(1),
                    };
                    s = s.add(sz(sep).mul(seps));
                }
                Some((s.factor(trav), Some(s)))
            }
            "find" | "findAll" if !a.is_empty() => {
                let s = sz(target?);
                let str_cost = s.add(fixed(1)).factor(trav);
                let re = sz(&a[0]).factor(REGEX_LENGTH_FACTOR);
                Some((str_cost.mul(re), Some(Estimate { min: 0, max: s.max })))
            }
            "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" => {
                target?;
                Some((sz(a.first()?).factor(trav), None))
            }
            "ip" => {
                target?;
                match a.first() {
                    Some(x) => Some((sz(x).factor(trav), None)),
                    None => one,
                }
            }
            "ip.isCanonical" => {
                target?;
                Some((sz(a.first()?).factor(2.0 * trav), None))
            }
            "masked"
            | "prefixLength"
            | "family"
            | "isUnspecified"
            | "isLoopback"
            | "isLinkLocalMulticast"
            | "isLinkLocalUnicast"
            | "sign"
            | "asInteger"
            | "isInteger"
            | "asApproximateFloat"
            | "isGreaterThan"
            | "isLessThan"
            | "compareTo"
            | "add"
            | "sub" => one,
            "containsIP" | "containsCIDR" => {
                target?;
                let x = a.first()?;
                let ip = Estimate { min: 4, max: 16 };
                let mut c = ip.add(ip).factor(trav);
                if f == "containsCIDR" {
                    c = c.add(ip.factor(trav)).add(fixed(1));
                }
                if self.kind(&x.ty) == Tk::Str {
                    c = c.add(sz(x).factor(trav));
                }
                Some((c, None))
            }
            _ => None,
        }
    }

    /// The result type of a call (for sizes and the kinds of later calls).
    fn result_type(&mut self, f: &str, target: Option<&Info>, a: &[Info]) -> Ty {
        let at = |i: usize| a.get(i).map_or(Ty::Dyn, |x| x.ty.clone());
        let tt = target.map_or(Ty::Dyn, |t| t.ty.clone());
        match f {
            "_==_"
            | "_!=_"
            | "_<_"
            | "_<=_"
            | "_>_"
            | "_>=_"
            | "_&&_"
            | "_||_"
            | "!_"
            | "@in"
            | "matches"
            | "contains"
            | "startsWith"
            | "endsWith"
            | "has"
            | "isSorted"
            | "isURL"
            | "isIP"
            | "isCIDR"
            | "isQuantity"
            | "isSemver"
            | "isInteger"
            | "isGreaterThan"
            | "isLessThan"
            | "containsIP"
            | "containsCIDR"
            | "isUnspecified"
            | "isLoopback"
            | "isLinkLocalMulticast"
            | "isLinkLocalUnicast"
            | "ip.isCanonical"
            | "hasValue"
            | "bool"
            | "sets.contains"
            | "sets.intersects"
            | "sets.equivalent" => Ty::Bool,
            "size" | "int" | "indexOf" | "lastIndexOf" | "family" | "prefixLength" | "sign"
            | "asInteger" | "compareTo" | "major" | "minor" | "patch" | "getMilliseconds"
            | "getSeconds" | "getMinutes" | "getHours" | "getDate" | "getDayOfMonth"
            | "getDayOfWeek" | "getDayOfYear" | "getFullYear" | "getMonth" => Ty::Int,
            "uint" => Ty::Uint,
            "double" | "asApproximateFloat" => Ty::Double,
            "string" | "lowerAscii" | "upperAscii" | "trim" | "substring" | "replace"
            | "charAt" | "reverse" | "format" | "strings.quote" | "getScheme" | "getHost"
            | "getHostname" | "getPort" | "getEscapedPath" | "find" | "base64.encode" => Ty::Str,
            "join" => {
                if target.is_some() {
                    let et = self.resolve(&self.elem(&tt));
                    if !matches!(et, Ty::Str | Ty::Dyn) {
                        self.error = true;
                    }
                }
                Ty::Str
            }
            "bytes" | "base64.decode" => Ty::Bytes,
            "duration" => Ty::Duration,
            "timestamp" => Ty::Timestamp,
            "type" => Ty::Type,
            "split" | "findAll" => Ty::List(Box::new(Ty::Str)),
            "getQuery" => Ty::Map(Box::new(Ty::Str), Box::new(Ty::List(Box::new(Ty::Str)))),
            "sum" | "min" | "max" if target.is_some() => self.elem(&tt),
            "math.greatest" | "math.least" => at(0),
            "_+_" | "_-_" | "_*_" | "_/_" | "_%_" => {
                let (x, y) = (self.resolve(&at(0)), self.resolve(&at(1)));
                match (x, y) {
                    (Ty::Timestamp, Ty::Duration) | (Ty::Duration, Ty::Timestamp) => Ty::Timestamp,
                    (Ty::Timestamp, Ty::Timestamp) => Ty::Duration,
                    (Ty::Dyn, t) | (t, _) => t,
                }
            }
            "-_" => at(0),
            "_?_:_" => {
                let (x, y) = (self.resolve(&at(1)), self.resolve(&at(2)));
                if x == y { x } else { Ty::Dyn }
            }
            "_[_]" => match self.kind(&at(0)) {
                Tk::List => self.elem(&at(0)),
                Tk::Map => self.map_value(&at(0)),
                _ => Ty::Dyn,
            },
            "_[?_]" => Ty::Opt(Box::new(match self.kind(&at(0)) {
                Tk::List => self.elem(&at(0)),
                Tk::Map => self.map_value(&at(0)),
                _ => Ty::Dyn,
            })),
            "optional.of" | "optional.ofNonZeroValue" => Ty::Opt(Box::new(at(0))),
            "optional.none" => Ty::Opt(Box::new(Ty::Dyn)),
            "value" | "orValue" => match self.resolve(&tt) {
                Ty::Opt(inner) => *inner,
                _ => Ty::Dyn,
            },
            "or" => tt,
            "dyn" => Ty::Dyn,
            _ => Ty::Opaque,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ovl {
    Default,
    SizedCompare,
    AddStr,
    AddBytes,
    AddList,
    InList,
    Matches,
    ContainsStr,
    StartsEnds,
    StrToBytes,
    BytesToStr,
}

fn merge_ty(prev: Option<Ty>, t: Ty) -> Ty {
    match prev {
        None => t,
        Some(p) if p == t => p,
        Some(_) => Ty::Dyn,
    }
}

fn is_accu_path(p: &[String]) -> bool {
    p.first()
        .is_some_and(|v| v == "@result" || v == "__result__")
}

/// A literal `split` limit, converted to uint as cel-go converts it.
fn literal_as_uint(i: &Info) -> Option<u64> {
    i.lit_uint
}

// ---- CRD accounting ----

/// How often a schema node's rules can run, given the chain of enclosing nodes from the
/// root (outermost first, the node itself not included): the product of the `maxItems` /
/// `maxProperties` of every enclosing list and map, or `None` when one of them is unbounded.
pub fn max_cardinality(ancestors: &[&Props]) -> Option<u64> {
    let mut card: u64 = 1;
    for p in ancestors {
        card = mul_guard(card, extract_max_elements(p)?);
    }
    Some(card)
}

/// The factor by which a schema multiplies the occurrences of its children.
fn extract_max_elements(p: &Props) -> Option<u64> {
    match p.type_.as_str() {
        "object" if p.additional_properties.is_some() => p.max_properties.map(|m| m.max(0) as u64),
        "array" => p.max_items.map(|m| m.max(0) as u64),
        _ => Some(1),
    }
}

/// How many values of this minimum serialized size fit in one request (the cardinality of a
/// node under an unbounded list or map).
pub fn cardinality_from_min_size(min_size: i64) -> u64 {
    (MAX_REQUEST_SIZE_BYTES / (min_size + 1)).max(0) as u64
}

fn mul_guard(base: u64, card: u64) -> u64 {
    if base == 0 {
        0
    } else if u64::MAX / base < card {
        u64::MAX
    } else {
        base * card
    }
}

/// `getCostErrorMessage`.
pub fn cost_error_message(name: &str, cost: u64, limit: u64) -> String {
    let f = cost as f64 / limit as f64;
    let factor = if f > 100.0 {
        "more than 100x".to_string()
    } else if f < 1.5 {
        format!("{f:.6}x")
    } else {
        format!("{f:.1}x")
    };
    format!(
        "{name} exceeds budget by factor of {factor} (try simplifying the rule, or adding \
         maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// The running total of a schema's rule costs and its most expensive contributors.
#[derive(Default)]
struct Total {
    total: u64,
    most_expensive: Vec<(Path, u64)>,
}

impl Total {
    fn observe(&mut self, path: Path, cost: u64) {
        self.total = self.total.saturating_add(cost);
        if cost < STATIC_ESTIMATED_CRD_COST_LIMIT / 100 {
            return;
        }
        self.most_expensive.push((path, cost));
        self.most_expensive.sort_by_key(|e| std::cmp::Reverse(e.1));
        self.most_expensive.truncate(4);
    }
}

/// Whole-CRD cost check for one version's (structurally valid) schema rooted at `path`:
/// the per-rule and per-messageExpression limit violations, and, when the schema's total
/// exceeds its limit, the four most expensive rules and the total.
pub fn check_costs(schema: &Props, path: &Path) -> Vec<Cause> {
    let types = DeclTypes::new(schema);
    let mut out = Vec::new();
    let mut total = Total::default();
    walk(
        schema,
        path,
        Some(1),
        Some(types.root()),
        &types,
        &mut total,
        &mut out,
    );
    if total.total > STATIC_ESTIMATED_CRD_COST_LIMIT {
        for (p, _) in &total.most_expensive {
            out.push(Cause::forbidden(
                p.clone(),
                "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
            ));
        }
        out.push(Cause::forbidden(
            path.clone(),
            cost_error_message(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                total.total,
                STATIC_ESTIMATED_CRD_COST_LIMIT,
            ),
        ));
    }
    out
}

/// The estimated max cost of one expression for `self` of type `ty`, or `None` when it
/// does not compile (or, as far as the estimator can tell, does not type-check to `want`).
fn expression_cost(
    src: &str,
    types: &DeclTypes,
    ty: TypeId,
    old_self_optional: bool,
    want_message: bool,
) -> Option<u64> {
    let expr = super::parser::parse(src).ok()?;
    let o = run(&expr, types, ty, old_self_optional);
    if o.error {
        return None;
    }
    let ok = if want_message {
        match &o.ty {
            Ty::Str | Ty::Dyn => true,
            Ty::List(e) => matches!(**e, Ty::Str),
            _ => false,
        }
    } else {
        matches!(o.ty, Ty::Bool | Ty::Dyn)
    };
    ok.then_some(o.cost.max)
}

#[allow(clippy::too_many_arguments)]
fn walk(
    s: &Props,
    path: &Path,
    card: Option<u64>,
    ty: Option<TypeId>,
    types: &DeclTypes,
    total: &mut Total,
    out: &mut Vec<Cause>,
) {
    if let Some(ty) = ty
        && types.node(ty).min_size.is_some()
    {
        let node = types.node(ty);
        for (i, rule) in s.x_validations.iter().enumerate() {
            if rule.rule.trim().is_empty() {
                continue;
            }
            let optional = rule.optional_old_self == Some(true);
            let Some(max) = expression_cost(&rule.rule, types, ty, optional, false) else {
                continue;
            };
            let times = card
                .unwrap_or_else(|| cardinality_from_min_size(node.min_size.unwrap_or_default()));
            let cost = mul_guard(max, times);
            let rpath = path.child("x-kubernetes-validations").index(i);
            if cost > STATIC_ESTIMATED_COST_LIMIT {
                out.push(Cause::forbidden(
                    rpath.child("rule"),
                    cost_error_message("estimated rule cost", cost, STATIC_ESTIMATED_COST_LIMIT),
                ));
            }
            total.observe(rpath.child("rule"), cost);
            if !rule.message_expression.is_empty()
                && let Some(m) =
                    expression_cost(&rule.message_expression, types, ty, optional, true)
            {
                if m > STATIC_ESTIMATED_COST_LIMIT {
                    out.push(Cause::forbidden(
                        rpath.child("messageExpression"),
                        cost_error_message(
                            "estimated messageExpression cost",
                            m,
                            STATIC_ESTIMATED_COST_LIMIT,
                        ),
                    ));
                }
                total.observe(rpath.child("messageExpression"), m);
            }
        }
    }
    let child_card = card.and_then(|c| Some(mul_guard(c, extract_max_elements(s)?)));
    let node = ty.map(|t| types.node(t));
    if let Some(SchemaOrBool::Schema(a)) = &s.additional_properties {
        let cty = node.filter(|n| n.kind == Kind::Map).and_then(|n| n.elem);
        walk(
            a,
            &path.child("additionalProperties"),
            child_card,
            cty,
            types,
            total,
            out,
        );
    }
    for (name, p) in &s.properties {
        let cty = node.and_then(|n| n.fields.get(name).copied());
        walk(
            p,
            &path.child("properties").key(name),
            child_card,
            cty,
            types,
            total,
            out,
        );
    }
    match &s.items {
        Some(Items::Schema(i)) => {
            let cty = node.filter(|n| n.kind == Kind::List).and_then(|n| n.elem);
            walk(i, &path.child("items"), child_card, cty, types, total, out);
        }
        Some(Items::Array(list)) => {
            for (k, i) in list.iter().enumerate() {
                walk(
                    i,
                    &path.child("items").index(k),
                    child_card,
                    None,
                    types,
                    total,
                    out,
                );
            }
        }
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::parser::parse;
    use serde_json::json;
    use std::collections::BTreeSet;

    fn schema(v: serde_json::Value) -> Props {
        Props::from_value("", &v).unwrap()
    }

    fn est(rule: &str, s: serde_json::Value) -> Estimate {
        let p = schema(s);
        let t = DeclTypes::new(&p);
        estimate(&parse(rule).unwrap(), &t, t.root())
    }

    #[test]
    fn nested_loop_over_bounded_list() {
        let s = json!({"type": "array", "maxItems": 400,
            "items": {"type": "string", "maxLength": 64}});
        let n = 400u64;
        let e = est("self.all(x, self.exists(y, x == y))", s);
        assert_eq!(e.max, 2 + 5 * n + 32 * n * n);
    }

    #[test]
    fn simple_costs() {
        let obj = json!({"type": "object", "properties": {
            "a": {"type": "string", "maxLength": 10},
            "b": {"type": "integer"}}});
        assert_eq!(est("has(self.a)", obj.clone()).max, 2);
        assert_eq!(est("self.b > 0", obj.clone()).max, 3);
        // 'x' has size 1, self.a up to 40 bytes: equality costs ceil(1 * 0.1)
        assert_eq!(est("self.a == 'x'", obj.clone()).max, 3);
        // 40 * 0.1 = 4 for the traversal, 2 to reach the field
        assert_eq!(est("self.a.startsWith('ab')", obj).max, 2 + 1);
    }

    #[test]
    fn messages() {
        assert_eq!(
            cost_error_message("estimated rule cost", 512_020_002, 10_000_000),
            "estimated rule cost exceeds budget by factor of 51.2x (try simplifying the rule, \
             or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings \
             are declared)"
        );
        assert!(cost_error_message("x", 130_539_682, 100_000_000).contains("1.305397x"));
        assert!(cost_error_message("x", u64::MAX, 1).contains("more than 100x"));
    }

    #[test]
    fn cardinality() {
        let list = schema(json!({"type": "array", "maxItems": 5}));
        let map = schema(json!({"type": "object", "maxProperties": 3,
            "additionalProperties": {"type": "string"}}));
        let obj = schema(json!({"type": "object"}));
        let open = schema(json!({"type": "array"}));
        assert_eq!(max_cardinality(&[&obj, &list, &map]), Some(15));
        assert_eq!(max_cardinality(&[&obj, &open, &map]), None);
        assert_eq!(cardinality_from_min_size(2), 1_048_576);
    }

    type CauseSet = BTreeSet<(String, String)>;

    fn expected_cost_causes(structural: &serde_json::Value) -> CauseSet {
        structural["crdErrors"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| {
                let d = c["detail"].as_str()?;
                let cost = d.contains("exceeds budget by factor")
                    || d.contains("contributed to estimated rule cost total");
                cost.then(|| (c["field"].as_str().unwrap().to_string(), d.to_string()))
            })
            .collect()
    }

    fn actual_cost_causes(crd_yaml: &str) -> CauseSet {
        let docs = crate::load::parse_str("crd.yaml", crd_yaml);
        let doc = docs.into_iter().find_map(|d| d.ok()).expect("a document");
        let crd = crate::crd::Crd::from_value(&doc.value).expect("a CRD");
        let mut out = CauseSet::new();
        let shared = crd.schemas_shared();
        for (i, v) in crd.versions.iter().enumerate() {
            if shared && i > 0 {
                break;
            }
            let Some(s) = &v.schema else { continue };
            let Ok(p) = Props::from_value("", s) else {
                continue;
            };
            for c in check_costs(&p, &crd.validation_schema_path(i)) {
                out.insert((c.field.to_string(), c.detail));
            }
        }
        out
    }

    const CASES: &str = "/work/shared/conformance/cases";

    fn case(name: &str) -> (CauseSet, CauseSet) {
        let dir = std::path::Path::new(CASES).join(name);
        let crd = std::fs::read_to_string(dir.join("crd.yaml")).unwrap();
        let st: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("structural.json")).unwrap())
                .unwrap();
        (actual_cost_causes(&crd), expected_cost_causes(&st))
    }

    #[test]
    fn calibration_total_cost() {
        if !std::path::Path::new(CASES).exists() {
            return;
        }
        let (got, want) = case("synthetic-crd-cel-cost");
        assert_eq!(want.len(), 5);
        assert_eq!(got, want);
    }

    #[test]
    fn calibration_invalid_rules() {
        if !std::path::Path::new(CASES).exists() {
            return;
        }
        let (got, want) = case("synthetic-crd-cel-invalid");
        assert!(want.len() >= 8);
        assert_eq!(got, want);
    }

    #[test]
    fn all_conformance_cases() {
        let Ok(dir) = std::fs::read_dir(CASES) else {
            return;
        };
        let mut names: Vec<String> = dir
            .filter_map(|e| e.ok())
            .filter(|e| e.path().join("crd.yaml").exists())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let mut bad = Vec::new();
        for n in &names {
            let (got, want) = case(n);
            if got != want {
                bad.push(format!("{n}: got {got:?}\n want {want:?}"));
            }
        }
        println!(
            "cost causes agree on {}/{} cases",
            names.len() - bad.len(),
            names.len()
        );
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }
}
