//! A refusal's precise hint as the server's promise of a unit at its end,
//! before the end a fixed window's readings guarantee (see the parent
//! module's docs, point 6).
//!
//! A whole-second reset (`RateLimit: t=1`, `RateLimit-Reset: 1`) puts a
//! clock-aligned window's guaranteed end up to a second after its boundary;
//! a refusal's `retry_after_ms` names the boundary to the millisecond. So
//! the mirror lends one unit at the hint's end, and the answer to the send
//! it lets go says the rest: a window opening whole is the next window (its
//! readings now guarantee its end to a round trip). A reading that opens no
//! whole window, or a refusal of that send, shows hints that end no window
//! (a bucket whose count is off by one, a sliding log's single unit): no
//! unit is lent again (one send at most, once per scope).

use std::time::{Duration, Instant};

use super::super::time::later;

/// The unit promised by the last refusal's precise hint.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Promise {
    /// The end of the last refusal's precise hint, until a reading comes
    /// after it or a send takes the unit.
    at: Option<Instant>,
    /// The unit was taken by a send whose number is not known yet
    /// (see [`Self::sent`]).
    lent: bool,
    /// The send that took the unit, until its answer.
    sent: Option<u64>,
    /// A lent unit's answer opened no whole window: hints end no window
    /// here, and no unit is lent again.
    refuted: bool,
}

impl Promise {
    /// A refusal at `now` with the server's hint, if any, `coarse` when
    /// rounded to whole seconds (`engine/hint.rs`): a precise one
    /// longer than `unit` (one unit's time at the quota's rate, if known)
    /// promises a unit at its end. A whole-second hint is rounded up, a
    /// zero one says nothing, and one within a unit's time is what a
    /// bucket says of its next unit: the mirror refilled at the rate lets
    /// that unit go then anyway, and a send lent at it would be judged on
    /// a bucket's reading.
    pub(super) fn refused(
        &mut self,
        now: Instant,
        hint: Option<Duration>,
        coarse: bool,
        unit: Option<Duration>,
    ) {
        self.at = hint
            .filter(|_| !coarse && !self.refuted)
            .filter(|h| *h > unit.unwrap_or(Duration::ZERO))
            .map(|h| later(now, h));
    }

    /// Whether the promised unit is there at `now`.
    pub(super) fn due(&self, now: Instant) -> bool {
        self.at.is_some_and(|at| at <= now)
    }

    /// When the promised unit is there, if before `by`.
    pub(super) fn before(&self, by: Instant) -> Option<Instant> {
        self.at.filter(|at| *at < by)
    }

    /// The unit is taken by the send being admitted.
    pub(super) fn lend(&mut self) {
        self.at = None;
        self.lent = true;
    }

    /// Send `seq` went: if it took the lent unit, its answer is judged.
    pub(super) fn sent(&mut self, seq: Option<u64>) {
        if std::mem::take(&mut self.lent) {
            self.sent = seq;
        }
    }

    /// A reading received at `now`: one at or after the promised instant
    /// tells what came back, and the promise is over.
    pub(super) fn read(&mut self, now: Instant) {
        self.at = self.at.filter(|at| now < *at);
    }

    /// The answer to send `seq`: if it took the lent unit, a refusal, or a
    /// reading that did not open a whole window (`opened_whole`; none
    /// without a reading), refutes lending for good. Returns whether it
    /// took the lent unit.
    pub(super) fn answered(&mut self, seq: Option<u64>, opened_whole: bool) -> bool {
        let lent = seq.is_some() && self.sent == seq;
        if lent {
            self.sent = None;
            if !opened_whole {
                self.refuted = true;
                self.at = None;
            }
        }
        lent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_precise_hint_promises_a_unit_at_its_end_only() {
        let t0 = Instant::now();
        let mut promise = Promise::default();
        promise.refused(t0, Some(ms(25)), false, None);
        assert!(!promise.due(t0 + ms(24)));
        assert!(promise.due(t0 + ms(25)));
        assert_eq!(promise.before(t0 + ms(800)), Some(t0 + ms(25)));
        assert_eq!(promise.before(t0 + ms(25)), None);
        // Within a unit's time at the rate: none.
        promise.refused(t0, Some(ms(50)), false, Some(ms(50)));
        assert!(!promise.due(t0 + ms(50)));
        promise.refused(t0, Some(ms(51)), false, Some(ms(50)));
        assert!(promise.due(t0 + ms(51)));
        // Whole seconds, zero, or none: no promise, the last one dropped.
        for hint in [Some(Duration::from_secs(1)), Some(Duration::ZERO), None] {
            promise.refused(t0, Some(ms(25)), false, None);
            let coarse = hint.is_none_or(|h| h.subsec_nanos() == 0);
            promise.refused(t0, hint, coarse, None);
            assert!(!promise.due(t0 + ms(1000)), "{hint:?}");
        }
    }

    #[test]
    fn a_reading_at_or_after_the_end_closes_the_promise() {
        let t0 = Instant::now();
        let mut promise = Promise::default();
        promise.refused(t0, Some(ms(25)), false, None);
        promise.read(t0 + ms(24));
        assert!(promise.due(t0 + ms(25)));
        promise.read(t0 + ms(25));
        assert!(!promise.due(t0 + ms(25)));
    }

    #[test]
    fn a_lent_unit_whose_answer_opens_no_whole_window_ends_lending() {
        let t0 = Instant::now();
        let mut promise = Promise::default();
        // Lent to send 7; another send's answer judges nothing.
        promise.refused(t0, Some(ms(25)), false, None);
        promise.lend();
        assert!(!promise.due(t0 + ms(25)));
        promise.sent(Some(7));
        promise.answered(Some(6), false);
        promise.refused(t0, Some(ms(25)), false, None);
        assert!(promise.due(t0 + ms(25)));
        // A whole window opened: lent again.
        promise.lend();
        promise.sent(Some(8));
        promise.answered(Some(8), true);
        promise.refused(t0, Some(ms(25)), false, None);
        assert!(promise.due(t0 + ms(25)));
        // No whole window: never again.
        promise.lend();
        promise.sent(Some(9));
        promise.answered(Some(9), false);
        promise.refused(t0, Some(ms(25)), false, None);
        assert!(!promise.due(t0 + ms(25)));
    }

    #[test]
    fn a_send_that_took_no_lent_unit_is_not_judged() {
        let t0 = Instant::now();
        let mut promise = Promise::default();
        promise.sent(Some(3));
        promise.answered(Some(3), false);
        promise.refused(t0, Some(ms(25)), false, None);
        assert!(promise.due(t0 + ms(25)));
        // A send without a number is never judged.
        promise.lend();
        promise.sent(None);
        promise.answered(None, false);
        promise.refused(t0, Some(ms(25)), false, None);
        assert!(promise.due(t0 + ms(25)));
    }
}
