//! A mock of Reddit's OAuth API at its limits.

use std::time::{Duration, Instant};

use wiremock::{Request, Respond, ResponseTemplate};

use super::counter_methods;
use super::format::ceil_secs;
use super::meter::{Quotas, Spec};

/// A [`Respond`] implementation that limits as Reddit does: `limit`
/// requests per fixed window (Reddit: 600 per 10 minutes per OAuth client).
///
/// Every response carries `x-ratelimit-used`, `x-ratelimit-remaining` with
/// a fraction (`596.0`) and `x-ratelimit-reset` in whole seconds to the end
/// of the window (rounded up); a refusal is a bare `429`.
///
/// ```
/// use std::time::Duration;
/// use courteous::testing::RedditApi;
///
/// let api = RedditApi::new(600, Duration::from_secs(600));
/// assert_eq!(api.received(), 0);
/// ```
#[derive(Debug, Clone)]
pub struct RedditApi {
    quotas: Quotas,
}

impl RedditApi {
    /// `limit` requests per fixed `window`.
    pub fn new(limit: u64, window: Duration) -> Self {
        Self {
            quotas: Quotas::new(&[Spec::window("requests", limit, window)]),
        }
    }
}

counter_methods!(RedditApi);

impl Respond for RedditApi {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let decision = self.quotas.decide(Instant::now(), &[1]);
        let reading = decision.readings[0];
        let template = match decision.rejected_for {
            None => ResponseTemplate::new(200).set_body_raw("{}", "application/json"),
            Some(_) => ResponseTemplate::new(429),
        };
        template
            .insert_header(
                "x-ratelimit-used",
                (reading.limit - reading.remaining).to_string(),
            )
            .insert_header("x-ratelimit-remaining", format!("{}.0", reading.remaining))
            .insert_header("x-ratelimit-reset", ceil_secs(reading.reset).to_string())
    }
}
