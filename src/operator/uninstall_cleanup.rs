//! `crd-audit uninstall-cleanup`: removes what the operator wrote into the cluster outside its
//! own manifests, so that an uninstall leaves nothing behind. The chart runs it as a
//! pre-delete hook with the operator's ServiceAccount.
//!
//! First it takes the operator's Lease (as a replica would take an expired one) and holds it
//! for an hour: the leader sees the Lease taken at its next renewal and stops acting, and no
//! replica acts again before the uninstall removes them. The held Lease's owner is the
//! operator's ConfigMap, so garbage collection deletes it once the uninstall has removed the
//! release, and an install right after elects a leader at once. Then it removes, in this order:
//! the `crd-audit.dev/violations` annotations on every CRD's objects, the policy reports named
//! `crd-audit` with its label, the SchemaAudit reports, the gate's webhook configuration and
//! its self-managed Secret. The Lease, the configuration and the Secret are the instance's
//! (`--name`: `crd-audit`, `crd-audit`, `crd-audit-gate-tls` by default). What it may not read or change is said, and the exit
//! code is 1; nothing else stops it.

use crate::audit::instance_names::InstanceNames;
use crate::audit::judge::ANNOTATION;
use crate::audit::schema_audit::SchemaAudit;
use crate::cluster::client::{ClusterArgs, cli_runtime, connect, describe, status_code};
use crate::cluster::resources::crd_resource;
use crate::operator::command::InstanceArgs;
use crate::operator::leadership::lease::{RENEW_DEADLINE, RETRY, leases_served};
use crate::operator::reports::policy::{MANAGED_BY, POLICY, REPORT_NAME, ReportApi};
use crate::program::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR};
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, OwnerReference};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams,
};
use serde_json::{Value, json};
use std::time::Duration;

/// The identity that holds the Lease while (and after) the cleanup runs.
pub const HOLDER: &str = "crd-audit-uninstall-cleanup";
/// How long the cleanup's hold on the Lease lasts: longer than any uninstall.
const HOLD: Duration = Duration::from_secs(3600);

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub instance: InstanceArgs,
    /// The operator's namespace: its Lease and the gate's Secret (default: the pod's
    /// namespace, else `crd-audit`).
    #[arg(long)]
    pub namespace: Option<String>,
    /// Say what would be removed, and change nothing (the Lease is not taken).
    #[arg(long)]
    pub dry_run: bool,
}

/// What one run removed, and what it could not.
#[derive(Debug, Default)]
struct Tally {
    annotations: usize,
    policy_reports: usize,
    schema_audits: usize,
    others: Vec<String>,
    /// CRDs whose objects it may not list: it could not have marked them either.
    unreadable: Vec<String>,
    problems: Vec<String>,
}

pub fn run(args: &Args) -> u8 {
    let runtime = match cli_runtime() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_INPUT_ERROR;
        }
    };
    runtime.block_on(async {
        let client = match connect(args.cluster.kubeconfig.as_deref(), args.cluster.context.as_deref()).await {
            Ok((c, _)) => c,
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_INPUT_ERROR;
            }
        };
        let namespace = args.namespace.clone().unwrap_or_else(|| {
            std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "crd-audit".into())
        });
        let mut tally = Tally::default();
        let verb = if args.dry_run {
            "would remove"
        } else {
            "removed"
        };
        let names = &args.instance.name;
        if !args.dry_run {
            hold_the_lease(&client, names.lease(), &namespace, &mut tally).await;
        }
        remove_annotations(&client, args.dry_run, &mut tally).await;
        remove_policy_reports(&client, args.dry_run, &mut tally).await;
        remove_schema_audits(&client, args.dry_run, &mut tally).await;
        remove_gate_objects(&client, names, &namespace, args.dry_run, &mut tally).await;
        println!(
            "crd-audit uninstall-cleanup: {verb} {} crd-audit.dev/violations annotation(s), {} policy report(s), {} SchemaAudit(s){}",
            tally.annotations,
            tally.policy_reports,
            tally.schema_audits,
            tally
                .others
                .iter()
                .map(|o| format!(", {o}"))
                .collect::<String>()
        );
        if !tally.unreadable.is_empty() {
            println!(
                "skipped the objects of {} CRD(s) it may not read (so it could not have marked them): {}",
                tally.unreadable.len(),
                tally.unreadable.join(", ")
            );
        }
        for p in &tally.problems {
            eprintln!("error: {p}");
        }
        if tally.problems.is_empty() {
            EXIT_CLEAN
        } else {
            EXIT_FINDINGS
        }
    })
}

fn now() -> MicroTime {
    MicroTime(k8s_openapi::jiff::Timestamp::now())
}

/// Takes the operator's Lease (`lease`) for an hour, then waits until a leader that held it
/// has had time to see that and stop acting (its renew deadline, and one retry).
/// The owner the held Lease is given: the operator's ConfigMap (named as the Lease), which
/// the uninstall removes after this hook. Garbage collection then deletes the Lease, so that an
/// install after the uninstall finds no Lease held and elects a leader at once. `None` when
/// there is no such ConfigMap or it may not be read: the Lease is then only held for `HOLD`.
async fn lease_owner(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Option<Vec<OwnerReference>> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let cm = api.get_opt(name).await.ok()??;
    Some(vec![OwnerReference {
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        name: name.into(),
        uid: cm.metadata.uid?,
        ..Default::default()
    }])
}

async fn hold_the_lease(
    client: &kube::Client,
    lease_name: &str,
    namespace: &str,
    tally: &mut Tally,
) {
    match leases_served(client).await {
        Ok(true) => {}
        Ok(false) => return,
        Err(e) => {
            tally
                .problems
                .push(format!("reading the Lease API: {}", describe(&e)));
            return;
        }
    }
    let api: Api<Lease> = Api::namespaced(client.clone(), namespace);
    let owners = lease_owner(client, namespace, lease_name).await;
    if owners.is_none() {
        println!(
            "the Lease {namespace}/{lease_name} stays held for an hour: there is no ConfigMap \
             {namespace}/{lease_name} to hand it to (delete the Lease to install again sooner)"
        );
    }
    let spec = LeaseSpec {
        holder_identity: Some(HOLDER.into()),
        lease_duration_seconds: Some(HOLD.as_secs() as i32),
        acquire_time: Some(now()),
        renew_time: Some(now()),
        ..Default::default()
    };
    for _ in 0..5 {
        let written = match api.get_opt(lease_name).await {
            Ok(Some(mut lease)) => {
                let held_by_a_replica = lease
                    .spec
                    .as_ref()
                    .and_then(|s| s.holder_identity.as_deref())
                    .is_some_and(|h| !h.is_empty() && h != HOLDER);
                let transitions = lease
                    .spec
                    .as_ref()
                    .and_then(|s| s.lease_transitions)
                    .unwrap_or(0);
                lease.spec = Some(LeaseSpec {
                    lease_transitions: Some(transitions + 1),
                    ..spec.clone()
                });
                lease.metadata.owner_references = owners.clone();
                api.replace(lease_name, &PostParams::default(), &lease)
                    .await
                    .map(|_| held_by_a_replica)
            }
            Ok(None) => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(lease_name.into()),
                        namespace: Some(namespace.into()),
                        owner_references: owners.clone(),
                        ..Default::default()
                    },
                    spec: Some(spec.clone()),
                };
                api.create(&PostParams::default(), &lease)
                    .await
                    .map(|_| false)
            }
            Err(e) => Err(e),
        };
        match written {
            Ok(true) => {
                tokio::time::sleep(RENEW_DEADLINE + RETRY).await;
                return;
            }
            Ok(false) => return,
            Err(e) if status_code(&e) == Some(409) => continue,
            Err(e) if status_code(&e) == Some(404) => return, // no namespace: no operator
            Err(e) => {
                tally.problems.push(format!(
                    "taking the Lease {namespace}/{lease_name} (so that the operator stops writing): {}",
                    describe(&e)
                ));
                return;
            }
        }
    }
    tally.problems.push(format!(
        "taking the Lease {namespace}/{lease_name}: it kept changing"
    ));
}

/// The resource through which a CRD's objects are read: its storage version (else the first
/// served one).
fn served_resource(crd: &Value) -> Option<(ApiResource, bool)> {
    let spec = &crd["spec"];
    let versions = spec["versions"].as_array()?;
    let version = versions
        .iter()
        .find(|v| v["storage"] == true && v["served"] == true)
        .or_else(|| versions.iter().find(|v| v["served"] == true))?["name"]
        .as_str()?;
    let group = spec["group"].as_str()?;
    Some((
        ApiResource {
            group: group.into(),
            version: version.into(),
            api_version: format!("{group}/{version}"),
            kind: spec["names"]["kind"].as_str()?.into(),
            plural: spec["names"]["plural"].as_str()?.into(),
        },
        spec["scope"] == "Namespaced",
    ))
}

/// Every CRD, read a few at a time (a CRD can be megabytes).
async fn each_crd(client: &kube::Client, tally: &mut Tally) -> Vec<(ApiResource, bool)> {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &crd_resource());
    let mut out = Vec::new();
    let mut lp = ListParams::default().limit(20);
    loop {
        match api.list(&lp).await {
            Ok(page) => {
                for crd in page.items {
                    let value = serde_json::to_value(&crd).unwrap_or(Value::Null);
                    if let Some(r) = served_resource(&value) {
                        out.push(r);
                    }
                }
                match page.metadata.continue_.filter(|c| !c.is_empty()) {
                    Some(c) => lp = lp.continue_token(&c),
                    None => return out,
                }
            }
            Err(e) => {
                tally
                    .problems
                    .push(format!("listing the CRDs: {}", describe(&e)));
                return out;
            }
        }
    }
}

/// Removes the annotation from every object of every CRD that carries it (a JSON merge patch
/// of the annotation to null: whoever wrote it, it goes).
async fn remove_annotations(client: &kube::Client, dry_run: bool, tally: &mut Tally) {
    for (resource, namespaced) in each_crd(client, tally).await {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        let what = format!("{}.{}", resource.plural, resource.group);
        let mut lp = ListParams::default().limit(500);
        loop {
            let page = match api.list_metadata(&lp).await {
                Ok(p) => p,
                Err(e) if status_code(&e) == Some(403) => {
                    tally.unreadable.push(what.clone());
                    break;
                }
                Err(e) => {
                    tally.problems.push(format!(
                        "listing {what} to remove its {ANNOTATION} annotations: {}",
                        describe(&e)
                    ));
                    break;
                }
            };
            for obj in &page.items {
                let marked = obj
                    .metadata
                    .annotations
                    .as_ref()
                    .is_some_and(|a| a.contains_key(ANNOTATION));
                let Some(name) = obj.metadata.name.as_deref().filter(|_| marked) else {
                    continue;
                };
                let ns = obj.metadata.namespace.as_deref().unwrap_or_default();
                if dry_run {
                    tally.annotations += 1;
                    continue;
                }
                let target: Api<DynamicObject> = if namespaced {
                    Api::namespaced_with(client.clone(), ns, &resource)
                } else {
                    Api::all_with(client.clone(), &resource)
                };
                let patch = json!({"metadata": {"annotations": {ANNOTATION: null}}});
                match target
                    .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                {
                    Ok(_) => tally.annotations += 1,
                    Err(e) if status_code(&e) == Some(404) => {}
                    Err(e) => tally.problems.push(format!(
                        "removing {ANNOTATION} from {what} {}: {}",
                        if ns.is_empty() {
                            name.to_string()
                        } else {
                            format!("{ns}/{name}")
                        },
                        describe(&e)
                    )),
                }
            }
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                Some(c) => lp = lp.continue_token(&c),
                None => break,
            }
        }
    }
}

/// Deletes the policy reports crd-audit wrote (named `crd-audit`, with its managed-by label),
/// of both report APIs, where they are served.
async fn remove_policy_reports(client: &kube::Client, dry_run: bool, tally: &mut Tally) {
    for api in [ReportApi::OpenReports, ReportApi::WgPolicy] {
        for placement in ["namespaced", ""] {
            let resource = ApiResource {
                group: api.group().into(),
                version: api.version().into(),
                api_version: api.api_version(),
                kind: api.kind(placement).into(),
                plural: api.plural(placement).into(),
            };
            let all: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
            let lp = ListParams::default()
                .labels(&format!("{MANAGED_BY}={POLICY}"))
                .fields(&format!("metadata.name={REPORT_NAME}"));
            let listed = match all.list_metadata(&lp).await {
                Ok(l) => l,
                Err(e) if status_code(&e) == Some(404) => continue, // not installed
                Err(e) => {
                    tally.problems.push(format!(
                        "listing {}.{}: {}",
                        resource.plural,
                        resource.group,
                        describe(&e)
                    ));
                    continue;
                }
            };
            for report in listed.items {
                let ns = report.metadata.namespace.clone().unwrap_or_default();
                if dry_run {
                    tally.policy_reports += 1;
                    continue;
                }
                let one: Api<DynamicObject> = if ns.is_empty() {
                    Api::all_with(client.clone(), &resource)
                } else {
                    Api::namespaced_with(client.clone(), &ns, &resource)
                };
                match one.delete(REPORT_NAME, &DeleteParams::default()).await {
                    Ok(_) => tally.policy_reports += 1,
                    Err(e) if status_code(&e) == Some(404) => {}
                    Err(e) => tally.problems.push(format!(
                        "deleting the {} {ns}/{REPORT_NAME}: {}",
                        resource.kind,
                        describe(&e)
                    )),
                }
            }
        }
    }
}

async fn remove_schema_audits(client: &kube::Client, dry_run: bool, tally: &mut Tally) {
    let api: Api<SchemaAudit> = Api::all(client.clone());
    let mut lp = ListParams::default().limit(500);
    loop {
        let page = match api.list_metadata(&lp).await {
            Ok(p) => p,
            Err(e) if status_code(&e) == Some(404) => return, // the report CRD is gone
            Err(e) => {
                tally
                    .problems
                    .push(format!("listing the SchemaAudits: {}", describe(&e)));
                return;
            }
        };
        for report in &page.items {
            let Some(name) = report.metadata.name.as_deref() else {
                continue;
            };
            if dry_run {
                tally.schema_audits += 1;
                continue;
            }
            match api.delete(name, &DeleteParams::default()).await {
                Ok(_) => tally.schema_audits += 1,
                Err(e) if status_code(&e) == Some(404) => {}
                Err(e) => tally
                    .problems
                    .push(format!("deleting the SchemaAudit {name}: {}", describe(&e))),
            }
        }
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(c) => lp = lp.continue_token(&c),
            None => return,
        }
    }
}

/// The gate's webhook configuration (the leader writes it; the chart does not know it) and
/// its self-managed Secret.
async fn remove_gate_objects(
    client: &kube::Client,
    names: &InstanceNames,
    namespace: &str,
    dry_run: bool,
    tally: &mut Tally,
) {
    let configuration_name = names.webhook_configuration();
    let secret_name = names.secret();
    let secret_name = secret_name.as_str();
    let vwc: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let secret: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let found = [
        (
            vwc.get_metadata_opt(configuration_name)
                .await
                .map(|o| o.is_some()),
            format!("the ValidatingWebhookConfiguration {configuration_name}"),
        ),
        (
            secret
                .get_metadata_opt(secret_name)
                .await
                .map(|o| o.is_some()),
            format!("the Secret {namespace}/{secret_name}"),
        ),
    ];
    for (i, (present, what)) in found.into_iter().enumerate() {
        match present {
            Ok(false) => continue,
            // Not granted: the gate never ran with this RBAC (or never self-managed).
            Err(e) if matches!(status_code(&e), Some(403 | 404)) => continue,
            Err(e) => {
                tally
                    .problems
                    .push(format!("reading {what}: {}", describe(&e)));
                continue;
            }
            Ok(true) => {}
        }
        if dry_run {
            tally.others.push(what);
            continue;
        }
        let deleted = if i == 0 {
            vwc.delete(configuration_name, &DeleteParams::default())
                .await
                .map(|_| ())
        } else {
            secret
                .delete(secret_name, &DeleteParams::default())
                .await
                .map(|_| ())
        };
        match deleted {
            Ok(()) => tally.others.push(what),
            Err(e) if status_code(&e) == Some(404) => {}
            Err(e) => tally
                .problems
                .push(format!("deleting {what}: {}", describe(&e))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_read_at_the_storage_version_else_a_served_one() {
        let crd = json!({"spec": {"group": "example.com", "scope": "Namespaced",
        "names": {"kind": "Widget", "plural": "widgets"},
        "versions": [
            {"name": "v1", "served": true, "storage": false},
            {"name": "v2", "served": true, "storage": true},
        ]}});
        let (r, namespaced) = served_resource(&crd).unwrap();
        assert_eq!(
            (r.api_version.as_str(), namespaced),
            ("example.com/v2", true)
        );
        let mut unserved_storage = crd.clone();
        unserved_storage["spec"]["versions"][1]["served"] = json!(false);
        unserved_storage["spec"]["scope"] = json!("Cluster");
        let (r, namespaced) = served_resource(&unserved_storage).unwrap();
        assert_eq!(
            (r.api_version.as_str(), namespaced),
            ("example.com/v1", false)
        );
        let mut none_served = unserved_storage.clone();
        none_served["spec"]["versions"][0]["served"] = json!(false);
        assert!(served_resource(&none_served).is_none());
        assert!(served_resource(&json!({"spec": "garbage"})).is_none());
    }

    /// The Lease taken and the gate's objects removed are those of the instance's name
    /// (`--name`, the chart's fullname): another instance's are left alone.
    #[tokio::test]
    async fn the_cleanup_finds_the_instances_objects_by_its_name() {
        use http::{Request, Response};
        use kube::client::Body;
        use std::sync::{Arc, Mutex};
        let (svc, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let log = seen.clone();
        let leases: Arc<Mutex<Vec<Value>>> = Arc::default();
        let created = leases.clone();
        tokio::spawn(async move {
            while let Some((req, send)) = handle.next_request().await {
                let (parts, body) = req.into_parts();
                let bytes = body.collect_bytes().await.unwrap_or_default();
                let path = parts.uri.path().to_string();
                log.lock().unwrap().push(format!("{} {path}", parts.method));
                let ok = |v: Value| {
                    Response::builder()
                        .status(200)
                        .header("content-type", "application/json")
                        .body(Body::from(serde_json::to_vec(&v).unwrap()))
                        .unwrap()
                };
                let response = match (parts.method.as_str(), path.as_str()) {
                    ("GET", "/apis/coordination.k8s.io/v1") => ok(json!({
                        "kind": "APIResourceList", "apiVersion": "v1",
                        "groupVersion": "coordination.k8s.io/v1",
                        "resources": [{"name": "leases", "singularName": "lease",
                            "namespaced": true, "kind": "Lease", "verbs": ["get", "create"]}]})),
                    ("POST", "/apis/coordination.k8s.io/v1/namespaces/ops/leases") => {
                        created
                            .lock()
                            .unwrap()
                            .push(serde_json::from_slice(&bytes).unwrap());
                        ok(serde_json::from_slice(&bytes).unwrap())
                    }
                    ("GET", "/api/v1/namespaces/ops/configmaps/audit-x") => ok(json!({
                        "apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "audit-x", "namespace": "ops", "uid": "cm-uid"}})),
                    (
                        "GET",
                        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/audit-x"
                        | "/api/v1/namespaces/ops/secrets/audit-x-gate-tls",
                    ) => ok(json!({"apiVersion": "meta.k8s.io/v1",
                        "kind": "PartialObjectMetadata", "metadata": {"name": "x"}})),
                    ("DELETE", _) => ok(json!({"kind": "Status", "apiVersion": "v1",
                        "status": "Success"})),
                    _ => Response::builder()
                        .status(404)
                        .header("content-type", "application/json")
                        .body(Body::from(
                            serde_json::to_vec(&json!({"kind": "Status", "apiVersion": "v1",
                                "status": "Failure", "reason": "NotFound", "code": 404,
                                "message": "not found"}))
                            .unwrap(),
                        ))
                        .unwrap(),
                };
                send.send_response(response);
            }
        });
        let client = kube::Client::new(svc, "default");
        let names: InstanceNames = "audit-x".parse().unwrap();
        let mut tally = Tally::default();
        hold_the_lease(&client, names.lease(), "ops", &mut tally).await;
        remove_gate_objects(&client, &names, "ops", false, &mut tally).await;
        assert!(tally.problems.is_empty(), "{:?}", tally.problems);
        assert_eq!(
            tally.others,
            [
                "the ValidatingWebhookConfiguration audit-x",
                "the Secret ops/audit-x-gate-tls"
            ]
        );
        let seen = seen.lock().unwrap();
        assert!(
            seen.contains(
                &"DELETE /apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/audit-x"
                    .to_string()
            ),
            "{seen:?}"
        );
        assert!(
            seen.contains(&"DELETE /api/v1/namespaces/ops/secrets/audit-x-gate-tls".to_string()),
            "{seen:?}"
        );
        assert!(
            seen.contains(
                &"GET /apis/coordination.k8s.io/v1/namespaces/ops/leases/audit-x".to_string()
            ),
            "{seen:?}"
        );
        assert!(
            !seen
                .iter()
                .any(|r| r.ends_with("/crd-audit") || r.ends_with("crd-audit-gate-tls"))
        );
        // The Lease goes with the release: its owner is the instance's ConfigMap.
        let leases = leases.lock().unwrap();
        assert_eq!(
            leases[0]["metadata"]["ownerReferences"],
            json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "audit-x", "uid": "cm-uid"}]),
            "{leases:?}"
        );
    }
}
