//! The rate, burst and window learned from refusals, for a quota that
//! states no policy (see the parent module's docs, point 2).
//!
//! Two measures, each an upper bound of the server's true one:
//! - **the rate**, between two hinted refusals: every success in between
//!   spent a unit refilled in between, so `successes / span` (span between
//!   the instants the hints pointed to), and from the first refusal alone
//!   one unit per hint when the hint names the next unit's instant (finer
//!   than a second, or at least two of its grains long: `Hint::
//!   names_next_unit`), it promises that unit only; `successes / hint` for
//!   a coarser one (`Retry-After: 1` of a bucket 2 ms from its next unit,
//!   or of a window's end: the burst once per hint);
//!
//! Each instant a hint points to is known only to its precision. The
//! server reads its own clock to some grain `g` (a timer of 10 ms, a
//! header in whole milliseconds or seconds) and states the wait in it,
//! rounded one way (up, down or to the nearest), so the unit is back
//! within a grain of `received + hint`, off the same way at both ends of a
//! span (one server, one rounding); and `received` differs from the
//! server's instant by the answer's leg, which varies between two answers
//! by up to the measured round trip's spread `s` (`round_trip.rs`). A span
//! between two hints' ends is then known to `± (g + s)`, and the rate
//! measured over it is taken at the slow end of what the span allows:
//!
//! ```text
//! rate = successes / (span + g + s)
//! ```
//!
//! Paced at the exact ratio, a client errs fast as often as slow, and a
//! unit's time too fast over a measurement is a refusal (at 20 per second
//! with a 10 ms timer, 4 successes over 195 ms read 20.5 per second: 2.5 %
//! fast, refused once every two seconds). The grain is measured from the
//! hints themselves: a server's timer shows in every wait it states (a
//! 10 ms timer states only multiples of 10 ms), so `g` is the finest
//! decimal unit (1 ns to 1 s) that every hint seen so far is a multiple
//! of, as far as any one hint shows (one hint of 20 ms says 10 ms; one of
//! 37 ms, 1 ms, for good), each hint's grain (`engine/hint.rs`; an
//! HTTP-date located on our clock is a second's, whatever its value). The
//! error shrinks as the span grows: later
//! refusals extend the same measurement.
//! - **the window's length** (a *cycle*): a burst that ran out came back
//!   whole no later than the instant its refusal's hint pointed to, or,
//!   for a bare refusal, than the next success. The span from the burst's
//!   first success to that instant bounds the window, since the window
//!   opened no earlier than that first success was sent. A bound found by
//!   a bare refusal's search is as loose as the search's last pause; a
//!   retry it saw refused bounds the window from below, and a probe per
//!   cycle narrows the interval (`refine.rs`). Bursts that did
//!   not spend [`BURST_SPENT`] of the capacity say nothing of a window (a
//!   bucket's hint is often the time to its next unit only). That bound
//!   holds for a window only: after a bare or whole-second refusal the
//!   success at the pause's end shows one unit back, and a bucket's burst
//!   is not. So the burst's return is shown, not assumed
//!   ([`Learned::coarse_return`]): one send more in flight per success
//!   since the refusal (slow start: two more per success, doubling each
//!   round trip), until the whole burst is back. A bucket then refuses one
//!   send, which starts the trickle below, not every send in flight.
//!
//! - **a window shown by its return**: a precise hint that ends a spent
//!   burst is at least the time to the next unit, and a bucket refills no
//!   faster than one unit per hint `h` (its next unit is at most one
//!   unit's time away), so after the hint's end `a` it has given at most
//!   `1 + (t − a + g + s) / h` units by `t`. More successes than that (and
//!   most of the burst) are a window's (or a log's) return: the burst is
//!   paced once per cycle from then on, with no second refusal to show it
//!   (a window of 5 per 1 s opened by the first request, as Google's
//!   quota, was refused once more a fifth of a second into its second
//!   window). The cycle then bounds the window from below only (a clock's
//!   window whose first was partial is longer): once the whole burst is
//!   back, the hint's end is a boundary, the next cycle opens with one send
//!   alone, and a refusal of it at a precise hint gives the window's length
//!   as the span between the two boundaries instead of a trickle. A
//!   success a cycle past the boundary confirms the cycle.
//!
//! A learned cycle is refused only when the burst does not come back whole
//! within it: a sliding window counter (its previous window's count weighs
//! on the next one, so a burst at a window's start is refused partway),
//! a window longer than the cycle measured, or others spending the quota.
//! Bursts are wrong for all three: from then on the client *trickles*,
//! one unit at a time at the rate the cycle sustains less one unit
//! ([`Trickle`]), halved by each refusal after that (down to one unit per
//! cycle) and grown back by one burst's share of it per success (AIMD, as
//! the sharing rule does). A trickle refused kept the server busy since
//! the measurement began: the rate measured from then to this refusal is
//! what the server sustains, and the trickle grows back no further than
//! its fast end, `successes / (span − g − s)`, nor than the cycle
//! sustains. A bare refusal measures too: the quota was empty then (less
//! than a unit, where a hint's end holds one), so a span from one may
//! have given one unit more, `(successes + 1) / (span − s)`; without it,
//! a bucket behind bare 429s, read as a cycle of its burst per second,
//! grew back to twice its rate after every halving. Only a span of a
//! cycle or more measures (a window gives its units once per cycle, not
//! at a rate within it), and none within its own uncertainty. Each
//! refusal sets that ceiling from the measurement it ends, so a server
//! that speeds up again is followed up to the cycle's pace. Without that
//! ceiling a bucket whose first hint was its next unit's (16 s), read as
//! a cycle of its whole burst (45), grew
//! back to 2.7 units a second after every success, 43 times its rate:
//! one refusal per success. The successes a trickle paced are no burst
//! either: a measurement restarted past the horizon keeps the capacity.

use std::time::{Duration, Instant};

use super::super::hint::{Hint, SECOND};
use super::super::time::later;
use super::{BURST_SPENT, MEASURE_HORIZON, secs};

/// Where the current measurement starts: the instant a refusal's hint
/// pointed to, and the successes counted since.
#[derive(Debug, Clone, Copy)]
struct Anchor {
    at: Instant,
    successes: u64,
    /// It is a bare refusal's instant (the quota empty), not a hint's end
    /// (one unit back).
    bare: bool,
}

/// Uniform pacing once a learned cycle's burst was refused (module docs).
#[derive(Debug, Clone, Copy)]
struct Trickle {
    /// Units per second now.
    rate: f64,
    /// The most it grows back to: the fast end of the rate measured
    /// between its last two refusals, at most `top`.
    ceiling: f64,
    /// What the cycle sustains: `(burst − 1) / cycle`.
    top: f64,
    /// The least it halves to: one unit per cycle (refused all along, a
    /// quota still gives that much back; lower, a wait would outgrow any
    /// deadline and the scope would never learn it recovered).
    least: f64,
}

/// What refusals taught about the quota.
#[derive(Debug, Clone, Default)]
pub(super) struct Learned {
    rate: Option<f64>,
    /// The finest decimal unit every hint so far was a multiple of: the
    /// grain of the server's timer (module docs).
    grain: Option<Duration>,
    capacity: Option<f64>,
    anchor: Option<Anchor>,
    successes_since_throttle: u64,
    period: Option<Duration>,
    /// The first success since the last refusal: when the burst began.
    burst_start: Option<Instant>,
    /// A burst a bare refusal ended, until the next success bounds its cycle.
    refused_burst: Option<Instant>,
    /// The last refusal measured the capacity (the burst before it).
    capacity_from_last_refusal: bool,
    trickle: Option<Trickle>,
    /// A spent burst a precise hint ended, until its units come back
    /// faster than one per hint (a window) or the next refusal.
    returning: Option<Returning>,
    /// Where that hint pointed to, once its burst came back whole: a
    /// boundary of the window.
    boundary: Option<Instant>,
    /// When a bare or whole-second refusal ended a spent burst, until the
    /// burst is back whole or the next refusal: its return is shown, not
    /// assumed (module docs).
    coarse_return: Option<Instant>,
}

/// The end of a precise hint that ended a spent burst, and what a bucket
/// could give back after it (module docs: a window shown at its return).
#[derive(Debug, Clone, Copy)]
struct Returning {
    /// Where the hint pointed to.
    at: Instant,
    /// The hint itself: a bucket refills no faster than one unit per hint
    /// (the hint is the time to its next unit, at most one unit's time).
    hint: Duration,
    /// How far `at` may be off: the timer's grain and the round trip's
    /// spread.
    margin: Duration,
}

impl Returning {
    /// Whether `successes` since the refusal, the last answered at `now`,
    /// are more than a bucket refilling one unit per hint after `at` gives.
    fn outran_a_bucket(&self, now: Instant, successes: u64) -> bool {
        let since = secs(
            now.saturating_duration_since(self.at)
                .saturating_add(self.margin),
        );
        successes as f64 > 1.0 + since / secs(self.hint).max(f64::EPSILON)
    }
}

impl Learned {
    /// Units per second, once a refusal (with a hint) or two told, or a
    /// window was measured (its burst over its length).
    pub(super) fn rate(&self) -> Option<f64> {
        self.rate
    }

    /// The burst: the successes before the first refusal.
    pub(super) fn capacity(&self) -> Option<f64> {
        self.capacity
    }

    /// The rate to trickle at, once a learned cycle's burst was refused
    /// (module docs).
    pub(super) fn trickle(&self) -> Option<f64> {
        self.trickle.map(|t| t.rate)
    }

    /// A refusal while the learned cycle (or the trickle) paced the quota:
    /// trickle at what the cycle sustains less one unit, or at half the
    /// trickle's rate. (A counter sustains one unit less per window than
    /// its limit: its last unit falls due at the very boundary.)
    pub(super) fn refused_in_cycle(&mut self, now: Instant, hint: Option<Hint>, spread: Duration) {
        // A window whose burst came back whole at a precise hint's end,
        // refused again at a precise hint: both hints end at its
        // boundaries, so it is longer than the cycle measured (a clock's
        // window, whose first was partial), and its length is their span.
        // (A zero hint shows no grain of its own: it has the timer's.)
        let precise = |h: &Hint| {
            h.names_next_unit() || (h.wait.is_zero() && self.grain.is_some_and(|g| g < SECOND))
        };
        let boundary = self.boundary.take();
        if let (Some(from), Some(h)) = (boundary, hint.filter(precise))
            && self.trickle.is_none()
        {
            let to = later(now, h.wait);
            if to > from {
                self.period = Some(to - from);
                self.boundary = Some(to);
                return;
            }
        }
        let most = self.sustained_at_most(now, hint, spread);
        if let Some(trickle) = self.trickle.as_mut() {
            // Refused while trickling: we kept the server busy since the
            // last refusal, so the rate measured between refusals is what
            // it sustains, and the trickle grows back no further.
            if let Some(most) = most {
                trickle.ceiling = most.max(trickle.least).min(trickle.top);
            }
            trickle.rate = (trickle.rate / 2.0).min(trickle.ceiling).max(trickle.least);
            return;
        }
        let (Some(burst), Some(period)) = (self.capacity, self.period) else {
            return;
        };
        let cycle = secs(period).max(f64::EPSILON);
        let top = (burst - 1.0).max(0.5) / cycle;
        let least = top.min(1.0 / cycle);
        self.trickle = Some(Trickle {
            rate: top,
            ceiling: top,
            top,
            least,
        });
    }

    /// The most the server can have sustained from the measurement's start
    /// to a refusal at `now` with `hint` (module docs): `None` while that
    /// span is within its own uncertainty, or shorter than the cycle (a
    /// window's units come back once per cycle, not at a rate within it).
    fn sustained_at_most(&self, now: Instant, hint: Option<Hint>, spread: Duration) -> Option<f64> {
        let anchor = self.anchor?;
        let stated = hint.filter(|h| !h.wait.is_zero());
        let grain = match (self.grain, stated) {
            (Some(g), Some(h)) => g.min(h.grain),
            (g, h) => g.or(h.map(|h| h.grain)).unwrap_or(Duration::ZERO),
        };
        let end = later(now, stated.map_or(Duration::ZERO, |h| h.wait));
        let span = end.saturating_duration_since(anchor.at);
        if span > MEASURE_HORIZON || span < self.period? {
            return None;
        }
        let margin = secs(grain.saturating_add(spread));
        let span = secs(span);
        // The server gave the successes counted, plus what it held at the
        // span's end less what it held at its start: one unit at a hint's
        // end, less than one at a bare refusal's. A span from a bare
        // refusal may have given one unit more.
        let unknown_start = if anchor.bare { 1.0 } else { 0.0 };
        let successes = (anchor.successes + self.successes_since_throttle) as f64;
        (span > margin).then(|| (successes + unknown_start) / (span - margin))
    }

    /// Successes since the last refusal.
    pub(super) fn successes_since_throttle(&self) -> u64 {
        self.successes_since_throttle
    }

    /// The first success since the last refusal.
    pub(super) fn burst_start(&self) -> Option<Instant> {
        self.burst_start
    }

    /// A learned window's length: the shortest cycle measured (module docs).
    pub(super) fn period(&self) -> Option<Duration> {
        self.period
    }

    /// Whether the burst since the last refusal spent most of the capacity.
    fn burst_spent(&self) -> bool {
        self.capacity
            .is_some_and(|c| self.successes_since_throttle as f64 >= c * BURST_SPENT)
    }

    /// Whether the learned cycle is only a lower bound of the window's
    /// length (a window's burst came back whole at a boundary, and no
    /// success a cycle later showed the next one):
    /// `Some(the cycle's end after that boundary)` then.
    pub(super) fn unconfirmed_cycle_end(&self) -> Option<Instant> {
        Some(later(self.boundary?, self.period?))
    }

    /// While a burst a bare or whole-second refusal ended is coming back:
    /// when it was refused, and the successes since.
    pub(super) fn coarse_return(&self) -> Option<(Instant, u64)> {
        Some((self.coarse_return?, self.successes_since_throttle))
    }

    /// While a burst a bare or whole-second refusal ended is awaited back
    /// and nothing came back since: the span from its first success to
    /// `now`, which a refusal now shows to be shorter than the cycle.
    pub(super) fn searched_span(&self, now: Instant) -> Option<Duration> {
        let start = self
            .refused_burst
            .filter(|_| self.successes_since_throttle == 0)?;
        Some(now.saturating_duration_since(start))
    }

    /// Whether a spent burst's return after a precise hint is awaited.
    pub(super) fn awaiting_return(&self) -> bool {
        self.returning.is_some()
    }

    /// Whether the whole burst came back since the last refusal.
    fn burst_back(&self) -> bool {
        self.capacity
            .is_some_and(|c| self.successes_since_throttle as f64 >= c)
    }

    fn cycle(&mut self, span: Duration) {
        if span.is_zero() {
            return;
        }
        self.period = Some(self.period.map_or(span, |known| known.min(span)));
    }

    /// A probe admitted `span` after the send it replaced: the cycle is no
    /// longer than that (`refine.rs`).
    pub(super) fn narrowed(&mut self, span: Duration) {
        self.cycle(span);
    }

    /// One more success at `now`; `true` when it confirmed the cycle of a
    /// burst a bare or whole-second refusal ended (the quota comes back in
    /// windows of [`period`](Self::period) from then on).
    pub(super) fn on_success(&mut self, now: Instant, sent_before_refusal: bool) -> bool {
        if sent_before_refusal {
            // Answered after the refusal, but part of the burst it ended
            // (concurrent requests): the burst was one larger, and nothing
            // came back yet.
            if self.capacity_from_last_refusal {
                self.capacity = self.capacity.map(|c| c + 1.0);
            }
            return false;
        }
        self.successes_since_throttle += 1;
        // Back faster than a bucket gives (and most of the burst): a
        // window, whose boundary the hint's end was once all of it is back.
        let returned = self.burst_spent()
            && self
                .returning
                .is_some_and(|r| r.outran_a_bucket(now, self.successes_since_throttle));
        if self.burst_back() {
            self.coarse_return = None;
        }
        if returned && self.burst_back() {
            self.boundary = self.returning.take().map(|r| r.at);
        } else if let (Some(boundary), Some(period)) = (self.boundary, self.period)
            && now >= later(boundary, period)
        {
            // A success a cycle past the boundary: the window is no longer
            // than the cycle, which bounds it from below too.
            self.boundary = None;
        }
        if let (Some(trickle), Some(burst)) = (self.trickle.as_mut(), self.capacity) {
            trickle.rate = (trickle.rate + trickle.ceiling / burst.max(1.0)).min(trickle.ceiling);
        }
        let measured = match self.refused_burst.take() {
            Some(start) => {
                self.cycle(now.saturating_duration_since(start));
                self.burst_start = Some(now);
                self.period.is_some()
            }
            None => {
                self.burst_start.get_or_insert(now);
                false
            }
        };
        if measured
            && self.rate.is_none()
            && let (Some(capacity), Some(period)) = (self.capacity, self.period)
        {
            self.rate = Some(capacity / secs(period).max(f64::EPSILON));
        }
        measured || returned
    }

    /// The grain of the server's timer, as its hints have shown it (module
    /// docs); zero before any hint.
    pub(super) fn grain(&self) -> Duration {
        self.grain.unwrap_or(Duration::ZERO)
    }

    /// A refusal at `now`, with the server's hint if any (module docs);
    /// `readings`: the server reports its `remaining`; `spread`: how much
    /// two round trips differ by chance (`round_trip.rs`).
    pub(super) fn on_throttle(
        &mut self,
        now: Instant,
        hint: Option<Hint>,
        readings: bool,
        spread: Duration,
    ) {
        // "Come back in 0 s" says nothing of when the units return.
        let stated = hint.filter(|h| !h.wait.is_zero());
        if let Some(h) = stated {
            self.grain = Some(self.grain.map_or(h.grain, |g| g.min(h.grain)));
        }
        let coarse = stated.is_none_or(|h| !h.names_next_unit());
        let hint = stated.map(|h| h.wait);
        // How far each end of a span may be off (module docs).
        let margin = secs(self.grain().saturating_add(spread));
        let next_unit_at = later(now, hint.unwrap_or(Duration::ZERO));
        // A refusal with no measurement under way (or one too old) starts
        // one: the burst since the last refusal is the capacity.
        let fresh = self.anchor.is_none_or(|anchor| {
            next_unit_at.saturating_duration_since(anchor.at) > MEASURE_HORIZON
        });
        // Successes paced one at a time (a trickle) are no burst.
        self.capacity_from_last_refusal =
            fresh && self.successes_since_throttle > 0 && self.trickle.is_none();
        if self.capacity_from_last_refusal {
            self.capacity = Some(self.successes_since_throttle as f64);
        }
        // Refusals of the same burst (requests in flight) keep its return.
        if self.successes_since_throttle > 0 {
            self.returning = None;
            self.coarse_return = None;
        }
        if let Some(start) = self.burst_start.take().filter(|_| self.burst_spent()) {
            if let Some(h) = hint {
                self.cycle(later(now, h).saturating_duration_since(start));
                if !coarse {
                    self.returning = Some(Returning {
                        at: next_unit_at,
                        hint: h,
                        margin: self.grain().saturating_add(spread),
                    });
                }
            }
            // A bare refusal, or a hint within two of its seconds (too coarse to tell a
            // bucket's next unit from a window's end, and paced alike: the
            // burst once per hint): the next success confirms the window.
            if coarse {
                self.refused_burst = Some(start);
                self.coarse_return = Some(now);
            }
        }
        let successes = std::mem::take(&mut self.successes_since_throttle);
        match self.anchor.as_mut() {
            Some(anchor) if !fresh => {
                anchor.successes += successes;
                // The learned rate is measured to a hint's end only: a
                // span to a bare refusal (the quota empty then, up to a
                // unit less than at a hint's end) sets the trickle's
                // ceiling only (`Self::sustained_at_most`).
                if hint.is_some() {
                    let span = secs(next_unit_at.saturating_duration_since(anchor.at));
                    if span > 0.0 && anchor.successes > 0 {
                        self.rate = Some(anchor.successes as f64 / (span + margin));
                    }
                }
            }
            _ => {
                self.anchor = Some(Anchor {
                    at: next_unit_at,
                    successes: 0,
                    bare: hint.is_none(),
                });
                let Some(hint) = hint else {
                    return;
                };
                // A server that reports `remaining` will say how many came
                // back: until then, the hint promises one unit, not the
                // burst (concurrent requests would all go at its end).
                let units = if readings {
                    1
                } else if coarse {
                    successes
                } else {
                    successes.min(1)
                };
                if units > 0 {
                    // The hint is not zero (filtered above).
                    self.rate = Some(units as f64 / secs(hint));
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
            learned.on_success(t0, false);
        }
        // 20 successes, then refused: come back in 1 s.
        learned.on_throttle(t0, Some(Hint::stated(ms(1000))), false, Duration::ZERO);
        assert_eq!(learned.rate(), Some(20.0));
        assert_eq!(learned.capacity(), Some(20.0));
        for _ in 0..10 {
            learned.on_success(t0, false);
        }
        // 10 more between the instants the two hints pointed to, 1 s apart,
        // each known to the 100 ms its hints show: at most 10 per 1.1 s.
        learned.on_throttle(
            t0 + ms(1900),
            Some(Hint::stated(ms(100))),
            false,
            Duration::ZERO,
        );
        assert_eq!(learned.rate(), Some(10.0 / 1.1));
        assert_eq!(learned.capacity(), Some(20.0));
        // The burst came back within 1 s once: the window is 1 s, not 2.
        assert_eq!(learned.period(), Some(ms(1000)));
    }

    #[test]
    fn a_rate_between_hints_allows_for_the_timer_and_the_round_trip() {
        let t0 = Instant::now();
        let mut learned = Learned::default();
        for _ in 0..30 {
            learned.on_success(t0, false);
        }
        // A server with a 10 ms timer: its hints show only multiples of it.
        learned.on_throttle(t0, Some(Hint::stated(ms(20))), false, ms(8));
        assert_eq!(learned.grain(), ms(10));
        for _ in 0..4 {
            learned.on_success(t0, false);
        }
        // 4 units over 195 ms between the hints' ends, each end known to
        // the timer's 10 ms and the round trip's 8 ms of spread.
        learned.on_throttle(t0 + ms(185), Some(Hint::stated(ms(30))), false, ms(8));
        assert_eq!(learned.rate(), Some(4.0 / (0.195 + 0.018)));
        // One hint finer than the timer seemed says it is finer.
        learned.on_throttle(t0 + ms(300), Some(Hint::stated(ms(37))), false, ms(8));
        assert_eq!(learned.grain(), ms(1));
    }

    #[test]
    fn a_bare_refusal_ends_a_cycle_at_the_next_fresh_success() {
        let t0 = Instant::now();
        let mut learned = Learned::default();
        for i in 0..20 {
            assert!(!learned.on_success(t0 + ms(i), false));
        }
        learned.on_throttle(t0 + ms(20), None, false, Duration::ZERO);
        assert_eq!(learned.capacity(), Some(20.0));
        // A request sent before the refusal, answered after it: the burst
        // was 21, and it measures no cycle.
        assert!(!learned.on_success(t0 + ms(21), true));
        assert_eq!(learned.capacity(), Some(21.0));
        assert_eq!(learned.period(), None);
        // The first success sent after it bounds the cycle, from the
        // burst's first success.
        assert!(learned.on_success(t0 + ms(1030), false));
        assert_eq!(learned.period(), Some(ms(1030)));
        assert_eq!(learned.rate(), Some(21.0 / 1.030));
        // A burst that did not spend half the capacity measures nothing.
        learned.on_throttle(t0 + ms(1040), None, false, Duration::ZERO);
        assert!(!learned.on_success(t0 + ms(1500), false));
        assert_eq!(learned.period(), Some(ms(1030)));
    }

    #[test]
    fn a_whole_second_hint_bounds_the_cycle_and_a_precise_one_waits_for_another() {
        let t0 = Instant::now();
        let mut coarse = Learned::default();
        let mut precise = Learned::default();
        for learned in [&mut coarse, &mut precise] {
            for i in 0..20 {
                learned.on_success(t0 + ms(i), false);
            }
        }
        coarse.on_throttle(
            t0 + ms(20),
            Some(Hint::stated(ms(1000))),
            false,
            Duration::ZERO,
        );
        precise.on_throttle(
            t0 + ms(20),
            Some(Hint::stated(ms(980))),
            false,
            Duration::ZERO,
        );
        // Both bound the cycle from the burst's start to the hint's end…
        assert_eq!(coarse.period(), Some(ms(1020)));
        assert_eq!(precise.period(), Some(ms(1000)));
        // …but only the whole-second one is confirmed by the next success.
        assert!(coarse.on_success(t0 + ms(1100), false));
        assert!(!precise.on_success(t0 + ms(1100), false));
        assert_eq!(
            coarse.period(),
            Some(ms(1020)),
            "the shortest bound is kept"
        );
    }

    #[test]
    fn a_burst_back_faster_than_one_unit_per_hint_is_a_window() {
        let t0 = Instant::now();
        let burst = |learned: &mut Learned| {
            for i in 0..20 {
                learned.on_success(t0 + ms(i), false);
            }
            // The next unit in 980 ms: the hint ends at t0 + 1 s.
            learned.on_throttle(t0 + ms(20), Some(Hint::stated(ms(980))), false, ms(2));
        };
        let mut window = Learned::default();
        burst(&mut window);
        // Another request of the burst, in flight, refused too: the same
        // return is awaited.
        window.on_throttle(t0 + ms(21), Some(Hint::stated(ms(979))), false, ms(2));
        // Half the burst back within 100 ms of the hint's end: no bucket
        // refilling one unit per 980 ms gives that.
        for i in 0..9 {
            assert!(!window.on_success(t0 + ms(1050 + i), false), "{i}");
        }
        assert!(window.on_success(t0 + ms(1059), false));
        assert_eq!(window.unconfirmed_cycle_end(), None);
        for i in 10..20 {
            window.on_success(t0 + ms(1050 + i), false);
        }
        // All of it back: the hint's end was a boundary, and the cycle
        // (1 s) bounds the window from below only.
        assert_eq!(window.unconfirmed_cycle_end(), Some(t0 + ms(2000)));
        // Refused a cycle later, a precise hint to 2.5 s: a boundary too,
        // the window is their span.
        window.refused_in_cycle(t0 + ms(2000), Some(Hint::stated(ms(500))), Duration::ZERO);
        assert_eq!(window.trickle(), None);
        assert_eq!(window.period(), Some(ms(1500)));
        assert_eq!(window.unconfirmed_cycle_end(), Some(t0 + ms(4000)));
        // A success a cycle past that boundary confirms the length.
        window.on_success(t0 + ms(3990), false);
        assert_eq!(window.unconfirmed_cycle_end(), Some(t0 + ms(4000)));
        window.on_success(t0 + ms(4001), false);
        assert_eq!(window.unconfirmed_cycle_end(), None);

        // A bucket refilling one unit per hint never outruns it.
        let mut bucket = Learned::default();
        burst(&mut bucket);
        for i in 0..20 {
            assert!(!bucket.on_success(t0 + ms(1000 + 980 * i), false), "{i}");
        }
        assert_eq!(bucket.unconfirmed_cycle_end(), None);
    }

    #[test]
    fn a_zero_hint_at_a_boundary_has_the_timers_grain() {
        let t0 = Instant::now();
        // A window of 20 whose return showed: its hint's end a boundary.
        let window = |hint: Duration| {
            let mut learned = Learned::default();
            for i in 0..20 {
                learned.on_success(t0 + ms(i), false);
            }
            learned.on_throttle(t0 + ms(20), Some(Hint::stated(hint)), false, ms(1));
            let end = t0 + ms(20) + hint;
            for i in 0..20 {
                learned.on_success(end + ms(1 + i), false);
            }
            assert!(learned.unconfirmed_cycle_end().is_some());
            learned
        };
        let zero = Some(Hint::stated(Duration::ZERO));
        // Hints in milliseconds: "now" is a boundary too, to the ms.
        let mut fine = window(ms(980));
        fine.refused_in_cycle(t0 + ms(2500), zero, Duration::ZERO);
        assert_eq!(fine.trickle(), None);
        assert_eq!(fine.period(), Some(ms(1500)));
        // Hints in whole seconds: "0" is anywhere in the next second.
        let mut coarse = window(ms(2000));
        coarse.refused_in_cycle(t0 + ms(4500), zero, Duration::ZERO);
        assert!(coarse.trickle().is_some());
    }

    #[test]
    fn a_server_reporting_remaining_is_promised_one_unit_by_a_hint() {
        let t0 = Instant::now();
        let mut learned = Learned::default();
        for _ in 0..20 {
            learned.on_success(t0, false);
        }
        learned.on_throttle(t0, Some(Hint::stated(ms(50))), true, Duration::ZERO);
        assert_eq!(learned.rate(), Some(20.0));
        assert_eq!(learned.capacity(), Some(20.0));
    }

    #[test]
    fn a_refused_cycle_trickles_at_its_burst_less_one() {
        let t0 = Instant::now();
        let mut learned = Learned::default();
        for i in 0..20 {
            learned.on_success(t0 + ms(i), false);
        }
        learned.on_throttle(t0 + ms(20), None, false, Duration::ZERO);
        // The cycle: 500 ms from the burst's first success to the next.
        assert!(learned.on_success(t0 + ms(500), false));
        assert_eq!(learned.period(), Some(ms(500)));
        assert_eq!(learned.trickle(), None);
        learned.refused_in_cycle(t0, None, Duration::ZERO);
        assert_eq!(learned.trickle(), Some(19.0 / 0.5));
        learned.refused_in_cycle(t0, None, Duration::ZERO);
        assert_eq!(learned.trickle(), Some(19.0));
        // Each success gives back a burst's share of the ceiling.
        learned.on_success(t0 + ms(600), false);
        assert_eq!(learned.trickle(), Some(19.0 + 38.0 / 20.0));
        // Never below one unit per cycle.
        for _ in 0..10 {
            learned.refused_in_cycle(t0, None, Duration::ZERO);
        }
        assert_eq!(learned.trickle(), Some(2.0));
        // Nothing learned, nothing to trickle at.
        let mut blank = Learned::default();
        blank.refused_in_cycle(t0, None, Duration::ZERO);
        assert_eq!(blank.trickle(), None);
    }

    #[test]
    fn a_refused_trickle_grows_back_no_further_than_measured_and_keeps_its_burst() {
        // A slow bucket (one unit per 16 s) behind bare refusals: its burst
        // of 45 and the success 16 s after the refusal read as a 16 s cycle
        // of 45.
        let t0 = Instant::now();
        let mut learned = Learned::default();
        for _ in 0..45 {
            learned.on_success(t0, false);
        }
        learned.on_throttle(t0, None, false, Duration::ZERO);
        assert!(learned.on_success(t0 + ms(16_000), false));
        // The next send is refused: trickle at the cycle's burst less one.
        learned.refused_in_cycle(t0 + ms(16_010), None, Duration::ZERO);
        learned.on_throttle(t0 + ms(16_010), None, false, Duration::ZERO);
        assert_eq!(learned.trickle(), Some(44.0 / 16.0));
        let hint = |s: u64| Some(Hint::stated(ms(s * 1000)));
        learned.on_success(t0 + ms(17_000), false);
        learned.on_success(t0 + ms(18_000), false);
        // Refused again, 2 s from the next unit. Three successes between
        // the first bare refusal and the hint's end, 20 s apart, the
        // hint's end known to a second: the server held less than a unit
        // at the refusal and one at the hint's end, so it sustained 4/19
        // per second at the most.
        learned.refused_in_cycle(t0 + ms(18_000), hint(2), Duration::ZERO);
        learned.on_throttle(t0 + ms(18_000), hint(2), false, Duration::ZERO);
        assert_eq!(learned.trickle(), Some(4.0 / 19.0));
        for _ in 0..20 {
            learned.on_success(t0 + ms(33_000), false);
        }
        assert_eq!(
            learned.trickle(),
            Some(4.0 / 19.0),
            "no further than measured"
        );
        // A refusal past the horizon measures nothing (the trickle halves,
        // its ceiling stays) and starts a new measurement, but the
        // trickled successes before it are no burst.
        learned.refused_in_cycle(t0 + ms(100_000), hint(10), Duration::ZERO);
        learned.on_throttle(t0 + ms(100_000), hint(10), false, Duration::ZERO);
        assert_eq!(learned.trickle(), Some(2.0 / 19.0));
        assert_eq!(learned.capacity(), Some(45.0));
        // Within a cycle of its start, a measurement says nothing of a
        // rate either: the trickle, grown back to its ceiling, halves, and
        // the ceiling stays.
        for _ in 0..30 {
            learned.on_success(t0 + ms(110_000), false);
        }
        learned.refused_in_cycle(t0 + ms(114_000), hint(1), Duration::ZERO);
        learned.on_throttle(t0 + ms(114_000), hint(1), false, Duration::ZERO);
        assert_eq!(learned.trickle(), Some(2.0 / 19.0));
        for _ in 0..40 {
            learned.on_success(t0 + ms(115_000), false);
        }
        assert_eq!(learned.trickle(), Some(4.0 / 19.0));
        // A cycle on, it finds the server faster again (70 successes in
        // the 18 s between hint ends, each known to a second): the ceiling
        // rises to it, no further than the cycle sustains.
        for _ in 0..10 {
            learned.on_success(t0 + ms(120_000), false);
        }
        learned.refused_in_cycle(t0 + ms(127_000), hint(1), Duration::ZERO);
        learned.on_throttle(t0 + ms(127_000), hint(1), false, Duration::ZERO);
        for _ in 0..200 {
            learned.on_success(t0 + ms(128_000), false);
        }
        assert_eq!(learned.trickle(), Some(44.0 / 16.0));
    }

    #[test]
    fn the_horizon_bounds_a_measurement() {
        let t0 = Instant::now();
        let mut learned = Learned::default();
        for _ in 0..10 {
            learned.on_success(t0, false);
        }
        learned.on_throttle(t0, Some(Hint::stated(ms(1000))), false, Duration::ZERO);
        assert_eq!(learned.rate(), Some(10.0));
        // Refused again with the hint pointing exactly the horizon after
        // the first: still one measurement, 15 units over 30 s, each end
        // known to its hint's whole second.
        for _ in 0..15 {
            learned.on_success(t0, false);
        }
        let at = t0 + MEASURE_HORIZON;
        learned.on_throttle(at, Some(Hint::stated(ms(1000))), false, Duration::ZERO);
        assert_eq!(learned.rate(), Some(15.0 / 31.0));
        assert_eq!(learned.capacity(), Some(10.0));
        // A hint pointing where the measurement started measures nothing.
        let mut same = Learned::default();
        same.on_success(t0, false);
        same.on_throttle(t0, Some(Hint::stated(ms(1000))), false, Duration::ZERO);
        same.on_success(t0, false);
        same.on_throttle(
            t0 + ms(500),
            Some(Hint::stated(ms(500))),
            false,
            Duration::ZERO,
        );
        assert_eq!(same.rate(), Some(1.0));
        // A hinted refusal beyond the horizon starts afresh: its hint, two
        // seconds, names the next unit's instant: one unit per 2 s.
        for _ in 0..4 {
            learned.on_success(at, false);
        }
        learned.on_throttle(
            at + MEASURE_HORIZON + ms(2000),
            Some(Hint::stated(ms(2000))),
            false,
            Duration::ZERO,
        );
        assert_eq!(learned.rate(), Some(0.5));
        assert_eq!(learned.capacity(), Some(4.0));
        // One of a second is too coarse for that: the burst once per hint.
        let mut coarse = Learned::default();
        for _ in 0..4 {
            coarse.on_success(at, false);
        }
        coarse.on_throttle(at, Some(Hint::stated(ms(1000))), false, Duration::ZERO);
        assert_eq!(coarse.rate(), Some(4.0));
        // A bare refusal beyond it with nothing spent keeps the capacity.
        let late = at + 3 * MEASURE_HORIZON;
        learned.on_throttle(late, None, false, Duration::ZERO);
        learned.on_throttle(late + 2 * MEASURE_HORIZON, None, false, Duration::ZERO);
        assert_eq!(learned.capacity(), Some(4.0));
    }

    #[test]
    fn refusals_beyond_the_horizon_start_a_new_measurement() {
        let t0 = Instant::now();
        let mut learned = Learned::default();
        learned.on_success(t0, false);
        learned.on_throttle(t0, Some(Hint::stated(ms(1000))), false, Duration::ZERO);
        assert_eq!(learned.rate(), Some(1.0));
        for _ in 0..5 {
            learned.on_success(t0, false);
        }
        learned.on_throttle(t0 + MEASURE_HORIZON + ms(2000), None, false, Duration::ZERO);
        assert_eq!(learned.rate(), Some(1.0), "kept, not measured over 31 s");
        assert_eq!(learned.capacity(), Some(5.0));
    }
}
