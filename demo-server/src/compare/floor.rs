//! The floor of a job: the earliest a client that knows the limiter exactly
//! and honours every hint could have its N-th success, counted from its
//! first send to the N-th answer.
//!
//! **When the N-th unit exists** (`unit_ms`), for a client that sends each
//! request the instant a unit is available (L units per window W, a
//! bucket's burst L refilled or drained L per W):
//! - token bucket, leaky bucket: max(0, N − L) · W / L;
//! - a window opened by the first request, the sliding log: ⌊(N − 1) / L⌋ · W;
//! - a clock-aligned fixed window: 0 when N ≤ L, else φ + (⌈N / L⌉ − 2) · W,
//!   φ the time from the first send to the clock's next boundary;
//! - the sliding window counter (clock-aligned, the previous window weighted
//!   by its overlap): simulated millisecond by millisecond by the Lua
//!   script's rule (`sliding_window_unit_ms`).
//!
//! **The floor** with a server latency d (fixed part; the jitter only adds)
//! and c requests in flight: for a rate limit, max(unit_ms + d, ⌈N / c⌉ · d):
//! the N-th answer comes d after its unit, and c workers cannot finish N
//! requests of d each sooner; for a concurrency limit of K requests in
//! service (d is the service time), ⌈N / min(c, K)⌉ · d.

use crate::Algorithm;

/// A job on a limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// L: units per window (bucket size; requests in service).
    pub limit: u64,
    /// W, milliseconds.
    pub window_ms: u64,
    /// N: successes needed.
    pub successes: u64,
    /// c: the client's concurrency.
    pub concurrency: u64,
    /// d: the server latency's fixed part, milliseconds.
    pub latency_ms: u64,
}

impl Job {
    /// The floor in milliseconds (module docs); `first_ms` is the wall clock
    /// of the client's first send, for the clock-aligned windows.
    pub fn floor_ms(&self, first_ms: u64) -> u64 {
        let (n, c, d) = (self.successes, self.concurrency.max(1), self.latency_ms);
        if !self.algorithm.limits_rate() {
            return n.div_ceil(c.min(self.limit).max(1)) * d;
        }
        let unit = unit_ms(self.algorithm, self.limit, self.window_ms, n, first_ms);
        (unit + d).max(n.div_ceil(c) * d)
    }
}

/// When the `n`-th unit of `limit` per `window_ms` exists, counted from the
/// first send at wall clock `first_ms` (module docs).
pub fn unit_ms(algorithm: Algorithm, limit: u64, window_ms: u64, n: u64, first_ms: u64) -> u64 {
    let limit = limit.max(1);
    match algorithm {
        Algorithm::SlidingWindow => sliding_window_unit_ms(limit, window_ms, n, first_ms),
        Algorithm::FixedWindow | Algorithm::FixedWindowLua => {
            let windows = n.div_ceil(limit);
            if windows <= 1 {
                return 0;
            }
            let phase = window_ms - first_ms % window_ms;
            phase + (windows - 2) * window_ms
        }
        _ if algorithm.is_bucket() => n.saturating_sub(limit) * window_ms / limit,
        _ => n.saturating_sub(1) / limit * window_ms,
    }
}

/// The sliding window counter: a client sending the instant the counter
/// admits, millisecond by millisecond, by the rule of
/// `algorithms/sliding_window.lua` (`prev · overlap + cur + 1 ≤ L`, windows
/// aligned to the clock). After the first burst, a full window lets the
/// next admit at most L − 1 at its start (its last unit is due at the very
/// boundary).
fn sliding_window_unit_ms(limit: u64, window_ms: u64, n: u64, first_ms: u64) -> u64 {
    let window_ms = window_ms.max(1);
    let (mut prev, mut cur, mut index) = (0u64, 0u64, first_ms / window_ms);
    let mut admitted = 0;
    let end = first_ms + 2 * n.div_ceil(limit).max(1) * window_ms;
    for now in first_ms..end {
        let window = now / window_ms;
        if window != index {
            prev = if window == index + 1 { cur } else { 0 };
            cur = 0;
            index = window;
        }
        let overlap = 1.0 - (now % window_ms) as f64 / window_ms as f64;
        while prev as f64 * overlap + (cur + 1) as f64 <= limit as f64 {
            cur += 1;
            admitted += 1;
            if admitted >= n {
                return now - first_ms;
            }
        }
    }
    end - first_ms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floors_of_rate_and_concurrency_limits() {
        use Algorithm::*;
        // (algorithm, L, W ms, N, c, d ms) → floor ms.
        let cases = [
            // The 60th token at 2 s, answered 100 ms later.
            ((TokenBucket, 20, 1000, 60, 4, 100), 2100),
            // 4 workers need 15 × 150 ms = 2.25 s, after the 2.15 s of the units.
            ((TokenBucket, 20, 1000, 60, 4, 150), 2250),
            ((TokenBucket, 5, 1000, 3, 1, 0), 0),
            ((LeakyBucket, 10, 2000, 20, 1, 0), 2000),
            ((ClientWindow, 20, 1000, 60, 4, 100), 2100),
            ((SlidingLog, 100, 10_000, 110, 4, 0), 10_000),
            // 2 in service, 200 ms each, 30 successes at c = 4: 15 rounds;
            // 8 in service: c = 4 is the bound, 8 rounds.
            ((Concurrency, 2, 30_000, 30, 4, 200), 3000),
            ((Concurrency, 8, 30_000, 30, 4, 200), 1600),
        ];
        for ((algorithm, limit, window_ms, successes, concurrency, latency_ms), floor) in cases {
            let job = Job {
                algorithm,
                limit,
                window_ms,
                successes,
                concurrency,
                latency_ms,
            };
            assert_eq!(job.floor_ms(0), floor, "{job:?}");
        }
        // A clock-aligned window's first L units need no boundary.
        assert_eq!(unit_ms(FixedWindowLua, 20, 1000, 20, 123_456), 0);
    }
}
