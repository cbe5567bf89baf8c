//! Macro expansion at parse time (cel-go `parser/macro.go`): `has()` becomes a presence
//! test, the comprehension macros (`all`, `exists`, `exists_one`, `map`, `filter`, the
//! two-variable and transform macros, `optMap`, `optFlatMap`, `sortBy`) become loop nodes.

use super::{ACCUMULATOR, Parser};
use crate::cel::ast::{Expr, ExprKind, Loop};
use crate::cel::env::Feature;

impl Parser<'_> {
    pub(super) fn global_call(&mut self, at: usize, name: &str, args: Vec<Expr>) -> Expr {
        if name == "has" && args.len() == 1 {
            let arg = args
                .into_iter()
                .next()
                .unwrap_or_else(|| self.error_node(at));
            return match arg.kind {
                ExprKind::Select {
                    operand,
                    field,
                    optional: false,
                    ..
                } => Expr::new(
                    at,
                    ExprKind::Select {
                        operand,
                        field,
                        test_only: true,
                        optional: false,
                    },
                ),
                _ => {
                    self.visit_error(arg.offset as usize, "invalid argument to has() macro");
                    self.error_node(at)
                }
            };
        }
        Self::call(at, name, args)
    }

    pub(super) fn ident_of(e: &Expr) -> Option<&str> {
        match &e.kind {
            ExprKind::Ident(i) => Some(i),
            _ => None,
        }
    }

    /// `target.name(args)`, expanding the receiver-style macros.
    pub(super) fn receiver_call(
        &mut self,
        at: usize,
        target: Expr,
        name: String,
        args: Vec<Expr>,
    ) -> Expr {
        let n = args.len();
        // The extensions' macros, when the environment has them.
        let two_var_macros = self.has(Feature::TwoVarComprehensions);
        let optional = self.has(Feature::OptionalTypes);
        let lists = self.has(Feature::Lists);
        let kind = match (name.as_str(), n) {
            ("all", 2) => Loop::All,
            ("exists", 2) => Loop::Exists,
            ("exists_one", 2) => Loop::ExistsOne,
            ("all", 3) if two_var_macros => Loop::All,
            ("exists", 3) if two_var_macros => Loop::Exists,
            ("exists_one" | "existsOne", 3) if two_var_macros => Loop::ExistsOne,
            ("map", 2 | 3) => Loop::Map,
            ("filter", 2) => Loop::Filter,
            ("transformList", 3 | 4) if two_var_macros => Loop::TransformList,
            ("transformMap", 3 | 4) if two_var_macros => Loop::TransformMap,
            ("transformMapEntry", 3 | 4) if two_var_macros => Loop::TransformMapEntry,
            ("optMap", 2) if optional => Loop::OptMap,
            ("optFlatMap", 2) if optional => Loop::OptFlatMap,
            ("sortBy", 2) if lists => Loop::SortBy,
            _ => {
                return Expr::new(
                    at,
                    ExprKind::Call {
                        function: name,
                        target: Some(Box::new(target)),
                        args,
                    },
                );
            }
        };
        let two_vars = match kind {
            Loop::TransformList | Loop::TransformMap | Loop::TransformMapEntry => true,
            Loop::All | Loop::Exists | Loop::ExistsOne => n == 3,
            _ => false,
        };
        let mut args = args.into_iter();
        let (Some(a0), Some(a1)) = (args.next(), args.next()) else {
            return self.error_node(at);
        };
        let rest: Vec<Expr> = args.collect();
        if kind == Loop::SortBy
            && !matches!(
                target.kind,
                ExprKind::List { .. }
                    | ExprKind::Select { .. }
                    | ExprKind::Ident(_)
                    | ExprKind::Loop { .. }
                    | ExprKind::Call { .. }
            )
        {
            self.visit_error(
                target.offset as usize,
                "sortBy can only be applied to a list, identifier, comprehension, call or select expression",
            );
            return self.error_node(at);
        }
        // The iteration variables.
        let (var, var2, body) = if two_vars {
            let v1 = match Self::ident_of(&a0) {
                Some(v) => v.to_string(),
                None => {
                    self.visit_error(a0.offset as usize, "argument must be a simple name");
                    return self.error_node(at);
                }
            };
            let v2 = match Self::ident_of(&a1) {
                Some(v) => v.to_string(),
                None => {
                    self.visit_error(a1.offset as usize, "argument must be a simple name");
                    return self.error_node(at);
                }
            };
            if v1 == v2 {
                self.visit_error(a1.offset as usize, format!("duplicate variable name: {v1}"));
                return self.error_node(at);
            }
            for (v, a) in [(&v1, &a0), (&v2, &a1)] {
                if v == ACCUMULATOR || v == "__result__" {
                    self.visit_error(
                        a.offset as usize,
                        "iteration variable overwrites accumulator variable",
                    );
                    return self.error_node(at);
                }
            }
            (v1, Some(v2), rest)
        } else {
            let v = match Self::ident_of(&a0) {
                Some(v) => v.to_string(),
                None => {
                    let msg = match kind {
                        Loop::Map | Loop::Filter | Loop::SortBy => "argument is not an identifier",
                        Loop::OptMap => "optMap() variable name must be a simple identifier",
                        Loop::OptFlatMap => {
                            "optFlatMap() variable name must be a simple identifier"
                        }
                        _ => "argument must be a simple name",
                    };
                    self.visit_error(a0.offset as usize, msg);
                    return self.error_node(at);
                }
            };
            if (v == ACCUMULATOR || v == "__result__")
                && !matches!(kind, Loop::OptMap | Loop::OptFlatMap)
            {
                self.visit_error(
                    a0.offset as usize,
                    "iteration variable overwrites accumulator variable",
                );
                return self.error_node(at);
            }
            let mut body = vec![a1];
            body.extend(rest);
            (v, None, body)
        };
        let mut body = body.into_iter();
        let (filter, transform) = match (kind, body.len()) {
            (
                Loop::Map
                | Loop::TransformList
                | Loop::TransformMap
                | Loop::TransformMapEntry
                | Loop::OptMap
                | Loop::OptFlatMap
                | Loop::SortBy,
                1,
            ) => (None, body.next()),
            (Loop::Map | Loop::TransformList | Loop::TransformMap | Loop::TransformMapEntry, 2) => {
                (body.next(), body.next())
            }
            _ => (body.next(), None),
        };
        Expr::new(
            at,
            ExprKind::Loop {
                kind,
                var,
                var2,
                range: Box::new(target),
                filter: filter.map(Box::new),
                transform: transform.map(Box::new),
            },
        )
    }
}
