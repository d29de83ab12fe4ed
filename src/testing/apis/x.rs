//! A mock of the X API at its limits.

use std::time::{Duration, Instant, SystemTime};

use wiremock::{Request, Respond, ResponseTemplate};

use super::counter_methods;
use super::format::epoch_secs;
use super::meter::{Quotas, Spec};

/// A [`Respond`] implementation that limits as the X (formerly Twitter)
/// API does: `limit` requests per fixed window (X: per 15 minutes per
/// endpoint).
///
/// Every response carries `x-rate-limit-limit`, `-remaining` and `-reset`
/// (a Unix epoch, rounded up) with a `Date` header; a refusal is a `429`
/// with X's JSON error (`code` 88).
///
/// ```
/// use std::time::Duration;
/// use courteous::testing::XApi;
///
/// let api = XApi::new(900, Duration::from_secs(900));
/// assert_eq!(api.received(), 0);
/// ```
#[derive(Debug, Clone)]
pub struct XApi {
    quotas: Quotas,
}

impl XApi {
    /// `limit` requests per fixed `window`.
    pub fn new(limit: u64, window: Duration) -> Self {
        Self {
            quotas: Quotas::new(&[Spec::window("requests", limit, window)]),
        }
    }
}

counter_methods!(XApi);

impl Respond for XApi {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let decision = self.quotas.decide(Instant::now(), &[1]);
        let now = SystemTime::now();
        let reading = decision.readings[0];
        let template = match decision.rejected_for {
            None => ResponseTemplate::new(200).set_body_raw("{\"data\":[]}", "application/json"),
            Some(_) => ResponseTemplate::new(429).set_body_raw(
                r#"{"errors":[{"code":88,"message":"Rate limit exceeded"}]}"#,
                "application/json",
            ),
        };
        template
            .insert_header("date", httpdate::fmt_http_date(now))
            .insert_header("x-rate-limit-limit", reading.limit.to_string())
            .insert_header("x-rate-limit-remaining", reading.remaining.to_string())
            .insert_header(
                "x-rate-limit-reset",
                epoch_secs(now, reading.reset).to_string(),
            )
    }
}
