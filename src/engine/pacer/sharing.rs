//! Sharing a quota with others (other processes on one API key), and the
//! reserve left for newcomers (see the parent module's docs, points 3–4).

use std::time::{Duration, Instant};

/// However busy the others, keep at least this share of the policy rate.
const MIN_SHARE: f64 = 0.05;
/// A refusal despite the policy rate means others share the quota: the
/// share of the policy rate we use is multiplied by this…
const SHARE_DECREASE: f64 = 0.1;
/// …and grows back by this much per success (from half to all of it in 250
/// successes): slow enough that ten clients sharing one quota refuse less
/// than one request in ten (see the simulated herd test).
const SHARE_INCREASE: f64 = 0.002;
/// Units of a continuously refilled quota left for newcomers (see the module
/// docs), at most [`RESERVE_FRACTION`] of the limit.
const RESERVE: f64 = 2.0;
/// The reserve is at most this fraction of the limit (a small quota keeps
/// its units).
const RESERVE_FRACTION: f64 = 0.1;
/// `remaining` showing nobody else spending for this long means we are alone.
const ALONE_AFTER: Duration = Duration::from_secs(1);
/// Others seen spending within this long make a refusal theirs, not the
/// quota's kind (a window): herds keep sharing even between two readings
/// that happen to show nobody else.
const OTHERS_REMEMBERED: Duration = Duration::from_secs(30);
/// A refusal after we alone drew down at least this fraction of the limit
/// (every reading in between showing nobody else) is the quota's kind: its
/// units did not come back at the policy rate. A herd's late starters, who
/// find the quota nearly spent by others, never draw this much alone.
const DRAWN_ALONE_FRACTION: f64 = 0.5;
/// `remaining` falling this many units beyond our own spending means others
/// spend too (one unit of slack for the server's rounding). Summed over the
/// readings since one last showed others, not judged per reading: the
/// server's counts telescope, so its rounding explains less than a unit
/// over any span of readings, where a unit per reading can be another
/// client spending in step with us.
const OTHERS_SLACK: u64 = 2;
/// `remaining` rising by at least this much between two responses (although
/// we spent from it) means the others slowed down or left…
const FILLING_BY: u64 = 2;
/// …when the quota is at least this fraction full: the share doubles.
const FILLING_FRACTION: f64 = 0.25;

/// A reading to compare the next one with: `remaining`, and `admitted` and
/// our other requests in flight when it was received.
#[derive(Debug, Clone, Copy)]
struct Base {
    remaining: u64,
    admitted: u64,
    in_flight: u64,
}

impl Base {
    /// How much of what `remaining` fell by since this reading nobody of
    /// ours can have spent (we may have spent what we sent since and what
    /// was in flight then), and what it fell by.
    fn theirs_and_fall(self, remaining: u64, admitted: u64) -> (u64, u64) {
        let ours = admitted
            .saturating_sub(self.admitted)
            .saturating_add(self.in_flight);
        let fall = self.remaining.saturating_sub(remaining);
        (fall.saturating_sub(ours), fall)
    }
}

/// Our share of a quota others may spend too.
#[derive(Debug, Clone, Default)]
pub(super) struct Sharing {
    /// The share of the policy rate we use (none until something says the
    /// quota is shared: all of it).
    share: Option<f64>,
    /// The previous response's `remaining`, and `admitted` and our other
    /// requests in flight at that moment.
    previous: Option<Base>,
    /// The reading before `previous`, when `previous` rose above it while
    /// our requests were in flight: `previous` may be an older count
    /// answered late (see [`Sharing::notice_others`]).
    before_rise: Option<Base>,
    /// Since when `remaining` has shown nobody else spending.
    alone_since: Option<Instant>,
    /// When `remaining` last showed others spending.
    others_seen_at: Option<Instant>,
    /// Units we spent between readings showing nobody else spending, since
    /// the last reading that showed others.
    drawn_alone: u64,
    /// Since the first reading after that which fell by more than we
    /// spent: the units we spent and those nobody of ours did, each below
    /// [`OTHERS_SLACK`] alone.
    unexplained: Option<(u64, u64)>,
}

impl Sharing {
    /// The share of the policy rate we use.
    pub(super) fn share(&self) -> f64 {
        self.share.unwrap_or(1.0)
    }

    /// No reading has shown others spending.
    pub(super) fn never_saw_others(&self) -> bool {
        self.others_seen_at.is_none()
    }

    /// We alone drew down at least [`DRAWN_ALONE_FRACTION`] of `limit`, and
    /// no reading showed others spending within [`OTHERS_REMEMBERED`].
    pub(super) fn drew_alone(&self, now: Instant, limit: f64) -> bool {
        let others_lately = self
            .others_seen_at
            .is_some_and(|at| now.saturating_duration_since(at) < OTHERS_REMEMBERED);
        self.drawn_alone as f64 >= limit * DRAWN_ALONE_FRACTION && !others_lately
    }

    /// Others spend this quota too when `remaining` fell by more than we
    /// spent since the previous response (refills only hide some of it): use
    /// the share of the rate our spending was, before a refusal says so.
    /// `limit` is the policy's, known only with a policy rate.
    /// `in_flight`: our other requests still in flight, which the server may
    /// count between this reading and the next; `admitted`: the units we
    /// spent (requests admitted), ever.
    ///
    /// A server handling our concurrent requests may count a later one
    /// first and answer it last: its count, higher than the one before,
    /// is older news, and the next reading's fall from it includes our
    /// sends counted in between, which were neither in flight then nor
    /// sent since. So after a rise while our requests were in flight, the
    /// next reading is also compared with the reading before the rise, and
    /// the smaller fall counts. (Read from the late count alone, a window's
    /// `1, 3, 0` at concurrency 4 on the demo server's fixed windows showed
    /// two units of "others": the share was cut to a third, then a tenth at
    /// the window's refusal, and the window was never recognised.)
    ///
    /// The caller passes no reading it knows to be older news (the answer
    /// to a send in flight at the latest count, reading higher;
    /// `counted.rs`): the fall from it would take in our sends counted
    /// between it and the latest count, which no base counts as ours.
    pub(super) fn notice_others(
        &mut self,
        now: Instant,
        remaining: u64,
        in_flight: u32,
        limit: Option<f64>,
        admitted: u64,
    ) {
        let reading = Base {
            remaining,
            admitted,
            in_flight: u64::from(in_flight),
        };
        let Some(limit) = limit else {
            self.previous = Some(reading);
            return;
        };
        // The first reading is compared with a whole quota, as if read
        // before our first send: if it fell by no more than we spent,
        // nobody else had spent any of it, and what it fell by we drew
        // alone (a quota of one or two units is refused before a second
        // reading can show it). If it fell by more, we cannot tell others
        // from a quota part-spent before we came or not yet refilled.
        let whole = Base {
            remaining: limit as u64,
            admitted: 0,
            in_flight: 0,
        };
        let first = self.previous.is_none();
        let previous = self.previous.replace(reading).unwrap_or(whole);
        let before_rise = self.before_rise.take();
        if first && previous.theirs_and_fall(remaining, admitted).0 > 0 {
            return;
        }
        if remaining > previous.remaining && previous.in_flight > 0 {
            self.before_rise = Some(previous);
        }
        let before = previous.remaining;
        let (pair_theirs, fall) = [Some(previous), before_rise]
            .into_iter()
            .flatten()
            .map(|base| base.theirs_and_fall(remaining, admitted))
            .min()
            .unwrap_or_default();
        // A client spending a unit between each two of our readings stays
        // under the slack at every one: the units nobody of ours spent add
        // up until a reading shows others.
        let (ours, theirs) = match self.unexplained {
            Some((ours, theirs)) => (ours + (fall - pair_theirs), theirs + pair_theirs),
            None => (fall - pair_theirs, pair_theirs),
        };
        if theirs >= OTHERS_SLACK {
            self.alone_since = None;
            self.others_seen_at = Some(now);
            self.drawn_alone = 0;
            self.unexplained = None;
            if ours > 0 {
                let share = (ours as f64 / (ours + theirs) as f64).max(MIN_SHARE);
                self.share = Some(self.share.map_or(share, |s| s.min(share)));
            }
            return;
        }
        if theirs > 0 {
            self.unexplained = Some((ours, theirs));
        }
        // An empty quota hides the others' spending: only a reading after a
        // non-empty one can show that nobody else spent.
        if pair_theirs == 0 && before > 0 {
            self.alone_since.get_or_insert(now);
        }
        self.drawn_alone = self.drawn_alone.saturating_add(fall);
        let filling = remaining >= before.saturating_add(FILLING_BY);
        let quarter_full = remaining as f64 >= limit * FILLING_FRACTION;
        if filling
            && quarter_full
            && let Some(share) = self.share.as_mut()
        {
            *share = (*share * 2.0).min(1.0);
        }
    }

    /// The units of a continuously refilled quota of `limit` left for
    /// newcomers: none once we know we are alone.
    pub(super) fn reserve(&self, now: Instant, limit: f64) -> f64 {
        let alone = self
            .alone_since
            .is_some_and(|since| now.saturating_duration_since(since) >= ALONE_AFTER);
        if alone {
            0.0
        } else {
            RESERVE.min((limit * RESERVE_FRACTION).floor())
        }
    }

    /// A success: a cut share grows back.
    pub(super) fn on_success(&mut self) {
        if let Some(share) = self.share.as_mut() {
            *share = (*share + SHARE_INCREASE).min(1.0);
        }
    }

    /// A refusal although the policy rate said a unit was there: others
    /// spend the quota too.
    pub(super) fn on_refusal(&mut self) {
        let share = self.share.unwrap_or(1.0);
        self.share = Some((share * SHARE_DECREASE).max(MIN_SHARE));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: Option<f64> = Some(20.0);

    /// What readings `(remaining, in flight, admitted)` received 1 ms
    /// apart show.
    fn after(readings: &[(u64, u32, u64)]) -> Sharing {
        let mut sharing = Sharing::default();
        let t0 = Instant::now();
        for (i, &(remaining, in_flight, admitted)) in readings.iter().enumerate() {
            let now = t0 + Duration::from_millis(i as u64);
            sharing.notice_others(now, remaining, in_flight, LIMIT, admitted);
        }
        sharing
    }

    #[test]
    fn a_late_count_after_a_rise_while_ours_were_in_flight_is_not_others() {
        // `1` with one request in flight, which the server had counted
        // before it: answered late, `3`; then one more send, `0`. From the
        // `3`, two units nobody of ours spent; from the `1`, none.
        let sharing = after(&[(2, 2, 18), (1, 1, 18), (3, 0, 18), (0, 0, 19)]);
        assert!(sharing.never_saw_others());
        assert_eq!(sharing.share(), 1.0);
        // Drawn down: 18 from the whole quota to the first reading (our
        // 18 sends), 2 → 1, then 1 → 0 (the smaller fall), not 3 → 0.
        assert_eq!(sharing.drawn_alone, 20);
    }

    #[test]
    fn a_first_reading_counts_as_drawn_alone_only_if_we_spent_all_it_fell_by() {
        // A whole quota of 20 read 17 after our 3 sends: nobody else spent.
        assert_eq!(after(&[(17, 0, 3)]).drawn_alone, 3);
        // Read 5 after one send (a latecomer to a quota others spend, or
        // one not yet refilled): no evidence either way.
        let late = after(&[(5, 0, 1)]);
        assert_eq!(late.drawn_alone, 0);
        assert_eq!(late.share(), 1.0);
    }

    #[test]
    fn a_rise_with_nothing_of_ours_in_flight_is_compared_alone() {
        // Nothing in flight at the `1`: the `3` is units come back, and
        // the fall to `0` with one send is two units of others.
        let sharing = after(&[(2, 1, 18), (1, 0, 18), (3, 0, 18), (0, 0, 19)]);
        assert!(!sharing.never_saw_others());
        assert!((sharing.share() - 1.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn the_reading_before_a_rise_is_compared_with_the_next_reading_only() {
        // A window's boundary: `1` with one in flight, then the new
        // window's `19`, `17`; then `10` with one send: six units of
        // others, whatever the `1` before the rise says.
        let sharing = after(&[(1, 1, 20), (19, 0, 20), (17, 0, 22), (10, 0, 23)]);
        assert!(!sharing.never_saw_others());
        assert!((sharing.share() - 1.0 / 7.0).abs() < 1e-9);
    }

    #[test]
    fn an_empty_quota_read_again_shows_nobody_alone() {
        // Nothing left at two readings, nothing of ours spent between:
        // others may have taken every unit that came back. The reserve
        // stays until a non-empty reading shows nobody else spending.
        let sharing = after(&[(0, 0, 0), (0, 0, 0)]);
        let later = Instant::now() + Duration::from_secs(5);
        assert_eq!(sharing.reserve(later, 20.0), RESERVE);
    }

    #[test]
    fn a_unit_of_others_between_each_two_readings_adds_up() {
        // Another client spends a unit for each of ours: one unit beyond
        // ours per reading, under the slack at each, two by the second.
        let sharing = after(&[(10, 0, 0), (8, 0, 1), (6, 0, 2)]);
        assert!(!sharing.never_saw_others());
        assert!((sharing.share() - 0.5).abs() < 1e-9);
        assert_eq!(sharing.drawn_alone, 0);
    }

    #[test]
    fn one_unit_beyond_ours_in_a_run_of_readings_is_rounding() {
        let sharing = after(&[(10, 0, 0), (8, 0, 1), (7, 0, 2), (6, 0, 3)]);
        assert!(sharing.never_saw_others());
        assert_eq!(sharing.share(), 1.0);
    }

    #[test]
    fn an_equal_reading_is_no_rise() {
        // `5` twice, one of ours in flight at the first: the second is
        // the base alone, and the fall to `3` with nothing sent or in
        // flight is two units of others.
        let sharing = after(&[(5, 1, 10), (5, 0, 10), (3, 0, 10)]);
        assert!(!sharing.never_saw_others());
        // Four of ours and four of theirs: half the rate is ours.
        let sharing = after(&[(19, 0, 0), (11, 0, 4)]);
        assert!((sharing.share() - 0.5).abs() < 1e-9);
    }
}
