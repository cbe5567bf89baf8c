//! An in-process fake of the few API server routes the controller uses, on kube's
//! `tower-test` mock service, so that the operator's decisions can be tested without a
//! server. The watches of CRDs and of reports stream what the fake's state goes through
//! (a CRD put or deleted with [`put_crd`] and [`delete_crd`], a report written or deleted);
//! other watches are left pending (nothing changes unless a test says so); LISTs answer from
//! the fake's state; writes can be made to fail.

use bytes::Bytes;
use http::{Request, Response};
use http_body::Frame;
use http_body_util::{BodyExt, Full, StreamBody, combinators::UnsyncBoxBody};
use kube::client::Body;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

#[derive(Default)]
pub struct State {
    /// Reports by name (metadata, spec and status as last applied).
    pub reports: BTreeMap<String, Value>,
    /// Objects by resource plural.
    pub objects: BTreeMap<String, Vec<Value>>,
    pub fail_writes: bool,
    pub fail_events: bool,
    /// Report writes tried (successful or not).
    pub report_writes: usize,
    /// The statuses written, in order, with the report's name.
    pub status_writes: Vec<(String, Value)>,
    /// GETs of one report, and LISTs of the whole reports (not of their metadata).
    pub report_gets: usize,
    pub report_lists: usize,
    /// LISTs of the whole reports fail (500).
    pub fail_report_lists: bool,
    pub events: Vec<Value>,
    /// The Lease, and whether Lease requests fail (an API outage).
    pub lease: Option<Value>,
    pub fail_leases: bool,
    /// PolicyReports and ClusterPolicyReports by (namespace, name); `""` for cluster-scoped.
    pub policy_reports: BTreeMap<(String, String), Value>,
    /// The wgpolicyk8s.io CRDs are not installed (every request is a 404).
    pub policy_crds_missing: bool,
    /// Writes to wgpolicyk8s.io are refused (403).
    pub policy_forbidden: bool,
    /// Namespaces that do not exist (a PolicyReport applied there is a 404).
    pub missing_namespaces: Vec<String>,
    pub policy_lists: usize,
    /// Writes (apply or delete) of PolicyReports tried.
    pub policy_writes: usize,
    /// OpenReports (openreports.io/v1alpha1): whether its CRDs are installed (a 404 for every
    /// request otherwise), its Reports and ClusterReports by (namespace, name), and its LISTs
    /// and writes. Writes to it are refused (403) with `policy_forbidden` too.
    pub openreports_installed: bool,
    pub open_reports: BTreeMap<(String, String), Value>,
    pub open_lists: usize,
    pub open_writes: usize,
    /// CRDs by name, as [`put_crd`] left them.
    pub crds: BTreeMap<String, Value>,
    /// GETs of one CRD.
    pub crd_gets: usize,
    pub resource_version: u64,
    pub watchers: Vec<Watcher>,
    /// Every watch asked for: its path and query.
    pub watches: Vec<(String, String)>,
    /// LISTs of a CRD's objects (whole, or streamed on a watch), by resource plural.
    pub object_lists: BTreeMap<String, usize>,
}

pub type Shared = Arc<Mutex<State>>;

/// The body of a fake response: whole, or the lines of a watch as they happen.
type FakeBody = UnsyncBoxBody<Bytes, std::convert::Infallible>;

fn whole(bytes: Vec<u8>) -> FakeBody {
    Full::new(Bytes::from(bytes)).boxed_unsync()
}

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const REPORTS: &str = "/apis/crd-audit.dev/v1alpha1/schemaaudits";

/// What a watch of CRDs or of reports is sent: the lines of its events.
pub struct Watcher {
    collection: &'static str,
    lines: mpsc::UnboundedSender<Bytes>,
}

/// Sends a watch event of `collection` to its watches (those that ended are dropped).
fn broadcast(st: &mut State, collection: &str, kind: &str, object: &Value) {
    let mut line = serde_json::to_vec(&json!({"type": kind, "object": object})).unwrap();
    line.push(b'\n');
    let line = Bytes::from(line);
    st.watchers
        .retain(|w| w.collection != collection || w.lines.send(line.clone()).is_ok());
}

/// The next resourceVersion of the fake.
fn next_version(st: &mut State) -> String {
    st.resource_version += 1;
    st.resource_version.to_string()
}

/// Creates or changes a CRD (its `resourceVersion` is the fake's next one; its uid and
/// generation are the caller's); its watches see it.
pub fn put_crd(fake: &Shared, mut crd: Value) {
    let mut st = fake.lock().unwrap();
    crd["metadata"]["resourceVersion"] = json!(next_version(&mut st));
    let name = crd["metadata"]["name"].as_str().unwrap().to_string();
    let kind = if st.crds.contains_key(&name) {
        "MODIFIED"
    } else {
        "ADDED"
    };
    broadcast(&mut st, CRDS, kind, &crd);
    st.crds.insert(name, crd);
}

/// Deletes a CRD; its watches see it go.
pub fn delete_crd(fake: &Shared, name: &str) {
    let mut st = fake.lock().unwrap();
    if let Some(mut crd) = st.crds.remove(name) {
        crd["metadata"]["resourceVersion"] = json!(next_version(&mut st));
        broadcast(&mut st, CRDS, "DELETED", &crd);
    }
}

/// Deletes a report behind the operator's back (as the report CRD's finalizer does); its
/// watches see it go.
pub fn delete_report(fake: &Shared, name: &str) {
    let mut st = fake.lock().unwrap();
    if let Some(r) = st.reports.remove(name) {
        broadcast(&mut st, REPORTS, "DELETED", &r);
    }
}

fn status(code: u16, reason: &str, message: &str) -> Response<FakeBody> {
    let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code});
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(whole(serde_json::to_vec(&body).unwrap()))
        .unwrap()
}

fn ok(v: &Value) -> Response<FakeBody> {
    Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .body(whole(serde_json::to_vec(v).unwrap()))
        .unwrap()
}

/// The answer to a watch with `sendInitialEvents=true`, from the answer to the LIST: an
/// `ADDED` event per item, then the bookmark that marks the end of the initial events (or
/// the LIST's error, as the status of the response).
async fn initial_events(list: Response<FakeBody>) -> Response<FakeBody> {
    if !list.status().is_success() {
        return list;
    }
    let bytes = list
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let list: Value = serde_json::from_slice(&bytes).unwrap_or_default();
    let mut lines = Vec::new();
    for item in list["items"].as_array().into_iter().flatten() {
        serde_json::to_writer(&mut lines, &json!({"type": "ADDED", "object": item})).unwrap();
        lines.push(b'\n');
    }
    let kind = list["kind"].as_str().unwrap_or("List");
    let bookmark = json!({"type": "BOOKMARK", "object": {
        "apiVersion": list["apiVersion"].as_str().unwrap_or("v1"),
        "kind": kind.strip_suffix("List").unwrap_or(kind),
        "metadata": {
            "resourceVersion": list["metadata"]["resourceVersion"].as_str().unwrap_or("1"),
            "annotations": {"k8s.io/initial-events-end": "true"},
        },
    }});
    serde_json::to_writer(&mut lines, &bookmark).unwrap();
    lines.push(b'\n');
    Response::builder().status(200).body(whole(lines)).unwrap()
}

/// The answer to a watch of `collection`: its events from now on, as they happen.
fn live_watch(state: &Shared, collection: &'static str) -> Response<FakeBody> {
    let (lines, rx) = mpsc::unbounded_channel();
    state
        .lock()
        .unwrap()
        .watchers
        .push(Watcher { collection, lines });
    let frames = futures::stream::unfold(rx, |mut rx| async move {
        let line = rx.recv().await?;
        Some((Ok(Frame::data(line)), rx))
    });
    Response::builder()
        .status(200)
        .body(StreamBody::new(frames).boxed_unsync())
        .unwrap()
}

/// The parts of a leadership term on a client of the fake, with the default configuration.
pub fn term(client: kube::Client) -> crate::operator::leadership::term::Parts {
    term_with(client, crate::audit::config::Config::default())
}

/// The parts of a leadership term on a client of the fake, with `config`.
pub fn term_with(
    client: kube::Client,
    config: crate::audit::config::Config,
) -> crate::operator::leadership::term::Parts {
    crate::operator::leadership::term::Parts::new(
        client,
        None,
        &config,
        Arc::new(crate::operator::metrics::Metrics::new()),
        "test",
        crate::judging_pool::JudgingPool::new(2),
    )
}

/// What an object audit is handed, on a client of the fake.
pub fn audit_handle(client: kube::Client) -> crate::operator::audits::objects::AuditHandle {
    let config = crate::audit::config::Config::default();
    let metrics = Arc::new(crate::operator::metrics::Metrics::new());
    let budget = Arc::new(crate::cluster::write_budget::WriteBudget::unlimited());
    crate::operator::audits::objects::AuditHandle::new(
        crate::operator::audits::objects::AuditUses {
            client: client.clone(),
            watch_clients: None,
            settings: Arc::new(crate::operator::audits::objects::AuditSettings::of(&config)),
            judging: crate::judging_pool::JudgingPool::new(2),
            validators: Arc::new(crate::operator::audits::validators::Validators::new(
                1 << 20,
            )),
            server: Default::default(),
            events: Arc::new(crate::operator::events::EventQueue::new(
                crate::operator::events::EventSink::new(client, "test", metrics.clone()),
                true,
            )),
            metrics,
            annotations: crate::cluster::write_budget::Writes::new(
                budget,
                crate::cluster::write_budget::Priority::Annotation,
            ),
            states: crate::operator::state::for_tests(),
        },
    )
}

/// The report CRD as the server serves it: established, and being deleted or not.
pub fn report_crd(deleting: bool) -> Value {
    let mut crd: Value = serde_json::from_str(&crate::audit::schema_audit::crd_manifest()).unwrap();
    crd["metadata"]["uid"] = json!("report-crd");
    crd["status"] = json!({"conditions": [{"type": "Established", "status": "True"}],
        "storedVersions": ["v1alpha1"]});
    if deleting {
        crd["metadata"]["deletionTimestamp"] = json!("2026-11-28T00:00:00Z");
    }
    crd
}

/// Puts a CRD on the fake and reads it as the Controller does when it sees it (its object
/// audit starts), whether or not a Controller runs.
pub async fn apply_crd(r: &crate::operator::crds::Reconciler, fake: &Shared, crd: Value) {
    let name = crd["metadata"]["name"].as_str().unwrap().to_string();
    put_crd(fake, crd);
    let stored = fake.lock().unwrap().crds[&name].clone();
    r.read_revision(stored).await;
    r.audits.ensure(&name);
}

/// A client whose requests the fake answers; the fake serves the report CRD.
pub fn start() -> (kube::Client, Shared) {
    let (svc, mut handle) = tower_test::mock::pair::<Request<Body>, Response<FakeBody>>();
    let state: Shared = Arc::default();
    put_crd(&state, report_crd(false));
    let s = state.clone();
    tokio::spawn(async move {
        // Watches never answer: their responders are kept here.
        let mut pending = Vec::new();
        while let Some((req, send)) = handle.next_request().await {
            let (parts, body) = req.into_parts();
            let bytes = body.collect_bytes().await.unwrap_or_default();
            let path = parts.uri.path().to_string();
            let query = parts.uri.query().unwrap_or("").to_string();
            let metadata_only = parts
                .headers
                .get(http::header::ACCEPT)
                .and_then(|a| a.to_str().ok())
                .is_some_and(|a| a.contains("as=PartialObjectMetadata"));
            if query.contains("watch=true") {
                s.lock()
                    .unwrap()
                    .watches
                    .push((path.clone(), query.clone()));
                if query.contains("sendInitialEvents=true") {
                    // A streaming list: the objects of a LIST, then the bookmark that ends
                    // them; the watch that follows never answers.
                    let list = answer(&s, "GET", &path, &[], metadata_only);
                    send.send_response(initial_events(list).await);
                } else if path == CRDS || path == REPORTS {
                    let collection = if path == CRDS { CRDS } else { REPORTS };
                    send.send_response(live_watch(&s, collection));
                } else {
                    pending.push(send);
                }
                continue;
            }
            let response = answer(&s, parts.method.as_str(), &path, &bytes, metadata_only);
            send.send_response(response);
        }
    });
    (kube::Client::new(svc, "default"), state)
}

/// The wgpolicyk8s.io/v1alpha2 (or, `open`, openreports.io/v1alpha1) routes: LISTs of every
/// namespace, apply and delete.
fn policy_report(
    st: &mut State,
    open: bool,
    method: &str,
    rest: &str,
    body: &[u8],
) -> Response<FakeBody> {
    let parts: Vec<&str> = rest.split('/').collect();
    let (namespace, kind, name) = match parts.as_slice() {
        [kind] => ("", *kind, ""),
        [kind, name] => ("", *kind, *name),
        ["namespaces", ns, kind, name] => (*ns, *kind, *name),
        _ => return status(404, "NotFound", "not here"),
    };
    let (cluster_kind, namespaced_kind, api_version) = if open {
        ("clusterreports", "reports", "openreports.io/v1alpha1")
    } else {
        (
            "clusterpolicyreports",
            "policyreports",
            "wgpolicyk8s.io/v1alpha2",
        )
    };
    let cluster = kind == cluster_kind;
    if !cluster && kind != namespaced_kind {
        return status(404, "NotFound", "not here");
    }
    let forbidden = format!(
        "{kind}.{} is forbidden",
        api_version.split('/').next().unwrap()
    );
    let missing = if open {
        !st.openreports_installed
    } else {
        st.policy_crds_missing
    };
    let refused = st.policy_forbidden;
    let namespace_missing = st.missing_namespaces.iter().any(|n| n == namespace);
    let State {
        policy_reports,
        open_reports,
        policy_lists,
        open_lists,
        policy_writes,
        open_writes,
        ..
    } = &mut *st;
    let (store, lists, writes) = if open {
        (open_reports, open_lists, open_writes)
    } else {
        (policy_reports, policy_lists, policy_writes)
    };
    if method == "GET" && name.is_empty() {
        *lists += 1;
    }
    if missing {
        return status(
            404,
            "NotFound",
            "the server could not find the requested resource",
        );
    }
    match (method, name) {
        ("GET", "") => {
            let items: Vec<Value> = store
                .iter()
                .filter(|((ns, _), _)| ns.is_empty() == cluster)
                .map(|(_, r)| r.clone())
                .collect();
            ok(&json!({"apiVersion": api_version, "kind": "List",
                "metadata": {"resourceVersion": "1"}, "items": items}))
        }
        ("PATCH", name) => {
            *writes += 1;
            if refused {
                return status(403, "Forbidden", &forbidden);
            }
            if namespace_missing {
                let message = format!("namespaces \"{namespace}\" not found");
                return status(404, "NotFound", &message);
            }
            let mut applied: Value = serde_json::from_slice(body).unwrap_or_default();
            applied["metadata"]["resourceVersion"] = json!("1");
            store.insert((namespace.to_string(), name.to_string()), applied.clone());
            ok(&applied)
        }
        ("DELETE", name) => {
            *writes += 1;
            if refused {
                return status(403, "Forbidden", &forbidden);
            }
            match store.remove(&(namespace.to_string(), name.to_string())) {
                Some(_) => ok(&json!({"kind": "Status", "apiVersion": "v1", "status": "Success"})),
                None => status(404, "NotFound", "not found"),
            }
        }
        _ => status(405, "MethodNotAllowed", "not here"),
    }
}

fn answer(
    state: &Shared,
    method: &str,
    path: &str,
    body: &[u8],
    metadata_only: bool,
) -> Response<FakeBody> {
    let mut st = state.lock().unwrap();
    if let Some(rest) = path.strip_prefix(CRDS) {
        let name = rest.trim_start_matches('/');
        return match (method, name) {
            ("GET", "") => {
                let items: Vec<Value> = st.crds.values().cloned().collect();
                let version = st.resource_version.to_string();
                ok(&json!({"apiVersion": "apiextensions.k8s.io/v1",
                    "kind": "CustomResourceDefinitionList",
                    "metadata": {"resourceVersion": version}, "items": items}))
            }
            ("GET", name) => {
                st.crd_gets += 1;
                match st.crds.get(name) {
                    Some(c) => ok(c),
                    None => status(404, "NotFound", "not found"),
                }
            }
            _ => status(405, "MethodNotAllowed", "not here"),
        };
    }
    if let Some(rest) = path.strip_prefix(REPORTS) {
        let rest = rest.trim_start_matches('/');
        let (name, sub) = rest.split_once('/').unwrap_or((rest, ""));
        return match (method, name, sub) {
            ("GET", "", _) if !metadata_only => {
                st.report_lists += 1;
                if st.fail_report_lists {
                    return status(500, "InternalError", "etcd is down");
                }
                let items: Vec<Value> = st.reports.values().cloned().collect();
                ok(
                    &json!({"apiVersion": "crd-audit.dev/v1alpha1", "kind": "SchemaAuditList",
                    "metadata": {"resourceVersion": "1"}, "items": items}),
                )
            }
            ("GET", "", _) => {
                let items: Vec<Value> = st
                    .reports
                    .keys()
                    .map(|n| {
                        json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
                        "metadata": {"name": n, "resourceVersion": "1"}})
                    })
                    .collect();
                ok(
                    &json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadataList",
                    "metadata": {"resourceVersion": "1"}, "items": items}),
                )
            }
            ("GET", name, "") => {
                st.report_gets += 1;
                match st.reports.get(name) {
                    Some(r) => ok(r),
                    None => status(404, "NotFound", "not found"),
                }
            }
            ("PATCH", name, sub) => {
                st.report_writes += 1;
                if st.fail_writes {
                    return status(500, "InternalError", "etcdserver: request is too large");
                }
                let applied: Value = serde_json::from_slice(body).unwrap_or_default();
                let version = next_version(&mut st);
                let entry = st.reports.entry(name.to_string()).or_insert_with(|| {
                    let mut created = applied.clone();
                    created["metadata"]["generation"] = json!(1);
                    created
                });
                if sub == "status" {
                    // A merge patch of the whole status.
                    entry["status"] = applied["status"].clone();
                    if let Some(m) = entry["status"].as_object_mut() {
                        m.retain(|_, v| !v.is_null());
                    }
                } else {
                    // The generation moves on when the spec changes, as a server's does.
                    let generation = entry["metadata"]["generation"].as_i64().unwrap_or(1)
                        + i64::from(entry["spec"] != applied["spec"]);
                    let status = entry["status"].take();
                    *entry = applied;
                    entry["status"] = status;
                    entry["metadata"]["generation"] = json!(generation);
                }
                entry["metadata"]["resourceVersion"] = json!(version);
                let written = entry.clone();
                if sub == "status" {
                    st.status_writes
                        .push((name.to_string(), written["status"].clone()));
                }
                broadcast(&mut st, REPORTS, "MODIFIED", &written);
                ok(&written)
            }
            ("DELETE", name, _) => {
                st.report_writes += 1;
                if st.fail_writes {
                    return status(503, "ServiceUnavailable", "etcd is down");
                }
                if let Some(r) = st.reports.remove(name) {
                    broadcast(&mut st, REPORTS, "DELETED", &r);
                }
                ok(&json!({"kind": "Status", "apiVersion": "v1", "status": "Success"}))
            }
            _ => status(405, "MethodNotAllowed", "not here"),
        };
    }
    if let Some(rest) = path.strip_prefix("/apis/wgpolicyk8s.io/v1alpha2/") {
        return policy_report(&mut st, false, method, rest, body);
    }
    if let Some(rest) = path.strip_prefix("/apis/openreports.io/v1alpha1/") {
        return policy_report(&mut st, true, method, rest, body);
    }
    if path.starts_with("/apis/coordination.k8s.io/v1/namespaces/") {
        if st.fail_leases {
            return status(503, "ServiceUnavailable", "etcd is down");
        }
        let version = |st: &State| {
            st.lease.as_ref().map_or(0, |l| {
                l["metadata"]["resourceVersion"]
                    .as_str()
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0)
            })
        };
        return match method {
            "GET" => match &st.lease {
                Some(l) => ok(l),
                None => status(
                    404,
                    "NotFound",
                    "leases.coordination.k8s.io \"crd-audit\" not found",
                ),
            },
            "POST" | "PUT" => {
                let mut lease: Value = serde_json::from_slice(body).unwrap_or_default();
                let current = version(&st);
                let sent = lease["metadata"]["resourceVersion"].as_str().unwrap_or("");
                if (method == "POST" && st.lease.is_some())
                    || (method == "PUT" && sent != current.to_string())
                {
                    return status(409, "Conflict", "the object has been modified");
                }
                lease["metadata"]["resourceVersion"] = json!((current + 1).to_string());
                st.lease = Some(lease.clone());
                ok(&lease)
            }
            _ => status(405, "MethodNotAllowed", "not here"),
        };
    }
    if path.ends_with("/events") && method == "POST" {
        if st.fail_events {
            return status(503, "ServiceUnavailable", "try later");
        }
        let ev: Value = serde_json::from_slice(body).unwrap_or_default();
        st.events.push(ev.clone());
        return Response::builder()
            .status(201)
            .header("content-type", "application/json")
            .body(whole(serde_json::to_vec(&ev).unwrap()))
            .unwrap();
    }
    // A LIST of a CRD's objects: /apis/GROUP/VERSION/PLURAL
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    if method == "GET"
        && parts.len() == 4
        && parts[0] == "apis"
        && let Some(items) = st.objects.get(parts[3])
    {
        let items = items.clone();
        *st.object_lists.entry(parts[3].to_string()).or_default() += 1;
        return ok(
            &json!({"apiVersion": format!("{}/{}", parts[1], parts[2]), "kind": "List",
                "metadata": {"resourceVersion": "1"}, "items": items}),
        );
    }
    status(
        404,
        "NotFound",
        "the server could not find the requested resource",
    )
}
