//! Reading what a server says about its rate limits.
//!
//! One entry point, [`SignalParser::parse`] (or the shorthand [`parse`]),
//! turns a response's status, headers and optionally a body prefix into one
//! normalized [`Signal`]: the server-directed wait, if any, and the quota
//! state of the binding policy, each with where it came from.
//!
//! Every duration in a [`Signal`] is relative to the moment the response was
//! received; callers add it to their own clock.

use std::time::{Duration, SystemTime};

use http::{HeaderMap, StatusCode};

/// Everything a response said about the server's rate limits.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Signal {
    retry_after: Option<RetryHint>,
    quota: Option<Quota>,
    policies: Vec<Quota>,
}

impl Signal {
    /// The server-directed wait before the next request, if the response gave one.
    pub fn retry_after(&self) -> Option<&RetryHint> {
        self.retry_after.as_ref()
    }

    /// The quota state of the binding policy (least remaining; ties: longest reset).
    pub fn quota(&self) -> Option<&Quota> {
        self.quota.as_ref()
    }

    /// Every policy the response described, binding one included.
    pub fn policies(&self) -> &[Quota] {
        &self.policies
    }

    /// True when the response carried no rate-limit information at all.
    pub fn is_empty(&self) -> bool {
        self.retry_after.is_none() && self.quota.is_none() && self.policies.is_empty()
    }
}

/// A server-directed wait and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryHint {
    delay: Duration,
    source: HintSource,
}

impl RetryHint {
    /// How long to wait, from the moment the response was received.
    pub fn delay(&self) -> Duration {
        self.delay
    }

    /// Which field the wait was read from.
    pub fn source(&self) -> HintSource {
        self.source
    }
}

/// Where a [`RetryHint`] was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HintSource {
    /// `Retry-After: <delay-seconds>`.
    RetryAfterSeconds,
    /// `Retry-After: <HTTP-date>`.
    RetryAfterDate,
    /// `retry-after-ms` header.
    RetryAfterMs,
    /// `x-ms-retry-after-ms` header.
    XMsRetryAfterMs,
    /// `retry_after_ms` member of a problem+json body.
    ProblemRetryAfterMs,
    /// `retry_after` (seconds) member of a problem+json body.
    ProblemRetryAfter,
}

/// The state of one quota policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quota {
    name: Option<String>,
    limit: Option<u64>,
    remaining: Option<u64>,
    reset: Option<Duration>,
    window: Option<Duration>,
    unit: QuotaUnit,
    partition_key: Option<Vec<u8>>,
    source: QuotaSource,
}

impl Quota {
    /// The policy's name (IETF -08 and later), if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    /// Quota units allowed per window (`q`, `RateLimit-Limit`, `X-RateLimit-Limit`).
    pub fn limit(&self) -> Option<u64> {
        self.limit
    }
    /// Quota units left in the current window.
    pub fn remaining(&self) -> Option<u64> {
        self.remaining
    }
    /// Time until the quota is restored, from the moment the response was received.
    pub fn reset(&self) -> Option<Duration> {
        self.reset
    }
    /// The policy window (`w`), if the server stated it.
    pub fn window(&self) -> Option<Duration> {
        self.window
    }
    /// What the quota counts (`qu`).
    pub fn unit(&self) -> QuotaUnit {
        self.unit
    }
    /// The partition key (`pk`), if any.
    pub fn partition_key(&self) -> Option<&[u8]> {
        self.partition_key.as_deref()
    }
    /// Which header dialect the quota was read from.
    pub fn source(&self) -> QuotaSource {
        self.source
    }
}

/// What a quota counts (`qu` in the IETF drafts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum QuotaUnit {
    /// Requests (the default).
    #[default]
    Requests,
    /// Bytes of content.
    ContentBytes,
    /// Requests in flight at once.
    ConcurrentRequests,
    /// A unit this crate does not know.
    Other,
}

/// Which header dialect a [`Quota`] was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum QuotaSource {
    /// Separate `RateLimit-Limit` / `-Remaining` / `-Reset` (drafts -00 … -06).
    IetfSeparate,
    /// The `RateLimit` dictionary (draft -07).
    IetfDictionary,
    /// Lists of named policies in `RateLimit` / `RateLimit-Policy` (drafts -08 … -11).
    IetfList,
    /// `X-RateLimit-*` (GitHub style).
    XRateLimit,
}

/// Parses rate-limit signals; holds the options.
#[derive(Debug, Clone)]
pub struct SignalParser {
    body_limit: usize,
}

impl Default for SignalParser {
    fn default() -> Self {
        Self::new()
    }
}

impl SignalParser {
    /// Default cap on the body prefix read for problem+json hints: 64 KiB,
    /// far above any real problem document and small enough to hold per request.
    pub const DEFAULT_BODY_LIMIT: usize = 64 * 1024;

    /// A parser with the default options.
    pub fn new() -> Self {
        Self {
            body_limit: Self::DEFAULT_BODY_LIMIT,
        }
    }

    /// Read at most this many bytes of a body for hints.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// The body prefix limit in force.
    pub fn max_body_bytes(&self) -> usize {
        self.body_limit
    }

    /// Whether a body with these headers may carry a hint worth reading
    /// (a problem+json or JSON media type).
    pub fn wants_body(&self, _status: StatusCode, _headers: &HeaderMap) -> bool {
        false
    }

    /// Parse a response, using the local clock only when an HTTP-date has
    /// no `Date` header to be measured against.
    pub fn parse(&self, status: StatusCode, headers: &HeaderMap, body: Option<&[u8]>) -> Signal {
        self.parse_at(status, headers, body, SystemTime::now())
    }

    /// [`parse`](Self::parse) with the local clock injected.
    pub fn parse_at(
        &self,
        _status: StatusCode,
        _headers: &HeaderMap,
        _body: Option<&[u8]>,
        _now: SystemTime,
    ) -> Signal {
        Signal::default()
    }
}

/// Shorthand for [`SignalParser::new().parse(…)`](SignalParser::parse).
pub fn parse(status: StatusCode, headers: &HeaderMap, body: Option<&[u8]>) -> Signal {
    SignalParser::new().parse(status, headers, body)
}
