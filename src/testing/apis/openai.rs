//! A mock of OpenAI's API at its limits.

use std::time::{Duration, Instant, SystemTime};

use wiremock::{Request, Respond, ResponseTemplate};

use super::counter_methods;
use super::format::{ceil_millis, ceil_secs, go_duration};
use super::meter::{Quotas, Spec};

/// A [`Respond`] implementation that limits as OpenAI's API does: a
/// request must fit both a quota of requests and one of tokens, each
/// restored continuously over its window (OpenAI's "per minute" limits).
///
/// Every response carries `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`,
/// the resets as Go durations (`1.5s`, `6m0s`). A refusal is a `429` with
/// `retry-after` (whole seconds), `retry-after-ms`, and OpenAI's JSON error
/// (`rate_limit_exceeded`, of type `requests` or `tokens`). Each request
/// costs [`tokens_per_request`](Self::tokens_per_request) tokens (standing
/// for its prompt and `max_tokens`). [`out_of_credit`](Self::out_of_credit)
/// makes every answer OpenAI's `insufficient_quota` `429`.
///
/// ```
/// use std::time::Duration;
/// use courteous::testing::OpenAiApi;
///
/// // 60 requests and 10,000 tokens a minute; 500 tokens a request.
/// let api = OpenAiApi::new(60, 10_000, Duration::from_secs(60)).tokens_per_request(500);
/// assert_eq!(api.received(), 0);
/// ```
#[derive(Debug, Clone)]
pub struct OpenAiApi {
    quotas: Quotas,
    tokens_per_request: u64,
    out_of_credit: bool,
}

impl OpenAiApi {
    /// `requests` and `tokens` per `window` (OpenAI: per minute).
    pub fn new(requests: u64, tokens: u64, window: Duration) -> Self {
        Self {
            quotas: Quotas::new(&[
                Spec::continuous("requests", requests, window),
                Spec::continuous("tokens", tokens, window),
            ]),
            tokens_per_request: 100,
            out_of_credit: false,
        }
    }

    /// Tokens each request costs (default 100).
    pub fn tokens_per_request(mut self, tokens: u64) -> Self {
        self.tokens_per_request = tokens;
        self
    }

    /// Refuse everything as an account out of credit does:
    /// `429` `insufficient_quota`, which no wait ends.
    pub fn out_of_credit(mut self) -> Self {
        self.out_of_credit = true;
        self
    }
}

counter_methods!(OpenAiApi);

impl Respond for OpenAiApi {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        if self.out_of_credit {
            self.quotas.counters.record(false);
            return ResponseTemplate::new(429).set_body_raw(
                r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#,
                "application/json",
            );
        }
        let decision = self
            .quotas
            .decide(Instant::now(), &[1, self.tokens_per_request]);
        let template = match decision.rejected_for {
            None => ResponseTemplate::new(200).set_body_raw(
                format!(
                    r#"{{"object":"chat.completion","usage":{{"total_tokens":{}}}}}"#,
                    self.tokens_per_request
                ),
                "application/json",
            ),
            Some(wait) => {
                let kind = if decision.readings[0].remaining == 0 {
                    "requests"
                } else {
                    "tokens"
                };
                ResponseTemplate::new(429)
                    .insert_header("retry-after", ceil_secs(wait).to_string())
                    .insert_header("retry-after-ms", ceil_millis(wait).to_string())
                    .set_body_raw(
                        format!(
                            r#"{{"error":{{"message":"Rate limit reached for {kind} per min.","type":"{kind}","param":null,"code":"rate_limit_exceeded"}}}}"#
                        ),
                        "application/json",
                    )
            }
        };
        let mut template =
            template.insert_header("date", httpdate::fmt_http_date(SystemTime::now()));
        for (spec, reading) in self.quotas.specs().iter().zip(&decision.readings) {
            let name = spec.name;
            template = template
                .insert_header(
                    format!("x-ratelimit-limit-{name}"),
                    reading.limit.to_string(),
                )
                .insert_header(
                    format!("x-ratelimit-remaining-{name}"),
                    reading.remaining.to_string(),
                )
                .insert_header(
                    format!("x-ratelimit-reset-{name}"),
                    go_duration(reading.reset),
                );
        }
        template
    }
}
