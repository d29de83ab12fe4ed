//! [`Google`]: Google APIs (`googleapis.com`).

use http::StatusCode;

use super::{Settings, adapters, mentions};
use crate::classify::{Classify, Response, ResponseClass};

/// Google APIs, as their error model (`google.rpc.Status`) and the older
/// JSON error format describe their limits:
///
/// - `429` `RESOURCE_EXHAUSTED` is throttled, waited as the body's
///   `google.rpc.RetryInfo.retryDelay` says;
/// - unless its `google.rpc.QuotaFailure` names a per-day quota: that one
///   is a final refusal ([`ResponseClass::Refused`]), an error at once
///   ([`Error::is_final_refusal`](crate::Error::is_final_refusal); waiting
///   a minute cannot help);
/// - a `403` whose body gives the reason `rateLimitExceeded` or
///   `userRateLimitExceeded` is throttled; `dailyLimitExceeded` and
///   `quotaExceeded` are final refusals; any other `403` (permissions) is
///   the answer ([`ResponseClass::Final`]);
/// - everything else as [`Response::by_status`].
///
/// ```
/// let client = courteous::preset::Google.client().build();
/// # let _ = client;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Google;

impl Classify for Google {
    fn may_retry(&self, status: StatusCode) -> bool {
        status == StatusCode::FORBIDDEN
    }

    fn classify(&self, response: &Response<'_>) -> ResponseClass {
        if response.signal().refusal().is_some_and(|r| r.is_final()) {
            return ResponseClass::Refused;
        }
        if response.status() == StatusCode::FORBIDDEN {
            let body = response.body_prefix();
            let rate = mentions(body, b"\"rateLimitExceeded\"")
                || mentions(body, b"\"userRateLimitExceeded\"");
            let spent =
                mentions(body, b"\"dailyLimitExceeded\"") || mentions(body, b"\"quotaExceeded\"");
            return if rate {
                ResponseClass::Throttled { wait: None }
            } else if spent {
                ResponseClass::Refused
            } else {
                ResponseClass::Final
            };
        }
        response.by_status()
    }
}

impl Settings for Google {}

adapters!(Google, "Google APIs");
