//! A mock of OpenAI's API at its limits.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
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
/// for its prompt and its answer), and a success states it as OpenAI does,
/// `usage.prompt_tokens`, `completion_tokens` and `total_tokens`.
/// [`out_of_credit`](Self::out_of_credit) makes every answer OpenAI's
/// `insufficient_quota` `429`; [`token_headers_every`](Self::token_headers_every)
/// drops the token headers from most answers, as a gateway in front of
/// the API may.
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
    /// From this many admitted requests on, each costs the second.
    then: Option<(u64, u64)>,
    out_of_credit: bool,
    /// The token headers go on every this many answers (1: all).
    token_headers_every: u64,
    /// Answers so far, shared by clones: numbers them for the above.
    answers: Arc<AtomicU64>,
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
            then: None,
            out_of_credit: false,
            token_headers_every: 1,
            answers: Arc::default(),
        }
    }

    /// Count tokens in fixed windows: the token quota comes back whole at
    /// the end of each window (the first opens with the first request), as
    /// a gateway's per-minute counter does; OpenAI's own refills
    /// continuously (the default).
    ///
    /// ```
    /// use std::time::Duration;
    /// use courteous::testing::OpenAiApi;
    ///
    /// let api = OpenAiApi::new(1_000, 1_000, Duration::from_secs(1)).token_windows();
    /// assert_eq!(api.received(), 0);
    /// ```
    pub fn token_windows(mut self) -> Self {
        let specs: Vec<Spec> = self
            .quotas
            .specs()
            .into_iter()
            .map(|spec| match spec.name {
                "tokens" => Spec::window(spec.name, spec.limit, spec.window),
                _ => spec,
            })
            .collect();
        self.quotas = Quotas::new(&specs);
        self
    }

    /// Send the `x-ratelimit-*-tokens` headers on the first answer and
    /// then on every `n`-th one only, refusals included (default 1: on
    /// every answer, as api.openai.com does); the request headers and a
    /// success's `usage` are on every answer. A gateway or a proxy in front
    /// of the API that drops them, or one that pools several deployments
    /// of which some do not send them, answers so.
    ///
    /// ```
    /// use std::time::Duration;
    /// use courteous::testing::OpenAiApi;
    ///
    /// let api = OpenAiApi::new(1_000, 1_000, Duration::from_secs(1)).token_headers_every(10);
    /// assert_eq!(api.received(), 0);
    /// ```
    pub fn token_headers_every(mut self, n: u64) -> Self {
        self.token_headers_every = n.max(1);
        self
    }

    /// Tokens each request costs (default 100).
    pub fn tokens_per_request(mut self, tokens: u64) -> Self {
        self.tokens_per_request = tokens;
        self
    }

    /// Once `admitted` requests were admitted, each costs `tokens`: a
    /// workload that changes (short prompts, then long ones).
    ///
    /// ```
    /// use std::time::Duration;
    /// use courteous::testing::OpenAiApi;
    ///
    /// let api = OpenAiApi::new(60, 10_000, Duration::from_secs(60))
    ///     .tokens_per_request(100)
    ///     .then_tokens_per_request(20, 250);
    /// assert_eq!(api.admitted(), 0);
    /// ```
    pub fn then_tokens_per_request(mut self, admitted: u64, tokens: u64) -> Self {
        self.then = Some((admitted, tokens));
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
        let tokens = match self.then {
            Some((after, tokens)) if self.quotas.counters.admitted() >= after => tokens,
            _ => self.tokens_per_request,
        };
        let decision = self.quotas.decide(Instant::now(), &[1, tokens]);
        let template = match decision.rejected_for {
            None => {
                // A quarter prompt, the rest the answer.
                let total = tokens;
                let prompt = total / 4;
                let completion = total - prompt;
                ResponseTemplate::new(200).set_body_raw(
                    format!(
                        r#"{{"id":"chatcmpl-1","object":"chat.completion","choices":[{{"index":0,"message":{{"role":"assistant","content":"ok"}},"finish_reason":"stop"}}],"usage":{{"prompt_tokens":{prompt},"completion_tokens":{completion},"total_tokens":{total}}}}}"#
                    ),
                    "application/json",
                )
            }
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
        let answer = self.answers.fetch_add(1, Ordering::Relaxed);
        let token_headers = answer.is_multiple_of(self.token_headers_every);
        for (spec, reading) in self.quotas.specs().iter().zip(&decision.readings) {
            let name = spec.name;
            if name == "tokens" && !token_headers {
                continue;
            }
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
