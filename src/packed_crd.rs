//! A CRD revision as the operator keeps it between events. A generated CRD's schema is
//! 50 KB to 1.7 MB of YAML and several times that as a parsed document, and the operator
//! tracks thousands of CRDs; what it needs of a revision while nothing happens is small:
//! names, versions, generation, stored versions, conditions. So a tracked revision is the
//! CRD model without its schemas (the shell), plus each version's schema as deflated compact
//! JSON (a schema that several versions share is kept once). The schemas are inflated again
//! only to diff the next revision against this one, to write the report's audited revision,
//! and to compile a validator when objects must be judged.

use crd_audit_engine::Crd;
use flate2::Compression;
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use serde_json::Value;
use std::io::{Read, Write};
use std::sync::Arc;

/// One CRD revision, kept small.
#[derive(Debug)]
pub struct PackedCrd {
    shell: Arc<Crd>,
    /// Per version (in `shell.versions` order): its deflated schema, shared between
    /// versions whose schemas are equal.
    schemas: Vec<Option<Arc<[u8]>>>,
    /// The compact JSON size of every version's schema (a shared schema counted for each
    /// version: each version is compiled on its own).
    json_bytes: usize,
}

impl PackedCrd {
    /// Packs a parsed CRD.
    pub fn pack(mut crd: Crd) -> PackedCrd {
        let mut schemas: Vec<Option<Arc<[u8]>>> = Vec::with_capacity(crd.versions.len());
        let mut seen: Vec<(Value, usize, Arc<[u8]>)> = Vec::new();
        let mut json_bytes = 0;
        for v in &mut crd.versions {
            let Some(schema) = v.schema.take() else {
                schemas.push(None);
                continue;
            };
            if let Some((_, len, packed)) = seen.iter().find(|(s, _, _)| *s == schema) {
                json_bytes += len;
                schemas.push(Some(packed.clone()));
                crd_audit_engine::load::drop_value(schema);
                continue;
            }
            let json = serde_json::to_vec(&schema).expect("a JSON value serializes");
            json_bytes += json.len();
            let packed: Arc<[u8]> = deflate(&json).into();
            seen.push((schema, json.len(), packed.clone()));
            schemas.push(Some(packed));
        }
        for (schema, _, _) in seen {
            crd_audit_engine::load::drop_value(schema);
        }
        PackedCrd {
            shell: Arc::new(crd),
            schemas,
            json_bytes,
        }
    }

    /// The same revision with the status of `crd` (the same generation, read again: its
    /// stored versions and conditions may differ).
    pub fn with_status_of(&self, crd: &Crd) -> PackedCrd {
        let mut shell = Crd::clone(&self.shell);
        shell.stored_versions = crd.stored_versions.clone();
        shell.conditions = crd.conditions.clone();
        PackedCrd {
            shell: Arc::new(shell),
            schemas: self.schemas.clone(),
            json_bytes: self.json_bytes,
        }
    }

    /// The CRD without its schemas (every `versions[].schema` is `None`).
    pub fn shell(&self) -> &Arc<Crd> {
        &self.shell
    }

    /// The whole CRD again.
    pub fn unpack(&self) -> Result<Crd, UnpackError> {
        let mut crd = Crd::clone(&self.shell);
        for (v, packed) in crd.versions.iter_mut().zip(&self.schemas) {
            if let Some(bytes) = packed {
                let json = inflate(bytes).map_err(|e| UnpackError::Inflate {
                    crd: self.shell.name.clone(),
                    source: e,
                })?;
                v.schema = Some(
                    serde_json::from_slice(&json).map_err(|e| UnpackError::Read {
                        crd: self.shell.name.clone(),
                        source: e,
                    })?,
                );
            }
        }
        Ok(crd)
    }

    /// Heap bytes of the packed schemas (each shared schema counted once).
    pub fn packed_bytes(&self) -> usize {
        let mut seen: Vec<*const u8> = Vec::new();
        let mut total = 0;
        for s in self.schemas.iter().flatten() {
            if !seen.contains(&s.as_ptr()) {
                seen.push(s.as_ptr());
                total += s.len();
            }
        }
        total
    }

    /// The compact JSON size of its versions' schemas (a shared one counted per version):
    /// what compiling it reads, and the bulk of its audited revision.
    pub fn schema_json_bytes(&self) -> usize {
        self.json_bytes
    }
}

/// Why a kept revision could not be made whole again (a bug of crd-audit: it packed them).
#[derive(Debug, thiserror::Error)]
pub enum UnpackError {
    #[error("CRD {crd}: inflating a kept schema: {source}")]
    Inflate {
        crd: String,
        #[source]
        source: std::io::Error,
    },
    #[error("CRD {crd}: reading a kept schema: {source}")]
    Read {
        crd: String,
        #[source]
        source: serde_json::Error,
    },
}

/// `bytes` deflated (fast).
pub(crate) fn deflate(bytes: &[u8]) -> Vec<u8> {
    let mut e = DeflateEncoder::new(Vec::with_capacity(bytes.len() / 8), Compression::fast());
    e.write_all(bytes).expect("writing to a Vec cannot fail");
    let mut out = e.finish().expect("writing to a Vec cannot fail");
    out.shrink_to_fit();
    out
}

/// What [`deflate`] made, inflated.
pub(crate) fn inflate(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len() * 8);
    DeflateDecoder::new(bytes).read_to_end(&mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(versions: &[(&str, Value)]) -> Crd {
        let vs: Vec<Value> = versions
            .iter()
            .enumerate()
            .map(|(i, (name, schema))| {
                let mut v = json!({"name": name, "served": true, "storage": i == 0});
                if !schema.is_null() {
                    v["schema"] = json!({"openAPIV3Schema": schema});
                }
                v
            })
            .collect();
        Crd::from_value(&json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com", "uid": "u-1", "generation": 3},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"kind": "Widget", "plural": "widgets"}, "versions": vs},
            "status": {"storedVersions": ["v1"]}}))
        .unwrap()
    }

    fn big_schema(fields: usize, max: i64) -> Value {
        let props: serde_json::Map<String, Value> = (0..fields)
            .map(|i| {
                (
                    format!("field{i}"),
                    json!({"type": "integer", "maximum": max,
                        "description": "a generated parameter, documented at length as generators do"}),
                )
            })
            .collect();
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": props}}})
    }

    #[test]
    fn a_packed_crd_unpacks_to_the_same_crd() {
        let original = crd(&[
            ("v1", big_schema(200, 10)),
            ("v1beta1", big_schema(200, 10)),
            ("v1alpha1", big_schema(3, 5)),
            ("v0", Value::Null),
        ]);
        let packed = PackedCrd::pack(original.clone());
        assert!(packed.shell().versions.iter().all(|v| v.schema.is_none()));
        assert_eq!(packed.shell().versions.len(), 4);
        assert_eq!(packed.unpack().unwrap(), original);
    }

    #[test]
    fn equal_schemas_are_kept_once_and_small() {
        let two = PackedCrd::pack(crd(&[
            ("v1", big_schema(500, 10)),
            ("v1beta1", big_schema(500, 10)),
        ]));
        let one = PackedCrd::pack(crd(&[("v1", big_schema(500, 10))]));
        assert_eq!(two.packed_bytes(), one.packed_bytes());
        assert_eq!(two.schema_json_bytes(), 2 * one.schema_json_bytes());
        // Generated schemas repeat themselves: deflate keeps a small fraction.
        assert!(
            one.packed_bytes() * 10 < one.schema_json_bytes(),
            "{} packed of {}",
            one.packed_bytes(),
            one.schema_json_bytes()
        );
    }

    #[test]
    fn a_different_schema_is_kept_apart() {
        let packed = PackedCrd::pack(crd(&[
            ("v1", big_schema(50, 10)),
            ("v1beta1", big_schema(50, 20)),
        ]));
        let back = packed.unpack().unwrap();
        assert_eq!(
            back.versions[1].schema.as_ref().unwrap()["properties"]["spec"]["properties"]["field7"]
                ["maximum"],
            20
        );
        assert!(
            !crd_audit_engine::diff(
                &back,
                &crd(&[("v1", big_schema(50, 10)), ("v1beta1", big_schema(50, 10)),])
            )
            .is_empty()
        );
    }
}
