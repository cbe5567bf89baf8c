//! Conversion round trips by the operator (`auditConversions: true`) on kube-apiserver 1.20,
//! through the tests' conversion webhook reached by URL: the report's `ConversionsLossless`
//! names what is lost (and `Ready` says so), one `ConversionFindings` Event, the metric
//! `crd_audit_conversion_findings`; a new generation is checked again at once; the webhook
//! down makes every object `ConversionFailed` while the operator stays healthy; once the
//! objects are sound and the webhook back, the condition is `True`; with the CRD gone, so are
//! its series.

use super::*;
use crate::support::conversion_webhook::{ConversionWebhook, crontabs_crd};
use std::time::Duration;

fn conversions(r: &Value) -> Option<(String, String, String)> {
    status_reason_message(r, "ConversionsLossless")
}

fn status_reason_message(r: &Value, ty: &str) -> Option<(String, String, String)> {
    r["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == ty)
        .map(|c| {
            (
                c["status"].as_str().unwrap_or("").to_string(),
                c["reason"].as_str().unwrap_or("").to_string(),
                c["message"].as_str().unwrap_or("").to_string(),
            )
        })
}

#[test]
fn the_leader_round_trips_the_stored_objects_and_reports_what_is_lost() {
    let Some(s) = Scenario::shared("conversions") else {
        return;
    };
    install(&s);
    let admin = s.admin();
    let webhook = ConversionWebhook::start();
    let crd = format!("crontabs.{}", s.group);
    let revision = |note: Option<&str>| {
        let mut c = crontabs_crd(&s.group, &webhook.url, &webhook.ca);
        if let Some(n) = note {
            c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
                [n] = json!({"type": "string"});
        }
        c
    };
    apply(admin, &revision(None));
    apply(
        admin,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": s.namespace}}),
    );
    let collection = format!("/apis/{}/v2/namespaces/{}/crontabs", s.group, s.namespace);
    wait_for("crontabs to be served", || admin.get(&collection).ok());
    for (name, flaw, spec) in [
        ("a", "", json!({"priority": 1})),
        ("b", "drop", json!({"priority": 2})),
        ("c", "case", json!({"color": "Red"})),
    ] {
        let mut o = json!({"apiVersion": format!("{}/v2", s.group), "kind": "CronTab",
            "metadata": {"name": name, "namespace": s.namespace}, "spec": spec});
        if !flaw.is_empty() {
            o["metadata"]["labels"] = json!({"flaw": flaw});
        }
        admin.create(&collection, &o).unwrap();
    }
    let admin_kc = s.env.kubeconfig.display().to_string();
    let config = s.config(
        "conversions.yaml",
        "auditConversions: true\napiQps: 200\napiBurst: 50\n",
    );
    let c = s.controller(
        "conversions",
        &["--kubeconfig", &admin_kc, "--config", &config],
    );

    // What is lost, named; Ready says so; one Event; the metric.
    let r = wait_for_at_most("LossyConversion", Duration::from_secs(60), &mut || {
        report(admin, &crd)
            .ok()
            .filter(|r| conversions(r).is_some_and(|c| c.1 == "LossyConversion"))
    });
    let (status, _, message) = conversions(&r).unwrap();
    assert_eq!(status, "False");
    let ns = &s.namespace;
    assert!(
        message.starts_with("of 3 stored object(s), 2 lose data in a round trip: ")
            && message.contains(&format!("lossy {ns}/b v2→v1→v2: spec.priority lost"))
            && message.contains(&format!("lossy {ns}/c v2→v1→v2: spec.color changed")),
        "{message}"
    );
    let ready = status_reason_message(&r, "Ready").unwrap();
    assert_eq!(
        (ready.0.as_str(), ready.1.as_str()),
        ("False", "LossyConversion")
    );
    let events = wait_for("a ConversionFindings Event", || {
        let e = s.events("ConversionFindings");
        (!e.is_empty()).then_some(e)
    });
    assert_eq!(events.len(), 1, "{events:#?}");
    assert!(
        note(&events[0]).contains("2 lose data"),
        "{}",
        note(&events[0])
    );
    let series = |finding: &str| {
        format!("crd_audit_conversion_findings{{crd=\"{crd}\",finding=\"{finding}\"}}")
    };
    let text = c.scrape().unwrap();
    assert_eq!(
        (
            metric(&text, &series("lossy")),
            metric(&text, &series("invalid")),
            metric(&text, &series("failed"))
        ),
        (Some(2.0), Some(0.0), Some(0.0)),
        "{text}"
    );

    // The webhook down, and a new generation: checked again at once, every object fails to
    // convert, and the operator stays healthy.
    webhook
        .down
        .store(true, std::sync::atomic::Ordering::Relaxed);
    apply(admin, &revision(Some("note")));
    let r = wait_for_at_most("ConversionFailed", Duration::from_secs(60), &mut || {
        report(admin, &crd)
            .ok()
            .filter(|r| conversions(r).is_some_and(|c| c.1 == "ConversionFailed"))
    });
    let message = conversions(&r).unwrap().2;
    assert!(
        message.starts_with("of 3 stored object(s), 3 fail to convert"),
        "{message}"
    );
    assert_eq!(
        http_get(&c.metrics, "/healthz").as_deref().map(str::trim),
        Some("ok")
    );
    let text = c.scrape().unwrap();
    assert_eq!(metric(&text, &series("failed")), Some(3.0), "{text}");

    // Sound objects, the webhook back, and another generation: lossless.
    webhook
        .down
        .store(false, std::sync::atomic::Ordering::Relaxed);
    for name in ["b", "c"] {
        admin
            .send_patch_merge(
                &format!("{collection}/{name}"),
                &json!({"metadata": {"labels": {"flaw": null}}}),
            )
            .unwrap();
    }
    apply(admin, &revision(Some("other")));
    let r = wait_for_at_most("Lossless", Duration::from_secs(60), &mut || {
        report(admin, &crd)
            .ok()
            .filter(|r| conversions(r).is_some_and(|c| c.1 == "Lossless"))
    });
    assert_eq!(conversions(&r).unwrap().0, "True");
    assert_eq!(status_reason_message(&r, "Ready").unwrap().0, "True");

    // The CRD gone: so are its series.
    admin
        .delete(&format!(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"
        ))
        .unwrap();
    wait_for("the conversion series to go", || {
        let text = c.scrape()?;
        metric(&text, &series("lossy")).is_none().then_some(())
    });
    assert!(error_lines(&c.log_text()).is_empty(), "{}", c.log_text());
}
