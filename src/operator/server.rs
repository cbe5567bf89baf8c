//! What the API server of a leadership term offers, as far as the tasks need to know: its
//! release (the CEL environments CRDs are checked and compiled in, whether updates are
//! ratcheted), whether it streams the initial state of a watch, and whether it is reached
//! from inside the cluster.

use crate::release::KubeVersion;
use kube::runtime::watcher;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// What the API server offers, as far as the tasks need to know.
#[derive(Default)]
pub struct ServerInfo {
    /// The API server's release (its minor version), whose CEL environments CRDs are checked
    /// and compiled in and which says whether updates are ratcheted (1.30 and later): set
    /// from its `/version` when the operator starts leading.
    release_minor: AtomicU32,
    /// The API server refused a streaming list: every watch lists with pages instead.
    streaming_refused: AtomicBool,
    /// The operator runs inside the cluster (its client is the in-cluster ServiceAccount's):
    /// a Service is dialled directly, not through the API server's service proxy.
    in_cluster: AtomicBool,
}

impl ServerInfo {
    /// The API server's release.
    pub fn release(&self) -> KubeVersion {
        match self.release_minor.load(Ordering::Relaxed) {
            0 => KubeVersion::default(),
            minor => KubeVersion { minor },
        }
    }

    /// The API server's release, read from its `/version`.
    pub fn set_release(&self, minor: u32) {
        self.release_minor.store(minor, Ordering::Relaxed);
    }

    /// How a watch gets its initial state, and whether it streams: from a server that
    /// offers streaming lists (1.34+, unless it refused one), one object at a time on the
    /// watch itself, so that no LIST response is held whole; elsewhere paginated LISTs of
    /// `page` objects.
    pub fn watch_config(&self, page: u32) -> (watcher::Config, bool) {
        if self.streams_lists() {
            (watcher::Config::default().streaming_lists(), true)
        } else {
            (watcher::Config::default().page_size(page), false)
        }
    }

    /// Whether watches stream their initial state: the server offers streaming lists
    /// (1.34+) and has not refused one.
    pub fn streams_lists(&self) -> bool {
        self.release().streams_lists() && !self.streaming_refused.load(Ordering::Relaxed)
    }

    /// Whether `e` is the server refusing the streaming list of a watch that streams; if
    /// so, every watch falls back to paginated LISTs (the caller starts its watch again).
    pub fn refused_streaming(&self, streaming: bool, e: &watcher::Error) -> bool {
        if !streaming || !crate::operator::watch_backoff::refuses_streaming(e) {
            return false;
        }
        if !self.streaming_refused.swap(true, Ordering::Relaxed) {
            tracing::warn!(error = %e, "the API server refused a streaming list (WatchList turned off?); listing with pages");
        }
        true
    }

    /// Whether the operator runs inside the cluster: a Service is dialled directly.
    pub fn in_cluster(&self) -> bool {
        self.in_cluster.load(Ordering::Relaxed)
    }

    /// Whether the client is the in-cluster ServiceAccount's.
    pub fn set_in_cluster(&self, in_cluster: bool) {
        self.in_cluster.store(in_cluster, Ordering::Relaxed);
    }

    /// Whether the API server validates updates with ratcheting.
    pub fn ratcheting(&self) -> bool {
        self.release().ratchets()
    }
}
