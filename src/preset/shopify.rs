//! [`Shopify`]: Shopify's Admin REST and GraphQL APIs.

use std::time::Duration;

use http::header::RETRY_AFTER;

use super::{Settings, adapters};
use crate::classify::{Classify, Response, ResponseClass};

/// Shopify's Admin APIs, as their "API rate limits" documentation
/// describes them:
///
/// - REST: every response's `X-Shopify-Shop-Api-Call-Limit: 32/40` (a
///   leaky bucket draining two calls a second) paces; `429` is throttled,
///   for `Retry-After`, which Shopify sends with a fraction (`2.0`): the
///   preset reads it (a plain parser ignores a fractional `Retry-After`);
/// - GraphQL: a `429`'s `extensions.cost.throttleStatus` is read as a
///   quota of points, and its `THROTTLED` error as throttled;
/// - everything else as [`Response::by_status`].
///
/// ```
/// let client = courteous::preset::Shopify.client().build();
/// # let _ = client;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Shopify;

/// The longest fractional `Retry-After` taken: a day; longer is hostile.
const MAX_FRACTIONAL_WAIT: f64 = 86_400.0;

impl Classify for Shopify {
    fn classify(&self, response: &Response<'_>) -> ResponseClass {
        match response.by_status() {
            ResponseClass::Throttled { .. } if response.signal().retry_after().is_none() => {
                let wait = response
                    .headers()
                    .get(RETRY_AFTER)
                    .and_then(|value| value.to_str().ok())
                    .and_then(|text| text.trim().parse::<f64>().ok())
                    .filter(|secs| secs.is_finite() && (0.0..=MAX_FRACTIONAL_WAIT).contains(secs))
                    .map(Duration::from_secs_f64);
                ResponseClass::Throttled { wait }
            }
            class => class,
        }
    }
}

impl Settings for Shopify {}

adapters!(Shopify, "Shopify");
