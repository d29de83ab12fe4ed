//! The outcome of one rate-limit check.

use std::time::Duration;

/// What a store answered for one check.
///
/// `reset` is the time until the quota is fully restored (bucket full, window
/// over, log empty); `retry_after` is the time until the next unit is
/// available, zero when allowed. Both are measured on the store's clock
/// (`now_ms`, Redis `TIME` or the embedded store's clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request may proceed.
    pub allowed: bool,
    /// Units per window (bucket capacity).
    pub limit: u64,
    /// Units left after this check.
    pub remaining: u64,
    /// Time until the next unit is available; zero when allowed.
    pub retry_after: Duration,
    /// Time until the quota is fully restored.
    pub reset: Duration,
    /// The store's clock at the check, milliseconds since the Unix epoch.
    pub now_ms: u64,
    /// The lease an admitted request holds under a concurrency limit, to
    /// give back when its answer leaves ([`crate::Store::release`]).
    pub lease: Option<u64>,
}

impl Decision {
    /// Build a decision from the integers a script (or the embedded store) returns:
    /// `[allowed, remaining, retry_ms, reset_ms, now_ms]`.
    pub(crate) fn from_parts(limit: u64, parts: [i64; 5]) -> Self {
        let [allowed, remaining, retry_ms, reset_ms, now_ms] = parts.map(|v| v.max(0) as u64);
        let allowed = allowed == 1;
        Self {
            allowed,
            limit,
            remaining: remaining.min(limit),
            retry_after: if allowed {
                Duration::ZERO
            } else {
                Duration::from_millis(retry_ms.max(1))
            },
            reset: Duration::from_millis(reset_ms),
            now_ms,
            lease: None,
        }
    }

    /// This decision holding `lease` when it admitted the request.
    pub(crate) fn with_lease(mut self, lease: u64) -> Self {
        self.lease = self.allowed.then_some(lease);
        self
    }
}
