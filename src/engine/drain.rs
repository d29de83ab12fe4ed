//! A leaky bucket read as `used/size` (Shopify's
//! `X-Shopify-Shop-Api-Call-Limit`): a meter of `size` units that drains
//! at a rate `r` no header states, and nothing says when it is empty
//! again (no reset). The parser assumes Shopify's standard plans (two
//! calls a second, `signal::vendor`); here that is only a **prior** `p`:
//! the rate the pacer follows is what the readings measure.
//!
//! **Observation.** A reading `U` of `size` is the meter rounded up (a
//! fraction of a call counts, as `remaining` is rounded down), counted by
//! the server at an instant it does not say: after the request left
//! (`sent`) and before its answer came back (`received`). A refusal says
//! the meter held more than `size − 1`:
//!
//! ```text
//! used(τ) ∈ (U − 1, U]        τ ∈ [sent, received]
//! ```
//!
//! Between two readings `A` and `B` (B's request left after A's answer
//! came back, so the server counted A first) the meter rose by the sends
//! of ours it counted in between and fell by what drained:
//!
//! ```text
//! used(τ_B) = used(τ_A) + n − drained
//! n ∈ [S⁻(B) − S⁺(A), S⁺(B) − S⁻(A)]
//! ```
//!
//! with `S⁻(X)` our sends surely counted by `X` (admitted and answered
//! before `X`'s request left, and `X`'s own if admitted) and `S⁺(X)` those
//! it may have counted (every send that left before `X`'s answer came
//! back, less those refused). Other clients' sends only add to the meter:
//! what is measured is the drain left for us.
//!
//! **Bounds.** The meter drains `r·(τ_B − τ_A)` while it holds anything,
//! and `τ_B − τ_A ∈ [sent_B − received_A, received_B − sent_A]`: the
//! margin for the readings' timing is their own round trips, as measured,
//! and for their counts the header's unit. So
//!
//! ```text
//! r ≥ r⁻ = max over pairs (U_A − 1 + S⁻(B) − S⁺(A) − U_B) / (received_B − sent_A)
//! r ≤ r⁺ = min over pairs (U_A + S⁺(B) − S⁻(A) − U_B + 1) / (sent_B − received_A)
//! ```
//!
//! the upper bound only over pairs where the meter surely never emptied
//! (it drains nothing while empty): `U_B − 1 ≥ S⁺(B) − S⁻(A)`, more left
//! at `B` than all we may have added since `A`. Pairs are taken among the
//! readings since the model last started again (the first one, the
//! longest span, and the latest 32).
//!
//! **A meter of one unit** reads full after every send of ours, so its
//! readings bound the drain from below only (each send it admitted
//! drained a unit before it). Its refusals time it: a wait `h` that names
//! the next unit (`hint.rs`: finer than a second, or two of its grains
//! long) says the meter holds more than `size − 1` until `h − g` after
//! the server's instant, `g` the wait's grain: an instant within `[sent +
//! h − g, received + h − g]`. That is one more reading, `U = size` there,
//! taken once the instant is past (every send of ours that left before it
//! may be counted by it), and its pairs bound `r⁺`. A server whose wait
//! overstates the drain bounds it low, to about a unit per wait: the pace
//! its hints, floors, ask for anyway. A meter of two or more is timed by
//! its readings below the top, and a wait's reading, true of a drain,
//! crosses the bounds of a quota that is none: a sliding window
//! counter's weight changes at its window's boundary, and the model,
//! started again on the prior, spends refusals to bound it again.
//!
//! **The rate followed.** Once a drain is seen (`r⁻ > 0`), the prior
//! clamped into the bounds, `clamp(p, r⁻, r⁺)`: the prior stands until a
//! reading refutes it, a meter fuller than it allows (a refusal, or
//! readings at the top) lowers `r⁺` below it, one emptier raises `r⁻`
//! above it. The pacer is given the quota as a policy of `size` per
//! `size / rate` and no reset (the header states none); it reserves a
//! unit per send in flight, so `used` is paced to stay below `size`.
//!
//! | evidence | the model |
//! |---|---|
//! | no drain seen yet (`r⁻ = 0`: a burst, a count that only rose) | the prior; the pacer's own rules (refusals, hints) |
//! | a drain seen, bounds that agree | `clamp(p, r⁻, r⁺)`, and the pacer sets aside the fixed-window and sliding-log verdicts it may have drawn before (`Pacer::set_drains`) |
//! | bounds that cross (`r⁻ > r⁺`) | not one drain: start again from the latest reading |
//! | a meter of one unit | it reads full after every send of ours: each send it admitted drained a unit (`r⁻`), its refusals' waits bound `r⁺` |
//!
//! **Not a drain.** A fixed window's count drops to 0 at its boundary.
//! Read as a drain, the pair across it gives an `r⁻` of a window's worth
//! over the span, while the readings within the next window, or its
//! refusal, give an `r⁺` of about nothing: the bounds cross, and the model
//! starts again from the latest reading, falling back to the prior and
//! the pacer's window rules until a drain shows again. A limit that
//! changed, or another client's burst, cross the bounds the same way.
//! Until a window's first boundary nothing tells it from a slow drain:
//! both read as no drain seen, so both are paced by the prior.

use std::collections::{BTreeMap, VecDeque};
use std::time::Instant;

use super::hint::Hint;
use super::time::later;

/// Readings kept as the earlier end of a pair besides the first since the
/// model last started again: the latest 32 (at 16 in flight, two rounds).
const READINGS: usize = 32;

/// One of our sends still out.
#[derive(Debug, Clone, Copy)]
struct Out {
    sent: Instant,
    /// Our admitted sends answered before this one left: surely counted
    /// before it.
    admitted_before: u64,
}

/// What the server answered a send.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Answer {
    Admitted,
    /// Refused, with the wait it stated, if any.
    Refused(Option<Hint>),
}

/// One reading, with what it may and surely counted of ours.
#[derive(Debug, Clone, Copy)]
struct Reading {
    sent: Instant,
    received: Instant,
    used: f64,
    surely: u64,
    maybe: u64,
}

/// The drain model of one `used/size` quota.
#[derive(Debug, Clone, Default)]
pub(crate) struct Drain {
    out: BTreeMap<u64, Out>,
    /// Sends that left, and of those answered, the admitted and the
    /// refused.
    sends: u64,
    admitted: u64,
    refused: u64,
    first: Option<Reading>,
    recent: VecDeque<Reading>,
    /// `[r⁻, r⁺]`, units a second (`r⁺` infinite: no bound yet).
    low: f64,
    high: Option<f64>,
    /// The meter a refusal's wait showed full until a grain before its
    /// end: a reading there, taken once that instant passed (until then,
    /// every send of ours that leaves may be counted before it).
    awaited: Option<Reading>,
}

impl Drain {
    /// Send `seq` leaves at `now`.
    pub(crate) fn sent(&mut self, seq: u64, now: Instant) {
        self.take_awaited(now);
        if let Some(awaited) = self.awaited.as_mut() {
            awaited.maybe += 1;
        }
        self.sends += 1;
        self.out.insert(
            seq,
            Out {
                sent: now,
                admitted_before: self.admitted,
            },
        );
    }

    /// Send `seq` will never be answered (cancelled): it may have been
    /// counted.
    pub(crate) fn abandoned(&mut self, seq: u64) {
        self.out.remove(&seq);
    }

    /// The answer to send `seq`, received at `now`, with the quota's
    /// `used` of `size` if it read one.
    pub(crate) fn answered(
        &mut self,
        seq: u64,
        now: Instant,
        answer: Answer,
        reading: Option<(u64, u64)>,
    ) {
        self.take_awaited(now);
        let Some(out) = self.out.remove(&seq) else {
            return;
        };
        let admitted = matches!(answer, Answer::Admitted);
        if admitted {
            self.admitted += 1;
        } else {
            self.refused += 1;
        }
        let Some((used, size)) = reading.filter(|(_, size)| *size > 0) else {
            return;
        };
        // Refused: the meter held more than `size − 1`.
        let used = if admitted { used } else { used.max(size) };
        let reading = Reading {
            sent: out.sent,
            received: now,
            used: used as f64,
            surely: out.admitted_before + u64::from(admitted),
            maybe: self.sends - self.refused,
        };
        self.add(reading);
        // A wait that names the next unit says a meter of one unit holds
        // more than `size − 1` until a grain before its end (module docs).
        if let Answer::Refused(Some(hint)) = answer
            && size == 1
            && hint.names_next_unit()
            && let Some(until) = hint.wait.checked_sub(hint.grain)
            && !until.is_zero()
        {
            self.awaited = Some(Reading {
                sent: later(reading.sent, until),
                received: later(reading.received, until),
                ..reading
            });
        }
    }

    /// Takes the reading a refusal's wait promised once its instant is
    /// past at `now`: no send of ours leaving later is counted before it.
    fn take_awaited(&mut self, now: Instant) {
        if let Some(awaited) = self.awaited.take_if(|a| a.received <= now) {
            self.add(awaited);
        }
    }

    /// Bounds the rate with every pair ending at `reading`, then keeps it
    /// as the earlier end of later pairs.
    fn add(&mut self, reading: Reading) {
        self.bound(&reading);
        if self.high.is_some_and(|high| self.low > high) {
            // Not a drain (a window's boundary, a changed limit, another
            // client's burst): start again from this reading.
            self.first = None;
            self.recent.clear();
            self.low = 0.0;
            self.high = None;
        }
        if self.first.is_none() {
            self.first = Some(reading);
        } else {
            if self.recent.len() == READINGS {
                self.recent.pop_front();
            }
            self.recent.push_back(reading);
        }
    }

    /// Tightens `[r⁻, r⁺]` with every pair ending at `b`.
    fn bound(&mut self, b: &Reading) {
        for a in self.first.iter().chain(&self.recent) {
            let (Some(shortest), Some(longest)) = (
                b.sent.checked_duration_since(a.received),
                b.received.checked_duration_since(a.sent),
            ) else {
                continue;
            };
            let (shortest, longest) = (shortest.as_secs_f64(), longest.as_secs_f64());
            let least_ours = b.surely as f64 - a.maybe as f64;
            let most_ours = b.maybe as f64 - a.surely as f64;
            if longest > 0.0 {
                let drained = a.used - 1.0 + least_ours - b.used;
                self.low = self.low.max(drained / longest);
            }
            // Only if the meter never emptied in between: it holds more
            // at `b` than all we may have added since `a`.
            let drained = a.used + most_ours - b.used + 1.0;
            if shortest > 0.0 && b.used - 1.0 >= most_ours {
                let high = drained / shortest;
                self.high = Some(self.high.map_or(high, |h| h.min(high)));
            }
        }
    }

    /// Whether a drain was measured (the rate followed is the readings',
    /// not only the prior).
    pub(crate) fn measured(&self) -> bool {
        self.low > 0.0
    }

    /// The rate to pace by, units a second: the `prior` within what the
    /// readings bound, once they showed a drain.
    pub(crate) fn rate(&self, prior: f64) -> f64 {
        let high = self.high.unwrap_or(f64::INFINITY);
        if self.low > 0.0 {
            prior.min(high).max(self.low)
        } else {
            prior
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const PRIOR: f64 = 2.0;

    /// One send at `at` answered after `trip`, admitted, reading `used`.
    fn send(drain: &mut Drain, seq: u64, at: Instant, trip: Duration, used: u64, size: u64) {
        drain.sent(seq, at);
        drain.answered(seq, at + trip, Answer::Admitted, Some((used, size)));
    }

    #[test]
    fn a_meter_emptier_than_the_prior_allows_raises_the_rate_to_what_drained() {
        let mut drain = Drain::default();
        let t0 = Instant::now();
        let trip = Duration::from_millis(10);
        send(&mut drain, 0, t0, trip, 10, 10);
        assert_eq!(drain.rate(PRIOR), PRIOR, "no drain seen yet");
        // A second later, one send of ours on top, the meter reads 3:
        // at least 10 − 1 + 1 − 3 = 7 units drained in at most 1.01 s.
        send(&mut drain, 1, t0 + Duration::from_secs(1), trip, 3, 10);
        let rate = drain.rate(PRIOR);
        assert!((rate - 7.0 / 1.01).abs() < 1e-9, "{rate}");
    }

    #[test]
    fn a_meter_fuller_than_the_prior_allows_lowers_the_rate() {
        let mut drain = Drain::default();
        let t0 = Instant::now();
        let trip = Duration::ZERO;
        // Full, then one of ours every 4 s, each reading full again: one
        // unit drained per 4 s, not the prior's eight.
        for k in 0..4 {
            send(&mut drain, k, t0 + Duration::from_secs(4 * k), trip, 10, 10);
        }
        // A reading one below full shows a drain (`r⁻ > 0`).
        send(&mut drain, 4, t0 + Duration::from_secs(17), trip, 9, 10);
        let rate = drain.rate(PRIOR);
        assert!(rate < 0.5, "{rate}");
        assert!(drain.measured());
    }

    #[test]
    fn a_window_boundary_and_a_count_that_then_only_rises_are_no_drain() {
        let mut drain = Drain::default();
        let t0 = Instant::now();
        let trip = Duration::from_millis(1);
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        // A window of 10 spent, then, past its boundary, 0 + ours.
        send(&mut drain, 0, at(0), trip, 10, 10);
        send(&mut drain, 1, at(1_000), trip, 1, 10);
        assert!(drain.measured(), "the drop reads as a drain at first");
        // Within the new window the count rises by ours alone for a
        // second: nothing drained, against the drop's rate.
        for k in 2..10 {
            send(&mut drain, k, at(1_000 + 125 * (k - 1)), trip, k, 10);
        }
        assert!(!drain.measured());
        assert_eq!(drain.rate(PRIOR), PRIOR);
    }

    /// A meter of one unit reads full after every send of ours, yet each
    /// send it admitted drained a unit before it: over three, at least two
    /// units, the fraction the first reading held aside.
    #[test]
    fn a_meter_of_one_unit_drains_a_unit_per_send_it_admits() {
        let mut drain = Drain::default();
        let t0 = Instant::now();
        for k in 0..4 {
            send(
                &mut drain,
                k,
                t0 + Duration::from_secs(k),
                Duration::ZERO,
                1,
                1,
            );
        }
        assert!(drain.measured());
        assert_eq!(drain.rate(PRIOR), PRIOR);
        assert_eq!(drain.rate(0.5), 2.0 / 3.0);
    }

    /// A meter of one unit reads full after every send of ours: the rate
    /// it drains at shows in its refusals' waits. Each wait that names the
    /// next unit holds the meter full until a grain before its end, and
    /// two sends of ours admitted since a reading drained it of a whole
    /// unit in between.
    #[test]
    fn a_refusals_wait_bounds_a_meter_of_one_unit() {
        let mut drain = Drain::default();
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let trip = Duration::from_millis(10);
        // One unit drains every 100 s: admitted when it has, refused half
        // a second later with "come back in 100 s", to the second.
        for cycle in 0..2 {
            let start = 100_600 * cycle;
            send(&mut drain, 2 * cycle, at(start), trip, 1, 1);
            drain.sent(2 * cycle + 1, at(start + 500));
            let wait = Hint::stated(Duration::from_secs(100));
            let answer = Answer::Refused(Some(wait));
            drain.answered(2 * cycle + 1, at(start + 510), answer, Some((1, 1)));
            assert_eq!(drain.rate(PRIOR), PRIOR, "no drain seen yet");
        }
        send(&mut drain, 4, at(201_200), trip, 1, 1);
        assert!(drain.measured());
        // From the first wait's end (99.5 s) to the third send's answer
        // (201.21 s), a whole unit drained; from the second send's answer
        // (100.61 s) to the second wait's end (200.1 s), less than one.
        let rate = drain.rate(PRIOR);
        assert!(
            (1.0 / 101.71 - 1e-9..=1.0 / 99.49 + 1e-9).contains(&rate),
            "{rate}"
        );
    }

    /// Sends of ours that leave during a refusal's wait may be counted
    /// before its end: the meter the wait shows full may be full of them.
    /// Taken as its own, the wait bounds the drain below what those sends
    /// show drained, the bounds cross, and the model starts again.
    #[test]
    fn a_wait_counts_our_sends_inside_it() {
        let mut drain = Drain::default();
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let trip = Duration::from_millis(10);
        send(&mut drain, 0, at(0), trip, 1, 1);
        drain.sent(1, at(500));
        let wait = Hint::stated(Duration::from_secs(100));
        drain.answered(1, at(510), Answer::Refused(Some(wait)), Some((1, 1)));
        // The server's wait overstated the drain: two of ours admitted
        // within it, 60 s and 61 s in, then one after it.
        send(&mut drain, 2, at(60_000), trip, 1, 1);
        send(&mut drain, 3, at(61_000), trip, 1, 1);
        send(&mut drain, 4, at(100_000), trip, 1, 1);
        // A unit drained from 60 s to 100.01 s (two of ours admitted
        // since); less than one from 61.01 s to the wait's end (99.5 s),
        // its meter full of our send at 61 s.
        let rate = drain.rate(PRIOR);
        assert!(
            (1.0 / 40.01 - 1e-9..=1.0 / 38.49 + 1e-9).contains(&rate),
            "{rate}"
        );
    }

    /// Two readings at one instant (answered at once, sent as answered):
    /// no time for anything to drain, so the drop bounds no rate.
    #[test]
    fn readings_at_one_instant_bound_no_rate() {
        let mut drain = Drain::default();
        let t0 = Instant::now();
        send(&mut drain, 0, t0, Duration::ZERO, 10, 20);
        send(&mut drain, 1, t0, Duration::ZERO, 3, 20);
        assert!(!drain.measured());
        assert_eq!(drain.rate(PRIOR), PRIOR);
    }

    /// A meter that may have emptied between two readings (idle for long,
    /// then read holding no more than ours since) drained an unknown
    /// amount: the pair bounds the rate from below only.
    #[test]
    fn a_meter_that_may_have_emptied_bounds_the_rate_from_below_only() {
        let mut drain = Drain::default();
        let t0 = Instant::now();
        send(&mut drain, 0, t0, Duration::ZERO, 10, 20);
        // 100 s later, five of ours: the last reads them alone.
        let later = t0 + Duration::from_secs(100);
        for seq in 1..5 {
            drain.sent(seq, later);
            drain.answered(seq, later, Answer::Admitted, None);
        }
        send(&mut drain, 5, later, Duration::ZERO, 5, 20);
        assert!(drain.measured(), "at least 9 units drained in 100 s");
        assert_eq!(drain.rate(PRIOR), PRIOR);
    }

    /// Bounds that meet leave one rate: the drain is that, not something
    /// to start again from.
    #[test]
    fn bounds_that_meet_leave_one_rate() {
        let mut drain = Drain::default();
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        // 10, then 8 a second later with one of ours: 2 to 4 a second.
        send(&mut drain, 0, at(0), Duration::ZERO, 10, 20);
        send(&mut drain, 1, at(1), Duration::ZERO, 8, 20);
        // 8 again a second later with one of ours: 0 to 2 a second.
        send(&mut drain, 2, at(2), Duration::ZERO, 8, 20);
        assert!(drain.measured());
        assert_eq!(drain.rate(5.0), 2.0);
    }

    /// A send cancelled before its answer is forgotten.
    #[test]
    fn an_abandoned_send_is_forgotten() {
        let mut drain = Drain::default();
        let t0 = Instant::now();
        drain.sent(0, t0);
        drain.abandoned(0);
        assert!(drain.out.is_empty());
    }

    /// Refused sends add nothing to the meter: a drop after them is all
    /// drain.
    #[test]
    fn refused_sends_are_not_counted_in_the_meter() {
        let mut drain = Drain::default();
        let t0 = Instant::now();
        let trip = Duration::from_millis(10);
        for seq in 0..5 {
            drain.sent(seq, t0);
            drain.answered(seq, t0 + trip, Answer::Refused(None), None);
        }
        send(&mut drain, 5, t0, trip, 10, 20);
        // A second later, one of ours on top, the meter reads 3: at least
        // 10 − 1 + 1 − 3 = 7 units drained in at most 1.01 s.
        send(&mut drain, 6, t0 + Duration::from_secs(1), trip, 3, 20);
        let rate = drain.rate(PRIOR);
        assert!((rate - 7.0 / 1.01).abs() < 1e-9, "{rate}");
    }

    /// A steady drain of one unit a second, read every second with one of
    /// ours on top: the longer the span between two readings, the tighter
    /// they bound the rate (`1 ± 1/span`), so the pairs reach back over
    /// the readings kept, not only the latest.
    #[test]
    fn the_pairs_reach_back_over_the_readings_kept() {
        let mut drain = Drain::default();
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        // Nearly empty, then a burst of 29 of ours: the first reading
        // bounds the rate from below only from here on.
        send(&mut drain, 0, at(0), Duration::ZERO, 1, 40);
        for seq in 1..30 {
            drain.sent(seq, at(0));
            drain.answered(seq, at(0), Answer::Admitted, None);
        }
        for k in 1..=11 {
            send(&mut drain, 29 + k, at(k), Duration::ZERO, 30, 40);
        }
        let rate = drain.rate(5.0);
        assert!((rate - 1.1).abs() < 1e-9, "{rate}");
    }
}
