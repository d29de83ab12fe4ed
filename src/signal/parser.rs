//! [`SignalParser`]: options and the entry point that runs every dialect.

use std::time::SystemTime;

use http::{HeaderMap, StatusCode};

use super::fields::{Clock, Field, Fields, date_header};
use super::refusal::{Refusal, aws_code};
use super::usage::{Usage, is_plain_json};
use super::value::{Extras, ServerDate, Signal};
use super::{ietf, problem, retry_after, vendor, x_ratelimit};

/// Parses rate-limit signals; holds the options.
///
/// ```
/// use courteous::signal::SignalParser;
/// use http::{HeaderMap, HeaderValue, StatusCode};
///
/// let parser = SignalParser::new().body_limit(4096);
/// let mut headers = HeaderMap::new();
/// headers.insert("content-type", HeaderValue::from_static("application/problem+json"));
/// let status = StatusCode::TOO_MANY_REQUESTS;
/// assert!(parser.wants_body(status, &headers));
///
/// let body = br#"{"title":"Too Many Requests","status":429,"retry_after_ms":50}"#;
/// let signal = parser.parse(status, &headers, Some(body));
/// assert_eq!(signal.retry_after().unwrap().delay().as_millis(), 50);
/// ```
#[derive(Debug, Clone)]
pub struct SignalParser {
    body_limit: usize,
    reset_format: ResetFormat,
    read_usage: bool,
}

/// How a `RateLimit-Reset` or `X-RateLimit-Reset` value is read.
///
/// The IETF drafts send seconds to wait under `RateLimit-Reset`; GitLab
/// sends a Unix epoch under the same name, as GitHub and X do under theirs.
/// By default the value's size decides ([`Auto`](Self::Auto)); a preset
/// that knows its API pins the reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ResetFormat {
    /// A value of at most one year (31,536,000 s) is seconds to wait, a
    /// larger one an epoch timestamp (seconds, milliseconds from 10^12 on)
    /// measured against the response's `Date`. No deployed epoch is that
    /// small, and no deployed window that long.
    #[default]
    Auto,
    /// Always seconds to wait.
    Delta,
    /// Always an epoch timestamp: a small value is a time long past, a
    /// wait of zero.
    Epoch,
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
            reset_format: ResetFormat::Auto,
            read_usage: false,
        }
    }

    /// Read what a request spent from its success body's `usage`, as
    /// OpenAI and Anthropic report it ([`Usage`], [`Signal::usage`]); the
    /// engine then settles the request's cost with it (see
    /// [`Cost`](crate::engine::Cost)). Off by default; the
    /// [`OpenAi`](crate::preset::OpenAi) and
    /// [`Anthropic`](crate::preset::Anthropic) presets turn it on.
    ///
    /// Only a `2xx` in `application/json` is read (a stream,
    /// `text/event-stream`, is the caller's), at most
    /// [`max_body_bytes`](Self::max_body_bytes) of it, and handed back to
    /// the caller whole; a longer body, or one without a `usage` this
    /// crate reads, settles nothing.
    ///
    /// ```
    /// use courteous::signal::{QuotaUnit, SignalParser};
    /// use http::{HeaderMap, HeaderValue, StatusCode};
    ///
    /// let parser = SignalParser::new().read_usage(true);
    /// let mut headers = HeaderMap::new();
    /// headers.insert("content-type", HeaderValue::from_static("application/json"));
    /// assert!(parser.wants_body(StatusCode::OK, &headers));
    ///
    /// let body = br#"{"object":"chat.completion","usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}}"#;
    /// let signal = parser.parse(StatusCode::OK, &headers, Some(body));
    /// assert_eq!(signal.usage().unwrap().get(QuotaUnit::Tokens), Some(21));
    ///
    /// // A stream is never read.
    /// headers.insert("content-type", HeaderValue::from_static("text/event-stream"));
    /// assert!(!parser.wants_body(StatusCode::OK, &headers));
    /// ```
    pub fn read_usage(mut self, read: bool) -> Self {
        self.read_usage = read;
        self
    }

    /// Whether success bodies are read for their `usage`
    /// ([`read_usage`](Self::read_usage)).
    pub fn reads_usage(&self) -> bool {
        self.read_usage
    }

    /// How `RateLimit-Reset` and `X-RateLimit-Reset` are read (default
    /// [`ResetFormat::Auto`]).
    pub fn reset_format(mut self, format: ResetFormat) -> Self {
        self.reset_format = format;
        self
    }

    /// Read at most this many bytes of a body for hints (default
    /// [`DEFAULT_BODY_LIMIT`](Self::DEFAULT_BODY_LIMIT)); `0` never reads a body.
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// The body prefix limit in force.
    pub fn max_body_bytes(&self) -> usize {
        self.body_limit
    }

    /// Whether a body with these headers may carry a hint worth reading:
    /// an error status (4xx or 5xx, where RFC 9457 problem details live) with
    /// a JSON media type (`application/json`, `application/problem+json`, any
    /// `application/…+json`, AWS's `application/x-amz-json-1.x`) or an XML
    /// one (`application/xml`, `text/xml`: an AWS error's `<Code>`), and a
    /// non-zero body limit; or, with [`read_usage`](Self::read_usage), a
    /// `2xx` in `application/json`, for its `usage`.
    ///
    /// Success bodies are never read for hints: a `retry_after` member of
    /// a 200's JSON is application data, not a hint.
    pub fn wants_body(&self, status: StatusCode, headers: &HeaderMap) -> bool {
        self.wants_problem(status, headers) || self.wants_usage(status, headers)
    }

    /// An error body that may carry a hint (see [`wants_body`](Self::wants_body)).
    fn wants_problem(&self, status: StatusCode, headers: &HeaderMap) -> bool {
        (status.is_client_error() || status.is_server_error())
            && self.body_limit > 0
            && problem::media(headers).is_some()
    }

    /// A success body that may state its `usage`.
    fn wants_usage(&self, status: StatusCode, headers: &HeaderMap) -> bool {
        self.read_usage && status.is_success() && self.body_limit > 0 && is_plain_json(headers)
    }

    /// Parse a response, using the local clock only when a time has no
    /// `Date` header to be measured against.
    ///
    /// Headers are read whatever the status: servers send `Retry-After` with
    /// 429 and 503 but also 301 or 413, and quota fields with every response.
    /// `body` is a prefix of the response body (or all of it); it is read
    /// only when [`wants_body`](Self::wants_body) says so, and only up to
    /// [`max_body_bytes`](Self::max_body_bytes).
    ///
    /// A response without any rate-limit field costs one pass over its
    /// header names, the parse of its `Date` (kept in
    /// [`Signal::date`]: the engine locates the server's clock with it) and
    /// no allocation.
    pub fn parse(&self, status: StatusCode, headers: &HeaderMap, body: Option<&[u8]>) -> Signal {
        self.parse_with(status, headers, body, SystemTime::now)
    }

    /// [`parse`](Self::parse) with the local clock injected.
    pub fn parse_at(
        &self,
        status: StatusCode,
        headers: &HeaderMap,
        body: Option<&[u8]>,
        now: SystemTime,
    ) -> Signal {
        self.parse_with(status, headers, body, || now)
    }

    /// The parse; the local clock is read only when the response has
    /// something to read (a plain response costs the scan, its `Date` and
    /// no clock read).
    fn parse_with(
        &self,
        status: StatusCode,
        headers: &HeaderMap,
        body: Option<&[u8]>,
        now: impl FnOnce() -> SystemTime,
    ) -> Signal {
        let body = body.map(|body| &body[..body.len().min(self.body_limit)]);
        let problem = match (body, problem::media(headers)) {
            (Some(body), Some(media)) if self.wants_problem(status, headers) => {
                problem::read_as(media, body)
            }
            _ => None,
        };
        let usage = body
            .filter(|_| self.wants_usage(status, headers))
            .and_then(Usage::from_json);
        let fields = Fields::scan(headers);
        if fields.is_empty() && problem.is_none() {
            // `Date` alone: the engine locates the server's clock with it.
            return Signal::default()
                .with_date(date_header(headers))
                .with_usage(usage);
        }
        let problem = problem.unwrap_or_default();
        let clock = Clock::new(headers, now()).with_reset_format(self.reset_format);

        let [millis, x_ms_millis] = retry_after::millisecond_headers(&fields);
        let hint = retry_after::decide(
            retry_after::retry_after(&fields, &clock),
            [
                millis,
                x_ms_millis,
                problem.retry_after_ms,
                problem.retry_after,
                problem.vendor.retry_info,
            ],
        );

        let mut policies = Vec::with_capacity(4);
        ietf::read(&fields, &clock, &mut policies);
        x_ratelimit::read(&fields, &clock, &mut policies);
        vendor::read(&fields, &clock, &mut policies);
        policies.extend(problem.vendor.cost);
        // A policy the server says was violated has nothing left, unless the
        // headers said otherwise.
        for quota in &mut policies {
            let violated = quota
                .name()
                .is_some_and(|name| problem.violated_policies.iter().any(|v| v == name));
            if violated && quota.remaining().is_none() {
                quota.set_remaining(Some(0));
            }
        }
        let extras = Extras {
            bucket: fields
                .text(Field::XRateLimitBucket)
                .or_else(|| fields.text(Field::XRateLimitResource))
                .map(str::to_owned),
            global: problem.vendor.global
                || fields
                    .text(Field::XRateLimitGlobal)
                    .is_some_and(|flag| flag.eq_ignore_ascii_case("true"))
                || fields
                    .text(Field::XRateLimitScope)
                    .is_some_and(|scope| scope.eq_ignore_ascii_case("global")),
            should_retry: fields.text(Field::XShouldRetry).and_then(|flag| {
                if flag.eq_ignore_ascii_case("true") {
                    Some(true)
                } else if flag.eq_ignore_ascii_case("false") {
                    Some(false)
                } else {
                    None
                }
            }),
            refusal: problem.vendor.refusal.or_else(|| {
                let code = aws_code(fields.text(Field::XAmznErrorType)?)?;
                Some(Refusal::Aws { code })
            }),
        };
        let date = clock.date().map(|at| ServerDate {
            at,
            measured_against: clock.measured_against_date(),
        });
        Signal::from_parts(hint, policies)
            .with_violated_policies(problem.violated_policies)
            .with_extras(extras)
            .with_server_date(date)
            .with_usage(usage)
    }
}
