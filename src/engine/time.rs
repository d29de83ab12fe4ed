//! Time arithmetic that cannot panic, whatever a server or a configuration
//! says.
//!
//! Server numbers enter the engine clamped to [`MAX_SERVER_WAIT`]; sums of
//! instants and durations saturate; seconds computed as floats (rates,
//! estimates) become durations without ever panicking on `NaN`, infinity,
//! negatives or overflow.

use std::time::{Duration, Instant};

/// The longest wait or reset the engine takes from a server: one day.
///
/// A server's numbers are hostile input (`Retry-After: 18446744073709551615`,
/// `{"retry_after_ms": 1e300}`, an `X-RateLimit-Reset` 10²⁰ s away): each is
/// clamped to this where it enters the engine, so no instant computed from it
/// overflows. A day is longer than any window a real limiter announces
/// (hourly API quotas, daily ones reset within 24 h) and far beyond the
/// default [`max_wait`](super::Config::max_wait) of 60 s: a hint this long
/// still gives up at once with a typed error, as the original would.
pub const MAX_SERVER_WAIT: Duration = Duration::from_secs(24 * 60 * 60);

/// `at + wait`, saturating: a sum past what an [`Instant`] can hold becomes
/// `at + MAX_SERVER_WAIT` (or `at` itself if even that overflows).
pub(crate) fn later(at: Instant, wait: Duration) -> Instant {
    at.checked_add(wait)
        .or_else(|| at.checked_add(wait.min(MAX_SERVER_WAIT)))
        .unwrap_or(at)
}

/// How far apart two instants are, whichever comes first.
pub(crate) fn apart(a: Instant, b: Instant) -> Duration {
    a.saturating_duration_since(b)
        .max(b.saturating_duration_since(a))
}

/// Whether a hint or reset is a whole number of seconds (`Retry-After`'s
/// and delta resets' unit: rounded, it says less than a finer one).
pub(crate) fn is_whole_seconds(d: Duration) -> bool {
    d.subsec_nanos() == 0
}

/// The unit `d` was given in, as far as its value shows: a whole number of
/// milliseconds (not of seconds) was given in milliseconds (a Go duration,
/// `retry-after-ms`); anything else is taken as good to the second (a
/// delta in whole seconds, or an instant given to the second, as epochs,
/// HTTP-dates and most RFC 3339 stamps are, less a clock reading).
pub(crate) fn precision_of(d: Duration) -> Duration {
    match d.subsec_nanos() {
        nanos if nanos != 0 && nanos % 1_000_000 == 0 => Duration::from_millis(1),
        _ => Duration::from_secs(1),
    }
}

/// A float number of seconds as a wait: negative or `NaN` is zero, anything
/// beyond [`MAX_SERVER_WAIT`] (infinity included) is `MAX_SERVER_WAIT`.
pub(crate) fn wait_from_secs(secs: f64) -> Duration {
    // `f64::max` returns the other operand for NaN.
    Duration::try_from_secs_f64(secs.max(0.0))
        .unwrap_or(Duration::MAX)
        .min(MAX_SERVER_WAIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_saturates_instead_of_panicking() {
        let now = Instant::now();
        assert_eq!(
            later(now, Duration::from_secs(5)),
            now + Duration::from_secs(5)
        );
        assert_eq!(later(now, Duration::MAX), now + MAX_SERVER_WAIT);
    }

    #[test]
    fn apart_is_the_distance_either_way() {
        let now = Instant::now();
        let soon = now + Duration::from_millis(40);
        assert_eq!(apart(now, soon), Duration::from_millis(40));
        assert_eq!(apart(soon, now), Duration::from_millis(40));
        assert_eq!(apart(now, now), Duration::ZERO);
    }

    #[test]
    fn precision_is_the_unit_a_value_was_given_in() {
        assert_eq!(precision_of(Duration::from_secs(6)), Duration::from_secs(1));
        assert_eq!(precision_of(Duration::ZERO), Duration::from_secs(1));
        assert_eq!(
            precision_of(Duration::from_millis(1_500)),
            Duration::from_millis(1)
        );
        // An instant to the second less a clock reading.
        assert_eq!(
            precision_of(Duration::from_micros(1_500)),
            Duration::from_secs(1)
        );
    }

    #[test]
    fn float_seconds_are_total() {
        assert_eq!(wait_from_secs(0.25), Duration::from_millis(250));
        assert_eq!(wait_from_secs(-1.0), Duration::ZERO);
        assert_eq!(wait_from_secs(f64::NAN), Duration::ZERO);
        assert_eq!(wait_from_secs(f64::NEG_INFINITY), Duration::ZERO);
        assert_eq!(wait_from_secs(f64::INFINITY), MAX_SERVER_WAIT);
        assert_eq!(wait_from_secs(1e300), MAX_SERVER_WAIT);
        assert_eq!(wait_from_secs(86_399.0), Duration::from_secs(86_399));
    }
}
