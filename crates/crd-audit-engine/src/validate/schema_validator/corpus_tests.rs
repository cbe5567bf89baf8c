//! Agreement of [`SchemaValidator`] with the API server's outputs in the conformance corpus,
//! restricted to the causes kube-openapi's value validation produces.

use super::SchemaValidator;
use crate::cause::Cause;
use crate::crd::Crd;
use crate::load;
use crate::schema::{Props, SchemaOrBool};
use crate::validate::schema_tree::Structure;
use crate::validate::{defaulting, prune};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path as FsPath, PathBuf};

fn corpus_dir() -> Option<PathBuf> {
    crate::testing::conformance_dir()
}

/// Whether an expected cause is one that kube-openapi's value validation produces (as
/// opposed to CEL rules, list-type checks, ObjectMeta and embedded-resource validation,
/// the scale subresource).
fn is_value_validation_cause(field: &str, kind: &str, detail: &str) -> bool {
    if field.starts_with("metadata") || field.starts_with('.') {
        return false;
    }
    if detail.contains("x-kubernetes-validations")
        || detail.contains("some validation rules were not checked")
    {
        return false;
    }
    match kind {
        "FieldValueRequired" => detail.is_empty(),
        "FieldValueNotSupported" => detail.starts_with("supported values: "),
        "FieldValueTooLong" | "FieldValueTooMany" | "FieldValueTypeInvalid" => true,
        "FieldValueInvalid" => {
            detail.contains(" in body ")
                || detail.starts_with("Checked value must be of type")
                || detail.starts_with("MultipleOf value must be of type")
                || detail.starts_with("Maximum boundary value must be of type")
                || detail.starts_with("Minimum boundary value must be of type")
                || detail.starts_with("factor MultipleOf declared for")
                || (detail.starts_with('"')
                    && (detail.contains("\" must validate ")
                        || detail.contains("\" must not validate the schema (not)")
                        || detail.contains("\" has a dependency on ")))
        }
        _ => false,
    }
}

/// The schema node a rendered field path leads to (indices and map keys followed through
/// `items`/`additionalProperties`), for telling embedded-resource errors apart.
fn schema_at<'a>(root: &'a Props, field: &str) -> Option<&'a Props> {
    let mut cur = root;
    let mut rest = field;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            cur = cur.items_schema()?;
            rest = &r[end + 1..];
            continue;
        }
        let r = rest.strip_prefix('.').unwrap_or(rest);
        let end = r.find(['.', '[']).unwrap_or(r.len());
        let name = &r[..end];
        cur = match cur.properties.get(name) {
            Some(p) => p,
            None => match &cur.additional_properties {
                Some(SchemaOrBool::Schema(s)) => s,
                _ => return None,
            },
        };
        rest = &r[end..];
    }
    Some(cur)
}

/// Embedded resources require `apiVersion`/`kind` on their own (not a schema error).
fn is_embedded_required(root: &Props, field: &str, kind: &str) -> bool {
    if kind != "FieldValueRequired" {
        return false;
    }
    let Some((parent, last)) = field.rsplit_once('.') else {
        return false;
    };
    (last == "apiVersion" || last == "kind")
        && schema_at(root, parent).is_some_and(|p| p.x_embedded_resource)
}

/// Removes a field that structural pruning drops (`spec.rules[1].retry`); false when the path
/// cannot be followed.
fn remove_path(v: &mut Value, path: &str) -> bool {
    let mut segs: Vec<&str> = Vec::new();
    for part in path.split('.') {
        let mut rest = part;
        if let Some(i) = rest.find('[') {
            segs.push(&rest[..i]);
            rest = &rest[i..];
            while let Some(r) = rest.strip_prefix('[') {
                let Some(end) = r.find(']') else { return false };
                segs.push(&rest[..end + 2]);
                rest = &r[end + 1..];
            }
        } else {
            segs.push(rest);
        }
    }
    let Some((last, parents)) = segs.split_last() else {
        return false;
    };
    let mut cur = v;
    for seg in parents {
        cur = match (seg.strip_prefix('[').and_then(|s| s.strip_suffix(']')), cur) {
            (Some(i), Value::Array(items)) => {
                match i.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                    Some(x) => x,
                    None => return false,
                }
            }
            (None, Value::Object(m)) => match m.get_mut(*seg) {
                Some(x) => x,
                None => return false,
            },
            _ => return false,
        };
    }
    match cur {
        Value::Object(m) => m.remove(*last).is_some(),
        _ => false,
    }
}

type Key = (String, String, String);

fn key_of(c: &Cause) -> Key {
    (
        c.field.to_string(),
        c.kind.reason().to_string(),
        c.message(),
    )
}

#[derive(Default)]
struct Tally {
    objects: usize,
    objects_ok: usize,
    expected: usize,
    matched: usize,
    extra: usize,
    skipped: usize,
}

fn run_case(dir: &FsPath, tally: &mut Tally, mismatches: &mut Vec<String>) -> Option<String> {
    let id = dir.file_name()?.to_string_lossy().to_string();
    let crd_text = std::fs::read_to_string(dir.join("crd.yaml")).ok()?;
    let crd_doc = load::parse_str("crd.yaml", &crd_text)
        .into_iter()
        .find_map(|d| d.ok())?;
    let crd = Crd::from_value(&crd_doc.value).ok()?;
    let mut versions: BTreeMap<String, (Props, SchemaValidator, bool)> = BTreeMap::new();
    for v in &crd.versions {
        // A version without a schema validates nothing.
        let schema = v.schema.clone().unwrap_or(Value::Null);
        let Ok(props) = Props::from_value("", &schema) else {
            continue;
        };
        let sv = SchemaValidator::new(&props);
        versions.insert(v.name.clone(), (props, sv, v.status_subresource));
    }
    let objects_text = std::fs::read_to_string(dir.join("objects.yaml")).unwrap_or_default();
    let expected_text = std::fs::read_to_string(dir.join("expected.jsonl")).unwrap_or_default();
    let expected: Vec<Value> = expected_text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let docs = load::parse_str("objects.yaml", &objects_text);
    let mut local = Tally::default();
    for (i, exp) in expected.iter().enumerate() {
        let code = exp["code"].as_i64().unwrap_or(0);
        let pruned = exp["pruned"].as_array().is_some_and(|p| !p.is_empty());
        let Some(Ok(doc)) = docs.get(i) else {
            local.skipped += 1;
            continue;
        };
        if code == 400 || code == 404 {
            local.skipped += 1;
            continue;
        }
        let api_version = exp["apiVersion"].as_str().unwrap_or("");
        let version = api_version.rsplit('/').next().unwrap_or("");
        let Some((props, sv, status_sub)) = versions.get(version) else {
            local.skipped += 1;
            continue;
        };
        let mut obj = doc.value.clone();
        if pruned {
            let paths = exp["pruned"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default();
            let removed = paths.iter().all(|p| {
                let p = p.as_str().unwrap_or("");
                (p.starts_with("status") && *status_sub) || remove_path(&mut obj, p)
            });
            if !removed {
                local.skipped += 1;
                continue;
            }
        }
        if *status_sub && let Value::Object(m) = &mut obj {
            m.remove("status");
        }
        let st = Structure::new(props);
        prune::prune_object(&mut obj, Some(&st), true);
        defaulting::apply(&st, &mut obj);
        let mut want: Vec<Key> = exp["errors"]
            .as_array()
            .map(|errs| {
                errs.iter()
                    .filter(|e| {
                        let field = e["field"].as_str().unwrap_or("");
                        let kind = e["type"].as_str().unwrap_or("");
                        is_value_validation_cause(field, kind, e["detail"].as_str().unwrap_or(""))
                            && !is_embedded_required(props, field, kind)
                    })
                    .map(|e| {
                        (
                            e["field"].as_str().unwrap_or("").to_string(),
                            e["type"].as_str().unwrap_or("").to_string(),
                            e["message"].as_str().unwrap_or("").to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut causes = Vec::new();
        sv.validate(&obj, &mut causes);
        let mut got: Vec<Key> = causes
            .iter()
            .filter(|c| !c.field.as_str().starts_with("metadata"))
            .map(key_of)
            .collect();
        want.sort();
        got.sort();
        local.objects += 1;
        local.expected += want.len();
        let mut missing = Vec::new();
        let mut extra = Vec::new();
        let (mut a, mut b) = (0, 0);
        while a < want.len() || b < got.len() {
            if b >= got.len() || (a < want.len() && want[a] < got[b]) {
                missing.push(&want[a]);
                a += 1;
            } else if a >= want.len() || got[b] < want[a] {
                extra.push(&got[b]);
                b += 1;
            } else {
                local.matched += 1;
                a += 1;
                b += 1;
            }
        }
        local.extra += extra.len();
        if missing.is_empty() && extra.is_empty() {
            local.objects_ok += 1;
        } else {
            let name = exp["name"].as_str().unwrap_or("?");
            for m in missing {
                mismatches.push(format!("{id} [{i}] {name}: MISSING {}", m.2));
            }
            for e in extra {
                mismatches.push(format!("{id} [{i}] {name}: EXTRA   {}", e.2));
            }
        }
    }
    let line = format!(
        "{id}: objects {}/{} causes {}/{} extra {} skipped {}",
        local.objects_ok, local.objects, local.matched, local.expected, local.extra, local.skipped
    );
    tally.objects += local.objects;
    tally.objects_ok += local.objects_ok;
    tally.expected += local.expected;
    tally.matched += local.matched;
    tally.extra += local.extra;
    tally.skipped += local.skipped;
    Some(line)
}

#[test]
fn corpus_agreement() {
    let Some(dir) = corpus_dir() else {
        return;
    };
    let mut cases: Vec<PathBuf> = std::fs::read_dir(dir.join("cases"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    let mut tally = Tally::default();
    let mut mismatches = Vec::new();
    // Deep schemas and values: run on a thread with a generous stack, as the CLI does.
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            for case in &cases {
                if let Some(line) = run_case(case, &mut tally, &mut mismatches) {
                    println!("{line}");
                }
            }
            println!("--- mismatches ({}) ---", mismatches.len());
            for m in &mismatches {
                println!("{m}");
            }
            println!(
                "OVERALL: objects {}/{} ({:.2}%), causes matched {}/{} ({:.2}%), extra causes {}, objects skipped {}",
                tally.objects_ok,
                tally.objects,
                100.0 * tally.objects_ok as f64 / tally.objects.max(1) as f64,
                tally.matched,
                tally.expected,
                100.0 * tally.matched as f64 / tally.expected.max(1) as f64,
                tally.extra,
                tally.skipped
            );
            assert!(tally.objects > 0, "no corpus objects compared");
            assert_eq!(
                (tally.objects_ok, tally.matched, tally.extra, mismatches.len()),
                (tally.objects, tally.expected, 0, 0),
                "value validation disagrees with kube-openapi on corpus objects"
            );
        })
        .unwrap()
        .join()
        .unwrap();
}

/// Throughput over every corpus object (run with optimizations:
/// `CARGO_PROFILE_DEV_OPT_LEVEL=2 cargo test --lib schema_validator_throughput -- --ignored --nocapture`).
#[test]
#[ignore]
fn schema_validator_throughput() {
    let Some(dir) = corpus_dir() else {
        return;
    };
    let mut work: Vec<(std::rc::Rc<SchemaValidator>, Value)> = Vec::new();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(dir.join("cases"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    cases.sort();
    for case in cases {
        let Ok(text) = std::fs::read_to_string(case.join("crd.yaml")) else {
            continue;
        };
        let Some(doc) = load::parse_str("crd.yaml", &text)
            .into_iter()
            .find_map(|d| d.ok())
        else {
            continue;
        };
        let Ok(crd) = Crd::from_value(&doc.value) else {
            continue;
        };
        let mut by_version = BTreeMap::new();
        for v in &crd.versions {
            let schema = v.schema.clone().unwrap_or(Value::Null);
            if let Ok(props) = Props::from_value("", &schema) {
                by_version.insert(
                    v.name.clone(),
                    (std::rc::Rc::new(SchemaValidator::new(&props)), props),
                );
            }
        }
        let objects = std::fs::read_to_string(case.join("objects.yaml")).unwrap_or_default();
        for doc in load::parse_str("objects.yaml", &objects)
            .into_iter()
            .flatten()
        {
            let version = doc.value["apiVersion"]
                .as_str()
                .unwrap_or("")
                .rsplit('/')
                .next()
                .unwrap_or("");
            if let Some((sv, props)) = by_version.get(version) {
                let mut obj = doc.value.clone();
                let st = Structure::new(props);
                prune::prune_object(&mut obj, Some(&st), true);
                defaulting::apply(&st, &mut obj);
                work.push((sv.clone(), obj));
            }
        }
    }
    let bytes: usize = work
        .iter()
        .map(|(_, v)| serde_json::to_vec(v).unwrap().len())
        .sum();
    let invalid = work.iter().filter(|(sv, v)| !sv.is_valid(v)).count();
    let start = std::time::Instant::now();
    let mut rounds = 0usize;
    let mut causes = Vec::new();
    while start.elapsed().as_secs_f64() < 3.0 {
        for (sv, v) in &work {
            causes.clear();
            sv.validate(v, &mut causes);
        }
        rounds += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    let n = (rounds * work.len()) as f64;
    println!(
        "{} objects ({} invalid, {} KiB of JSON) x {rounds} rounds: {:.0} objects/s, {:.1} MiB/s",
        work.len(),
        invalid,
        bytes / 1024,
        n / secs,
        (rounds * bytes) as f64 / secs / (1 << 20) as f64
    );
}
