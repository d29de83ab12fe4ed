//! [`RequestOptions`]: limits and a scope for one request, read by every
//! adapter.

use std::sync::LazyLock;
use std::time::Duration;

use crate::engine::{Attempt, Cost, Scope};

/// Settings for one request that replace the client's: attempts, the
/// longest wait, the deadline, the scope. Unset fields keep the client's
/// [`Config`](crate::Config).
///
/// The three adapters read them from the same places:
///
/// - [`RequestBuilder::options`](crate::RequestBuilder::options) on the
///   ready client;
/// - the request's own extensions, for any adapter: [`attach`](Self::attach)
///   them to a built `reqwest::Request`, or put them in an
///   `http::Request`'s extensions before converting it with
///   `reqwest::Request::try_from`;
/// - with the `middleware` feature, also `reqwest-middleware`'s extensions
///   (`RequestBuilder::with_extension(options)`), which win over the
///   request's.
///
/// reqwest 0.13 keeps a `reqwest::Request`'s extensions private; only its
/// conversions to and from `http::Request` carry them. So the tower layer
/// and the middleware read them by converting a shell of the request (its
/// URL, headers and body set aside, so nothing is re-parsed or lost), a few
/// hundred nanoseconds per request.
///
/// ```
/// use std::time::Duration;
/// use courteous::RequestOptions;
///
/// // A health check: one attempt, never wait more than a second for it.
/// let quick = RequestOptions::new().no_retries().max_wait(Duration::from_secs(1));
/// assert_eq!(quick.get_max_attempts(), Some(1));
///
/// let mut request = reqwest::Request::new(
///     http::Method::GET,
///     "http://127.0.0.1:9/health".parse().unwrap(),
/// );
/// quick.clone().attach(&mut request);
/// assert_eq!(RequestOptions::of(&mut request), Some(quick));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestOptions {
    max_attempts: Option<u32>,
    max_wait: Option<Duration>,
    deadline: Option<Option<Duration>>,
    scope: Option<Scope>,
    costs: Vec<Cost>,
}

impl RequestOptions {
    /// No overrides: the client's configuration applies.
    pub fn new() -> Self {
        Self::default()
    }

    /// Attempts for this request, the first included (at least 1).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = Some(attempts.max(1));
        self
    }

    /// Send this request once: it is never retried (a throttled answer
    /// still pauses its scope for the others).
    pub fn no_retries(self) -> Self {
        self.max_attempts(1)
    }

    /// The longest single wait for this request; a longer one gives up.
    pub fn max_wait(mut self, wait: Duration) -> Self {
        self.max_wait = Some(wait);
        self
    }

    /// This request's deadline, from `send` (`None`: no deadline),
    /// replacing the client's: it bounds the whole request (attempts,
    /// transport, waits) and cancels an attempt still out when it passes
    /// ([`ClientBuilder::deadline`](crate::ClientBuilder::deadline) says
    /// how it relates to reqwest's per-attempt `timeout`).
    pub fn deadline(mut self, deadline: impl Into<Option<Duration>>) -> Self {
        self.deadline = Some(deadline.into());
        self
    }

    /// Count this request in `scope` instead of the one the client's
    /// scope key (its origin, by default) gives.
    pub fn scope(mut self, scope: impl Into<Scope>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// What this request spends of a quota in another unit than requests
    /// (model tokens, say), so it waits until that quota has room for it
    /// ([`Cost`]). One cost per unit: a second in the same unit replaces
    /// the first. Undeclared, a request is taken to cost what the readings
    /// showed earlier ones cost.
    pub fn cost(mut self, cost: Cost) -> Self {
        self.costs.retain(|c| c.unit() != cost.unit());
        self.costs.push(cost);
        self
    }

    /// The attempts set, if any.
    pub fn get_max_attempts(&self) -> Option<u32> {
        self.max_attempts
    }

    /// The longest wait set, if any.
    pub fn get_max_wait(&self) -> Option<Duration> {
        self.max_wait
    }

    /// The deadline set, if any (`Some(None)`: none at all).
    pub fn get_deadline(&self) -> Option<Option<Duration>> {
        self.deadline
    }

    /// The scope set, if any.
    pub fn get_scope(&self) -> Option<&Scope> {
        self.scope.as_ref()
    }

    /// The costs declared, one per unit.
    pub fn get_costs(&self) -> &[Cost] {
        &self.costs
    }

    /// Puts these options in `request`'s extensions, replacing any there.
    pub fn attach(self, request: &mut reqwest::Request) {
        with_extensions(request, |extensions| {
            extensions.insert(self);
        });
    }

    /// The options in `request`'s extensions, if any (`&mut`: reading
    /// them takes the request apart and back together, see above).
    pub fn of(request: &mut reqwest::Request) -> Option<Self> {
        with_extensions(request, |extensions| extensions.get::<Self>().cloned())
    }

    pub(crate) fn limit(&self, attempt: Attempt) -> Attempt {
        attempt.with_limits(self.max_attempts, self.max_wait, self.deadline)
    }
}

/// The URL of the shell converted in place of the request's own (parsed
/// once; converting it costs a short parse each way).
const SHELL: &str = "http://shell.invalid/";
static SHELL_URL: LazyLock<reqwest::Url> =
    LazyLock::new(|| reqwest::Url::parse(SHELL).unwrap_or_else(|_| unreachable!("a valid URL")));

/// Runs `f` over `request`'s extensions. reqwest exposes them only through
/// its `http::Request` conversions, so the request's URL, headers and body
/// are set aside, the rest converted there and back, and everything put
/// back. Neither conversion can fail on the shell's fixed URL; if one did,
/// the request would be rebuilt without its extensions.
pub(crate) fn with_extensions<R>(
    request: &mut reqwest::Request,
    f: impl FnOnce(&mut http::Extensions) -> R,
) -> R {
    let url = std::mem::replace(request.url_mut(), SHELL_URL.clone());
    let headers = std::mem::take(request.headers_mut());
    let body = request.body_mut().take();
    let method = request.method().clone();
    let version = request.version();
    let shell = std::mem::replace(
        request,
        reqwest::Request::new(method.clone(), SHELL_URL.clone()),
    );
    let mut extensions = match http::Request::<reqwest::Body>::try_from(shell) {
        Ok(converted) => converted.into_parts().0.extensions,
        Err(_) => http::Extensions::new(),
    };
    let out = f(&mut extensions);
    let mut parts = http::Request::new(()).into_parts().0;
    parts.method = method.clone();
    parts.uri = http::Uri::from_static(SHELL);
    parts.version = version;
    parts.extensions = extensions;
    let back = http::Request::from_parts(parts, reqwest::Body::from(Vec::new()));
    let mut rebuilt = reqwest::Request::try_from(back).unwrap_or_else(|_| {
        let mut plain = reqwest::Request::new(method, SHELL_URL.clone());
        *plain.version_mut() = version;
        plain
    });
    *rebuilt.url_mut() = url;
    *rebuilt.headers_mut() = headers;
    *rebuilt.body_mut() = body;
    *request = rebuilt;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_round_trip_keeps_the_request() {
        let client = reqwest::Client::new();
        let mut req = client
            .post("http://user:pw@127.0.0.1:9/x?q=1#frag")
            .header("x-a", "1")
            .body("payload")
            .timeout(Duration::from_secs(3))
            .version(http::Version::HTTP_11)
            .build()
            .unwrap();
        let before = format!("{req:?}");
        let url = req.url().clone();
        assert_eq!(RequestOptions::of(&mut req), None);
        let options = RequestOptions::new().max_attempts(2).scope("api-key-1");
        options.clone().attach(&mut req);
        assert_eq!(RequestOptions::of(&mut req), Some(options));
        assert_eq!(format!("{req:?}"), before);
        assert_eq!(req.url(), &url);
        assert!(req.headers().contains_key("authorization"));
        assert_eq!(req.timeout(), Some(&Duration::from_secs(3)));
        assert_eq!(
            req.body().and_then(reqwest::Body::as_bytes),
            Some(&b"payload"[..])
        );
        let body_less = reqwest::Request::new(http::Method::GET, SHELL_URL.clone());
        let mut copy = body_less.try_clone().unwrap();
        RequestOptions::new().attach(&mut copy);
        assert!(copy.body().is_none());
    }
}
