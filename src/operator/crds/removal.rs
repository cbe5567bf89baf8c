//! A CRD that went away (deleted, gone while the CRD watch was down, or no longer audited):
//! its object audit stops, its metrics go, and its report is deleted (by the writer task,
//! retried with backoff).

use crate::operator::leadership::context::Ctx;

/// A CRD went away (or is no longer audited): stop its audit, forget its metrics, and delete
/// its report (retried with backoff until it is gone, unless the CRD comes back first).
#[tracing::instrument(name = "remove", skip_all, fields(crd = name))]
pub(crate) fn remove(ctx: &Ctx, name: &str) {
    ctx.deps.validators.forget(name);
    ctx.retries().remove(name);
    ctx.migrations.stop(name);
    ctx.crds.audits.stop(name);
    let Some(t) = ctx.registry().remove(name) else {
        return;
    };
    let versions: Vec<String> = t.crd().versions.iter().map(|v| v.name.clone()).collect();
    drop(t);
    ctx.deps.metrics.forget_crd(name, &versions);
    ctx.policy_changed();
    // The writer deletes the report (retried until it is gone, unless the CRD comes back).
    ctx.crds.reports.push_removed(name);
}
