//! Reading a CRD the API server served. The server accepted it, so a CRD crd-audit cannot
//! read is crd-audit's own failure, and every reader (`audit`, `validate
//! --crds-from-cluster`, the operator) treats it alike: it is reported as an internal error
//! that names the CRD and the reason, and the other CRDs are audited all the same.

use crd_audit_engine::Crd;
use serde_json::Value;

/// A CRD from the cluster that cannot be read.
#[derive(Clone, Debug, PartialEq)]
pub struct UnreadableCrd {
    /// `metadata.name` (empty when it has none).
    pub name: String,
    /// Where in the CRD and what is wrong there.
    pub reason: String,
}

impl std::fmt::Display for UnreadableCrd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "internal error: the CRD {} cannot be read: {}",
            self.name, self.reason
        )
    }
}

/// The CRD of a document the API server served.
pub fn read_crd(raw: &Value) -> Result<Crd, UnreadableCrd> {
    Crd::from_value(raw).map_err(|e| UnreadableCrd {
        name: raw["metadata"]["name"].as_str().unwrap_or("").to_string(),
        reason: format!("{}: {}", e.path, e.message),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_unreadable_crd_is_named_with_its_reason() {
        let raw = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "things.example.com"}, "spec": {"versions": ["not an object"]}});
        let e = read_crd(&raw).unwrap_err();
        assert_eq!(e.name, "things.example.com");
        assert_eq!(e.reason, "spec.versions[0]: must be an object");
        assert_eq!(
            e.to_string(),
            format!(
                "internal error: the CRD things.example.com cannot be read: {}",
                e.reason
            )
        );
        let mut good = raw;
        good["spec"] = json!({"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [{"name": "v1", "served": true, "storage": true}]});
        assert_eq!(read_crd(&good).unwrap().name, "things.example.com");
    }
}
