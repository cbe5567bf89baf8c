//! Storage version migration of a CRD's objects, so that an old version can leave
//! `status.storedVersions` (and then `spec.versions`).
//!
//! The API server encodes an object at the CRD's storage version when it writes it. An object
//! written before the storage version changed stays encoded at the old version until it is
//! written again, and `status.storedVersions` keeps naming that version, which the server then
//! refuses to drop from `spec.versions` ("must appear in spec.versions"). Migrating rewrites
//! every object, then sets `status.storedVersions` to the storage version alone:
//!
//! 1. **The target**: the CRD, its storage version, its `storedVersions` and generation.
//! 2. **The preflight**: every stored object judged as the server judges its next unchanged
//!    update (the caller's judge: the server's release, ratcheting). The objects whose rewrite
//!    will be refused are *stuck*: they block the prune until someone fixes them.
//! 3. **The rewrite**: every object, page by page, sent back unchanged (a PUT of the object as
//!    listed, with its resourceVersion), as the upstream storage version migrator does. The
//!    server skips the etcd write when the encoded bytes do not change, so an object already
//!    at the storage version costs one request and no write. A conflict means another writer
//!    wrote the object after it was listed, and that write stored it at the storage version:
//!    it is not sent again (the in-tree storage version migrator reasons the same way, and a
//!    hot object would otherwise conflict again and again). An object that is gone is
//!    skipped, a refusal is recorded with the server's message and never stops the rest.
//!    Requests are paced by the caller's write budget (`cluster::write_budget`: `--qps`, or
//!    the operator's `apiQps` shared with its other writes).
//! 4. **The prune**: only when every object was rewritten, and only if the CRD's generation
//!    and storage version did not change meanwhile (a new revision could have changed what
//!    the objects must be encoded at), `status.storedVersions` becomes the storage version
//!    alone, written through the status subresource with the CRD's resourceVersion as
//!    precondition.
//!
//! The steps are async and take a kube client; the command line (`cli::migrate`) and the
//! operator drive them. Nothing here prints.

use crate::cluster::client::{describe, status_code};
use crate::cluster::resources::{crd_resource, object_resource, object_value};
use crate::cluster::write_budget::Writes;
use futures::StreamExt;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, ObjectList, PostParams};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Objects a LIST page: at most one page is held at a time.
const PAGE: u32 = 500;
/// Rewrites in flight at once (their outcomes are taken in the order listed).
const IN_FLIGHT: usize = 4;
/// Attempts at the prune when the CRD's status write conflicts with another writer.
const CONFLICT_ATTEMPTS: u32 = 8;
/// How long a request that fails for want of a server (connection refused while it restarts,
/// 429, 5xx) is tried again before the migration gives up.
const OUTAGE: Duration = Duration::from_secs(120);

/// Why a migration could not go on.
#[derive(Debug, thiserror::Error)]
pub enum MigrationError {
    #[error("no CRD named {0}")]
    NoSuchCrd(String),
    #[error("the CRD {crd} cannot be read: {reason}")]
    UnreadableCrd { crd: String, reason: String },
    #[error("the CRD {0} has no storage version")]
    NoStorageVersion(String),
    #[error("{what}: {}", describe(.source))]
    Api {
        what: String,
        #[source]
        source: kube::Error,
    },
    #[error("judging the objects: {0}")]
    Judge(String),
}

impl MigrationError {
    fn api(what: impl Into<String>, source: kube::Error) -> MigrationError {
        MigrationError::Api {
            what: what.into(),
            source,
        }
    }

    /// The HTTP status of the server's refusal, if the server answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            MigrationError::Api { source, .. } => status_code(source),
            _ => None,
        }
    }
}

/// The CRD to migrate, as read before anything else.
#[derive(Clone, Debug)]
pub struct Target {
    pub crd: String,
    pub plural: String,
    pub kind: String,
    pub group: String,
    pub storage: String,
    pub stored_versions: Vec<String>,
    pub generation: i64,
    /// The CRD as the engine reads it (to judge its objects).
    pub definition: crd_audit_engine::Crd,
}

impl Target {
    /// Whether `status.storedVersions` is the storage version alone: nothing to migrate.
    pub fn migrated(&self) -> bool {
        self.stored_versions == [self.storage.clone()]
    }

    fn objects(&self) -> ApiResource {
        object_resource(&self.definition, &self.storage)
    }
}

/// Reads the CRD named `name`.
pub async fn target(client: &kube::Client, name: &str) -> Result<Target, MigrationError> {
    let ar = crd_resource();
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
    let raw = retrying(|| api.get_opt(name))
        .await
        .map_err(|e| MigrationError::api(format!("reading the CRD {name}"), e))?
        .ok_or_else(|| MigrationError::NoSuchCrd(name.to_string()))?;
    let raw = object_value(raw, &ar);
    target_of(&raw)
}

/// The target of a CRD the server served.
pub fn target_of(raw: &Value) -> Result<Target, MigrationError> {
    let definition =
        crate::audit::read_crd::read_crd(raw).map_err(|e| MigrationError::UnreadableCrd {
            crd: e.name.clone(),
            reason: e.reason,
        })?;
    let storage = definition
        .storage_version()
        .map(|v| v.name.clone())
        .ok_or_else(|| MigrationError::NoStorageVersion(definition.name.clone()))?;
    let stored_versions = raw["status"]["storedVersions"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    Ok(Target {
        crd: definition.name.clone(),
        plural: definition.plural.clone(),
        kind: definition.kind.clone(),
        group: definition.group.clone(),
        storage,
        stored_versions,
        generation: raw["metadata"]["generation"].as_i64().unwrap_or(0),
        definition,
    })
}

/// An object the migration could not rewrite, or will not be able to.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    pub namespace: String,
    pub name: String,
    /// The server's message (a rewrite), or the one it would answer (the preflight).
    pub message: String,
}

/// What the preflight found.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Preflight {
    pub objects: u64,
    pub stuck: u64,
}

/// Judges every stored object of the target with `judge` (the first error of its refused
/// unchanged update, `None` when the update is accepted), handing each stuck one to `stuck`.
/// One page at a time; stops early (with what it counted) when `stop` is set.
pub async fn preflight(
    client: &kube::Client,
    target: &Target,
    judge: &mut impl FnMut(Value) -> Option<String>,
    stuck: &mut impl FnMut(Refusal),
    stop: &AtomicBool,
) -> Result<Preflight, MigrationError> {
    let ar = target.objects();
    let mut found = Preflight::default();
    each_page(client, &ar, stop, &mut |page| {
        for item in page {
            let namespace = item.metadata.namespace.clone().unwrap_or_default();
            let name = item.metadata.name.clone().unwrap_or_default();
            found.objects += 1;
            if let Some(message) = judge(object_value(item, &ar)) {
                found.stuck += 1;
                stuck(Refusal {
                    namespace,
                    name,
                    message,
                });
            }
        }
        Ok(())
    })
    .await?;
    Ok(found)
}

/// What the rewrite did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rewrite {
    /// Objects listed.
    pub objects: u64,
    /// Objects the server took back (written at the storage version, or found there).
    pub rewritten: u64,
    /// Objects deleted before their turn.
    pub gone: u64,
    /// Objects whose rewrite the server refused.
    pub refused: u64,
    /// Objects another writer wrote after they were listed (their write conflicted): that
    /// write stored them at the storage version; they were not sent again.
    pub written_by_others: u64,
    /// Stopped before the end (`stop` was set).
    pub interrupted: bool,
}

impl Rewrite {
    /// Every object listed was rewritten (or is gone): `storedVersions` may be pruned.
    pub fn complete(&self) -> bool {
        !self.interrupted
            && self.refused == 0
            && self.rewritten + self.written_by_others + self.gone == self.objects
    }

    /// Objects at the storage version now: rewritten, or written by another writer.
    pub fn migrated(&self) -> u64 {
        self.rewritten + self.written_by_others
    }

    /// Objects finished, whatever their outcome.
    pub fn finished(&self) -> u64 {
        self.migrated() + self.gone + self.refused
    }
}

/// Rewrites every object of the target at its storage version, paced by `pace`, handing each
/// refusal to `refused` and each finished object's count to `progress`.
pub async fn rewrite(
    client: &kube::Client,
    target: &Target,
    pace: &Writes,
    refused: &mut impl FnMut(Refusal),
    progress: &mut impl FnMut(&Rewrite),
    stop: &AtomicBool,
) -> Result<Rewrite, MigrationError> {
    let ar = target.objects();
    let mut done = Rewrite::default();
    // The pages are walked here, not by `each_page`: the writes of a page are async.
    let api_all: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
    let mut params = ListParams::default().limit(PAGE);
    loop {
        if stop.load(Ordering::Relaxed) {
            done.interrupted = true;
            return Ok(done);
        }
        let page = match list_page(&api_all, &mut params).await? {
            Some(p) => p,
            None => continue, // an expired token, followed
        };
        let next = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        done.objects += page.items.len() as u64;
        let mut writes = futures::stream::iter(page.items)
            .map(|obj| rewrite_one(client, &ar, obj, pace, stop))
            .buffered(IN_FLIGHT);
        while let Some(outcome) = writes.next().await {
            match outcome? {
                Written::Rewritten => done.rewritten += 1,
                Written::ByOther => done.written_by_others += 1,
                Written::Gone => done.gone += 1,
                Written::Refused(r) => {
                    done.refused += 1;
                    refused(r);
                }
                Written::Skipped => done.interrupted = true,
            }
            progress(&done);
        }
        match next {
            Some(token) if !done.interrupted => params = params.continue_token(&token),
            _ => {
                done.interrupted |= next.is_some();
                return Ok(done);
            }
        }
    }
}

enum Written {
    /// Taken back by the server.
    Rewritten,
    /// Written by another writer after it was listed (a conflict).
    ByOther,
    Gone,
    Refused(Refusal),
    /// Not tried: the migration is stopping.
    Skipped,
}

/// Sends one object back unchanged, as listed (its resourceVersion a precondition).
async fn rewrite_one(
    client: &kube::Client,
    ar: &ApiResource,
    obj: DynamicObject,
    pace: &Writes,
    stop: &AtomicBool,
) -> Result<Written, MigrationError> {
    let namespace = obj.metadata.namespace.clone();
    let name = obj.metadata.name.clone().unwrap_or_default();
    let api: Api<DynamicObject> = match &namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, ar),
        None => Api::all_with(client.clone(), ar),
    };
    let params = PostParams::default();
    if stop.load(Ordering::Relaxed) {
        return Ok(Written::Skipped);
    }
    pace.turn().await;
    // A 404 that does not name the object is its resource not served (yet): an API server
    // that is starting serves custom resources only once it has read their CRDs.
    let unserved = |e: &kube::Error| status_code(e) == Some(404) && !names(e, &name);
    let Err(e) = retrying_when(
        |e| transient(e) || unserved(e),
        || api.replace(&name, &params, &obj),
    )
    .await
    else {
        return Ok(Written::Rewritten);
    };
    match status_code(&e) {
        Some(404) if names(&e, &name) => Ok(Written::Gone),
        // Its resourceVersion (or uid) is not the one listed: written (or deleted and created
        // again) since, and stored at the storage version by that write.
        Some(409) => Ok(Written::ByOther),
        Some(401 | 403) => Err(MigrationError::api(
            format!(
                "rewriting {}{name} (the migration needs get, list and update on {}.{})",
                namespace
                    .as_deref()
                    .map(|n| format!("{n}/"))
                    .unwrap_or_default(),
                ar.plural,
                ar.group
            ),
            e,
        )),
        Some(_) => Ok(Written::Refused(Refusal {
            namespace: namespace.unwrap_or_default(),
            name,
            message: server_message(&e),
        })),
        None => Err(MigrationError::api(format!("rewriting {name}"), e)),
    }
}

/// The message of the server's Status, as kubectl prints it.
fn server_message(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) => s.message.clone(),
        other => other.to_string(),
    }
}

/// How the prune ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Prune {
    /// `status.storedVersions` is now the storage version alone.
    Pruned,
    /// The CRD changed during the migration (its generation or storage version): nothing was
    /// pruned; a new run migrates to the new revision.
    CrdChanged { generation: i64, storage: String },
    /// The CRD is gone.
    CrdGone,
}

/// Sets `status.storedVersions` to the storage version alone, if the CRD is still at the
/// generation and storage version the migration started from.
pub async fn prune(
    client: &kube::Client,
    target: &Target,
    pace: &Writes,
) -> Result<Prune, MigrationError> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for _ in 0..CONFLICT_ATTEMPTS {
        let Some(mut crd) = retrying(|| api.get_opt(&target.crd))
            .await
            .map_err(|e| MigrationError::api(format!("reading the CRD {}", target.crd), e))?
        else {
            return Ok(Prune::CrdGone);
        };
        let generation = crd.metadata.generation.unwrap_or(0);
        let storage = crd
            .spec
            .versions
            .iter()
            .find(|v| v.storage)
            .map(|v| v.name.clone())
            .unwrap_or_default();
        if generation != target.generation || storage != target.storage {
            return Ok(Prune::CrdChanged {
                generation,
                storage,
            });
        }
        let status = crd.status.get_or_insert_with(Default::default);
        status.stored_versions = Some(vec![target.storage.clone()]);
        pace.turn().await;
        // The body carries the resourceVersion read: a write in between is a conflict.
        match api
            .replace_status(&target.crd, &PostParams::default(), &crd)
            .await
        {
            Ok(_) => return Ok(Prune::Pruned),
            Err(e) if status_code(&e) == Some(409) => continue,
            Err(e) => {
                return Err(MigrationError::api(
                    format!("writing status.storedVersions of {}", target.crd),
                    e,
                ));
            }
        }
    }
    Err(MigrationError::Judge(format!(
        "the CRD {} changed {CONFLICT_ATTEMPTS} times while its storedVersions were written",
        target.crd
    )))
}

/// The storage migration API the server offers (`storagemigration.k8s.io`, from 1.30 alpha,
/// beta from 1.35, off by default): its group version, if served.
pub async fn served_migration_api(client: &kube::Client) -> Option<String> {
    let groups = client.list_api_groups().await.ok()?;
    groups
        .groups
        .iter()
        .find(|g| g.name == "storagemigration.k8s.io")
        .and_then(|g| {
            g.preferred_version
                .as_ref()
                .map(|v| v.group_version.clone())
                .or_else(|| g.versions.first().map(|v| v.group_version.clone()))
        })
}

/// How a migration the API server ran ended.
#[derive(Clone, Debug, PartialEq)]
pub enum ServerMigration {
    Succeeded {
        name: String,
    },
    /// The server's `Failed` condition: it stopped at the first object it could not rewrite.
    Failed {
        name: String,
        message: String,
    },
}

/// Has the API server migrate the target's objects: creates a `StorageVersionMigration` of
/// `group_version` (`storagemigration.k8s.io/v1beta1` from 1.35: `spec.resource` is the group
/// and resource; `v1alpha1` before: with the version too) and reads it every `poll` until its
/// `Succeeded` or `Failed` condition is `True`, or `stop` is set (`None`: the migration goes
/// on on the server).
pub async fn server_migration(
    client: &kube::Client,
    target: &Target,
    group_version: &str,
    poll: Duration,
    stop: &AtomicBool,
) -> Result<Option<ServerMigration>, MigrationError> {
    let version = group_version.rsplit('/').next().unwrap_or(group_version);
    let ar = ApiResource {
        group: "storagemigration.k8s.io".into(),
        version: version.into(),
        api_version: group_version.into(),
        kind: "StorageVersionMigration".into(),
        plural: "storageversionmigrations".into(),
    };
    let mut resource = serde_json::json!({"group": target.group, "resource": target.plural});
    if version == "v1alpha1" {
        resource["version"] = serde_json::json!(target.storage);
    }
    let body: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": group_version, "kind": "StorageVersionMigration",
        "metadata": {"generateName": format!("{}-", target.crd)},
        "spec": {"resource": resource}}))
    .map_err(|e| MigrationError::Judge(format!("building the StorageVersionMigration: {e}")))?;
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &ar);
    // Not retried: a create with generateName sent twice makes two migrations.
    let created = api
        .create(&PostParams::default(), &body)
        .await
        .map_err(|e| MigrationError::api("creating a StorageVersionMigration", e))?;
    let name = created.metadata.name.clone().unwrap_or_default();
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let now = retrying(|| api.get(&name)).await.map_err(|e| {
            MigrationError::api(format!("reading the StorageVersionMigration {name}"), e)
        })?;
        let conditions = now.data["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let holds = |ty: &str| {
            conditions
                .iter()
                .find(|c| c["type"] == ty && c["status"] == "True")
                .map(|c| c["message"].as_str().unwrap_or("").to_string())
        };
        if holds("Succeeded").is_some() {
            return Ok(Some(ServerMigration::Succeeded { name }));
        }
        if let Some(message) = holds("Failed") {
            return Ok(Some(ServerMigration::Failed { name, message }));
        }
        tokio::time::sleep(poll).await;
    }
}

/// Every page of a LIST, handed to `each` (one page held at a time), until `stop` is set.
async fn each_page(
    client: &kube::Client,
    ar: &ApiResource,
    stop: &AtomicBool,
    each: &mut impl FnMut(Vec<DynamicObject>) -> Result<(), MigrationError>,
) -> Result<(), MigrationError> {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), ar);
    let mut params = ListParams::default().limit(PAGE);
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let Some(page) = list_page(&api, &mut params).await? else {
            continue;
        };
        let next = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        each(page.items)?;
        match next {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(()),
        }
    }
}

/// One page; `None` when the continuation token expired and `params` now holds the one the
/// server offered (the rest of the list from a newer snapshot: objects written since are at
/// the storage version already).
async fn list_page(
    api: &Api<DynamicObject>,
    params: &mut ListParams,
) -> Result<Option<ObjectList<DynamicObject>>, MigrationError> {
    match retrying(|| api.list(params)).await {
        Ok(page) => Ok(Some(page)),
        Err(kube::Error::Api(s)) if s.code == 410 && params.continue_token.is_some() => {
            match s.metadata.as_ref().and_then(|m| m.continue_.clone()) {
                Some(token) if !token.is_empty() => {
                    *params = params.clone().continue_token(&token);
                    Ok(None)
                }
                _ => Err(MigrationError::api(
                    "listing the objects",
                    kube::Error::Api(s),
                )),
            }
        }
        Err(e) => Err(MigrationError::api("listing the objects", e)),
    }
}

/// Whether a failed request may succeed when sent again: no answer at all (the connection
/// failed), too many requests, or a server error.
fn transient(e: &kube::Error) -> bool {
    match status_code(e) {
        None => matches!(e, kube::Error::HyperError(_) | kube::Error::Service(_)),
        Some(code) => code == 429 || code >= 500,
    }
}

/// Whether the server's answer is about the object `name` (a Status whose details name it),
/// not about the request's path: a 404 that names the object says it was deleted.
fn names(e: &kube::Error, name: &str) -> bool {
    matches!(e, kube::Error::Api(s) if s.details.as_ref().is_some_and(|d| d.name == name))
}

/// Sends a request until it succeeds, fails for good, or the server has been away for
/// [`OUTAGE`] (an API server restart, a throttling storm), pausing with jittered backoff.
async fn retrying<T, F: std::future::Future<Output = Result<T, kube::Error>>>(
    request: impl FnMut() -> F,
) -> Result<T, kube::Error> {
    retrying_when(transient, request).await
}

/// [`retrying`], with `again` saying which failures are tried again.
async fn retrying_when<T, F: std::future::Future<Output = Result<T, kube::Error>>>(
    again: impl Fn(&kube::Error) -> bool,
    mut request: impl FnMut() -> F,
) -> Result<T, kube::Error> {
    let mut backoff = crate::cluster::backoff::OUTAGE.backoff();
    let started = tokio::time::Instant::now();
    loop {
        match request().await {
            Err(e) if again(&e) && started.elapsed() < OUTAGE => {
                tokio::time::sleep(backoff.next_delay()).await;
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests;
