//! Reading what a server says about its rate limits.
//!
//! One entry point, [`SignalParser::parse`] (or the shorthand [`parse`]),
//! turns a response's status, headers and optionally a body prefix into one
//! normalized [`Signal`]: the server-directed wait, if any, and the quota
//! state of the binding policy, each with where it came from.
//!
//! Every duration in a [`Signal`] is relative to the moment the response was
//! received; callers add it to their own clock.
//!
//! # What is read
//!
//! - `Retry-After` as delay-seconds or an HTTP-date (all three RFC 9110
//!   forms), the date measured against the response's own `Date` header when
//!   present so clock skew cancels, else against the local clock; a past date
//!   is a zero wait.
//! - `retry-after-ms`, `x-ms-retry-after-ms`, and RFC 9457 problem bodies
//!   (`retry_after_ms`, `retry_after` in possibly fractional seconds,
//!   `violated-policies`) of error responses with a JSON media type.
//! - The IETF `RateLimit-*`, `RateLimit` and `RateLimit-Policy` fields in
//!   every draft shape, and `X-RateLimit-*`.
//! - The fields only one API sends, without any setup: OpenAI's
//!   `x-ratelimit-*-{requests,tokens}` (Go-duration resets), Anthropic's
//!   `anthropic-ratelimit-*` (RFC 3339 resets), GitHub's
//!   `x-ratelimit-resource`, Discord's `X-RateLimit-Bucket`/`-Global`/`-Scope`,
//!   GitLab's `RateLimit-Observed`/`-Name`/`-ResetTime`, Shopify's
//!   `X-Shopify-Shop-Api-Call-Limit`, Azure Resource Manager's
//!   `x-ms-ratelimit-remaining-*`, X's `x-rate-limit-*`, AWS's
//!   `x-amzn-ErrorType`, `x-should-retry`; and from error bodies Google's
//!   `RetryInfo` and `QuotaFailure`, OpenAI's `insufficient_quota`, AWS
//!   error codes, GraphQL rate-limit errors and Shopify's `throttleStatus`
//!   ([`Signal::refusal`], [`Signal::bucket`], [`Signal::is_global`]). One
//!   response can describe several quotas, each with a name and a
//!   [`QuotaUnit`]. The table of APIs is in `docs/apis.md`.
//! - With [`SignalParser::read_usage`] (the OpenAI and Anthropic presets
//!   turn it on): the `usage` of a success body in `application/json`,
//!   what the request spent ([`Signal::usage`], [`Usage`]).
//!
//! # Precedence
//!
//! `Retry-After` wins. A millisecond (or fractional-second) hint that agrees
//! with it within its one-second rounding refines it; one that disagrees is
//! ignored. Without `Retry-After`, the first of `retry-after-ms`,
//! `x-ms-retry-after-ms`, the body's `retry_after_ms`, the body's
//! `retry_after`, a Google `RetryInfo.retryDelay` is the wait.
//! [`Signal::retry_after`] holds only such explicit hints: an exhausted
//! quota is reported in [`Signal::quota`] and turning it into a wait is the
//! caller's decision.
//!
//! # Bad input
//!
//! Nothing here panics or returns an error. A malformed value (negative,
//! fractional where an integer is required, `NaN`, empty, not UTF-8, not a
//! valid structured field) is ignored with a `tracing` debug event. Over-long
//! numbers saturate (`u64::MAX`, [`Duration::MAX`](std::time::Duration::MAX))
//! rather than wrap; waits are reported as sent, *not* capped (a date in year
//! 9999 is a wait of eight thousand years): capping is the caller's policy.
//! Duplicated lines of a single-valued field keep the polite reading: the
//! longest wait or reset, the smallest limit or remaining.
//!
//! ```
//! use std::time::Duration;
//! use courteous::signal::{self, QuotaSource};
//! use http::{HeaderMap, HeaderValue, StatusCode};
//!
//! let mut headers = HeaderMap::new();
//! headers.insert("retry-after", HeaderValue::from_static("1"));
//! headers.insert("retry-after-ms", HeaderValue::from_static("250"));
//! headers.insert("x-ratelimit-limit", HeaderValue::from_static("60"));
//! headers.insert("x-ratelimit-remaining", HeaderValue::from_static("0"));
//!
//! let signal = signal::parse(StatusCode::TOO_MANY_REQUESTS, &headers, None);
//! assert_eq!(signal.retry_after().unwrap().delay(), Duration::from_millis(250));
//! assert_eq!(signal.quota().unwrap().remaining(), Some(0));
//! assert_eq!(signal.quota().unwrap().source(), QuotaSource::XRateLimit);
//! ```

mod error_body;
mod fields;
mod ietf;
mod numbers;
mod parser;
mod problem;
mod quota;
mod refusal;
mod retry_after;
mod usage;
mod value;
mod vendor;
mod x_ratelimit;

use http::{HeaderMap, StatusCode};

pub use parser::{ResetFormat, SignalParser};
pub use quota::{Quota, QuotaSource, QuotaUnit};
pub use refusal::{AWS_RATE_CODES, AWS_THROTTLING_CODES, Refusal};
pub use usage::Usage;
pub use value::{HintSource, RetryHint, Signal};

/// Shorthand for [`SignalParser::new().parse(…)`](SignalParser::parse).
pub fn parse(status: StatusCode, headers: &HeaderMap, body: Option<&[u8]>) -> Signal {
    SignalParser::new().parse(status, headers, body)
}
