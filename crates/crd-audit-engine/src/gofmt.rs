//! Transitional names for Go's renderings of values, kept while callers move to the `go`
//! modules that implement them ([`crate::go::strconv`], [`crate::go::json`], [`crate::go::fmt`]).
//! Nothing is implemented here.

pub use crate::go::fmt::{float_v, number_v, type_name, value_v};
pub use crate::go::json::{
    decoded_int, float_json, json_kind, json_string, marshal as json, number_json,
};
pub use crate::go::strconv::{quote, shortest_integer};
