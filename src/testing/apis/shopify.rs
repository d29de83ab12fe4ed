//! A mock of Shopify's Admin REST API at its limits.

use std::time::Instant;

use wiremock::{Request, Respond, ResponseTemplate};

use super::counter_methods;
use super::meter::{Quotas, Spec};

/// A [`Respond`] implementation that limits as Shopify's Admin REST API
/// does: a leaky bucket `size` calls deep that drains `drain` calls a
/// second (Shopify: 40 and 2 on the standard plans, 400 and 20 on Plus).
///
/// Every response carries `X-Shopify-Shop-Api-Call-Limit: used/size`
/// (`used` rounded up); a refusal is a `429` with `Retry-After` in seconds
/// with one decimal (`2.0`), as Shopify writes it, and its JSON error.
///
/// ```
/// use courteous::testing::ShopifyApi;
///
/// let api = ShopifyApi::new(40, 2);
/// assert_eq!(api.received(), 0);
/// ```
#[derive(Debug, Clone)]
pub struct ShopifyApi {
    quotas: Quotas,
}

impl ShopifyApi {
    /// A bucket `size` calls deep draining `drain` calls a second.
    pub fn new(size: u64, drain: u64) -> Self {
        Self {
            quotas: Quotas::new(&[Spec::bucket("calls", size, drain)]),
        }
    }
}

counter_methods!(ShopifyApi);

impl Respond for ShopifyApi {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let decision = self.quotas.decide(Instant::now(), &[1]);
        let reading = decision.readings[0];
        let template = match decision.rejected_for {
            None => {
                ResponseTemplate::new(200).set_body_raw("{\"products\":[]}", "application/json")
            }
            Some(wait) => {
                // Tenths of a second, rounded up.
                let tenths = wait.as_nanos().div_ceil(100_000_000);
                ResponseTemplate::new(429)
                    .insert_header("retry-after", format!("{}.{}", tenths / 10, tenths % 10))
                    .set_body_raw(
                        r#"{"errors":"Exceeded 2 calls per second for api client. Reduce request rates to resume uninterrupted service."}"#,
                        "application/json",
                    )
            }
        };
        template.insert_header(
            "x-shopify-shop-api-call-limit",
            format!("{}/{}", reading.limit - reading.remaining, reading.limit),
        )
    }
}
