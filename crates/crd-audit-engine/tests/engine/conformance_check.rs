//! `crd-audit check` against the outputs of the upstream code in the conformance corpus:
//! the `NonStructuralSchema` violations and the CRD create errors (CEL-originated ones
//! excepted) must be identical multisets of (field, type, message).

use crate::common;

use crd_audit_engine::check_crd;
use crd_audit_engine::crd::Crd;
use serde_json::Value;

/// Whether an expected CRD error comes from CEL (evaluated by another part of the engine).
fn is_cel_error(e: &Value, rule_messages: &[String]) -> bool {
    let field = e["field"].as_str().unwrap_or("");
    let detail = e["detail"].as_str().unwrap_or("");
    let message = e["message"].as_str().unwrap_or("");
    field.contains("x-kubernetes-validations")
        || message.contains("x-kubernetes-validations")
        || rule_messages.iter().any(|m| m == detail)
}

fn rule_messages(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Array(rules)) = m.get("x-kubernetes-validations") {
                for r in rules {
                    if let Some(msg) = r.get("message").and_then(Value::as_str) {
                        out.push(msg.to_string());
                    }
                }
            }
            m.values().for_each(|x| rule_messages(x, out));
        }
        Value::Array(l) => l.iter().for_each(|x| rule_messages(x, out)),
        _ => {}
    }
}

#[test]
fn structural_and_crd_errors_match_upstream() {
    let Some(dir) = common::corpus_dir() else {
        return;
    };
    let (mut total, mut same) = (0, 0);
    let (mut warn_total, mut warn_same) = (0, 0);
    let (mut cel_total, mut cel_msg_same, mut cel_extra, mut cel_ft_cases) = (0, 0, 0, 0);
    let (mut cond_total, mut cond_same) = (0, 0);
    let mut differing = Vec::new();
    for case in common::cases(&dir) {
        let id = case.file_name().unwrap().to_string_lossy().to_string();
        let expected = common::read_json(&case.join("structural.json"));
        let text = std::fs::read_to_string(case.join("crd.yaml")).unwrap();
        let doc = crd_audit_engine::load::parse_str("crd.yaml", &text)
            .into_iter()
            .next()
            .expect("one document")
            .expect("crd.yaml parses");
        let crd = Crd::from_value(&doc.value).expect("a CRD");
        let report = check_crd(&crd, crd_audit_engine::Release::NEWEST);
        let mut messages = Vec::new();
        rule_messages(&doc.value, &mut messages);

        let keys = |list: &Value, skip_cel: bool| -> Vec<common::Key> {
            list.as_array()
                .unwrap()
                .iter()
                .filter(|e| !(skip_cel && is_cel_error(e, &messages)))
                .map(common::key_of)
                .collect()
        };
        let exp_ns = keys(&expected["nonStructural"], false);
        let exp_crd = keys(&expected["crdErrors"], true);
        let ours = |list: &[crd_audit_engine::cause::Cause], skip_cel: bool| -> Vec<common::Key> {
            list.iter()
                .map(|c| c.to_json())
                .filter(|e| !(skip_cel && is_cel_error(e, &messages)))
                .map(|e| common::key_of(&e))
                .collect()
        };
        let all_exp = keys(&expected["crdErrors"], false);
        // CEL errors on their own (compilation, rule fields, estimated costs).
        let exp_cel: Vec<common::Key> = all_exp
            .into_iter()
            .filter(|k| !exp_crd.contains(k))
            .collect();
        let all_got = ours(&report.crd_errors, false);
        let got_non_cel = ours(&report.crd_errors, true);
        let got_cel: Vec<common::Key> = all_got
            .into_iter()
            .filter(|k| !got_non_cel.contains(k))
            .collect();
        let ft = |k: &[common::Key]| {
            let mut v: Vec<(String, String)> =
                k.iter().map(|(f, t, _)| (f.clone(), t.clone())).collect();
            v.sort();
            v
        };
        cel_total += exp_cel.len();
        let (cm, cx) = common::multiset_diff(&exp_cel, &got_cel);
        cel_msg_same += exp_cel.len() - cm.len();
        cel_extra += cx.len();
        if ft(&exp_cel) == ft(&got_cel) {
            cel_ft_cases += 1;
        } else {
            differing.push(format!(
                "{id}: CEL crdErrors (field, type) differ:\n  missing {cm:#?}\n  extra {cx:#?}"
            ));
        }
        let got_ns = ours(&report.non_structural, false);
        let got_crd = ours(&report.crd_errors, true);
        let (m1, x1) = common::multiset_diff(&exp_ns, &got_ns);
        let (m2, x2) = common::multiset_diff(&exp_crd, &got_crd);
        total += 1;
        if m1.is_empty() && x1.is_empty() && m2.is_empty() && x2.is_empty() {
            same += 1;
        } else {
            differing.push(format!(
                "{id}:\n  nonStructural missing {m1:#?}\n  nonStructural extra {x1:#?}\n  crdErrors missing {m2:#?}\n  crdErrors extra {x2:#?}"
            ));
        }
        // The condition message must match too when upstream sets one.
        if let Some(cond) = expected
            .get("nonStructuralCondition")
            .filter(|c| !c.is_null())
        {
            let ours = report
                .condition
                .as_ref()
                .map(|c| c.message.clone())
                .unwrap_or_default();
            cond_total += 1;
            if cond["message"].as_str() == Some(&ours) {
                cond_same += 1;
            } else {
                differing.push(format!(
                    "{id}: condition message differs:\n  {}\n  {ours}",
                    cond["message"]
                ));
            }
        }
        let exp_warn: Vec<String> = expected["warnings"]
            .as_array()
            .map(|l| {
                l.iter()
                    .filter_map(|w| w.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        if expected["code"] == 201 {
            warn_total += 1;
            let mut a = exp_warn.clone();
            let mut b: Vec<String> = report.warnings.iter().map(|w| w.message.clone()).collect();
            a.sort();
            b.sort();
            if a == b {
                warn_same += 1;
            } else {
                differing.push(format!("{id}: warnings differ: expected {a:?}, got {b:?}"));
            }
        }
    }
    for d in &differing {
        eprintln!("{d}");
    }
    let pct = 100.0 * same as f64 / total.max(1) as f64;
    eprintln!(
        "conformance check: {same}/{total} cases identical ({pct:.1}%), warnings {warn_same}/{warn_total}"
    );
    eprintln!(
        "conformance check, CEL crdErrors (field, type) identical in \
         {cel_ft_cases}/{total} cases; messages {cel_msg_same}/{cel_total} identical, {cel_extra} extra"
    );
    eprintln!(
        "conformance check, NonStructuralSchema condition messages: {cond_same}/{cond_total} identical"
    );
    // The figures README.md quotes.
    assert_eq!(total, 159, "corpus size changed: update README.md");
    assert_eq!(same, total, "structural/CRD-error agreement below 100%");
    assert_eq!(
        cel_ft_cases, total,
        "CEL crdErrors (field, type) below 100%"
    );
    assert_eq!(
        (cel_msg_same, cel_total, cel_extra),
        (36, 36, 0),
        "CEL crdError messages"
    );
    assert_eq!((warn_same, warn_total), (134, 134), "warnings");
    assert_eq!(
        cond_same, cond_total,
        "NonStructuralSchema condition messages"
    );
    assert!(
        cond_total > 0,
        "no case has a NonStructuralSchema condition"
    );
}
