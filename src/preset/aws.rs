//! [`Aws`]: AWS service APIs.

use http::StatusCode;

use super::{Settings, adapters};
use crate::classify::{Classify, Response, ResponseClass};
use crate::signal::Refusal;

/// AWS service APIs, as botocore's standard retry mode reads them
/// (`botocore/retries/standard.py`):
///
/// - an error code in [`AWS_THROTTLING_CODES`](crate::signal::AWS_THROTTLING_CODES)
///   (from `x-amzn-ErrorType`, a JSON `__type` or `Code`, or an XML
///   `<Code>`) is throttled, whatever the status (`400`, `429`, `503`);
/// - any other error code on a `4xx` (`ValidationException`,
///   `AccessDeniedException`, S3's `NoSuchKey`) is a final refusal
///   ([`ResponseClass::Refused`]): an error at once
///   ([`Error::is_final_refusal`](crate::Error::is_final_refusal), its
///   [`refusal`](crate::Error::refusal) the code), never retried, as
///   botocore raises a `ClientError` for it;
/// - everything else as [`Response::by_status`];
/// - 3 attempts in all, as botocore's standard mode (its backoff, up to
///   20 s, is courteous's default).
///
/// ```
/// let client = courteous::preset::Aws.client().build();
/// # let _ = client;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Aws;

impl Aws {
    /// Attempts per request: botocore's standard mode's `max_attempts`.
    pub const MAX_ATTEMPTS: u32 = 3;
}

impl Classify for Aws {
    fn may_retry(&self, status: StatusCode) -> bool {
        status.is_client_error()
    }

    fn classify(&self, response: &Response<'_>) -> ResponseClass {
        match response.signal().refusal() {
            Some(refusal @ Refusal::Aws { .. }) if refusal.is_throttling() => {
                ResponseClass::Throttled { wait: None }
            }
            Some(Refusal::Aws { .. }) if response.status().is_client_error() => {
                ResponseClass::Refused
            }
            _ => response.by_status(),
        }
    }
}

impl Settings for Aws {
    fn max_attempts(&self) -> Option<u32> {
        Some(Self::MAX_ATTEMPTS)
    }
}

adapters!(Aws, "AWS");
