//! Storage version migration by the leader (`migrateStoredVersions: true`): when a CRD's
//! report says `StorageMigrated: False` with reason `MigrationNeeded` (objects to rewrite at
//! the storage version, none of them stuck), the leader rewrites them and prunes
//! `status.storedVersions` as `crd-audit migrate` does (`crate::migration`), paced by
//! `apiQps` (last of the term's writers). A migration runs as a task of the leadership term: it ends with the term (a
//! standby never writes), and the next leader starts it again from the report (a rewrite that
//! changes nothing costs no etcd write). Its end is a metric; the `StorageMigrated` Event
//! comes from the condition's transition once the server's `storedVersions` says so; objects
//! the server refused are a `StorageMigrationBlocked` Event, and the CRD is tried again only
//! after a backoff (or a change of the CRD).

pub mod tasks;

use crate::audit::schema_audit::SchemaAuditStatus;
use crate::cluster::write_budget::Writes;
use crate::migration::{self, Prune, Refusal};
use crate::operator::events::{EventQueue, PendingEvent, crd_reference};
use crate::operator::metrics::Metrics;
use crate::operator::migrations::tasks::{Entry, Migrations, Outcome};
use crate::operator::state::CrdStates;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use tokio::time::Instant;

/// The objects a StorageMigrationBlocked Event names.
const NAMED: usize = 5;
/// The first wait after a migration the server refused, doubling up to `fullResyncInterval`.
const FIRST_RETRY: Duration = Duration::from_secs(60);

/// What the storage migrations of a leadership term use (`migrateStoredVersions: true`):
/// the client, their share of the write budget (last in line), the Event queue, the metrics,
/// the states (to say a migration ended), and the migrations running.
#[derive(Clone)]
pub struct Migrator {
    pub client: kube::Client,
    pub writes: Writes,
    pub events: Arc<EventQueue>,
    pub metrics: Arc<Metrics>,
    pub states: Arc<CrdStates>,
    /// `fullResyncInterval`: the longest wait before a refused migration is tried again.
    pub resync: Duration,
    pub running: Arc<Migrations>,
}

/// Starts the CRD's migration to its storage version `storage` if its report calls for one
/// (`MigrationNeeded`: `status.storedVersions` holds an old version, and no stored object is
/// stuck) and no task runs for that CRD and storage version, nor waits to be tried again on
/// this revision. `revision`: the CRD's resourceVersion as the reconcile read it. A task that
/// ended settled (it pruned, or found nothing to prune) is not started again on the revision
/// it ran on: the CRD as read then still shows the old versions until it is read again. The
/// migration's task gets the migrator.
pub fn ensure(m: &Migrator, crd: &str, revision: &str, storage: &str, status: &SchemaAuditStatus) {
    let needed = status
        .conditions
        .iter()
        .any(|c| c.type_ == "StorageMigrated" && c.reason == "MigrationNeeded");
    let mut running = m.running.lock();
    if let Some(e) = running.get(crd)
        && e.storage != storage
    {
        // Another storage version: its migration is void (a new one may start below).
        if let Some(t) = running.remove(crd).and_then(|e| e.task) {
            t.abort();
        }
    }
    if !needed {
        // Migrated (or blocked by stuck objects): nothing to run; a retry wait is void.
        if running.get(crd).is_some_and(|e| !e.running()) {
            running.remove(crd);
        }
        return;
    }
    if let Some(e) = running.get(crd) {
        if e.running() {
            return;
        }
        if let Some((rev, at, _)) = &e.retry
            && rev == revision
            && (Instant::now() < *at || e.ended.is_some_and(Outcome::settled))
        {
            return;
        }
    }
    let backoff = running
        .get(crd)
        .and_then(|e| e.retry.as_ref())
        .filter(|(rev, _, _)| rev == revision)
        .map(|(_, _, wait)| *wait);
    let m = m.clone();
    let (name, rev, to) = (crd.to_string(), revision.to_string(), storage.to_string());
    let task = tokio::spawn(async move {
        let outcome = run(&m, &name, &to).await;
        let mut running = m.running.lock();
        let Some(entry) = running.get_mut(&name).filter(|e| e.storage == to) else {
            return; // replaced by a migration to another storage version
        };
        entry.task = None;
        entry.ended = Some(outcome);
        let max = m.resync.max(FIRST_RETRY);
        let wait = match outcome {
            // Not again on this revision (the next read of the CRD shows what it did).
            Outcome::Pruned | Outcome::NotNeeded => max,
            // A new revision (the storage version changed, say) is tried at once.
            Outcome::CrdChanged => Duration::ZERO,
            Outcome::Blocked | Outcome::Failed => backoff.map_or(FIRST_RETRY, |w| (w * 2).min(max)),
        };
        entry.retry = Some((rev, Instant::now() + wait, wait.max(FIRST_RETRY)));
        drop(running);
        // The report says what the migration did, once the server says it.
        m.states.migration_ended(&name);
    });
    running.insert(
        crd.to_string(),
        Entry {
            storage: storage.to_string(),
            task: Some(task),
            ended: None,
            retry: None,
        },
    );
}

/// One migration of one CRD to the storage version `storage`; how it ended (counted in the
/// metric unless there was nothing to do).
async fn run(m: &Migrator, name: &str, storage: &str) -> Outcome {
    let client = &m.client;
    let stop = AtomicBool::new(false);
    let result: Result<Outcome, migration::MigrationError> = async {
        let target = migration::target(client, name).await?;
        if target.storage != storage {
            return Ok(Outcome::CrdChanged);
        }
        if target.migrated() {
            return Ok(Outcome::NotNeeded);
        }
        tracing::info!(
            crd = name,
            storage = %target.storage,
            stored_versions = ?target.stored_versions,
            "migrating the stored objects to the storage version"
        );
        // Within the term's one write budget, after every other kind of write.
        let pace = &m.writes;
        let mut refused: Vec<Refusal> = Vec::new();
        let mut count = 0u64;
        let done = migration::rewrite(
            client,
            &target,
            pace,
            &mut |r| {
                count += 1;
                if refused.len() < NAMED {
                    refused.push(r);
                }
            },
            &mut |_| {},
            &stop,
        )
        .await?;
        if !done.complete() {
            let list: Vec<String> = refused
                .iter()
                .map(|r| {
                    let who = if r.namespace.is_empty() {
                        r.name.clone()
                    } else {
                        format!("{}/{}", r.namespace, r.name)
                    };
                    format!("{who}: {}", r.message)
                })
                .collect();
            let note = format!(
                "the API server refused the rewrite of {count} of {} stored object(s) at {}, so status.storedVersions \
                 keeps [{}]: {}",
                done.objects,
                target.storage,
                target.stored_versions.join(" "),
                list.join("; ")
            );
            tracing::warn!(crd = name, refused = count, "storage migration blocked");
            m.events.push(PendingEvent {
                warning: true,
                reason: "StorageMigrationBlocked".into(),
                note,
                regarding: crd_reference(&target.definition),
            });
            return Ok(Outcome::Blocked);
        }
        Ok(match migration::prune(client, &target, pace).await? {
            Prune::Pruned => {
                tracing::info!(
                    crd = name,
                    rewritten = done.rewritten,
                    written_by_others = done.written_by_others,
                    storage = %target.storage,
                    "storage migration done: storedVersions pruned"
                );
                Outcome::Pruned
            }
            Prune::CrdChanged { .. } | Prune::CrdGone => Outcome::CrdChanged,
        })
    }
    .await;
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(crd = name, error = %e, "storage migration failed; tried again later");
            Outcome::Failed
        }
    };
    if let Some(label) = result.label() {
        m.metrics.storage_migration(label);
    }
    result
}
