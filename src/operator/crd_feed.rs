//! The audited CRDs as kube-runtime's `Controller` of the report writer sees them (their
//! names, UIDs and generations), kept by the registry's changes: no second CRD watch.

use crd_audit_engine::Crd;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::ObjectMeta;
use kube::core::{PartialObjectMeta, PartialObjectMetaExt};
use kube::runtime::reflector::{Store, store::Writer};
use kube::runtime::watcher::Event;
use std::sync::{Mutex, MutexGuard};

/// A CRD as the Controller knows it: its name, UID and generation.
pub type CrdMeta = PartialObjectMeta<CustomResourceDefinition>;

/// The Controller's store of the audited CRDs, kept by the registry's changes: a CRD is in
/// it from its first reconcile until it is removed. It is ready from the start, so that
/// reports are written while the first LIST of thousands of CRDs is still under way.
pub struct CrdFeed {
    writer: Mutex<Writer<CrdMeta>>,
}

impl Default for CrdFeed {
    fn default() -> Self {
        let mut writer = Writer::default();
        writer.apply_watcher_event(&Event::Init);
        writer.apply_watcher_event(&Event::InitDone);
        CrdFeed {
            writer: Mutex::new(writer),
        }
    }
}

fn crd_meta(crd: &Crd) -> CrdMeta {
    ObjectMeta {
        name: Some(crd.name.clone()),
        uid: Some(crd.uid.clone()).filter(|u| !u.is_empty()),
        generation: Some(crd.generation),
        ..Default::default()
    }
    .into_request_partial()
}

impl CrdFeed {
    fn writer(&self) -> MutexGuard<'_, Writer<CrdMeta>> {
        self.writer.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The Controller's view.
    pub fn reader(&self) -> Store<CrdMeta> {
        self.writer().as_reader()
    }

    /// A CRD is audited (first seen, or a new revision).
    pub fn tracked(&self, crd: &Crd) {
        self.writer()
            .apply_watcher_event(&Event::Apply(crd_meta(crd)));
    }

    /// A CRD is no longer audited.
    pub fn gone(&self, name: &str) {
        let meta = ObjectMeta {
            name: Some(name.to_string()),
            ..Default::default()
        }
        .into_request_partial();
        self.writer().apply_watcher_event(&Event::Delete(meta));
    }

    /// A LIST of the CRDs completed: the store holds exactly the audited ones.
    pub fn listed<'a>(&self, crds: impl Iterator<Item = &'a Crd>) {
        let mut w = self.writer();
        w.apply_watcher_event(&Event::Init);
        for crd in crds {
            w.apply_watcher_event(&Event::InitApply(crd_meta(crd)));
        }
        w.apply_watcher_event(&Event::InitDone);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;
    use kube::runtime::reflector::ObjectRef;

    #[tokio::test]
    async fn the_feed_holds_the_audited_crds_and_is_ready_at_once() {
        let feed = CrdFeed::default();
        let reader = feed.reader();
        assert!(reader.wait_until_ready().now_or_never().is_some());
        let crd = |name: &str| {
            let (plural, group) = name.split_once('.').unwrap();
            Crd::from_value(&serde_json::json!({
                "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": name, "uid": format!("uid-{name}"), "generation": 3},
                "spec": {"group": group, "scope": "Namespaced",
                    "names": {"plural": plural, "kind": "Thing"},
                    "versions": [{"name": "v1", "served": true, "storage": true,
                        "schema": {"openAPIV3Schema": {"type": "object"}}}]}}))
            .unwrap()
        };
        feed.tracked(&crd("a.example.com"));
        feed.tracked(&crd("b.example.com"));
        let a = reader.get(&ObjectRef::new("a.example.com")).unwrap();
        assert_eq!(a.metadata.generation, Some(3));
        assert_eq!(a.metadata.uid.as_deref(), Some("uid-a.example.com"));
        feed.gone("a.example.com");
        assert!(reader.get(&ObjectRef::new("a.example.com")).is_none());
        // A relist: exactly what is audited now.
        feed.listed([crd("c.example.com")].iter());
        assert!(reader.get(&ObjectRef::new("b.example.com")).is_none());
        assert!(reader.get(&ObjectRef::new("c.example.com")).is_some());
    }
}
