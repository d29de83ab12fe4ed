//! Probing, then observed refills, for a quota without a window (see the
//! parent module's docs, point 4).

use std::time::{Duration, Instant};

use super::super::time::{later, wait_from_secs};
use super::{EPSILON, MEASURE_HORIZON, Pacer, opens_short, secs};

/// Observed refills are measured over at least this span: the readings are
/// whole units, so at 20/s the lower bound is 10 % under the truth after
/// 0.5 s and closes in as the span grows (up to `MEASURE_HORIZON`).
const REFILL_SPAN: Duration = Duration::from_millis(500);
/// A window of a quota read as fixed windows whose first reading shows no
/// more than this many units left (counting our requests in flight) did
/// not come back at a boundary (see [`Pacer::judge_refill`]). Not more: a
/// sliding log's window opens with the units its last burst's first sends
/// gave back, and more come back as we spend them. (After a whole-second
/// hint, no log is recognised: any window opening short is probed.)
const OPENED_SPENT: u64 = 1;
/// A probe answered with at least this fraction of the limit left found
/// the units come back at once (see [`Pacer::judge_refill`]).
const CAME_BACK_AT_ONCE: f64 = 0.5;

/// How a quota without a window refills.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) enum Refill {
    /// Not known yet.
    #[default]
    Unknown,
    /// The probe is on its way, sent when the linear-refill hypothesis
    /// (`rate`) said a unit was back; `expires` when its reset passes (a
    /// cancelled probe never reports).
    Probing { rate: f64, expires: Instant },
    /// The probe succeeded: the server refills continuously; `measured`
    /// once its readings showed a refill (until then a success that was
    /// not the probe's may have misled us).
    Continuous { measured: bool },
    /// The probe was refused: nothing comes back before the reset.
    Windowed,
    /// The dialect says so ([`Quota::fixed_window`]): nothing comes back
    /// before the reset, and no probe asks.
    ///
    /// [`Quota::fixed_window`]: crate::signal::Quota::fixed_window
    Stated,
}

impl Refill {
    /// Whether nothing comes back before the reset.
    pub(super) fn windowed(self) -> bool {
        matches!(self, Refill::Windowed | Refill::Stated)
    }
}

/// The reading that opened a window probed once more
/// ([`Pacer::judge_refill`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct AgainOpened {
    at: Instant,
    remaining: u64,
    /// Our requests in flight then.
    in_flight: u32,
    /// The successes counted before it.
    successes: u64,
}

/// A reading of `remaining` and the successes counted up to it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reading {
    at: Instant,
    remaining: u64,
    successes: u64,
}

impl Pacer {
    /// A quota without a rate is spent: send the probe when the
    /// linear-refill hypothesis says a unit is back, else wait.
    pub(super) fn probe_or_wait(
        &mut self,
        now: Instant,
        since: Instant,
        reset: Instant,
    ) -> Result<(), Duration> {
        let until_reset = reset.saturating_duration_since(now);
        let Some(limit) = self.capacity().filter(|l| *l >= 1.0) else {
            return Err(until_reset);
        };
        if let Refill::Probing { expires, .. } = self.refill
            && now >= expires
        {
            self.refill = Refill::Unknown;
        }
        let cycle = reset.saturating_duration_since(since);
        let unit = cycle.div_f64(limit);
        // The mirror may be below zero (our requests in flight spend the
        // first units back): the probe's unit is the one after those.
        let owed = (1.0 - self.estimate.map_or(0.0, |e| e.tokens)).max(1.0);
        let due = later(since, wait_from_secs(secs(unit) * owed));
        match self.refill {
            Refill::Unknown if now >= due => {
                self.refill = Refill::Probing {
                    rate: 1.0 / secs(unit).max(EPSILON),
                    expires: reset,
                };
                // The probe spends the unit the hypothesis says is back.
                if let Some(est) = self.estimate.as_mut() {
                    est.tokens -= 1.0;
                    est.at = now;
                }
                Ok(())
            }
            Refill::Unknown => Err(due.saturating_duration_since(now)),
            // Look again a unit later: the probe's answer will be in.
            Refill::Probing { .. } => Err(unit.max(Duration::from_millis(1)).min(until_reset)),
            Refill::Continuous { .. } | Refill::Windowed | Refill::Stated => Err(until_reset),
        }
    }

    /// A reading of `remaining`, with `others` of our requests in flight,
    /// of a quota without a stated window whose refused probe made it read
    /// as fixed windows: a window that opens with a unit left at most did
    /// not come back at a boundary (a sliding window counter's previous
    /// window weighs on its next one, which gives units back at its rate;
    /// or others spent it). After a whole-second hint, any window opening
    /// short of the limit less the request its reading answers (what a
    /// fixed window holds then): such a hint measures no length, so the
    /// log rule (`Pacer::notice_sliding`), which takes the windows that
    /// open short with a precise one, cannot. Such a quota is probed once
    /// more, at the linear-refill instant from that reading. A success
    /// means continuous refills after all, unless its reading shows half
    /// the limit or more left: then the units came back at once (a sliding
    /// log's, as the sends of its last burst leave it), and it stays
    /// windows. At most one probe more per scope: refused (others
    /// spending), windows for good; a refusal after its success halves
    /// the rate, as once refills are measured (`Pacer::refused`). Before
    /// the probe, readings that show more units back, while we alone spend
    /// the window, than a counter's weight decays in the time (with a
    /// measured length) are a sliding log's last burst leaving it: a log
    /// from then on, and no probe.
    pub(super) fn judge_refill(&mut self, now: Instant, remaining: u64, others: u32) {
        let Some(limit) = self.policy_capacity.filter(|_| self.policy_rate.is_none()) else {
            return;
        };
        let back = remaining.saturating_add(u64::from(others));
        let short = opens_short(remaining, others, limit as u64)
            && (back <= OPENED_SPENT || self.coarse_hints);
        let faster_than_a_counter =
            others == 0 && self.gave_back_faster_than_a_counter(now, remaining, limit);
        match self.refill {
            Refill::Windowed
                if !self.probed_again()
                    && self.window.fresh()
                    && !self.window.is_sliding()
                    && short =>
            {
                self.refill = Refill::Unknown;
                self.again_opened = Some(AgainOpened {
                    at: now,
                    remaining,
                    in_flight: others,
                    successes: self.successes,
                });
                // The refusal's rate says nothing until the probe tells
                // how the quota refills.
                self.spent_unprobed = true;
                self.observed_rate = None;
            }
            Refill::Probing { .. }
                if self.probed_again() && back as f64 >= limit * CAME_BACK_AT_ONCE =>
            {
                self.refill = Refill::Windowed;
            }
            // The window probed once more gives units back as we spend it:
            // the last burst leaving a sliding log, as its opening was
            // short by a few milliseconds. Its probe would be refused (the
            // log full again with this burst) and, after a whole-second
            // hint, hold the next window to that hint's end; held to its
            // reset as a fixed window, the send at the epoch second it
            // names is refused too (a log's reset names its oldest send's
            // exit). A log of the measured length from now on.
            Refill::Unknown
                if self.probed_again()
                    && faster_than_a_counter
                    && self.sharing.never_saw_others() =>
            {
                self.refill = Refill::Windowed;
                self.window.slide();
            }
            _ => {}
        }
    }

    /// Whether the window probed once more gave back, by a reading of
    /// `remaining` received at `now` with none of our requests in flight,
    /// more units than a counter's weight decays in the time since it
    /// opened (its limit per window, floored: one more at most): our
    /// successes since, less what the count fell by, less the requests in
    /// flight at the opening (its count may hold them already). Only with
    /// a window's length measured.
    fn gave_back_faster_than_a_counter(&self, now: Instant, remaining: u64, limit: f64) -> bool {
        let (Some(opened), Some(window)) = (self.again_opened, self.window.length()) else {
            return false;
        };
        let sent = self.successes.saturating_sub(opened.successes);
        let back = remaining
            .saturating_add(sent)
            .saturating_sub(opened.remaining)
            .saturating_sub(u64::from(opened.in_flight)) as f64;
        let elapsed = now.saturating_duration_since(opened.at);
        let decayed = limit * secs(elapsed) / secs(window).max(EPSILON);
        back > 1.0 + decayed
    }

    /// Measures the rate of a continuously refilled quota from the last
    /// reading and the first one of the span (see the module docs, 4).
    pub(super) fn observe_refills(&mut self) {
        let Some((at, remaining)) = self.last_reading.take() else {
            return;
        };
        if !matches!(self.refill, Refill::Continuous { .. }) {
            return;
        }
        let reading = Reading {
            at,
            remaining,
            successes: self.successes,
        };
        // Nothing is learned across a full bucket (its refills are lost).
        let full = self.capacity().is_some_and(|c| remaining as f64 + 1.0 >= c);
        let Some(first) = self
            .first_reading
            .filter(|f| !full && at.saturating_duration_since(f.at) <= MEASURE_HORIZON)
        else {
            self.first_reading = Some(reading);
            return;
        };
        let span = at.saturating_duration_since(first.at);
        if span < REFILL_SPAN {
            return;
        }
        // Each reading is the floor of the server's units: what it refilled
        // in between is at least this.
        let refilled = remaining as f64 - first.remaining as f64
            + (reading.successes - first.successes) as f64
            - 1.0;
        if refilled > 0.0 {
            self.observed_rate = Some(refilled / secs(span));
            self.refill = Refill::Continuous { measured: true };
        }
    }
}
