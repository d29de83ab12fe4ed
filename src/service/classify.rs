//! Facts about a request or an error that the engine decides on.

use std::error::Error as StdError;
use std::io;

use http::{HeaderName, HeaderValue, Method};

use crate::engine::Scope;

/// `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header).
pub(crate) static IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// Methods RFC 9110 §9.2.2 defines as idempotent: safe to send twice.
pub(crate) fn is_idempotent(method: &Method) -> bool {
    matches!(
        *method,
        Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE | Method::PUT | Method::DELETE
    )
}

/// Whether `req` may be sent again: an idempotent method, or one made so by
/// an `Idempotency-Key` (generated here when `generate_key` and the method is
/// POST or PATCH), and a body that can be replayed (not a stream).
pub(crate) fn prepare(req: &mut reqwest::Request, generate_key: bool) -> bool {
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
    keyed && req.body().is_none_or(|body| body.as_bytes().is_some())
}

/// 128 random bits, hex: one key per request, reused by all its attempts.
fn generated_key() -> HeaderValue {
    let bits: u128 = rand::random();
    let text = format!("{bits:032x}");
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static("courteous"))
}

/// The default scope: the request's origin, `scheme://host:port`.
pub(crate) fn origin_scope(url: &reqwest::Url) -> Scope {
    let host = url.host_str().unwrap_or("");
    match url.port_or_known_default() {
        Some(port) => Scope::new(format!("{}://{host}:{port}", url.scheme())),
        None => Scope::new(format!("{}://{host}", url.scheme())),
    }
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
            assert!(prepare(&mut request(m), false));
        }
    }

    #[test]
    fn post_needs_a_key() {
        let mut post = request(Method::POST);
        assert!(!prepare(&mut post, false));
        assert!(!post.headers().contains_key(&IDEMPOTENCY_KEY));
        post.headers_mut()
            .insert(IDEMPOTENCY_KEY.clone(), HeaderValue::from_static("k1"));
        assert!(prepare(&mut post, false));
        let mut patch = request(Method::PATCH);
        assert!(prepare(&mut patch, true));
        assert_eq!(patch.headers()[&IDEMPOTENCY_KEY].len(), 32);
    }

    #[test]
    fn streaming_body_is_not_retryable() {
        let mut put = request(Method::PUT);
        let chunks: Vec<Result<&'static str, io::Error>> = vec![Ok("a")];
        *put.body_mut() = Some(reqwest::Body::wrap_stream(futures_util::stream::iter(
            chunks,
        )));
        assert!(!prepare(&mut put, false));
        let mut put = request(Method::PUT);
        *put.body_mut() = Some(reqwest::Body::from("bytes"));
        assert!(prepare(&mut put, false));
    }

    #[test]
    fn origin_includes_default_port() {
        let url: reqwest::Url = "https://api.example.com/v1?q=1".parse().unwrap();
        assert_eq!(origin_scope(&url).as_str(), "https://api.example.com:443");
    }

    #[test]
    fn io_connection_errors_are_transient() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert!(is_transient(&refused));
        let other = io::Error::other("nope");
        assert!(!is_transient(&other));
    }
}
