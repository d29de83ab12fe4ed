//! [`GitLab`]: GitLab's REST API.

use super::{Settings, adapters, by_status};
use crate::signal::{ResetFormat, SignalParser};

/// GitLab's REST API, as its "Rate limits" documentation describes it:
///
/// - `429` is throttled, for `Retry-After`;
/// - `RateLimit-Reset` is a Unix epoch on GitLab (the IETF drafts send
///   seconds to wait under the same name): the preset pins that reading
///   ([`ResetFormat::Epoch`]); `RateLimit-Observed`, `RateLimit-Name` and
///   `RateLimit-ResetTime` are read too;
/// - everything else as [`Response::by_status`](crate::classify::Response::by_status).
///
/// ```
/// let client = courteous::preset::GitLab.client().build();
/// # let _ = client;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct GitLab;

by_status!(GitLab);

impl Settings for GitLab {
    fn parser(&self) -> SignalParser {
        SignalParser::new().reset_format(ResetFormat::Epoch)
    }
}

adapters!(GitLab, "GitLab");
