//! The `ValidatingWebhookConfiguration` named `crd-audit`, kept by the leader: CREATE and
//! UPDATE of CRDs go to the gate (`failurePolicy: Ignore`, `sideEffects: None`,
//! `timeoutSeconds: 10`), through the Service `crd-audit` or `gateUrl`, trusting the CA of
//! the certificate the replicas serve. Written by server-side apply whenever the CA bundle
//! changes and every ten minutes (a hand edit is undone); deleted when the gate is off.

use super::tls::{SERVICE, ServingCert};
use crate::audit::config::{Config, GateMode};
use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    RuleWithOperations, ServiceReference, ValidatingWebhook, ValidatingWebhookConfiguration,
    WebhookClientConfig,
};
use kube::api::{Api, DeleteParams, ObjectMeta, Patch, PatchParams};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// The configuration's name (and the webhook's, with a domain, as the API requires).
pub const NAME: &str = "crd-audit";
pub const WEBHOOK: &str = "gate.crd-audit.dev";
/// The path the gate serves.
pub const PATH: &str = "/validate-crd";

/// How often the configuration is written again without a change.
const REAPPLY: Duration = Duration::from_secs(600);
/// How often the served CA is compared with the one written.
const CHECK: Duration = Duration::from_secs(15);
const FIRST_CHECK: Duration = Duration::from_millis(250);

/// The configuration for a CA bundle.
pub fn configuration(
    config: &Config,
    namespace: &str,
    ca_bundle: &[u8],
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
                name: SERVICE.into(),
                namespace: namespace.into(),
                path: Some(PATH.into()),
                port: Some(443),
            }),
        },
    };
    ValidatingWebhookConfiguration {
        metadata: ObjectMeta {
            name: Some(NAME.into()),
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
            failure_policy: Some("Ignore".into()),
            side_effects: "None".into(),
            timeout_seconds: Some(10),
            match_policy: Some("Equivalent".into()),
            rules: Some(vec![RuleWithOperations {
                api_groups: Some(vec!["apiextensions.k8s.io".into()]),
                api_versions: Some(vec!["v1".into()]),
                operations: Some(vec!["CREATE".into(), "UPDATE".into()]),
                resources: Some(vec!["customresourcedefinitions".into()]),
                scope: Some("*".into()),
            }]),
            ..ValidatingWebhook::default()
        }]),
    }
}

/// Keeps the configuration while this replica leads (the caller aborts it when the term
/// ends). With the gate off, deletes a configuration left from an earlier run.
pub async fn keep(client: kube::Client, config: Config, namespace: String, cert: Arc<ServingCert>) {
    let api: Api<ValidatingWebhookConfiguration> = Api::all(client);
    if config.gate == GateMode::Off {
        match api.delete(NAME, &DeleteParams::default()).await {
            Ok(_) => {
                tracing::info!("the gate is off: deleted ValidatingWebhookConfiguration {NAME}")
            }
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            // Without RBAC for it (an install without the gate), nothing to do.
            Err(e) => {
                tracing::debug!(error = %e, "could not delete ValidatingWebhookConfiguration {NAME}")
            }
        }
        return;
    }
    let mut written: Option<(Vec<u8>, tokio::time::Instant)> = None;
    let mut retry =
        crate::cluster::backoff::Backoff::new(Duration::from_secs(1), Duration::from_secs(60))
            .jittered();
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
        let body = configuration(&config, &namespace, &bundle);
        let params = PatchParams::apply("crd-audit").force();
        match api.patch(NAME, &params, &Patch::Apply(&body)).await {
            Ok(_) => {
                if written.is_none() {
                    tracing::info!(name = NAME, mode = ?config.gate, "wrote the gate's ValidatingWebhookConfiguration");
                }
                written = Some((bundle, tokio::time::Instant::now()));
                retry.reset();
            }
            Err(e) => {
                let wait = retry.next_delay();
                tracing::warn!(error = %e, retry_in = ?wait, "could not write ValidatingWebhookConfiguration {NAME}");
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
        let c = configuration(&config, "ops", b"CA");
        let v = serde_json::to_value(&c).unwrap();
        let w = &v["webhooks"][0];
        assert_eq!(w["failurePolicy"], "Ignore");
        assert_eq!(w["sideEffects"], "None");
        assert_eq!(w["timeoutSeconds"], 10);
        assert_eq!(w["clientConfig"]["service"]["namespace"], "ops");
        assert_eq!(w["clientConfig"]["service"]["path"], PATH);
        assert_eq!(w["clientConfig"]["caBundle"], "Q0E=");
        assert_eq!(
            w["rules"][0]["operations"],
            serde_json::json!(["CREATE", "UPDATE"])
        );
        config.gate_url = Some("https://127.0.0.1:9443/validate-crd".into());
        let v = serde_json::to_value(configuration(&config, "ops", b"CA")).unwrap();
        assert_eq!(
            v["webhooks"][0]["clientConfig"]["url"],
            "https://127.0.0.1:9443/validate-crd"
        );
        assert!(v["webhooks"][0]["clientConfig"].get("service").is_none());
    }
}
