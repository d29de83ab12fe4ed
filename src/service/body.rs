//! Reading a response's body prefix for hints (a throttled response) or
//! for what its request spent (a success's `usage`), and handing the
//! response back with its body unchanged.
//!
//! Only responses whose status and media type may carry either
//! ([`SignalParser::wants_body`]: an error in JSON or XML; a `2xx` in
//! `application/json` when the parser reads usage) are read, and at most
//! [`SignalParser::max_body_bytes`] (64 KiB by default). A longer body is not
//! buffered: the prefix read is chained in front of the rest of the stream,
//! so the caller still reads every byte. Other responses are not touched.

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use reqwest::ResponseBuilderExt;

use crate::signal::{Signal, SignalParser};

/// Parses `resp`'s signal, reading a bounded body prefix when the parser
/// wants one; returns the response with its body intact, and the prefix
/// read (at most [`SignalParser::max_body_bytes`]; `None` if none was read)
/// for the classifier to see.
pub(crate) async fn read_signal(
    mut resp: reqwest::Response,
    parser: &SignalParser,
) -> (reqwest::Response, Signal, Option<Bytes>) {
    let status = resp.status();
    if !parser.wants_body(status, resp.headers()) {
        let signal = parser.parse(status, resp.headers(), None);
        return (resp, signal, None);
    }
    let limit = parser.max_body_bytes();
    let mut chunks: Vec<Bytes> = Vec::new();
    let mut len = 0usize;
    let mut ended = false;
    let mut failure = None;
    while len < limit {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                len += chunk.len();
                chunks.push(chunk);
            }
            Ok(None) => {
                ended = true;
                break;
            }
            Err(err) => {
                failure = Some(err);
                break;
            }
        }
    }
    let prefix = concat(&chunks);
    let seen = prefix.slice(..prefix.len().min(limit));
    let signal = parser.parse(status, resp.headers(), Some(&seen));

    let url = resp.url().clone();
    let version = resp.version();
    let headers = std::mem::take(resp.headers_mut());
    let extensions = std::mem::take(resp.extensions_mut());
    let body = if ended {
        reqwest::Body::from(prefix)
    } else {
        let head = futures_util::stream::iter(chunks.into_iter().map(Ok::<_, reqwest::Error>));
        match failure {
            Some(err) => {
                reqwest::Body::wrap_stream(head.chain(futures_util::stream::iter([Err(err)])))
            }
            None => reqwest::Body::wrap_stream(head.chain(resp.bytes_stream())),
        }
    };
    let mut rebuilt = http::Response::new(body);
    *rebuilt.status_mut() = status;
    *rebuilt.version_mut() = version;
    *rebuilt.headers_mut() = headers;
    *rebuilt.extensions_mut() = extensions;
    let (url_parts, ()) = http::Response::builder()
        .url(url)
        .body(())
        .unwrap_or_default()
        .into_parts();
    rebuilt.extensions_mut().extend(url_parts.extensions);
    (reqwest::Response::from(rebuilt), signal, Some(seen))
}

fn concat(chunks: &[Bytes]) -> Bytes {
    match chunks {
        [] => Bytes::new(),
        [one] => one.clone(),
        many => {
            let mut all = BytesMut::with_capacity(many.iter().map(Bytes::len).sum());
            for chunk in many {
                all.extend_from_slice(chunk);
            }
            all.freeze()
        }
    }
}
