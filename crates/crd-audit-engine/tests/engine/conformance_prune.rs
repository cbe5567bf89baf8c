//! Structural pruning against the `pruned` lists the upstream code reports in the corpus.

use crate::common;

use crd_audit_engine::crd::Crd;
use crd_audit_engine::schema::Props;
use crd_audit_engine::validate::prune::prune_object;
use crd_audit_engine::validate::schema_tree::Structure;

#[test]
fn pruned_paths_match_upstream() {
    let Some(dir) = common::corpus_dir() else {
        return;
    };
    let (mut total, mut same) = (0, 0);
    let mut differing = Vec::new();
    for case in common::cases(&dir) {
        let id = case.file_name().unwrap().to_string_lossy().to_string();
        let crd_text = std::fs::read_to_string(case.join("crd.yaml")).unwrap();
        let crd_doc = crd_audit_engine::load::parse_str("crd.yaml", &crd_text)
            .remove(0)
            .unwrap();
        let crd = Crd::from_value(&crd_doc.value).unwrap();
        let objects = std::fs::read_to_string(case.join("objects.yaml")).unwrap_or_default();
        let expected: Vec<serde_json::Value> = std::fs::read_to_string(case.join("expected.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let docs = crd_audit_engine::load::parse_str("objects.yaml", &objects);
        for (i, doc) in docs.into_iter().enumerate() {
            let Some(exp) = expected.get(i) else { break };
            let code = exp["code"].as_i64().unwrap_or(0);
            if code != 201 && code != 422 {
                continue;
            }
            let mut obj = doc.unwrap().value;
            let index = crd.version_index_for(obj["apiVersion"].as_str().unwrap_or(""));
            let Some(v) = index.map(|i| &crd.versions[i]) else {
                continue;
            };
            let schema = v
                .schema
                .as_ref()
                .map(|s| Props::from_value("s", s).unwrap());
            let got = if crd.preserve_unknown_fields {
                Vec::new()
            } else {
                let structure = schema.as_ref().map(Structure::new);
                prune_object(&mut obj, structure.as_ref(), false)
            };
            let mut want: Vec<String> = exp["pruned"]
                .as_array()
                .map(|l| l.iter().map(|p| p.as_str().unwrap().to_string()).collect())
                .unwrap_or_default();
            want.sort();
            total += 1;
            if got == want {
                same += 1;
            } else {
                differing.push(format!("{id}[{i}]: expected {want:?}, got {got:?}"));
            }
        }
    }
    for d in &differing {
        eprintln!("{d}");
    }
    eprintln!("conformance pruning: {same}/{total} objects identical");
    // The figure README.md quotes.
    assert_eq!((same, total), (2120, 2120), "pruning agreement");
}
