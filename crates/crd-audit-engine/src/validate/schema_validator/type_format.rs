//! The `type` keyword and how `format` bends it (`int64`/`float64` formats, integers accepted
//! as numbers and back): kube-openapi's `typeValidator` (`validate/type.go`). The format of a
//! string value (`formatValidator`, `validate/validator.go`) is checked by the keyword
//! dispatch in the parent module with the compiled `format_ok`.

use super::*;

impl SchemaValidator {
    /// The type validator; 1 when it passes.
    pub(super) fn check_type(&self, n: &Node, v: &Value, kind: Kind, p: &Seg, s: &mut Sink) -> u32 {
        let (sch_type, sch_bit, format) = match kind {
            Kind::Bool => ("boolean", T_BOOLEAN, ""),
            Kind::Str => ("string", T_STRING, ""),
            Kind::Int => ("integer", T_INTEGER, "int64"),
            Kind::Float => ("number", T_NUMBER, "float64"),
            Kind::Slice => ("array", T_ARRAY, ""),
            Kind::Map => ("object", T_OBJECT, ""),
        };
        let contains = n.type_mask & sch_bit != 0;
        let is_float_int = kind == Kind::Float
            && n.type_mask & T_INTEGER != 0
            && match v {
                Value::Number(num) => is_json_integer(Num::of(num).as_f64()),
                _ => false,
            };
        let is_int_float = kind == Kind::Int && n.type_mask & T_NUMBER != 0;
        if kind != Kind::Str
            && kind != Kind::Slice
            && !n.format.is_empty()
            && !(contains || format == &*n.format || is_float_int || is_int_float)
        {
            s.err(|| type_error(p.render(), &n.format, format));
            return 0;
        }
        if n.type_mask & (T_NUMBER | T_INTEGER) == 0
            && !n.format.is_empty()
            && (kind == Kind::Str || kind == Kind::Slice)
        {
            return 1;
        }
        if !(contains || is_float_int || is_int_float) {
            s.err(|| type_error(p.render(), &n.type_names, sch_type));
            return 0;
        }
        1
    }
}
