//! Conversion round trips: every stored object of a CRD converted by a webhook, through that
//! webhook to each served version O other than the storage version S and back, as the API
//! server would convert it, and what is lost on the way.
//!
//! For each object (listed at S, a page at a time: a LIST at S calls no webhook) and each O:
//! 1. **S→O**: a GET at O; the API server calls the webhook. Its refusal is a `failed`
//!    finding, in the server's words (a LIST at O would fail as a whole for one object).
//! 2. **Invalid at O**: the object as read at O, judged as stored data under O's schema: a
//!    client that reads it at O, edits it and writes it back is refused.
//! 3. **S→O→S**: what an old client's read-modify-write does to the stored object, which no
//!    request shows (the server converts O→S only on the way into storage): the object read at
//!    O is decoded as a write at O would be (pruned, defaulted at O), sent to the webhook for
//!    S as the API server sends it (`review`, `webhook`), the answer checked and its metadata
//!    restored as the server does, pruned at S, then read back as a later GET at S would
//!    present it (defaulted at S), and compared with the object as stored.
//! 4. **O→S→O**: what a client at O gets back after its own unchanged write: a dry-run PUT at
//!    O of the object as read (nothing is written), compared with it.
//!
//! Nothing here writes: the only write requests are dry runs. Requests are paced by the
//! caller's budget. The steps print nothing: `cli::roundtrip` and the operator drive them.

pub mod compare;
pub mod review;
pub mod webhook;

use crate::cluster::client::{describe, status_code};
use crate::cluster::resources::{crd_resource, object_resource, object_value};
use crate::cluster::write_budget::Writes;
use compare::FieldChange;
use crd_audit_engine::{Crd, CrdValidator};
use futures::StreamExt;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, PostParams};
use review::ReviewVersion;
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use webhook::{Location, Webhook};

/// Objects a page of the LIST at the storage version.
const PAGE: u32 = 100;
/// Objects checked at once.
const IN_FLIGHT: usize = 4;

/// Why a round trip could not go on.
#[derive(Debug, thiserror::Error)]
pub enum RoundtripError {
    #[error("no CRD named {0}")]
    NoSuchCrd(String),
    #[error("the CRD {crd} cannot be read: {reason}")]
    UnreadableCrd { crd: String, reason: String },
    #[error("the CRD {0} has no storage version")]
    NoStorageVersion(String),
    #[error("the CRD {crd}'s conversion webhook: {reason}")]
    Webhook { crd: String, reason: String },
    #[error("{what}: {}", describe(.source))]
    Api {
        what: String,
        #[source]
        source: kube::Error,
    },
}

fn api_err(what: impl Into<String>, source: kube::Error) -> RoundtripError {
    RoundtripError::Api {
        what: what.into(),
        source,
    }
}

/// How a CRD's versions are converted.
pub enum Strategy {
    /// `None`: only `apiVersion` changes.
    None,
    Webhook {
        /// The review version the API server sends (or why it sends none).
        review: Result<ReviewVersion, String>,
        location: Location,
        /// The CRD's `caBundle`, decoded (PEM).
        ca_bundle: Vec<u8>,
    },
}

/// A CRD to round-trip, as read before anything else.
pub struct Target {
    pub crd: String,
    pub plural: String,
    pub storage: String,
    /// The served versions other than the storage version.
    pub others: Vec<String>,
    pub strategy: Strategy,
    /// The CRD's uid and generation as read: a change during the run is told.
    uid: String,
    generation: i64,
    definition: Crd,
    validator: CrdValidator,
}

impl Target {
    /// The CRD's generation as read.
    pub fn generation(&self) -> i64 {
        self.generation
    }

    /// Every version's resource.
    fn resource(&self, version: &str) -> ApiResource {
        object_resource(&self.definition, version)
    }

    fn group_version(&self, version: &str) -> String {
        format!("{}/{version}", self.definition.group)
    }
}

/// How the target's CRD changed since it was read (deleted, replaced, or another
/// generation), or `None`: findings made meanwhile are of the CRD as it was.
pub async fn changed_since(
    client: &kube::Client,
    target: &Target,
) -> Result<Option<String>, RoundtripError> {
    let ar = crd_resource();
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
    let now = api
        .get_opt(&target.crd)
        .await
        .map_err(|e| api_error(format!("reading the CRD {}", target.crd), e))?;
    Ok(match now {
        None => Some("it was deleted".into()),
        Some(crd) if crd.metadata.uid.as_deref().unwrap_or("") != target.uid => {
            Some("it was deleted and created again".into())
        }
        Some(crd) => {
            let generation = crd.metadata.generation.unwrap_or(0);
            (generation != target.generation).then(|| {
                format!(
                    "its generation went from {} to {generation}",
                    target.generation
                )
            })
        }
    })
}

/// Reads the CRD `name`, compiled for judging its objects by `release`'s rules.
pub async fn target(
    client: &kube::Client,
    name: &str,
    release: crd_audit_engine::Release,
) -> Result<Target, RoundtripError> {
    let ar = crd_resource();
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
    let raw = api
        .get_opt(name)
        .await
        .map_err(|e| api_error(format!("reading the CRD {name}"), e))?
        .ok_or_else(|| RoundtripError::NoSuchCrd(name.to_string()))?;
    target_of(&object_value(raw, &ar), release)
}

fn api_error(what: String, e: kube::Error) -> RoundtripError {
    api_err(what, e)
}

/// The target of a CRD the server served.
pub fn target_of(
    raw: &Value,
    release: crd_audit_engine::Release,
) -> Result<Target, RoundtripError> {
    let definition =
        crate::audit::read_crd::read_crd(raw).map_err(|e| RoundtripError::UnreadableCrd {
            crd: e.name.clone(),
            reason: e.reason,
        })?;
    let unreadable = |reason: String| RoundtripError::UnreadableCrd {
        crd: definition.name.clone(),
        reason,
    };
    let storage = definition
        .storage_version()
        .map(|v| v.name.clone())
        .ok_or_else(|| RoundtripError::NoStorageVersion(definition.name.clone()))?;
    let others = definition
        .versions
        .iter()
        .filter(|v| v.served && v.name != storage)
        .map(|v| v.name.clone())
        .collect();
    let conversion = &raw["spec"]["conversion"];
    let strategy = match conversion["strategy"].as_str().unwrap_or("None") {
        "Webhook" => {
            let webhook = &conversion["webhook"];
            let versions: Vec<String> = webhook["conversionReviewVersions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect();
            let client_config = &webhook["clientConfig"];
            let ca_bundle = match client_config["caBundle"].as_str() {
                Some(b) => {
                    use base64::Engine;
                    base64::engine::general_purpose::STANDARD
                        .decode(b.trim())
                        .map_err(|e| unreadable(format!("its caBundle is not base64: {e}")))?
                }
                None => Vec::new(),
            };
            Strategy::Webhook {
                review: ReviewVersion::choose(&versions),
                location: Location::of(client_config).map_err(|reason| {
                    RoundtripError::Webhook {
                        crd: definition.name.clone(),
                        reason,
                    }
                })?,
                ca_bundle,
            }
        }
        _ => Strategy::None,
    };
    let validator = CrdValidator::options()
        .release(release)
        .build(&definition)
        .map_err(|e| unreadable(e.to_string()))?;
    Ok(Target {
        uid: raw["metadata"]["uid"].as_str().unwrap_or("").to_string(),
        generation: raw["metadata"]["generation"].as_i64().unwrap_or(0),
        crd: definition.name.clone(),
        plural: definition.plural.clone(),
        storage,
        others,
        strategy,
        validator,
        definition,
    })
}

/// What a round trip found wrong with one object at one version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Kind {
    /// A round trip changes the object.
    Lossy,
    /// Converted to the version, the object is invalid under its schema.
    Invalid,
    /// Converting to the version, or back, fails.
    Failed,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Lossy => "lossy",
            Kind::Invalid => "invalid",
            Kind::Failed => "failed",
        }
    }
}

/// A finding about one object.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    pub namespace: String,
    pub name: String,
    pub kind: Kind,
    /// The version O converted to.
    pub version: String,
    /// A lossy finding's versions: `[S, O, S]` or `[O, S, O]`.
    pub round_trip: Option<[String; 3]>,
    /// A lossy finding's fields (at most `compare::MAX_FIELDS`).
    pub fields: Vec<FieldChange>,
    /// How many fields changed in all.
    pub fields_total: usize,
    /// The server's (or the webhook's) words: why it failed, the first error, or the fields.
    pub message: String,
    /// An invalid finding's: whether the API server lets through a write at the version
    /// that leaves the object unchanged (ratcheting, from 1.30); else every write is refused.
    pub update_allowed: Option<bool>,
}

/// What checking one object found: nothing when it went away meanwhile.
pub struct Checked {
    pub findings: Vec<Finding>,
    /// The object was gone (deleted since it was listed).
    pub gone: bool,
}

/// Checks stored objects of a target.
pub struct Checker {
    client: kube::Client,
    target: Arc<Target>,
    webhook: Option<Webhook>,
    pace: Writes,
}

impl Checker {
    /// A checker of `target`'s objects; `in_cluster`: the webhook's Service is dialled
    /// directly (else through the API server's service proxy). `pace` spaces every request
    /// (GETs, the webhook's posts, dry runs).
    pub fn new(
        client: kube::Client,
        target: Arc<Target>,
        in_cluster: bool,
        pace: Writes,
    ) -> Result<Checker, RoundtripError> {
        let webhook = match &target.strategy {
            Strategy::None => None,
            Strategy::Webhook {
                location,
                ca_bundle,
                ..
            } => Some(
                Webhook::new(location, ca_bundle, in_cluster, &client).map_err(|reason| {
                    RoundtripError::Webhook {
                        crd: target.crd.clone(),
                        reason,
                    }
                })?,
            ),
        };
        Ok(Checker {
            client,
            target,
            webhook,
            pace,
        })
    }

    /// The client it reads with.
    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    /// Round-trips one object as listed at the storage version, through every other served
    /// version.
    pub async fn check(&self, stored: Value) -> Result<Checked, RoundtripError> {
        let t = &self.target;
        let namespace = stored["metadata"]["namespace"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let name = stored["metadata"]["name"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let mut findings = Vec::new();
        let finding = |kind: Kind, version: &str, message: String| Finding {
            namespace: namespace.clone(),
            name: name.clone(),
            kind,
            version: version.to_string(),
            round_trip: None,
            fields: Vec::new(),
            fields_total: 0,
            message,
            update_allowed: None,
        };
        for o in &t.others {
            let ar = t.resource(o);
            let api: Api<DynamicObject> = if namespace.is_empty() {
                Api::all_with(self.client.clone(), &ar)
            } else {
                Api::namespaced_with(self.client.clone(), &namespace, &ar)
            };
            // 1. S→O, by the API server.
            self.pace.turn().await;
            let read = match api.get(&name).await {
                Ok(o) => object_value(o, &ar),
                Err(e) => match status_code(&e) {
                    Some(404) => {
                        return Ok(Checked {
                            findings,
                            gone: true,
                        });
                    }
                    Some(500) => {
                        findings.push(finding(Kind::Failed, o, server_message(&e)));
                        continue;
                    }
                    _ => {
                        return Err(api_err(
                            format!("reading {} at {o}", who(&namespace, &name)),
                            e,
                        ));
                    }
                },
            };
            // 2. Invalid at O, as stored data.
            let verdict = t.validator.validate_stored(read.clone());
            let invalid = match &verdict.outcome {
                crd_audit_engine::Outcome::RequestError(e) => Some(e.message.clone()),
                outcome => outcome.causes().first().map(|c| c.message()),
            };
            if let Some(message) = invalid {
                let mut f = finding(Kind::Invalid, o, message);
                f.update_allowed = Some(!verdict.is_stuck());
                findings.push(f);
            }
            // 3. S→O→S: the webhook, as the API server calls it on a write at O.
            if let Some(webhook) = &self.webhook {
                match self.back_to_storage(webhook, &read).await {
                    Ok(back) => {
                        let (fields, total) = compare::changes(&stored, &back);
                        if total > 0 {
                            let mut f = finding(Kind::Lossy, o, fields_text(&fields, total));
                            f.round_trip = Some([t.storage.clone(), o.clone(), t.storage.clone()]);
                            f.fields = fields;
                            f.fields_total = total;
                            findings.push(f);
                        }
                    }
                    Err(message) => findings.push(finding(Kind::Failed, &t.storage, message)),
                }
            }
            // 4. O→S→O: the API server's dry run of the unchanged write at O.
            self.pace.turn().await;
            let params = PostParams {
                dry_run: true,
                ..PostParams::default()
            };
            let sent: DynamicObject = match serde_json::from_value(read.clone()) {
                Ok(d) => d,
                Err(_) => continue,
            };
            match api.replace(&name, &params, &sent).await {
                Ok(again) => {
                    let again = object_value(again, &ar);
                    let (fields, total) = compare::changes(&read, &again);
                    if total > 0 {
                        let mut f = finding(Kind::Lossy, o, fields_text(&fields, total));
                        f.round_trip = Some([o.clone(), t.storage.clone(), o.clone()]);
                        f.fields = fields;
                        f.fields_total = total;
                        findings.push(f);
                    }
                }
                Err(e) => match status_code(&e) {
                    // Gone, or written by someone since it was read: nothing to compare.
                    Some(404 | 409) => {}
                    // Refused as invalid at O: found in step 2.
                    Some(422) => {}
                    // The server's words for what failed: instead of this tool's own for the
                    // same conversion to S.
                    Some(500) => {
                        findings.retain(|f| !(f.kind == Kind::Failed && f.version == t.storage));
                        findings.push(finding(Kind::Failed, &t.storage, server_message(&e)));
                    }
                    _ => {
                        return Err(api_err(
                            format!(
                                "the dry-run update of {} at {o} (it needs update on {}.{})",
                                who(&namespace, &name),
                                t.plural,
                                t.definition.group
                            ),
                            e,
                        ));
                    }
                },
            }
        }
        Ok(Checked {
            findings,
            gone: false,
        })
    }

    /// The object read at O, written back at O as a client would write it, converted to S as
    /// the API server converts it on the way into storage, and read back at S: what would be
    /// stored and served then. Else why the conversion fails, in the server's words.
    async fn back_to_storage(&self, webhook: &Webhook, read: &Value) -> Result<Value, String> {
        let t = &self.target;
        // Decoded as a write at O: pruned and defaulted at O; no resourceVersion on the way
        // into storage.
        let mut written = read.clone();
        t.validator.coerce(&mut written, true)?;
        if let Some(m) = written["metadata"].as_object_mut() {
            m.remove("resourceVersion");
        }
        let mut stored = self.convert(webhook, &written, &t.storage).await?;
        // Into storage: pruned at S (no defaults, no validation); read back: defaulted at S.
        t.validator.coerce(&mut stored, false)?;
        t.validator.coerce(&mut stored, true)?;
        Ok(stored)
    }

    /// The object as a GET at `version` would present it, computed here: the stored object
    /// (as listed at S: pruned and defaulted at S) without its resourceVersion, converted by
    /// the webhook as the API server calls it, pruned at `version` (no defaults: a read
    /// defaults only at S), the resourceVersion put back. Else the server's error. What the
    /// API server shows for S→O, for checking this path against the server's own reads.
    pub async fn read_at(&self, stored: &Value, version: &str) -> Result<Value, String> {
        let Some(webhook) = &self.webhook else {
            return Err(format!("{} is not converted by a webhook", self.target.crd));
        };
        let mut sent = stored.clone();
        let rv = sent["metadata"]
            .as_object_mut()
            .and_then(|m| m.remove("resourceVersion"));
        let mut read = self.convert(webhook, &sent, version).await?;
        self.target.validator.coerce(&mut read, false)?;
        if let (Some(rv), Some(m)) = (rv, read["metadata"].as_object_mut()) {
            m.insert("resourceVersion".into(), rv);
        }
        Ok(read)
    }

    /// `object` converted to `version` by the webhook, its answer checked and its metadata
    /// restored as the API server does; else the server's error.
    async fn convert(
        &self,
        webhook: &Webhook,
        object: &Value,
        version: &str,
    ) -> Result<Value, String> {
        let t = &self.target;
        let Strategy::Webhook { review, .. } = &t.strategy else {
            return Err("not converted by a webhook".into());
        };
        let review = review.clone()?;
        let desired = t.group_version(version);
        let uid = review_uid();
        let request = review::request(review, &uid, &desired, object);
        self.pace.turn().await;
        let p = review::prefix(object);
        let body = webhook
            .post(&request)
            .await
            .map_err(|e| format!("{p} failed: {e}"))?
            .body_or_error()
            .map_err(|e| format!("{p} failed: {e}"))?;
        review::converted(review, &uid, object, &desired, &body)
    }
}

/// `namespace/name`, or `name` for a cluster-scoped object.
pub fn who(namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        name.to_string()
    } else {
        format!("{namespace}/{name}")
    }
}

/// A finding as a line of text: `lossy ns/name v2→v1→v2: spec.priority lost`,
/// `invalid ns/name at v1: <message>`, `failed ns/name to v1: <message>`.
pub fn text_line(f: &Finding) -> String {
    let who = who(&f.namespace, &f.name);
    match f.kind {
        Kind::Lossy => {
            let rt = f.round_trip.clone().unwrap_or_default();
            format!("lossy {who} {}: {}", rt.join("→"), f.message)
        }
        Kind::Invalid if f.update_allowed == Some(true) => format!(
            "invalid {who} at {}: {} (a write that leaves it unchanged is allowed: ratcheting)",
            f.version, f.message
        ),
        Kind::Invalid => format!("invalid {who} at {}: {}", f.version, f.message),
        Kind::Failed => format!("failed {who} to {}: {}", f.version, f.message),
    }
}

/// `spec.priority lost, spec.color changed` (and how many more).
fn fields_text(fields: &[FieldChange], total: usize) -> String {
    let mut text: Vec<String> = fields
        .iter()
        .map(|f| format!("{} {}", f.path, f.change.as_str()))
        .collect();
    if total > fields.len() {
        text.push(format!("and {} more", total - fields.len()));
    }
    text.join(", ")
}

/// The message of the server's Status, as kubectl prints it.
fn server_message(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => s.message.clone(),
        other => other.to_string(),
    }
}

/// A fresh random UUID (version 4), as the API server gives each review.
fn review_uid() -> String {
    let mut b = [0u8; 16];
    if getrandom::fill(&mut b).is_err() {
        // No randomness: time and a counter are unique enough for one process.
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        b[..8].copy_from_slice(&(t as u64).to_le_bytes());
        b[8..].copy_from_slice(&N.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// What a walk did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Walked {
    /// Objects listed.
    pub objects: u64,
    /// Objects gone before their turn.
    pub gone: u64,
    /// Stopped before the end.
    pub interrupted: bool,
}

/// Round-trips every stored object of the target, a page at a time, `IN_FLIGHT` at once,
/// handing each object's findings to `found` and the count of objects done to `progress`.
pub async fn walk(
    checker: &Checker,
    found: &mut impl FnMut(Vec<Finding>),
    progress: &mut impl FnMut(u64),
    stop: &AtomicBool,
) -> Result<Walked, RoundtripError> {
    let t = &checker.target;
    let ar = t.resource(&t.storage);
    let api: Api<DynamicObject> = Api::all_with(checker.client.clone(), &ar);
    let mut params = ListParams::default().limit(PAGE);
    let mut walked = Walked::default();
    let mut done = 0u64;
    loop {
        if stop.load(Ordering::Relaxed) {
            walked.interrupted = true;
            return Ok(walked);
        }
        let page = api
            .list(&params)
            .await
            .map_err(|e| api_err(format!("listing {} at {}", t.plural, t.storage), e))?;
        let next: Option<String> = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        let objects: Vec<Value> = page
            .items
            .into_iter()
            .map(|o| object_value(o, &ar))
            .collect();
        walked.objects += objects.len() as u64;
        let mut checks = futures::stream::iter(objects)
            .map(|o| checker.check(o))
            .buffered(IN_FLIGHT);
        while let Some(checked) = checks.next().await {
            let checked = checked?;
            walked.gone += u64::from(checked.gone);
            found(checked.findings);
            done += 1;
            progress(done);
        }
        match next {
            Some(token) if !stop.load(Ordering::Relaxed) => params = params.continue_token(&token),
            Some(_) => {
                walked.interrupted = true;
                return Ok(walked);
            }
            None => return Ok(walked),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_review_uid_is_a_v4_uuid() {
        let (a, b) = (review_uid(), review_uid());
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "{a}");
    }
}
