//! `crd-audit apply-crd`: installs or upgrades the report CRD (`schemaaudits.crd-audit.dev`)
//! to the one this binary was built with, exactly what `crd-audit manifests` prints, and
//! waits until the API server serves it. Helm never upgrades the CRDs of a chart's `crds/`
//! directory, so the chart runs this command as a pre-upgrade hook with the new image.
//!
//! The CRD is written by a server-side apply with the field manager `crd-audit`, forcing
//! conflicts (the CRD that `helm install` created from `crds/` is owned by Helm's manager;
//! `spec.versions` and `spec.names.shortNames` are atomic lists, so the applied ones replace
//! them whole). Then the CRD is read until the server reports it `Established` with its names
//! accepted, the stored spec is the applied one, and discovery lists the resource with the
//! applied short names: what `kubectl get <short name>` needs.

use super::{EXIT_CLEAN, EXIT_FINDINGS, EXIT_INPUT_ERROR};
use crate::audit::schema_audit::crd_manifest;
use crate::cluster::client::{ClusterArgs, cli_runtime, connect, describe, status_code};
use crate::cluster::resources::crd_resource;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::Value;
use std::time::Duration;

/// The field manager of the apply: the operator's own (its reports and annotations are
/// written under it too).
pub const FIELD_MANAGER: &str = "crd-audit";

/// How often the CRD and discovery are read while waiting.
const POLL: Duration = Duration::from_millis(500);

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// How long to wait for the API server to serve the applied CRD (a Go duration such as
    /// 90s or 2m, or seconds).
    #[arg(long, value_name = "DURATION", default_value = "2m", value_parser = parse_timeout)]
    pub timeout: Duration,
}

/// A Go duration (`90s`, `2m`) or a whole number of seconds, at least one second.
pub(crate) fn parse_timeout(text: &str) -> Result<Duration, String> {
    let parsed = match text.parse::<u64>() {
        Ok(seconds) => Some(Duration::from_secs(seconds)),
        Err(_) => crd_audit_engine::parse::duration(text)
            .ok()
            .filter(|ns| *ns >= 0)
            .map(|ns| Duration::from_nanos(ns.unsigned_abs())),
    };
    parsed
        .filter(|d| *d >= Duration::from_secs(1))
        .ok_or_else(|| {
            format!("{text:?} is not a duration of at least 1s (such as 90s, 2m or 120)")
        })
}

/// What the server serves once the wait is over.
#[derive(Debug, PartialEq)]
pub struct Served {
    pub name: String,
    pub generation: i64,
    pub short_names: Vec<String>,
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
        let client = match connect(
            args.cluster.kubeconfig.as_deref(),
            args.cluster.context.as_deref(),
        )
        .await
        {
            Ok((c, _)) => c,
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_INPUT_ERROR;
            }
        };
        let crd: Value = match serde_json::from_str(&crd_manifest()) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("error: the built-in report CRD does not read back: {e}");
                return EXIT_INPUT_ERROR;
            }
        };
        match apply_and_wait(&client, &crd, args.timeout, POLL).await {
            Ok(served) => {
                println!(
                    "crd-audit apply-crd: applied CustomResourceDefinition {} (generation {}); \
                     established and served with short names [{}]",
                    served.name,
                    served.generation,
                    served.short_names.join(", ")
                );
                EXIT_CLEAN
            }
            Err(e) => {
                eprintln!("error: {e}");
                EXIT_FINDINGS
            }
        }
    })
}

/// The status of a condition of a CRD (`True`, `False`, ...) and its message.
fn condition<'a>(crd: &'a Value, kind: &str) -> Option<(&'a str, &'a str)> {
    crd["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
        .map(|c| {
            (
                c["status"].as_str().unwrap_or(""),
                c["message"].as_str().unwrap_or(""),
            )
        })
}

/// A list of strings (absent: empty).
fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// What still keeps the stored CRD from being the applied one, served: `None` once it is.
/// `Err` when it will not come by waiting (the names were refused).
fn not_yet_served(wanted: &Value, stored: &Value) -> Result<Option<String>, String> {
    let names = &wanted["spec"]["names"];
    if let Some(("False", message)) = condition(stored, "NamesAccepted") {
        return Err(format!(
            "the API server does not accept the names of CustomResourceDefinition {}: {message}",
            wanted["metadata"]["name"].as_str().unwrap_or("")
        ));
    }
    // The names applied (the server adds listKind when it is not given).
    let applied_names = names.as_object().into_iter().flatten();
    if let Some((key, value)) = applied_names
        .clone()
        .find(|(k, v)| stored["spec"]["names"][k.as_str()] != **v)
    {
        return Ok(Some(format!(
            "its stored {key} is {} instead of {value} (another writer changed it)",
            stored["spec"]["names"][key.as_str()]
        )));
    }
    let versions = |crd: &Value| -> Vec<(Value, Value)> {
        crd["spec"]["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| (v["name"].clone(), v["schema"].clone()))
            .collect()
    };
    if versions(stored) != versions(wanted) {
        return Ok(Some(
            "its stored versions and schemas are not the applied ones yet".into(),
        ));
    }
    match condition(stored, "Established") {
        Some(("True", _)) => {}
        Some((_, message)) => return Ok(Some(format!("it is not established yet: {message}"))),
        None => return Ok(Some("it is not established yet".into())),
    }
    if condition(stored, "NamesAccepted").map(|(s, _)| s) != Some("True") {
        return Ok(Some("its names are not accepted yet".into()));
    }
    let accepted = &stored["status"]["acceptedNames"];
    for (key, value) in applied_names {
        if accepted[key.as_str()] != *value {
            return Ok(Some(format!(
                "its accepted {key} is {} (applied: {value})",
                accepted[key.as_str()]
            )));
        }
    }
    Ok(None)
}

/// Whether discovery lists the CRD's resource with the applied short names.
async fn discovered(client: &kube::Client, wanted: &Value) -> Result<bool, String> {
    let spec = &wanted["spec"];
    let group = spec["group"].as_str().unwrap_or_default();
    let Some(version) = spec["versions"]
        .as_array()
        .and_then(|vs| vs.iter().find(|v| v["storage"] == true))
        .and_then(|v| v["name"].as_str())
    else {
        return Err("the built-in report CRD has no storage version".into());
    };
    let plural = spec["names"]["plural"].as_str().unwrap_or_default();
    let short_names = strings(&spec["names"]["shortNames"]);
    match client
        .list_api_group_resources(&format!("{group}/{version}"))
        .await
    {
        Ok(list) => Ok(list
            .resources
            .iter()
            .any(|r| r.name == plural && r.short_names.clone().unwrap_or_default() == short_names)),
        // Not served at all yet.
        Err(e) if status_code(&e) == Some(404) => Ok(false),
        Err(e) => Err(format!(
            "reading the discovery of {group}/{version}: {}",
            describe(&e)
        )),
    }
}

/// Applies `crd` and waits (reading it every `poll`) until it is served as applied, or
/// `timeout` passes.
pub async fn apply_and_wait(
    client: &kube::Client,
    crd: &Value,
    timeout: Duration,
    poll: Duration,
) -> Result<Served, String> {
    let name = crd["metadata"]["name"]
        .as_str()
        .ok_or("the built-in report CRD has no name")?
        .to_string();
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &crd_resource());
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let applied = api
        .patch(&name, &params, &Patch::Apply(crd))
        .await
        .map_err(|e| {
            let hint = if status_code(&e) == Some(403) {
                " (the chart's hook grants create on customresourcedefinitions and get, patch \
                 and update on this one)"
            } else {
                ""
            };
            format!(
                "applying CustomResourceDefinition {name}: {}{hint}",
                describe(&e)
            )
        })?;
    let generation = applied.metadata.generation.unwrap_or(0);
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let waiting_for;
        match api.get(&name).await {
            Ok(stored) => {
                let stored = serde_json::to_value(&stored).unwrap_or(Value::Null);
                match not_yet_served(crd, &stored)? {
                    Some(why) => waiting_for = why,
                    None => {
                        if discovered(client, crd).await? {
                            return Ok(Served {
                                name,
                                generation: stored["metadata"]["generation"]
                                    .as_i64()
                                    .unwrap_or(generation),
                                short_names: strings(&crd["spec"]["names"]["shortNames"]),
                            });
                        }
                        waiting_for = "discovery does not list it with its short names yet".into();
                    }
                }
            }
            Err(e) if status_code(&e) == Some(403) => {
                return Err(format!(
                    "reading CustomResourceDefinition {name}: {}",
                    describe(&e)
                ));
            }
            Err(e) => waiting_for = format!("it could not be read: {}", describe(&e)),
        }
        if tokio::time::Instant::now() + poll > deadline {
            return Err(format!(
                "CustomResourceDefinition {name} was applied (generation {generation}) but is \
                 not served as applied after {timeout:?}: {waiting_for}"
            ));
        }
        tokio::time::sleep(poll).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::{Request, Response};
    use kube::client::Body;
    use serde_json::json;
    use std::sync::{Arc, Mutex};

    const CRD_PATH: &str =
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/schemaaudits.crd-audit.dev";

    /// A fake API server holding one CRD: an apply stores what was sent; its status (what
    /// the server's controllers would write) follows the names `accepted` says, after
    /// `lag` reads; discovery lists the accepted short names.
    #[derive(Default)]
    struct Fake {
        /// The stored CRD (the previous chart's, with the old short name, at first).
        stored: Option<Value>,
        /// The query and content type of each PATCH, and its body.
        patches: Vec<(String, String, Value)>,
        gets: usize,
        /// Reads of the CRD before the new names are accepted.
        lag: usize,
        /// Answer the PATCH with this code (403, ...).
        refuse_patch: Option<u16>,
        /// The names are refused (another CRD uses the short name).
        names_conflict: bool,
        /// The CRD is never established.
        never_established: bool,
    }

    fn json_response(code: u16, v: &Value) -> Response<Body> {
        Response::builder()
            .status(code)
            .header("content-type", "application/json")
            .body(Body::from(serde_json::to_vec(v).unwrap()))
            .unwrap()
    }

    fn failure(code: u16, reason: &str) -> Response<Body> {
        json_response(
            code,
            &json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                "message": format!("{reason} here"), "reason": reason, "code": code}),
        )
    }

    /// The CRD as the server would show it after `gets` reads.
    fn with_status(fake: &Fake, crd: &Value) -> Value {
        let mut crd = crd.clone();
        // The server fills in what the CRD leaves out.
        crd["spec"]["names"]["listKind"] = json!("SchemaAuditList");
        crd["spec"]["conversion"] = json!({"strategy": "None"});
        let caught_up = fake.gets > fake.lag;
        let mut accepted = crd["spec"]["names"].clone();
        if !caught_up {
            accepted["shortNames"] = json!(["sa"]);
        }
        let names_accepted = if fake.names_conflict {
            json!({"type": "NamesAccepted", "status": "False", "reason": "ShortNamesConflict",
                "message": "\"crdaudit\" is already in use"})
        } else {
            json!({"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": ""})
        };
        let established = if fake.never_established {
            json!({"type": "Established", "status": "False", "reason": "Installing",
                "message": "the initial names have not been accepted"})
        } else {
            json!({"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                "message": ""})
        };
        crd["metadata"]["generation"] = json!(2);
        crd["status"] = json!({"acceptedNames": accepted,
            "conditions": [names_accepted, established], "storedVersions": ["v1alpha1"]});
        crd
    }

    fn start(fake: Fake) -> (kube::Client, Arc<Mutex<Fake>>) {
        let (svc, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let state = Arc::new(Mutex::new(fake));
        let s = state.clone();
        tokio::spawn(async move {
            while let Some((req, send)) = handle.next_request().await {
                let (parts, body) = req.into_parts();
                let bytes = body.collect_bytes().await.unwrap_or_default();
                let mut st = s.lock().unwrap();
                let path = parts.uri.path();
                let response = match (parts.method.as_str(), path) {
                    ("PATCH", CRD_PATH) => {
                        let content_type = parts
                            .headers
                            .get(http::header::CONTENT_TYPE)
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or("")
                            .to_string();
                        let sent: Value = serde_json::from_slice(&bytes).unwrap_or_default();
                        st.patches.push((
                            parts.uri.query().unwrap_or("").to_string(),
                            content_type,
                            sent.clone(),
                        ));
                        match st.refuse_patch {
                            Some(code) => failure(code, "Forbidden"),
                            None => {
                                st.stored = Some(sent.clone());
                                json_response(200, &with_status(&st, &sent))
                            }
                        }
                    }
                    ("GET", CRD_PATH) => {
                        st.gets += 1;
                        match st.stored.clone() {
                            Some(crd) => json_response(200, &with_status(&st, &crd)),
                            None => failure(404, "NotFound"),
                        }
                    }
                    ("GET", "/apis/crd-audit.dev/v1alpha1") => {
                        let short = if st.gets > st.lag {
                            json!(["crdaudit"])
                        } else {
                            json!(["sa"])
                        };
                        json_response(
                            200,
                            &json!({"kind": "APIResourceList", "apiVersion": "v1",
                            "groupVersion": "crd-audit.dev/v1alpha1", "resources": [
                                {"name": "schemaaudits", "singularName": "schemaaudit",
                                 "namespaced": false, "kind": "SchemaAudit",
                                 "verbs": ["get", "list", "watch", "create", "patch", "delete"],
                                 "shortNames": short}]}),
                        )
                    }
                    _ => failure(404, "NotFound"),
                };
                send.send_response(response);
            }
        });
        (kube::Client::new(svc, "default"), state)
    }

    fn the_built_in_crd() -> Value {
        serde_json::from_str(&crd_manifest()).unwrap()
    }

    /// The previous chart's CRD: the same, with the short name `sa`.
    fn previous_crd() -> Value {
        let mut crd = the_built_in_crd();
        crd["spec"]["names"]["shortNames"] = json!(["sa"]);
        crd
    }

    #[tokio::test]
    async fn the_built_in_crd_is_applied_with_force_and_waited_for() {
        let (client, fake) = start(Fake {
            stored: Some(previous_crd()),
            lag: 2,
            ..Fake::default()
        });
        let crd = the_built_in_crd();
        assert_eq!(crd["spec"]["names"]["shortNames"], json!(["crdaudit"]));
        let served = apply_and_wait(
            &client,
            &crd,
            Duration::from_secs(10),
            Duration::from_millis(5),
        )
        .await
        .unwrap();
        assert_eq!(
            served,
            Served {
                name: "schemaaudits.crd-audit.dev".into(),
                generation: 2,
                short_names: vec!["crdaudit".into()],
            }
        );
        let st = fake.lock().unwrap();
        assert_eq!(st.patches.len(), 1, "one apply");
        let (query, content_type, sent) = &st.patches[0];
        assert!(
            query.contains("fieldManager=crd-audit") && query.contains("force=true"),
            "{query}"
        );
        assert_eq!(content_type, "application/apply-patch+yaml");
        // Exactly what `crd-audit manifests` prints.
        assert_eq!(*sent, crd);
        // It waited for the new names to be accepted: the reads while they lagged, and one
        // after.
        assert!(st.gets >= 3, "{} reads", st.gets);
    }

    #[tokio::test]
    async fn a_short_name_in_use_fails_at_once_with_the_servers_message() {
        let (client, fake) = start(Fake {
            stored: Some(previous_crd()),
            names_conflict: true,
            ..Fake::default()
        });
        let e = apply_and_wait(
            &client,
            &the_built_in_crd(),
            Duration::from_secs(30),
            Duration::from_millis(5),
        )
        .await
        .unwrap_err();
        assert!(e.contains("\"crdaudit\" is already in use"), "{e}");
        assert_eq!(fake.lock().unwrap().gets, 1);
    }

    #[tokio::test]
    async fn a_refused_apply_names_the_grants() {
        let (client, _) = start(Fake {
            refuse_patch: Some(403),
            ..Fake::default()
        });
        let e = apply_and_wait(
            &client,
            &the_built_in_crd(),
            Duration::from_secs(1),
            Duration::from_millis(5),
        )
        .await
        .unwrap_err();
        assert!(
            e.starts_with(
                "applying CustomResourceDefinition schemaaudits.crd-audit.dev: Forbidden here"
            ),
            "{e}"
        );
        assert!(e.contains("get, patch and update on this one"), "{e}");
    }

    #[tokio::test]
    async fn a_crd_that_is_never_established_times_out_saying_so() {
        let (client, _) = start(Fake {
            never_established: true,
            ..Fake::default()
        });
        let e = apply_and_wait(
            &client,
            &the_built_in_crd(),
            Duration::from_millis(100),
            Duration::from_millis(5),
        )
        .await
        .unwrap_err();
        assert!(e.contains("not served as applied after 100ms"), "{e}");
        assert!(
            e.ends_with("it is not established yet: the initial names have not been accepted"),
            "{e}"
        );
    }

    #[test]
    fn timeouts_read_as_durations_or_seconds() {
        assert_eq!(parse_timeout("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_timeout("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_timeout("1500ms"), Ok(Duration::from_millis(1500)));
        for bad in ["0", "10ms", "-1s", "soon", ""] {
            assert!(parse_timeout(bad).is_err(), "{bad}");
        }
    }
}
