//! The watch of a collection that thousands of run at once (the operator's object audits):
//! kube-runtime's `watcher` step for step (the same `Event`s and `Error`s, the initial state
//! streamed on the watch or read by paginated LIST, a relist only after `410 Gone`), except
//! that once it has the initial state it watches **without bookmarks**.
//!
//! Why not `kube::runtime::watcher` itself: its `Config::bookmarks` holds for the initial
//! watch and for every watch after it, and a streaming list needs bookmarks (the end of the
//! initial state is one). An API server sends every watch that asks for them a bookmark a
//! minute; with 2,000 CRDs that is 33 wake-ups a second through TLS, HTTP/2 and JSON, which
//! was 0.6 % of a core with nothing changing. A watch without bookmarks sends nothing until
//! something changes or its timeout ends it.
//!
//! What that costs: after a watch ends, the next one starts from the resourceVersion of the
//! last object seen (or of the initial state), not of the last bookmark. The API server's
//! watch cache serves that as long as the cache of the resource has not been rebuilt since
//! (a quiet collection has no events to age out); when it has (the API server restarted,
//! or the connection moved to another API server that started later), it answers `410
//! Gone` and the watch lists the collection again, as kube-runtime's does.

use crate::cluster::watch_stream::{self, Events};
use futures::{Stream, StreamExt};
use kube::Resource;
use kube::api::{Api, ListParams, WatchEvent, WatchParams};
use kube::runtime::watcher::{Error, Event};
use serde::de::DeserializeOwned;
use std::collections::VecDeque;
use std::fmt::Debug;
use std::time::Duration;

/// How the watch reads the initial state and how long each watch lasts.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Whether the initial state is streamed on the watch (`sendInitialEvents`), else read
    /// by paginated LIST.
    pub streaming: bool,
    /// Objects a page of a LIST.
    pub page: u32,
    /// The `timeoutSeconds` of every watch.
    pub timeout: u32,
}

/// How long after a watch's timeout it is taken for dead, when nothing arrived (as
/// kube-runtime's watcher does: a connection that died silently ends no stream).
const IDLE_MARGIN: Duration = Duration::from_secs(5);

/// The annotation of the bookmark that ends a streamed initial state.
const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

enum State<K> {
    /// Nothing read yet, or a relist after `410 Gone`.
    Empty,
    /// Reading the initial state by LIST, page by page.
    Paging {
        continue_token: Option<String>,
        objects: VecDeque<K>,
        version: Option<String>,
    },
    /// Reading the initial state on the watch.
    Streaming {
        events: Events<K>,
    },
    /// The initial state is read: watch from `version`.
    Resume {
        version: String,
    },
    Watching {
        version: String,
        events: Events<K>,
    },
}

/// The events of the objects of `api`, as `kube::runtime::watcher(api, config)` would give
/// them; it never ends. Errors are handed out as they happen and the watch goes on; the
/// caller paces the retries (`operator::watch_backoff`).
pub fn watch<K>(api: Api<K>, params: Params) -> impl Stream<Item = Result<Event<K>, Error>> + Send
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    futures::stream::unfold((api, State::Empty), move |(api, mut state)| async move {
        loop {
            let (event, next) = step(&api, params, state).await;
            state = next;
            if let Some(event) = event {
                return Some((event, (api, state)));
            }
        }
    })
}

/// The next item of a watch, or `None` when it ends or nothing arrived for longer than its
/// timeout.
async fn next_event<K>(
    events: &mut Events<K>,
    timeout: u32,
) -> Option<kube::Result<WatchEvent<K>>> {
    let idle = Duration::from_secs(u64::from(timeout)) + IDLE_MARGIN;
    tokio::time::timeout(idle, events.next())
        .await
        .ok()
        .flatten()
}

/// An object's resourceVersion, unless empty.
fn resource_version<K: Resource>(obj: &K) -> Option<String> {
    obj.meta()
        .resource_version
        .clone()
        .filter(|v| !v.is_empty())
}

/// One step: what to hand out (if anything) and the state after it.
async fn step<K>(
    api: &Api<K>,
    params: Params,
    state: State<K>,
) -> (Option<Result<Event<K>, Error>>, State<K>)
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + 'static,
{
    match state {
        State::Empty if params.streaming => {
            let wp = WatchParams::streaming_lists().timeout(params.timeout);
            match watch_stream::open(api, &wp, "0").await {
                Ok(events) => (Some(Ok(Event::Init)), State::Streaming { events }),
                Err(e) => (Some(Err(Error::WatchStartFailed(e))), State::Empty),
            }
        }
        State::Empty => (
            Some(Ok(Event::Init)),
            State::Paging {
                continue_token: None,
                objects: VecDeque::new(),
                version: None,
            },
        ),
        State::Paging {
            continue_token,
            mut objects,
            version,
        } => {
            if let Some(obj) = objects.pop_front() {
                return (
                    Some(Ok(Event::InitApply(obj))),
                    State::Paging {
                        continue_token,
                        objects,
                        version,
                    },
                );
            }
            if continue_token.is_none()
                && let Some(version) = version
            {
                return (Some(Ok(Event::InitDone)), State::Resume { version });
            }
            let mut lp = ListParams::default().limit(params.page);
            lp.continue_token = continue_token;
            match api.list(&lp).await {
                Ok(list) => {
                    let version = list.metadata.resource_version.filter(|v| !v.is_empty());
                    let continue_token = list.metadata.continue_.filter(|c| !c.is_empty());
                    if version.is_none() && continue_token.is_none() {
                        return (Some(Err(Error::NoResourceVersion)), State::Empty);
                    }
                    (
                        None,
                        State::Paging {
                            continue_token,
                            objects: list.items.into(),
                            version,
                        },
                    )
                }
                Err(e) => (Some(Err(Error::InitialListFailed(e))), State::Empty),
            }
        }
        State::Streaming { mut events } => match next_event(&mut events, params.timeout).await {
            Some(Ok(WatchEvent::Added(obj) | WatchEvent::Modified(obj))) => {
                (Some(Ok(Event::InitApply(obj))), State::Streaming { events })
            }
            // Not sent while the initial state is streamed.
            Some(Ok(WatchEvent::Deleted(_))) => (None, State::Streaming { events }),
            Some(Ok(WatchEvent::Bookmark(b))) => {
                if b.metadata.annotations.contains_key(INITIAL_EVENTS_END) {
                    // This watch asked for bookmarks; the next one from here does not.
                    (
                        Some(Ok(Event::InitDone)),
                        State::Resume {
                            version: b.metadata.resource_version,
                        },
                    )
                } else {
                    (None, State::Streaming { events })
                }
            }
            Some(Ok(WatchEvent::Error(status))) => {
                let next = if status.code == 410 {
                    State::Empty
                } else {
                    State::Streaming { events }
                };
                (Some(Err(Error::WatchError(status))), next)
            }
            Some(Err(e)) => (
                Some(Err(Error::WatchFailed(e))),
                State::Streaming { events },
            ),
            // Ended before the initial state was whole: read it again.
            None => (None, State::Empty),
        },
        State::Resume { version } => {
            let wp = WatchParams::default()
                .disable_bookmarks()
                .timeout(params.timeout);
            match watch_stream::open(api, &wp, &version).await {
                Ok(events) => (None, State::Watching { version, events }),
                Err(e) => (
                    Some(Err(Error::WatchStartFailed(e))),
                    State::Resume { version },
                ),
            }
        }
        State::Watching {
            version,
            mut events,
        } => {
            match next_event(&mut events, params.timeout).await {
                Some(Ok(WatchEvent::Added(obj) | WatchEvent::Modified(obj))) => {
                    match resource_version(&obj) {
                        Some(version) => (
                            Some(Ok(Event::Apply(obj))),
                            State::Watching { version, events },
                        ),
                        None => (Some(Err(Error::NoResourceVersion)), State::Empty),
                    }
                }
                Some(Ok(WatchEvent::Deleted(obj))) => match resource_version(&obj) {
                    Some(version) => (
                        Some(Ok(Event::Delete(obj))),
                        State::Watching { version, events },
                    ),
                    None => (Some(Err(Error::NoResourceVersion)), State::Empty),
                },
                // Not asked for; a server may send them anyway.
                Some(Ok(WatchEvent::Bookmark(b))) => (
                    None,
                    State::Watching {
                        version: b.metadata.resource_version,
                        events,
                    },
                ),
                Some(Ok(WatchEvent::Error(status))) => {
                    let next = if status.code == 410 {
                        State::Empty
                    } else {
                        State::Watching { version, events }
                    };
                    (Some(Err(Error::WatchError(status))), next)
                }
                Some(Err(e)) => (
                    Some(Err(Error::WatchFailed(e))),
                    State::Watching { version, events },
                ),
                None => (None, State::Resume { version }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use http::{Request, Response};
    use http_body::Frame;
    use http_body_util::{BodyExt, Full, StreamBody, combinators::UnsyncBoxBody};
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::{Value, json};
    use std::sync::{Arc, Mutex};

    type Body = UnsyncBoxBody<Bytes, std::convert::Infallible>;

    /// What the fake server answers to one request.
    enum Answer {
        /// A whole JSON body.
        Json(Value),
        /// A watch: these events, then the end of the response (`true`) or nothing more.
        Events(Vec<Value>, bool),
        /// An error status.
        Status(u16),
    }

    fn cm(name: &str, rv: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}})
    }

    fn event(kind: &str, object: Value) -> Value {
        json!({"type": kind, "object": object})
    }

    fn bookmark(rv: &str, initial_end: bool) -> Value {
        let annotations = if initial_end {
            json!({INITIAL_EVENTS_END: "true"})
        } else {
            json!({})
        };
        event(
            "BOOKMARK",
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"resourceVersion": rv, "annotations": annotations}}),
        )
    }

    fn gone() -> Value {
        event(
            "ERROR",
            json!({"apiVersion": "v1", "kind": "Status", "status": "Failure",
                "message": "too old resource version: 5 (9)", "reason": "Expired", "code": 410}),
        )
    }

    fn respond(answer: Answer) -> Response<Body> {
        match answer {
            Answer::Json(v) => Response::builder()
                .status(200)
                .body(Full::new(Bytes::from(v.to_string())).boxed_unsync())
                .unwrap(),
            Answer::Status(code) => {
                let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "message": "failed", "reason": "InternalError", "code": code});
                Response::builder()
                    .status(code)
                    .body(Full::new(Bytes::from(status.to_string())).boxed_unsync())
                    .unwrap()
            }
            Answer::Events(events, ends) => {
                let lines = events.into_iter().map(|e| {
                    let mut line = e.to_string().into_bytes();
                    line.push(b'\n');
                    Ok(Frame::data(Bytes::from(line)))
                });
                let frames = futures::stream::iter(lines.collect::<Vec<_>>());
                let body = if ends {
                    StreamBody::new(frames.boxed()).boxed_unsync()
                } else {
                    StreamBody::new(frames.chain(futures::stream::pending()).boxed()).boxed_unsync()
                };
                Response::builder().status(200).body(body).unwrap()
            }
        }
    }

    /// A client of a server that answers requests with `answers`, in order (and leaves any
    /// request after them unanswered); the query of every request is recorded.
    fn server(answers: Vec<Answer>) -> (Api<ConfigMap>, Arc<Mutex<Vec<String>>>) {
        let (svc, mut handle) =
            tower_test::mock::pair::<Request<kube::client::Body>, Response<Body>>();
        let queries = Arc::new(Mutex::new(Vec::new()));
        let seen = queries.clone();
        tokio::spawn(async move {
            let mut answers = answers.into_iter();
            let mut unanswered = Vec::new();
            while let Some((req, send)) = handle.next_request().await {
                seen.lock()
                    .unwrap()
                    .push(req.uri().query().unwrap_or("").to_string());
                match answers.next() {
                    Some(a) => send.send_response(respond(a)),
                    None => unanswered.push(send),
                }
            }
        });
        let client = kube::Client::new(svc, "ns");
        (Api::namespaced(client, "ns"), queries)
    }

    /// What the watch hands out, in short: `init`, `+name` (initial), `done`, `~name`
    /// (changed), `-name` (deleted), or `error <code or kind>`.
    fn short(item: &Result<Event<ConfigMap>, Error>) -> String {
        let name = |o: &ConfigMap| o.metadata.name.clone().unwrap_or_default();
        match item {
            Ok(Event::Init) => "init".into(),
            Ok(Event::InitApply(o)) => format!("+{}", name(o)),
            Ok(Event::InitDone) => "done".into(),
            Ok(Event::Apply(o)) => format!("~{}", name(o)),
            Ok(Event::Delete(o)) => format!("-{}", name(o)),
            Err(Error::WatchError(s)) => format!("error {}", s.code),
            Err(Error::WatchStartFailed(_)) => "error watch start".into(),
            Err(Error::InitialListFailed(_)) => "error list".into(),
            Err(e) => format!("error {e}"),
        }
    }

    async fn take(
        s: &mut (impl Stream<Item = Result<Event<ConfigMap>, Error>> + Unpin),
        n: usize,
    ) -> Vec<String> {
        let mut out = Vec::new();
        for _ in 0..n {
            out.push(short(&s.next().await.expect("the watch never ends")));
        }
        out
    }

    fn has(query: &str, pair: &str) -> bool {
        query.split('&').any(|p| p == pair)
    }

    const STREAMING: Params = Params {
        streaming: true,
        page: 2,
        timeout: 1800,
    };

    #[tokio::test]
    async fn after_a_streamed_initial_state_it_watches_without_bookmarks() {
        let (api, queries) = server(vec![
            Answer::Events(
                vec![
                    event("ADDED", cm("a", "3")),
                    event("ADDED", cm("b", "4")),
                    bookmark("7", true),
                    // Sent by the server while the watch stays open: never seen.
                    bookmark("8", false),
                ],
                false,
            ),
            // The server ends the watch (its timeout).
            Answer::Events(vec![event("MODIFIED", cm("a", "9"))], true),
            Answer::Events(vec![event("DELETED", cm("b", "12"))], false),
        ]);
        let mut w = Box::pin(watch(api, STREAMING));
        assert_eq!(
            take(&mut w, 6).await,
            ["init", "+a", "+b", "done", "~a", "-b"]
        );
        let q = queries.lock().unwrap().clone();
        assert_eq!(q.len(), 3, "{q:?}");
        // The streamed initial state asks for bookmarks (the end of it is one).
        for pair in [
            "watch=true",
            "sendInitialEvents=true",
            "allowWatchBookmarks=true",
            "resourceVersionMatch=NotOlderThan",
            "resourceVersion=0",
            "timeoutSeconds=1800",
        ] {
            assert!(has(&q[0], pair), "{pair} not in {}", q[0]);
        }
        // The watches after it resume from the last version seen, without bookmarks.
        for (query, version) in [(&q[1], "7"), (&q[2], "9")] {
            assert!(has(query, &format!("resourceVersion={version}")), "{query}");
            assert!(
                has(query, "watch=true") && has(query, "timeoutSeconds=1800"),
                "{query}"
            );
            assert!(!query.contains("allowWatchBookmarks"), "{query}");
            assert!(!query.contains("sendInitialEvents"), "{query}");
        }
    }

    #[tokio::test]
    async fn after_paginated_lists_it_watches_without_bookmarks() {
        let list = |items: Vec<Value>, rv: &str, cont: &str| {
            Answer::Json(json!({"apiVersion": "v1", "kind": "ConfigMapList",
                "metadata": {"resourceVersion": rv, "continue": cont}, "items": items}))
        };
        let (api, queries) = server(vec![
            list(vec![cm("a", "2"), cm("b", "3")], "5", "page2"),
            list(vec![cm("c", "4")], "5", ""),
            Answer::Events(vec![event("ADDED", cm("d", "6"))], false),
        ]);
        let params = Params {
            streaming: false,
            page: 2,
            timeout: 290,
        };
        let mut w = Box::pin(watch(api, params));
        assert_eq!(
            take(&mut w, 6).await,
            ["init", "+a", "+b", "+c", "done", "~d"]
        );
        let q = queries.lock().unwrap().clone();
        assert!(
            has(&q[0], "limit=2") && !q[0].contains("continue"),
            "{}",
            q[0]
        );
        assert!(
            has(&q[1], "limit=2") && has(&q[1], "continue=page2"),
            "{}",
            q[1]
        );
        assert!(has(&q[2], "resourceVersion=5") && has(&q[2], "timeoutSeconds=290"));
        assert!(!q[2].contains("allowWatchBookmarks"), "{}", q[2]);
    }

    #[tokio::test]
    async fn gone_reads_the_initial_state_again() {
        let (api, queries) = server(vec![
            Answer::Events(
                vec![event("ADDED", cm("a", "3")), bookmark("7", true)],
                false,
            ),
            // The watch cache was rebuilt after version 7.
            Answer::Events(vec![gone()], false),
            Answer::Events(
                vec![event("ADDED", cm("a", "11")), bookmark("12", true)],
                false,
            ),
            Answer::Events(vec![event("MODIFIED", cm("a", "13"))], false),
        ]);
        let mut w = Box::pin(watch(api, STREAMING));
        assert_eq!(
            take(&mut w, 8).await,
            [
                "init",
                "+a",
                "done",
                "error 410",
                "init",
                "+a",
                "done",
                "~a"
            ]
        );
        let q = queries.lock().unwrap().clone();
        assert!(has(&q[2], "sendInitialEvents=true") && has(&q[2], "resourceVersion=0"));
        assert!(has(&q[3], "resourceVersion=12") && !q[3].contains("allowWatchBookmarks"));
    }

    #[tokio::test]
    async fn a_streamed_initial_state_cut_short_is_read_again() {
        let (api, queries) = server(vec![
            // Ends before the bookmark that closes the initial state.
            Answer::Events(vec![event("ADDED", cm("a", "3"))], true),
            Answer::Events(
                vec![event("ADDED", cm("a", "3")), bookmark("7", true)],
                false,
            ),
        ]);
        let mut w = Box::pin(watch(api, STREAMING));
        assert_eq!(take(&mut w, 5).await, ["init", "+a", "init", "+a", "done"]);
        let q = queries.lock().unwrap().clone();
        assert!(has(&q[1], "sendInitialEvents=true"), "{q:?}");
    }

    #[tokio::test]
    async fn failures_are_handed_out_and_the_step_is_tried_again() {
        let (api, queries) = server(vec![
            Answer::Status(500),
            Answer::Events(vec![bookmark("7", true)], false),
            Answer::Status(503),
            Answer::Events(vec![event("ADDED", cm("a", "8"))], false),
        ]);
        let mut w = Box::pin(watch(api, STREAMING));
        assert_eq!(
            take(&mut w, 5).await,
            [
                "error watch start",
                "init",
                "done",
                "error watch start",
                "~a"
            ]
        );
        let q = queries.lock().unwrap().clone();
        assert!(has(&q[1], "sendInitialEvents=true"), "{q:?}");
        // The resumed watch is tried again from the same version.
        assert!(has(&q[2], "resourceVersion=7") && has(&q[3], "resourceVersion=7"));
    }

    /// A watch on a connection that died silently ends nothing: it is taken for dead a little
    /// after its timeout, and the next one resumes from the same version.
    #[tokio::test(start_paused = true)]
    async fn a_silent_watch_is_opened_again_after_its_timeout() {
        let (api, queries) = server(vec![
            Answer::Events(vec![bookmark("7", true)], false),
            Answer::Events(vec![], false),
            Answer::Events(vec![event("ADDED", cm("a", "8"))], false),
        ]);
        let started = tokio::time::Instant::now();
        let mut w = Box::pin(watch(api, STREAMING));
        assert_eq!(take(&mut w, 3).await, ["init", "done", "~a"]);
        assert_eq!(started.elapsed(), Duration::from_secs(1800) + IDLE_MARGIN);
        let q = queries.lock().unwrap().clone();
        assert!(has(&q[1], "resourceVersion=7") && has(&q[2], "resourceVersion=7"));
    }
}
