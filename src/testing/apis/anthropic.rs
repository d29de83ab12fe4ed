//! A mock of Anthropic's API at its limits.

use std::time::{Duration, Instant, SystemTime};

use wiremock::{Request, Respond, ResponseTemplate};

use super::counter_methods;
use super::format::{ceil_secs, rfc3339};
use super::meter::{Quotas, Spec};

/// A [`Respond`] implementation that limits as Anthropic's API does: a
/// request must fit a quota of requests, one of input tokens and one of
/// output tokens, each a bucket refilled continuously over its window
/// (Anthropic's documentation: "token bucket", per minute).
///
/// Every response carries
/// `anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining,reset}`,
/// the resets as RFC 3339 times (to the second, rounded up) with a `Date`
/// header. A refusal is a `429` with `retry-after` (whole seconds) and
/// Anthropic's JSON error (`rate_limit_error`).
///
/// ```
/// use std::time::Duration;
/// use courteous::testing::AnthropicApi;
///
/// let api = AnthropicApi::new(50, 40_000, 8_000, Duration::from_secs(60)).tokens_per_request(1_000, 200);
/// assert_eq!(api.rejected(), 0);
/// ```
#[derive(Debug, Clone)]
pub struct AnthropicApi {
    quotas: Quotas,
    costs: [u64; 3],
}

impl AnthropicApi {
    /// `requests`, `input_tokens` and `output_tokens` per `window`.
    pub fn new(requests: u64, input_tokens: u64, output_tokens: u64, window: Duration) -> Self {
        Self {
            quotas: Quotas::new(&[
                Spec::continuous("requests", requests, window),
                Spec::continuous("input-tokens", input_tokens, window),
                Spec::continuous("output-tokens", output_tokens, window),
            ]),
            costs: [1, 100, 100],
        }
    }

    /// Input and output tokens each request costs (default 100 and 100).
    pub fn tokens_per_request(mut self, input: u64, output: u64) -> Self {
        self.costs = [1, input, output];
        self
    }
}

counter_methods!(AnthropicApi);

impl Respond for AnthropicApi {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let decision = self.quotas.decide(Instant::now(), &self.costs);
        let now = SystemTime::now();
        let mut template = match decision.rejected_for {
            None => ResponseTemplate::new(200).set_body_raw(
                format!(
                    r#"{{"type":"message","usage":{{"input_tokens":{},"output_tokens":{}}}}}"#,
                    self.costs[1], self.costs[2]
                ),
                "application/json",
            ),
            Some(wait) => ResponseTemplate::new(429)
                .insert_header("retry-after", ceil_secs(wait).to_string())
                .set_body_raw(
                    r#"{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your organization's rate limit."}}"#,
                    "application/json",
                ),
        }
        .insert_header("date", httpdate::fmt_http_date(now));
        for (spec, reading) in self.quotas.specs().iter().zip(&decision.readings) {
            let prefix = format!("anthropic-ratelimit-{}", spec.name);
            template = template
                .insert_header(format!("{prefix}-limit"), reading.limit.to_string())
                .insert_header(format!("{prefix}-remaining"), reading.remaining.to_string())
                .insert_header(format!("{prefix}-reset"), rfc3339(now, reading.reset));
        }
        template
    }
}
