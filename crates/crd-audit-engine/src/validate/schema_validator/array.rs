//! The array keywords `items`, `maxItems`, `minItems` and `uniqueItems`: kube-openapi's
//! `schemaSliceValidator` (`validate/slice_validator.go`).

use super::*;

impl SchemaValidator {
    /// The slice validator; returns its match count.
    pub(super) fn check_array(
        &self,
        n: &Node,
        items: &[Value],
        c: Option<Correlated<'_>>,
        p: &Seg,
        s: &mut Sink,
    ) -> u32 {
        let mut mc = 0;
        if let Some(it) = n.items {
            let mut paired = c.and_then(|c| c.items());
            for (i, item) in items.iter().enumerate() {
                let old = paired.as_mut().and_then(|pi| pi.get(i));
                mc += self.node_c(it, item, old, &Seg::Index(p, i), s);
            }
        }
        let size = items.len() as i64;
        if let Some(min) = n.min_items
            && size < min
        {
            s.err(|| {
                let name = p.render();
                let msg = format!("{name} in body should have at least {min} items");
                invalid(name, msg, BadValue::Int(size))
            });
        }
        if let Some(max) = n.max_items
            && size > max
        {
            s.err(|| {
                let name = p.render();
                OErr {
                    msg: format!("{name} in body should have at most {max} items"),
                    name,
                    conv: Conv::TooMany(size, max),
                }
            });
        }
        if n.unique_items && has_duplicates(items) {
            s.err(|| {
                let name = p.render();
                let msg = format!("{name} in body shouldn't contain duplicates");
                invalid(name, msg, BadValue::Str(String::new()))
            });
        }
        mc + 1
    }
}

pub(super) fn has_duplicates(items: &[Value]) -> bool {
    for (i, a) in items.iter().enumerate() {
        if items[..i].iter().any(|b| deep_equal(a, b)) {
            return true;
        }
    }
    false
}
