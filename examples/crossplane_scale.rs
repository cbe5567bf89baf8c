//! Scale test of the operator with Crossplane-shaped CRDs (not run in CI), on the standalone
//! apiextensions-apiserver 1.36 (`tests/testenv/apiext-up.sh`; REST only: that server serves
//! no core API, so kubectl cannot discover it):
//!
//!   python3 scripts/crossplane-crds.py 2000 target/crossplane 5
//!   KUBECONFIG=$(tests/testenv/apiext-up.sh) \
//!     cargo run --release --example crossplane_scale -- target/crossplane
//!
//! Creates every CRD of DIR/crds and every object of DIR/objects (skipping what exists, so a
//! second run reuses the server), applies the report CRD, starts the release
//! `crd-audit controller` (or `$CRD_AUDIT_BIN`) and reports its peak RSS (VmHWM), the time
//! until every CRD's report is written with a complete audit, the time until the first report
//! of a CRD with findings is written, and how many CRD revisions it compiled. One CRD's
//! objects are made invalid first (its stored objects are patched past a tightened maximum
//! by tightening the CRD after they are stored), so that a report with findings exists.
//! Then, once the operator has written nothing for 10 s, it measures the CPU the operator
//! uses over 60 s with nothing changing. Last, it starts the operator again (every report in
//! place) and reports its peak RSS until it is ready.
//! Goals: peak RSS at most 136 MiB (the operator's redesign was to cost no memory); after a
//! restart, with every report in place, a peak no higher than this run's first start; every
//! report within 5 minutes; and at rest at most 0.2 % of one core (issue "Crossplane-scale
//! clusters"). It exits 1 when one is missed.

use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[path = "operator_run/mod.rs"]
mod operator_run;
use operator_run::{condition, cpu_at_rest, metrics, proc_status, report_api, start_operator};

fn documents(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    crd_audit_engine::load::parse_str(&path.display().to_string(), &text)
        .into_iter()
        .map(|d| {
            d.unwrap_or_else(|e| panic!("{}: {}", e.source_name, e.message))
                .value
        })
        .filter(|v| !v.is_null())
        .collect()
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    out.sort();
    out
}

/// The resource of an object, and whether its CRD is namespaced.
fn resource_of(obj: &Value, crds: &[Value]) -> Option<(ApiResource, bool)> {
    let kind = obj["kind"].as_str()?;
    let (group, version) = obj["apiVersion"].as_str()?.rsplit_once('/')?;
    let crd = crds
        .iter()
        .find(|c| c["spec"]["group"] == group && c["spec"]["names"]["kind"] == kind)?;
    let gvk = GroupVersionKind::gvk(group, version, kind);
    let resource =
        ApiResource::from_gvk_with_plural(&gvk, crd["spec"]["names"]["plural"].as_str()?);
    Some((resource, crd["spec"]["scope"] == "Namespaced"))
}

#[tokio::main]
async fn main() {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .expect("usage: crossplane_scale DIR"),
    );
    let client = kube::Client::try_default().await.expect("KUBECONFIG");
    let crd_ar = crd_audit::cluster::resources::crd_resource();
    let crd_api: Api<DynamicObject> = Api::all_with(client.clone(), &crd_ar);
    let report_crd: Value =
        serde_json::from_str(&crd_audit::audit::schema_audit::crd_manifest()).unwrap();
    let started = Instant::now();
    crd_api
        .patch(
            "schemaaudits.crd-audit.dev",
            &PatchParams::apply("scale").force(),
            &Patch::Apply(&report_crd),
        )
        .await
        .unwrap();
    // The CRDs: created unless there (one file at a time; the server is slow on big ones).
    let existing: std::collections::HashSet<String> = {
        let mut names = std::collections::HashSet::new();
        let mut lp = ListParams::default().limit(50);
        loop {
            let page = crd_api.list_metadata(&lp).await.unwrap();
            names.extend(page.items.into_iter().filter_map(|m| m.metadata.name));
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                Some(c) => lp = lp.continue_token(&c),
                None => break,
            }
        }
        names
    };
    let crd_files = files(&dir.join("crds"));
    let mut crds: Vec<Value> = Vec::new();
    let mut yaml_bytes = 0u64;
    for f in &crd_files {
        yaml_bytes += std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
        for mut doc in documents(f) {
            let name = doc["metadata"]["name"].as_str().unwrap_or("").to_string();
            if !existing.contains(&name) {
                let obj: DynamicObject = serde_json::from_value(doc.clone()).unwrap();
                crd_api
                    .create(&PostParams::default(), &obj)
                    .await
                    .unwrap_or_else(|e| {
                        panic!("creating CRD {name}: {e}");
                    });
            }
            // What the objects need of it: group, kind, plural.
            if let Some(spec) = doc.get_mut("spec").and_then(Value::as_object_mut) {
                spec.remove("versions");
            }
            crds.push(doc);
        }
    }
    println!(
        "{} CRDs ({:.0} MiB of YAML) in place after {:?}",
        crds.len(),
        yaml_bytes as f64 / (1 << 20) as f64,
        started.elapsed()
    );
    // The objects (the server serves a new CRD's resource a moment after it is created).
    let objects: Vec<Value> = match std::fs::metadata(dir.join("objects")) {
        Ok(_) => files(&dir.join("objects"))
            .iter()
            .flat_map(|f| documents(f))
            .collect(),
        Err(_) => Vec::new(),
    };
    let total_objects = objects.len();
    let created = std::sync::atomic::AtomicUsize::new(0);
    let unserved = std::sync::atomic::AtomicUsize::new(0);
    futures::stream::iter(objects)
        .for_each_concurrent(8, |obj| {
            let (client, crds, created, unserved) = (client.clone(), &crds, &created, &unserved);
            async move {
                let Some((ar, namespaced)) = resource_of(&obj, crds) else {
                    unserved.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    return;
                };
                let api: Api<DynamicObject> = if namespaced {
                    let ns = obj["metadata"]["namespace"].as_str().unwrap_or("default");
                    Api::namespaced_with(client, ns, &ar)
                } else {
                    Api::all_with(client, &ar)
                };
                let o: DynamicObject = serde_json::from_value(obj).unwrap();
                for attempt in 0..60 {
                    match api.create(&PostParams::default(), &o).await {
                        Ok(_) => {
                            created.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            return;
                        }
                        // There already (a second run; the tightened CRD's objects are
                        // refused before the name is checked).
                        Err(kube::Error::Api(s)) if s.code == 409 || s.code == 422 => return,
                        Err(kube::Error::Api(s)) if s.code == 404 && attempt < 59 => {
                            tokio::time::sleep(Duration::from_millis(500)).await
                        }
                        // A version the CRD does not serve (real providers' examples).
                        Err(kube::Error::Api(s)) if s.code == 404 => {
                            unserved.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            return;
                        }
                        Err(e) => panic!("creating {:?}: {e}", o.metadata.name),
                    }
                }
            }
        })
        .await;
    println!(
        "{total_objects} objects in place ({} created, {} of no served resource) after {:?}",
        created.load(std::sync::atomic::Ordering::Relaxed),
        unserved.load(std::sync::atomic::Ordering::Relaxed),
        started.elapsed()
    );
    // One CRD with findings: its objects are invalid once its maximum is lowered below
    // every number they hold. The CRD's objects say `zoneId: 1.5` style numbers; a new
    // root CEL rule refusing every object does it whatever the schema.
    let tightened = crds
        .first()
        .and_then(|c| c["metadata"]["name"].as_str())
        .unwrap()
        .to_string();
    let mut full = documents(&crd_files[0]).remove(0);
    for v in full["spec"]["versions"].as_array_mut().unwrap() {
        v["schema"]["openAPIV3Schema"]["x-kubernetes-validations"] = json!([{"rule": "self.metadata.name.startsWith('never-')", "message": "tightened by the scale test"}]);
    }
    let current = crd_api.get(&tightened).await.unwrap();
    full["metadata"]["resourceVersion"] = json!(current.metadata.resource_version);
    let obj: DynamicObject = serde_json::from_value(full).unwrap();
    crd_api
        .replace(&tightened, &PostParams::default(), &obj)
        .await
        .unwrap();
    // No report from an earlier run: every report is written by this run's operator.
    let reports = report_api(&client);
    reports
        .delete_collection(&Default::default(), &ListParams::default())
        .await
        .unwrap();
    while !reports
        .list_metadata(&ListParams::default().limit(1))
        .await
        .unwrap()
        .items
        .is_empty()
    {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    // The operator.
    let port = 18098;
    let mut child = start_operator(port);
    let t0 = Instant::now();
    let mut first_finding: Option<Duration> = None;
    let all_reports = loop {
        let mut done = 0;
        let mut lp = ListParams::default().limit(500);
        loop {
            let Ok(page) = reports.list(&lp).await else {
                break;
            };
            for r in &page.items {
                match condition(r, "InstancesValid").as_deref() {
                    Some("True") => done += 1,
                    Some("False") => {
                        done += 1;
                        first_finding.get_or_insert(t0.elapsed());
                    }
                    _ => {}
                }
            }
            match page.metadata.continue_.filter(|c| !c.is_empty()) {
                Some(c) => lp = lp.continue_token(&c),
                None => break,
            }
        }
        if done >= crds.len() {
            break Some(t0.elapsed());
        }
        if t0.elapsed() > Duration::from_secs(900) || child.try_wait().ok().flatten().is_some() {
            println!("{done} of {} reports complete", crds.len());
            break None;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    let metrics = metrics(port);
    let metric = |name: &str| {
        metrics
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().last())
            .unwrap_or("?")
            .to_string()
    };
    // At rest: once nothing has been written for 10 s, the CPU of the next 60 s.
    let at_rest = match all_reports {
        Some(_) => Some(
            cpu_at_rest(
                child.id(),
                port,
                Duration::from_secs(10),
                Duration::from_secs(60),
            )
            .await,
        ),
        None => None,
    };
    let rss = proc_status(child.id(), "VmHWM:");
    let now = proc_status(child.id(), "VmRSS:");
    let _ = child.kill();
    let _ = child.wait();
    // A restart: the reports are there (an earlier operator's, read with one LIST).
    let mut child = start_operator(port);
    let t1 = Instant::now();
    let restarted = loop {
        let ready = std::process::Command::new("curl")
            .args(["-s", &format!("http://127.0.0.1:{port}/readyz")])
            .output()
            .is_ok_and(|o| o.stdout.starts_with(b"ok"));
        if ready {
            break Some(t1.elapsed());
        }
        if t1.elapsed() > Duration::from_secs(900) || child.try_wait().ok().flatten().is_some() {
            break None;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    let restart_rss = proc_status(child.id(), "VmHWM:");
    let _ = child.kill();
    let _ = child.wait();
    println!(
        "restarted with every report in place: ready after {restarted:?}, peak RSS {:.1} MiB",
        restart_rss as f64 / 1024.0
    );
    println!(
        "peak RSS {:.1} MiB (at the end {:.1} MiB); every report complete after {:?}; first report with findings after {:?}; CRD revisions compiled {}; objects judged {}; CPU at rest {}",
        rss as f64 / 1024.0,
        now as f64 / 1024.0,
        all_reports,
        first_finding,
        metric("crd_audit_validator_compilations_total"),
        metric("crd_audit_validations_total"),
        at_rest.map_or("not measured".to_string(), |c| format!(
            "{:.3} % of a core over 60 s",
            c * 100.0
        )),
    );
    let mut missed = Vec::new();
    if rss > 136 * 1024 {
        missed.push(format!("peak RSS {:.1} MiB > 136 MiB", rss as f64 / 1024.0));
    }
    if restart_rss > rss {
        missed.push(format!(
            "peak RSS after a restart {:.1} MiB > the first start's {:.1} MiB",
            restart_rss as f64 / 1024.0,
            rss as f64 / 1024.0
        ));
    }
    if all_reports.is_none_or(|d| d > Duration::from_secs(300)) {
        missed.push(format!("reports complete after {all_reports:?} > 5 min"));
    }
    if at_rest.is_some_and(|c| c > 0.002) {
        missed.push(format!(
            "CPU at rest {:.3} % of a core > 0.2 %",
            at_rest.unwrap_or_default() * 100.0
        ));
    }
    if !missed.is_empty() {
        eprintln!("goals missed: {}", missed.join("; "));
        std::process::exit(1);
    }
}
