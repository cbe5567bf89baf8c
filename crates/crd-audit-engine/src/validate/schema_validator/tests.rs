//! Tests of the schema validator by keyword group.

use super::*;
use serde_json::json;

fn run(schema: Value, v: Value) -> Vec<String> {
    let p = Props::from_value("s", &schema).unwrap();
    let sv = SchemaValidator::new(&p);
    let mut out = Vec::new();
    sv.validate(&v, &mut out);
    assert_eq!(sv.is_valid(&v), out.is_empty());
    out.iter().map(|c| c.message()).collect()
}

#[test]
fn type_errors_do_not_short_circuit() {
    let s = json!({"type": "object", "properties": {"e": {"type": "integer", "enum": [1, 2]}}});
    let mut got = run(s, json!({"e": "1"}));
    got.sort();
    assert_eq!(
        got,
        vec![
            r#"e: Invalid value: "string": e in body must be of type integer: "string""#,
            r#"e: Unsupported value: "1": supported values: "1", "2""#,
        ]
    );
}

#[test]
fn required_and_paths() {
    let s = json!({"type": "object", "required": ["spec"], "properties": {"spec": {"type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "object", "required": ["name"],
          "properties": {"name": {"type": "string", "maxLength": 2}}}},
          "labels": {"type": "object", "additionalProperties": {"type": "string", "pattern": "^[a-z]*$"}}}}}});
    assert_eq!(run(s.clone(), json!({})), vec!["spec: Required value"]);
    let mut got = run(
        s,
        json!({"spec": {"items": [{"name": "abc"}, {}], "labels": {"x.y/z": "UP"}}}),
    );
    got.sort();
    assert_eq!(
        got,
        vec![
            "spec.items[0].name: Too long: may not be more than 2 bytes",
            "spec.items[1].name: Required value",
            r#"spec.labels.x.y/z: Invalid value: "UP": spec.labels.x.y/z in body should match '^[a-z]*$'"#,
        ]
    );
}

#[test]
fn numbers_follow_go() {
    let s = json!({"properties": {"i": {"type": "integer", "multipleOf": 2.5},
        "n": {"type": "number", "multipleOf": 0.1}, "b": {"type": "integer", "maximum": 9007199254740993u64}}});
    let mut got = run(s.clone(), json!({"i": 6, "n": 3, "b": 9007199254740993u64}));
    got.sort();
    assert_eq!(
        got,
        vec![
            r#"<nil>: Invalid value: "": MultipleOf value must be of type integer (default format) in i"#,
            "b: Invalid value: 9007199254740993: b in body should be less than or equal to 9007199254740992",
            "i: Invalid value: 6: i in body should be a multiple of 2.5",
            "n: Invalid value: 0: factor MultipleOf declared for n must be positive: 0",
        ]
    );
    assert!(run(s, json!({"n": 0.3})).is_empty());
}

#[test]
fn any_of_keeps_best_branch() {
    let s = json!({"properties": {"a": {"x-kubernetes-int-or-string": true,
        "anyOf": [{"type": "integer"}, {"type": "string"}]}}});
    let mut got = run(s, json!({"a": 1.5}));
    got.sort();
    assert_eq!(
        got,
        vec![
            r#"<nil>: Invalid value: "": "a" must validate at least one schema (anyOf)"#,
            r#"<nil>: Invalid value: "": Checked value must be of type integer (default format) in a"#,
            r#"a: Invalid value: "number": a in body must be of type integer,string: "number""#,
            r#"a: Invalid value: "number": a in body must be of type integer: "number""#,
        ]
    );
}

#[test]
fn validate_at_uses_empty_names() {
    let p = Props::from_value("s", &json!({"type": "string", "minLength": 3})).unwrap();
    let sv = SchemaValidator::new(&p);
    let mut out = Vec::new();
    sv.validate_at(&json!("a"), &Path::new("spec").child("default"), &mut out);
    assert_eq!(
        out[0].message(),
        r#"spec.default: Invalid value: "a":  in body should be at least 3 chars long"#
    );
}

#[test]
fn nulls_and_enums() {
    let s = json!({"properties": {"l": {"type": "array", "items": {"type": "string"}},
        "e": {"type": "string", "nullable": true, "enum": ["x", null]}}});
    let mut got = run(s, json!({"l": ["a", null], "e": null}));
    got.sort();
    assert_eq!(
        got,
        vec![
            r#"e: Unsupported value: null: supported values: "x", "null""#,
            r#"l[1]: Invalid value: "null": l[1] in body must be of type string: "null""#,
        ]
    );
}

fn run_fmt(schema: Value, v: Value) -> Vec<String> {
    let p = Props::from_value("s", &schema).unwrap();
    let sv = SchemaValidator::with_formats(&p, |f| f == "ipv4", |_, s| s.split('.').count() == 4);
    let mut out = Vec::new();
    sv.validate(&v, &mut out);
    let mut got: Vec<String> = out.iter().map(|c| c.message()).collect();
    got.sort();
    got
}

#[test]
fn formats_on_other_kinds() {
    let s = json!({"properties": {"ip": {"type": "string", "format": "ipv4"}}});
    assert_eq!(
        run_fmt(s.clone(), json!({"ip": 5})),
        vec![r#"ip: Invalid value: "int64": ip in body must be of type ipv4: "int64""#]
    );
    assert_eq!(
        run_fmt(s.clone(), json!({"ip": true})),
        vec![r#"ip: Invalid value: "": ip in body must be of type ipv4: """#]
    );
    // Strings and arrays skip the type check when a string format is set.
    assert!(run_fmt(s.clone(), json!({"ip": ["x"]})).is_empty());
    assert_eq!(
        run_fmt(s, json!({"ip": "1.2.3"})),
        vec![r#"ip: Invalid value: "1.2.3": ip in body must be of type ipv4: "1.2.3""#]
    );
    // Unsupported formats are stripped: a plain type error.
    let s = json!({"properties": {"x": {"type": "string", "format": "nope"}}});
    assert_eq!(
        run_fmt(s, json!({"x": 5})),
        vec![r#"x: Invalid value: "integer": x in body must be of type string: "integer""#]
    );
}

#[test]
fn integer_formats_and_ranges() {
    let s = json!({"properties": {"i": {"type": "integer", "format": "int32", "maximum": 3000000000u64}}});
    assert_eq!(
        run(s, json!({"i": 2147483648u64})),
        vec![
            r#"<nil>: Invalid value: "": Checked value must be of type integer with format int32 in i"#,
            r#"<nil>: Invalid value: "": Maximum boundary value must be of type integer with format int32 in i"#,
        ]
    );
    let s = json!({"properties": {"f": {"type": "number", "format": "float"}}});
    assert_eq!(
        run(s, json!({"f": 1e39})),
        vec![
            r#"<nil>: Invalid value: "": Checked value must be of type number with format float in f"#
        ]
    );
}

#[test]
fn object_keywords() {
    let s = json!({"type": "object", "required": ["a"], "minProperties": 2,
        "properties": {"a": {"type": "string"}}, "additionalProperties": false});
    // min/maxProperties failures stop the object validator (no required check).
    assert_eq!(
        run(s.clone(), json!({"b": 1})),
        vec![r#"<nil>: Invalid value: 1:  in body should have at least 2 properties"#]
    );
    let mut got = run(s, json!({"b": 1, "c": 2}));
    got.sort();
    assert_eq!(
        got,
        vec![
            r#"<nil>: Invalid value: "b": .b in body is a forbidden property"#,
            r#"<nil>: Invalid value: "c": .c in body is a forbidden property"#,
            "a: Required value",
        ]
    );
}

#[test]
fn one_of_and_not() {
    let s = json!({"properties": {"x": {"oneOf": [{"type": "string"}, {"minLength": 1}]},
        "y": {"not": {"type": "string"}}}});
    let mut got = run(s, json!({"x": "a", "y": "b"}));
    got.sort();
    assert_eq!(
        got,
        vec![
            r#"<nil>: Invalid value: "": "x" must validate one and only one schema (oneOf). Found 2 valid alternatives"#,
            r#"<nil>: Invalid value: "": "y" must not validate the schema (not)"#,
        ]
    );
}

#[test]
fn enum_conversions_follow_reflect() {
    let s = json!({"properties": {"e": {"enum": ["1"]}, "f": {"enum": [1]}}});
    // int64 49 converts to the string "1"; float64 1.5 converts to the int64 1.
    assert!(run(s.clone(), json!({"e": 49, "f": 1.5})).is_empty());
    assert_eq!(
        run(s, json!({"e": 1})),
        vec![r#"e: Unsupported value: 1: supported values: "1""#]
    );
}

#[test]
fn deep_values_do_not_overflow() {
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(|| {
            let mut schema = json!({"type": "string"});
            let mut v = json!(1);
            for _ in 0..200 {
                schema = json!({"type": "object", "properties": {"a": schema}});
                v = json!({ "a": v });
            }
            let got = run(schema, v);
            assert_eq!(got.len(), 1);
        })
        .unwrap()
        .join()
        .unwrap();
}
