//! `kind: List` documents (any document with `items`), unpacked as kubectl unpacks them.

use super::{Document, LoadError};
use serde_json::Value;

/// Unpacks a list document into its items as kubectl does; each item keeps the document's
/// index and line.
///
/// A document with an `items` field is a list, whatever its kind (as kube's unstructured
/// decoder sees it); `items: null` is an empty list. Items that name neither `kind` nor
/// `apiVersion` get the list's kind without its `List` suffix and the list's `apiVersion`.
/// Items that are lists themselves are unpacked in turn, breadth first (kubectl's
/// `FlattenListVisitor`: first the plain items of the list, then those of its inner
/// lists). An `items` that is not an array of objects makes the document unreadable, as
/// for kubectl: the error, and the document's value.
pub fn unpack_list(source_name: &str, doc: Document) -> Result<Vec<Document>, (LoadError, Value)> {
    let Document { index, line, value } = doc;
    let Value::Object(mut list) = value else {
        return Ok(vec![Document { index, line, value }]);
    };
    let fail = |message: &str, list| {
        let e = LoadError {
            source_name: source_name.to_string(),
            doc: Some(index),
            line: Some(line),
            message: message.to_string(),
        };
        Err((e, Value::Object(list)))
    };
    let items = match list.remove("items") {
        None => {
            return Ok(vec![Document {
                index,
                line,
                value: Value::Object(list),
            }]);
        }
        Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items,
        Some(other) => {
            let message = format!(
                "json: cannot unmarshal {} into Go struct field decodeList.items of type []json.RawMessage",
                go_json_kind(&other)
            );
            list.insert("items".to_string(), other);
            return fail(&message, list);
        }
    };
    if let Some(bad) = items
        .iter()
        .find(|i| !matches!(i, Value::Object(_) | Value::Null))
    {
        let message = format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            go_json_kind(bad)
        );
        list.insert("items".to_string(), Value::Array(items));
        return fail(&message, list);
    }
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    let list_kind = text(list.get("kind"));
    let item_kind = list_kind
        .strip_suffix("List")
        .unwrap_or(&list_kind)
        .to_string();
    let list_api_version = text(list.get("apiVersion"));
    let mut queue: std::collections::VecDeque<Value> = items
        .into_iter()
        .map(|item| {
            let mut item = match item {
                Value::Object(m) => m,
                _ => serde_json::Map::new(),
            };
            if text(item.get("kind")).is_empty() && text(item.get("apiVersion")).is_empty() {
                item.insert("kind".into(), Value::String(item_kind.clone()));
                item.insert("apiVersion".into(), Value::String(list_api_version.clone()));
            }
            Value::Object(item)
        })
        .collect();
    super::drop_value(Value::Object(list));
    let mut out = Vec::new();
    while let Some(item) = queue.pop_front() {
        match item {
            Value::Object(mut m) if m.get("items").is_some_and(Value::is_array) => {
                if let Some(Value::Array(inner)) = m.remove("items") {
                    queue.extend(inner);
                }
            }
            value => out.push(Document { index, line, value }),
        }
    }
    Ok(out)
}

/// How Go's encoding/json names the JSON type of a value in unmarshal errors.
fn go_json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
