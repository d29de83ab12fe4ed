//! Per-scope counters, readable from the client.

use std::time::Duration;

/// What one scope has seen so far.
///
/// Read with [`Client::stats`](crate::Client::stats) (or the layer's and
/// middleware's `stats()`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScopeStats {
    pub(crate) sent: u64,
    pub(crate) throttled: u64,
    pub(crate) retries: u64,
    pub(crate) gave_up: u64,
    pub(crate) waits: u64,
    pub(crate) waited: Duration,
}

impl ScopeStats {
    /// Requests put on the wire, retries included.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Responses with a throttling status (429, 503, …).
    pub fn throttled(&self) -> u64 {
        self.throttled
    }

    /// Requests sent again after a throttled response or a transport error.
    pub fn retries(&self) -> u64 {
        self.retries
    }

    /// Times the engine stopped retrying a throttled or failed request.
    pub fn gave_up(&self) -> u64 {
        self.gave_up
    }

    /// Waits slept before sends (pauses, pacing and backoff).
    pub fn waits(&self) -> u64 {
        self.waits
    }

    /// Total time slept before sends, summed over requests.
    pub fn waited(&self) -> Duration {
        self.waited
    }
}
