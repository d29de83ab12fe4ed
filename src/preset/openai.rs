//! [`OpenAi`]: OpenAI's API and Azure OpenAI.

use http::StatusCode;

use super::{Settings, adapters, sdk_style};
use crate::classify::{Classify, Response, ResponseClass};
use crate::signal::SignalParser;

/// OpenAI's API (and Azure OpenAI, which speaks the same), as its
/// documentation and openai-python (`_base_client.py`, `_constants.py`)
/// describe it:
///
/// - `429` is throttled, waited as `retry-after-ms`, `retry-after` or
///   Azure's `x-ms-retry-after-ms` say; the request and token quotas
///   (`x-ratelimit-*-requests`, `x-ratelimit-*-tokens`) are read from every
///   response;
/// - a `429` whose body says `insufficient_quota` (out of credit) is a
///   final refusal ([`ResponseClass::Refused`]): an error at once
///   ([`Error::is_final_refusal`](crate::Error::is_final_refusal)), never
///   retried; so is a response that would be retried but says
///   `x-should-retry: false` (with another status, such as a `200`, it is
///   the answer);
/// - `408`, `409` and `5xx` are retried as failures of the request alone,
///   as the SDK does (`503` as the default classification says);
/// - 3 attempts in all, as the SDK's 2 retries;
/// - the token quota is paced by cost ([`Cost`](crate::engine::Cost)):
///   what a request declares, else what earlier ones cost; the `usage` of
///   a whole answer (`application/json`, not a stream) settles what it
///   spent, `total_tokens` ([`SignalParser::read_usage`]).
///
/// OpenAI's rate-limit guide counts a request against the token limit as
/// the larger of its `max_tokens` and an estimate from the length of the
/// request, when it is admitted, which may be more than its `usage`
/// (whether it is settled later is not documented): where the headers
/// state what is left (on
/// every answer of api.openai.com) they are what the pacing follows, and a
/// declared cost is best the request's `max_tokens` plus its prompt.
///
/// ```
/// use courteous::RequestOptions;
/// use courteous::engine::Cost;
///
/// let client = courteous::preset::OpenAi.client().build();
/// // Up to 1,000 tokens out and about 200 in: reserved before the send,
/// // settled from the answer's `usage`.
/// let options = RequestOptions::new().cost(Cost::tokens(1_200));
/// # let _ = (client, options);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenAi;

impl OpenAi {
    /// Attempts per request: openai-python's `DEFAULT_MAX_RETRIES` (2) plus
    /// the first.
    pub const MAX_ATTEMPTS: u32 = 3;
}

impl Classify for OpenAi {
    fn may_retry(&self, status: StatusCode) -> bool {
        status == StatusCode::TOO_MANY_REQUESTS || super::sdk_retries(status)
    }

    fn classify(&self, response: &Response<'_>) -> ResponseClass {
        if response.signal().refusal().is_some_and(|r| r.is_final()) {
            return ResponseClass::Refused;
        }
        sdk_style(response, &[])
    }
}

impl Settings for OpenAi {
    fn parser(&self) -> SignalParser {
        SignalParser::new().read_usage(true)
    }

    fn max_attempts(&self) -> Option<u32> {
        Some(Self::MAX_ATTEMPTS)
    }
}

adapters!(OpenAi, "OpenAI");
