//! Storage version migration by the leader (`migrateStoredVersions: true`): when a CRD's
//! report says `StorageMigrated: False` with reason `MigrationNeeded` (objects to rewrite at
//! the storage version, none of them stuck), the leader rewrites them and prunes
//! `status.storedVersions` as `crd-audit migrate` does (`crate::migration`), paced by
//! `apiQps`. A migration runs as a task of the leadership term: it ends with the term (a
//! standby never writes), and the next leader starts it again from the report (a rewrite that
//! changes nothing costs no etcd write). Its end is a metric; the `StorageMigrated` Event
//! comes from the condition's transition once the server's `storedVersions` says so; objects
//! the server refused are a `StorageMigrationBlocked` Event, and the CRD is tried again only
//! after a backoff (or a change of the CRD).

pub mod tasks;

use crate::audit::schema_audit::SchemaAuditStatus;
use crate::migration::{self, Pace, Prune, Refusal};
use crate::operator::events::PendingEvent;
use crate::operator::leadership::context::{Ctx, Deps, crd_reference};
use crate::operator::migrations::tasks::Entry;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use tokio::time::Instant;

/// The objects a StorageMigrationBlocked Event names.
const NAMED: usize = 5;
/// The first wait after a migration the server refused, doubling up to `fullResyncInterval`.
const FIRST_RETRY: Duration = Duration::from_secs(60);

/// Starts the CRD's migration if its report calls for one and none runs (or waits to be
/// tried again on this revision). `revision`: the CRD's resourceVersion. The migration's
/// task gets the dependencies, the states (to say it ended) and the term's migrations.
pub fn ensure(ctx: &Ctx, crd: &str, revision: &str, status: &SchemaAuditStatus) {
    if !ctx.deps.config.migrate_stored_versions {
        return;
    }
    let needed = status
        .conditions
        .iter()
        .any(|c| c.type_ == "StorageMigrated" && c.reason == "MigrationNeeded");
    let mut running = ctx.migrations.lock();
    if !needed {
        // Migrated (or blocked by stuck objects): nothing to run; a retry wait is void.
        if running.get(crd).is_some_and(|e| e.task.is_none()) {
            running.remove(crd);
        }
        return;
    }
    if let Some(e) = running.get(crd) {
        if e.task.as_ref().is_some_and(|t| !t.is_finished()) {
            return;
        }
        if let Some((rev, at, _)) = &e.retry
            && rev == revision
            && Instant::now() < *at
        {
            return;
        }
    }
    let backoff = running
        .get(crd)
        .and_then(|e| e.retry.as_ref())
        .filter(|(rev, _, _)| rev == revision)
        .map(|(_, _, wait)| *wait);
    let (deps, states, migrations) = (
        ctx.deps.clone(),
        ctx.crds.states.clone(),
        ctx.migrations.clone(),
    );
    let (name, rev) = (crd.to_string(), revision.to_string());
    let task = tokio::spawn(async move {
        let result = run(&deps, &name).await;
        let mut running = migrations.lock();
        let entry = running.entry(name.clone()).or_insert(Entry {
            task: None,
            retry: None,
        });
        entry.task = None;
        entry.retry = (result != "pruned").then(|| {
            let max = deps.config.full_resync_interval.max(FIRST_RETRY);
            let wait = backoff.map_or(FIRST_RETRY, |w| (w * 2).min(max));
            // A new revision (the storage version changed, say) is tried at once.
            let wait = if result == "crd_changed" {
                Duration::ZERO
            } else {
                wait
            };
            (rev, Instant::now() + wait, wait.max(FIRST_RETRY))
        });
        drop(running);
        // The report says what the migration did, once the server says it.
        states.changed(&name);
    });
    running.insert(
        crd.to_string(),
        Entry {
            task: Some(task),
            retry: None,
        },
    );
}

/// One migration of one CRD; its result (the metric's label).
async fn run(deps: &Deps, name: &str) -> &'static str {
    let client = &deps.client;
    let stop = AtomicBool::new(false);
    let result: Result<&'static str, migration::MigrationError> = async {
        let target = migration::target(client, name).await?;
        if target.migrated() {
            return Ok("pruned");
        }
        tracing::info!(
            crd = name,
            storage = %target.storage,
            stored_versions = ?target.stored_versions,
            "migrating the stored objects to the storage version"
        );
        let pace = Pace::new(deps.config.api_qps);
        let mut refused: Vec<Refusal> = Vec::new();
        let mut count = 0u64;
        let done = migration::rewrite(
            client,
            &target,
            &pace,
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
            deps.events.push(PendingEvent {
                warning: true,
                reason: "StorageMigrationBlocked".into(),
                note,
                regarding: crd_reference(&target.definition),
            });
            return Ok("blocked");
        }
        Ok(match migration::prune(client, &target).await? {
            Prune::Pruned => {
                tracing::info!(
                    crd = name,
                    rewritten = done.rewritten,
                    written_by_others = done.written_by_others,
                    storage = %target.storage,
                    "storage migration done: storedVersions pruned"
                );
                "pruned"
            }
            Prune::CrdChanged { .. } => "crd_changed",
            Prune::CrdGone => "crd_changed",
        })
    }
    .await;
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(crd = name, error = %e, "storage migration failed; tried again later");
            "failed"
        }
    };
    deps.metrics.storage_migration(result);
    result
}
