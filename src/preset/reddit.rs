//! [`Reddit`]: Reddit's OAuth API.

use super::{Settings, adapters, by_status};

/// Reddit's OAuth API (`oauth.reddit.com`), as its API rules and prawcore
/// describe it:
///
/// - every response's `x-ratelimit-used`, `-remaining` (fractional, `99.0`,
///   rounded down) and `-reset` (seconds to the end of the window) pace
///   before each request, as prawcore does;
/// - `429` is throttled; everything else as [`Response::by_status`](crate::classify::Response::by_status).
///
/// ```
/// let client = courteous::preset::Reddit.client().build();
/// # let _ = client;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Reddit;

by_status!(Reddit);

impl Settings for Reddit {}

adapters!(Reddit, "Reddit");
