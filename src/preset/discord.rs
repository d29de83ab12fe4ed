//! [`Discord`]: Discord's HTTP API.

use super::{Settings, adapters, by_status};

/// Discord's HTTP API, as its "Rate Limits" documentation describes it:
///
/// - `429` is throttled, for the body's `retry_after` (float seconds),
///   which refines the whole-second `Retry-After`; every response's
///   `X-RateLimit-*` (with the fractional `Reset-After`) paces the bucket
///   it names in `X-RateLimit-Bucket` ([`Signal::bucket`](crate::signal::Signal::bucket));
///   a global limit (`X-RateLimit-Global`, `"global": true`) is flagged by
///   [`Signal::is_global`](crate::signal::Signal::is_global);
/// - everything else as [`Response::by_status`](crate::classify::Response::by_status).
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

impl Settings for Discord {}

adapters!(Discord, "Discord");
