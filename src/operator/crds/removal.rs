//! A CRD that went away (deleted, gone while the CRD watch was down, or no longer audited):
//! its object audit stops, its metrics go, and its report is deleted (retried with backoff).

use crate::audit::schema_audit::SchemaAudit;
use crate::operator::leadership::context::Ctx;
use kube::api::{Api, DeleteParams};
use std::sync::Arc;

/// A CRD went away (or is no longer audited): stop its audit, forget its metrics, and delete
/// its report (retried with backoff until it is gone, unless the CRD comes back first).
#[tracing::instrument(name = "remove", skip_all, fields(crd = name))]
pub(crate) fn remove(ctx: &Arc<Ctx>, name: &str) {
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
    let (ctx, name) = (ctx.clone(), name.to_string());
    tokio::spawn(async move { delete_report(&ctx, &name).await });
}

async fn delete_report(ctx: &Ctx, name: &str) {
    let api: Api<SchemaAudit> = Api::all(ctx.deps.client.clone());
    let mut backoff = crate::cluster::backoff::API_CALL.backoff();
    loop {
        if !ctx
            .signals
            .reports_served
            .load(std::sync::atomic::Ordering::SeqCst)
            || ctx.registry().contains_key(name)
            || *ctx.signals.stopping.borrow()
        {
            return; // it went with the report CRD; or its CRD is back; or stopping
        }
        ctx.deps.limiter.acquire().await;
        ctx.deps.metrics.api_write("delete");
        match api.delete(name, &DeleteParams::default()).await {
            Ok(_) => {
                tracing::info!(crd = name, "CRD removed; report deleted");
                return;
            }
            Err(kube::Error::Api(s)) if s.code == 404 => return,
            Err(e) => {
                ctx.deps.metrics.api_error("delete");
                let wait = backoff.next_delay();
                tracing::error!(crd = name, error = %e, retry_in = ?wait, "deleting the report failed");
                tokio::time::sleep(wait).await;
            }
        }
    }
}
