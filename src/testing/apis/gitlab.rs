//! A mock of GitLab's REST API at its limits.

use std::time::{Duration, Instant, SystemTime};

use wiremock::{Request, Respond, ResponseTemplate};

use super::counter_methods;
use super::format::{ceil_secs, epoch_secs};
use super::meter::{Quotas, Spec};

/// A [`Respond`] implementation that limits as GitLab does: `limit`
/// requests per fixed window (the first opened by the first request).
///
/// Every response carries `RateLimit-Name`, `-Limit`, `-Observed`,
/// `-Remaining` and `RateLimit-Reset` as a **Unix epoch** (rounded up; the
/// IETF drafts use the same name for seconds to wait) with a `Date` header;
/// a refusal is a `429` with `Retry-After` (whole seconds) and
/// `RateLimit-ResetTime` (an HTTP-date).
///
/// ```
/// use std::time::Duration;
/// use courteous::testing::GitLabApi;
///
/// let api = GitLabApi::new(600, Duration::from_secs(60));
/// assert_eq!(api.received(), 0);
/// ```
#[derive(Debug, Clone)]
pub struct GitLabApi {
    quotas: Quotas,
}

impl GitLabApi {
    /// `limit` requests per fixed `window`.
    pub fn new(limit: u64, window: Duration) -> Self {
        Self {
            quotas: Quotas::new(&[Spec::window("throttle_authenticated_api", limit, window)]),
        }
    }
}

counter_methods!(GitLabApi);

impl Respond for GitLabApi {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let decision = self.quotas.decide(Instant::now(), &[1]);
        let now = SystemTime::now();
        let reading = decision.readings[0];
        let template = match decision.rejected_for {
            None => ResponseTemplate::new(200).set_body_raw("[]", "application/json"),
            Some(wait) => {
                let at = SystemTime::UNIX_EPOCH + Duration::from_secs(epoch_secs(now, wait));
                ResponseTemplate::new(429)
                    .insert_header("retry-after", ceil_secs(wait).to_string())
                    .insert_header("ratelimit-resettime", httpdate::fmt_http_date(at))
                    .set_body_string("Retry later\n")
            }
        };
        template
            .insert_header("date", httpdate::fmt_http_date(now))
            .insert_header("ratelimit-name", "throttle_authenticated_api")
            .insert_header("ratelimit-limit", reading.limit.to_string())
            .insert_header(
                "ratelimit-observed",
                (reading.limit - reading.remaining).to_string(),
            )
            .insert_header("ratelimit-remaining", reading.remaining.to_string())
            .insert_header(
                "ratelimit-reset",
                epoch_secs(now, reading.reset).to_string(),
            )
    }
}
