//! A learned cycle narrowed by probes: the window's length known as an
//! interval, not a point (`learned.rs` measures the cycle, `cycle.rs`
//! paces it).
//!
//! A cycle measured after a bare or whole-second refusal is an upper bound
//! `hi` of the window's length: the spent burst came back no later than
//! the success that measured it. It is as loose as the search that found
//! that success: after a bare refusal the scope retries 1 s later and
//! doubles its pause at each refusal in a row (`Config::unhinted_wait`),
//! retrying 1 s, 3 s, 7 s… after the refusal, so the success may come up
//! to three times as late as the retry refused before it. That retry gave the
//! lower bound `lo`: the window is longer than the span from the burst's
//! first success to that refusal (a window opened no earlier than that
//! success, a sliding log's first unit comes back a window after it, and
//! an aligned window's burst shares its window with a retry refused in
//! it).
//!
//! Paced at `hi` for good, a sliding window counter of 20 per 1 s (the
//! demo server's, in the sweep's harness), whose retry came 2 ms short of
//! its next unit at 1.04 s, was spent once per 3.2 s: 13.0 s for 100
//! successes, 2.5 times its floor.
//! Paced at `lo`, bursts would be refused whenever the window is longer.
//! So while the interval is wide, a cycle opens with one send alone at its
//! geometric midpoint
//!
//! ```text
//! p = √(lo · hi)
//! ```
//!
//! after the send it replaces (the cycle rule's own span: each send
//! counted from its answer). Admitted, the burst was back by then: `hi =
//! p`, and the rest of the burst follows at once. Refused, `lo = p`, and
//! the cycle goes on at `hi`: the probe cost one request and no time (the
//! burst still goes at `hi`), and it says nothing else (no trickle, no
//! search: `Pacer::on_throttle`). One probe per cycle: the next is timed
//! only from sends that left after the last one refused. Each probe takes
//! the square root of `hi / lo`: from 3 to below 1.05 in five.
//!
//! Narrowing stops once `hi − lo` is at most one unit's share of the
//! cycle, `hi / burst`: paced at `hi`, a cycle then gives the window back
//! less than one unit (the trickle after a cycle's refusal gives up one,
//! `burst − 1` per cycle; `learned.rs`). A burst of one unit is never
//! narrowed: a cycle of one send is its own unit's time. Only a learned
//! cycle is narrowed: a stated policy paces by its own numbers.

use std::time::{Duration, Instant};

/// The lower bound of a learned cycle, and the probe narrowing it.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Refine {
    /// The longest span shown shorter than the window.
    lo: Option<Duration>,
    /// The last probe: its send, and the span it was timed at.
    probe: Option<(u64, Duration)>,
    /// That probe, until it ended (`Pacer::ended`, just before its answer
    /// is read): no other goes meanwhile.
    out: Option<u64>,
    /// The last probe refused, and when: the next is timed from sends that
    /// left after it.
    refused: Option<(u64, Instant)>,
}

impl Refine {
    /// A refusal showed `span` shorter than the window.
    pub(super) fn shorter_than(&mut self, span: Duration) {
        self.lo = Some(self.lo.map_or(span, |lo| lo.max(span)));
    }

    /// The span a probe would be timed at, for a cycle of at most `hi` and
    /// a burst of `burst` (module docs): `None` once the interval is
    /// narrow, while a probe is out, or before a refusal gave a lower
    /// bound.
    pub(super) fn span(&self, hi: Duration, burst: f64) -> Option<Duration> {
        if self.out.is_some() {
            return None;
        }
        let (lo, hi) = (self.lo?.as_secs_f64(), hi.as_secs_f64());
        (hi - lo > hi / burst.max(1.0)).then(|| Duration::from_secs_f64((lo * hi).sqrt()))
    }

    /// When the last refused probe was answered: the next probe is timed
    /// only from sends that left after it.
    pub(super) fn refused_at(&self) -> Option<Instant> {
        self.refused.map(|(_, at)| at)
    }

    /// Send `seq` left as a probe timed at `span`.
    pub(super) fn sent(&mut self, seq: u64, span: Duration) {
        self.probe = Some((seq, span));
        self.out = Some(seq);
    }

    /// Send `seq` was answered at `now`: when it was the probe, and the
    /// server admitted it, the span it showed the cycle to be no longer
    /// than.
    pub(super) fn answered(&mut self, seq: u64, now: Instant, admitted: bool) -> Option<Duration> {
        let (_, span) = self.probe.take_if(|(probe, _)| *probe == seq)?;
        if admitted {
            return Some(span);
        }
        self.shorter_than(span);
        self.refused = Some((seq, now));
        None
    }

    /// Send `seq` ended (`Pacer::ended`): answered (its verdict follows,
    /// [`Self::answered`]), failed or cancelled. A probe it was is out no
    /// more.
    pub(super) fn ended(&mut self, seq: u64) {
        self.out.take_if(|out| *out == seq);
    }

    /// Whether send `seq`'s refusal was a probe's: it says the window is
    /// longer than the probe's span, not that the cycle's burst does not
    /// come back whole.
    pub(super) fn was_probe(&self, seq: Option<u64>) -> bool {
        seq.is_some_and(|seq| self.refused.is_some_and(|(probe, _)| probe == seq))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_probe_goes_at_the_geometric_midpoint_until_the_interval_is_a_unit_wide() {
        let mut refine = Refine::default();
        assert_eq!(refine.span(ms(2000), 20.0), None, "no lower bound yet");
        refine.shorter_than(ms(500));
        refine.shorter_than(ms(1000));
        assert_eq!(refine.span(ms(4000), 20.0), Some(ms(2000)));
        // Within one unit's share of the cycle (1.05 s / 20 = 52.5 ms):
        // narrow enough.
        assert_eq!(refine.span(ms(1050), 20.0), None);
        assert_eq!(
            refine.span(ms(1250), 20.0),
            Some(Duration::from_secs_f64(1.25f64.sqrt()))
        );
        // A burst of one unit is bounded within its own unit already.
        assert_eq!(refine.span(ms(1999), 1.0), None);
    }

    #[test]
    fn an_admitted_probe_bounds_the_cycle_and_a_refused_one_the_window() {
        let t0 = Instant::now();
        let mut refine = Refine::default();
        refine.shorter_than(ms(1000));
        let span = refine.span(ms(4000), 20.0).unwrap();
        refine.sent(7, span);
        assert_eq!(refine.span(ms(4000), 20.0), None, "one probe at a time");
        assert_eq!(refine.answered(6, t0, true), None, "not the probe");
        refine.ended(7);
        assert_eq!(refine.answered(7, t0, true), Some(ms(2000)));
        let span = refine.span(ms(2000), 20.0).unwrap();
        refine.sent(8, span);
        refine.ended(8);
        assert_eq!(refine.answered(8, t0 + ms(10), false), None);
        assert!(refine.was_probe(Some(8)));
        assert!(!refine.was_probe(Some(7)));
        assert_eq!(refine.refused_at(), Some(t0 + ms(10)));
        // Refused at √2 s: the window is longer than that.
        let lo = 2f64.sqrt();
        assert_eq!(
            refine.span(ms(2000), 20.0),
            Some(Duration::from_secs_f64(
                (Duration::from_secs_f64(lo).as_secs_f64() * 2.0).sqrt()
            ))
        );
        // A probe that ended with no verdict shows nothing, and is out no
        // more; one answered ends just before its verdict is read.
        refine.sent(9, ms(1700));
        assert_eq!(refine.span(ms(2000), 20.0), None);
        refine.ended(9);
        assert!(refine.span(ms(2000), 20.0).is_some());
        refine.sent(10, ms(1700));
        refine.ended(10);
        assert_eq!(refine.answered(10, t0, true), Some(ms(1700)));
    }
}
