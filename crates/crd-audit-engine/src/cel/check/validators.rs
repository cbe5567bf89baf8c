//! The AST validators the Kubernetes environment enables after type checking (cel-go
//! `cel/validator.go`: duration, timestamp and regex literals, homogeneous aggregate literals;
//! the strings extension's `format` string check).

use super::*;

// =============================================================================================
// AST validators
// =============================================================================================

pub(super) struct Validators<'a> {
    pub(super) types: &'a HashMap<*const Expr, CelType>,
    /// Which validators are on (homogeneous aggregate literals always are).
    pub(super) env: Env,
    pub(super) errors: Vec<CheckError>,
}

impl Validators<'_> {
    pub(super) fn type_of(&self, e: &Expr) -> CelType {
        self.types
            .get(&(e as *const Expr))
            .cloned()
            .unwrap_or(CelType::Dyn)
    }

    pub(super) fn err(&mut self, at: u32, message: String) {
        self.errors.push(CheckError {
            offset: at as usize,
            message,
        });
    }

    /// Walks the tree; `in_format` when inside a `format` call (literals there may mix
    /// types).
    pub(super) fn walk(&mut self, e: &Expr, in_format: bool) {
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
                // The format validator exempts `format`'s arguments.
                let fmt = in_format || (function == "format" && self.env.has(Feature::StringsV2));
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
            ExprKind::Struct { fields, .. } => {
                fields.iter().for_each(|(_, v, _)| self.walk(v, in_format))
            }
            ExprKind::Lit(_) | ExprKind::Ident(_) => {}
        }
    }

    /// Literal arguments of `duration`, `timestamp`, `matches` and `format`.
    pub(super) fn literal_args(&mut self, e: &Expr, f: &str, target: Option<&Expr>, args: &[Expr]) {
        let first_lit = args.first().and_then(|a| match &a.kind {
            ExprKind::Lit(l) => Some((a, l)),
            _ => None,
        });
        match f {
            "duration" | "timestamp" | "matches" if !self.env.has(Feature::LiteralValidators) => {}
            "format" if !self.env.has(Feature::StringsV2) => {}
            "duration" | "timestamp" => {
                if let Some((a, l)) = first_lit
                    && crate::cel::fold::eval_conversion(f, l).is_err()
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
    pub(super) fn format_call(&mut self, e: &Expr, target: Option<&Expr>, args: &[Expr]) {
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
            crate::cel::lib::string_format::check_literal(fmt, elements, e.offset, &type_of)
        {
            self.errors.push(err);
        }
    }
}

/// `IsEquivalentType`: equal types, ignoring type parameter names.
pub(super) fn equivalent(a: &CelType, b: &CelType) -> bool {
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
