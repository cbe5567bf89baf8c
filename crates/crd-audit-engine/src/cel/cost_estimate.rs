//! The static cost estimate of a checked expression, as kube-apiserver computes it when a
//! CRD is written: cel-go's estimator (`checker.Cost`) over the checked expression (macros
//! expanded, every call with its matching overloads), with the cost options of the 1.36
//! environment (presence tests free, the lists extension's version-3 estimators, the sets
//! extension's), the Kubernetes library's `EstimateCallCost`, and the CRD size estimator
//! (the `MaxElements` of the declared type a field path reaches from the rule's node).
//!
//! Field paths are kept as Go slices (a shared backing array, a length and a capacity)
//! because cel-go appends to them in place: two paths appended to the same parent path can
//! share their last element, and upstream estimates are computed with that.

use super::ast::Literal;
use super::check::{TKind, TNode, Typed};
use super::decls::CelType;
use super::types::{DeclTypes, Kind, TypeId, escape_field};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

const STRING_TRAVERSAL_FACTOR: f64 = 0.1;
const REGEX_LENGTH_FACTOR: f64 = 0.25;
const LIST_CREATE_COST: u64 = 10;
const MAP_CREATE_COST: u64 = 30;
const STRUCT_CREATE_COST: u64 = 40;
const SELECT_AND_IDENT_COST: u64 = 1;
/// `cel.MaxFormatSize` and `cel.MaxNameFormatRegexSize` of the Kubernetes library.
const MAX_FORMAT_SIZE: u64 = 64;
const MAX_NAME_FORMAT_REGEX_SIZE: f64 = 128.0;

/// A cost or size range (cel-go's `CostEstimate` and `SizeEstimate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Estimate {
    pub min: u64,
    pub max: u64,
}

type Size = Estimate;

const UNKNOWN: Estimate = Estimate {
    min: 0,
    max: u64::MAX,
};

fn fixed(v: u64) -> Estimate {
    Estimate { min: v, max: v }
}

/// `cost.SafeMultiplyByFactor`.
fn by_factor(x: u64, f: f64) -> u64 {
    let xf = x as f64;
    if xf > 0.0 && f > 0.0 && xf > u64::MAX as f64 / f {
        return u64::MAX;
    }
    let v = xf * f;
    if v.is_nan() || v <= 0.0 {
        return 0;
    }
    let c = v.ceil();
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

/// A Go `[]string`: a window on a shared, growable array.
#[derive(Clone, Debug, Default)]
struct GoPath {
    buf: Rc<RefCell<Vec<String>>>,
    len: usize,
    cap: usize,
}

impl GoPath {
    fn of(name: &str) -> GoPath {
        GoPath {
            buf: Rc::new(RefCell::new(vec![name.to_string()])),
            len: 1,
            cap: 1,
        }
    }

    fn get(&self) -> Vec<String> {
        self.buf.borrow()[..self.len].to_vec()
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn first_is(&self, f: impl Fn(&str) -> bool) -> bool {
        self.len > 0 && f(&self.buf.borrow()[0])
    }

    /// Go's `append(p, s)`: in place when the capacity allows (overwriting what another
    /// append wrote there), else into a new array of twice the capacity.
    fn append(&self, s: &str) -> GoPath {
        if self.len < self.cap {
            let mut b = self.buf.borrow_mut();
            if b.len() > self.len {
                b[self.len] = s.to_string();
            } else {
                b.push(s.to_string());
            }
            drop(b);
            GoPath {
                buf: self.buf.clone(),
                len: self.len + 1,
                cap: self.cap,
            }
        } else {
            let mut v = self.get();
            v.push(s.to_string());
            GoPath {
                buf: Rc::new(RefCell::new(v)),
                len: self.len + 1,
                cap: if self.cap == 0 { 1 } else { self.cap * 2 },
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Container {
    Unknown,
    List,
    Map,
}

/// `entrySizeEstimate`.
#[derive(Clone, Copy, Debug)]
struct EntrySize {
    container: Container,
    key: Size,
    val: Size,
}

fn entry_union(a: Option<EntrySize>, b: Option<EntrySize>) -> Option<EntrySize> {
    let (a, b) = (a?, b?);
    Some(EntrySize {
        container: a.container,
        key: a.key.union(b.key),
        val: a.val.union(b.val),
    })
}

struct LocalVar {
    path: GoPath,
    size: Option<Size>,
    entry: Option<EntrySize>,
}

/// An `AstNode` given to the function estimators.
#[derive(Clone)]
struct AstNode {
    path: GoPath,
    ty: CelType,
    /// The node, when there is one (not for list element nodes).
    expr: Option<usize>,
    computed: Option<Size>,
}

/// The estimated cost of the checked expression `typed` whose `self` is the schema node
/// `root`.
pub fn estimate(typed: &Typed, types: &DeclTypes, root: TypeId) -> Estimate {
    let mut c = Coster {
        nodes: &typed.nodes,
        types,
        root,
        paths: HashMap::new(),
        vars: HashMap::new(),
        sizes: HashMap::new(),
        entry_sizes: HashMap::new(),
    };
    c.cost(typed.root)
}

struct Coster<'t> {
    nodes: &'t [TNode],
    types: &'t DeclTypes,
    root: TypeId,
    paths: HashMap<usize, GoPath>,
    vars: HashMap<String, Vec<LocalVar>>,
    sizes: HashMap<usize, Size>,
    entry_sizes: HashMap<usize, EntrySize>,
}

fn is_scalar(t: &CelType) -> bool {
    match t {
        CelType::Bool
        | CelType::Double
        | CelType::Duration
        | CelType::Int
        | CelType::Timestamp
        | CelType::Uint => true,
        CelType::Opaque(n, p) if &**n == "optional_type" => p.first().is_some_and(is_scalar),
        _ => false,
    }
}

fn list_elem(t: &CelType) -> Option<&CelType> {
    match t {
        CelType::List(e) => Some(e),
        _ => None,
    }
}

/// `Type().Parameters()[0]`.
fn first_param(t: &CelType) -> Option<&CelType> {
    t.params().into_iter().next()
}

impl Coster<'_> {
    fn ty(&self, e: usize) -> &CelType {
        &self.nodes[e].ty
    }

    // ---- variables and paths ----

    fn peek(&self, name: &str) -> Option<&LocalVar> {
        self.vars.get(name).and_then(|s| s.last())
    }

    fn push_var(&mut self, name: &str, v: LocalVar) {
        self.vars.entry(name.to_string()).or_default().push(v);
    }

    fn pop_var(&mut self, name: &str) {
        if let Some(s) = self.vars.get_mut(name) {
            s.pop();
        }
    }

    fn get_path(&self, e: usize) -> GoPath {
        if let TKind::Ident(n) = &self.nodes[e].kind
            && let Some(v) = self.peek(n)
        {
            return v.path.clone();
        }
        self.paths.get(&e).cloned().unwrap_or_default()
    }

    fn push_local(&mut self, name: &str, e: usize) {
        let path = self.get_path(e);
        let entry = self.entry_size(e);
        let size = self.compute_size(e);
        self.push_var(name, LocalVar { path, size, entry });
    }

    fn container_of(&self, entry: Option<EntrySize>, range: usize) -> Container {
        match entry.map_or(Container::Unknown, |e| e.container) {
            Container::Unknown => match self.ty(range) {
                CelType::List(_) => Container::List,
                CelType::Map(..) => Container::Map,
                _ => Container::Unknown,
            },
            c => c,
        }
    }

    fn push_iter_key(&mut self, name: &str, range: usize) {
        let entry = self.entry_size(range);
        let size = entry.map(|e| e.key);
        let path = self.get_path(range);
        let sub = if self.container_of(entry, range) == Container::List {
            "@indices"
        } else {
            "@keys"
        };
        let path = path.append(sub);
        self.push_var(
            name,
            LocalVar {
                path,
                size,
                entry: None,
            },
        );
    }

    fn push_iter_value(&mut self, name: &str, range: usize) {
        let entry = self.entry_size(range);
        let size = entry.map(|e| e.val);
        let path = self.get_path(range);
        let sub = if self.container_of(entry, range) == Container::List {
            "@items"
        } else {
            "@values"
        };
        let path = path.append(sub);
        self.push_var(
            name,
            LocalVar {
                path,
                size,
                entry: None,
            },
        );
    }

    fn push_iter_single(&mut self, name: &str, range: usize) {
        let entry = self.entry_size(range);
        let (size, sub) = if self.container_of(entry, range) == Container::List {
            (entry.map(|e| e.val), "@items")
        } else {
            (entry.map(|e| e.key), "@keys")
        };
        let path = self.get_path(range).append(sub);
        self.push_var(
            name,
            LocalVar {
                path,
                size,
                entry: None,
            },
        );
    }

    // ---- sizes ----

    /// The CRD size estimator: the `MaxElements` of the declared type reached by the path
    /// from the rule's node (the first element, whatever variable it names, stands for it).
    fn estimate_size(&self, path: &GoPath) -> Option<Size> {
        if path.is_empty() {
            return None;
        }
        let path = path.get();
        // `None`: the string key type of a map (no size, no children).
        let mut cur = Some(self.root);
        for p in &path[1..] {
            let n = self.types.node(cur?);
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
                        let (_, &id) = n
                            .fields
                            .iter()
                            .find(|(k, _)| escape_field(k).as_deref() == Some(f))?;
                        if !self.types.exposed(id) {
                            return None;
                        }
                        Some(id)
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

    fn set_size(&mut self, e: usize, s: Option<Size>) {
        if let Some(s) = s {
            self.sizes.insert(e, s);
        }
    }

    fn set_entry(&mut self, e: usize, s: Option<EntrySize>) {
        if let Some(s) = s {
            self.entry_sizes.insert(e, s);
        }
    }

    fn entry_size(&self, e: usize) -> Option<EntrySize> {
        if let Some(s) = self.entry_sizes.get(&e) {
            return Some(*s);
        }
        if let TKind::Ident(n) = &self.nodes[e].kind
            && let Some(v) = self.peek(n)
        {
            return v.entry;
        }
        None
    }

    /// `computeSize`.
    fn compute_size(&mut self, e: usize) -> Option<Size> {
        if let Some(s) = self.sizes.get(&e) {
            return Some(*s);
        }
        let literal = match &self.nodes[e].kind {
            TKind::Lit(l) => Some(match l {
                Literal::String(s) => s.chars().count() as u64,
                Literal::Bytes(b) => b.len() as u64,
                _ => 1,
            }),
            TKind::List(items) => Some(items.len() as u64),
            TKind::Map(entries) => Some(entries.len() as u64),
            _ => None,
        };
        if let Some(v) = literal {
            return Some(fixed(v));
        }
        let path = self.get_path(e);
        if let Some(s) = self.estimate_size(&path) {
            self.sizes.insert(e, s);
            return Some(s);
        }
        if is_scalar(self.ty(e)) {
            return Some(fixed(1));
        }
        if let TKind::Ident(n) = &self.nodes[e].kind
            && let Some(v) = self.peek(n)
            && v.size.is_some()
        {
            return v.size;
        }
        None
    }

    fn size_or_unknown(&mut self, e: usize) -> Size {
        self.compute_size(e).unwrap_or(UNKNOWN)
    }

    fn copy_sizes(&mut self, dst: usize, src: usize) {
        let s = self.compute_size(src);
        self.set_size(dst, s);
        let en = self.entry_size(src);
        self.set_entry(dst, en);
    }

    fn ast_node(&mut self, e: usize) -> AstNode {
        let mut path = self.get_path(e);
        if path.first_is(|p| p == "@result" || p == "__result__") {
            path = GoPath::default();
        }
        AstNode {
            path,
            ty: self.ty(e).clone(),
            expr: Some(e),
            computed: self.compute_size(e),
        }
    }

    /// `estimateSize` of the extensions and `sizeEstimate` of the Kubernetes library.
    fn node_size(&self, n: &AstNode) -> Size {
        n.computed
            .or_else(|| self.estimate_size(&n.path))
            .unwrap_or(UNKNOWN)
    }

    fn node_size_or_unknown(&self, n: &AstNode) -> Size {
        n.computed.unwrap_or(UNKNOWN)
    }

    // ---- nodes ----

    fn cost(&mut self, e: usize) -> Estimate {
        match &self.nodes[e].kind {
            TKind::Lit(_) => fixed(0),
            TKind::Ident(n) => {
                let path = match self.peek(n) {
                    Some(v) => v.path.clone(),
                    None => GoPath::of(n),
                };
                self.paths.insert(e, path);
                fixed(SELECT_AND_IDENT_COST)
            }
            TKind::Select {
                operand,
                field,
                test_only,
            } => {
                let (operand, field, test_only) = (*operand, field.clone(), *test_only);
                if test_only {
                    // Presence tests are free in the Kubernetes environment.
                    return self.cost(operand);
                }
                let mut sum = self.cost(operand);
                if matches!(
                    self.ty(operand),
                    CelType::Map(..) | CelType::Struct(..) | CelType::Param(_)
                ) {
                    sum = sum.add(fixed(SELECT_AND_IDENT_COST));
                }
                let path = self.get_path(operand).append(&field);
                self.paths.insert(e, path);
                sum
            }
            TKind::Call { .. } => self.cost_call(e),
            TKind::List(items) => {
                let items = items.clone();
                let mut sum = fixed(0);
                let mut item = Estimate {
                    min: u64::MAX,
                    max: 0,
                };
                if items.is_empty() {
                    item.min = 0;
                }
                for x in items {
                    sum = sum.add(self.cost(x));
                    let s = self.size_or_unknown(x);
                    item = item.union(s);
                }
                self.set_entry(
                    e,
                    Some(EntrySize {
                        container: Container::List,
                        key: fixed(1),
                        val: item,
                    }),
                );
                sum.add(fixed(LIST_CREATE_COST))
            }
            TKind::Map(entries) => {
                let entries = entries.clone();
                let mut sum = fixed(0);
                let mut ks = Estimate {
                    min: u64::MAX,
                    max: 0,
                };
                let mut vs = ks;
                if entries.is_empty() {
                    ks.min = 0;
                    vs.min = 0;
                }
                for (k, v) in entries {
                    sum = sum.add(self.cost(k));
                    sum = sum.add(self.cost(v));
                    let s = self.size_or_unknown(k);
                    ks = ks.union(s);
                    let s = self.size_or_unknown(v);
                    vs = vs.union(s);
                }
                self.set_entry(
                    e,
                    Some(EntrySize {
                        container: Container::Map,
                        key: ks,
                        val: vs,
                    }),
                );
                sum.add(fixed(MAP_CREATE_COST))
            }
            TKind::Struct(fields) => {
                let fields = fields.clone();
                let mut sum = fixed(0);
                for f in fields {
                    sum = sum.add(self.cost(f));
                }
                sum.add(fixed(STRUCT_CREATE_COST))
            }
            TKind::Compr { .. } => self.cost_comprehension(e),
        }
    }

    fn cost_comprehension(&mut self, e: usize) -> Estimate {
        let TKind::Compr {
            range,
            var,
            var2,
            accu,
            init,
            cond,
            step,
            result,
        } = self.nodes[e].kind.clone()
        else {
            return fixed(0);
        };
        let is_bind = matches!(&self.nodes[range].kind, TKind::List(l) if l.is_empty())
            && matches!(&self.nodes[cond].kind, TKind::Lit(Literal::Bool(false)))
            && accu != "__result__";
        if is_bind {
            let mut sum = self.cost(range);
            sum = sum.add(self.cost(init));
            self.push_local(&accu, init);
            sum = sum.add(self.cost(result));
            self.pop_var(&accu);
            self.copy_sizes(e, result);
            return sum;
        }
        let mut sum = self.cost(range);
        sum = sum.add(self.cost(init));
        self.push_local(&accu, init);
        match &var2 {
            Some(v2) => {
                self.push_iter_key(&var, range);
                self.push_iter_value(v2, range);
            }
            None => self.push_iter_single(&var, range),
        }
        let loop_cost = self.cost(cond);
        let step_cost = self.cost(step);
        self.pop_var(&var);
        if let Some(v2) = &var2 {
            self.pop_var(v2);
        }
        sum = sum.add(self.cost(result));
        self.pop_var(&accu);
        let count = self.size_or_unknown(range);
        sum = sum.add(count.mul(step_cost.add(loop_cost)));
        match &self.nodes[init].kind {
            TKind::Lit(_) => {
                let s = self.compute_size(init);
                self.set_size(e, s);
            }
            TKind::List(_) | TKind::Map(_) => {
                self.set_size(e, Some(count));
                let en = self.entry_size(step);
                self.set_entry(e, en);
            }
            _ => {}
        }
        sum
    }

    fn cost_call(&mut self, e: usize) -> Estimate {
        let TKind::Call {
            function,
            target,
            args,
            overloads,
        } = self.nodes[e].kind.clone()
        else {
            return fixed(0);
        };
        if function == "dyn" && target.is_none() && args.len() == 1 {
            let c = self.cost(args[0]);
            self.copy_sizes(e, args[0]);
            return fixed(1).add(c);
        }
        let mut arg_costs = Vec::with_capacity(args.len());
        let mut arg_nodes = Vec::with_capacity(args.len());
        for &a in &args {
            arg_costs.push(self.cost(a));
            arg_nodes.push(self.ast_node(a));
        }
        if overloads.is_empty() {
            return fixed(0);
        }
        let mut sum = fixed(0);
        let mut target_node = None;
        if let Some(t) = target {
            sum = sum.add(self.cost(t));
            target_node = Some(self.ast_node(t));
        }
        let mut fn_cost = Estimate {
            min: u64::MAX,
            max: 0,
        };
        let mut result_size: Option<Size> = None;
        for o in &overloads {
            let (c, rs) = self.function_cost(
                e,
                &function,
                o,
                target_node.as_ref(),
                &args,
                &arg_nodes,
                &arg_costs,
            );
            fn_cost = fn_cost.union(c);
            if let Some(rs) = rs {
                result_size = Some(result_size.map_or(rs, |p| p.union(rs)));
            }
            match *o {
                "index_list" | "index_map" if !args.is_empty() => {
                    result_size = self.entry_size(args[0]).map(|en| en.val);
                    let sub = if *o == "index_list" {
                        "@items"
                    } else {
                        "@values"
                    };
                    let path = self.get_path(args[0]).append(sub);
                    self.paths.insert(e, path);
                }
                _ => {}
            }
            if result_size.is_none() {
                result_size = self.compute_size(e);
            }
        }
        self.set_size(e, result_size);
        sum.add(fn_cost)
    }

    /// `functionCost`: the overload estimators of the extensions, the Kubernetes library's
    /// estimator, then cel-go's own estimates; the argument costs included.
    #[allow(clippy::too_many_arguments)]
    fn function_cost(
        &mut self,
        e: usize,
        function: &str,
        overload: &str,
        target: Option<&AstNode>,
        args: &[usize],
        nodes: &[AstNode],
        arg_costs: &[Estimate],
    ) -> (Estimate, Option<Size>) {
        let arg_sum = arg_costs.iter().fold(fixed(0), |s, c| s.add(*c));
        if let Some((c, rs)) = self.extension_estimate(overload, target, nodes) {
            return (c.add(arg_sum), rs);
        }
        if let Some((c, rs)) = self.k8s_estimate(function, overload, target, nodes) {
            return (c.add(arg_sum), rs);
        }
        let text = |c: &mut Self, n: &AstNode| c.node_size_or_unknown(n);
        match overload {
            "string_format" if target.is_some() => {
                let t = target.map(|t| text(self, t)).unwrap_or(UNKNOWN);
                return (t.factor(STRING_TRAVERSAL_FACTOR).add(arg_sum), None);
            }
            "string_to_bytes" if nodes.len() == 1 => {
                let s = text(self, &nodes[0]);
                let rs = Estimate {
                    min: s.min,
                    max: s.max.wrapping_mul(4),
                };
                return (s.factor(STRING_TRAVERSAL_FACTOR).add(arg_sum), Some(rs));
            }
            "bytes_to_string" if nodes.len() == 1 => {
                let s = text(self, &nodes[0]);
                let rs = Estimate {
                    min: s.min / 4,
                    max: s.max,
                };
                return (s.factor(STRING_TRAVERSAL_FACTOR).add(arg_sum), Some(rs));
            }
            "strings_quote" if nodes.len() == 1 => {
                let s = text(self, &nodes[0]);
                let rs = Estimate {
                    min: s.min.wrapping_add(2),
                    max: s.max.wrapping_mul(2).wrapping_add(2),
                };
                return (s.factor(STRING_TRAVERSAL_FACTOR).add(arg_sum), Some(rs));
            }
            "starts_with_string" | "ends_with_string" if nodes.len() == 1 => {
                let s = text(self, &nodes[0]);
                return (s.factor(STRING_TRAVERSAL_FACTOR).add(arg_sum), None);
            }
            "in_list" if nodes.len() == 2 => {
                let s = text(self, &nodes[1]);
                return (s.factor(1.0).add(arg_sum), None);
            }
            "matches" | "matches_string" => {
                let pair = match (overload, target) {
                    ("matches_string", Some(t)) if nodes.len() == 1 => Some((t, &nodes[0])),
                    ("matches", None) if nodes.len() == 2 => Some((&nodes[0], &nodes[1])),
                    _ => None,
                };
                if let Some((s, re)) = pair {
                    let str_cost = text(self, s).add(fixed(1)).factor(STRING_TRAVERSAL_FACTOR);
                    let re_cost = text(self, re).factor(REGEX_LENGTH_FACTOR);
                    return (str_cost.mul(re_cost).add(arg_sum), None);
                }
            }
            "contains_string" if target.is_some() && nodes.len() == 1 => {
                let t = target.map(|t| text(self, t)).unwrap_or(UNKNOWN);
                let s = t.factor(STRING_TRAVERSAL_FACTOR);
                let sub = text(self, &nodes[0]).factor(STRING_TRAVERSAL_FACTOR);
                return (s.mul(sub).add(arg_sum), None);
            }
            "logical_or" | "logical_and" if arg_costs.len() == 2 => {
                let (l, r) = (arg_costs[0], arg_costs[1]);
                return (
                    Estimate {
                        min: l.min,
                        max: l.add(r).max,
                    },
                    None,
                );
            }
            "conditional" if nodes.len() == 3 => {
                let size = text(self, &nodes[1]).union(text(self, &nodes[2]));
                let en = entry_union(self.entry_size(args[1]), self.entry_size(args[2]));
                self.set_entry(e, en);
                let c = arg_costs[0].add(arg_costs[1].union(arg_costs[2]));
                return (c, Some(size));
            }
            "add_string" | "add_bytes" | "add_list" if nodes.len() == 2 => {
                let size = text(self, &nodes[0]).add(text(self, &nodes[1]));
                let en = entry_union(self.entry_size(args[0]), self.entry_size(args[1]));
                self.set_entry(e, en);
                let c = if overload == "add_list" {
                    fixed(1)
                } else {
                    size.factor(STRING_TRAVERSAL_FACTOR)
                };
                return (c.add(arg_sum), Some(size));
            }
            "less_string"
            | "greater_string"
            | "less_equals_string"
            | "greater_equals_string"
            | "less_bytes"
            | "greater_bytes"
            | "less_equals_bytes"
            | "greater_equals_bytes"
            | "equals"
            | "not_equals"
                if nodes.len() == 2 =>
            {
                let smallest = text(self, &nodes[0]).max.min(text(self, &nodes[1]).max);
                let c = Estimate {
                    min: u64::from(smallest > 0),
                    max: smallest,
                }
                .factor(STRING_TRAVERSAL_FACTOR);
                return (c.add(arg_sum), None);
            }
            _ => {}
        }
        (fixed(1).add(arg_sum), None)
    }

    /// The cost options of the lists extension (version 3) and the sets extension.
    fn extension_estimate(
        &self,
        overload: &str,
        target: Option<&AstNode>,
        args: &[AstNode],
    ) -> Option<(Estimate, Option<Size>)> {
        // estimateAllocatingListCall
        let alloc = |factor: f64, size: Size| {
            let c = size
                .factor(factor)
                .add(fixed(LIST_CREATE_COST))
                .add(fixed(1));
            Some((c, Some(size)))
        };
        let uint_arg = |n: &AstNode, default: u64| match n.expr.map(|i| &self.nodes[i].kind) {
            Some(TKind::Lit(Literal::Int(v))) => {
                if *v < 0 {
                    0
                } else {
                    *v as u64
                }
            }
            _ => default,
        };
        let text_factor = |t: Option<&CelType>| {
            if matches!(t, Some(CelType::String | CelType::Bytes)) {
                2.0 + STRING_TRAVERSAL_FACTOR
            } else {
                2.0
            }
        };
        match overload {
            "list_slice" => {
                let t = target?;
                if args.len() != 2 {
                    return None;
                }
                let sz = self.node_size(t);
                let start = uint_arg(&args[0], 0);
                let end = uint_arg(&args[1], sz.max);
                alloc(1.0, fixed(end.wrapping_sub(start)))
            }
            "lists_range" => {
                if target.is_some() || args.len() != 1 {
                    return None;
                }
                alloc(1.0, fixed(uint_arg(&args[0], u64::MAX)))
            }
            "list_reverse" => {
                let t = target?;
                if !args.is_empty() {
                    return None;
                }
                alloc(1.0, self.node_size(t))
            }
            "list_flatten" | "list_flatten_int" => {
                let t = target?;
                if args.len() > 1 {
                    return None;
                }
                let depth = args.first().map_or(1, |a| uint_arg(a, u64::MAX));
                alloc(depth as f64, self.node_size(t))
            }
            "list_distinct" => {
                let t = target?;
                if !args.is_empty() {
                    return None;
                }
                let sz = self.node_size(t);
                alloc(text_factor(list_elem(&t.ty)), sz.mul(sz))
            }
            "list_sets_contains_list"
            | "list_sets_intersects_list"
            | "list_sets_equivalent_list" => {
                if args.len() != 2 {
                    return None;
                }
                let factor = if overload == "list_sets_equivalent_list" {
                    2.0
                } else {
                    1.0
                };
                let c = self
                    .node_size(&args[0])
                    .mul(self.node_size(&args[1]))
                    .factor(factor)
                    .add(fixed(1));
                Some((c, None))
            }
            o => {
                let rest = o.strip_prefix("list_")?;
                let (elem, node) = if let Some(t) = rest.strip_suffix("_sortByAssociatedKeys") {
                    target?;
                    if args.len() != 1 {
                        return None;
                    }
                    (t, &args[0])
                } else if let Some(t) = rest.strip_suffix("_sort") {
                    if !args.is_empty() {
                        return None;
                    }
                    (t, target?)
                } else {
                    return None;
                };
                let sz = self.node_size(node);
                let factor = if elem == "string" || elem == "bytes" {
                    2.0 + STRING_TRAVERSAL_FACTOR
                } else {
                    2.0
                };
                alloc(factor, sz.mul(sz))
            }
        }
    }

    /// The Kubernetes library's `EstimateCallCost` (without the argument costs).
    fn k8s_estimate(
        &self,
        function: &str,
        overload: &str,
        target: Option<&AstNode>,
        args: &[AstNode],
    ) -> Option<(Estimate, Option<Size>)> {
        let trav = STRING_TRAVERSAL_FACTOR;
        let one = Some((fixed(1), None));
        match function {
            "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
                let t = target?;
                if let Some(elem_ty) = first_param(&t.ty) {
                    // listElementNode: the element type, and the path to the items.
                    let mut el = fixed(1);
                    if matches!(elem_ty, CelType::String | CelType::Bytes) {
                        let sz = self.estimate_size(&items_path(&t.path)).unwrap_or(UNKNOWN);
                        el = el.add(sz.factor(trav));
                    }
                    Some((self.node_size(t).mul(el), None))
                } else {
                    Some((self.node_size(t).factor(trav), None))
                }
            }
            "url" | "jsonpatch.escapeKey" if args.len() == 1 => {
                let sz = self.node_size(&args[0]);
                Some((sz.factor(trav), Some(sz)))
            }
            "lowerAscii" | "upperAscii" | "substring" | "trim" => {
                let sz = self.node_size(target?);
                Some((sz.factor(trav), Some(sz)))
            }
            "replace" => {
                let t = target?;
                if args.len() < 2 {
                    return None;
                }
                let sz = self.node_size(t);
                let from = self.node_size(&args[0]);
                let with = self.node_size(&args[1]);
                let (mut count, mut kept) = (fixed(0), fixed(0));
                if from.min == 0 {
                    count.max = if sz.max < u64::MAX {
                        sz.max + 1
                    } else {
                        sz.max
                    };
                    kept.max = sz.max;
                } else if with.max <= from.min {
                    count.max = 0;
                    kept.max = sz.max;
                } else {
                    count.max = go_f64_to_u64((sz.max as f64 / from.min as f64).ceil());
                }
                if from.max == 0 {
                    count.min = if sz.min < u64::MAX {
                        sz.min + 1
                    } else {
                        sz.min
                    };
                    kept.min = sz.min;
                } else if from.max <= with.min {
                    count.min = 0;
                    kept.min = sz.min;
                } else {
                    count.min = go_f64_to_u64((sz.min as f64 / from.max as f64).ceil());
                }
                let size = count.mul(with).add(kept);
                Some((sz.factor(2.0 * trav), Some(size)))
            }
            "split" => {
                let t = target?;
                let sz = self.node_size(t);
                let mut max = sz.max;
                if let Some(n) = args.get(1)
                    && let Some(i) = n.expr
                    && let TKind::Lit(Literal::Int(v)) = &self.nodes[i].kind
                {
                    max = *v as u64;
                }
                Some((sz.factor(2.0 * trav), Some(Estimate { min: 0, max })))
            }
            "join" => {
                let t = target?;
                let list = self.node_size(t);
                let mut sz = fixed(0);
                if first_param(&t.ty).is_some() {
                    let elem = self.estimate_size(&items_path(&t.path)).unwrap_or(UNKNOWN);
                    sz = list.mul(elem);
                }
                if let Some(sep) = args.first() {
                    let seps = Estimate {
                        min: list.min.saturating_sub(1),
                        max: list.max.saturating_sub(1),
                    };
                    sz = sz.add(self.node_size(sep).mul(seps));
                }
                Some((sz.factor(trav), Some(sz)))
            }
            "find" | "findAll" => {
                let t = target?;
                let re = args.first()?;
                let sz = self.node_size(t);
                let str_cost = sz.add(fixed(1)).factor(trav);
                let re_cost = self.node_size(re).factor(REGEX_LENGTH_FACTOR);
                Some((
                    str_cost.mul(re_cost),
                    Some(Estimate {
                        min: 0,
                        max: sz.max,
                    }),
                ))
            }
            "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" | "semver" | "isSemver" => {
                let a = args.first()?;
                Some((self.node_size(a).factor(trav), None))
            }
            "ip" => {
                if overload == "cidr_ip" {
                    return one;
                }
                let a = args.first()?;
                Some((self.node_size(a).factor(trav), None))
            }
            "ip.isCanonical" => {
                let a = args.first()?;
                Some((self.node_size(a).factor(2.0 * trav), None))
            }
            "masked"
            | "prefixLength"
            | "family"
            | "isUnspecified"
            | "isLoopback"
            | "isLinkLocalMulticast"
            | "isLinkLocalUnicast"
            | "isGlobalUnicast" => one,
            "containsIP" | "containsCIDR" => {
                let a = args.first()?;
                let ip = Estimate { min: 4, max: 16 };
                let mut c = ip.add(ip).factor(trav);
                if function == "containsCIDR" {
                    c = c.add(ip.factor(trav)).add(fixed(1));
                }
                if overload == "cidr_contains_ip_string" || overload == "cidr_contains_cidr_string"
                {
                    c = c.add(self.node_size(a).factor(trav));
                }
                Some((c, None))
            }
            "validate" => {
                let a = args.first()?;
                let c = self
                    .node_size(a)
                    .factor(trav)
                    .factor(MAX_NAME_FORMAT_REGEX_SIZE * REGEX_LENGTH_FACTOR);
                Some((c, None))
            }
            "format.named" => one,
            "sign" | "asInteger" | "isInteger" | "asApproximateFloat" | "isGreaterThan"
            | "isLessThan" | "compareTo" | "add" | "sub" | "major" | "minor" | "patch" => one,
            "getScheme" | "getHostname" | "getHost" | "getPort" | "getEscapedPath" | "getQuery" => {
                one
            }
            "_==_" if args.len() == 2 => {
                let (lhs, rhs) = (&args[0], &args[1]);
                if lhs.ty != rhs.ty {
                    return None;
                }
                match &lhs.ty {
                    CelType::Opaque(n, _) if matches!(&**n, "net.IP" | "net.CIDR") => one,
                    CelType::Struct(n, None) => match &**n {
                        "kubernetes.Quantity" | "kubernetes.Semver" => one,
                        "kubernetes.NamedFormat" => Some((
                            Estimate {
                                min: 1,
                                max: MAX_FORMAT_SIZE,
                            }
                            .factor(trav),
                            None,
                        )),
                        "kubernetes.URL" => {
                            // Upstream reads the right-hand side's size twice.
                            let size = match rhs.computed {
                                Some(r) => r.union(r),
                                None => fixed(1),
                            };
                            Some((
                                Estimate {
                                    min: 1,
                                    max: size.max,
                                }
                                .factor(trav),
                                None,
                            ))
                        }
                        _ => None,
                    },
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// The path of a list's elements (`listElementNode`: a copy of the path with `@items`, or
/// none).
fn items_path(p: &GoPath) -> GoPath {
    if p.is_empty() {
        return GoPath::default();
    }
    let mut v = p.get();
    v.push("@items".into());
    GoPath {
        len: v.len(),
        cap: v.len(),
        buf: Rc::new(RefCell::new(v)),
    }
}

/// Go's `uint64(f)` of a non-negative float (saturating where Go's result is undefined).
fn go_f64_to_u64(f: f64) -> u64 {
    if f >= 18_446_744_073_709_551_616.0 {
        u64::MAX
    } else if f > 0.0 {
        f as u64
    } else {
        0
    }
}
