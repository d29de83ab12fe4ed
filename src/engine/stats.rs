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
    pub(crate) gave_up_before_send: u64,
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

    /// Times the engine gave up on a request: stopped retrying a throttled
    /// or failed one (attempts, budget, a wait beyond `max_wait`, the
    /// deadline), or refused to send it at all, [`gave_up_before_send`](Self::gave_up_before_send)
    /// included. A request that may not be retried is not counted.
    pub fn gave_up(&self) -> u64 {
        self.gave_up
    }

    /// Of [`gave_up`](Self::gave_up), the requests never sent: the scope's
    /// pause or pacing wait was beyond `max_wait` or past the deadline.
    pub fn gave_up_before_send(&self) -> u64 {
        self.gave_up_before_send
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
