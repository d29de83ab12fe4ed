//! A mock of Azure Resource Manager at its limits.

use std::time::{Duration, Instant};

use http::Method;
use wiremock::{Request, Respond, ResponseTemplate};

use super::counter_methods;
use super::format::ceil_secs;
use super::meter::{Quotas, Spec};

/// A [`Respond`] implementation that limits as Azure Resource Manager
/// does: a bucket of reads (`GET`, `HEAD`) and one of writes (every other
/// method) per subscription, each `limit` deep and refilled continuously
/// over `window` (ARM: 250 reads, refilled 25 a second).
///
/// Every response carries `x-ms-ratelimit-remaining-subscription-reads`
/// or `-writes` (what is left of the bucket the request drew on); a
/// refusal is a `429` with `Retry-After` (whole seconds) and ARM's JSON
/// error (`TooManyRequests`).
///
/// ```
/// use std::time::Duration;
/// use courteous::testing::AzureApi;
///
/// let api = AzureApi::new(250, 200, Duration::from_secs(10));
/// assert_eq!(api.received(), 0);
/// ```
#[derive(Debug, Clone)]
pub struct AzureApi {
    reads: Quotas,
    writes: Quotas,
    quotas: Quotas,
}

impl AzureApi {
    /// `reads` and `writes` deep, each refilled in full over `window`.
    pub fn new(reads: u64, writes: u64, window: Duration) -> Self {
        Self {
            reads: Quotas::new(&[Spec::continuous("reads", reads, window)]),
            writes: Quotas::new(&[Spec::continuous("writes", writes, window)]),
            // Counts every request, whichever bucket it drew on.
            quotas: Quotas::new(&[]),
        }
    }
}

counter_methods!(AzureApi);

impl Respond for AzureApi {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let read = matches!(request.method, Method::GET | Method::HEAD);
        let (bucket, name) = if read {
            (&self.reads, "reads")
        } else {
            (&self.writes, "writes")
        };
        let decision = bucket.decide(Instant::now(), &[1]);
        self.quotas.counters.record(decision.rejected_for.is_none());
        let template = match decision.rejected_for {
            None => ResponseTemplate::new(200).set_body_raw("{\"value\":[]}", "application/json"),
            Some(wait) => ResponseTemplate::new(429)
                .insert_header("retry-after", ceil_secs(wait).to_string())
                .set_body_raw(
                    r#"{"error":{"code":"TooManyRequests","message":"The request is being throttled."}}"#,
                    "application/json",
                ),
        };
        template.insert_header(
            format!("x-ms-ratelimit-remaining-subscription-{name}"),
            decision.readings[0].remaining.to_string(),
        )
    }
}
