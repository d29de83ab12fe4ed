//! [`Anthropic`]: Anthropic's API.

use http::StatusCode;

use super::{Settings, adapters, sdk_style};
use crate::classify::{Classify, Response, ResponseClass};
use crate::signal::SignalParser;

/// Anthropic's API, as its documentation and anthropic-sdk-python describe
/// it:
///
/// - `429` and `529` (overloaded) are throttled: every request to the API
///   pauses, for `retry-after` when given; the request and token quotas
///   (`anthropic-ratelimit-*`, resets as RFC 3339 times) are read from
///   every response;
/// - `x-should-retry: false` on a response that would be retried is a
///   final refusal ([`ResponseClass::Refused`](crate::classify::ResponseClass::Refused)):
///   an error at once, never retried; `true` is retried;
/// - `408`, `409` and `5xx` are retried as failures of the request alone;
/// - 3 attempts in all, as the SDK's 2 retries;
/// - the token quotas are paced by cost ([`Cost`](crate::engine::Cost)):
///   what a request declares, else what earlier ones cost; the `usage` of
///   a whole answer (`application/json`, not a stream) settles what it
///   spent of the input-tokens quota (`input_tokens +
///   cache_creation_input_tokens`) and of the output-tokens quota
///   (`output_tokens`), as Anthropic's limiter settles a request's
///   `max_tokens` to what it wrote ([`SignalParser::read_usage`]).
///
/// ```
/// use courteous::RequestOptions;
/// use courteous::engine::Cost;
/// use courteous::signal::QuotaUnit;
///
/// let client = courteous::preset::Anthropic.client().build();
/// // `max_tokens: 1024` and a prompt of about 300 tokens.
/// let options = RequestOptions::new()
///     .cost(Cost::new(QuotaUnit::OutputTokens, 1_024))
///     .cost(Cost::new(QuotaUnit::InputTokens, 300));
/// # let _ = (client, options);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Anthropic;

impl Anthropic {
    /// Anthropic's "overloaded" status.
    pub const OVERLOADED: u16 = 529;
    /// Attempts per request: anthropic-sdk-python's `DEFAULT_MAX_RETRIES`
    /// (2) plus the first.
    pub const MAX_ATTEMPTS: u32 = 3;
}

impl Classify for Anthropic {
    fn may_retry(&self, status: StatusCode) -> bool {
        status == StatusCode::TOO_MANY_REQUESTS || super::sdk_retries(status)
    }

    fn classify(&self, response: &Response<'_>) -> ResponseClass {
        sdk_style(response, &[Self::OVERLOADED])
    }
}

impl Settings for Anthropic {
    fn parser(&self) -> SignalParser {
        SignalParser::new().read_usage(true)
    }

    fn max_attempts(&self) -> Option<u32> {
        Some(Self::MAX_ATTEMPTS)
    }
}

adapters!(Anthropic, "Anthropic");
