//! A learned cycle: at most a burst of sends in any span of the cycle's
//! length (a sliding log of our own sends), for a quota that states no
//! policy once refusals taught its burst and cycle (`learned.rs`).
//!
//! One rule fits every kind the refusals cannot tell apart: a fixed window
//! of length W ≤ cycle never holds more than the burst of our sends,
//! whatever its phase; a sliding log of W gets each unit back no earlier
//! than the send it replaces, one cycle later, in the same spacing as the
//! burst before (a second burst faster than the first would run into units
//! not yet back); a bucket refilling the burst within the cycle is never
//! empty at a send.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::super::time::later;

/// Most sends remembered per scope (16 bytes each). A larger burst is paced
/// as this many sends per the same share of the cycle: the same rate, in
/// smaller bursts.
pub(super) const MAX_REMEMBERED: usize = 256;

/// Our recent sends, oldest first.
#[derive(Debug, Clone, Default)]
pub(super) struct Cycle {
    sends: VecDeque<Instant>,
}

impl Cycle {
    /// Remembers a send at `now`.
    pub(super) fn record(&mut self, now: Instant) {
        if self.sends.len() >= MAX_REMEMBERED {
            self.sends.pop_front();
        }
        self.sends.push_back(now);
    }

    /// How many sends are remembered.
    #[cfg(test)]
    pub(super) fn remembered(&self) -> usize {
        self.sends.len()
    }

    /// How long from `now` until one more send keeps at most `burst` sends
    /// in any span of `period`; `None` when it may go now.
    pub(super) fn wait(&self, now: Instant, burst: f64, period: Duration) -> Option<Duration> {
        let (burst, period) = scaled(burst, period);
        let due = self
            .sends
            .len()
            .checked_sub(burst)
            .and_then(|i| self.sends.get(i))
            .map(|&oldest| later(oldest, period))?;
        (due > now).then(|| due - now)
    }
}

/// `burst` (at least 1) and `period`, scaled down to [`MAX_REMEMBERED`]
/// sends at the same rate.
fn scaled(burst: f64, period: Duration) -> (usize, Duration) {
    let burst = burst.max(1.0);
    if burst <= MAX_REMEMBERED as f64 {
        (burst as usize, period)
    } else {
        let share = MAX_REMEMBERED as f64 / burst;
        (MAX_REMEMBERED, period.mul_f64(share))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_send_waits_for_the_one_a_burst_before_to_be_a_cycle_old() {
        let t0 = Instant::now();
        let mut cycle = Cycle::default();
        // A burst of 3 spread over 20 ms.
        for i in 0..3 {
            assert_eq!(cycle.wait(t0 + ms(10 * i), 3.0, ms(1000)), None);
            cycle.record(t0 + ms(10 * i));
        }
        // The 4th goes a cycle after the 1st, the 5th a cycle after the 2nd.
        assert_eq!(cycle.wait(t0 + ms(30), 3.0, ms(1000)), Some(ms(970)));
        assert_eq!(cycle.wait(t0 + ms(1000), 3.0, ms(1000)), None);
        cycle.record(t0 + ms(1000));
        assert_eq!(cycle.wait(t0 + ms(1001), 3.0, ms(1000)), Some(ms(9)));
        // A smaller burst (the quota shrank) counts further back.
        assert_eq!(cycle.wait(t0 + ms(1001), 1.0, ms(1000)), Some(ms(999)));
    }

    #[test]
    fn a_burst_beyond_the_memory_keeps_its_rate() {
        let t0 = Instant::now();
        let mut cycle = Cycle::default();
        for _ in 0..MAX_REMEMBERED {
            cycle.record(t0);
        }
        // 1024 per 4 s is 256 per second.
        assert_eq!(
            cycle.wait(t0, 4.0 * MAX_REMEMBERED as f64, ms(4000)),
            Some(ms(1000))
        );
        assert_eq!(scaled(0.0, ms(5)), (1, ms(5)));
        assert_eq!(scaled(f64::INFINITY, ms(5)), (MAX_REMEMBERED, ms(0)));
    }
}
