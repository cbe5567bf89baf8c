//! The syntax tree of a CEL expression, with macros already expanded into their own nodes.

/// A literal.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(String),
    Bytes(Vec<u8>),
}

/// The macros that iterate over a list or map (cel-go's standard macros, the two-variable
/// comprehensions, the lists extension's `sortBy`) and the optional macros.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loop {
    All,
    Exists,
    ExistsOne,
    /// `map(x, t)` and `map(x, p, t)`.
    Map,
    Filter,
    /// `transformList(i, v, [p,] t)`.
    TransformList,
    /// `transformMap(k, v, [p,] t)`.
    TransformMap,
    /// `transformMapEntry(k, v, [p,] {k2: v2})`.
    TransformMapEntry,
    /// `opt.optMap(x, t)` (the transform in `transform`).
    OptMap,
    /// `opt.optFlatMap(x, t)`.
    OptFlatMap,
    /// `list.sortBy(x, key)` (the key in `transform`).
    SortBy,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Lit(Literal),
    Ident(String),
    /// `operand.field`; `test_only` for `has(operand.field)`; `optional` for `operand.?field`.
    Select {
        operand: Box<Expr>,
        field: String,
        test_only: bool,
        optional: bool,
    },
    /// A function or operator call (`_+_`, `_&&_`, `!_`, `-_`, `_?_:_`, `_[_]`, `_[?_]`,
    /// `@in`, `_==_`, ...); `target` for receiver-style calls (`s.size()`).
    Call {
        function: String,
        target: Option<Box<Expr>>,
        args: Vec<Expr>,
    },
    /// `[a, ?b]`: `optional` lists the indices of elements written with `?`.
    List {
        elements: Vec<Expr>,
        optional: Vec<usize>,
    },
    /// `{k: v, ?k2: v2}`: entries with their optional flag.
    Map {
        entries: Vec<(Expr, Expr, bool)>,
    },
    /// An iterating macro over `range`, with one or two variables.
    Loop {
        kind: Loop,
        var: String,
        var2: Option<String>,
        range: Box<Expr>,
        /// The predicate (all/exists/exists_one/filter, and the filter of map/transform).
        filter: Option<Box<Expr>>,
        /// The transform of map/transformList/transformMap.
        transform: Option<Box<Expr>>,
    },
    /// A message construction `a.b.Name{field: value, ?opt: value}` (no message types
    /// exist in this environment; kept for the checker's errors).
    Struct {
        name: String,
        fields: Vec<(String, Expr, bool)>,
    },
}

/// An expression node with its byte offset in the source (for messages).
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub offset: u32,
    pub kind: ExprKind,
}

impl Expr {
    pub fn new(offset: usize, kind: ExprKind) -> Expr {
        Expr {
            offset: offset as u32,
            kind,
        }
    }

    /// Visits every node, depth first.
    pub fn visit(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match &self.kind {
            ExprKind::Lit(_) | ExprKind::Ident(_) => {}
            ExprKind::Select { operand, .. } => operand.visit(f),
            ExprKind::Call { target, args, .. } => {
                if let Some(t) = target {
                    t.visit(f);
                }
                args.iter().for_each(|a| a.visit(f));
            }
            ExprKind::List { elements, .. } => elements.iter().for_each(|e| e.visit(f)),
            ExprKind::Map { entries } => entries.iter().for_each(|(k, v, _)| {
                k.visit(f);
                v.visit(f);
            }),
            ExprKind::Loop {
                range,
                filter,
                transform,
                ..
            } => {
                range.visit(f);
                if let Some(p) = filter {
                    p.visit(f);
                }
                if let Some(t) = transform {
                    t.visit(f);
                }
            }
            ExprKind::Struct { fields, .. } => fields.iter().for_each(|(_, v, _)| v.visit(f)),
        }
    }

    /// Whether the expression refers to a free variable of this name.
    pub fn references(&self, name: &str) -> bool {
        let mut found = false;
        self.visit(&mut |e| {
            if let ExprKind::Ident(i) = &e.kind
                && i == name
            {
                found = true;
            }
        });
        found
    }
}
