//! The server's clock, located from its `Date` headers.
//!
//! `Date` states the server's time to the whole second. When the server's
//! clock disagrees with ours, a time it states (an HTTP-date `Retry-After`,
//! an epoch reset) is read against its `Date` (`signal/fields.rs`): read
//! alone, a response stamped `D` may have been stamped anywhere in
//! `[D, D + 1 s)`, so the wait `T − D` to its time `T` ends up to a second
//! late, and a reset read that way is known only to a second and its unit.
//!
//! Every response narrows that. Let `β` be the instant, on our clock, at
//! which the server's clock showed the second `D₀`. A response stamped `D`
//! that arrived at `c` was stamped no later than `c`, so the server showed
//! `D` no later than `c`, and `D₀` no later than `c − (D − D₀)`. It was
//! stamped no earlier than a round trip before it arrived, before the
//! server showed `D + 1 s`: `D₀` then came after `c − rtt − 1 s − (D − D₀)`.
//! Over all responses,
//!
//! ```text
//! max (cᵢ − rttᵢ − 1 s − (Dᵢ − D₀))  <  β  ≤  min (cᵢ − (Dᵢ − D₀))
//!            (earliest)                          (latest)
//! ```
//!
//! `latest` comes within a leg of `β` once one response was stamped early
//! in its second, which responses at many phases soon are. A time `T` on
//! the server's clock comes no later than `latest + (T − D₀)` on ours: a
//! wait measured against a response's `Date` from its arrival shortens by
//! that response's *slack*, `(c − (D − D₀)) − latest`, and stays a floor
//! of the server's own (it ends when the server's clock shows `T`, at the
//! latest). The width `latest − earliest`, at most a second, replaces
//! `Date`'s whole second in the precision of a reset read against it.
//!
//! `rtt` is the scope's smoothed round trip plus four deviations
//! (`round_trip.rs`); before one is measured, `earliest` is unknown and the
//! width is the whole second. Two clocks drift apart, at most
//! [`DRIFT`]: an older bound loosens at that rate. A response outside the
//! bounds (a clock stepped, another server behind the same name, a round
//! trip longer than its allowance) starts afresh from it: the bounds are
//! then its own, as good as `Date` alone, never worse.

use std::time::{Duration, Instant, SystemTime};

use super::round_trip::RoundTrip;
use super::time::later;

/// How fast two clocks may drift apart: 100 ppm, the widest tolerance of
/// the quartz oscillators computers keep time with (clocks disciplined by
/// NTP hold well under 1 ppm).
const DRIFT: f64 = 100e-6;

/// `Date`'s unit.
const SECOND: Duration = Duration::from_secs(1);

/// The bounds of the instant the server's clock showed `date`.
#[derive(Debug, Clone, Copy)]
struct Anchor {
    date: SystemTime,
    latest: Instant,
    earliest: Option<Instant>,
    /// When the bounds were last set (they loosen with time: [`DRIFT`]).
    at: Instant,
}

/// What a response's `Date` says once the server's clock is located.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Located {
    /// How much sooner than this response alone shows the server's clock
    /// reaches a time: a wait measured against its `Date` ends this much
    /// sooner.
    pub(crate) slack: Duration,
    /// How well the server's second boundaries are known (at most `Date`'s
    /// second).
    pub(crate) width: Duration,
}

impl Located {
    /// A wait measured against `Date`, shortened by the slack.
    pub(crate) fn wait(&self, wait: Duration) -> Duration {
        wait.saturating_sub(self.slack)
    }

    /// The precision of a time measured against `Date`: `Date`'s second in
    /// `precision` replaced by the width.
    pub(crate) fn precision(&self, precision: Duration) -> Duration {
        precision.saturating_sub(SECOND).saturating_add(self.width)
    }
}

/// The server's clock on ours (module docs).
#[derive(Debug, Clone, Default)]
pub(crate) struct ServerClock {
    anchor: Option<Anchor>,
}

impl ServerClock {
    /// A response stamped `date` arrived at `now`; `round_trip`: the
    /// scope's round trips so far.
    pub(crate) fn observe(
        &mut self,
        date: SystemTime,
        now: Instant,
        round_trip: &RoundTrip,
    ) -> Located {
        let allowance = round_trip
            .mean()
            .map(|mean| mean.saturating_add(round_trip.spread()));
        let own = Anchor {
            date,
            latest: now,
            earliest: allowance.and_then(|rtt| now.checked_sub(rtt.saturating_add(SECOND))),
            at: now,
        };
        let kept = self
            .anchor
            .and_then(|anchor| anchor.moved_to(date, now))
            .and_then(|anchor| anchor.narrowed_by(&own));
        let anchor = kept.unwrap_or(own);
        self.anchor = Some(anchor);
        Located {
            slack: now.saturating_duration_since(anchor.latest),
            width: anchor
                .earliest
                .map_or(SECOND, |earliest| {
                    anchor.latest.saturating_duration_since(earliest)
                })
                .min(SECOND),
        }
    }
}

impl Anchor {
    /// The same bounds for the second `date`, loosened by the drift since
    /// they were set; `None` when out of reach of our clock.
    fn moved_to(self, date: SystemTime, now: Instant) -> Option<Self> {
        let shift = |instant: Instant| match date.duration_since(self.date) {
            Ok(ahead) => instant.checked_add(ahead),
            Err(behind) => instant.checked_sub(behind.duration()),
        };
        let drift = now.saturating_duration_since(self.at).mul_f64(DRIFT);
        Some(Self {
            date,
            latest: later(shift(self.latest)?, drift),
            earliest: match self.earliest {
                Some(earliest) => Some(shift(earliest)?.checked_sub(drift)?),
                None => None,
            },
            at: now,
        })
    }

    /// Both bounds kept tightest, or `None` when `own` (the same second's
    /// bounds from one response) falls outside them.
    fn narrowed_by(self, own: &Self) -> Option<Self> {
        let outside = own.latest < self.earliest.unwrap_or(own.latest)
            || own.earliest.is_some_and(|earliest| earliest > self.latest);
        if outside {
            return None;
        }
        Some(Self {
            latest: self.latest.min(own.latest),
            earliest: self.earliest.max(own.earliest),
            ..*own
        })
    }
}

#[cfg(test)]
mod tests;
