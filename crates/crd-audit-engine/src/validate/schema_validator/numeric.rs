//! The numeric keywords `maximum`, `minimum` (with their exclusive forms) and `multipleOf`:
//! kube-openapi's `numberValidator` (`validate/validator.go`) and the range check of
//! `IsValueValidAgainstRange` (`validate/type.go` / `values.go`).

use super::*;

/// Whether `IsValueValidAgainstRange` accepts `v` for the node's type and format.
pub(super) fn range_ok(node: &Node, v: Num) -> bool {
    let int = || match v {
        Num::I(i) => Some(i as i128),
        Num::F(f) => go::strconv::shortest_integer(f),
    };
    let within = |lo: i128, hi: i128| int().is_some_and(|i| (lo..=hi).contains(&i));
    match node.range_type {
        RangeType::None => true,
        RangeType::Int64 => within(i64::MIN as i128, i64::MAX as i128),
        RangeType::Int32 => within(i32::MIN as i128, i32::MAX as i128),
        RangeType::Uint32 => within(0, u32::MAX as i128),
        RangeType::Uint64 => within(0, u64::MAX as i128),
        RangeType::Float32 => !(v.as_f64() as f32).is_infinite(),
    }
}

/// The message of a failed range check.
pub(super) fn range_msg(node: &Node, prefix: &str, name: &str) -> String {
    let t = if node.range_type_name.is_empty() {
        "number"
    } else {
        &node.range_type_name
    };
    if node.format.is_empty() {
        format!("{prefix} value must be of type {t} (default format) in {name}")
    } else {
        format!(
            "{prefix} value must be of type {t} with format {} in {name}",
            node.format
        )
    }
}

impl SchemaValidator {
    pub(super) fn check_number(&self, n: &Node, v: Num, p: &Seg, s: &mut Sink) {
        if n.range_type == RangeType::None
            && n.multiple_of.is_none()
            && n.maximum.is_none()
            && n.minimum.is_none()
        {
            return;
        }
        let name = || p.render();
        if !range_ok(n, v) {
            s.err(|| plain(range_msg(n, "Checked", &name())));
        }
        if let Some(factor) = n.multiple_of {
            let native = range_ok(n, Num::F(factor));
            if !native {
                s.err(|| plain(range_msg(n, "MultipleOf", &name())));
            }
            let value = if native { v } else { Num::F(v.as_f64()) };
            match value {
                Num::I(i) => {
                    let f = go_f64_to_i64(factor);
                    if f <= 0 {
                        s.err(|| multiple_positive(name(), Num::I(f)));
                    } else if (i / f).wrapping_mul(f) != i {
                        s.err(|| not_multiple(name(), Num::I(f), value));
                    }
                }
                Num::F(x) => {
                    if factor <= 0.0 {
                        s.err(|| multiple_positive(name(), Num::F(factor)));
                    } else {
                        let mult = if factor < 1.0 {
                            1.0 / factor * x
                        } else {
                            x / factor
                        };
                        if !is_json_integer(mult) {
                            s.err(|| not_multiple(name(), Num::F(factor), value));
                        }
                    }
                }
            }
        }
        if let Some(max) = n.maximum {
            self.bound(n, v, max, n.exclusive_maximum, true, p, s);
        }
        if let Some(min) = n.minimum {
            self.bound(n, v, min, n.exclusive_minimum, false, p, s);
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn bound(
        &self,
        n: &Node,
        v: Num,
        bound: f64,
        exclusive: bool,
        is_max: bool,
        p: &Seg,
        s: &mut Sink,
    ) {
        let prefix = if is_max {
            "Maximum boundary"
        } else {
            "Minimum boundary"
        };
        let native = range_ok(n, Num::F(bound));
        if !native {
            s.err(|| plain(range_msg(n, prefix, &p.render())));
        }
        let (fails, shown_bound, value) = match (native, v) {
            (true, Num::I(i)) => {
                let b = go_f64_to_i64(bound);
                let fails = if is_max {
                    if exclusive { i >= b } else { i > b }
                } else if exclusive {
                    i <= b
                } else {
                    i < b
                };
                (fails, Num::I(b), v)
            }
            _ => {
                let x = v.as_f64();
                let fails = if is_max {
                    if exclusive { x >= bound } else { x > bound }
                } else if exclusive {
                    x <= bound
                } else {
                    x < bound
                };
                (fails, Num::F(bound), Num::F(x))
            }
        };
        if !fails {
            return;
        }
        s.err(|| {
            let name = p.render();
            let rel = match (is_max, exclusive) {
                (true, false) => "less than or equal to",
                (true, true) => "less than",
                (false, false) => "greater than or equal to",
                (false, true) => "greater than",
            };
            let msg = format!("{name} in body should be {rel} {}", shown_bound.v());
            invalid(name, msg, value.bad_value())
        });
    }
}

pub(super) fn multiple_positive(name: String, factor: Num) -> OErr {
    let msg = format!(
        "factor MultipleOf declared for {name} must be positive: {}",
        factor.v()
    );
    invalid(name, msg, factor.bad_value())
}

pub(super) fn not_multiple(name: String, factor: Num, value: Num) -> OErr {
    let msg = format!("{name} in body should be a multiple of {}", factor.v());
    invalid(name, msg, value.bad_value())
}
