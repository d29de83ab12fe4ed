//! Per-scope counters, readable from the client.

use std::time::Duration;

use super::kind::QuotaKind;

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
    pub(crate) in_flight: u32,
    pub(crate) quota_kind: QuotaKind,
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

    /// The time requests of this scope slept before sends (pauses,
    /// pacing, backoff), **summed over requests**: eight requests waiting
    /// the same second together add 8 s, so it can exceed the wall-clock
    /// time of the run (149.5 s for 8 tasks in an 18.8 s run). Not how long
    /// the scope was held up: for one request's wait, read its
    /// [`RetryReport::waited`](crate::RetryReport::waited); for the mean
    /// wait, divide by [`waits`](Self::waits).
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// Requests of this scope on the wire when the counters were read:
    /// admitted and not yet answered (a cancelled request is released).
    pub fn in_flight(&self) -> u32 {
        self.in_flight
    }

    /// The kind of quota the engine paces this scope by now, as far as its
    /// evidence goes ([`QuotaKind`]).
    pub fn quota_kind(&self) -> QuotaKind {
        self.quota_kind
    }
}
