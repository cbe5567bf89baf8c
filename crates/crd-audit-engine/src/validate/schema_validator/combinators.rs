//! The combinators `allOf`, `anyOf`, `oneOf` and `not`: kube-openapi's
//! `schemaPropsValidator` (`validate/schema_props.go`), keeping the errors of the best
//! `anyOf`/`oneOf` branch by match count.

use super::*;

impl SchemaValidator {
    /// Validates `v` against `id` in counting mode: (match count, error count).
    pub(super) fn probe(&self, id: NodeId, v: &Value, p: &Seg) -> (u32, usize) {
        let mut sink = Sink::counting();
        let mc = self.node(id, v, p, &mut sink);
        (mc, sink.count)
    }

    /// Merges the result of a branch chosen after probing: re-run it when recording.
    pub(super) fn merge_branch(
        &self,
        id: NodeId,
        v: &Value,
        p: &Seg,
        s: &mut Sink,
        probed: (u32, usize),
    ) -> u32 {
        if s.record {
            self.node(id, v, p, s)
        } else {
            s.count += probed.1;
            probed.0
        }
    }

    /// The schema-props validator (allOf, anyOf, oneOf, not, dependencies); returns its
    /// match count.
    pub(super) fn junctors(&self, n: &Node, v: &Value, p: &Seg, s: &mut Sink) -> u32 {
        let mut mc = 0;
        if !n.any_of.is_empty() {
            let mut best: Option<(NodeId, (u32, usize))> = None;
            let mut success: Option<u32> = None;
            for &b in n.any_of.iter() {
                let r = self.probe(b, v, p);
                if r.1 == 0 {
                    success = Some(r.0);
                    break;
                }
                if best.is_none_or(|(_, (bmc, _))| r.0 > bmc) {
                    best = Some((b, r));
                }
            }
            match success {
                Some(smc) => mc += smc,
                None => {
                    s.err(|| {
                        plain(format!(
                            "{} must validate at least one schema (anyOf)",
                            go::strconv::quote(&p.render())
                        ))
                    });
                    if let Some((b, r)) = best {
                        mc += self.merge_branch(b, v, p, s, r);
                    }
                }
            }
        }
        if !n.one_of.is_empty() {
            let mut best: Option<(NodeId, (u32, usize))> = None;
            let mut first_success: Option<u32> = None;
            let mut validated = 0usize;
            for &b in n.one_of.iter() {
                let r = self.probe(b, v, p);
                if r.1 == 0 {
                    validated += 1;
                    best = None;
                    first_success.get_or_insert(r.0);
                    continue;
                }
                if validated == 0 && best.is_none_or(|(_, (bmc, _))| r.0 > bmc) {
                    best = Some((b, r));
                }
            }
            if validated != 1 {
                let extra = if validated == 0 {
                    "Found none valid".to_string()
                } else {
                    format!("Found {validated} valid alternatives")
                };
                s.err(|| {
                    plain(format!(
                        "{} must validate one and only one schema (oneOf). {extra}",
                        go::strconv::quote(&p.render())
                    ))
                });
                if let Some((b, r)) = best {
                    mc += self.merge_branch(b, v, p, s, r);
                }
            } else if let Some(smc) = first_success {
                mc += smc;
            }
        }
        if !n.all_of.is_empty() {
            let mut validated = 0;
            for &b in n.all_of.iter() {
                let before = s.count;
                mc += self.node(b, v, p, s);
                if s.count == before {
                    validated += 1;
                }
            }
            if validated != n.all_of.len() {
                let extra = if validated == 0 {
                    ". None validated"
                } else {
                    ""
                };
                s.err(|| {
                    plain(format!(
                        "{} must validate all the schemas (allOf){extra}",
                        go::strconv::quote(&p.render())
                    ))
                });
            }
        }
        if let Some(not) = n.not
            && self.probe(not, v, p).1 == 0
        {
            s.err(|| {
                plain(format!(
                    "{} must not validate the schema (not)",
                    go::strconv::quote(&p.render())
                ))
            });
        }
        if !n.dependencies.is_empty()
            && let Value::Object(map) = v
        {
            for key in map.keys() {
                let Some((_, dep)) = n.dependencies.iter().find(|(k, _)| **k == **key) else {
                    continue;
                };
                match dep {
                    Dep::Schema(d) => mc += self.node(*d, v, &Seg::Key(p, key), s),
                    Dep::Names(names) => {
                        for dk in names.iter() {
                            if !map.contains_key(&**dk) {
                                s.err(|| {
                                    plain(format!(
                                        "{} has a dependency on {dk}",
                                        go::strconv::quote(&p.render())
                                    ))
                                });
                            }
                        }
                    }
                }
            }
        }
        mc + 1
    }
}
