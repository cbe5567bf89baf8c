//! Where findings stand in their input: the line and column of the field each one is about
//! (the deepest node of it that exists), found by reading a document's text again only
//! when it has findings.

use crate::audit::shown_verdict::ShownVerdict;
use crd_audit_engine::load::positions::{DocumentPositions, Position};
use serde_json::Value;
use std::sync::Arc;

/// The largest piece of input whose text is kept (until its documents are judged) to place
/// findings within their documents; findings of larger ones stand at their documents' lines.
pub const POSITIONS_MAX_TEXT: usize = 4 << 20;

/// The text of one piece of input and the number of lines before it.
pub struct PieceText {
    pub text: String,
    pub line_offset: usize,
}

/// A document's text: the piece that holds it, and its index among the piece's documents.
#[derive(Clone)]
pub struct DocText {
    pub piece: Arc<PieceText>,
    pub index: usize,
}

impl DocText {
    /// Reads the document's positions (`None` when its text does not read).
    pub fn positions(&self) -> Option<DocumentPositions> {
        DocumentPositions::read(&self.piece.text, self.index, self.piece.line_offset)
    }
}

/// A document's positions, read once, when a finding first needs them.
pub struct LazyPositions {
    text: Option<DocText>,
    read: Option<Option<DocumentPositions>>,
}

impl LazyPositions {
    pub fn new(text: Option<DocText>) -> LazyPositions {
        LazyPositions { text, read: None }
    }

    pub fn get(&mut self) -> Option<&DocumentPositions> {
        let text = &self.text;
        self.read
            .get_or_insert_with(|| text.as_ref()?.positions())
            .as_ref()
    }
}

/// The path of each object a document holds, in the order
/// [`crd_audit_engine::load::list::unpack_list`] returns them: `""` for a document that
/// is not a list, `items[i]` for a list's items, and `items[i].items[j]` for the items of a
/// list inside a list (unpacked breadth first).
pub fn item_paths(doc: &Value) -> Vec<String> {
    let items = match doc.as_object().and_then(|m| m.get("items")) {
        None => return vec![String::new()],
        Some(Value::Array(items)) => items,
        // `items: null` is an empty list; other values make the document unreadable.
        Some(_) => return Vec::new(),
    };
    let mut queue: std::collections::VecDeque<(String, &Value)> = items
        .iter()
        .enumerate()
        .map(|(i, v)| (format!("items[{i}]"), v))
        .collect();
    let mut out = Vec::new();
    while let Some((path, v)) = queue.pop_front() {
        match v.get("items") {
            Some(Value::Array(inner)) if v.is_object() => queue.extend(
                inner
                    .iter()
                    .enumerate()
                    .map(|(j, w)| (format!("{path}.items[{j}]"), w)),
            ),
            _ => out.push(path),
        }
    }
    out
}

/// `field` of the object at `prefix` (a path in its document) as a path in the document.
pub fn join(prefix: &str, field: &str) -> String {
    match (prefix.is_empty(), field.is_empty()) {
        (true, _) => field.to_string(),
        (false, true) => prefix.to_string(),
        (false, false) if field.starts_with('[') => format!("{prefix}{field}"),
        (false, false) => format!("{prefix}.{field}"),
    }
}

/// Where an object stands: at its document's line, or at its item of a `List`.
pub fn object_position(
    prefix: &str,
    doc_line: usize,
    positions: Option<&DocumentPositions>,
) -> Position {
    let fallback = Position {
        line: doc_line,
        column: 1,
    };
    match positions {
        Some(p) if !prefix.is_empty() => p.locate(prefix),
        _ => fallback,
    }
}

/// Where an object and each of its findings stand in the input.
#[derive(Default)]
pub struct Located {
    /// The object (its document, or its item of a `List`).
    pub object: Position,
    /// One per error of the verdict, in order.
    pub errors: Vec<Position>,
    /// One per pruned field, in order.
    pub pruned: Vec<Position>,
}

/// Where a verdict's object and findings stand: the object at its document's line (or its
/// `List` item at `prefix`), each finding at the deepest node of its field that exists.
/// Documents without findings are not read again (`positions` is not called).
pub fn locate<'p>(
    v: &ShownVerdict,
    prefix: &str,
    doc_line: usize,
    positions: impl FnOnce() -> Option<&'p DocumentPositions>,
) -> Located {
    let fallback = Position {
        line: doc_line,
        column: 1,
    };
    let findings = !v.errors.is_empty() || !v.pruned.is_empty() || v.request_error.is_some();
    let Some(p) = findings.then(positions).flatten() else {
        return Located {
            object: fallback,
            errors: vec![fallback; v.errors.len()],
            pruned: vec![fallback; v.pruned.len()],
        };
    };
    let object = object_position(prefix, doc_line, Some(p));
    // The root stands at the object.
    let at = |field: &str| match field {
        "" => object,
        f => p.locate(&join(prefix, f)),
    };
    Located {
        object,
        errors: v.errors.iter().map(|c| at(c.field.as_str())).collect(),
        pruned: v.pruned.iter().map(|f| at(f)).collect(),
    }
}

/// The path in a CRD document (at `prefix` in its file) of a field that CRD validation
/// names: the API server's internal CRD holds a schema that every version shares once, as
/// `spec.validation.openAPIV3Schema`, which a v1 CRD spells
/// `spec.versions[i].schema.openAPIV3Schema`; a v1beta1 CRD's versions without a schema of
/// their own use its `spec.validation`. Other fields are the document's as they are.
pub fn crd_document_field(p: &DocumentPositions, prefix: &str, field: &str) -> String {
    const SHARED: &str = "spec.validation.openAPIV3Schema";
    let exists = |f: &str| p.find(&join(prefix, f)).is_some();
    // The rest of `field` below `root`, when `field` is `root` or under it.
    let under = |field: &'_ str, root: &str| -> Option<String> {
        let rest = field.strip_prefix(root)?;
        (rest.is_empty() || rest.starts_with(['.', '['])).then(|| rest.to_string())
    };
    if let Some(rest) = under(field, SHARED) {
        if !exists(SHARED) {
            let own = (0..)
                .take_while(|i| exists(&format!("spec.versions[{i}]")))
                .map(|i| format!("spec.versions[{i}].schema.openAPIV3Schema"))
                .find(|own| exists(own));
            if let Some(own) = own {
                return format!("{own}{rest}");
            }
        }
        return field.to_string();
    }
    if let Some(r) = field.strip_prefix("spec.versions[")
        && let Some((i, r)) = r.split_once(']')
        && i.parse::<usize>().is_ok()
        && let Some(rest) = under(r, ".schema.openAPIV3Schema")
        && !exists(&format!("spec.versions[{i}].schema.openAPIV3Schema"))
        && exists(SHARED)
    {
        return format!("{SHARED}{rest}");
    }
    field.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn item_paths_follow_the_order_lists_are_unpacked_in() {
        assert_eq!(item_paths(&json!({"kind": "Thing"})), [""]);
        assert_eq!(item_paths(&json!("text")), [""]);
        assert!(item_paths(&json!({"items": null})).is_empty());
        // Breadth first: the plain items of the list, then those of its inner lists.
        let list = json!({"kind": "List", "items": [
            {"kind": "List", "items": [{"a": 1}, null, {"kind": "List", "items": [{}]}]},
            {"kind": "A"},
            null,
            {"kind": "B", "items": "not a list"},
        ]});
        assert_eq!(
            item_paths(&list),
            [
                "items[1]",
                "items[2]",
                "items[3]",
                "items[0].items[0]",
                "items[0].items[1]",
                "items[0].items[2].items[0]",
            ]
        );
        // The same order as the loader's.
        let doc = crd_audit_engine::load::Document::new(0, 1, list.clone());
        let items = crd_audit_engine::load::list::unpack_list("x", doc).unwrap();
        assert_eq!(items.len(), item_paths(&list).len());
        assert_eq!(items[0].value["kind"], "A");
        assert_eq!(items[1].value, json!({"kind": "", "apiVersion": ""})); // the null item
        assert_eq!(items[2].value["kind"], "B");
        assert_eq!(items[3].value, json!({"a": 1}));
        assert_eq!(items[4].value, Value::Null);
        assert_eq!(items[5].value, json!({}));
    }

    #[test]
    fn crd_fields_map_to_the_schema_as_written() {
        let v1 = "spec:\n  versions:\n  - name: a\n    schema:\n      openAPIV3Schema:\n        type: object\n  - name: b\n    schema:\n      openAPIV3Schema:\n        type: object\n";
        let p = DocumentPositions::read(v1, 0, 0).unwrap();
        assert_eq!(
            crd_document_field(&p, "", "spec.validation.openAPIV3Schema.type"),
            "spec.versions[0].schema.openAPIV3Schema.type"
        );
        assert_eq!(
            crd_document_field(&p, "", "spec.versions[1].schema.openAPIV3Schema.type"),
            "spec.versions[1].schema.openAPIV3Schema.type"
        );
        assert_eq!(
            crd_document_field(&p, "", "spec.validationX"),
            "spec.validationX"
        );
        let v1beta1 = "spec:\n  validation:\n    openAPIV3Schema:\n      type: object\n  versions:\n  - name: a\n  - name: b\n    schema:\n      openAPIV3Schema: {type: object}\n";
        let p = DocumentPositions::read(v1beta1, 0, 0).unwrap();
        assert_eq!(
            crd_document_field(&p, "", "spec.validation.openAPIV3Schema.type"),
            "spec.validation.openAPIV3Schema.type"
        );
        assert_eq!(
            crd_document_field(&p, "", "spec.versions[0].schema.openAPIV3Schema.type"),
            "spec.validation.openAPIV3Schema.type"
        );
        assert_eq!(
            crd_document_field(&p, "", "spec.versions[1].schema.openAPIV3Schema"),
            "spec.versions[1].schema.openAPIV3Schema"
        );
        // Inside a list.
        let list = "items:\n- spec:\n    versions:\n    - schema:\n        openAPIV3Schema: {}\n";
        let p = DocumentPositions::read(list, 0, 0).unwrap();
        assert_eq!(
            crd_document_field(&p, "items[0]", "spec.validation.openAPIV3Schema"),
            "spec.versions[0].schema.openAPIV3Schema"
        );
    }
}
