//! What selects what: no Service, PodDisruptionBudget, NetworkPolicy or PodMonitor selects a
//! hook Job's pod, and the alerts read the job label the monitors give.

use super::*;
use serde_json::Value;

/// The pods' labels of a workload (Deployment, Job).
fn pod_labels(o: &Value) -> &serde_json::Map<String, Value> {
    o["spec"]["template"]["metadata"]["labels"]
        .as_object()
        .unwrap_or_else(|| panic!("pod labels of {}", o["metadata"]["name"]))
}

/// Whether a selector's `matchLabels` (or a Service's plain selector) selects these labels.
fn selects(selector: &Value, labels: &serde_json::Map<String, Value>) -> bool {
    let wanted = selector.as_object().unwrap();
    assert!(!wanted.is_empty(), "an empty selector selects everything");
    wanted.iter().all(|(k, v)| labels.get(k) == Some(v))
}

/// No Service, PodDisruptionBudget, NetworkPolicy or PodMonitor selects the pod of a hook Job
/// (the uninstall cleanup, the CRD upgrade); each selects the operator's pods. The Deployment's
/// own selector is what it always was (it cannot change on upgrade).
#[test]
fn no_service_or_budget_selects_a_hook_pod() {
    let Some(helm) = helm() else { return };
    for args in [
        &["--values", "charts/crd-audit/ci/all-features-values.yaml"][..],
        &[
            "--values",
            "charts/crd-audit/ci/renamed-hardened-values.yaml",
        ][..],
        &[
            "--set",
            "podLabels.app\\.kubernetes\\.io/component=operator",
        ][..],
    ] {
        let objs = objects("render", &template(helm, args).unwrap());
        let deployment = objs.iter().find(|o| o["kind"] == "Deployment").unwrap();
        assert_eq!(
            deployment["spec"]["selector"]["matchLabels"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            ["app.kubernetes.io/instance", "app.kubernetes.io/name"],
            "{args:?}: the Deployment's selector changed"
        );
        let jobs: Vec<&Value> = objs.iter().filter(|o| o["kind"] == "Job").collect();
        let names: Vec<&str> = jobs
            .iter()
            .map(|j| j["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(jobs.len(), 2, "{args:?}: {names:?}");
        let selectors: Vec<(String, &Value)> = objs
            .iter()
            .filter_map(|o| {
                let selector = match o["kind"].as_str()? {
                    "Service" => &o["spec"]["selector"],
                    "PodDisruptionBudget" | "PodMonitor" => &o["spec"]["selector"]["matchLabels"],
                    "NetworkPolicy" => &o["spec"]["podSelector"]["matchLabels"],
                    _ => return None,
                };
                Some((
                    format!(
                        "{} {}",
                        o["kind"].as_str()?,
                        o["metadata"]["name"].as_str()?
                    ),
                    selector,
                ))
            })
            .collect();
        // Two Services and the PodDisruptionBudget at least; the NetworkPolicy and the
        // PodMonitor where they are on.
        assert!(selectors.len() >= 3, "{args:?}: {selectors:?}");
        for (what, selector) in &selectors {
            assert!(
                selects(selector, pod_labels(deployment)),
                "{args:?}: {what} does not select the operator's pods"
            );
            for job in &jobs {
                assert!(
                    !selects(selector, pod_labels(job)),
                    "{args:?}: {what} selects the pod of the Job {}",
                    job["metadata"]["name"]
                );
            }
        }
    }
}

/// The alerts read `job="<fullname>-metrics"`: the metrics Service's name (the job label the
/// Prometheus Operator gives a ServiceMonitor's targets) and what the PodMonitor relabels
/// `job` to.
#[test]
fn the_alerts_read_the_job_the_monitors_give() {
    let Some(helm) = helm() else { return };
    for (args, monitor) in [
        (
            &["--values", "charts/crd-audit/ci/all-features-values.yaml"][..],
            "ServiceMonitor",
        ),
        (
            &[
                "--values",
                "charts/crd-audit/ci/renamed-hardened-values.yaml",
            ][..],
            "PodMonitor",
        ),
    ] {
        let objs = objects("render", &template(helm, args).unwrap());
        let kind = |k: &str| objs.iter().find(|o| o["kind"] == k).unwrap();
        let job = match monitor {
            "ServiceMonitor" => {
                let sm = kind("ServiceMonitor");
                let service = objs
                    .iter()
                    .find(|o| {
                        o["kind"] == "Service"
                            && selects(
                                &sm["spec"]["selector"]["matchLabels"],
                                o["metadata"]["labels"].as_object().unwrap(),
                            )
                    })
                    .expect("the Service the ServiceMonitor selects");
                assert_eq!(sm["spec"]["endpoints"][0]["port"], "metrics");
                service["metadata"]["name"].as_str().unwrap().to_string()
            }
            _ => {
                let relabel =
                    &kind("PodMonitor")["spec"]["podMetricsEndpoints"][0]["relabelings"][0];
                assert_eq!(relabel["targetLabel"], "job");
                relabel["replacement"].as_str().unwrap().to_string()
            }
        };
        assert_eq!(
            job,
            format!("{}-metrics", instance_name(&template(helm, args).unwrap()))
        );
        let rule = kind("PrometheusRule");
        let exprs: Vec<&str> = rule["spec"]["groups"][0]["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["expr"].as_str().unwrap())
            .collect();
        let with_job: Vec<&&str> = exprs.iter().filter(|e| e.contains("job=")).collect();
        assert!(with_job.len() >= 2, "{exprs:?}");
        for e in with_job {
            assert!(
                e.contains(&format!("job=\"{job}\"")),
                "{monitor}: {e} reads another job than {job}"
            );
        }
    }
}
