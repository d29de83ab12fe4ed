//! Fixed windows: a quota that comes back all at once at a boundary
//! (see the parent module's docs, point 6).
//!
//! **Recognised** by a refusal while `remaining` showed nobody else
//! spending: a continuously refilled quota mirrored from its own numbers
//! does not refuse a lone client, a window does (its units do not trickle
//! back at the policy rate). Without quota numbers, a refused probe says the
//! same (`Refill::Windowed`, in `refill.rs`).
//!
//! **Located** by the readings of the current window: each says the
//! window ends within `reset` of when it arrived (a whole-second reset is
//! rounded up, an epoch reset is measured against the local clock when that
//! agrees with `Date`), so the earliest of `received + reset` over the
//! window's readings is when it is surely over: for a window opened by our
//! own first request, that is its end plus less than one round trip. A rise
//! of `remaining` (or a reading after that instant) starts the next window.
//!
//! **Off the second grid**: an epoch reset (`X-RateLimit-Reset`) is whole
//! seconds, so a window opened by a request ends up to a second before the
//! reset says, every window. Read against a local clock that agrees with
//! `Date` (a reset finer than whole seconds), a refusal's precise hint
//! (`retry_after_ms`) that ends more than [`OFF_GRID`] before the reset
//! shows it: the window is not aligned to the clock's seconds, and the
//! hint's end measured from the burst's first success bounds its length.
//! From then on each window is also over that length after its first
//! reading. (Beside a whole-second reset, a delta or an epoch read against
//! `Date`, rounded for every window, aligned or not, a precise hint tells
//! nothing: see below.) A refusal while that length is in use refutes it
//! for good: one request at most, once per scope. (Unless its hint ends
//! within `OFF_GRID` of the length's end: that confirms it, our requests
//! in flight having spent the window's last unit, or, ending just after,
//! shows it measured short by the difference of two responses' transit
//! times, and lengthens it.)
//!
//! **A whole-second hint** (`Retry-After: 1`) ends up to a second after
//! the window does: the length it measures is taken in whole seconds (the
//! rule for windows: an integer `w` in the IETF drafts, a gateway's second
//! or minute), and a refusal while it is in use confirms it unless it came
//! once the length said the window was over (see [`whole_length`]). Its
//! own rounding is all [`whole_length`] allows for, so it measures a
//! length whatever the resets' precision: beside an epoch reset read
//! against a whole-second `Date`, which names a window's end to two
//! seconds only, it is the one measure of a window opened by a request (a
//! 1 s window, c=4, 100 ms round trips: each window waited for the
//! readings' end, up to 1.1 s late).
//!
//! **Refuted by a reading.** A length is an upper bound of a window's span
//! only if the window opened at the burst that measured it. A clock's
//! window whose first was partial (the first request 59 s into a window
//! of 127 s) measures less: its hint ended 68 s after the burst. A reading
//! whose reset says the current window is surely open past its opening
//! plus the length refutes it: the reset was stated at most the reading's
//! round trip before it arrived, and is late by at most its precision,
//! never less than the rounding second (and `OFF_GRID`) the candidate
//! rule below allows a length's window in its reset. So the window is
//! open until at least `received − round trip + reset − precision`. The
//! readings' end stands, and a later refusal's hint may measure the length
//! again (from a burst that opened its window).
//!
//! **Beside whole-second resets** (`RateLimit-Reset: 1`) a precise hint
//! tells no window off the grid: a clock-aligned window's burst starts
//! mid-window, and its hint's end less the burst's first success measures
//! the part of the window left, not its length. The first such span is
//! kept apart ([`Window::span`]): a sliding log's length, once a later
//! window opens short, which a fixed window does not while nobody else
//! spends (`Pacer::notice_sliding`).
//!
//! **A whole-second hint shorter than its own reset** (`Retry-After: 1`
//! beside `RateLimit-Reset: 2` in one refusal): both are rounded up from
//! the same instant, so a fixed window's are equal; a second or more
//! apart, units come back by the hint's end (a sliding window counter's
//! reset names the end of its two-window weight), and the window is over
//! then. A refusal of the request sent then shows a server rounding its
//! hints down: the rule is refuted for good (one request, once per scope).
//!
//! **On the grid by chance**: a window opened by a request just before a
//! whole second ends just before one too, so its hint falls within
//! `OFF_GRID` of the reset, as an aligned window's would. The hint's end,
//! measured from the burst's first success, is kept as a candidate length.
//! When a later window's first reading puts its reset a whole rounding
//! second (± `OFF_GRID`) beyond that length, the rounding explains the
//! difference: the candidate is tried, and refuted for good by a refusal
//! like a learned length. Without the trial, every later window would open
//! just after a whole second and wait for a reset rounded up by nearly a
//! second: 2 s cycles for a 1 s window. An aligned window's candidate is
//! the part of the first window left when our burst began, so a later
//! window's reset is its full length, not the candidate plus a second,
//! unless the first burst began and was refused within the last `OFF_GRID`
//! of a 1 s window (a candidate no longer than `OFF_GRID`, which is never
//! tried: it is within the grid's own tolerance), or a second ± `OFF_GRID`
//! before the end of a longer one: one refused request, once per scope.

use std::time::{Duration, Instant};

use super::super::time::{apart, is_whole_seconds, later};
use super::ROUNDING;

/// A precise hint ending this much before the reset says the window is not
/// on the second grid (a reset read against the local clock is good to a
/// round trip; a window opened by a request is off by up to a second).
pub(super) const OFF_GRID: Duration = Duration::from_millis(100);

/// What the readings say about fixed windows.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Window {
    /// The quota refills at boundaries (a refusal said so).
    known: bool,
    /// The earliest instant the current window's readings guarantee it is over.
    ends_at: Option<Instant>,
    /// The last `remaining` read, to see the next window start.
    last_remaining: Option<u64>,
    /// The lowest `remaining` read in the window whose precise reset said
    /// it ends at the instant kept beside it (see [`Self::stale`]).
    lowest: Option<(u64, Instant)>,
    /// The lowest `remaining` read in the current window, how many of our
    /// requests were in flight then, and how many of those have not
    /// answered with a higher count since (see [`Self::stale_in_flight`]).
    in_flight: Option<(u64, u32, u32)>,
    /// The first reading of the current window.
    opened: Option<Instant>,
    /// The window's length, once a precise hint showed the window off the
    /// second grid.
    length: Option<Duration>,
    /// A refusal came while the length was in use: it was wrong, and is
    /// not learned again.
    length_refuted: bool,
    /// The length an on-grid hint measured, until a later window's reset
    /// shows the grid was chance (module docs).
    candidate: Option<Duration>,
    /// The span from a burst's first success to the end of the first
    /// precise hint that refused it, measured while the resets were whole
    /// seconds (which cannot tell a window off the grid, so no
    /// [`length`](Self::length) is learned): a sliding log's length, once
    /// a later window shows one (`Pacer::notice_sliding`); a clock-aligned
    /// window's burst starts mid-window, so it is no fixed window's.
    span: Option<Duration>,
    /// The last reading's reset was finer than whole seconds (an epoch read
    /// against a local clock that agrees with `Date`): only such a reset
    /// tells a window off the grid from a rounded one.
    precise_reset: bool,
    /// The last reading opened the next window (`remaining` rose, or it
    /// came after the current one's end).
    fresh: bool,
    /// The same, where a rise our requests in flight at the lowest count
    /// could explain (an older count answered late) is not taken for one.
    surely_fresh: bool,
    /// How far the last reading's reset may be from the truth (whole
    /// seconds: [`ROUNDING`]; an epoch read against `Date`: two seconds).
    reset_precision: Duration,
    /// How long before it was received the last reading may have been
    /// stated: its send's round trip.
    reading_age: Duration,
    /// The quota comes back piecemeal, as our own sends leave a sliding
    /// log: a new window's reading showed fewer units than a fixed window
    /// would hold.
    sliding: bool,
    /// The last reset read and when (see [`Self::ends_by_rounded_hint`]).
    reset_read: Option<(Instant, Duration)>,
    /// The current window was ended by a whole-second hint at this instant
    /// (see [`Self::ends_by_rounded_hint`]).
    rounded_end: Option<Instant>,
    /// A refusal came once a whole-second hint had ended the window: the
    /// server rounds its hints down, and they end no window again.
    rounded_end_refuted: bool,
}

impl Window {
    /// The next reading's reset may be `precision` from the truth.
    pub(super) fn precision(&mut self, precision: Duration) {
        self.reset_precision = precision;
    }

    /// The next reading may have been stated up to `age` before it was
    /// received (its send's round trip).
    pub(super) fn aged(&mut self, age: Duration) {
        self.reading_age = age;
    }

    /// Whether `reset` names its instant finer than a second: not whole
    /// seconds, nor read against a clock known only to a second (an epoch
    /// against `Date`, even once located: `engine/server_clock.rs`).
    fn is_precise(&self, reset: Duration) -> bool {
        !is_whole_seconds(reset) && self.reset_precision < ROUNDING
    }

    /// When a reset received at `now` says the window ends, if it is
    /// precise (a whole-second one is rounded: see `precise_reset`).
    fn precise_end(&self, now: Instant, reset: Option<Duration>) -> Option<Instant> {
        reset.filter(|d| self.is_precise(*d)).map(|d| later(now, d))
    }

    /// A refusal came although nobody else was seen spending.
    pub(super) fn recognise(&mut self) {
        self.known = true;
    }

    /// A refusal at `now` whose hint says the window ends `hint` later, in
    /// a burst whose first success came at `burst_start`: if that is well
    /// before the readings' end, the window is off the second grid and
    /// `hint`'s end less `burst_start` bounds its length (module docs). A
    /// whole-second hint (`rounded`) is rounded up: the window's end lies up to a
    /// second before the hint's, so the length it measures is taken in
    /// whole seconds (see [`whole_length`]).
    pub(super) fn hinted(
        &mut self,
        now: Instant,
        hint: Duration,
        rounded: bool,
        burst_start: Option<Instant>,
    ) {
        let hint_end = later(now, hint);
        if !rounded && !self.precise_reset && self.span.is_none() {
            self.span = burst_start
                .map(|start| hint_end.saturating_duration_since(start))
                .filter(|span| !span.is_zero());
        }
        if let Some(length) = self.length.take() {
            let tried_end = self.opened.map(|opened| later(opened, length));
            match tried_end {
                // Refused before the length's end: our requests in flight
                // spent the window's last unit. A rounded hint cannot
                // measure the length finer than the whole seconds it has.
                Some(end) if rounded && now < end => {
                    self.length = Some(length);
                    return;
                }
                // A hint ending where the length says (our requests in
                // flight spent the window's last unit) confirms it; just
                // after, the length was measured short by the difference
                // of two response times (a process's first response is
                // often the slowest).
                Some(end) if !rounded && apart(hint_end, end) <= OFF_GRID => {
                    self.length =
                        Some(length.saturating_add(hint_end.saturating_duration_since(end)));
                    self.ends_at = Some(hint_end.max(end));
                    return;
                }
                _ => {
                    self.length_refuted = true;
                    // Refused once the length said the window was over:
                    // the readings' end came from it, too early. The
                    // hint, rounded up, is when the window surely is.
                    if rounded {
                        self.ends_at = Some(hint_end);
                    }
                }
            }
        }
        // A whole-second hint is rounded by up to a second: as fine as a
        // whole-second reset, finer than an epoch read against `Date`.
        let measures = self.precise_reset || (rounded && self.reset_precision > ROUNDING);
        let Some(start) = burst_start.filter(|_| !self.length_refuted && measures) else {
            return;
        };
        let measured = hint_end.saturating_duration_since(start);
        let length = if rounded {
            whole_length(measured)
        } else {
            Some(measured).filter(|l| !l.is_zero())
        };
        if self
            .ends_at
            .is_some_and(|end| later(hint_end, OFF_GRID) < end)
        {
            if let Some(length) = length {
                // The current window is over a length after the burst's
                // first success at the latest (a precise hint's end; a
                // whole-second hint's is later).
                self.length = Some(length);
                self.candidate = None;
                self.ends_at = self.ends_at.map(|end| end.min(later(start, length)));
            }
        } else if length.is_some() {
            self.candidate = length;
        }
    }

    /// A refusal's precise hint ending at `hint_end`, more than a rounding
    /// second before the end the readings' resets name: no fixed window
    /// ends there (a whole-second reset is rounded up by less than a
    /// second; the transit of the reading that said it may add a little),
    /// so units come back before that reset (a sliding window counter's
    /// reset names the end of its two-window weight). The window is taken
    /// as over at the hint's end: the request sent then opens the next
    /// one, and its reading says how much came back
    /// (`Pacer::judge_refill`).
    pub(super) fn ends_by_hint(&mut self, hint_end: Instant) {
        if self
            .ends_at
            .is_some_and(|end| later(hint_end, ROUNDING) < end)
        {
            self.ends_at = Some(hint_end);
        }
    }

    /// A refusal at `now` whose whole-second hint is at least a second
    /// shorter than the reset read in the same response: both are rounded
    /// up from the same instant, so a fixed window's would be equal (the
    /// hint names the window's end, the reset too); shorter, the units come
    /// back before that reset (a sliding window counter's reset names the
    /// end of its two-window weight, its hint the first instant a request
    /// goes). The window is taken as over at the hint's end, as for a
    /// precise hint ([`Self::ends_by_hint`]). A server that rounds its hints
    /// down refuses the request sent then: such hints end no window again
    /// (one request, once per scope). On `must_show`'s counter with
    /// `RateLimit-Reset` and `Retry-After` seconds, each window was held to
    /// the reset, two seconds: 8.0 s for 100 successes, as the plain client.
    pub(super) fn ends_by_rounded_hint(&mut self, now: Instant, hint: Duration) {
        let own_reset = self.reset_read.filter(|(at, _)| *at == now);
        // Both rounded up by a second at most, a fixed window's differ by
        // less than that, or by the reset's own precision if coarser.
        let apart_by = self.reset_precision.max(ROUNDING);
        let shorter = own_reset.is_some_and(|(_, reset)| hint.saturating_add(apart_by) <= reset);
        if shorter && !self.rounded_end_refuted {
            let hint_end = later(now, hint);
            self.ends_at = Some(self.ends_at.map_or(hint_end, |end| end.min(hint_end)));
            self.rounded_end = Some(hint_end);
        }
    }

    /// A refusal at `now`: within a second after a whole-second hint
    /// ended the window ([`Self::ends_by_rounded_hint`]), it answers the
    /// request that end let go: the server rounds its hints down, and they
    /// end no window again. (Later, it is about another window.)
    pub(super) fn refused(&mut self, now: Instant) {
        if self
            .rounded_end
            .is_some_and(|end| end <= now && now < later(end, ROUNDING))
        {
            self.rounded_end_refuted = true;
        }
    }

    /// A window opened at `opened` whose reset says it ends at `end`: if
    /// that is a whole rounding second beyond the candidate length, the
    /// candidate is tried (module docs).
    fn try_candidate(&mut self, opened: Instant, end: Option<Instant>) {
        let Some(candidate) = self
            .candidate
            .filter(|c| self.precise_reset && *c > OFF_GRID)
        else {
            return;
        };
        let earliest = later(opened, candidate.saturating_add(ROUNDING - OFF_GRID));
        let latest = later(opened, candidate.saturating_add(ROUNDING + OFF_GRID));
        let rounded = end.is_some_and(|e| earliest <= e && e <= latest);
        if self.length.is_none() && !self.length_refuted && rounded {
            self.length = Some(candidate);
            self.candidate = None;
        }
    }

    /// Units come back one by one, a window after each send that spent
    /// them (a sliding log), not all at once.
    pub(super) fn slide(&mut self) {
        self.sliding = true;
    }

    /// Whether units are known to come back one by one (see [`Self::slide`]).
    pub(super) fn is_sliding(&self) -> bool {
        self.sliding
    }

    /// Whether the last reading opened the next window.
    pub(super) fn fresh(&self) -> bool {
        self.fresh
    }

    /// Whether the last reading surely opened the next window: it came
    /// after the current one's end, or rose beyond what our requests in
    /// flight at the lowest count could explain.
    pub(super) fn surely_fresh(&self) -> bool {
        self.surely_fresh
    }

    /// Whether the quota is known to refill at boundaries.
    pub(super) fn is_known(&self) -> bool {
        self.known
    }

    /// The window's length, once a precise hint measured it off the
    /// second grid (module docs).
    pub(super) fn length(&self) -> Option<Duration> {
        self.length
    }

    /// A sliding log's length, as far as a precise hint measured it while
    /// the resets were whole seconds (see the field).
    pub(super) fn span(&self) -> Option<Duration> {
        self.span
    }

    /// When the current window is surely over, if a reading said.
    pub(super) fn ends_at(&self) -> Option<Instant> {
        self.ends_at
    }

    /// Whether a reading received at `now` was counted before one already
    /// read: where `remaining` only falls (`falls_only`: a fixed window, or
    /// a quota nothing is known to refill before its reset), a higher one
    /// whose precise reset names the same end (within [`OFF_GRID`]) as the
    /// lowest so far is older news: a concurrent request the server counted
    /// first but answered later. (A whole-second reset cannot tell the same
    /// end from the next window's: such readings are never called stale.)
    pub(super) fn stale(
        &self,
        falls_only: bool,
        now: Instant,
        remaining: u64,
        reset: Option<Duration>,
    ) -> bool {
        let (Some((lowest, lowest_end)), Some(end)) = (self.lowest, self.precise_end(now, reset))
        else {
            return false;
        };
        let open = self.ends_at.is_some_and(|end| now < end);
        falls_only && open && remaining > lowest && apart(end, lowest_end) <= OFF_GRID
    }

    /// As [`Self::stale`], for any reading, one with a whole-second reset
    /// (which cannot name the window's end) included: a count higher than
    /// the lowest read in the current window is older news when our
    /// requests in flight at that lowest reading could hold it (only those
    /// can: a send after it is counted below it), and while one of them has
    /// not answered yet (each answers once, the last one often with nothing
    /// else in flight). Alone, nothing is in flight at the lowest reading:
    /// a rise is units coming back (a sliding log's). A next window opening
    /// before this one is surely over, with a count no higher than those in
    /// flight could explain, is read one reading late: the mirror only
    /// holds back, never spends a unit too many. On the demo server's
    /// window opened by the first request (`ietf-legacy`, c=4), such counts
    /// re-synced the mirror a unit too high about once per window, and the
    /// refusal's hint, jittered by up to a tenth, cost 24–79 ms each in one
    /// trace: 4.10–4.23 s for 100 successes against the plain
    /// `Retry-After` client's 4.02 s.
    pub(super) fn stale_in_flight(
        &mut self,
        falls_only: bool,
        now: Instant,
        remaining: u64,
    ) -> bool {
        let open = self.ends_at.is_some_and(|end| now < end);
        let Some((lowest, in_flight, unanswered)) = self.in_flight.as_mut() else {
            return false;
        };
        let stale = falls_only
            && open
            && *unanswered > 0
            && remaining > *lowest
            && remaining - *lowest <= u64::from(*in_flight);
        if stale {
            *unanswered -= 1;
        }
        stale
    }

    /// Any reading received at `now`, the answer to an older send than the
    /// last one read included: keeps the lowest `remaining` of each window
    /// its precise reset names (see [`Self::stale`]).
    pub(super) fn note(&mut self, now: Instant, remaining: u64, reset: Option<Duration>) {
        self.reset_read = reset.map(|reset| (now, reset));
        let Some(end) = self.precise_end(now, reset) else {
            return;
        };
        self.lowest = match self.lowest {
            Some((lowest, at)) if apart(end, at) <= OFF_GRID => Some((lowest.min(remaining), at)),
            // An earlier window's.
            Some((_, at)) if end < at => self.lowest,
            _ => Some((remaining, end)),
        };
    }

    /// A reading received at `now`; returns when the current window is
    /// surely over.
    pub(super) fn read(
        &mut self,
        now: Instant,
        remaining: u64,
        reset: Option<Duration>,
        others: u32,
    ) -> Option<Instant> {
        let rose = self.last_remaining.is_some_and(|last| remaining > last);
        self.last_remaining = Some(remaining);
        let over = self.ends_at.is_some_and(|end| now >= end);
        let late = self
            .in_flight
            .is_some_and(|(lowest, in_flight, unanswered)| {
                unanswered > 0 && remaining <= lowest.saturating_add(u64::from(in_flight))
            });
        self.surely_fresh = over || (rose && !late);
        let end = reset.and_then(|d| now.checked_add(d));
        self.precise_reset = reset.is_some_and(|d| self.is_precise(d));
        self.note(now, remaining, reset);
        self.fresh = rose || over;
        if rose || over || self.opened.is_none() {
            self.opened = Some(now);
        }
        self.in_flight = match self.in_flight {
            Some((lowest, ..)) if !self.fresh && lowest <= remaining => self.in_flight,
            _ => Some((remaining, others, others)),
        };
        if self.fresh {
            self.try_candidate(now, end);
        }
        self.ends_at = match (self.ends_at, end) {
            _ if rose || over => end,
            (Some(known), Some(end)) => Some(known.min(end)),
            (known, end) => known.or(end),
        };
        self.refute_length(now, reset);
        // Off the grid, the window is over its length after it opened (its
        // first reading came after its first request reached the server).
        if let (Some(opened), Some(length)) = (self.opened, self.length) {
            let by_length = later(opened, length);
            self.ends_at = Some(self.ends_at.map_or(by_length, |e| e.min(by_length)));
        }
        self.ends_at
    }

    /// A reading received at `now` whose `reset` says the current window
    /// is surely open beyond its length's end refutes the length (module
    /// docs, "Refuted by a reading"): the reset was stated at most the
    /// reading's age before `now`, and is late by at most its precision,
    /// or by the rounding second (and [`OFF_GRID`]) a length's window is
    /// allowed in its reset (as [`Self::try_candidate`] allows it).
    fn refute_length(&mut self, now: Instant, reset: Option<Duration>) {
        let (Some(opened), Some(length), Some(reset)) = (self.opened, self.length, reset) else {
            return;
        };
        let stated = now.checked_sub(self.reading_age).unwrap_or(now);
        let precision = self.reset_precision.max(ROUNDING + OFF_GRID);
        let open_until = later(stated, reset.saturating_sub(precision));
        if open_until > later(opened, length) {
            self.length = None;
        }
    }
}

/// A window's length as a whole-second hint measured it (`measured`: from
/// the burst's first success to the hint's end): up to a second too long
/// (the hint is rounded up), and short by at most the first success's
/// round trip (the window opened when the server counted it). Windows are
/// whole seconds as a rule (`w` is an integer in the IETF drafts; GitHub's
/// hour, a gateway's second or minute), so the whole seconds in it, the
/// round trip allowed for by [`OFF_GRID`]; none under a second. A window
/// that is not whole seconds may be measured short: the send its end lets
/// go is refused, and the length is refuted for good (one request, once
/// per scope). Held at `1 + d` (`d` the refusal's delay after the burst's
/// first success), the window opened by the first request and the sliding
/// log on `must_show`'s grid (`X-RateLimit-*`, `Retry-After` seconds) lost
/// `d` in every window against the plain client.
fn whole_length(measured: Duration) -> Option<Duration> {
    Some(Duration::from_secs(
        measured.saturating_add(OFF_GRID).as_secs(),
    ))
    .filter(|l| !l.is_zero())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// A refusal 1 ms before `end` whose precise hint says `end`.
    fn hint_ending(window: &mut Window, end: Instant, burst_start: Option<Instant>) {
        window.hinted(end - ms(1), ms(1), false, burst_start);
    }

    #[test]
    fn the_earliest_end_of_a_window_is_kept_until_the_next_one_starts() {
        let t0 = Instant::now();
        let mut window = Window::default();
        assert!(!window.is_known());
        // `t=1` at every reading of a 1 s window: the first bounds it best.
        assert_eq!(window.read(t0, 19, Some(ms(1000)), 0), Some(t0 + ms(1000)));
        assert_eq!(
            window.read(t0 + ms(30), 18, Some(ms(1000)), 0),
            Some(t0 + ms(1000))
        );
        // A more precise reading (an epoch reset) narrows it.
        assert_eq!(
            window.read(t0 + ms(40), 17, Some(ms(900)), 0),
            Some(t0 + ms(940))
        );
        // A reading without a reset keeps what is known.
        assert_eq!(window.read(t0 + ms(50), 16, None, 0), Some(t0 + ms(940)));
        // `remaining` rose: the next window, bounded afresh.
        assert_eq!(
            window.read(t0 + ms(960), 19, Some(ms(1000)), 0),
            Some(t0 + ms(1960))
        );
        window.recognise();
        assert!(window.is_known());
        assert_eq!(window.ends_at(), Some(t0 + ms(1960)));
    }

    #[test]
    fn a_precise_hint_off_the_grid_gives_the_window_s_length_until_refuted() {
        let t0 = Instant::now();
        let mut window = Window::default();
        // The burst's first reading: the epoch reset says 1.6 s.
        assert_eq!(window.read(t0, 19, Some(ms(1600)), 0), Some(t0 + ms(1600)));
        // A whole-second reset is rounded whatever the window: nothing.
        let mut rounded = Window::default();
        rounded.read(t0, 19, Some(ms(2000)), 0);
        hint_ending(&mut rounded, t0 + ms(1000), Some(t0));
        assert_eq!(rounded.length, None);
        // Refused at 50 ms, back in 950 ms: 600 ms before the reset says.
        hint_ending(&mut window, t0 + ms(1000), Some(t0));
        assert_eq!(window.ends_at(), Some(t0 + ms(1000)));
        // The next window opens at its first reading and lasts 1 s, however
        // late its whole-second reset.
        assert_eq!(
            window.read(t0 + ms(1010), 19, Some(ms(1990)), 0),
            Some(t0 + ms(2010))
        );
        // A reading after that end opens the next one, `remaining` or not.
        assert_eq!(
            window.read(t0 + ms(2020), 19, Some(ms(1980)), 0),
            Some(t0 + ms(3020))
        );
        // Within OFF_GRID of the reset (exactly, here): on the grid, nothing
        // learned.
        let mut aligned = Window::default();
        aligned.read(t0, 19, Some(ms(999)), 0);
        hint_ending(&mut aligned, t0 + ms(999) - OFF_GRID, Some(t0));
        assert_eq!(
            aligned.read(t0 + ms(1010), 19, Some(ms(1000)), 0),
            Some(t0 + ms(2010))
        );
        assert_eq!(aligned.length, None);
        // A refusal while the length is in use refutes it for good.
        hint_ending(&mut window, t0 + ms(2500), Some(t0 + ms(2020)));
        assert_eq!(window.length, None);
        window.read(t0 + ms(3000), 19, Some(ms(1990)), 0);
        hint_ending(&mut window, t0 + ms(3500), Some(t0 + ms(3000)));
        assert_eq!(window.length, None);
        // Back to the readings alone: the next window ends at its reset.
        assert_eq!(
            window.read(t0 + ms(4100), 19, Some(ms(1900)), 0),
            Some(t0 + ms(6000))
        );
    }

    #[test]
    fn a_reading_open_past_the_length_s_end_refutes_it() {
        let secs = Duration::from_secs;
        let t0 = Instant::now();
        let mut window = Window::default();
        window.recognise();
        window.precision(secs(2));
        window.read(t0, 0, Some(secs(69)), 0);
        // A whole-second hint ending 68 s after the burst measures a
        // length beside resets read to two seconds.
        window.hinted(t0 + ms(30), secs(68), true, Some(t0));
        assert_eq!(window.length(), Some(secs(68)));
        // The next window opens at 69 s and its reset says 126 s, stated
        // within its 10 ms round trip: open past 69 s + 68 s by far.
        let opened = t0 + secs(69);
        window.aged(ms(10));
        assert_eq!(
            window.read(opened, 1, Some(secs(126)), 0),
            Some(opened + secs(126))
        );
        assert_eq!(window.length(), None, "refuted");
        // A reset that names the length's end exactly once its precision
        // (2 s) and round trip (10 ms) are allowed for does not refute it;
        // 10 ms more, or no round trip allowed for, does.
        let kept = |reset: Duration, age: Duration| {
            let mut window = Window::default();
            window.recognise();
            window.precision(secs(2));
            window.read(t0, 0, Some(secs(69)), 0);
            window.hinted(t0 + ms(30), secs(68), true, Some(t0));
            window.aged(age);
            window.read(opened, 1, Some(reset), 0);
            window.length() == Some(secs(68))
        };
        assert!(kept(secs(70) + ms(10), ms(10)));
        assert!(!kept(secs(70) + ms(20), ms(10)));
        assert!(!kept(secs(70) + ms(10), Duration::ZERO));
    }

    #[test]
    fn a_precise_hint_beside_whole_second_resets_measures_a_span_only() {
        let t0 = Instant::now();
        let mut window = Window::default();
        window.read(t0, 19, Some(ms(1000)), 0);
        hint_ending(&mut window, t0 + ms(1000), Some(t0 + ms(2)));
        assert_eq!((window.span(), window.length()), (Some(ms(998)), None));
        // The first refusal's is kept (a later burst's first success may
        // be windows before its refusal).
        hint_ending(&mut window, t0 + ms(3000), Some(t0 + ms(1000)));
        assert_eq!(window.span(), Some(ms(998)));
        // A whole-second hint is rounded: nothing measured.
        let mut rounded = Window::default();
        rounded.read(t0, 19, Some(ms(1000)), 0);
        rounded.hinted(t0 + ms(50), ms(1000), true, Some(t0));
        assert_eq!(rounded.span(), None);
        // Nor without a burst to measure from.
        let mut no_burst = Window::default();
        no_burst.read(t0, 0, Some(ms(1000)), 0);
        hint_ending(&mut no_burst, t0 + ms(1000), None);
        assert_eq!(no_burst.span(), None);
        // Beside a precise reset, the hint measures the length instead.
        let mut precise = Window::default();
        precise.read(t0, 19, Some(ms(1600)), 0);
        hint_ending(&mut precise, t0 + ms(1000), Some(t0));
        assert_eq!((precise.span(), precise.length()), (None, Some(ms(1000))));
    }

    #[test]
    fn a_precise_hint_more_than_a_second_before_the_readings_end_ends_the_window() {
        let t0 = Instant::now();
        let mut window = Window::default();
        window.read(t0, 0, Some(Duration::from_secs(2)), 0);
        // Exactly a second before: held to the readings' end.
        window.ends_by_hint(t0 + ms(1000));
        assert_eq!(window.ends_at(), Some(t0 + ms(2000)));
        window.ends_by_hint(t0 + ms(999));
        assert_eq!(window.ends_at(), Some(t0 + ms(999)));
        // Never later than the readings say.
        window.ends_by_hint(t0 + ms(5000));
        assert_eq!(window.ends_at(), Some(t0 + ms(999)));
    }

    #[test]
    fn a_whole_second_hint_shorter_than_its_own_reset_ends_the_window_until_refuted() {
        let t0 = Instant::now();
        let secs = Duration::from_secs;
        let mut window = Window::default();
        window.recognise();
        window.read(t0, 0, Some(secs(2)), 0);
        // A reset read at another instant is not the refusal's own.
        window.ends_by_rounded_hint(t0 + ms(1), secs(1));
        assert_eq!(window.ends_at(), Some(t0 + secs(2)));
        // Its own reset as long as the hint, or less than a second longer:
        // both may be a fixed window's end, rounded up.
        window.note(t0 + ms(1), 0, Some(secs(1)));
        window.ends_by_rounded_hint(t0 + ms(1), secs(1));
        window.note(t0 + ms(2), 0, Some(ms(1999)));
        window.ends_by_rounded_hint(t0 + ms(2), secs(1));
        assert_eq!(window.ends_at(), Some(t0 + secs(2)));
        // A second longer: the window is over at the hint's end.
        window.note(t0 + ms(3), 0, Some(secs(2)));
        window.ends_by_rounded_hint(t0 + ms(3), secs(1));
        assert_eq!(window.ends_at(), Some(t0 + ms(1003)));
        // A refusal before that end (our requests in flight) refutes nothing.
        window.refused(t0 + ms(1002));
        let mut next = window;
        next.read(t0 + ms(2000), 19, Some(secs(2)), 0);
        next.note(t0 + ms(2001), 0, Some(secs(2)));
        next.ends_by_rounded_hint(t0 + ms(2001), secs(1));
        assert_eq!(next.ends_at(), Some(t0 + ms(3001)));
        // Refused over a second after that end: another window's news.
        let mut late = window;
        late.refused(t0 + ms(2003));
        late.read(t0 + ms(2004), 19, Some(secs(2)), 0);
        late.note(t0 + ms(2005), 0, Some(secs(2)));
        late.ends_by_rounded_hint(t0 + ms(2005), secs(1));
        assert_eq!(late.ends_at(), Some(t0 + ms(3005)));
        // Refused once it said the window was over: never again.
        window.refused(t0 + ms(1003));
        window.read(t0 + ms(2000), 19, Some(secs(2)), 0);
        window.note(t0 + ms(2001), 0, Some(secs(2)));
        window.ends_by_rounded_hint(t0 + ms(2001), secs(1));
        assert_eq!(window.ends_at(), Some(t0 + secs(4)));
    }

    #[test]
    fn a_whole_second_hint_measures_a_window_in_whole_seconds() {
        let t0 = Instant::now();
        let secs = Duration::from_secs;
        let mut window = Window::default();
        // Opened by our first request 400 ms into a second: the epoch reset
        // says 1.6 s.
        window.read(t0, 19, Some(ms(1600)), 0);
        // The probe refused 70 ms after the burst's first success: 1 s,
        // rounded up from 930 ms. A 1 s window, ending a second after the
        // burst's first success, not 1.07 s.
        window.hinted(t0 + ms(70), secs(1), true, Some(t0));
        assert_eq!(window.length, Some(secs(1)));
        assert_eq!(window.ends_at(), Some(t0 + secs(1)));
        // The next window opens at its first reading and lasts 1 s.
        let opened = t0 + ms(1001);
        assert_eq!(
            window.read(opened, 19, Some(ms(1599)), 0),
            Some(opened + secs(1))
        );
        // Refused within it (our requests in flight spent its last unit):
        // the rounded hint ends 20 ms after the length's end, which it
        // cannot measure: neither lengthened nor refuted.
        window.hinted(opened + ms(20), secs(1), true, Some(opened));
        assert_eq!(window.length, Some(secs(1)));
        assert_eq!(window.ends_at(), Some(opened + secs(1)));
        // Refused once the length said the window was over: refuted for
        // good, the window over when the hint says.
        let late = opened + secs(1);
        window.hinted(late, secs(1), true, Some(opened));
        assert_eq!(window.length, None);
        assert_eq!(window.ends_at(), Some(late + secs(1)));
        window.hinted(late + ms(1100), secs(1), true, Some(late + ms(1000)));
        assert_eq!(window.length, None);

        // Whole seconds, allowing the first success's round trip; none
        // under a second.
        assert_eq!(whole_length(ms(1999)), Some(secs(2)));
        assert_eq!(whole_length(ms(2070)), Some(secs(2)));
        assert_eq!(whole_length(ms(1899)), Some(secs(1)));
        assert_eq!(whole_length(ms(950)), Some(secs(1)));
        assert_eq!(whole_length(ms(850)), None);
    }

    #[test]
    fn a_whole_second_hint_measures_a_length_beside_an_epoch_read_against_date() {
        let t0 = Instant::now();
        let secs = Duration::from_secs;
        // A delta in whole seconds is as fine as the hint: nothing measured
        // (an aligned window's burst may start mid-window).
        let mut delta = Window::default();
        delta.precision(secs(1));
        delta.read(t0, 19, Some(secs(1)), 0);
        delta.hinted(t0 + ms(630), secs(1), true, Some(t0));
        assert_eq!(delta.length, None);
        // An epoch reset read against a whole-second `Date` (two seconds
        // from the truth): 2 s, though the window, opened by our first
        // request at t0, ends at t0 + 1 s.
        let mut window = Window::default();
        window.precision(secs(2));
        window.read(t0, 19, Some(secs(2)), 0);
        assert_eq!(window.ends_at(), Some(t0 + secs(2)));
        // The probe refused 630 ms in: `Retry-After: 1`, rounded up from
        // 370 ms. The window is over a second after the burst's first
        // success, not at the readings' end.
        window.hinted(t0 + ms(630), secs(1), true, Some(t0));
        assert_eq!(window.length, Some(secs(1)));
        assert_eq!(window.ends_at(), Some(t0 + secs(1)));
        // The next window, opened at its first reading, lasts 1 s whatever
        // its reset says.
        let opened = t0 + ms(1700);
        assert_eq!(
            window.read(opened, 19, Some(secs(2)), 0),
            Some(opened + secs(1))
        );
        // A precise hint beside whole-second resets still measures no
        // length (it may end an aligned window's part left, module docs).
        let mut precise = Window::default();
        precise.precision(secs(2));
        precise.read(t0, 19, Some(secs(2)), 0);
        hint_ending(&mut precise, t0 + ms(1000), Some(t0));
        assert_eq!(precise.length, None);
    }

    #[test]
    fn a_window_on_the_grid_by_chance_is_tried_at_its_measured_length() {
        let t0 = Instant::now();
        // Opened by our request 50 ms before a whole second: its hint ends
        // 950 ms later, 40 ms before the (precise, epoch) reset: on the grid.
        let mut window = Window::default();
        window.read(t0, 19, Some(ms(990)), 0);
        hint_ending(&mut window, t0 + ms(950), Some(t0));
        assert_eq!(window.length, None);
        // The next window opens just after the whole second: its reset is
        // rounded up by nearly a second beyond the 950 ms measured.
        assert_eq!(
            window.read(t0 + ms(1000), 19, Some(ms(1999)), 0),
            Some(t0 + ms(1950))
        );
        assert_eq!(window.length, Some(ms(950)));
        // Refused 5 ms short of the window's end: measured short by transit
        // times, lengthened.
        hint_ending(&mut window, t0 + ms(1955), Some(t0 + ms(1000)));
        assert_eq!(window.length, Some(ms(955)));
        assert_eq!(window.ends_at(), Some(t0 + ms(1955)));
        // Refused within the window (our requests in flight spent its last
        // unit), the hint ending where the length says: confirmed.
        hint_ending(&mut window, t0 + ms(1955), Some(t0 + ms(1000)));
        assert_eq!(window.length, Some(ms(955)));
        // Refused further from its end: refuted for good.
        hint_ending(&mut window, t0 + ms(2000) + OFF_GRID, Some(t0 + ms(1000)));
        assert_eq!(window.length, None);
        assert_eq!(
            window.read(t0 + ms(3010), 19, Some(ms(1990)), 0),
            Some(t0 + ms(5000))
        );

        // An aligned window of 1 s whose first burst began 700 ms in: a
        // 300 ms candidate, and every later reset agrees with a 1 s window
        // rather than with it: never tried.
        let mut aligned = Window::default();
        aligned.read(t0, 19, Some(ms(300)), 0);
        hint_ending(&mut aligned, t0 + ms(300), Some(t0));
        for n in 1..4 {
            let opened = t0 + ms(300 + 1000 * (n - 1) + 2);
            assert_eq!(
                aligned.read(opened, 19, Some(ms(998)), 0),
                Some(opened + ms(998))
            );
            assert_eq!(aligned.length, None, "window {n}");
        }
        // A whole-second reset (a delta, or read against `Date`) is rounded
        // for every window and never tries a candidate.
        let mut rounded = Window::default();
        rounded.read(t0, 19, Some(ms(1000)), 0);
        hint_ending(&mut rounded, t0 + ms(950), Some(t0));
        rounded.read(t0 + ms(1000), 19, Some(ms(2000)), 0);
        assert_eq!(rounded.length, None);
    }

    #[test]
    fn a_higher_count_for_the_same_precise_end_is_older_news() {
        let t0 = Instant::now();
        let mut window = Window::default();
        // Epoch resets read against the local clock: the window ends at
        // t0 + 900 ms, give or take a round trip.
        window.read(t0, 5, Some(ms(900) + Duration::from_micros(300)), 0);
        window.read(t0 + ms(1), 3, Some(ms(899)), 0);
        // An answer to an older send, dropped for re-syncing, still counts.
        window.note(t0 + ms(2), 2, Some(ms(898) + Duration::from_micros(500)));
        let stale = |w: &Window, falls_only, at: Duration, remaining, reset| {
            w.stale(falls_only, t0 + at, remaining, Some(reset))
        };
        let end = |at: u64| ms(900 - at) + Duration::from_micros(100);
        assert!(stale(&window, true, ms(3), 4, end(3)));
        assert!(stale(&window, true, ms(3), 3, end(3)));
        // As low, or lower: news.
        assert!(!stale(&window, true, ms(3), 2, end(3)));
        assert!(!stale(&window, true, ms(3), 1, end(3)));
        // Known to refill continuously: a bucket's count rises.
        assert!(!stale(&window, false, ms(3), 4, end(3)));
        // The next window's end (a second later): a new count.
        assert!(!stale(&window, true, ms(3), 19, end(3) + ms(1000)));
        // Just within `OFF_GRID` of the same end, and just beyond it.
        assert!(stale(&window, true, ms(3), 4, end(3) + OFF_GRID - ms(1)));
        assert!(!stale(&window, true, ms(3), 4, end(3) + OFF_GRID + ms(1)));
        // A whole-second reset cannot name the end: never stale.
        assert!(!stale(&window, true, ms(3), 4, ms(1000)));
        // Once the window is surely over (from its earliest end on), a rise
        // is the next window's.
        assert!(!stale(&window, true, ms(900), 4, Duration::from_micros(1)));
        assert!(!stale(&window, true, ms(950), 4, Duration::from_micros(1)));
        // An earlier window's count, noted late, changes nothing.
        window.note(t0 + ms(4), 0, Some(ms(100) + Duration::from_micros(1)));
        assert!(!stale(&window, true, ms(5), 2, end(5)));
        assert!(stale(&window, true, ms(5), 3, end(5)));
        // The next window's first count starts its own lowest.
        window.note(t0 + ms(6), 18, Some(end(6) + ms(1000)));
        assert!(stale(&window, true, ms(7), 19, end(7) + ms(1000)));
        assert!(!stale(&window, true, ms(7), 17, end(7) + ms(1000)));
    }

    #[test]
    fn a_higher_count_within_our_requests_in_flight_is_older_news_when_rounded() {
        let t0 = Instant::now();
        let second = Some(ms(1000));
        let at = |n| t0 + ms(n);
        // Whole-second resets; the lowest count read is 6, with 3 of our
        // requests in flight then.
        let opened = || {
            let mut window = Window::default();
            window.read(t0, 19, second, 3);
            window.read(at(1), 6, second, 3);
            window
        };
        let mut window = opened();
        // Counts those 3 took before it, each answering once (the last
        // often with nothing else in flight).
        assert!(window.stale_in_flight(true, at(2), 8));
        assert!(window.stale_in_flight(true, at(3), 7));
        assert!(window.stale_in_flight(true, at(4), 9));
        assert!(!window.stale_in_flight(true, at(5), 8), "all 3 answered");
        // More above the lowest than were in flight: units came back.
        assert!(!opened().stale_in_flight(true, at(2), 10));
        assert!(opened().stale_in_flight(true, at(2), 9));
        // As low or lower: news.
        assert!(!opened().stale_in_flight(true, at(2), 6));
        // A quota known to refill continuously, or a window surely over.
        assert!(!opened().stale_in_flight(false, at(2), 8));
        assert!(!opened().stale_in_flight(true, at(1000), 8));
        // The same count again (a weighted counter's can repeat) keeps the
        // requests in flight at the first one.
        let mut window = opened();
        window.read(at(2), 6, second, 0);
        assert!(window.stale_in_flight(true, at(3), 8));
        // A lower count starts a new lowest, with its own requests in flight.
        let mut window = opened();
        window.read(at(2), 4, second, 1);
        assert!(window.stale_in_flight(true, at(3), 5));
        assert!(!window.stale_in_flight(true, at(4), 5));
        // Alone (nothing in flight at the lowest), a rise is units back.
        let mut alone = Window::default();
        alone.read(t0, 6, second, 0);
        assert!(!alone.stale_in_flight(true, at(2), 7));
        // The next window (read after this one is surely over) starts its
        // own lowest.
        let mut window = opened();
        window.read(at(1001), 19, second, 3);
        assert!(!window.stale_in_flight(true, at(1002), 23));
        assert!(window.stale_in_flight(true, at(1002), 21));
    }

    #[test]
    fn a_reading_after_the_end_starts_the_next_window() {
        let t0 = Instant::now();
        let mut window = Window::default();
        window.read(t0, 0, Some(ms(1000)), 0);
        // Still 0 (others spent the new window), but the old one is over.
        assert_eq!(
            window.read(t0 + ms(1500), 0, Some(ms(1000)), 0),
            Some(t0 + ms(2500))
        );
    }

    #[test]
    fn a_rise_our_requests_in_flight_explain_is_not_surely_a_new_window() {
        let t0 = Instant::now();
        let mut window = Window::default();
        window.read(t0, 19, Some(ms(1000)), 3);
        window.read(t0 + ms(1), 16, Some(ms(1000)), 3);
        // 17 after 16, with 3 of ours in flight at 16: an older count.
        window.read(t0 + ms(2), 17, Some(ms(1000)), 3);
        assert!(window.fresh() && !window.surely_fresh());
        // 21 is more than they explain (17 is the lowest now: `fresh`
        // starts over from it).
        window.read(t0 + ms(3), 21, Some(ms(1000)), 3);
        assert!(window.surely_fresh());
        // After the window's end, any reading is the next window's.
        window.read(t0 + ms(1003), 12, Some(ms(1000)), 3);
        assert!(window.surely_fresh());
        window.read(t0 + ms(1004), 11, Some(ms(1000)), 3);
        assert!(!window.fresh() && !window.surely_fresh());
    }

    #[test]
    fn a_rise_once_our_requests_in_flight_all_answered_is_a_new_window() {
        let t0 = Instant::now();
        let mut window = Window::default();
        window.read(t0, 16, Some(ms(1000)), 2);
        // The two in flight at 16 answer with older counts.
        assert!(window.stale_in_flight(true, t0 + ms(1), 17));
        assert!(window.stale_in_flight(true, t0 + ms(2), 18));
        // Nothing of ours left that could hold 18: it is the next window.
        window.read(t0 + ms(3), 18, Some(ms(1000)), 0);
        assert!(window.surely_fresh());
    }
}
