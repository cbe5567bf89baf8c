//! The object keywords `properties`, `patternProperties`, `additionalProperties`,
//! `required`, `maxProperties`, `minProperties` and `dependencies`: kube-openapi's
//! `objectValidator` (`validate/object_validator.go`).

use super::*;

impl SchemaValidator {
    /// The object validator; returns the match count of the properties.
    pub(super) fn check_object(
        &self,
        n: &Node,
        map: &Map<String, Value>,
        c: Option<Correlated<'_>>,
        p: &Seg,
        s: &mut Sink,
    ) -> u32 {
        // The type fields of the object are never paired (`isTypeMetaField`).
        let pair = |key: &str| {
            c.filter(|_| !(matches!(p, Seg::Root) && (key == "apiVersion" || key == "kind")))
                .and_then(|c| c.key(key))
        };
        let size = map.len() as i64;
        if let Some(min) = n.min_properties
            && size < min
        {
            s.err(|| {
                let name = p.render();
                let msg = format!("{name} in body should have at least {min} properties");
                invalid(name, msg, BadValue::Int(size))
            });
            return 0;
        }
        if let Some(max) = n.max_properties
            && size > max
        {
            s.err(|| {
                let name = p.render();
                OErr {
                    msg: format!("{name} in body should have at most {max} properties"),
                    name,
                    conv: Conv::TooMany(size, max),
                }
            });
            return 0;
        }
        let mut mc = 0;
        let has_patterns = !n.pattern_properties.is_empty();
        match n.additional {
            Additional::Forbidden => {
                for key in map.keys() {
                    if n.property(key).is_none() && !self.matches_pattern(n, key) {
                        s.err(|| {
                            let name = p.render();
                            let msg = format!("{name}.{key} in body is a forbidden property");
                            invalid(name, msg, BadValue::Str(key.clone()))
                        });
                    }
                }
            }
            Additional::Allowed | Additional::Schema(_) => {
                for (key, value) in map {
                    let regular = n.property(key).is_some();
                    let mut matched = false;
                    if has_patterns {
                        let (m, c) = self.pattern_props(n, key, value, p, s);
                        matched = m;
                        mc += c;
                    }
                    if !regular
                        && !matched
                        && let Additional::Schema(a) = n.additional
                    {
                        mc += self.node_c(a, value, pair(key), &Seg::Key(p, key), s);
                    }
                }
            }
        }
        if n.properties.len() <= map.len() {
            for (name, pid) in n.properties.iter() {
                if let Some(value) = map.get(&**name) {
                    mc += self.node_c(*pid, value, pair(name), &Seg::Prop(p, name), s);
                }
            }
        } else {
            for (key, value) in map {
                if let Some(pid) = n.property(key) {
                    mc += self.node_c(pid, value, pair(key), &Seg::Prop(p, key), s);
                }
            }
        }
        for r in n.required.iter() {
            if !map.contains_key(&**r) {
                s.err(|| {
                    let name = format!("{}.{r}", p.render());
                    OErr {
                        msg: format!("{name} in body is required"),
                        name,
                        conv: Conv::Required,
                    }
                });
            }
        }
        if has_patterns {
            for (key, value) in map {
                let regular = n.property(key).is_some();
                let (matched, c) = self.pattern_props(n, key, value, p, s);
                mc += c;
                if !regular && matched {
                    for (re, pid) in n.pattern_properties.iter() {
                        if re.as_ref().is_some_and(|re| re.is_match(key)) {
                            mc += self.node(*pid, value, &Seg::Key(p, key), s);
                        }
                    }
                }
            }
        }
        mc
    }

    pub(super) fn matches_pattern(&self, n: &Node, key: &str) -> bool {
        n.pattern_properties
            .iter()
            .any(|(re, _)| re.as_ref().is_some_and(|re| re.is_match(key)))
    }

    /// `validatePatternProperty`: validates the value against every matching pattern schema.
    pub(super) fn pattern_props(
        &self,
        n: &Node,
        key: &str,
        value: &Value,
        p: &Seg,
        s: &mut Sink,
    ) -> (bool, u32) {
        let mut matched = false;
        let mut mc = 0;
        for (re, pid) in n.pattern_properties.iter() {
            if re.as_ref().is_some_and(|re| re.is_match(key)) {
                matched = true;
                mc += self.node(*pid, value, &Seg::Key(p, key), s);
            }
        }
        (matched, mc)
    }
}
