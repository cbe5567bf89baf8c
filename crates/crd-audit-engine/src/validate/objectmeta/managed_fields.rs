//! Managed fields: `ValidateManagedFields` of
//! `apimachinery/pkg/apis/meta/v1/validation/validation.go`.

use super::meta::{MetaPath, as_map, invalid_str, str_of};
use crate::cause::{BadValue, Cause};
use crate::go::strconv::is_print as is_go_print;
use serde_json::Value;

pub(super) fn validate_managed_fields(entries: &[Value], at: MetaPath<'_>, out: &mut Vec<Cause>) {
    for (i, e) in entries.iter().enumerate() {
        let m = as_map(e);
        let entry = || at.child("managedFields").index(i);
        let operation = str_of(m, "operation");
        if operation != "Apply" && operation != "Update" {
            out.push(invalid_str(
                entry().child("operation"),
                operation,
                "must be `Apply` or `Update`",
            ));
        }
        let fields_type = str_of(m, "fieldsType");
        if !fields_type.is_empty() && fields_type != "FieldsV1" {
            out.push(invalid_str(
                entry().child("fieldsType"),
                fields_type,
                "must be `FieldsV1`",
            ));
        }
        let manager = str_of(m, "manager");
        if manager.len() > 128 {
            out.push(Cause::too_long(
                entry().child("manager"),
                BadValue::Str(manager.to_string()),
                128,
            ));
        }
        for (pos, c) in manager.char_indices() {
            if !is_go_print(c) {
                out.push(invalid_str(
                    entry().child("manager"),
                    manager,
                    format!("invalid character U+{:04X} (at position {pos})", c as u32),
                ));
            }
        }
        let subresource = str_of(m, "subresource");
        if subresource.len() > 256 {
            out.push(Cause::too_long(
                entry().child("subresource"),
                BadValue::Str(subresource.to_string()),
                256,
            ));
        }
    }
}
