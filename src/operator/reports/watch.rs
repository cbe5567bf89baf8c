//! The reports' metadata, watched by a task of the leadership term: a report deleted behind
//! the operator's back, or missing after a relist (the report CRD deleted and applied again),
//! is marked unwritten in the states, which wake its CRD's reconcile, so it is written again.
//! A report written (by the operator, or edited by someone) wakes nothing: the operator's own
//! writes cost no reconcile.

use crate::audit::schema_audit::SchemaAudit;
use crate::operator::metrics::Metrics;
use crate::operator::state::CrdStates;
use futures::StreamExt;
use kube::ResourceExt;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::watcher::{self, Event, watcher};
use std::sync::Arc;

/// Watches the reports until the term ends: a report deleted (or missing after a relist, as
/// when the report CRD was deleted and applied again) is marked unwritten, which wakes its
/// CRD's reconcile.
pub async fn watch_reports(client: kube::Client, metrics: Arc<Metrics>, states: Arc<CrdStates>) {
    let api: Api<PartialObjectMeta<SchemaAudit>> = Api::all(client);
    let (reports, writer) = reflector::store();
    let events = crate::operator::watch_backoff::with_backoff(
        watcher(api, watcher::Config::default()).boxed(),
        crate::operator::watch_backoff::SHORT,
    )
    // What the store keeps of a report: its name and owner (2,000 reports' managed
    // fields and annotations would be megabytes that nothing reads).
    .modify(|r| {
        r.managed_fields_mut().clear();
        r.annotations_mut().clear();
        r.labels_mut().clear();
    })
    .reflect(writer)
    .boxed();
    futures::pin_mut!(events);
    while let Some(ev) = events.next().await {
        match ev {
            Ok(Event::InitDone) => {
                states.reports_gone(|name| reports.get(&ObjectRef::new(name)).is_none());
            }
            Ok(Event::Delete(m)) => {
                let gone = m.name_any();
                states.reports_gone(|name| name == gone);
            }
            // Written: by the operator itself, which needs no reconcile for it.
            Ok(Event::Apply(_) | Event::InitApply(_) | Event::Init) => {}
            Err(e) => {
                metrics.api_error("watch");
                tracing::warn!(error = %e, "watching the reports failed; retrying with backoff");
            }
        }
    }
}
