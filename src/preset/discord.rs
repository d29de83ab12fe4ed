//! [`Discord`]: Discord's HTTP API.

use std::time::Duration;

use super::{Settings, adapters, by_status};

/// Discord's HTTP API, as its "Rate Limits" documentation describes it:
///
/// - `429` is throttled, for the body's `retry_after` (float seconds),
///   which refines the whole-second `Retry-After`; every response's
///   `X-RateLimit-*` (with the fractional `Reset-After`) paces the bucket
///   it names in `X-RateLimit-Bucket` ([`Signal::bucket`](crate::signal::Signal::bucket));
///   a global limit (`X-RateLimit-Global`, `"global": true`) is flagged by
///   [`Signal::is_global`](crate::signal::Signal::is_global);
/// - everything else as [`Response::by_status`](crate::classify::Response::by_status);
/// - the global limit, 50 requests a second, which no header announces, is
///   declared ([`Config::declared_quota`](crate::Config::declared_quota)):
///   each scope keeps at most 50 of its sends in any second.
///
/// The scope is the origin: every route is one scope, so a bucket shared by
/// two routes is one scope and a global limit pauses every request. Routes
/// of different buckets share it too, and are paced by whichever bucket
/// answered last, which is slower than Discord allows but never refused
/// for it.
///
/// ```
/// let client = courteous::preset::Discord.client().build();
/// # let _ = client;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Discord;

by_status!(Discord);

/// Discord's global limit: 50 requests a second per bot, across every
/// route ("Rate Limits", Global Rate Limit), never announced in headers.
const GLOBAL_LIMIT: (u32, Duration) = (50, Duration::from_secs(1));

impl Settings for Discord {
    fn declared_quota(&self) -> Option<(u32, Duration)> {
        Some(GLOBAL_LIMIT)
    }
}

adapters!(Discord, "Discord");
