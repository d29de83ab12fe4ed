//! A learned cycle: at most a burst of sends in any span of the cycle's
//! length (a sliding log of our own sends), for a quota that states no
//! policy once refusals taught its burst and cycle (`learned.rs`).
//!
//! One rule fits every kind the refusals cannot tell apart: a fixed window
//! of length W ≤ cycle never holds more than the burst of our sends,
//! whatever its phase; a sliding log of W gets each unit back no earlier
//! than the send it replaces, one cycle later, in the same spacing as the
//! burst before (a second burst faster than the first would run into units
//! not yet back); a bucket refilling the burst within the cycle is never
//! empty at a send.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::super::time::later;

/// Most sends remembered per scope (32 bytes each). A larger burst is paced
/// as this many sends per the same share of the cycle: the same rate, in
/// smaller bursts.
pub(super) const MAX_REMEMBERED: usize = 256;

/// One of our sends: when it left, and when its success came back.
#[derive(Debug, Clone, Copy)]
struct Send {
    /// The engine's number for it (none in unit tests of the rule alone).
    seq: Option<u64>,
    sent: Instant,
    answered: Option<Instant>,
}

impl Send {
    /// When the server counted it, at the latest: a request is counted
    /// between its send and its answer, so only the answer bounds it (a
    /// unit given back a cycle after the *send* may not be back yet when
    /// this request was slower to arrive than the next one).
    fn counted_by(self) -> Instant {
        self.answered.unwrap_or(self.sent)
    }
}

/// Our recent sends, oldest first.
#[derive(Debug, Clone, Default)]
pub(super) struct Cycle {
    sends: VecDeque<Send>,
}

impl Cycle {
    /// Remembers send `seq` at `now`.
    pub(super) fn record(&mut self, now: Instant, seq: Option<u64>) {
        if self.sends.len() >= MAX_REMEMBERED {
            self.sends.pop_front();
        }
        self.sends.push_back(Send {
            seq,
            sent: now,
            answered: None,
        });
    }

    /// Send `seq` succeeded, answered at `now`.
    pub(super) fn answered(&mut self, seq: u64, now: Instant) {
        if let Some(send) = self.sends.iter_mut().find(|s| s.seq == Some(seq)) {
            send.answered = Some(now.max(send.sent));
        }
    }

    /// Send `seq` ended with no verdict on the quota (a server error, a
    /// transport error, cancelled): the server may have counted it, so it
    /// keeps its unit, counted from `at` (from its send when unknown), and
    /// no answer is awaited from it.
    pub(super) fn ended(&mut self, seq: u64, at: Option<Instant>) {
        if let Some(send) = self.sends.iter_mut().find(|s| s.seq == Some(seq)) {
            let at = at.map_or(send.sent, |at| at.max(send.sent));
            send.answered.get_or_insert(at);
        }
    }

    /// Send `seq` was refused: it holds no unit.
    pub(super) fn forget(&mut self, seq: u64) {
        if let Some(i) = self.sends.iter().position(|s| s.seq == Some(seq)) {
            self.sends.remove(i);
        }
    }

    /// How many sends are remembered.
    #[cfg(test)]
    pub(super) fn remembered(&self) -> usize {
        self.sends.len()
    }

    /// Whether a send that left at `from` or later is still unanswered.
    pub(super) fn unanswered_since(&self, from: Instant) -> bool {
        self.unanswered_count_since(from) > 0
    }

    /// How many sends that left at `from` or later are still unanswered.
    pub(super) fn unanswered_count_since(&self, from: Instant) -> usize {
        self.sends
            .iter()
            .filter(|s| s.answered.is_none() && s.sent >= from)
            .count()
    }

    /// Whether at least `sends` of ours that hold a unit (refused ones are
    /// forgotten) left within `span` before `now`. More than are
    /// remembered are judged at the same rate over a shorter span, as the
    /// cycle rule paces a larger burst.
    pub(super) fn sent_within(&self, now: Instant, sends: f64, span: Duration) -> bool {
        let (sends, span) = scaled(sends.ceil(), span);
        // A span reaching back past what the clock can name holds them all.
        let from = now.checked_sub(span);
        let within = self
            .sends
            .iter()
            .filter(|s| from.is_none_or(|from| s.sent >= from))
            .count();
        within >= sends
    }

    /// Whether the `burst` latest sends remembered all left at `from` or
    /// later (the cycle rule times the next send from them).
    pub(super) fn sent_since(&self, burst: f64, from: Instant) -> bool {
        let burst = remembered(burst);
        self.sends
            .iter()
            .rev()
            .take(burst)
            .filter(|s| s.sent >= from)
            .count()
            >= burst
    }

    /// How long from `now` until one more send keeps at most `burst` sends
    /// in any span of `period` (each counted from its answer, when it has
    /// one); `None` when it may go now.
    pub(super) fn wait(&self, now: Instant, burst: f64, period: Duration) -> Option<Duration> {
        let (burst, period) = scaled(burst, period);
        // The sends still holding a unit at `now`, latest release first:
        // the burst-th of them must release its unit before one more goes.
        let mut held: Vec<Instant> = self
            .sends
            .iter()
            .map(|s| later(s.counted_by(), period))
            .filter(|&due| due > now)
            .collect();
        let i = burst.checked_sub(1)?;
        if held.len() <= i {
            return None;
        }
        let (_, &mut due, _) = held.select_nth_unstable_by(i, |a, b| b.cmp(a));
        Some(due - now)
    }
}

/// `burst` (at least 1) and `period`, scaled down to [`MAX_REMEMBERED`]
/// sends at the same rate.
fn scaled(burst: f64, period: Duration) -> (usize, Duration) {
    let burst = burst.max(1.0);
    let period = if burst <= MAX_REMEMBERED as f64 {
        period
    } else {
        period.mul_f64(MAX_REMEMBERED as f64 / burst)
    };
    (remembered(burst), period)
}

/// The sends of a `burst` the rule counts: at least 1 and at most
/// [`MAX_REMEMBERED`].
fn remembered(burst: f64) -> usize {
    burst.max(1.0).min(MAX_REMEMBERED as f64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_send_waits_for_the_one_a_burst_before_to_be_a_cycle_old() {
        let t0 = Instant::now();
        let mut cycle = Cycle::default();
        // A burst of 3 spread over 20 ms.
        for i in 0..3 {
            assert_eq!(cycle.wait(t0 + ms(10 * i), 3.0, ms(1000)), None);
            cycle.record(t0 + ms(10 * i), None);
        }
        // The 4th goes a cycle after the 1st, the 5th a cycle after the 2nd.
        assert_eq!(cycle.wait(t0 + ms(30), 3.0, ms(1000)), Some(ms(970)));
        assert_eq!(cycle.wait(t0 + ms(1000), 3.0, ms(1000)), None);
        cycle.record(t0 + ms(1000), None);
        assert_eq!(cycle.wait(t0 + ms(1001), 3.0, ms(1000)), Some(ms(9)));
        // A smaller burst (the quota shrank) counts further back.
        assert_eq!(cycle.wait(t0 + ms(1001), 1.0, ms(1000)), Some(ms(999)));
    }

    #[test]
    fn a_send_is_unanswered_from_when_it_left_until_its_answer() {
        let t0 = Instant::now();
        let mut cycle = Cycle::default();
        cycle.record(t0, Some(1));
        cycle.record(t0 + ms(10), Some(2));
        assert!(cycle.unanswered_since(t0 + ms(10)));
        assert!(!cycle.unanswered_since(t0 + ms(11)), "none left since");
        cycle.answered(2, t0 + ms(20));
        assert!(!cycle.unanswered_since(t0 + ms(5)), "send 1 left before");
        assert!(cycle.unanswered_since(t0));
        cycle.answered(1, t0 + ms(20));
        assert!(!cycle.unanswered_since(t0));
    }

    #[test]
    fn the_sends_a_cycle_times_from_left_since_an_instant_or_not() {
        let t0 = Instant::now();
        let mut cycle = Cycle::default();
        for i in 0..4 {
            cycle.record(t0 + ms(10 * i), None);
        }
        // The latest 3 left at 10, 20 and 30 ms; the latest 2 at 20, 30.
        assert!(cycle.sent_since(3.0, t0 + ms(10)));
        assert!(!cycle.sent_since(3.0, t0 + ms(11)));
        assert!(cycle.sent_since(2.0, t0 + ms(20)));
        assert!(!cycle.sent_since(2.0, t0 + ms(21)));
        // Fewer remembered than the burst: not all of a burst left since.
        assert!(!cycle.sent_since(5.0, t0));
    }

    #[test]
    fn a_burst_beyond_the_memory_keeps_its_rate() {
        let t0 = Instant::now();
        let mut cycle = Cycle::default();
        for _ in 0..MAX_REMEMBERED {
            cycle.record(t0, None);
        }
        // 1024 per 4 s is 256 per second.
        assert_eq!(
            cycle.wait(t0, 4.0 * MAX_REMEMBERED as f64, ms(4000)),
            Some(ms(1000))
        );
        assert_eq!(scaled(0.0, ms(5)), (1, ms(5)));
        assert_eq!(scaled(f64::INFINITY, ms(5)), (MAX_REMEMBERED, ms(0)));
    }

    #[test]
    fn sends_within_a_span_are_counted_from_when_they_left() {
        let t0 = Instant::now();
        let mut cycle = Cycle::default();
        cycle.record(t0, Some(1));
        cycle.record(t0 + ms(100), Some(2));
        cycle.record(t0 + ms(200), Some(3));
        cycle.answered(1, t0 + ms(500));
        let now = t0 + ms(500);
        assert!(cycle.sent_within(now, 3.0, ms(500)));
        // Sent before the span, answered within it: not counted.
        assert!(!cycle.sent_within(now, 3.0, ms(499)));
        assert!(cycle.sent_within(now, 2.0, ms(400)));
        // A fraction of a send is a whole one.
        assert!(!cycle.sent_within(now, 2.5, ms(400)));
        assert!(!cycle.sent_within(now, 1.0, ms(299)));
        cycle.forget(3);
        assert!(!cycle.sent_within(now, 2.0, ms(400)));
        // A span longer than the clock's past holds every send.
        assert!(cycle.sent_within(now, 2.0, Duration::MAX));
    }

    #[test]
    fn more_sends_than_remembered_are_judged_at_the_same_rate() {
        let t0 = Instant::now();
        let mut cycle = Cycle::default();
        // One send a millisecond, twice as many as are remembered.
        for i in 0..2 * MAX_REMEMBERED as u64 {
            cycle.record(t0 + ms(i), Some(i));
        }
        let now = t0 + ms(2 * MAX_REMEMBERED as u64);
        // 512 sends within 512 ms: the latest 256 within 256 ms.
        assert!(cycle.sent_within(now, 512.0, ms(512)));
        // Not 512 within 500 ms: fewer than 256 within 250 ms.
        assert!(!cycle.sent_within(now, 512.0, ms(500)));
    }
}
