//! The rate and burst learned from refusals, for a quota that states no
//! policy (see the parent module's docs, point 2).

use std::time::{Duration, Instant};

use super::super::time::later;
use super::{MEASURE_HORIZON, secs};

/// Where the current measurement starts: the instant a refusal's hint
/// pointed to, and the successes counted since.
#[derive(Debug, Clone, Copy)]
struct Anchor {
    at: Instant,
    successes: u64,
}

/// What refusals taught about the quota.
#[derive(Debug, Clone, Default)]
pub(super) struct Learned {
    rate: Option<f64>,
    capacity: Option<f64>,
    anchor: Option<Anchor>,
    successes_since_throttle: u64,
    period: Option<Duration>,
}

impl Learned {
    /// Units per second, once a refusal (with a hint) or two told.
    pub(super) fn rate(&self) -> Option<f64> {
        self.rate
    }

    /// The burst: the successes before the first refusal.
    pub(super) fn capacity(&self) -> Option<f64> {
        self.capacity
    }

    /// Successes since the last refusal.
    pub(super) fn successes_since_throttle(&self) -> u64 {
        self.successes_since_throttle
    }

    /// A learned window's length: the shortest time a burst of
    /// [`capacity`](Self::capacity) was seen to take to come back. Each
    /// measure is an upper bound (whole-second hints round up, and our own
    /// lateness after a pause lengthens the span), so the shortest is the
    /// tightest.
    pub(super) fn period(&self) -> Option<Duration> {
        self.period
    }

    fn measured(&mut self, rate: f64) {
        self.rate = Some(rate);
        let period = self
            .capacity
            .and_then(|c| Duration::try_from_secs_f64(c / rate).ok());
        self.period = match (self.period, period) {
            (Some(known), Some(new)) => Some(known.min(new)),
            (known, new) => new.or(known),
        };
    }

    /// One more success.
    pub(super) fn on_success(&mut self) {
        self.successes_since_throttle += 1;
    }

    /// A refusal at `now`, with the server's hint if any. Between two
    /// refusals every success spent a unit refilled in between: `successes /
    /// span` is the rate (span between the instants the hints pointed to).
    /// The first refusal gives the burst, and `successes / hint`.
    pub(super) fn on_throttle(&mut self, now: Instant, hint: Option<Duration>) {
        let next_unit_at = later(now, hint.unwrap_or(Duration::ZERO));
        let successes = std::mem::take(&mut self.successes_since_throttle);
        match self.anchor.as_mut() {
            Some(anchor)
                if next_unit_at.saturating_duration_since(anchor.at) <= MEASURE_HORIZON =>
            {
                anchor.successes += successes;
                let span = secs(next_unit_at.saturating_duration_since(anchor.at));
                if span > 0.0 && anchor.successes > 0 {
                    let rate = anchor.successes as f64 / span;
                    self.measured(rate);
                }
            }
            _ => {
                self.anchor = Some(Anchor {
                    at: next_unit_at,
                    successes: 0,
                });
                if successes > 0 {
                    self.capacity = Some(successes as f64);
                    if let Some(h) = hint.filter(|h| !h.is_zero()) {
                        self.measured(successes as f64 / secs(h));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_first_refusal_gives_the_burst_and_the_second_the_rate() {
        let t0 = Instant::now();
        let mut learned = Learned::default();
        for _ in 0..20 {
            learned.on_success();
        }
        // 20 successes, then refused: come back in 1 s.
        learned.on_throttle(t0, Some(ms(1000)));
        assert_eq!(learned.rate(), Some(20.0));
        assert_eq!(learned.capacity(), Some(20.0));
        for _ in 0..10 {
            learned.on_success();
        }
        // 10 more between the instants the two hints pointed to, 1 s apart.
        learned.on_throttle(t0 + ms(1900), Some(ms(100)));
        assert_eq!(learned.rate(), Some(10.0));
        assert_eq!(learned.capacity(), Some(20.0));
        // The burst came back within 1 s once: the window is 1 s, not 2.
        assert_eq!(learned.period(), Some(ms(1000)));
    }

    #[test]
    fn refusals_beyond_the_horizon_start_a_new_measurement() {
        let t0 = Instant::now();
        let mut learned = Learned::default();
        learned.on_success();
        learned.on_throttle(t0, Some(ms(1000)));
        assert_eq!(learned.rate(), Some(1.0));
        for _ in 0..5 {
            learned.on_success();
        }
        learned.on_throttle(t0 + MEASURE_HORIZON + ms(2000), None);
        assert_eq!(learned.rate(), Some(1.0), "kept, not measured over 31 s");
        assert_eq!(learned.capacity(), Some(5.0));
    }
}
