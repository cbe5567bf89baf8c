//! The `SchemaAudit` reports: their status built from an audit, written with server-side
//! apply only when it changed, and the Events emitted on condition transitions.

use super::kube::Kube;
use super::metrics::{Metrics, labels};
use super::{Options, Registry, Tracked, lock, log, manifests};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

/// Where Events about CRDs (cluster-scoped objects) go.
pub const EVENTS_NAMESPACE: &str = "default";

/// The current time as a Kubernetes MicroTime.
pub fn now_micro() -> String {
    rfc3339(SystemTime::now(), true)
}

/// The current time as RFC 3339 (seconds).
pub fn now_rfc3339() -> String {
    rfc3339(SystemTime::now(), false)
}

fn rfc3339(t: SystemTime, micros: bool) -> String {
    let d = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // Civil date from days since the epoch.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let base = format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    );
    if micros {
        format!("{base}.{:06}Z", d.subsec_micros())
    } else {
        format!("{base}Z")
    }
}

/// A condition: (type, status, reason, message).
type Cond = (&'static str, &'static str, String, String);

/// The API server's own NonStructuralSchema condition message on the CRD, if it set one.
fn server_condition(t: &Tracked) -> Option<(String, String)> {
    t.crd.conditions.iter().find_map(|c| {
        (c["type"] == "NonStructuralSchema").then(|| {
            (
                c["status"].as_str().unwrap_or("").to_string(),
                c["message"].as_str().unwrap_or("").to_string(),
            )
        })
    })
}

fn conditions(t: &Tracked, audited: bool) -> Vec<Cond> {
    let mut out = Vec::new();
    match &t.check.condition {
        Some(c) if c.status == "True" => out.push((
            "NonStructuralSchema",
            "True",
            "Violations".to_string(),
            c.message.clone(),
        )),
        Some(c) => out.push((
            "NonStructuralSchema",
            "Unknown",
            c.reason.to_string(),
            c.message.clone(),
        )),
        None => out.push((
            "NonStructuralSchema",
            "False",
            "Structural".to_string(),
            "every version's schema is structural".to_string(),
        )),
    }
    // Where the server judged the CRD itself (legacy CRDs), say when it disagrees.
    if let (Some(ours), Some((status, message))) = (out.last_mut(), server_condition(t))
        && status == "True"
        && (ours.1 != "True" || ours.3 != message)
    {
        ours.3 = format!(
            "{} (the API server's own NonStructuralSchema condition differs: {message})",
            ours.3
        );
    }
    let forbidden = lock(&t.forbidden).clone();
    let invalid = lock(&t.audit).invalid_count();
    if let Some(msg) = forbidden {
        out.push(("InstancesValid", "Unknown", "Forbidden".into(), msg));
    } else if !audited {
        out.push((
            "InstancesValid",
            "Unknown",
            "Auditing".into(),
            "audit in progress".into(),
        ));
    } else if invalid == 0 {
        out.push((
            "InstancesValid",
            "True",
            "AllValid".into(),
            "every stored object is valid under its version's schema".into(),
        ));
    } else {
        out.push((
            "InstancesValid",
            "False",
            "InvalidInstances".into(),
            format!("{invalid} invalid object(s)"),
        ));
    }
    match &t.last_change {
        Some(c) if c.tightened => {
            let names: Vec<String> = c
                .changes
                .iter()
                .filter(|x| x.class == crate::diff::Class::Tightening)
                .map(|x| format!("{} {} ({})", x.version, x.path, x.kind))
                .collect();
            out.push((
                "SchemaTightened",
                "True",
                "Tightened".into(),
                format!("generation {} → {}: {}", c.from, c.to, names.join("; ")),
            ));
        }
        _ => out.push((
            "SchemaTightened",
            "False",
            "NotTightened".into(),
            "the last observed schema change did not tighten a served version".into(),
        )),
    }
    let missing = &t.check.stored_versions_not_served;
    if missing.is_empty() {
        out.push((
            "StoredVersionsServed",
            "True",
            "Served".into(),
            "every stored version is served".into(),
        ));
    } else {
        out.push((
            "StoredVersionsServed",
            "False",
            "StoredVersionNotServed".into(),
            format!("stored versions not served: {}", missing.join(", ")),
        ));
    }
    out
}

/// The report's status (without times, which are added when written).
fn status(t: &Tracked, max_listed: usize) -> Value {
    let audited = t.audited.load(Ordering::Relaxed);
    let a = lock(&t.audit);
    let versions: Vec<Value> = t
        .crd
        .versions
        .iter()
        .map(|v| {
            let invalid = a.invalid.values().filter(|i| i.version == v.name).count();
            let structural = !t
                .check
                .non_structural
                .iter()
                .any(|c| c.field.as_str().contains(&format!("versions[{}]", t.crd.versions.iter().position(|x| x.name == v.name).unwrap_or(0))));
            json!({"name": v.name, "served": v.served, "storage": v.storage, "structural": structural,
                "objects": a.objects.get(&v.name).copied().unwrap_or(0),
                "invalidObjects": invalid,
                "objectsWithUnknownFields": a.unknown_fields.get(&v.name).map_or(0, |s| s.len()),
                "unwritableObjects": a.unwritable.get(&v.name).map_or(0, |s| s.len())})
        })
        .collect();
    let listed: Vec<Value> = a
        .invalid
        .iter()
        .take(max_listed)
        .map(|((ns, name), i)| {
            json!({"namespace": ns, "name": name, "version": i.version, "uid": i.uid, "errors": i.errors})
        })
        .collect();
    let mut s = json!({
        "observedGeneration": t.crd.generation,
        "versions": versions,
        "invalidObjects": listed,
        "invalidObjectsTruncated": a.invalid.len() > max_listed,
    });
    drop(a);
    if let Some(c) = &t.last_change {
        s["lastSchemaChange"] = json!({"fromGeneration": c.from, "toGeneration": c.to,
            "changes": c.changes.iter().map(|x| json!({"version": x.version, "path": x.path,
                "class": x.class.as_str(), "reason": x.reason})).collect::<Vec<_>>()});
    }
    if let Some(secs) = *lock(&t.audit_seconds) {
        s["auditDurationSeconds"] = json!(secs);
    }
    s["conditions"] = Value::Array(
        conditions(t, audited)
            .into_iter()
            .map(|(ty, st, reason, message)| {
                json!({"type": ty, "status": st, "reason": reason, "message": message,
                    "observedGeneration": t.crd.generation})
            })
            .collect(),
    );
    s
}

fn report_path(name: &str) -> String {
    format!(
        "/apis/{}/{}/{}/{name}",
        manifests::GROUP,
        manifests::VERSION,
        manifests::PLURAL
    )
}

/// Writes every report whose content changed, once a second, until stopped.
pub fn reporter(
    kube: &Kube,
    registry: &Registry,
    metrics: &Metrics,
    stop: &AtomicBool,
    opts: &Options,
) {
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(500));
        let names: Vec<String> = lock(registry).keys().cloned().collect();
        for name in names {
            let mut reg = lock(registry);
            let Some(t) = reg.get_mut(&name) else {
                continue;
            };
            let st = status(t, opts.config.max_listed_objects);
            publish_metrics(t, metrics);
            if t.written.as_ref() == Some(&st) {
                continue;
            }
            let events = transitions(t, &st, opts);
            // Conditions carry their transition times.
            let mut body = st.clone();
            let now = now_rfc3339();
            if let Some(Value::Array(conds)) = body.get_mut("conditions") {
                for c in conds.iter_mut() {
                    let ty = c["type"].as_str().unwrap_or("").to_string();
                    let status = c["status"].as_str().unwrap_or("").to_string();
                    let time = match t.conditions.get(&ty) {
                        Some((s, time)) if *s == status => time.clone(),
                        _ => now.clone(),
                    };
                    t.conditions.insert(ty, (status, time.clone()));
                    c["lastTransitionTime"] = Value::String(time);
                }
            }
            if t.audited.load(Ordering::Relaxed) {
                body["lastAuditTime"] = Value::String(now.clone());
            }
            let crd_ref = (t.crd.name.clone(), t.crd.uid.clone());
            let owner = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "name": crd_ref.0, "uid": crd_ref.1, "controller": true, "blockOwnerDeletion": false});
            let mut object = json!({"apiVersion": format!("{}/{}", manifests::GROUP, manifests::VERSION),
                "kind": "SchemaAudit", "metadata": {"name": name, "ownerReferences": [owner]}});
            if let Some(rev) = audited_revision(t) {
                object["spec"] = json!({"auditedRevision": rev});
            }
            let mut with_status = object.clone();
            with_status["status"] = body;
            let path = report_path(&name);
            let r = kube
                .apply(&path, &object, "crd-audit")
                .and_then(|_| kube.apply(&format!("{path}/status"), &with_status, "crd-audit"));
            match r {
                Ok(_) => t.written = Some(st),
                Err(e) => {
                    metrics.add(
                        "crd_audit_api_errors_total",
                        labels(&[("verb", "patch")]),
                        1.0,
                    );
                    log(
                        "error",
                        "writing report failed",
                        &[("crd", &name), ("error", &e.to_string())],
                    );
                    continue;
                }
            }
            drop(reg);
            if opts.config.emit_events {
                for (kind, reason, note) in events {
                    let regarding = json!({"apiVersion": "apiextensions.k8s.io/v1",
                        "kind": "CustomResourceDefinition", "name": crd_ref.0, "uid": crd_ref.1});
                    emit(
                        kube,
                        &opts.identity,
                        EVENTS_NAMESPACE,
                        &regarding,
                        kind,
                        reason,
                        &note,
                        metrics,
                    );
                }
            }
        }
    }
}

/// The largest audited revision kept in a report (bigger CRDs are not kept).
const MAX_REVISION_BYTES: usize = 256 << 10;

/// The audited revision of the CRD (what a restarted operator diffs the next change against).
fn audited_revision(t: &Tracked) -> Option<Value> {
    let versions: Vec<Value> = t
        .crd
        .versions
        .iter()
        .map(|v| {
            json!({"name": v.name, "served": v.served, "storage": v.storage,
                "schema": v.schema.as_ref().map(|s| json!({"openAPIV3Schema": s}))})
        })
        .collect();
    let rev = json!({"generation": t.crd.generation, "scope": match t.crd.scope {
            crate::crd::Scope::Namespaced => "Namespaced",
            crate::crd::Scope::Cluster => "Cluster",
        }, "versions": versions});
    (rev.to_string().len() <= MAX_REVISION_BYTES).then_some(rev)
}

/// The CRD revision a report recorded, as a CRD (for diffing).
pub fn recorded_revision(crd: &crate::crd::Crd, report: &Value) -> Option<crate::crd::Crd> {
    let rev = report.get("spec")?.get("auditedRevision")?;
    let versions: Vec<Value> = rev["versions"]
        .as_array()?
        .iter()
        .map(|v| {
            let mut v = v.clone();
            if v["schema"].is_null() {
                v.as_object_mut()?.remove("schema");
            }
            Some(v)
        })
        .collect::<Option<_>>()?;
    let doc = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": crd.name, "generation": rev["generation"]},
        "spec": {"group": crd.group, "scope": rev["scope"],
            "names": {"kind": crd.kind, "plural": crd.plural}, "versions": versions}});
    crate::crd::Crd::from_value(&doc).ok()
}

fn publish_metrics(t: &Tracked, metrics: &Metrics) {
    let a = lock(&t.audit);
    for v in &t.crd.versions {
        let l = labels(&[("crd", &t.crd.name), ("version", &v.name)]);
        metrics.set(
            "crd_audit_objects",
            l.clone(),
            a.objects.get(&v.name).copied().unwrap_or(0) as f64,
        );
        let invalid = a.invalid.values().filter(|i| i.version == v.name).count();
        metrics.set("crd_audit_invalid_objects", l, invalid as f64);
    }
    let nonstructural = t
        .crd
        .versions
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            t.check
                .non_structural
                .iter()
                .any(|c| c.field.as_str().contains(&format!("versions[{i}]")))
        })
        .count();
    metrics.set(
        "crd_audit_nonstructural_versions",
        labels(&[("crd", &t.crd.name)]),
        nonstructural as f64,
    );
}

/// The Events of the transitions between the last written status and this one.
fn transitions(
    t: &mut Tracked,
    st: &Value,
    _opts: &Options,
) -> Vec<(&'static str, &'static str, String)> {
    let cond = |s: &Value, ty: &str| -> Option<(String, String)> {
        s["conditions"]
            .as_array()?
            .iter()
            .find(|c| c["type"] == ty)
            .map(|c| {
                (
                    c["status"].as_str().unwrap_or("").to_string(),
                    c["message"].as_str().unwrap_or("").to_string(),
                )
            })
    };
    let before = t.written.clone().unwrap_or(Value::Null);
    let changed = |ty: &str| cond(&before, ty).map(|c| c.0) != cond(st, ty).map(|c| c.0);
    let mut out = Vec::new();
    if changed("NonStructuralSchema")
        && cond(st, "NonStructuralSchema").is_some_and(|c| c.0 == "True")
    {
        out.push((
            "Warning",
            "NonStructuralSchema",
            cond(st, "NonStructuralSchema")
                .map(|c| c.1)
                .unwrap_or_default(),
        ));
    }
    if changed("StoredVersionsServed")
        && cond(st, "StoredVersionsServed").is_some_and(|c| c.0 == "False")
    {
        out.push((
            "Warning",
            "StoredVersionNotServed",
            cond(st, "StoredVersionsServed")
                .map(|c| c.1)
                .unwrap_or_default(),
        ));
    }
    let audited = t.audited.load(Ordering::Relaxed);
    if t.tightened_event_pending && audited {
        t.tightened_event_pending = false;
        let now = lock(&t.audit).invalid_count();
        let before = t.last_change.as_ref().map_or(0, |c| c.invalid_before);
        let msg = cond(st, "SchemaTightened").map(|c| c.1).unwrap_or_default();
        out.push((
            "Warning",
            "SchemaTightened",
            format!(
                "{} object(s) newly invalid; {msg}",
                now.saturating_sub(before)
            ),
        ));
    }
    let valid_now = cond(st, "InstancesValid").is_some_and(|c| c.0 == "True");
    let valid_before = cond(&before, "InstancesValid").is_some_and(|c| c.0 == "True");
    let was_invalid = cond(&before, "InstancesValid").is_some_and(|c| c.0 == "False");
    if valid_now && !valid_before && was_invalid {
        out.push((
            "Normal",
            "SchemaAuditClean",
            "every stored object is valid again".into(),
        ));
    }
    out
}

/// Emits an Event about `regarding` (an object reference) in `namespace`.
#[allow(clippy::too_many_arguments)]
pub fn emit(
    kube: &Kube,
    identity: &str,
    namespace: &str,
    regarding: &Value,
    kind: &str,
    reason: &str,
    note: &str,
    metrics: &Metrics,
) {
    let note: String = note.chars().take(1000).collect();
    let event = json!({
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"generateName": "crd-audit-", "namespace": namespace},
        "eventTime": rfc3339(SystemTime::now(), true),
        "reportingController": "crd-audit",
        "reportingInstance": identity,
        "action": "Audit",
        "reason": reason,
        "type": kind,
        "note": note,
        "regarding": regarding,
    });
    let path = format!("/apis/events.k8s.io/v1/namespaces/{namespace}/events");
    let mut result = kube.create(&path, &event);
    if matches!(&result, Err(e) if e.status == 422) {
        // Older servers refuse events.k8s.io/v1 Events about cluster-scoped objects; the
        // core/v1 form is accepted there.
        let now = rfc3339(SystemTime::now(), false);
        let core = json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"generateName": "crd-audit-", "namespace": namespace},
            "involvedObject": regarding,
            "reason": reason, "message": note, "type": kind,
            "source": {"component": "crd-audit"},
            "reportingComponent": "crd-audit", "reportingInstance": identity,
            "action": "Audit", "firstTimestamp": now, "lastTimestamp": now, "count": 1,
        });
        result = kube.create(&format!("/api/v1/namespaces/{namespace}/events"), &core);
    }
    if let Err(e) = result {
        metrics.add(
            "crd_audit_api_errors_total",
            labels(&[("verb", "create")]),
            1.0,
        );
        log(
            "error",
            "emitting event failed",
            &[("reason", reason), ("error", &e.to_string())],
        );
    }
}

/// Keeps the map type in use for callers that group reports.
pub type Reports = BTreeMap<String, Value>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_render_as_rfc3339() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(rfc3339(t, false), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339(t, true), "2023-11-14T22:13:20.000000Z");
    }
}
