//! The string keywords `maxLength`, `minLength` and `pattern`: kube-openapi's
//! `stringValidator` (`validate/validator.go`, `validate/values.go`).

use super::*;

impl SchemaValidator {
    pub(super) fn check_string(&self, n: &Node, text: &str, p: &Seg, s: &mut Sink) {
        if n.max_length.is_none() && n.min_length.is_none() && n.pattern.is_none() {
            return;
        }
        let runes = || text.chars().count() as i64;
        if let Some(max) = n.max_length
            && runes() > max
        {
            s.err(|| {
                let name = p.render();
                OErr {
                    msg: format!("{name} in body should be at most {max} chars long"),
                    name,
                    conv: Conv::TooLong(BadValue::Str(text.to_string()), max),
                }
            });
            return;
        }
        if let Some(min) = n.min_length
            && runes() < min
        {
            s.err(|| {
                let name = p.render();
                let msg = format!("{name} in body should be at least {min} chars long");
                invalid(name, msg, BadValue::Str(text.to_string()))
            });
            return;
        }
        if let Some(pat) = &n.pattern {
            let shown = match pat.compiled() {
                Ok(re) if re.is_match(text) => return,
                Ok(_) => pat.source.to_string(),
                Err(e) => format!("{}, but pattern is invalid: {e}", pat.source),
            };
            s.err(|| {
                let name = p.render();
                let msg = format!("{name} in body should match '{shown}'");
                invalid(name, msg, BadValue::Str(text.to_string()))
            });
        }
    }
}
