//! Deciding what a response means: throttled, retry, final, or refused
//! for good.
//!
//! By default a status in [`Config::retry_statuses`](crate::Config::retry_statuses)
//! (429 and 503) is throttled and anything else final, except a 503 without
//! any hint: retried for its request alone, throttled on a second in a row
//! (see [`retry_statuses`](crate::ClientBuilder::retry_statuses)). Servers that refuse
//! otherwise need a [`Classify`]: it sees the status, the headers and the
//! parsed [`Signal`], and returns a [`ResponseClass`]. [`GitHub`] is the
//! preset for GitHub's REST API, which refuses with `403`:
//!
//! ```
//! let client = courteous::Client::builder()
//!     .classifier(courteous::classify::GitHub)
//!     .build();
//! # let _ = client;
//! ```
//!
//! A closure is a classifier too:
//!
//! ```
//! use courteous::classify::{Response, ResponseClass};
//!
//! // This API answers 420 when it is throttling, and 502 now and then.
//! let classify = |response: &Response<'_>| match response.status().as_u16() {
//!     420 => ResponseClass::Throttled { wait: None },
//!     502 => ResponseClass::Retry,
//!     _ => response.by_status(),
//! };
//! let layer = courteous::CourteousLayer::new().classifier(classify);
//! # let _ = layer;
//! ```

use std::fmt;
use std::time::Duration;

use http::{HeaderMap, StatusCode};

use crate::engine::Config;
pub use crate::engine::ResponseClass;
use crate::signal::{Refusal, Signal};

/// A response as a classifier sees it.
#[derive(Debug)]
pub struct Response<'a> {
    status: StatusCode,
    headers: &'a HeaderMap,
    signal: &'a Signal,
    body: Option<&'a [u8]>,
    config: &'a Config,
}

impl<'a> Response<'a> {
    pub(crate) fn new(
        status: StatusCode,
        headers: &'a HeaderMap,
        signal: &'a Signal,
        body: Option<&'a [u8]>,
        config: &'a Config,
    ) -> Self {
        Self {
            status,
            headers,
            signal,
            body,
            config,
        }
    }

    /// The status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The headers.
    pub fn headers(&self) -> &'a HeaderMap {
        self.headers
    }

    /// What the response said about rate limits (hints, quota), the body's
    /// problem+json included when it was read (see [`body_prefix`](Self::body_prefix)).
    pub fn signal(&self) -> &'a Signal {
        self.signal
    }

    /// The body's first bytes, when they were read: only for one of the
    /// [`retry_statuses`](Config::retry_statuses) or a status
    /// [`Classify::may_retry`] accepts, with a JSON media type, and at most
    /// [`SignalParser::max_body_bytes`](crate::signal::SignalParser::max_body_bytes)
    /// (64 KiB by default). The response handed back still has its whole body.
    pub fn body_prefix(&self) -> Option<&'a [u8]> {
        self.body
    }

    /// The default classification: throttled if the status is one of the
    /// configured [`retry_statuses`](Config::retry_statuses), else final.
    pub fn by_status(&self) -> ResponseClass {
        if self.config.is_retry_status(self.status) {
            ResponseClass::Throttled { wait: None }
        } else {
            ResponseClass::Final
        }
    }
}

/// Says what a response means for its request.
///
/// Implemented for closures `Fn(&Response<'_>) -> ResponseClass`.
///
/// [`ResponseClass::Final`] hands the response back as `Ok`, whatever its
/// status. A refusal that no wait ends (out of credit, a quota spent for
/// the day, a permission the account lacks) is
/// [`ResponseClass::Refused`]: the request stops at once, never retried,
/// with an error whose [`is_final_refusal`](crate::Error::is_final_refusal)
/// says so (its [`refusal`](crate::Error::refusal) is the signal's, and the
/// response rides inside); the scope goes on sending. The
/// [presets](crate::preset) return it for the refusals their APIs document
/// as final.
///
/// ```
/// use courteous::classify::{Response, ResponseClass};
///
/// // This API answers 402 when the account is out of credit.
/// let classify = |response: &Response<'_>| match response.status().as_u16() {
///     402 => ResponseClass::Refused,
///     _ => response.by_status(),
/// };
/// let client = courteous::Client::builder().classifier(classify).build();
/// # let _ = client;
/// ```
pub trait Classify: Send + Sync + 'static {
    /// What `response` means.
    fn classify(&self, response: &Response<'_>) -> ResponseClass;

    /// Whether a response with `status`, besides the configured
    /// [`retry_statuses`](Config::retry_statuses) (always read), could be
    /// anything but final; only those have a JSON body's prefix read for
    /// hints ([`Response::body_prefix`], the problem+json fields of
    /// [`Response::signal`]) before [`classify`](Self::classify). Reading
    /// it holds the response back until up to
    /// [`max_body_bytes`](crate::signal::SignalParser::max_body_bytes)
    /// (64 KiB) have arrived, so it is not done for every error.
    /// Default: `403` only (the status APIs such as GitHub's refuse with).
    /// A classifier that throttles another status and wants its body says
    /// so here; its headers are parsed either way.
    fn may_retry(&self, status: StatusCode) -> bool {
        status == StatusCode::FORBIDDEN
    }
}

impl<F> Classify for F
where
    F: Fn(&Response<'_>) -> ResponseClass + Send + Sync + 'static,
{
    fn classify(&self, response: &Response<'_>) -> ResponseClass {
        self(response)
    }
}

/// GitHub's REST API, as its documentation describes its limits
/// ("Rate limits for the REST API", docs.github.com):
///
/// - **primary** limit: `403` or `429` with `x-ratelimit-remaining: 0`:
///   throttled until `x-ratelimit-reset` (an epoch time, measured against
///   the response's `Date`); without a usable reset, throttled with the
///   engine's backoff (never resent at once into an empty quota);
/// - **secondary** limit: `403` or `429` with `retry-after`: throttled for
///   that long; without `retry-after`, GitHub says "wait at least one
///   minute" and only the JSON body tells it apart (its `message` mentions
///   "secondary rate limit"): such a `403` or `429` is throttled for
///   [`GitHub::SECONDARY_WAIT`] (60 s);
/// - a GraphQL `403` or `429` whose body has `errors[].type ==
///   "RATE_LIMITED"`: throttled with the engine's backoff (a `200` with
///   that error is not seen: success bodies are not read);
/// - any other `403` is final (permissions); other statuses as
///   [`Response::by_status`].
///
/// Both limits pause every request of the scope, so a client keyed by
/// token ([`scope_by`](crate::ClientBuilder::scope_by)) stops sending as
/// soon as one request learns the limit.
///
/// A primary limit resets once an hour, so its wait is usually longer
/// than the default [`max_wait`](crate::ClientBuilder::max_wait) (60 s):
/// the request then comes back at once as a typed error
/// ([`Error::is_wait_too_long`](crate::Error::is_wait_too_long)) instead of sleeping;
/// raise `max_wait` to have it wait for the reset. The secondary-limit
/// wait (60 s) is within the default.
///
/// The body is seen only when it was read for hints: a JSON media type
/// and a body limit above zero ([`SignalParser`](crate::signal::SignalParser)).
/// A secondary limit with neither `retry-after` nor such a body is final.
#[derive(Debug, Clone, Copy, Default)]
pub struct GitHub;

impl GitHub {
    /// How long a secondary limit without `retry-after` is waited out:
    /// GitHub's documentation says "wait at least one minute".
    pub const SECONDARY_WAIT: Duration = Duration::from_secs(60);
}

/// What GitHub's secondary-limit body says (`"You have exceeded a secondary
/// rate limit..."`), matched without regard to case.
const SECONDARY_MARK: &[u8] = b"secondary rate limit";

fn mentions_secondary_limit(body: &[u8]) -> bool {
    body.windows(SECONDARY_MARK.len())
        .any(|w| w.eq_ignore_ascii_case(SECONDARY_MARK))
}

impl Classify for GitHub {
    fn may_retry(&self, status: StatusCode) -> bool {
        status == StatusCode::FORBIDDEN || status == StatusCode::TOO_MANY_REQUESTS
    }

    fn classify(&self, response: &Response<'_>) -> ResponseClass {
        let status = response.status();
        if status != StatusCode::FORBIDDEN && status != StatusCode::TOO_MANY_REQUESTS {
            return response.by_status();
        }
        if response.signal().retry_after().is_some() {
            return ResponseClass::Throttled { wait: None };
        }
        let exhausted = response
            .headers()
            .get("x-ratelimit-remaining")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() == "0");
        if exhausted {
            // No reset: backoff, never an immediate resend into an empty quota.
            let wait = response.signal().quota().and_then(|q| q.reset());
            return ResponseClass::Throttled {
                wait: wait.filter(|w| !w.is_zero()),
            };
        }
        if response.signal().refusal() == Some(&Refusal::GraphqlRateLimited) {
            // GraphQL's `errors[].type == "RATE_LIMITED"`: the engine's backoff.
            return ResponseClass::Throttled { wait: None };
        }
        if response.body_prefix().is_some_and(mentions_secondary_limit) {
            return ResponseClass::Throttled {
                wait: Some(Self::SECONDARY_WAIT),
            };
        }
        response.by_status()
    }
}

/// How a classifier is held by the adapters.
pub(crate) type SharedClassifier = std::sync::Arc<dyn Classify>;

pub(crate) struct Debuggable<'a>(pub(crate) &'a Option<SharedClassifier>);

impl fmt::Debug for Debuggable<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(_) => f.write_str("custom"),
            None => f.write_str("by status"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn classify(status: u16, headers: &[(&'static str, &'static str)]) -> ResponseClass {
        classify_body(status, headers, None)
    }

    fn classify_body(
        status: u16,
        headers: &[(&'static str, &'static str)],
        body: Option<&[u8]>,
    ) -> ResponseClass {
        let status = StatusCode::from_u16(status).unwrap();
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.insert(*k, HeaderValue::from_static(v));
        }
        let signal = crate::signal::parse(status, &map, None);
        let config = Config::default();
        GitHub.classify(&Response::new(status, &map, &signal, body, &config))
    }

    #[test]
    fn only_403_bodies_are_read_for_a_closure_by_default() {
        let closure = |r: &Response<'_>| r.by_status();
        assert!(closure.may_retry(StatusCode::FORBIDDEN));
        assert!(!closure.may_retry(StatusCode::NOT_FOUND));
        assert!(!closure.may_retry(StatusCode::INTERNAL_SERVER_ERROR));
        assert!(GitHub.may_retry(StatusCode::TOO_MANY_REQUESTS));
        assert!(!GitHub.may_retry(StatusCode::UNPROCESSABLE_ENTITY));
    }

    #[test]
    fn github_primary_without_a_reset_backs_off() {
        for status in [403, 429] {
            assert_eq!(
                classify(status, &[("x-ratelimit-remaining", "0")]),
                ResponseClass::Throttled { wait: None },
                "{status}"
            );
        }
        // A reset that cannot be read is no reset either.
        assert_eq!(
            classify(
                403,
                &[
                    ("x-ratelimit-remaining", "0"),
                    ("x-ratelimit-reset", "soon")
                ]
            ),
            ResponseClass::Throttled { wait: None }
        );
    }

    #[test]
    fn github_secondary_without_retry_after_waits_a_minute_from_the_body() {
        let body = br#"{"message":"You have exceeded a secondary rate limit and have been temporarily blocked from content creation.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}"#;
        let json = [("content-type", "application/json; charset=utf-8")];
        for status in [403, 429] {
            assert_eq!(
                classify_body(status, &json, Some(body)),
                ResponseClass::Throttled {
                    wait: Some(GitHub::SECONDARY_WAIT)
                },
                "{status}"
            );
        }
        assert_eq!(
            classify_body(
                403,
                &json,
                Some(b"{\"message\":\"Resource not accessible\"}")
            ),
            ResponseClass::Final
        );
        // Without the body (not read), such a 403 cannot be told apart.
        assert_eq!(classify_body(403, &json, None), ResponseClass::Final);
    }

    #[test]
    fn github_primary_waits_for_the_reset() {
        let at = std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let date = httpdate::fmt_http_date(at);
        let date: &'static str = Box::leak(date.into_boxed_str());
        let class = classify(
            403,
            &[
                ("x-ratelimit-limit", "60"),
                ("x-ratelimit-remaining", "0"),
                ("x-ratelimit-reset", "1700000030"),
                ("date", date),
            ],
        );
        assert_eq!(
            class,
            ResponseClass::Throttled {
                wait: Some(Duration::from_secs(30))
            }
        );
    }

    #[test]
    fn github_secondary_uses_retry_after_and_other_403s_are_final() {
        assert_eq!(
            classify(403, &[("retry-after", "60")]),
            ResponseClass::Throttled { wait: None }
        );
        assert_eq!(
            classify(403, &[("x-ratelimit-remaining", "12")]),
            ResponseClass::Final
        );
        assert_eq!(classify(404, &[]), ResponseClass::Final);
        assert_eq!(classify(429, &[]), ResponseClass::Throttled { wait: None });
    }
}
