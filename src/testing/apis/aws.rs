//! A mock of an AWS service API at its limits.

use std::time::Instant;

use wiremock::{Request, Respond, ResponseTemplate};

use super::counter_methods;
use super::meter::{Quotas, Spec};

/// A [`Respond`] implementation that limits as AWS services do: a token
/// bucket `burst` deep refilled at `rate` requests a second, and no
/// rate-limit headers at all.
///
/// A refusal is a `400` with the JSON protocol's error
/// (`application/x-amz-json-1.0`, `__type` …`#ThrottlingException`), as
/// DynamoDB or Lambda answer; the client learns of the limit only from
/// refusals.
///
/// ```
/// use courteous::testing::AwsApi;
///
/// let api = AwsApi::new(10, 5);
/// assert_eq!(api.received(), 0);
/// ```
#[derive(Debug, Clone)]
pub struct AwsApi {
    quotas: Quotas,
}

impl AwsApi {
    /// A bucket `burst` deep refilled at `rate` a second.
    pub fn new(burst: u64, rate: u64) -> Self {
        Self {
            quotas: Quotas::new(&[Spec::bucket("requests", burst, rate)]),
        }
    }
}

counter_methods!(AwsApi);

impl Respond for AwsApi {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let decision = self.quotas.decide(Instant::now(), &[1]);
        match decision.rejected_for {
            None => ResponseTemplate::new(200).set_body_raw("{}", "application/x-amz-json-1.0"),
            Some(_) => ResponseTemplate::new(400).set_body_raw(
                r#"{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"Rate of requests exceeds the allowed throughput."}"#,
                "application/x-amz-json-1.0",
            ),
        }
    }
}
