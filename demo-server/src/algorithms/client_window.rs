//! Fixed window opened by a client's first request (mirrors
//! `client_window.lua`): the per-client window of API gateways and
//! middleware limiters (express-rate-limit's memory store, `INCR` + `EXPIRE`
//! on the first hit). Nothing is aligned to the clock: a window of `limit`
//! requests opens with the first request after the previous one ended and
//! lasts `window_ms`; rejections are not counted.

use super::Parts;

/// Stored state: when the window opened and how many it admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Opened {
    pub start_ms: u64,
    pub count: u64,
}

/// Count one request unless the open window's limit is reached; a request
/// after the window ended opens the next one.
pub(crate) fn take(
    state: Option<Opened>,
    limit: u64,
    window_ms: u64,
    now_ms: u64,
) -> (Option<Opened>, Parts) {
    let open = state.filter(|s| now_ms < s.start_ms.saturating_add(window_ms));
    let Opened { start_ms, count } = open.unwrap_or(Opened {
        start_ms: now_ms,
        count: 0,
    });
    // Milliseconds until the window ends (at least 1).
    let reset = (start_ms.saturating_add(window_ms).saturating_sub(now_ms)).max(1) as i64;
    if count >= limit {
        return (open, [0, 0, reset, reset, now_ms as i64]);
    }
    let count = count + 1;
    let parts = [1, (limit - count) as i64, 0, reset, now_ms as i64];
    (Some(Opened { start_ms, count }), parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_opens_at_the_first_request_not_at_a_clock_edge() {
        // First request at 1_250: the window is [1_250, 2_250), not [1_000, 2_000).
        let (s, parts) = take(None, 2, 1000, 1_250);
        assert_eq!(parts[..4], [1, 1, 0, 1000]);
        let (s, parts) = take(s, 2, 1000, 1_900);
        assert_eq!(parts[..4], [1, 0, 0, 350]);
        // Past the clock's edge at 2_000, still the same window.
        let (s, parts) = take(s, 2, 1000, 2_100);
        assert_eq!(parts[..4], [0, 0, 150, 150]);
        // The next window opens with the first request after it ended.
        let (s, parts) = take(s, 2, 1000, 2_700);
        assert_eq!(parts[..4], [1, 1, 0, 1000]);
        assert_eq!(
            s,
            Some(Opened {
                start_ms: 2_700,
                count: 1
            })
        );
    }

    #[test]
    fn a_clock_going_back_keeps_the_window() {
        let (s, _) = take(None, 1, 1000, 5_000);
        let (_, parts) = take(s, 1, 1000, 4_000);
        assert_eq!(parts[..2], [0, 0]);
    }
}
