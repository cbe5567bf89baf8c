//! The bodies of the fuzz targets (`fuzz/`, run with cargo-fuzz) and of their replay test
//! (`tests/engine/fuzz_smoke.rs`): each takes arbitrary bytes and must neither panic nor hang. They
//! call the engine unguarded (not through [`crate::guard`]), so that a bug shows.
//!
//! Each body runs on a thread with the stack the command line gives such work, as the
//! engine walks documents and schemas recursively within the loader's depth bounds.

use crate::crd::Crd;
use crate::load::stream::DocumentStream;
use crate::validate::{CrdValidator, Mode};
use serde_json::{Value, json};

fn on_big_stack(stack: usize, f: impl FnOnce() + Send) {
    std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .stack_size(stack)
            .spawn_scoped(s, f)
            .expect("spawn a fuzzing thread");
        if let Err(panic) = worker.join() {
            std::panic::resume_unwind(panic);
        }
    });
}

/// The documents of a text (decoded as the command line reads a stream).
fn documents(data: &[u8]) -> Vec<Value> {
    DocumentStream::new("fuzz", std::io::Cursor::new(data))
        .filter_map(Result::ok)
        .map(|d| d.value)
        .collect()
}

/// The loader: a stream of YAML or JSON documents, cut into pieces and decoded, lists
/// unpacked; the whole text decoded at once too.
pub fn load(data: &[u8]) {
    on_big_stack(256 << 20, || {
        for doc in DocumentStream::new("fuzz", std::io::Cursor::new(data)) {
            let Ok(doc) = doc else { continue };
            let _ = crate::load::list::unpack_list("fuzz", doc);
        }
        if let Ok(text) = std::str::from_utf8(data) {
            let _ = crate::load::parse_str("fuzz", text);
            // Positions of fields, as findings look them up.
            for doc in 0..2 {
                if let Some(p) = crate::load::positions::DocumentPositions::read(text, doc, 0) {
                    for field in ["", "a", "spec.a[0]", "a[b].c", "metadata.labels[x.y/z]"] {
                        let _ = p.locate(field);
                    }
                }
            }
        }
    });
}

/// Go regular expressions: the first line is a pattern, the rest a subject.
pub fn goregex(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (pattern, subject) = text.split_once('\n').unwrap_or((text, ""));
    on_big_stack(64 << 20, || {
        let _ = crate::go::regexp::translate(pattern);
        if let Ok(re) = crate::go::regexp::compile(pattern) {
            let _ = re.is_match(subject);
            let _ = re.find(subject);
            let _ = re.find_all(subject);
        }
    });
}

/// A CRD with a bit of everything, for objects when the input brings no CRD.
fn default_crd() -> Value {
    serde_json::from_str(DEFAULT_CRD).expect("the built-in CRD is JSON")
}

const DEFAULT_CRD: &str = r#"{
 "apiVersion": "apiextensions.k8s.io/v1",
 "kind": "CustomResourceDefinition",
 "metadata": {
  "name": "things.example.com"
 },
 "spec": {
  "group": "example.com",
  "scope": "Namespaced",
  "names": {
   "plural": "things",
   "singular": "thing",
   "kind": "Thing",
   "listKind": "ThingList"
  },
  "versions": [
   {
    "name": "v1",
    "served": true,
    "storage": true,
    "subresources": {
     "status": {},
     "scale": {
      "specReplicasPath": ".spec.replicas",
      "statusReplicasPath": ".status.replicas"
     }
    },
    "schema": {
     "openAPIV3Schema": {
      "type": "object",
      "x-kubernetes-validations": [
       {
        "rule": "!has(self.spec) || !has(self.spec.name) || self.spec.name.size() < 20",
        "messageExpression": "'bad: ' + self.metadata.name"
       }
      ],
      "properties": {
       "spec": {
        "type": "object",
        "required": [
         "name"
        ],
        "properties": {
         "name": {
          "type": "string",
          "pattern": "^[a-z]+(-[a-z0-9]+)*$",
          "maxLength": 30,
          "default": "x"
         },
         "replicas": {
          "type": "integer",
          "minimum": 0,
          "maximum": 10,
          "multipleOf": 2
         },
         "ratio": {
          "type": "number",
          "exclusiveMaximum": true,
          "maximum": 1.5
         },
         "when": {
          "type": "string",
          "format": "date-time"
         },
         "host": {
          "type": "string",
          "format": "hostname"
         },
         "size": {
          "x-kubernetes-int-or-string": true,
          "anyOf": [
           {
            "type": "integer"
           },
           {
            "type": "string"
           }
          ]
         },
         "mode": {
          "type": "string",
          "enum": [
           "a",
           "b"
          ],
          "nullable": true
         },
         "tags": {
          "type": "array",
          "x-kubernetes-list-type": "set",
          "maxItems": 5,
          "items": {
           "type": "string"
          }
         },
         "ports": {
          "type": "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": [
           "port",
           "protocol"
          ],
          "items": {
           "type": "object",
           "required": [
            "port"
           ],
           "properties": {
            "port": {
             "type": "integer"
            },
            "protocol": {
             "type": "string",
             "default": "TCP"
            }
           },
           "x-kubernetes-validations": [
            {
             "rule": "self.port > 0",
             "fieldPath": ".port"
            }
           ]
          }
         },
         "labels": {
          "type": "object",
          "additionalProperties": {
           "type": "string",
           "minLength": 1
          },
          "maxProperties": 3
         },
         "template": {
          "type": "object",
          "x-kubernetes-embedded-resource": true,
          "x-kubernetes-preserve-unknown-fields": true
         },
         "free": {
          "type": "object",
          "x-kubernetes-preserve-unknown-fields": true
         },
         "choice": {
          "type": "object",
          "oneOf": [
           {
            "required": [
             "a"
            ]
           },
           {
            "required": [
             "b"
            ]
           }
          ],
          "properties": {
           "a": {
            "type": "string"
           },
           "b": {
            "type": "string"
           }
          },
          "not": {
           "required": [
            "c"
           ]
          }
         }
        },
        "x-kubernetes-validations": [
         {
          "rule": "self.replicas == oldSelf.replicas",
          "optionalOldSelf": true
         },
         {
          "rule": "self.tags.all(t, t.startsWith('t'))",
          "reason": "FieldValueForbidden"
         }
        ]
       },
       "status": {
        "type": "object",
        "properties": {
         "replicas": {
          "type": "integer"
         }
        }
       }
      }
     }
    }
   }
  ]
 }
}"#;

/// Object validation: when the first document is a CRD, the others are judged against it
/// (as created and as stored), else all are judged against a built-in CRD.
pub fn validate(data: &[u8]) {
    on_big_stack(64 << 20, || {
        let mut docs = documents(data);
        let crd = match docs.first().map(Crd::is_crd) {
            Some(true) => Crd::from_value(&docs.remove(0)),
            _ => Crd::from_value(&default_crd()),
        };
        let Ok(crd) = crd else { return };
        // Unguarded: a panic must reach the fuzzer.
        let validator = CrdValidator::compile(&crd, crate::release::Release::NEWEST);
        for obj in docs {
            let _ = validator.validate_unguarded(obj.clone(), Mode::Stored);
            let _ = validator.validate_unguarded(obj, Mode::Create);
        }
    });
}

/// CRD checks, through the borrowing and the owning entry points.
pub fn check(data: &[u8]) {
    on_big_stack(256 << 20, || {
        for doc in documents(data) {
            let Ok(crd) = Crd::from_value(&doc) else {
                continue;
            };
            // Unguarded: a panic must reach the fuzzer.
            let release = crate::release::Release::NEWEST;
            let borrowed = crate::structural::check::check_borrowed(&crd, release);
            let owned = crate::structural::check::check_owned(
                Crd::from_owned(doc).expect("read once already"),
                release,
            );
            assert_eq!(borrowed, owned, "the two entry points disagree");
        }
    });
}

/// CEL: the input is a rule at the root of a schema: parsed, type-checked and costed as CRD
/// validation does, then evaluated on an object.
pub fn cel(data: &[u8]) {
    let Ok(rule) = std::str::from_utf8(data) else {
        return;
    };
    on_big_stack(64 << 20, || {
        let schema = json!({
            "type": "object",
            "x-kubernetes-validations": [{"rule": rule, "messageExpression": rule}],
            "properties": {
                "i": {"type": "integer"}, "f": {"type": "number"}, "s": {"type": "string"},
                "b": {"type": "boolean"}, "d": {"type": "string", "format": "date-time"},
                "q": {"x-kubernetes-int-or-string": true},
                "l": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 8}},
                "m": {"type": "object", "additionalProperties": {"type": "integer"}},
                "o": {"type": "object", "properties": {"x": {"type": "string"}}},
                "any": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
            }
        });
        let Ok(props) = crate::schema::Props::from_value("", &schema) else {
            return;
        };
        let mut errors = Vec::new();
        crate::structural::cel_compilation::check_rules(
            &props,
            &crate::cause::Path::root(),
            &[],
            crate::cel::env::Env::LATEST,
            &mut errors,
        );
        if let Some(v) = crate::validate::cel_validation::CelValidator::new(&props) {
            let obj = json!({"i": 3, "f": 1.5, "s": "héllo", "b": true, "d": "2024-01-02T03:04:05Z",
                "q": "50%", "l": ["a", "bb"], "m": {"k": 1}, "o": {"x": "y"},
                "any": {"n": [1, {"z": null}]}});
            let _ = v.validate(&obj);
            let _ = v.validate(&json!({}));
        }
    });
}

/// A fuzz target's body.
pub type Target = fn(&[u8]);

/// The targets by name, for the replay test.
pub const TARGETS: [(&str, Target); 5] = [
    ("load", load),
    ("goregex", goregex),
    ("validate", validate),
    ("check", check),
    ("cel", cel),
];
