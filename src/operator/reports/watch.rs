//! The reports' metadata, watched by a task of the leadership term: a report deleted behind
//! the operator's back, or missing after a relist (the report CRD deleted and applied again),
//! is marked unwritten in the states, which wake its CRD's reconcile, so it is written again.
//! A report written (by the operator, or edited by someone) wakes nothing: the operator's own
//! writes cost no reconcile.
//!
//! Nothing of the reports is kept between lists: a relist gathers the names it lists, asks
//! the states which written reports are missing from them and drops them. (A store of every
//! report's metadata was 2,000 × about 1.5 KB held for the whole term, and held from the first
//! second of a restart, when every report already exists.)

use crate::audit::schema_audit::SchemaAudit;
use crate::operator::metrics::Metrics;
use crate::operator::state::CrdStates;
use futures::StreamExt;
use kube::ResourceExt;
use kube::api::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::watcher::{self, Event, watcher};
use std::collections::HashSet;
use std::sync::Arc;

/// Reports' metadata a page of the LIST (the watcher's default is 500).
const REPORT_PAGE: u32 = 100;

/// Watches the reports until the term ends: a report deleted (or missing after a relist, as
/// when the report CRD was deleted and applied again) is marked unwritten, which wakes its
/// CRD's reconcile.
pub async fn watch_reports(client: kube::Client, metrics: Arc<Metrics>, states: Arc<CrdStates>) {
    // Metadata-only requests (`Api` of `PartialObjectMeta`).
    let api: Api<PartialObjectMeta<SchemaAudit>> = Api::all(client);
    let events = crate::operator::watch_backoff::with_backoff(
        watcher(api, watcher::Config::default().page_size(REPORT_PAGE)).boxed(),
        crate::operator::watch_backoff::SHORT,
    );
    futures::pin_mut!(events);
    let mut relist = Relist::default();
    while let Some(ev) = events.next().await {
        match ev {
            Ok(Event::Init) => relist.begin(),
            Ok(Event::InitApply(m)) => relist.listed(m.name_any()),
            Ok(Event::InitDone) => {
                let listed = relist.end();
                states.reports_gone(|name| !listed.contains(name));
            }
            Ok(Event::Delete(m)) => {
                let gone = m.name_any();
                states.reports_gone(|name| name == gone);
            }
            // Written: by the operator itself, which needs no reconcile for it.
            Ok(Event::Apply(_)) => {}
            Err(e) => {
                metrics.api_error("watch");
                tracing::warn!(error = %e, "watching the reports failed; retrying with backoff");
            }
        }
    }
}

/// The names of the reports a relist in progress has listed: begun at `Init` (a relist
/// that failed halfway begins again), handed over and forgotten at `InitDone`.
#[derive(Default)]
struct Relist {
    names: HashSet<String>,
}

impl Relist {
    fn begin(&mut self) {
        self.names = HashSet::new();
    }

    fn listed(&mut self, name: String) {
        self.names.insert(name);
    }

    /// The names this relist listed; the relist keeps none of them.
    fn end(&mut self) -> HashSet<String> {
        std::mem::take(&mut self.names)
    }
}

#[cfg(test)]
mod tests {
    use super::Relist;

    #[test]
    fn a_relist_hands_over_what_it_listed_and_keeps_nothing() {
        let mut r = Relist::default();
        r.begin();
        r.listed("a.example.com".into());
        r.listed("b.example.com".into());
        let listed = r.end();
        assert!(listed.contains("a.example.com") && listed.contains("b.example.com"));
        assert_eq!(listed.len(), 2);
        assert!(r.names.is_empty() && r.names.capacity() == 0);
    }

    #[test]
    fn a_relist_begun_again_forgets_the_failed_one() {
        let mut r = Relist::default();
        r.begin();
        r.listed("a.example.com".into());
        // The LIST failed halfway: the watcher begins again with `Init`.
        r.begin();
        r.listed("b.example.com".into());
        let listed = r.end();
        assert!(!listed.contains("a.example.com"));
        assert!(listed.contains("b.example.com"));
    }
}
