//! How long one store call may take: the configured deadline, stretched to
//! what this process has seen its store calls take.
//!
//! A fixed 20 ms deadline treats a host too busy to run this process (or
//! Redis) on time as a Redis in trouble: on a loaded machine the calls
//! miss it, the breaker opens, and the requests go out paced alone, which
//! is exactly what the fleet is there to prevent. So the deadline follows
//! the calls' own round trips with the retransmission timer of TCP
//! (RFC 6298 §2: `SRTT + 4 × RTTVAR`, gains 1/8 and 1/4), the standard
//! answer to "how long before a missing answer means trouble". It never
//! drops below the configured deadline, and never exceeds the first-call
//! deadline ([`FIRST_CALL_DEADLINE`], or the configured one if longer).
//! Once the store has answered, a stopped Redis costs a request the
//! deadline its last round trips set (20 ms on a healthy store) for each
//! of the 2 failures before the breaker takes over.
//! A missed deadline teaches nothing about how long an answer takes, so it
//! is not a sample; as in RFC 6298 §5.5 it doubles the timer for the next
//! call ("back off the timer"), until a call answers, for the calls tried
//! before the breaker opens (once open, the breaker spaces the calls
//! instead). A stall of the host longer than one deadline (common when
//! many processes start at once on few cores) then costs one more call,
//! not the breaker opening on every process at the same moment.

use std::time::Duration;

use super::store::FIRST_CALL_DEADLINE;

/// RFC 6298's gain for the smoothed round trip (alpha = 1/8).
const ALPHA: f64 = 1.0 / 8.0;
/// RFC 6298's gain for the round-trip variation (beta = 1/4).
const BETA: f64 = 1.0 / 4.0;
/// RFC 6298's weight of the variation in the timer (K = 4).
const K: f64 = 4.0;

/// The smoothed round trip of the store calls that answered (seconds),
/// once one did.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct CallTimer {
    estimate: Option<Estimate>,
    /// Deadlines missed in a row since the last answer (each doubles it).
    missed: u32,
}

#[derive(Debug, Clone, Copy)]
struct Estimate {
    srtt: f64,
    rttvar: f64,
}

impl CallTimer {
    /// The deadline of the next call, given the configured one (`floor`):
    /// the first-call deadline until a call answered, then the
    /// retransmission timer within `floor ..= max(floor, FIRST_CALL_DEADLINE)`.
    pub(crate) fn deadline(&self, floor: Duration) -> Duration {
        let cap = floor.max(FIRST_CALL_DEADLINE);
        let Some(e) = self.estimate else {
            return cap;
        };
        let backoff = f64::from(1u32 << self.missed.min(16));
        let timer = Duration::try_from_secs_f64((e.srtt + K * e.rttvar) * backoff).unwrap_or(cap);
        timer
            .max(floor.saturating_mul(1 << self.missed.min(16)))
            .clamp(floor, cap)
    }

    /// A call missed its deadline: the next one gets twice as long, up to
    /// `most` doublings in a row.
    pub(crate) fn missed(&mut self, most: u32) {
        self.missed = self.missed.saturating_add(1).min(most);
    }

    /// A call answered after `took` (RFC 6298 §2.2 and §2.3).
    pub(crate) fn answered(&mut self, took: Duration) {
        self.missed = 0;
        let r = took.as_secs_f64();
        self.estimate = Some(match self.estimate {
            None => Estimate {
                srtt: r,
                rttvar: r / 2.0,
            },
            Some(e) => Estimate {
                rttvar: (1.0 - BETA) * e.rttvar + BETA * (e.srtt - r).abs(),
                srtt: (1.0 - ALPHA) * e.srtt + ALPHA * r,
            },
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn first_call_gets_the_long_deadline_then_the_floor_for_a_fast_store() {
        let mut t = CallTimer::default();
        assert_eq!(t.deadline(20 * MS), FIRST_CALL_DEADLINE);
        for _ in 0..10 {
            t.answered(Duration::from_micros(80));
        }
        assert_eq!(
            t.deadline(20 * MS),
            20 * MS,
            "never below the configured deadline"
        );
    }

    #[test]
    fn a_slow_host_stretches_the_deadline_up_to_the_first_call_one() {
        let mut t = CallTimer::default();
        // First sample 30 ms: SRTT 30, RTTVAR 15, timer 30 + 60 = 90 ms.
        t.answered(30 * MS);
        let d = t.deadline(20 * MS);
        assert!(d > 89 * MS && d < 91 * MS, "{d:?}");
        t.answered(Duration::from_secs(5));
        assert_eq!(
            t.deadline(20 * MS),
            FIRST_CALL_DEADLINE,
            "capped at the first-call deadline"
        );
        // A fast store again brings it back down, smoothly.
        for _ in 0..100 {
            t.answered(MS);
        }
        assert_eq!(t.deadline(20 * MS), 20 * MS);
    }

    #[test]
    fn each_missed_deadline_doubles_the_next_until_an_answer() {
        let mut t = CallTimer::default();
        t.answered(Duration::from_micros(80));
        assert_eq!(t.deadline(20 * MS), 20 * MS);
        t.missed(1);
        assert_eq!(t.deadline(20 * MS), 40 * MS);
        t.missed(1);
        assert_eq!(t.deadline(20 * MS), 40 * MS, "one doubling at most");
        for _ in 0..40 {
            t.missed(40);
        }
        assert_eq!(t.deadline(20 * MS), FIRST_CALL_DEADLINE, "capped");
        t.answered(Duration::from_micros(80));
        assert_eq!(t.deadline(20 * MS), 20 * MS, "an answer resets it");
    }

    #[test]
    fn absurd_samples_and_settings_do_not_panic() {
        let mut t = CallTimer::default();
        t.answered(Duration::MAX);
        assert_eq!(t.deadline(Duration::MAX), Duration::MAX);
        assert_eq!(t.deadline(Duration::ZERO), FIRST_CALL_DEADLINE);
    }
}
