//! The `ValidatingWebhookConfiguration` named after the instance (`crd-audit` by default),
//! kept by the leader: UPDATEs of CRDs go to the gate, the one operation it judges (a CRD
//! being created has no stored objects: the server deletes a CRD's objects before the CRD
//! goes, and serves none before it is created) (`sideEffects: None`;
//! `failurePolicy`, `timeoutSeconds`, `objectSelector` and `matchConditions` from the
//! configuration: `Ignore` and 10 s by default), through the instance's Service or
//! `gateUrl`, trusting the CA of the certificate the replicas serve. Written by server-side
//! apply whenever the CA bundle changes and every ten minutes (a hand edit is undone);
//! deleted when the gate is off.

use super::tls::ServingCert;
use crate::audit::config::{Config, GateMode, LabelSelector};
use crate::audit::instance_names::InstanceNames;
use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MatchCondition, RuleWithOperations, ServiceReference, ValidatingWebhook,
    ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use kube::api::{Api, DeleteParams, ObjectMeta, Patch, PatchParams};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// The webhook's name in the configuration (a name with a domain, as the API requires).
pub const WEBHOOK: &str = "gate.crd-audit.dev";

/// The first release whose API servers serve a webhook's `matchConditions` by default (beta
/// in 1.28, GA in 1.30; alpha behind a feature gate in 1.27). Older servers drop the field,
/// and the gate would then see every request.
pub const MATCH_CONDITIONS_SINCE: u32 = 28;

/// The path the gate serves.
pub const PATH: &str = "/validate-crd";

/// How often the configuration is written again without a change.
const REAPPLY: Duration = Duration::from_secs(600);
/// How often the served CA is compared with the one written.
const CHECK: Duration = Duration::from_secs(15);
const FIRST_CHECK: Duration = Duration::from_millis(250);

/// A label selector as the API takes it.
fn label_selector(s: &LabelSelector) -> meta::LabelSelector {
    meta::LabelSelector {
        match_labels: (!s.match_labels.is_empty()).then(|| s.match_labels.clone()),
        match_expressions: (!s.match_expressions.is_empty()).then(|| {
            s.match_expressions
                .iter()
                .map(|r| meta::LabelSelectorRequirement {
                    key: r.key.clone(),
                    operator: r.operator.as_str().to_string(),
                    values: (!r.values.is_empty()).then(|| r.values.clone()),
                })
                .collect()
        }),
    }
}

/// The configuration for a CA bundle, for an API server of release 1.`server_minor` (which
/// decides whether `matchConditions` are written).
pub fn configuration(
    config: &Config,
    names: &InstanceNames,
    namespace: &str,
    ca_bundle: &[u8],
    server_minor: u32,
) -> ValidatingWebhookConfiguration {
    let client_config = match &config.gate_url {
        Some(url) => WebhookClientConfig {
            url: Some(url.clone()),
            ca_bundle: Some(ByteString(ca_bundle.to_vec())),
            service: None,
        },
        None => WebhookClientConfig {
            url: None,
            ca_bundle: Some(ByteString(ca_bundle.to_vec())),
            service: Some(ServiceReference {
                name: names.service().into(),
                namespace: namespace.into(),
                path: Some(PATH.into()),
                port: Some(443),
            }),
        },
    };
    let match_conditions = (!config.gate_match_conditions.is_empty()
        && server_minor >= MATCH_CONDITIONS_SINCE)
        .then(|| {
            config
                .gate_match_conditions
                .iter()
                .map(|c| MatchCondition {
                    name: c.name.clone(),
                    expression: c.expression.clone(),
                })
                .collect()
        });
    ValidatingWebhookConfiguration {
        metadata: ObjectMeta {
            name: Some(names.webhook_configuration().into()),
            labels: Some(BTreeMap::from([(
                "app.kubernetes.io/name".to_string(),
                "crd-audit".to_string(),
            )])),
            ..ObjectMeta::default()
        },
        webhooks: Some(vec![ValidatingWebhook {
            name: WEBHOOK.into(),
            admission_review_versions: vec!["v1".into()],
            client_config,
            failure_policy: Some(config.gate_failure_policy.as_str().into()),
            side_effects: "None".into(),
            timeout_seconds: Some(config.gate_timeout_seconds as i32),
            match_policy: Some("Equivalent".into()),
            object_selector: config.gate_object_selector.as_ref().map(label_selector),
            match_conditions,
            rules: Some(vec![RuleWithOperations {
                api_groups: Some(vec!["apiextensions.k8s.io".into()]),
                api_versions: Some(vec!["v1".into()]),
                operations: Some(vec!["UPDATE".into()]),
                resources: Some(vec!["customresourcedefinitions".into()]),
                scope: Some("*".into()),
            }]),
            ..ValidatingWebhook::default()
        }]),
    }
}

/// What the leader does about the webhook configuration when the gate is off: delete one
/// left from an earlier run. An install without the gate is not granted that (the chart
/// grants webhook configurations only while the gate is on): a 403 is said once, at info
/// level, with what to do if one was left. Returns what it logged, for the tests.
pub async fn delete_leftover(
    api: &Api<ValidatingWebhookConfiguration>,
    name: &str,
) -> &'static str {
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => {
            tracing::info!("the gate is off: deleted ValidatingWebhookConfiguration {name}");
            "deleted"
        }
        Err(kube::Error::Api(s)) if s.code == 404 => "absent",
        Err(kube::Error::Api(s)) if s.code == 403 => {
            tracing::info!(
                "the gate is off and this ServiceAccount may not delete webhook configurations \
                 (the chart grants that only while the gate is on); if a run with the gate on \
                 left ValidatingWebhookConfiguration {name}, delete it: kubectl delete \
                 validatingwebhookconfiguration {name}"
            );
            "forbidden"
        }
        Err(e) => {
            tracing::warn!(error = %e, "could not delete ValidatingWebhookConfiguration {name}");
            "failed"
        }
    }
}

/// Keeps the configuration while this replica leads (the caller aborts it when the term
/// ends), for an API server of release 1.`server_minor`. With the gate off, deletes a
/// configuration left from an earlier run. Its writes go within `writes` (the operator's
/// write budget, first in line).
pub async fn keep(
    client: kube::Client,
    config: Config,
    names: InstanceNames,
    namespace: String,
    cert: Arc<ServingCert>,
    server_minor: u32,
    writes: crate::cluster::write_budget::Writes,
) {
    let api: Api<ValidatingWebhookConfiguration> = Api::all(client);
    let name = names.webhook_configuration().to_string();
    if config.gate == GateMode::Off {
        writes.turn().await;
        delete_leftover(&api, &name).await;
        return;
    }
    if !config.gate_match_conditions.is_empty() && server_minor < MATCH_CONDITIONS_SINCE {
        tracing::warn!(
            kubernetes = %format!("1.{server_minor}"),
            "gateMatchConditions left out of ValidatingWebhookConfiguration {name}: API servers \
             serve matchConditions from 1.{MATCH_CONDITIONS_SINCE} (1.27 only behind a feature \
             gate); every CRD change within the other selectors goes to the gate"
        );
    }
    let mut written: Option<(Vec<u8>, tokio::time::Instant)> = None;
    let mut retry = crate::cluster::backoff::API_CALL.backoff().jittered();
    loop {
        let bundle = cert.ca_bundle();
        let due = !bundle.is_empty()
            && written
                .as_ref()
                .is_none_or(|(b, at)| *b != bundle || at.elapsed() >= REAPPLY);
        if !due {
            // Before the first certificate, look again soon.
            tokio::time::sleep(if bundle.is_empty() {
                FIRST_CHECK
            } else {
                CHECK
            })
            .await;
            continue;
        }
        let body = configuration(&config, &names, &namespace, &bundle, server_minor);
        let params = PatchParams::apply("crd-audit").force();
        writes.turn().await;
        match api.patch(&name, &params, &Patch::Apply(&body)).await {
            Ok(_) => {
                if written.is_none() {
                    tracing::info!(name = %name, mode = ?config.gate, "wrote the gate's ValidatingWebhookConfiguration");
                }
                written = Some((bundle, tokio::time::Instant::now()));
                retry.reset();
            }
            Err(e) => {
                let wait = retry.next_delay();
                tracing::warn!(error = %e, retry_in = ?wait, "could not write ValidatingWebhookConfiguration {name}");
                tokio::time::sleep(wait).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configuration_names_the_service_or_the_url() {
        let mut config = Config::default();
        let names = InstanceNames::default();
        let c = configuration(&config, &names, "ops", b"CA", 33);
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["metadata"]["name"], "crd-audit");
        let w = &v["webhooks"][0];
        assert_eq!(w["failurePolicy"], "Ignore");
        assert_eq!(w["sideEffects"], "None");
        assert_eq!(w["timeoutSeconds"], 10);
        assert!(w.get("objectSelector").is_none(), "{w}");
        assert!(w.get("matchConditions").is_none(), "{w}");
        assert_eq!(w["clientConfig"]["service"]["name"], "crd-audit");
        assert_eq!(w["clientConfig"]["service"]["namespace"], "ops");
        assert_eq!(w["clientConfig"]["service"]["path"], PATH);
        assert_eq!(w["clientConfig"]["caBundle"], "Q0E=");
        assert_eq!(w["rules"][0]["operations"], serde_json::json!(["UPDATE"]));
        config.gate_url = Some("https://127.0.0.1:9443/validate-crd".into());
        let v = serde_json::to_value(configuration(&config, &names, "ops", b"CA", 33)).unwrap();
        assert_eq!(
            v["webhooks"][0]["clientConfig"]["url"],
            "https://127.0.0.1:9443/validate-crd"
        );
        assert!(v["webhooks"][0]["clientConfig"].get("service").is_none());
    }

    #[test]
    fn the_configuration_takes_the_instance_name_and_the_webhook_settings() {
        let config = Config::parse(
            "c.yaml",
            "gate: deny\ngateTimeoutSeconds: 25\ngateBudget: 20s\ngateFailurePolicy: Fail\n\
             gateObjectSelector: {matchLabels: {team: a}, matchExpressions: [{key: tier, operator: In, values: [prod]}]}\n\
             gateMatchConditions: [{name: not-flux, expression: \"request.userInfo.username != 'flux'\"}]\n",
        )
        .unwrap();
        let names: InstanceNames = "audit-x".parse().unwrap();
        let v = serde_json::to_value(configuration(&config, &names, "ops", b"CA", 28)).unwrap();
        assert_eq!(v["metadata"]["name"], "audit-x");
        let w = &v["webhooks"][0];
        assert_eq!(w["clientConfig"]["service"]["name"], "audit-x");
        assert_eq!(w["failurePolicy"], "Fail");
        assert_eq!(w["timeoutSeconds"], 25);
        assert_eq!(
            w["objectSelector"],
            serde_json::json!({"matchLabels": {"team": "a"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["prod"]}]})
        );
        assert_eq!(
            w["matchConditions"],
            serde_json::json!([{"name": "not-flux",
                "expression": "request.userInfo.username != 'flux'"}])
        );
        // A server older than 1.28 does not serve matchConditions: they are left out, the
        // rest stays.
        let old = serde_json::to_value(configuration(&config, &names, "ops", b"CA", 27)).unwrap();
        let w = &old["webhooks"][0];
        assert!(w.get("matchConditions").is_none(), "{w}");
        assert_eq!(w["failurePolicy"], "Fail");
        assert_eq!(w["objectSelector"]["matchLabels"]["team"], "a");
    }

    /// A client whose every request is answered with `code` (a Status for errors), counting
    /// the DELETEs of the named configuration.
    fn answering(code: u16) -> (kube::Client, Arc<std::sync::atomic::AtomicUsize>) {
        let (svc, mut handle) = tower_test::mock::pair::<
            http::Request<kube::client::Body>,
            http::Response<kube::client::Body>,
        >();
        let deletes = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = deletes.clone();
        tokio::spawn(async move {
            while let Some((req, send)) = handle.next_request().await {
                if req.method() == http::Method::DELETE
                    && req.uri().path()
                        == "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/audit-x"
                {
                    seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                let _ = req.into_body().collect_bytes().await;
                let body = if code == 200 {
                    serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Success"})
                } else {
                    serde_json::json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                        "message": "no", "reason": "Forbidden", "code": code})
                };
                let response = http::Response::builder()
                    .status(code)
                    .header("content-type", "application/json")
                    .body(kube::client::Body::from(serde_json::to_vec(&body).unwrap()))
                    .unwrap();
                send.send_response(response);
            }
        });
        (kube::Client::new(svc, "default"), deletes)
    }

    /// With the gate off the leader deletes a leftover configuration of its own name, and a
    /// 403 (the chart grants webhook configurations only while the gate is on) or a 404 ends
    /// it quietly: `keep` returns at once, it never retries.
    #[tokio::test]
    async fn with_the_gate_off_a_leftover_is_deleted_and_a_403_tolerated() {
        let names: InstanceNames = "audit-x".parse().unwrap();
        for (code, outcome) in [(200, "deleted"), (404, "absent"), (403, "forbidden")] {
            let (client, deletes) = answering(code);
            let api: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
            assert_eq!(delete_leftover(&api, "audit-x").await, outcome, "{code}");
            let kept = tokio::time::timeout(
                Duration::from_secs(5),
                keep(
                    client,
                    Config::default(),
                    names.clone(),
                    "ops".into(),
                    ServingCert::new(),
                    33,
                    crate::cluster::write_budget::Writes::paced(
                        0.0,
                        crate::cluster::write_budget::Priority::WebhookConfiguration,
                    ),
                ),
            )
            .await;
            assert!(
                kept.is_ok(),
                "{code}: keep did not return with the gate off"
            );
            assert_eq!(
                deletes.load(std::sync::atomic::Ordering::SeqCst),
                2,
                "{code}"
            );
        }
    }
}
