//! Sliding log maths (mirrors `sliding_log.lua`).

use std::collections::VecDeque;

use super::Parts;

/// Admit if fewer than `limit` requests were admitted in the last window.
/// `log` holds admission times in ascending order.
pub(crate) fn take(log: &mut VecDeque<f64>, limit: u64, window_ms: u64, now_ms: f64) -> Parts {
    let window = window_ms as f64;
    while log.front().is_some_and(|&t| t <= now_ms - window) {
        log.pop_front();
    }
    let allowed = (log.len() as u64) < limit;
    if allowed {
        // Keep the log sorted even if the clock went back.
        let at = log.back().map_or(now_ms, |&last| last.max(now_ms));
        log.push_back(at);
    }
    let oldest = log.front().copied().unwrap_or(now_ms);
    let newest = log.back().copied().unwrap_or(now_ms);
    let retry = if allowed {
        0.0
    } else {
        (oldest + window - now_ms).ceil().max(1.0)
    };
    let reset = (newest + window - now_ms).ceil().max(0.0);
    [
        i64::from(allowed),
        limit as i64 - log.len() as i64,
        retry as i64,
        reset as i64,
        now_ms.floor() as i64,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_edge_does_not_double_the_limit() {
        let mut log = VecDeque::new();
        let admitted: i64 = [990.0, 995.0, 999.0, 1001.0, 1005.0, 1010.0]
            .iter()
            .map(|&t| take(&mut log, 3, 1000, t)[0])
            .sum();
        assert_eq!(admitted, 3);
        // The first entry leaves the window 1000 ms after it was admitted.
        assert_eq!(take(&mut log, 3, 1000, 1990.0)[0], 1);
    }
}
