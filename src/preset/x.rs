//! [`X`]: the X (formerly Twitter) API.

use http::StatusCode;

use super::{Settings, adapters};
use crate::classify::{Classify, Response, ResponseClass};

/// The X API, as its "Rate limits" documentation describes it:
///
/// - every response's `x-rate-limit-limit`, `-remaining` and `-reset` (an
///   epoch, measured against `Date`) pace the 15-minute window;
/// - `429`, and `420` (API v1.1's "Enhance Your Calm"), are throttled;
/// - everything else as [`Response::by_status`].
///
/// ```
/// let client = courteous::preset::X.client().build();
/// # let _ = client;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct X;

impl X {
    /// API v1.1's "Enhance Your Calm".
    pub const ENHANCE_YOUR_CALM: u16 = 420;
}

impl Classify for X {
    fn may_retry(&self, status: StatusCode) -> bool {
        status.as_u16() == Self::ENHANCE_YOUR_CALM
    }

    fn classify(&self, response: &Response<'_>) -> ResponseClass {
        if response.status().as_u16() == Self::ENHANCE_YOUR_CALM {
            return ResponseClass::Throttled { wait: None };
        }
        response.by_status()
    }
}

impl Settings for X {}

adapters!(X, "X");
