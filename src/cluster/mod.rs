//! Talking to a cluster, shared by the one-shot commands and the operator: the kube client
//! from any kubeconfig (`client`), the resources read (`resources`), paginated LISTs with
//! retry for the one-shot commands (`reader`), and a LIST read page by page for the
//! operator (`pages`), the watch of a collection that resumes without bookmarks
//! (`object_watch`) over watch responses read without idle buffers (`watch_stream`), the one
//! retry policy (`backoff`), and the budget every write of a process shares
//! (`write_budget`). Nothing here judges anything.

pub mod backoff;
pub mod client;
pub mod object_watch;
pub mod pages;
pub mod reader;
pub mod resources;
pub mod watch_stream;
pub mod write_budget;
