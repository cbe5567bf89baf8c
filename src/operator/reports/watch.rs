//! The reports' metadata, watched for the Controller, which owns them: a report deleted
//! behind the operator's back, or missing after a relist (the report CRD deleted and applied
//! again), is marked unwritten and its CRD reconciled, so it is written again.

use crate::audit::schema_audit::SchemaAudit;
use crate::operator::crds::state;
use crate::operator::leadership::context::{CrdStates, Deps};
use futures::StreamExt;
use kube::ResourceExt;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::watcher::{self, Event, watcher};
use std::sync::Arc;

/// The reports' metadata, watched: a report deleted (or missing after a relist, as when the
/// report CRD was deleted and applied again) is marked unwritten; the Controller reconciles
/// the CRD that owns it.
pub(crate) fn report_events(
    deps: Arc<Deps>,
    states: Arc<CrdStates>,
) -> impl futures::Stream<Item = Result<PartialObjectMeta<SchemaAudit>, watcher::Error>> + Send {
    let api: Api<PartialObjectMeta<SchemaAudit>> = Api::all(deps.client.clone());
    let (reports, writer) = reflector::store();
    crate::operator::watch_backoff::with_backoff(
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
        .filter_map(move |ev| {
            let (deps, states) = (deps.clone(), states.clone());
            let reports = reports.clone();
            async move {
                match ev {
                    Ok(Event::InitDone) => {
                        unwritten(&states, |name| {
                            reports.get(&ObjectRef::new(name)).is_none()
                        });
                        None
                    }
                    Ok(Event::Delete(m)) => {
                        let gone = m.name_any();
                        unwritten(&states, |name| name == gone);
                        Some(Ok(m))
                    }
                    Ok(Event::Apply(m) | Event::InitApply(m)) => Some(Ok(m)),
                    Ok(Event::Init) => None,
                    Err(e) => {
                        // Not handed to the Controller: its trigger backoff would hold up
                        // every other trigger too.
                        deps.metrics.api_error("watch");
                        tracing::warn!(error = %e, "watching the reports failed; retrying with backoff");
                        None
                    }
                }
            }
        })
}

/// Marks the reports of the CRDs `missing` says are gone as unwritten; the Controller
/// writes them again.
fn unwritten(states: &CrdStates, missing: impl Fn(&str) -> bool) {
    let mut gone = Vec::new();
    for (name, t) in states.lock().iter_mut() {
        if t.written().is_some() && missing(name) {
            state::on_report_gone(t);
            gone.push(name.clone());
        }
    }
    for name in gone {
        states.changed(&name);
    }
}
