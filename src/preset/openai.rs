//! [`OpenAi`]: OpenAI's API and Azure OpenAI.

use http::StatusCode;

use super::{Settings, adapters, sdk_style};
use crate::classify::{Classify, Response, ResponseClass};

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
/// - 3 attempts in all, as the SDK's 2 retries.
///
/// ```
/// let client = courteous::preset::OpenAi.client().build();
/// # let _ = client;
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
    fn max_attempts(&self) -> Option<u32> {
        Some(Self::MAX_ATTEMPTS)
    }
}

adapters!(OpenAi, "OpenAI");
