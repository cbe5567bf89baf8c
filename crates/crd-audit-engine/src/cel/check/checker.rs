//! Checking an expression: cel-go's `checker/checker.go` (identifiers, selections, calls with
//! overload resolution, literals, lists, maps, comprehensions) and the identifier and type
//! lookups of `checker/env.go`.

use super::*;

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

pub(super) struct Checker<'t> {
    pub(super) types: &'t DeclTypes,
    /// The environment: which functions, type names and behaviours are present.
    pub(super) env: Env,
    pub(super) names: HashMap<TypeId, Rc<str>>,
    pub(super) globals: Vec<(String, CelType)>,
    /// Comprehension variables, innermost last.
    pub(super) scopes: Vec<(String, CelType)>,
    pub(super) mapping: HashMap<Rc<str>, CelType>,
    pub(super) counter: usize,
    pub(super) errors: Vec<CheckError>,
    pub(super) node_types: HashMap<*const Expr, CelType>,
    pub(super) undefined_types: Vec<String>,
    pub(super) tree: Vec<TNode>,
}

/// The type identifiers of the environment and their types.
pub(super) fn type_ident(env: Env, name: &str) -> Option<CelType> {
    let mut params = Vec::new();
    let declared_by = match name {
        "net.IP" => Some(Feature::Ip),
        "net.CIDR" => Some(Feature::Cidr),
        "optional_type" => Some(Feature::OptionalTypes),
        _ => None,
    };
    if declared_by.is_some_and(|f| !env.has(f)) {
        return None;
    }
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
        | "net.CIDR" => crate::cel::decls::parse_type(name, &mut params),
        "list" => CelType::list(CelType::Param("A".into())),
        "map" => CelType::map(CelType::Param("A".into()), CelType::Param("B".into())),
        "type" => CelType::Type(None),
        "optional_type" => CelType::optional(CelType::Param("T".into())),
        _ => return None,
    };
    Some(CelType::type_of(t))
}

impl<'t> Checker<'t> {
    pub(super) fn err(&mut self, offset: u32, message: String) {
        self.errors.push(CheckError {
            offset: offset as usize,
            message,
        });
    }

    pub(super) fn substitute(&self, t: &CelType, to_dyn: bool) -> CelType {
        substitute_in(&self.mapping, t, to_dyn)
    }

    pub(super) fn is_assignable(&mut self, t1: &CelType, t2: &CelType) -> bool {
        let mut m = self.mapping.clone();
        if assignable(&mut m, t1, t2) {
            self.mapping = m;
            true
        } else {
            false
        }
    }

    pub(super) fn new_var(&mut self) -> CelType {
        let v = CelType::Param(format!("_var{}", self.counter).into());
        self.counter += 1;
        v
    }

    pub(super) fn record(&mut self, e: &Expr, t: &CelType) {
        self.node_types.insert(e as *const Expr, t.clone());
    }

    pub(super) fn local(&self, name: &str) -> Option<CelType> {
        self.scopes
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.clone())
    }

    /// A global identifier (variables, type names).
    pub(super) fn global(&mut self, name: &str) -> Option<CelType> {
        if let Some((_, t)) = self.globals.iter().find(|(n, _)| n == name) {
            return Some(t.clone());
        }
        if let Some(t) = type_ident(self.env, name) {
            return Some(t);
        }
        if PROTO_MESSAGES.contains(&name) {
            self.undefined_types.push(name.to_string());
            return Some(CelType::type_of(CelType::Struct(name.into(), None)));
        }
        None
    }

    pub(super) fn resolve_simple(&mut self, name: &str) -> Option<CelType> {
        if let Some(stripped) = name.strip_prefix('.') {
            return self.global(stripped);
        }
        if let Some(t) = self.local(name) {
            return Some(t);
        }
        self.global(name)
    }

    pub(super) fn node(&mut self, kind: TKind, ty: &CelType, offset: u32) -> usize {
        self.tree.push(TNode {
            kind,
            ty: ty.clone(),
            offset,
        });
        self.tree.len() - 1
    }

    pub(super) fn expr(&mut self, e: &Expr) -> (CelType, usize) {
        let (t, kind) = self.expr_inner(e);
        self.record(e, &t);
        let id = self.node(kind, &t, e.offset);
        (t, id)
    }

    pub(super) fn expr_inner(&mut self, e: &Expr) -> (CelType, TKind) {
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
    pub(super) fn join(&mut self, prev: Option<CelType>, cur: CelType) -> CelType {
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

    pub(super) fn select_field(
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
    pub(super) fn field_type(&self, id: TypeId, field: &str) -> Option<CelType> {
        let n = self.types.node(id);
        let find = |name: &str| {
            n.fields
                .iter()
                .find(|(k, _)| escape_field(k).as_deref() == Some(name))
                .map(|(_, &c)| type_of_node(self.types, &self.names, c))
        };
        find(field).or_else(|| {
            if self.env.has(Feature::KeywordFieldNames) && RESERVED.contains(&field) {
                find(&format!("__{field}__"))
            } else {
                None
            }
        })
    }

    pub(super) fn call(
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
            return match functions_in(self.env).get(name) {
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
            if let Some(fd) = functions_in(self.env).get(full.as_str()) {
                let (t, ids) = self.resolve(e.offset, &full, fd, None, arg_types, args);
                return (t, call(&full, None, ids));
            }
        }
        let (tt, target_id) = self.expr(target);
        match functions_in(self.env).get(f) {
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
    pub(super) fn resolve(
        &mut self,
        offset: u32,
        name: &str,
        overloads: &[&Overload],
        target: Option<CelType>,
        args: Vec<CelType>,
        arg_exprs: &[Expr],
    ) -> (CelType, Vec<&'static str>) {
        let member = target.is_some();
        let mut all: Vec<CelType> = target.into_iter().collect();
        all.extend(args);
        self.resolve_types(offset, name, overloads, member, all, arg_exprs)
    }

    pub(super) fn resolve_types(
        &mut self,
        offset: u32,
        name: &str,
        overloads: &[&Overload],
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
}

/// `a.b.c` when the expression is a chain of plain selections on an identifier.
pub(super) fn qualified_name(e: &Expr) -> Option<String> {
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
