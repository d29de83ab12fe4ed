//! A mock server that refuses everything, with whatever hint you give it.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use http::StatusCode;
use wiremock::{Request, Respond, ResponseTemplate};

use super::counters::Counters;

/// A [`Respond`] implementation that refuses every request (429 by default)
/// and says, in its hint, whatever you tell it to: zero, a date in the
/// past, a negative number, `NaN`, 2⁶⁴, `1e300` in a problem body, a reset
/// 10²⁰ s away, a 50 MB body, thousands of policies.
///
/// For testing that a client stays polite to a broken or hostile server:
/// it must not panic, must not hammer it, and must end in a typed error.
/// The headers and body are sent verbatim, so anything a server could send
/// can be mocked; [`catalogue`](Self::catalogue) lists the hostile hints
/// courteous itself is tested against. Every clone shares the counters.
///
/// ```
/// use courteous::testing::Hostile;
/// use wiremock::{Mock, MockServer, matchers::any};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = MockServer::start().await;
/// let hostile = Hostile::new().retry_after("0");
/// Mock::given(any()).respond_with(hostile.clone()).mount(&server).await;
///
/// let response = reqwest::get(server.uri()).await.unwrap();
/// assert_eq!(response.status(), 429);
/// assert_eq!(response.headers()["retry-after"], "0");
/// assert_eq!((hostile.received(), hostile.rejected()), (1, 1));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Hostile {
    status: StatusCode,
    headers: Vec<(&'static str, String)>,
    /// `Retry-After` as an HTTP-date this long before the response's `Date`.
    date_in_past: Option<Duration>,
    body: Option<(&'static str, Arc<Vec<u8>>)>,
    counters: Counters,
}

impl Default for Hostile {
    fn default() -> Self {
        Self::new()
    }
}

impl Hostile {
    /// A server that answers every request with a bare `429 Too Many Requests`.
    pub fn new() -> Self {
        Self {
            status: StatusCode::TOO_MANY_REQUESTS,
            headers: Vec::new(),
            date_in_past: None,
            body: None,
            counters: Counters::default(),
        }
    }

    /// The status of every response. Default: `429 Too Many Requests`.
    pub fn status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }

    /// Adds a header sent verbatim on every response (it must be a valid
    /// header value; the point is what it means, not how it is encoded).
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// `Retry-After: <value>`, verbatim (`"0"`, `"-5"`, `"NaN"`, `"18446744073709551615"`).
    pub fn retry_after(self, value: impl Into<String>) -> Self {
        self.header("retry-after", value)
    }

    /// `Retry-After` as an HTTP-date `ago` before the response's own `Date`
    /// (a server with a skewed clock, or a stale cache).
    pub fn retry_after_date_in_past(mut self, ago: Duration) -> Self {
        self.date_in_past = Some(ago);
        self
    }

    /// An `application/problem+json` body, verbatim (`{"retry_after_ms": 1e300}`).
    pub fn problem_json(mut self, json: impl Into<String>) -> Self {
        self.body = Some((
            "application/problem+json",
            Arc::new(json.into().into_bytes()),
        ));
        self
    }

    /// An `application/problem+json` body of `bytes` bytes (a JSON string
    /// of padding): a client must not buffer it whole to look for a hint.
    pub fn oversized_body(mut self, bytes: usize) -> Self {
        let mut body = Vec::with_capacity(bytes.max(16));
        body.extend_from_slice(b"{\"detail\":\"");
        body.resize(bytes.saturating_sub(2).max(body.len()), b'x');
        body.extend_from_slice(b"\"}");
        self.body = Some(("application/problem+json", Arc::new(body)));
        self
    }

    /// `RateLimit-Policy` and `RateLimit` with `count` policies, every one
    /// spent (`r=0`), one unit per second each.
    pub fn policies(self, count: usize) -> Self {
        let names: Vec<String> = (0..count).map(|i| format!("\"p{i}\"")).collect();
        let policy = names
            .iter()
            .map(|name| format!("{name};q=1;w=1"))
            .collect::<Vec<_>>()
            .join(", ");
        let state = names
            .iter()
            .map(|name| format!("{name};r=0;t=1"))
            .collect::<Vec<_>>()
            .join(", ");
        self.header("ratelimit-policy", policy)
            .header("ratelimit", state)
    }

    /// The hostile hints courteous is tested against, by name: each row a
    /// server refusing everything with one odd hint.
    ///
    /// | name | the refusal carries |
    /// |---|---|
    /// | `retry-after-0` | `Retry-After: 0` |
    /// | `retry-after-ms-0` | `retry-after-ms: 0` |
    /// | `retry-after-past-date` | `Retry-After` an hour before `Date` |
    /// | `retry-after-negative` | `Retry-After: -5` |
    /// | `retry-after-nan` | `Retry-After: NaN` |
    /// | `retry-after-2^64` | `Retry-After: 18446744073709551615` |
    /// | `retry-after-10^20` | `Retry-After: 99999999999999999999` |
    /// | `problem-retry-after-ms-1e300` | `{"retry_after_ms": 1e300}` |
    /// | `problem-retry-after-1e300` | `{"retry_after": 1e300}` |
    /// | `x-ratelimit-reset-10^20` | `X-RateLimit-Remaining: 0`, `X-RateLimit-Reset` 10²⁰ |
    /// | `body-50MB` | a 50 MB problem+json body |
    /// | `policies-5000` | 5,000 spent `RateLimit` policies |
    /// | `bare` | nothing |
    pub fn catalogue() -> Vec<(&'static str, Hostile)> {
        vec![
            ("retry-after-0", Self::new().retry_after("0")),
            (
                "retry-after-ms-0",
                Self::new().header("retry-after-ms", "0"),
            ),
            (
                "retry-after-past-date",
                Self::new().retry_after_date_in_past(Duration::from_secs(3600)),
            ),
            ("retry-after-negative", Self::new().retry_after("-5")),
            ("retry-after-nan", Self::new().retry_after("NaN")),
            (
                "retry-after-2^64",
                Self::new().retry_after(u64::MAX.to_string()),
            ),
            (
                "retry-after-10^20",
                Self::new().retry_after("99999999999999999999"),
            ),
            (
                "problem-retry-after-ms-1e300",
                Self::new().problem_json(r#"{"status":429,"retry_after_ms":1e300}"#),
            ),
            (
                "problem-retry-after-1e300",
                Self::new().problem_json(r#"{"status":429,"retry_after":1e300}"#),
            ),
            (
                "x-ratelimit-reset-10^20",
                Self::new()
                    .header("x-ratelimit-limit", "10")
                    .header("x-ratelimit-remaining", "0")
                    .header("x-ratelimit-reset", "100000000000000000000"),
            ),
            ("body-50MB", Self::new().oversized_body(50 * 1024 * 1024)),
            ("policies-5000", Self::new().policies(5000)),
            ("bare", Self::new()),
        ]
    }

    /// Requests answered so far, by every clone of this responder.
    pub fn received(&self) -> u64 {
        self.counters.received()
    }

    /// Requests admitted so far: always 0.
    pub fn admitted(&self) -> u64 {
        self.counters.admitted()
    }

    /// Requests refused so far (all of them), by every clone.
    pub fn rejected(&self) -> u64 {
        self.counters.rejected()
    }
}

impl Respond for Hostile {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        self.counters.record(false);
        let mut template = ResponseTemplate::new(self.status);
        for (name, value) in &self.headers {
            template = template.insert_header(*name, value.as_str());
        }
        if let Some(ago) = self.date_in_past {
            let now = SystemTime::now();
            let then = now.checked_sub(ago).unwrap_or(SystemTime::UNIX_EPOCH);
            template = template
                .insert_header("date", httpdate::fmt_http_date(now))
                .insert_header("retry-after", httpdate::fmt_http_date(then));
        }
        if let Some((media_type, body)) = &self.body {
            template = template.set_body_raw(body.as_slice(), media_type);
        }
        template
    }
}
