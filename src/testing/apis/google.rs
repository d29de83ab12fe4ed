//! A mock of a Google API at its limits.

use std::time::{Duration, Instant};

use wiremock::{Request, Respond, ResponseTemplate};

use super::counter_methods;
use super::meter::{Quotas, Spec};

/// A [`Respond`] implementation that limits as Google APIs do: `limit`
/// requests per fixed window (per minute), and optionally a per-day quota.
///
/// Responses carry no rate-limit headers. A refusal is a `429`
/// `RESOURCE_EXHAUSTED` whose `error.details[]` hold a
/// `google.rpc.QuotaFailure` naming the violated quota and, for the
/// per-minute one, a `google.rpc.RetryInfo` with the time to the window's
/// end (`"1.250s"`). Once the [`per_day`](Self::per_day) quota is spent,
/// every answer is that quota's refusal, which no wait ends.
///
/// ```
/// use std::time::Duration;
/// use courteous::testing::GoogleApi;
///
/// let api = GoogleApi::new(60, Duration::from_secs(60)).per_day(1_000);
/// assert_eq!(api.received(), 0);
/// ```
#[derive(Debug, Clone)]
pub struct GoogleApi {
    quotas: Quotas,
    limit: u64,
    window: Duration,
}

/// A window no test outlives: the per-day quota never resets.
const DAY: Duration = Duration::from_secs(86_400);

impl GoogleApi {
    /// `limit` requests per fixed `window`.
    pub fn new(limit: u64, window: Duration) -> Self {
        Self::with(limit, window, u64::MAX)
    }

    fn with(limit: u64, window: Duration, daily: u64) -> Self {
        Self {
            limit,
            window,
            quotas: Quotas::new(&[
                Spec::window("GenerateRequestsPerMinutePerProject", limit, window),
                Spec::window("GenerateRequestsPerDayPerProject", daily, DAY),
            ]),
        }
    }

    /// Also allow only `limit` requests a day (default: no such quota).
    pub fn per_day(self, limit: u64) -> Self {
        Self::with(self.limit, self.window, limit)
    }
}

counter_methods!(GoogleApi);

impl Respond for GoogleApi {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let decision = self.quotas.decide(Instant::now(), &[1, 1]);
        let Some(wait) = decision.rejected_for else {
            return ResponseTemplate::new(200).set_body_raw("{}", "application/json");
        };
        let specs = self.quotas.specs();
        // A spent day outlasts any minute: no wait ends it.
        let daily = decision.readings[1].remaining == 0;
        let (quota, retry) = if daily {
            (specs[1].name, String::new())
        } else {
            let retry = format!(
                r#",{{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"{}.{:09}s"}}"#,
                wait.as_secs(),
                wait.subsec_nanos()
            );
            (specs[0].name, retry)
        };
        ResponseTemplate::new(429).set_body_raw(
            format!(
                r#"{{"error":{{"code":429,"message":"Quota exceeded for quota metric 'Generate requests'.","status":"RESOURCE_EXHAUSTED","details":[{{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{{"quotaId":"{quota}"}}]}}{retry}]}}}}"#
            ),
            "application/json; charset=UTF-8",
        )
    }
}
