//! Leaky bucket (as a meter) maths, mirroring `leaky_bucket.lua`.
//!
//! A level of `used` units drains at `size / window` per millisecond; a
//! request is admitted when one more unit fits (`level + 1 ≤ size`) and adds
//! it. The same admissions as a token bucket of `size` refilled at the same
//! rate; what differs is what the server says: how full it is (`used/size`,
//! Shopify's `X-Shopify-Shop-Api-Call-Limit`), not what is left.

use super::Parts;

/// A bucket's stored state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Level {
    pub level: f64,
    pub updated_ms: f64,
}

/// Drain for the time since the last update, then add one unit if it fits.
/// `None` when nothing is written (a refusal leaves the stored state as is:
/// draining is linear, so recomputing later gives the same level).
pub(crate) fn take(
    state: Option<Level>,
    size: u64,
    window_ms: u64,
    now_ms: f64,
) -> (Option<Level>, Parts) {
    let cap = size as f64;
    let rate = cap / window_ms as f64;
    let Level {
        mut level,
        mut updated_ms,
    } = state.unwrap_or(Level {
        level: 0.0,
        updated_ms: now_ms,
    });
    if now_ms > updated_ms {
        level = (level - (now_ms - updated_ms) * rate).max(0.0);
        updated_ms = now_ms;
    }
    let now = now_ms.floor() as i64;
    if level + 1.0 > cap {
        let retry = ((level + 1.0 - cap) / rate).ceil() as i64;
        let reset = (level / rate).ceil() as i64;
        return (None, [0, 0, retry, reset, now]);
    }
    level += 1.0;
    let remaining = (cap - level.ceil()) as i64;
    let reset = (level / rate).ceil() as i64;
    (
        Some(Level { level, updated_ms }),
        [1, remaining, 0, reset, now],
    )
}

/// How long a bucket key lives: a full drain plus a second of slack (a
/// missing key means an empty bucket, so expiring later is always safe).
pub(crate) fn ttl_ms(window_ms: u64) -> u64 {
    window_ms + 1000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_then_drains_at_the_rate() {
        // Size 10 draining 5/s: window 2 s.
        let mut state = None;
        for i in 0..10 {
            let (s, parts) = take(state, 10, 2000, 0.0);
            assert_eq!(parts[..2], [1, 9 - i], "request {i}");
            state = s;
        }
        let (written, parts) = take(state, 10, 2000, 0.0);
        assert_eq!(written, None);
        // Full: the next unit fits after one drains (200 ms), empty after 2 s.
        assert_eq!(parts[..4], [0, 0, 200, 2000]);
        let (_, parts) = take(state, 10, 2000, 199.0);
        assert_eq!(parts[0], 0);
        let (_, parts) = take(state, 10, 2000, 200.0);
        assert_eq!(parts[..2], [1, 0]);
    }

    #[test]
    fn clock_going_back_does_not_drain_or_panic() {
        let (s, _) = take(None, 2, 1000, 1000.0);
        let (s, parts) = take(s, 2, 1000, 0.0);
        assert_eq!(parts[..2], [1, 0]);
        let (_, parts) = take(s, 2, 1000, 0.0);
        assert_eq!(parts[0], 0);
    }
}
