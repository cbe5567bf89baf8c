//! The `StorageMigrated` condition of a report.

use super::{Inputs, condition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

/// `StorageMigrated`: whether `status.storedVersions` is the storage version alone (an old
/// version can leave the CRD), else what keeps it from being: objects to rewrite at the
/// storage version (`MigrationNeeded`), some of them stuck, whose rewrite the server refuses
/// (`MigrationBlocked`, naming the first).
pub(super) fn storage_migrated(i: &Inputs) -> Condition {
    let g = i.crd.generation;
    let storage = i.crd.storage_version().map(|v| v.name.as_str());
    let stored = &i.crd.stored_versions;
    let listed = format!("[{}]", stored.join(" "));
    match storage {
        Some(s) if stored.len() == 1 && stored[0] == s => {
            return condition(
                "StorageMigrated",
                "True",
                "Migrated",
                format!("status.storedVersions is {listed}: the storage version alone"),
                g,
            );
        }
        // The server adds the storage version when the CRD is written; until then there is
        // nothing to migrate to.
        None => {
            return condition(
                "StorageMigrated",
                "Unknown",
                "NoStorageVersion",
                "the CRD has no storage version".into(),
                g,
            );
        }
        Some(_) => {}
    }
    let storage = storage.unwrap_or_default();
    if let Some(msg) = i.forbidden {
        return condition("StorageMigrated", "Unknown", "Forbidden", msg.into(), g);
    }
    if !i.audited {
        return condition(
            "StorageMigrated",
            "Unknown",
            "Auditing",
            format!(
                "status.storedVersions is {listed}; the stored objects are being judged at {storage}"
            ),
            g,
        );
    }
    let objects: usize = i.audit.objects.values().sum();
    let stuck = i.audit.blocked_count();
    let first = i.audit.invalid.iter().find(|(_, inv)| inv.updates_blocked);
    match first {
        Some(((ns, name), inv)) => {
            let who = if ns.is_empty() {
                name.clone()
            } else {
                format!("{ns}/{name}")
            };
            condition(
                "StorageMigrated",
                "False",
                "MigrationBlocked",
                format!(
                    "status.storedVersions is {listed}: {objects} stored object(s) to rewrite at {storage}, \
                     {stuck} stuck (the server refuses their rewrite), the first {who}: {}; fix them, then \
                     crd-audit migrate {} (--dry-run lists them)",
                    inv.errors.first().map(String::as_str).unwrap_or(""),
                    i.crd.name
                ),
                g,
            )
        }
        None => condition(
            "StorageMigrated",
            "False",
            "MigrationNeeded",
            format!(
                "status.storedVersions is {listed}: {objects} stored object(s) to rewrite at {storage}, 0 stuck: \
                 crd-audit migrate {} (or the configuration's migrateStoredVersions: true) rewrites them and prunes it",
                i.crd.name
            ),
            g,
        ),
    }
}
