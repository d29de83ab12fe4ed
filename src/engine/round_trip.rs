//! The measured round trip of a scope's requests: a smoothed mean and mean
//! deviation, as TCP keeps them (RFC 6298 §2).
//!
//! Each answer's round trip `R` (from its send to its answer) updates
//!
//! ```text
//! RTTVAR ← (1 − β)·RTTVAR + β·|SRTT − R|      β = 1/4
//! SRTT   ← (1 − α)·SRTT   + α·R               α = 1/8
//! ```
//!
//! starting from `SRTT = R`, `RTTVAR = R / 2` at the first sample. The
//! constants are RFC 6298's. `SRTT + 4·RTTVAR` is how late an answer may
//! come before TCP calls it lost; here [`RoundTrip::spread`] (`4·RTTVAR`)
//! is how far apart two round trips may be by chance alone, the margin
//! every timing comparison in the engine allows.

use std::time::Duration;

/// Weight of a new sample in the mean (RFC 6298's α).
const ALPHA: f64 = 1.0 / 8.0;
/// Weight of a new sample's deviation in the mean deviation (RFC 6298's β).
const BETA: f64 = 1.0 / 4.0;
/// Deviations allowed before a difference is more than chance (RFC 6298's K).
const K: f64 = 4.0;
/// The least timeout, and the timeout before any sample (RFC 6298 §2.4
/// and §2.1): a lost answer still frees what waits for it.
pub(crate) const MIN_TIMEOUT: Duration = Duration::from_secs(1);
/// The most timeout (RFC 6298 §2.5 allows a cap of 60 s or more): an
/// answer later than that is no longer waited for.
const MAX_TIMEOUT: Duration = Duration::from_secs(60);

/// A smoothed round trip and its mean deviation, in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct RoundTrip {
    /// `(SRTT, RTTVAR)` once a sample was taken.
    smoothed: Option<(f64, f64)>,
}

impl RoundTrip {
    /// Takes one round trip.
    pub(crate) fn observe(&mut self, sample: Duration) {
        let r = sample.as_secs_f64();
        self.smoothed = Some(match self.smoothed {
            None => (r, r / 2.0),
            Some((srtt, rttvar)) => (
                (1.0 - ALPHA) * srtt + ALPHA * r,
                (1.0 - BETA) * rttvar + BETA * (srtt - r).abs(),
            ),
        });
    }

    /// The smoothed round trip, once measured.
    pub(crate) fn mean(&self) -> Option<Duration> {
        self.smoothed.map(|(srtt, _)| Duration::from_secs_f64(srtt))
    }

    /// How long an answer may take before it is late: RFC 6298's
    /// retransmission timeout, `SRTT + 4·RTTVAR`, within 1 s and 60 s
    /// (1 s before any sample).
    pub(crate) fn timeout(&self) -> Duration {
        self.mean()
            .map_or(MIN_TIMEOUT, |mean| mean.saturating_add(self.spread()))
            .clamp(MIN_TIMEOUT, MAX_TIMEOUT)
    }

    /// How much two round trips may differ by chance: `4·RTTVAR` (zero
    /// before any sample).
    pub(crate) fn spread(&self) -> Duration {
        self.smoothed.map_or(Duration::ZERO, |(_, rttvar)| {
            Duration::from_secs_f64(K * rttvar)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_first_sample_is_the_mean_with_half_of_it_as_deviation() {
        let mut rtt = RoundTrip::default();
        assert_eq!((rtt.mean(), rtt.spread()), (None, Duration::ZERO));
        rtt.observe(ms(100));
        assert_eq!(rtt.mean(), Some(ms(100)));
        assert_eq!(rtt.spread(), ms(200));
    }

    #[test]
    fn the_timeout_is_rfc_6298s_within_one_second_and_a_minute() {
        let mut rtt = RoundTrip::default();
        assert_eq!(rtt.timeout(), ms(1_000), "before any sample");
        rtt.observe(ms(100));
        // 100 ms + 4 · 50 ms: under the least.
        assert_eq!(rtt.timeout(), ms(1_000));
        let mut slow = RoundTrip::default();
        slow.observe(ms(1_200));
        // 1.2 s + 4 · 0.6 s.
        assert_eq!(slow.timeout(), ms(3_600));
        let mut lost = RoundTrip::default();
        lost.observe(Duration::from_secs(100));
        assert_eq!(lost.timeout(), Duration::from_secs(60));
    }

    #[test]
    fn steady_samples_shrink_the_spread_and_keep_the_mean() {
        let mut rtt = RoundTrip::default();
        for _ in 0..40 {
            rtt.observe(ms(50));
        }
        assert_eq!(rtt.mean(), Some(ms(50)));
        assert!(rtt.spread() < ms(1), "{:?}", rtt.spread());
    }

    #[test]
    fn a_late_sample_moves_the_mean_by_an_eighth_and_the_deviation_by_a_quarter() {
        let mut rtt = RoundTrip::default();
        rtt.observe(ms(80));
        rtt.observe(ms(160));
        // SRTT = 7/8·80 + 1/8·160 = 90; RTTVAR = 3/4·40 + 1/4·80 = 50.
        let mean = rtt.mean().unwrap().as_secs_f64();
        assert!((mean - 0.090).abs() < 1e-9, "{mean}");
        let spread = rtt.spread().as_secs_f64();
        assert!((spread - 0.200).abs() < 1e-9, "{spread}");
    }
}
