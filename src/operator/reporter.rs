//! Writing what the audits found: the `SchemaAudit` reports (server-side apply under the
//! field manager `crd-audit`, whenever the status differs from what was last written or the
//! report is missing, with backoff after a failure), the metrics per CRD, and the Event pump
//! (an Event that could not be written stays queued and is retried; none is dropped).

use super::controller::{Ctx, Tracked, crd_reference};
use super::events::PendingEvent;
use super::metrics::{CrdLabels, VersionLabels};
use super::report_status::{self, Inputs};
use super::schema_audit::{SchemaAudit, SchemaAuditSpec, SchemaAuditStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use kube::api::{Api, Patch, PatchParams};
use std::sync::Arc;
use std::time::{Duration, Instant};

const FIELD_MANAGER: &str = "crd-audit";
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// The status a tracked CRD's report should have now (without times).
fn desired(ctx: &Ctx, t: &Tracked) -> SchemaAuditStatus {
    let blocked = t.blocked.as_ref().map(|(_, m)| m.as_str());
    let mut s = report_status::status(&Inputs {
        crd: &t.crd,
        check: &t.check,
        audit: &t.audit,
        audited: t.audited,
        forbidden: blocked,
        last_change: t.last_change.as_ref(),
        max_listed: ctx.config.max_listed_objects,
        audit_seconds: t.audit_seconds,
        internal_errors: t.audit.internal_errors(),
    });
    if let (Some((reason, _)), Some(c)) = (
        &t.blocked,
        s.conditions
            .iter_mut()
            .find(|c| c.type_ == "InstancesValid"),
    ) {
        c.reason = reason.clone();
    }
    s.last_audit_time = t.audited_at.clone();
    s
}

fn publish_metrics(ctx: &Ctx, t: &Tracked, s: &SchemaAuditStatus) {
    for v in &s.versions {
        let l = VersionLabels {
            crd: t.crd.name.clone(),
            version: v.name.clone(),
        };
        ctx.metrics.objects.get_or_create(&l).set(v.objects);
        ctx.metrics
            .invalid_objects
            .get_or_create(&l)
            .set(v.invalid_objects);
        ctx.metrics
            .blocked_objects
            .get_or_create(&l)
            .set(v.blocked_objects);
    }
    ctx.metrics
        .nonstructural_versions
        .get_or_create(&CrdLabels {
            crd: t.crd.name.clone(),
        })
        .set(s.versions.iter().filter(|v| !v.structural).count() as i64);
}

/// The report object to apply, with its status stamped.
fn report_object(t: &mut Tracked, mut status: SchemaAuditStatus) -> SchemaAudit {
    let now = Time(k8s_openapi::jiff::Timestamp::now());
    report_status::stamp(&mut status, &mut t.times, &now);
    let mut r = SchemaAudit::new(
        &t.crd.name,
        SchemaAuditSpec {
            audited_revision: report_status::audited_revision(&t.crd),
        },
    );
    r.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "apiextensions.k8s.io/v1".into(),
        kind: "CustomResourceDefinition".into(),
        name: t.crd.name.clone(),
        uid: t.crd.uid.clone(),
        controller: Some(true),
        block_owner_deletion: Some(false),
    }])
    .filter(|_| !t.crd.uid.is_empty());
    r.status = Some(status);
    r
}

/// Writes reports while the controller runs.
pub async fn write_reports(ctx: Arc<Ctx>) {
    loop {
        tokio::select! {
            _ = ctx.changed.notified() => {}
            _ = tokio::time::sleep(Duration::from_secs(2)) => {}
        }
        ctx.policy_changed.notify_one();
        // Let a burst of changes settle into one write.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let names: Vec<String> = ctx.registry().keys().cloned().collect();
        for name in names {
            let job = {
                let mut reg = ctx.registry();
                let Some(t) = reg.get_mut(&name) else {
                    continue;
                };
                let st = desired(&ctx, t);
                publish_metrics(&ctx, t, &st);
                if t.audited {
                    for (warning, reason, note) in
                        report_status::condition_events(t.evented.as_ref(), &st)
                    {
                        ctx.queue_event(PendingEvent {
                            warning,
                            reason: reason.into(),
                            note,
                            regarding: crd_reference(&t.crd),
                        });
                    }
                    t.evented = Some(st.clone());
                }
                let due = t.retry_at.is_none_or(|at| Instant::now() >= at);
                if t.written.as_ref() == Some(&st) || !due {
                    continue;
                }
                (report_object(t, st.clone()), st, t.epoch)
            };
            let (object, st, epoch) = job;
            let result = apply(&ctx, &object).await;
            let mut reg = ctx.registry();
            let Some(t) = reg.get_mut(&name).filter(|t| t.epoch == epoch) else {
                continue;
            };
            match result {
                Ok(()) => {
                    t.written = Some(st);
                    t.retry_at = None;
                    t.backoff = Duration::from_secs(1);
                }
                Err(e) => {
                    tracing::error!(crd = %name, error = %e, retry_in = ?t.backoff, "writing the report failed");
                    t.retry_at = Some(Instant::now() + t.backoff);
                    t.backoff = (t.backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }
}

/// Server-side apply of the report and of its status.
async fn apply(ctx: &Ctx, object: &SchemaAudit) -> Result<(), String> {
    let api: Api<SchemaAudit> = Api::all(ctx.client.clone());
    let name = object.metadata.name.clone().unwrap_or_default();
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let mut main = object.clone();
    main.status = None;
    for (body, status) in [(&main, false), (object, true)] {
        ctx.limiter.acquire().await;
        ctx.metrics.api_write("patch");
        let r = if status {
            api.patch_status(&name, &params, &Patch::Apply(body)).await
        } else {
            api.patch(&name, &params, &Patch::Apply(body)).await
        };
        if let Err(e) = r {
            ctx.metrics.api_error("patch");
            return Err(super::client::describe(&e));
        }
    }
    Ok(())
}

/// Writes queued Events in order; one that fails is retried (with backoff) before the next.
pub async fn pump_events(ctx: Arc<Ctx>) {
    let mut backoff = Duration::from_millis(500);
    loop {
        let next = ctx
            .queued_events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .front()
            .cloned();
        let Some(ev) = next else {
            ctx.event_queued.notified().await;
            continue;
        };
        match ctx.events.publish(&ev).await {
            Ok(()) => {
                let mut q = ctx.queued_events.lock().unwrap_or_else(|e| e.into_inner());
                if q.front() == Some(&ev) {
                    q.pop_front();
                }
                backoff = Duration::from_millis(500);
            }
            Err(e) => {
                tracing::error!(reason = %ev.reason, error = %e, retry_in = ?backoff, "writing an Event failed");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}
