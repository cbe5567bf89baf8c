//! `cargo bench --bench schema_validation`: schema-only and CEL-only validation throughput
//! (objects/s) on corpus cases, to compare with `oracle bench CRD OBJECTS N` (its `schemaOnly`
//! and `celOnly` figures) on the same machine. Objects are prepared once (pruned, status
//! dropped, defaults applied), as the server prepares them.
//!
//! Cases: `CRD_AUDIT_BENCH_CASES` (comma-separated ids), default the gateway-api HTTPRoute and
//! prometheus-operator Prometheus cases.

use crd_audit_engine::crd::Crd;
use crd_audit_engine::schema::Props;
use crd_audit_engine::validate::cel_validation::CelValidator;
use crd_audit_engine::validate::defaulting;
use crd_audit_engine::validate::prune::prune_object;
use crd_audit_engine::validate::schema_tree::Structure;
use crd_audit_engine::validate::schema_validator::SchemaValidator;
use std::time::{Duration, Instant};

fn main() {
    let Some(dir) = crd_audit_engine::testing::conformance_dir() else {
        std::process::exit(2);
    };
    let cases = std::env::var("CRD_AUDIT_BENCH_CASES").unwrap_or_else(|_| {
        "gateway-api-standard-httproutes,prometheus-operator-prometheuses".to_string()
    });
    for id in cases.split(',') {
        let case = dir.join("cases").join(id);
        let Ok(crd_text) = std::fs::read_to_string(case.join("crd.yaml")) else {
            eprintln!(
                "{id}: not found under {} (set CRD_AUDIT_CONFORMANCE)",
                dir.display()
            );
            continue;
        };
        let crd_doc = crd_audit_engine::load::parse_str("crd.yaml", &crd_text)
            .remove(0)
            .expect("crd");
        let crd = Crd::from_value(&crd_doc.value).expect("a CRD");
        let objects = std::fs::read_to_string(case.join("objects.yaml")).unwrap_or_default();
        // One compiled validator per version, as the engine compiles them.
        let validators: Vec<(String, bool, Option<Props>, Option<SchemaValidator>)> = crd
            .versions
            .iter()
            .map(|v| {
                let props = v
                    .schema
                    .as_ref()
                    .map(|s| Props::from_value("s", s).expect("schema"));
                let validator = props.as_ref().map(SchemaValidator::new);
                (v.name.clone(), v.status_subresource, props, validator)
            })
            .collect();
        let mut prepared = Vec::new();
        for doc in crd_audit_engine::load::parse_str("objects.yaml", &objects)
            .into_iter()
            .flatten()
        {
            let mut obj = doc.value;
            let index = crd.version_index_for(obj["apiVersion"].as_str().unwrap_or(""));
            let Some(i) = index else {
                continue;
            };
            let structure = validators[i].2.as_ref().map(Structure::new);
            prune_object(&mut obj, structure.as_ref(), true);
            if let Some(st) = &structure {
                defaulting::apply(st, &mut obj);
            }
            if validators[i].1
                && let Some(m) = obj.as_object_mut()
            {
                m.remove("status");
            }
            prepared.push((i, obj));
        }
        if prepared.is_empty() {
            continue;
        }
        let mut out = Vec::new();
        let mut passes = 0u64;
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(3) {
            for (i, obj) in &prepared {
                if let Some(v) = &validators[*i].3 {
                    out.clear();
                    v.validate(obj, &mut out);
                }
            }
            passes += 1;
        }
        let elapsed = start.elapsed().as_secs_f64();
        let n = passes * prepared.len() as u64;
        println!(
            "{id}: {} objects x {passes} passes: {:.0} objects/s ({:.0} ns/object), schema only",
            prepared.len(),
            n as f64 / elapsed,
            elapsed * 1e9 / n as f64
        );
        // CEL rules only (the oracle's `celOnly`): every rule of every object, compiled once.
        let cel: Vec<Option<CelValidator>> = validators
            .iter()
            .map(|v| v.2.as_ref().and_then(CelValidator::new))
            .collect();
        if cel.iter().all(Option::is_none) {
            continue;
        }
        let mut passes = 0u64;
        let mut causes = 0usize;
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(3) {
            for (i, obj) in &prepared {
                if let Some(v) = &cel[*i] {
                    causes += v.validate(obj).causes.len();
                }
            }
            passes += 1;
        }
        let elapsed = start.elapsed().as_secs_f64();
        let n = passes * prepared.len() as u64;
        println!(
            "{id}: {} objects x {passes} passes: {:.0} objects/s ({:.0} ns/object), CEL only ({} causes a pass)",
            prepared.len(),
            n as f64 / elapsed,
            elapsed * 1e9 / n as f64,
            causes as u64 / passes.max(1)
        );
    }
}
