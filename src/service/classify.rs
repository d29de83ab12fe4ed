//! Facts about a request or an error that the engine decides on.

use std::borrow::Cow;
use std::error::Error as StdError;
use std::io;

use http::{HeaderName, HeaderValue, Method};

use crate::engine::ResponseClass;
use crate::error::NotRetryable;
use crate::signal::Signal;

/// `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header).
pub(crate) static IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// Methods RFC 9110 §9.2.2 defines as idempotent: safe to send twice.
pub(crate) fn is_idempotent(method: &Method) -> bool {
    matches!(
        *method,
        Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE | Method::PUT | Method::DELETE
    )
}

/// Whether `req` may be sent again (`Ok`), or why not: an idempotent
/// method, or one made so by an `Idempotency-Key` (generated here when
/// `generate_key` and the method is POST or PATCH), and a body that can be
/// replayed (not a stream).
pub(crate) fn prepare(req: &mut reqwest::Request, generate_key: bool) -> Result<(), NotRetryable> {
    let method = req.method();
    let keyed = if is_idempotent(method) || req.headers().contains_key(&IDEMPOTENCY_KEY) {
        true
    } else if generate_key && (*method == Method::POST || *method == Method::PATCH) {
        req.headers_mut()
            .insert(IDEMPOTENCY_KEY.clone(), generated_key());
        true
    } else {
        false
    };
    if !keyed {
        Err(NotRetryable::Method)
    } else if req.body().is_none_or(|body| body.as_bytes().is_some()) {
        Ok(())
    } else {
        Err(NotRetryable::Body)
    }
}

/// The default classification of a 503 that says nothing about rate limits
/// (no `Retry-After` or equivalent, no quota fields, no problem body hint:
/// an empty `signal`): often a maintenance page or an overloaded upstream,
/// not a quota. The first such answer a request gets is retried with
/// backoff for that request alone ([`ResponseClass::Retry`]: the scope does
/// not pause, the others keep sending); a second in a row for the same
/// request (`previous_was_bare`) is throttling like any refusal without a
/// hint: the scope pauses. Any other `class` is kept.
pub(crate) fn bare_503(
    class: ResponseClass,
    status: http::StatusCode,
    signal: &Signal,
    previous_was_bare: bool,
) -> ResponseClass {
    let bare = status == http::StatusCode::SERVICE_UNAVAILABLE && signal.is_empty();
    match class {
        ResponseClass::Throttled { wait: None } if bare && !previous_was_bare => {
            ResponseClass::Retry
        }
        class => class,
    }
}

/// A copy of a request built by reqwest's `RequestBuilder`, to send again;
/// `None` if its body is a stream. Field by field when it has no body
/// (cheaper than `try_clone`, which rebuilds the extensions twice); such a
/// request's only extension is its timeout, copied here.
pub(crate) fn replay_copy(req: &reqwest::Request) -> Option<reqwest::Request> {
    if req.body().is_some() {
        return req.try_clone();
    }
    let mut copy = reqwest::Request::new(req.method().clone(), req.url().clone());
    *copy.headers_mut() = req.headers().clone();
    *copy.version_mut() = req.version();
    if let Some(timeout) = req.timeout() {
        *copy.timeout_mut() = Some(*timeout);
    }
    Some(copy)
}

/// 128 random bits, hex: one key per request, reused by all its attempts.
fn generated_key() -> HeaderValue {
    let bits: u128 = rand::random();
    let text = format!("{bits:032x}");
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static("courteous"))
}

/// The default scope key: the request's origin as the URL spells it,
/// `scheme://host[:port]` (a default port is omitted, as URLs omit it).
/// Borrowed from the URL when it carries no credentials.
pub(crate) fn origin_key(url: &reqwest::Url) -> Cow<'_, str> {
    let scheme = url.scheme();
    let host = url.host_str().unwrap_or("");
    let port = url.port();
    if url.username().is_empty() && url.password().is_none() {
        // `scheme://host[:port]` is exactly how the URL starts.
        let digits = port.map_or(0, |p| 1 + p.checked_ilog10().unwrap_or(0) as usize + 1);
        let end = scheme.len() + 3 + host.len() + digits;
        if let Some(origin) = url.as_str().get(..end) {
            return Cow::Borrowed(origin);
        }
    }
    Cow::Owned(match port {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    })
}

/// Whether a transport error is worth retrying: a connection failure or a
/// timeout (reqwest's, or an `io::Error` of those kinds in the chain).
pub(crate) fn is_transient(err: &(dyn StdError + 'static)) -> bool {
    let mut current = Some(err);
    while let Some(e) = current {
        if let Some(r) = e.downcast_ref::<reqwest::Error>()
            && (r.is_connect() || r.is_timeout())
        {
            return true;
        }
        if let Some(io) = e.downcast_ref::<io::Error>()
            && is_transient_io(io.kind())
        {
            return true;
        }
        current = e.source();
    }
    false
}

fn is_transient_io(kind: io::ErrorKind) -> bool {
    matches!(
        kind,
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::NotConnected
            | io::ErrorKind::TimedOut
    )
}

/// Whether an error chain holds an `io::Error` of a connection kind.
pub(crate) fn is_connect_io(err: Option<&(dyn StdError + Send + Sync + 'static)>) -> bool {
    let mut current: Option<&(dyn StdError + 'static)> = err.map(|e| e as _);
    while let Some(e) = current {
        if let Some(io) = e.downcast_ref::<io::Error>()
            && matches!(
                io.kind(),
                io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset
            )
        {
            return true;
        }
        current = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: Method) -> reqwest::Request {
        reqwest::Request::new(method, "http://127.0.0.1:9/x".parse().unwrap())
    }

    #[test]
    fn idempotent_methods_are_retryable() {
        for m in [
            Method::GET,
            Method::HEAD,
            Method::OPTIONS,
            Method::TRACE,
            Method::PUT,
            Method::DELETE,
        ] {
            assert!(prepare(&mut request(m), false).is_ok());
        }
    }

    #[test]
    fn post_needs_a_key() {
        let mut post = request(Method::POST);
        assert_eq!(prepare(&mut post, false), Err(NotRetryable::Method));
        assert!(!post.headers().contains_key(&IDEMPOTENCY_KEY));
        post.headers_mut()
            .insert(IDEMPOTENCY_KEY.clone(), HeaderValue::from_static("k1"));
        assert!(prepare(&mut post, false).is_ok());
        let mut patch = request(Method::PATCH);
        assert!(prepare(&mut patch, true).is_ok());
        assert_eq!(patch.headers()[&IDEMPOTENCY_KEY].len(), 32);
    }

    #[test]
    fn streaming_body_is_not_retryable() {
        let mut put = request(Method::PUT);
        let chunks: Vec<Result<&'static str, io::Error>> = vec![Ok("a")];
        *put.body_mut() = Some(reqwest::Body::wrap_stream(futures_util::stream::iter(
            chunks,
        )));
        assert_eq!(prepare(&mut put, false), Err(NotRetryable::Body));
        let mut put = request(Method::PUT);
        *put.body_mut() = Some(reqwest::Body::from("bytes"));
        assert!(prepare(&mut put, false).is_ok());
    }

    #[test]
    fn replay_copies_keep_what_a_builder_sets() {
        let client = reqwest::Client::new();
        let get = client
            .get("http://127.0.0.1:9/x?q=1")
            .header("x-a", "1")
            .timeout(std::time::Duration::from_secs(3))
            .version(http::Version::HTTP_11)
            .build()
            .unwrap();
        let copy = replay_copy(&get).unwrap();
        assert_eq!(copy.method(), get.method());
        assert_eq!(copy.url(), get.url());
        assert_eq!(copy.headers(), get.headers());
        assert_eq!(copy.timeout(), get.timeout());
        assert_eq!(copy.version(), get.version());
        let put = client
            .put("http://127.0.0.1:9/x")
            .body("b")
            .build()
            .unwrap();
        let copy = replay_copy(&put).unwrap();
        assert_eq!(
            copy.body().and_then(reqwest::Body::as_bytes),
            Some(&b"b"[..])
        );
    }

    #[test]
    fn origin_is_scheme_host_and_port() {
        let key = |u: &str| origin_key(&u.parse().unwrap()).into_owned();
        assert_eq!(
            key("https://api.example.com/v1?q=1"),
            "https://api.example.com"
        );
        assert_eq!(
            key("https://API.example.com:443/v1"),
            "https://api.example.com"
        );
        assert_eq!(key("http://127.0.0.1:8080/r"), "http://127.0.0.1:8080");
        assert_eq!(key("http://[::1]:9/"), "http://[::1]:9");
        assert_eq!(key("http://user:pw@host:81/x"), "http://host:81");
        assert_eq!(key("http://h:65535"), "http://h:65535");
        assert_eq!(key("http://h:10/"), "http://h:10");
        assert!(matches!(
            origin_key(&"http://h:1/p".parse().unwrap()),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn io_connection_errors_are_transient() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert!(is_transient(&refused));
        let other = io::Error::other("nope");
        assert!(!is_transient(&other));
    }
}
