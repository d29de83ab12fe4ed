//! Deciding what a response means: throttled, retry, or final.
//!
//! By default a status in [`Config::retry_statuses`](crate::Config::retry_statuses)
//! (429 and 503) is throttled and anything else final. Servers that refuse
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
use crate::signal::Signal;

/// A response as a classifier sees it.
#[derive(Debug)]
pub struct Response<'a> {
    status: StatusCode,
    headers: &'a HeaderMap,
    signal: &'a Signal,
    config: &'a Config,
}

impl<'a> Response<'a> {
    pub(crate) fn new(
        status: StatusCode,
        headers: &'a HeaderMap,
        signal: &'a Signal,
        config: &'a Config,
    ) -> Self {
        Self {
            status,
            headers,
            signal,
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
    /// problem+json included when [`Classify::may_retry`] let it be read.
    pub fn signal(&self) -> &'a Signal {
        self.signal
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
pub trait Classify: Send + Sync + 'static {
    /// What `response` means.
    fn classify(&self, response: &Response<'_>) -> ResponseClass;

    /// Whether a response with `status` could be anything but final; only
    /// those have a JSON body's prefix read for hints before
    /// [`classify`](Self::classify). Default: any 4xx or 5xx.
    fn may_retry(&self, status: StatusCode) -> bool {
        status.is_client_error() || status.is_server_error()
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

/// GitHub's REST API, as its documentation describes its limits:
///
/// - **primary** limit: `403` or `429` with `x-ratelimit-remaining: 0`:
///   throttled until `x-ratelimit-reset` (an epoch time, measured against
///   the response's `Date`);
/// - **secondary** limit: `403` or `429` with `retry-after`: throttled for
///   that long;
/// - any other `403` is final (permissions); other statuses as
///   [`Response::by_status`].
///
/// Both limits pause every request of the scope, so a client keyed by
/// token ([`scope_by`](crate::ClientBuilder::scope_by)) stops sending as
/// soon as one request learns the limit.
#[derive(Debug, Clone, Copy, Default)]
pub struct GitHub;

impl Classify for GitHub {
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
            let wait = response.signal().quota().and_then(|q| q.reset());
            return ResponseClass::Throttled {
                wait: Some(wait.unwrap_or(Duration::ZERO)),
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
        let status = StatusCode::from_u16(status).unwrap();
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.insert(*k, HeaderValue::from_static(v));
        }
        let signal = crate::signal::parse(status, &map, None);
        let config = Config::default();
        GitHub.classify(&Response::new(status, &map, &signal, &config))
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
