//! A stated rate the quota does not keep: readings that show no refill
//! while we alone drew the quota down (see the parent module's docs,
//! point 6).
//!
//! A quota stating `limit` per `window` may refill continuously (a token
//! bucket) or all at once at a boundary (a fixed window, a sliding log).
//! Until something says which, the mirror refills at the policy rate. On a
//! window, that paces the window's last units one by one (the reserve for
//! newcomers, then a unit per `window / limit`), so the refusal that shows
//! the kind comes late, and its whole-second `Retry-After` is rounded up
//! from there: a window opened by our own first request opens that much
//! later, and every window after it too. On `must_show`'s windows with IETF
//! fields and `Retry-After` seconds, the refusal came about 0.2 s into the
//! first window and 100 successes took 4.2–4.3 s against the plain
//! `Retry-After` client's 4.0 s.
//!
//! Two readings bound what came back between them, whatever the order in
//! which the server counted our requests. Reading A (`R_A`) was received at
//! `received_A`; B (`R_B`) answers a request sent at `sent_B`. The server
//! counted A's request before we received its answer and B's after we sent
//! it, so at least `span = sent_B − received_A` of its time lies between
//! the two counts. It held `[R_A, R_A + 1)` units at the first and
//! `[R_B, R_B + 1)` at the second, having counted `n` requests in between,
//! so it refilled fewer than `R_B + 1 − R_A + n` units. `n` is at most our
//! sends so far less those answered before A's request was sent (counted
//! before it) and A's own. A bucket refilling at the stated `rate` adds at
//! least `rate · span`, or, if it filled up on the way, more than its room
//! at A, `limit − 1 − R_A` (from full, `n` counts leave at least
//! `limit − n`). So
//!
//! ```text
//! min(rate · span, limit − 1 − R_A) ≥ R_B + 1 − R_A + n
//! ```
//!
//! says the quota did not refill at its stated rate: for a lone client (the
//! caller checks that), its units come back at a boundary. On a window it
//! holds from the second paced send on (`n = 2`, nothing back, `span`
//! above one unit's time), a refusal earlier than any other rule sees it.
//! Every reading is a candidate for A: the longest span shows
//! most, but an early reading has little room (a bucket just below full
//! may have filled up) and one whose request went with others still out
//! counts those against itself (`n` includes them). So the last
//! [`MAX_ANCHORS`] readings are kept that no earlier one outdoes in both,
//! and each new reading is measured from all of them. At concurrency 4 on
//! a window, only a reading of a paced send (nothing else out) shows it
//! before the next send would be refused.

use std::collections::VecDeque;
use std::time::Instant;

use super::{EPSILON, secs};

/// Most sends remembered while unanswered (40 bytes each): a send that
/// never answers (cancelled, a transport error) leaves at the front.
const MAX_OUT: usize = 256;
/// Most readings kept to measure from (40 bytes each; the oldest leaves).
const MAX_ANCHORS: usize = 8;

/// One of our sends not answered yet.
#[derive(Debug, Clone, Copy)]
struct Out {
    seq: u64,
    sent: Instant,
    /// Answers received before it was sent.
    answered_before: u64,
    /// Our sends still out when it was sent (the server may have counted
    /// them before or after it).
    out_then: u64,
}

/// A reading spans are measured from.
#[derive(Debug, Clone, Copy)]
struct Anchor {
    received: Instant,
    remaining: u64,
    /// Answers received before its request was sent.
    answered_before: u64,
    /// Our sends still out when its request was sent: counted against it.
    out_then: u64,
}

impl Anchor {
    /// The most a bucket may be short of full at it: `limit − 1 − R_A`.
    fn room(&self, limit: f64) -> f64 {
        limit - 1.0 - self.remaining as f64
    }

    /// What it can show at most: its room, less the sends that may have
    /// been counted on either side of it.
    fn reach(&self, limit: f64) -> f64 {
        self.room(limit) - self.out_then as f64
    }
}

/// Our sends and answers, and the readings refills are measured from.
#[derive(Debug, Clone, Default)]
pub(super) struct Drawdown {
    out: VecDeque<Out>,
    sent: u64,
    answered: u64,
    anchors: VecDeque<Anchor>,
    /// Answers received before the last reading's request was sent.
    last_base: Option<u64>,
    /// The same for the current window's opening: the last reading of the
    /// window before (see [`Self::window_counts_at_most`]).
    window_base: Option<u64>,
}

impl Drawdown {
    /// Send `seq` went at `now`.
    pub(super) fn sent(&mut self, now: Instant, seq: Option<u64>) {
        let out_then = self.sent.saturating_sub(self.answered);
        self.sent = self.sent.saturating_add(1);
        let Some(seq) = seq else {
            return;
        };
        if self.out.len() >= MAX_OUT {
            self.out.pop_front();
        }
        self.out.push_back(Out {
            seq,
            sent: now,
            answered_before: self.answered,
            out_then,
        });
    }

    /// Units spent (sends admitted), ever.
    pub(super) fn admitted(&self) -> u64 {
        self.sent
    }

    /// Send `seq`, if it is still out.
    fn out(&self, seq: Option<u64>) -> Option<Out> {
        seq.and_then(|seq| self.out.iter().find(|o| o.seq == seq))
            .copied()
    }

    /// Send `seq` was answered.
    pub(super) fn answered(&mut self, seq: u64) {
        self.answered = self.answered.saturating_add(1);
        if let Some(i) = self.out.iter().position(|o| o.seq == seq) {
            self.out.remove(i);
        }
    }

    /// A reading in the answer to send `seq` was read; `opened` says it
    /// opened a new window.
    pub(super) fn read(&mut self, seq: Option<u64>, opened: bool) {
        if opened {
            self.window_base = self.last_base;
        }
        self.last_base = self.out(seq).map(|o| o.answered_before);
    }

    /// The most of our sends the current window can have counted: those not
    /// answered before the previous window's last reading was sent, less
    /// that one (counted in its own window, as its reading said). A send
    /// answered before it was counted before it too.
    pub(super) fn window_counts_at_most(&self) -> Option<u64> {
        let base = self.window_base?;
        Some(self.sent.saturating_sub(base).saturating_sub(1))
    }

    /// A reading of `remaining`, received at `now` in the answer to send
    /// `seq`: whether it shows that a quota of `limit` did not refill at
    /// `rate` units per second since one of the readings kept (module
    /// docs). The reading is kept too, unless one kept already shows as
    /// much from earlier.
    pub(super) fn unrefilled(
        &mut self,
        now: Instant,
        seq: Option<u64>,
        remaining: u64,
        rate: f64,
        limit: f64,
    ) -> bool {
        let Some(b) = self.out(seq) else {
            return false;
        };
        let unrefilled = self.anchors.iter().any(|a| {
            // (Sent before the anchor's answer came: no span to measure.)
            let span = b.sent.checked_duration_since(a.received);
            let due = span.map_or(0.0, |span| rate * secs(span));
            let counted = self
                .sent
                .saturating_sub(a.answered_before)
                .saturating_sub(1);
            let came_back_under = (remaining as f64 + 1.0 + counted as f64) - a.remaining as f64;
            span.is_some() && due.min(a.room(limit)) >= came_back_under - EPSILON
        });
        let here = Anchor {
            received: now,
            remaining,
            answered_before: b.answered_before,
            out_then: b.out_then,
        };
        let covered = self
            .anchors
            .iter()
            .any(|a| a.out_then <= here.out_then && a.reach(limit) >= here.reach(limit));
        if !covered {
            if self.anchors.len() >= MAX_ANCHORS {
                self.anchors.pop_front();
            }
            self.anchors.push_back(here);
        }
        unrefilled
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Sends `seq` at `at` and reads its answer `remaining` 50 µs later.
    fn round_trip(d: &mut Drawdown, seq: u64, at: Instant, remaining: u64) -> bool {
        d.sent(at, Some(seq));
        let answer = at + Duration::from_micros(50);
        let unrefilled = d.unrefilled(answer, Some(seq), remaining, 20.0, 20.0);
        d.answered(seq);
        unrefilled
    }

    #[test]
    fn a_window_shows_no_refill_once_a_unit_had_time_to_come_back() {
        let t0 = Instant::now();
        let mut d = Drawdown::default();
        // A burst of 18, one after the other in microseconds.
        for seq in 0..18 {
            let at = t0 + Duration::from_micros(100 * seq);
            assert!(!round_trip(&mut d, seq, at, 19 - seq));
        }
        // 50 ms on (one unit at 20/s), nothing came back: a bucket's
        // rounding could still hide it.
        assert!(!round_trip(&mut d, 18, t0 + ms(50), 1));
        // 100 ms on, two sends and still nothing back.
        assert!(round_trip(&mut d, 19, t0 + ms(100), 0));
    }

    #[test]
    fn a_bucket_refilling_at_its_rate_never_shows_it() {
        let t0 = Instant::now();
        let mut d = Drawdown::default();
        for seq in 0..18 {
            let at = t0 + Duration::from_micros(100 * seq);
            assert!(!round_trip(&mut d, seq, at, 19 - seq));
        }
        // A unit every 50 ms comes back and one is spent: the count stays.
        for (i, seq) in (18..60).enumerate() {
            let at = t0 + ms(50 * (i as u64 + 1));
            assert!(!round_trip(&mut d, seq, at, 1), "send {seq}");
        }
    }

    #[test]
    fn requests_in_flight_at_the_anchor_are_counted_against_it() {
        let t0 = Instant::now();
        let mut d = Drawdown::default();
        for seq in 0..4 {
            d.sent(t0, Some(seq));
        }
        // The anchor says 8 with sends 1 to 3 still out: counted after it.
        assert!(!d.unrefilled(t0 + ms(1), Some(0), 8, 20.0, 20.0));
        d.answered(0);
        // Their answers were sent before it: no span of their own.
        for seq in 1..4 {
            assert!(!d.unrefilled(t0 + ms(2), Some(seq), 8 - seq, 20.0, 20.0));
            d.answered(seq);
        }
        // 4 left after four counts and 29 ms (0.58 units at 20/s): no
        // refill, but none was due either.
        d.sent(t0 + ms(30), Some(4));
        assert!(!d.unrefilled(t0 + ms(31), Some(4), 4, 20.0, 20.0));
        d.answered(4);
        // 3 left after five counts and 59 ms: a bucket would say 4.
        d.sent(t0 + ms(60), Some(5));
        assert!(d.unrefilled(t0 + ms(61), Some(5), 3, 20.0, 20.0));
    }

    #[test]
    fn a_reading_without_its_send_tells_nothing() {
        let t0 = Instant::now();
        let mut d = Drawdown::default();
        assert!(!d.unrefilled(t0, Some(7), 0, 20.0, 20.0));
        assert!(!d.unrefilled(t0, None, 0, 20.0, 20.0));
    }

    #[test]
    fn a_bucket_that_filled_up_since_the_anchor_never_shows_it() {
        let t0 = Instant::now();
        let mut d = Drawdown::default();
        // Full (20), two sends: 18 left, room for one more unit to come
        // back before it is full again.
        assert!(!round_trip(&mut d, 0, t0, 19));
        assert!(!round_trip(&mut d, 1, t0 + ms(1), 18));
        // A second idle: 20 units due, all but one clipped at the limit.
        // One send later it says 19, fewer than 20 due would give: the
        // clipping explains it, not a window.
        assert!(!round_trip(&mut d, 2, t0 + ms(1001), 19));
    }

    #[test]
    fn an_answer_out_of_order_forgets_only_its_own_send() {
        let t0 = Instant::now();
        let mut d = Drawdown::default();
        d.sent(t0, Some(0));
        d.sent(t0, Some(1));
        d.answered(1);
        // Send 0 is still out: its reading is the last one, and a window
        // opening after it may have counted both sends but it.
        d.read(Some(0), false);
        d.read(None, true);
        assert_eq!(d.window_counts_at_most(), Some(1));
    }

    #[test]
    fn a_reading_an_earlier_one_outdoes_is_not_kept() {
        let t0 = Instant::now();
        let mut d = Drawdown::default();
        // Sent alone, 10 left: room 9 to show a missing refill.
        assert!(!round_trip(&mut d, 0, t0, 10));
        // Sent with two others out and 9 left: room 10, less the 2 it
        // counts against itself, shows no more than the first.
        d.sent(t0 + ms(1), Some(1));
        d.sent(t0 + ms(1), Some(2));
        d.sent(t0 + ms(1), Some(3));
        assert!(!d.unrefilled(t0 + ms(2), Some(3), 9, 20.0, 20.0));
        assert_eq!(d.anchors.len(), 1);
    }

    #[test]
    fn exactly_one_units_time_without_it_is_enough() {
        let t0 = Instant::now();
        let mut d = Drawdown::default();
        assert!(!round_trip(&mut d, 0, t0, 10));
        // Sent 50 ms after the anchor's answer (one unit at 20/s), 9 left
        // after one count: a bucket would say 10.
        let answer = t0 + Duration::from_micros(50);
        d.sent(answer + ms(50), Some(1));
        assert!(d.unrefilled(answer + ms(51), Some(1), 9, 20.0, 20.0));
    }
}
