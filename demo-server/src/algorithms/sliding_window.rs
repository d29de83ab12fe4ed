//! Sliding window counter maths (mirrors `sliding_window.lua`).

use super::Parts;

/// Stored state: the current window number and the counts of it and the previous one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counters {
    pub window: u64,
    pub current: u64,
    pub previous: u64,
}

/// Admit if `previous * overlap + current + 1 <= limit`.
pub(crate) fn take(
    state: Option<Counters>,
    limit: u64,
    window_ms: u64,
    now_ms: u64,
) -> (Option<Counters>, Parts) {
    let index = now_ms / window_ms;
    let (mut current, previous) = match state {
        Some(c) if c.window == index => (c.current, c.previous),
        Some(c) if c.window + 1 == index => (0, c.current),
        _ => (0, 0),
    };
    let start = index * window_ms;
    let window = window_ms as f64;
    let (limit_f, cur_f, prev_f) = (limit as f64, current as f64, previous as f64);
    let weight = 1.0 - (now_ms - start) as f64 / window;
    let mut estimate = prev_f * weight + cur_f;
    let allowed = estimate + 1.0 <= limit_f;
    let mut new_state = state;
    if allowed {
        current += 1;
        estimate += 1.0;
        new_state = Some(Counters {
            window: index,
            current,
            previous,
        });
    }
    let to_end = (start + window_ms - now_ms) as f64;
    let retry = if allowed {
        0.0
    } else if cur_f + 1.0 <= limit_f {
        ((1.0 - (limit_f - cur_f - 1.0) / prev_f) * window - (now_ms - start) as f64)
            .ceil()
            .max(1.0)
    } else {
        (to_end + ((1.0 - (limit_f - 1.0) / cur_f).max(0.0) * window).ceil()).max(1.0)
    };
    let reset = if current > 0 {
        to_end + window
    } else if previous > 0 {
        to_end
    } else {
        0.0
    };
    let parts = [
        i64::from(allowed),
        (limit_f - estimate).floor().max(0.0) as i64,
        retry as i64,
        reset as i64,
        now_ms as i64,
    ];
    (new_state, parts)
}

/// How long the key lives: through the next window, where it still counts as "previous".
pub(crate) fn ttl_ms(window_ms: u64, now_ms: u64) -> u64 {
    (now_ms / window_ms) * window_ms + 2 * window_ms - now_ms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previous_window_weighs_by_overlap() {
        let mut state = None;
        for _ in 0..10 {
            let (s, parts) = take(state, 10, 1000, 900);
            assert_eq!(parts[0], 1);
            state = s;
        }
        // 100 ms into the next window: 10 * 0.9 = 9 still count, so 1 more fits.
        let (s, parts) = take(state, 10, 1000, 1100);
        assert_eq!(parts[..2], [1, 0]);
        let (_, parts) = take(s, 10, 1000, 1100);
        assert_eq!(parts[0], 0);
        // Retry when 10 * (1 - f) + 1 + 1 <= 10, i.e. f >= 0.2: 100 ms more.
        assert_eq!(parts[2], 100);
    }

    #[test]
    fn rejection_in_a_full_window_waits_into_the_next() {
        let (s, _) = take(None, 2, 1000, 0);
        let (s, _) = take(s, 2, 1000, 0);
        let (_, parts) = take(s, 2, 1000, 0);
        // Next window: 2 * (1 - f) + 1 <= 2 from f = 0.5 on.
        assert_eq!(parts[..3], [0, 0, 1500]);
    }
}
