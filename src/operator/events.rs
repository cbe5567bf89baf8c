//! Events through kube-runtime's `Recorder` (events.k8s.io/v1, reporting controller
//! `crd-audit`), with the fallbacks real servers need: kube-apiserver 1.20 refuses
//! events.k8s.io/v1 Events about cluster-scoped objects (they go out as core/v1 Events), and
//! a server that serves no Events at all (the standalone apiextensions-apiserver) is noted
//! once and then left alone. The Events to write wait in an [`EventQueue`], the handle the
//! audits and reconciles push to; the writer task (`reports::writer`) writes them in order,
//! within the write budget it shares with the reports.

use crate::operator::metrics::Metrics;
use k8s_openapi::api::core::v1::{Event as CoreEvent, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::api::{Api, PostParams};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;

/// The most Events waiting to be written (SchemaViolation Events are budgeted per CRD, so
/// this is only reached when the Events API is down for long).
const MAX_QUEUED_EVENTS: usize = 10_000;

/// Where Events about cluster-scoped objects go.
pub const CLUSTER_EVENTS_NAMESPACE: &str = "default";

#[derive(Clone, Debug, PartialEq)]
pub struct PendingEvent {
    pub warning: bool,
    pub reason: String,
    pub note: String,
    pub regarding: ObjectReference,
}

pub struct EventSink {
    client: kube::Client,
    recorder: Recorder,
    identity: String,
    metrics: Arc<Metrics>,
    /// The server serves no Events (said once).
    unsupported: AtomicBool,
}

/// The longest note (the API server refuses notes over 1 KiB).
const MAX_NOTE: usize = 1000;

impl EventSink {
    pub fn new(client: kube::Client, identity: &str, metrics: Arc<Metrics>) -> EventSink {
        let reporter = Reporter {
            controller: "crd-audit".into(),
            instance: Some(identity.into()),
        };
        EventSink {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            identity: identity.into(),
            metrics,
            unsupported: AtomicBool::new(false),
        }
    }

    /// Publishes an Event (within the write budget the caller took). `Err` means it could
    /// not be written now and should be tried again later; an Event the server can never
    /// take (no Events API) counts as done.
    pub async fn publish(&self, ev: &PendingEvent) -> Result<(), kube::Error> {
        if self.unsupported.load(Ordering::Relaxed) {
            return Ok(());
        }
        let note = crate::audit::judge::bounded(&ev.note, MAX_NOTE);
        self.metrics.api_write("create");
        let event = Event {
            type_: if ev.warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: ev.reason.clone(),
            note: Some(note.clone()),
            action: "Audit".into(),
            secondary: None,
        };
        let err = match self.recorder.publish(&event, &ev.regarding).await {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        match crate::cluster::client::status_code(&err) {
            Some(404) if self.events_unserved().await => {
                if !self.unsupported.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "the API server serves no Events (events.k8s.io/v1); crd-audit goes on without them"
                    );
                }
                Ok(())
            }
            Some(422) | Some(400) => self.publish_core(ev, &note).await,
            _ => {
                self.metrics.api_error("create");
                Err(err)
            }
        }
    }

    async fn events_unserved(&self) -> bool {
        matches!(
            self.client.list_api_group_resources("events.k8s.io/v1").await,
            Err(kube::Error::Api(s)) if s.code == 404
        )
    }

    /// The core/v1 form, which older servers take for cluster-scoped objects.
    async fn publish_core(&self, ev: &PendingEvent, note: &str) -> Result<(), kube::Error> {
        let namespace = ev
            .regarding
            .namespace
            .clone()
            .unwrap_or_else(|| CLUSTER_EVENTS_NAMESPACE.into());
        let now = Time(k8s_openapi::jiff::Timestamp::now());
        let event = CoreEvent {
            metadata: ObjectMeta {
                generate_name: Some("crd-audit-".into()),
                namespace: Some(namespace.clone()),
                ..Default::default()
            },
            involved_object: ev.regarding.clone(),
            reason: Some(ev.reason.clone()),
            message: Some(note.into()),
            type_: Some(if ev.warning { "Warning" } else { "Normal" }.into()),
            source: Some(EventSource {
                component: Some("crd-audit".into()),
                host: None,
            }),
            reporting_component: Some("crd-audit".into()),
            reporting_instance: Some(self.identity.clone()),
            action: Some("Audit".into()),
            first_timestamp: Some(now.clone()),
            last_timestamp: Some(now),
            count: Some(1),
            ..Default::default()
        };
        let api: Api<CoreEvent> = Api::namespaced(self.client.clone(), &namespace);
        self.metrics.api_write("create");
        api.create(&PostParams::default(), &event)
            .await
            .map(|_| ())
            .inspect_err(|_| self.metrics.api_error("create"))
    }
}

/// The Events waiting to be written, in order, and where they go: what the audits and the
/// reconciles are handed to tell people something; the writer task (`reports::writer`)
/// writes them.
pub struct EventQueue {
    sink: EventSink,
    /// `emitEvents`: otherwise nothing is queued.
    enabled: bool,
    queued: Mutex<VecDeque<PendingEvent>>,
    pushed: Notify,
}

impl EventQueue {
    pub fn new(sink: EventSink, enabled: bool) -> EventQueue {
        EventQueue {
            sink,
            enabled,
            queued: Mutex::default(),
            pushed: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<PendingEvent>> {
        self.queued.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues an Event; the writer task writes it, retried until the server takes it.
    pub fn push(&self, ev: PendingEvent) {
        if !self.enabled {
            return;
        }
        let mut q = self.lock();
        if q.len() >= MAX_QUEUED_EVENTS {
            tracing::warn!(reason = %ev.reason, "event queue full; event not queued");
            return;
        }
        q.push_back(ev);
        drop(q);
        self.pushed.notify_one();
    }

    /// The Events not written yet.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The next Event to write (the oldest).
    pub fn front(&self) -> Option<PendingEvent> {
        self.lock().front().cloned()
    }

    /// The oldest Event was written.
    pub fn written(&self, ev: &PendingEvent) {
        let mut q = self.lock();
        if q.front() == Some(ev) {
            q.pop_front();
        }
    }

    /// Writes an Event (the writer task has taken its write budget); `Err`: try it again
    /// later.
    pub async fn publish(&self, ev: &PendingEvent) -> Result<(), kube::Error> {
        self.sink.publish(ev).await
    }

    /// Waits for a push (one made since the last wait counts).
    pub async fn pushed(&self) {
        self.pushed.notified().await
    }
}

/// The reference of an Event about a CRD.
pub fn crd_reference(crd: &crd_audit_engine::Crd) -> ObjectReference {
    ObjectReference {
        api_version: Some("apiextensions.k8s.io/v1".into()),
        kind: Some("CustomResourceDefinition".into()),
        name: Some(crd.name.clone()),
        uid: Some(crd.uid.clone()).filter(|u| !u.is_empty()),
        ..Default::default()
    }
}
