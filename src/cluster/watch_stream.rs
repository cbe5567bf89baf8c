//! The events of one watch request, read from the response body line by line without a read
//! buffer kept between events.
//!
//! kube's `Api::watch` reads a watch response through a framed line reader whose buffer
//! starts at 8 KiB and stays allocated for as long as the watch is open. The operator keeps
//! a watch open for every audited CRD, almost always idle: at 2,000 CRDs those buffers were
//! 16 MiB, the largest single part of its heap. Here each chunk of the body is parsed where
//! it lies; only an event split across chunks is copied, and that copy is freed as soon as
//! the event is whole, so an idle watch holds no buffer at all.
//!
//! Otherwise it answers as `Api::watch` does: the same request (with the `watch` extension
//! and `Accept-Encoding: identity`), an error response as `Error::Api` (its `Status`, or one
//! made from its text), a line that is a `Status` as `Error::Api`, any other line that is
//! not an event as `Error::SerdeError`, a failed read as `Error::ReadEvents` (the last item),
//! and the end of the stream, without an error, when the connection ends mid-response (an
//! unexpected EOF: the caller watches again). Empty lines and an incomplete last line are
//! skipped.

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use http_body_util::BodyExt;
use kube::Resource;
use kube::api::{Api, WatchEvent, WatchParams};
use kube::core::Status;
use serde::de::DeserializeOwned;

/// The longest event read (its line): an object is at most 1.5 MiB in etcd by default and a
/// server may allow a few times that; a line longer than this is a broken response, and
/// reading on would hold memory without bound.
const MAX_EVENT_BYTES: usize = 64 << 20;

/// The events of one watch response (until it ends).
pub type Events<K> = BoxStream<'static, kube::Result<WatchEvent<K>>>;

/// Starts a watch of `api`'s collection from `version`, as `api.watch(wp, version)` does.
/// Only for an `Api` of whole objects (not `Api::metadata` ones).
pub async fn open<K>(api: &Api<K>, wp: &WatchParams, version: &str) -> kube::Result<Events<K>>
where
    K: Resource + Clone + DeserializeOwned + Send + 'static,
{
    let mut request = kube::core::Request::new(api.resource_url())
        .watch(wp, version)
        .map_err(kube::Error::BuildRequest)?;
    request.extensions_mut().insert("watch");
    request
        .headers_mut()
        .entry(http::header::ACCEPT_ENCODING)
        .or_insert(http::HeaderValue::from_static("identity"));
    let client: kube::Client = api.clone().into();
    let response = client.send(request.map(kube::client::Body::from)).await?;
    let status = response.status();
    if status.is_client_error() || status.is_server_error() {
        let body = response.into_body().collect().await?.to_bytes();
        return Err(kube::Error::Api(
            error_status(status.as_u16(), &body).boxed(),
        ));
    }
    Ok(events(response.into_body().into_data_stream()).boxed())
}

/// The `Status` an error response carries, or one made from its text.
fn error_status(code: u16, body: &[u8]) -> Status {
    serde_json::from_slice::<Status>(body).unwrap_or_else(|_| {
        let text = String::from_utf8_lossy(body);
        Status::failure(text.trim(), "Failed to parse error data").with_code(code)
    })
}

/// Where the reading of a body stands: the unread part of the last chunk, and the start of
/// an event split across chunks.
struct Lines<S> {
    body: S,
    chunk: Bytes,
    partial: Vec<u8>,
    ended: bool,
    /// Bytes an event may take ([`MAX_EVENT_BYTES`]).
    max_event: usize,
}

impl<S> Lines<S> {
    /// The next whole line (without its line break), taken from the chunk in place when it
    /// lies in one; `None` when the chunk holds no more line breaks (its rest is kept).
    fn next_line(&mut self) -> Option<Bytes> {
        let Some(end) = self.chunk.iter().position(|&b| b == b'\n') else {
            if !self.chunk.is_empty() {
                self.partial.extend_from_slice(&self.chunk);
                self.chunk = Bytes::new(); // releases the chunk
            }
            return None;
        };
        let head = self.chunk.split_to(end + 1);
        if self.chunk.is_empty() {
            self.chunk = Bytes::new();
        }
        let line = if self.partial.is_empty() {
            head
        } else {
            self.partial.extend_from_slice(&head);
            Bytes::from(std::mem::take(&mut self.partial)) // freed with the line
        };
        Some(without_line_break(line))
    }
}

fn without_line_break(mut line: Bytes) -> Bytes {
    while line.last().is_some_and(|&b| b == b'\n' || b == b'\r') {
        line.truncate(line.len() - 1);
    }
    line
}

/// What a line is: an event, an error, or nothing (empty or cut short).
fn parse<K: DeserializeOwned>(line: &[u8]) -> Option<kube::Result<WatchEvent<K>>> {
    match serde_json::from_slice::<WatchEvent<K>>(line) {
        Ok(event) => Some(Ok(event)),
        Err(e) if e.is_eof() => None,
        Err(e) => Some(Err(match serde_json::from_slice::<Status>(line) {
            Ok(status) => kube::Error::Api(status.boxed()),
            Err(_) => kube::Error::SerdeError(e),
        })),
    }
}

/// Whether a failed read is the connection ending mid-response (the watch is to be started
/// again, not reported): an `UnexpectedEof` anywhere in the error's causes, or a chunked
/// body cut short.
fn is_unexpected_eof(e: &kube::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    for _ in 0..16 {
        let Some(c) = cause else { break };
        if c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::UnexpectedEof)
        {
            return true;
        }
        cause = c.source();
    }
    e.to_string().contains("unexpected EOF during chunk")
}

/// The events of a watch response's body.
fn events<K, S>(body: S) -> impl Stream<Item = kube::Result<WatchEvent<K>>> + Send
where
    K: DeserializeOwned + Send + 'static,
    S: Stream<Item = kube::Result<Bytes>> + Send + Unpin + 'static,
{
    events_within(body, MAX_EVENT_BYTES)
}

/// [`events`], with events of at most `max_event` bytes.
fn events_within<K, S>(
    body: S,
    max_event: usize,
) -> impl Stream<Item = kube::Result<WatchEvent<K>>> + Send
where
    K: DeserializeOwned + Send + 'static,
    S: Stream<Item = kube::Result<Bytes>> + Send + Unpin + 'static,
{
    let lines = Lines {
        body,
        chunk: Bytes::new(),
        partial: Vec::new(),
        ended: false,
        max_event,
    };
    futures::stream::unfold(lines, |mut lines| async move {
        loop {
            if let Some(line) = lines.next_line() {
                match parse(&line) {
                    Some(item) => return Some((item, lines)),
                    None => continue,
                }
            }
            if lines.ended {
                return None;
            }
            if lines.partial.len() > lines.max_event {
                lines.ended = true;
                let too_long = std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "a watch event longer than {} bytes without a line break",
                        lines.max_event
                    ),
                );
                lines.partial = Vec::new();
                return Some((Err(kube::Error::ReadEvents(too_long)), lines));
            }
            match lines.body.next().await {
                Some(Ok(chunk)) => lines.chunk = chunk,
                Some(Err(e)) => {
                    lines.ended = true;
                    lines.partial = Vec::new();
                    if is_unexpected_eof(&e) {
                        tracing::debug!(error = %e, "a watch response ended early");
                        return None;
                    }
                    let e = kube::Error::ReadEvents(std::io::Error::other(e));
                    return Some((Err(e), lines));
                }
                None => {
                    // The end: a last line without a line break is read too.
                    lines.ended = true;
                    let last = std::mem::take(&mut lines.partial);
                    if let Some(item) = parse(&without_line_break(Bytes::from(last))) {
                        return Some((item, lines));
                    }
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn chunks(parts: &[&str]) -> impl Stream<Item = kube::Result<Bytes>> + Send + Unpin + 'static {
        let parts: Vec<kube::Result<Bytes>> = parts
            .iter()
            .map(|p| Ok(Bytes::from(p.to_string())))
            .collect();
        futures::stream::iter(parts)
    }

    fn added(name: &str) -> String {
        serde_json::json!({"type": "ADDED", "object": {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "resourceVersion": "1"}}})
        .to_string()
    }

    /// What the stream gives, in short: a name per event, `api <code>`, `serde`, `read`.
    async fn read(
        body: impl Stream<Item = kube::Result<Bytes>> + Send + Unpin + 'static,
    ) -> Vec<String> {
        events::<ConfigMap, _>(body)
            .map(|item| match item {
                Ok(WatchEvent::Added(o)) => o.metadata.name.unwrap_or_default(),
                Ok(other) => format!("{other:?}"),
                Err(kube::Error::Api(s)) => format!("api {}", s.code),
                Err(kube::Error::SerdeError(_)) => "serde".into(),
                Err(kube::Error::ReadEvents(_)) => "read".into(),
                Err(e) => format!("other {e}"),
            })
            .collect()
            .await
    }

    #[tokio::test]
    async fn events_whole_split_and_many_in_a_chunk_are_read_in_order() {
        let (a, b, c, d) = (added("a"), added("b"), added("c"), added("d"));
        let (b1, b2) = b.split_at(10);
        let (c1, c2) = c.split_at(c.len() / 2);
        let parts = [
            format!("{a}\n{b1}"),
            b2.to_string(),
            format!("\n{c1}"),
            format!("{c2}\r\n\n{d}\n"),
        ];
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        assert_eq!(read(chunks(&parts)).await, ["a", "b", "c", "d"]);
    }

    #[tokio::test]
    async fn a_last_line_without_a_line_break_is_read_and_a_cut_one_skipped() {
        let a = added("a");
        assert_eq!(read(chunks(&[&a])).await, ["a"]);
        let cut = &a[..a.len() - 3];
        assert_eq!(read(chunks(&[&format!("{a}\n"), cut])).await, ["a"]);
        assert!(read(chunks(&["\n", "\n\r\n"])).await.is_empty());
    }

    #[tokio::test]
    async fn a_status_line_is_an_api_error_and_other_lines_a_decoding_error() {
        let status = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"gone","reason":"Expired","code":410}"#;
        let a = added("a");
        assert_eq!(
            read(chunks(&[&format!("{status}\n[1,2]\n{a}\n")])).await,
            ["api 410", "serde", "a"]
        );
    }

    #[tokio::test]
    async fn a_read_failure_is_the_last_item_and_an_early_end_none() {
        let a = added("a");
        let failing = |e: kube::Error| {
            futures::stream::iter(vec![
                Ok(Bytes::from(format!("{a}\n"))),
                Err(e),
                Ok(Bytes::from(format!("{a}\n"))),
            ])
        };
        let other = kube::Error::Service("connection reset".into());
        assert_eq!(read(failing(other)).await, ["a", "read"]);
        let eof = kube::Error::ReadEvents(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the peer closed",
        ));
        assert_eq!(read(failing(eof)).await, ["a"]);
    }

    #[tokio::test]
    async fn a_failure_in_the_middle_of_a_split_event_yields_no_part_of_it() {
        let (a, b) = (added("a"), added("b"));
        let (b1, b2) = b.split_at(b.len() / 2);
        let cut = |e: kube::Error| {
            futures::stream::iter(vec![
                Ok(Bytes::from(format!("{a}\n{b1}"))),
                Err(e),
                Ok(Bytes::from(format!("{b2}\n"))),
            ])
        };
        let reset = kube::Error::Service("connection reset".into());
        assert_eq!(read(cut(reset)).await, ["a", "read"]);
        let eof = kube::Error::ReadEvents(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the peer closed",
        ));
        assert_eq!(read(cut(eof)).await, ["a"]);
    }

    #[tokio::test]
    async fn an_idle_watch_keeps_no_buffer() {
        let a = added("a");
        let (a1, a2) = a.split_at(20);
        let mut lines = Lines {
            body: chunks(&[]),
            chunk: Bytes::from(format!("{a}\n{a1}")),
            partial: Vec::new(),
            ended: false,
            max_event: MAX_EVENT_BYTES,
        };
        assert!(lines.next_line().is_some());
        assert!(lines.next_line().is_none());
        assert_eq!(lines.partial.len(), a1.len()); // the start of the split event
        lines.chunk = Bytes::from(format!("{a2}\n"));
        assert!(lines.next_line().is_some());
        assert_eq!(lines.partial.capacity(), 0);
        assert!(lines.chunk.is_empty());
    }

    #[tokio::test]
    async fn an_endless_line_is_a_read_error_not_unbounded_memory() {
        let a = added("a");
        // An event, then 100 kB that never end a line (for a bound of 10 kB).
        let body = futures::stream::iter(vec![Ok(Bytes::from(format!("{a}\n")))])
            .chain(futures::stream::repeat_with(|| Ok(Bytes::from(vec![b'x'; 1000]))).take(100));
        let got: Vec<String> = events_within::<ConfigMap, _>(Box::pin(body), 10_000)
            .map(|item| match item {
                Ok(WatchEvent::Added(o)) => o.metadata.name.unwrap_or_default(),
                Err(kube::Error::ReadEvents(e)) => format!("read {:?}", e.kind()),
                other => format!("{other:?}"),
            })
            .collect()
            .await;
        assert_eq!(got, ["a", "read InvalidData"]);
    }

    #[test]
    fn an_error_response_is_its_status_or_one_made_from_its_text() {
        let s = error_status(
            403,
            br#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"forbidden","reason":"Forbidden","code":403}"#,
        );
        assert_eq!((s.code, s.reason.as_str()), (403, "Forbidden"));
        let s = error_status(404, b"404 page not found\n");
        assert_eq!((s.code, s.message.as_str()), (404, "404 page not found"));
    }
}
