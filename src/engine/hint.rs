//! A server's wait, and how finely it names the instant it ends at.

use std::time::Duration;

/// `Retry-After`'s unit, and `Date`'s.
pub(crate) const SECOND: Duration = Duration::from_secs(1);

/// A refusal's wait from the moment its response arrived, and its
/// *grain*: the unit it was given in. The instant it names lies within a
/// grain before its end (a server rounds up so as not to be early: a
/// whole-second `Retry-After: 1` may name any instant of the second
/// before it; `retry-after-ms: 250`, one of the millisecond before).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hint {
    pub(crate) wait: Duration,
    pub(crate) grain: Duration,
}

impl Hint {
    /// A wait as the server stated it: its grain is the coarsest decimal
    /// unit, from a nanosecond to a second, it is a multiple of (all a
    /// value shows of its unit: `2` seconds, `250` ms, `1.5` s).
    pub(crate) fn stated(wait: Duration) -> Self {
        Self {
            wait,
            grain: resolution(wait),
        }
    }

    /// A wait to an instant the server named in whole seconds of its own
    /// clock (an HTTP-date), located on ours (`server_clock.rs`): no longer
    /// whole seconds, but as coarse.
    pub(crate) fn to_whole_second(wait: Duration) -> Self {
        Self {
            wait,
            grain: SECOND,
        }
    }

    /// Whether it is rounded by up to a second, which cannot tell a
    /// bucket's next unit from a window's end.
    pub(crate) fn is_coarse(&self) -> bool {
        self.grain >= SECOND
    }

    /// Whether it names when the next unit is due: finer than a second, or
    /// at least two of its grains long, so that, rounded by up to a grain,
    /// the unit is surely not back within the first (`Retry-After: 90` of a
    /// bucket refilling a unit every 89.4 s; not `Retry-After: 1`, which a
    /// bucket 2 ms from its next unit says too).
    pub(crate) fn names_next_unit(&self) -> bool {
        !self.is_coarse() || self.wait >= self.grain.saturating_mul(2)
    }
}

/// The coarsest decimal unit, from a nanosecond to a second, that `wait`
/// is a multiple of: the finest grain its server's timer can have.
pub(crate) fn resolution(wait: Duration) -> Duration {
    let nanos = wait.as_nanos();
    let mut unit: u128 = 1;
    while unit < 1_000_000_000 && nanos.is_multiple_of(unit * 10) {
        unit *= 10;
    }
    Duration::from_nanos(unit as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stated_wait_is_as_fine_as_its_value_shows() {
        assert_eq!(resolution(Duration::from_secs(3)), SECOND);
        // A second at the coarsest: `20` is twenty seconds, not two tens.
        assert_eq!(resolution(Duration::from_secs(20)), SECOND);
        assert_eq!(
            resolution(Duration::from_nanos(1_500)),
            Duration::from_nanos(100)
        );
        assert!(Hint::stated(Duration::from_secs(2)).is_coarse());
        assert!(!Hint::stated(Duration::from_millis(2_500)).is_coarse());
        assert_eq!(
            Hint::stated(Duration::from_millis(250)).grain,
            Duration::from_millis(10)
        );
        let located = Hint::to_whole_second(Duration::from_millis(1_234));
        assert!(located.is_coarse());
        assert_eq!(located.wait, Duration::from_millis(1_234));
    }

    #[test]
    fn a_hint_names_the_next_unit_when_finer_than_a_second_or_two_grains_long() {
        let stated = |ms| Hint::stated(Duration::from_millis(ms));
        assert!(stated(998).names_next_unit());
        assert!(stated(1_500).names_next_unit());
        assert!(!stated(1_000).names_next_unit());
        assert!(stated(2_000).names_next_unit());
        assert!(stated(90_000).names_next_unit());
        assert!(!Hint::to_whole_second(Duration::from_millis(1_999)).names_next_unit());
        assert!(Hint::to_whole_second(Duration::from_millis(2_000)).names_next_unit());
    }
}
