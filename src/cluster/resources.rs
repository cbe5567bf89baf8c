//! The API resources crd-audit reads: CRDs, and the objects of a CRD at a version.

use crd_audit_engine::Crd;
use kube::api::{ApiResource, DynamicObject};
use serde_json::Value;

pub fn crd_resource() -> ApiResource {
    ApiResource {
        group: "apiextensions.k8s.io".into(),
        version: "v1".into(),
        api_version: "apiextensions.k8s.io/v1".into(),
        kind: "CustomResourceDefinition".into(),
        plural: "customresourcedefinitions".into(),
    }
}

/// The resource of a CRD's objects at a version.
pub fn object_resource(crd: &Crd, version: &str) -> ApiResource {
    ApiResource {
        group: crd.group.clone(),
        version: version.into(),
        api_version: format!("{}/{version}", crd.group),
        kind: crd.kind.clone(),
        plural: crd.plural.clone(),
    }
}

/// A watched or listed object as the engine takes it (LIST items carry no apiVersion/kind).
/// The object's fields are moved, not copied: a CRD's schemas can be megabytes.
pub fn object_value(obj: DynamicObject, ar: &ApiResource) -> Value {
    let DynamicObject {
        types,
        metadata,
        data,
    } = obj;
    let mut m = match data {
        Value::Object(m) => m,
        Value::Null => serde_json::Map::new(),
        // A flattened object's other fields are always a map; keep anything else visible.
        other => return other,
    };
    let (api_version, kind) = types.map_or_else(
        || (ar.api_version.clone(), ar.kind.clone()),
        |t| (t.api_version, t.kind),
    );
    m.insert("apiVersion".into(), Value::String(api_version));
    m.insert("kind".into(), Value::String(kind));
    m.insert(
        "metadata".into(),
        serde_json::to_value(metadata).unwrap_or(Value::Null),
    );
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resource() -> ApiResource {
        ApiResource {
            group: "example.com".into(),
            version: "v1".into(),
            api_version: "example.com/v1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
        }
    }

    #[test]
    fn an_object_is_the_same_value_as_its_json() {
        let doc = json!({
            "apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "a", "namespace": "n", "labels": {"x": "y"}, "uid": "u"},
            "spec": {"size": 3, "deep": [{"k": null}]},
            "status": {"ok": true},
        });
        let obj: DynamicObject = serde_json::from_value(doc.clone()).unwrap();
        assert_eq!(object_value(obj, &resource()), doc);
    }

    #[test]
    fn a_listed_item_gets_the_apiversion_and_kind_of_its_resource() {
        let obj: DynamicObject =
            serde_json::from_value(json!({"metadata": {"name": "a"}, "spec": {}})).unwrap();
        assert_eq!(
            object_value(obj, &resource()),
            json!({"apiVersion": "example.com/v1", "kind": "Widget",
                   "metadata": {"name": "a"}, "spec": {}})
        );
    }
}
