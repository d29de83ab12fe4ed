//! Token bucket maths (mirrors `token_bucket.lua`); also the compute step of
//! `racy-bucket`.

use super::Parts;

/// A bucket's stored state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Bucket {
    pub tokens: f64,
    pub updated_ms: f64,
}

/// Refill for the time since the last update, then take one token if there is one.
pub(crate) fn take(
    state: Option<Bucket>,
    capacity: u64,
    window_ms: u64,
    now_ms: f64,
) -> (Bucket, Parts) {
    let cap = capacity as f64;
    let rate = cap / window_ms as f64;
    let Bucket {
        mut tokens,
        mut updated_ms,
    } = state.unwrap_or(Bucket {
        tokens: cap,
        updated_ms: now_ms,
    });
    if now_ms > updated_ms {
        tokens = (tokens + (now_ms - updated_ms) * rate).min(cap);
        updated_ms = now_ms;
    }
    let allowed = tokens >= 1.0;
    if allowed {
        tokens -= 1.0;
    }
    let retry = if allowed {
        0.0
    } else {
        ((1.0 - tokens) / rate).ceil()
    };
    let reset = ((cap - tokens) / rate).ceil();
    let parts = [
        i64::from(allowed),
        tokens.floor() as i64,
        retry as i64,
        reset as i64,
        now_ms.floor() as i64,
    ];
    (Bucket { tokens, updated_ms }, parts)
}

/// How long a bucket key lives: a full refill plus a second of slack
/// (a missing key means a full bucket, so expiring later is always safe).
pub(crate) fn ttl_ms(window_ms: u64) -> u64 {
    window_ms + 1000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drains_then_refills_at_the_rate() {
        let mut state = None;
        for i in 0..20 {
            let (s, parts) = take(state, 20, 1000, 0.0);
            assert_eq!(parts[0], 1, "request {i}");
            assert_eq!(parts[1], 19 - i);
            state = Some(s);
        }
        let (s, parts) = take(state, 20, 1000, 0.0);
        assert_eq!(parts[..4], [0, 0, 50, 1000]);
        // 50 ms later one token is back.
        let (_, parts) = take(Some(s), 20, 1000, 50.0);
        assert_eq!(parts[0], 1);
    }

    #[test]
    fn clock_going_back_does_not_refill_or_panic() {
        let (s, _) = take(None, 2, 1000, 1000.0);
        let (_, parts) = take(Some(s), 2, 1000, 0.0);
        assert_eq!(parts[..2], [1, 0]);
    }
}
