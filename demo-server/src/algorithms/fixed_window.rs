//! Fixed window maths (mirrors `fixed_window.lua`) and the window arithmetic
//! shared with `fixed-window`'s `INCR` + `PEXPIRE`.

use super::Parts;

/// The window a time falls in (windows aligned to the Unix epoch).
pub(crate) fn index(now_ms: u64, window_ms: u64) -> u64 {
    now_ms / window_ms
}

/// Milliseconds from `now_ms` to the end of its window (at least 1).
pub(crate) fn to_end(now_ms: u64, window_ms: u64) -> u64 {
    (index(now_ms, window_ms) + 1) * window_ms - now_ms
}

/// Stored state of the atomic variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counter {
    pub window: u64,
    pub count: u64,
}

/// Count one request unless the window's limit is reached (rejections are not counted).
pub(crate) fn take(
    state: Option<Counter>,
    limit: u64,
    window_ms: u64,
    now_ms: u64,
) -> (Option<Counter>, Parts) {
    let window = index(now_ms, window_ms);
    let count = match state {
        Some(c) if c.window == window => c.count,
        _ => 0,
    };
    let reset = to_end(now_ms, window_ms) as i64;
    if count >= limit {
        return (state, [0, 0, reset, reset, now_ms as i64]);
    }
    let count = count + 1;
    let parts = [1, (limit - count) as i64, 0, reset, now_ms as i64];
    (Some(Counter { window, count }), parts)
}

/// The answer of `fixed-window` once `INCR` returned `count` (rejections were counted too).
pub(crate) fn after_incr(count: u64, limit: u64, window_ms: u64, now_ms: u64) -> Parts {
    let reset = to_end(now_ms, window_ms) as i64;
    if count <= limit {
        [1, (limit - count) as i64, 0, reset, now_ms as i64]
    } else {
        [0, 0, reset, reset, now_ms as i64]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_limit_per_window_and_resets_at_the_edge() {
        let mut state = None;
        let mut admitted = 0;
        for t in [900, 950, 990, 999] {
            let (s, parts) = take(state, 3, 1000, t);
            state = s;
            admitted += parts[0];
        }
        assert_eq!(admitted, 3);
        let (_, parts) = take(state, 3, 1000, 1000);
        assert_eq!(parts[..4], [1, 2, 0, 1000]);
    }

    #[test]
    fn incr_answer() {
        assert_eq!(after_incr(3, 3, 1000, 1250)[..4], [1, 0, 0, 750]);
        assert_eq!(after_incr(4, 3, 1000, 1250)[..4], [0, 0, 750, 750]);
    }
}
