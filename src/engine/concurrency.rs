//! A concurrency limit: at most `K` requests in service at once. Its units
//! come back when answers do, not with time.
//!
//! **Evidence.** A server enforcing one refuses a request only while `K`
//! others are in service, and serves those for longer than it takes to
//! refuse (a refusal does no work). So a refusal `r` is explained by a
//! concurrency limit when sends of ours that were in flight as it was
//! answered come back *later* with round trips longer than `r`'s by more
//! than chance allows:
//!
//! ```text
//! RTT(s) > RTT(r) + 4·RTTVAR            (round_trip.rs)
//! ```
//!
//! with `RTTVAR` the mean deviation of refusals' round trips: how much a
//! round trip without service time varies by chance.
//!
//! Those sends were in service throughout `r`'s refusal; their number `k`
//! bounds our share of the limit: `K̂ = k`. A rate limit refuses as fast as
//! it admits, so its refusals find no such companions, except by a chance
//! of jitter the margin excludes; a refusal of a lone send (nothing else
//! of ours in flight) is one no concurrency limit explains at all.
//!
//! **Choice, nothing latched.** `evidence` counts explained refusals up and
//! lone refusals down twice as hard, within `±EVIDENCE_CAP`. The model is
//! followed while `evidence > 0`: the scope keeps at most `K̂` sends in
//! flight, and a refusal with companions in flight lowers `K̂` to their
//! number and is retried after its own hint, without pausing the others
//! (their slots free as their answers come). A refusal of a lone send
//! refutes it at once: the scope falls back to the rate it reads, until
//! explained refusals outweigh the lone ones again.
//!
//! | observation | reading |
//! |---|---|
//! | refused; slower companions answered after it | a limit of `k` (the companions) |
//! | refused with `k ≥ 1` of ours in flight, model followed | `K̂ ← min(K̂, k)` |
//! | refused alone | not a concurrency limit |

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use super::round_trip::RoundTrip;

/// How far the evidence count goes either way: two lone refusals outweigh
/// any run of explained ones.
const EVIDENCE_CAP: i32 = 4;
/// Refusals awaiting their companions' answers, at most (older ones are
/// dropped unjudged: a burst of refusals at concurrency 16 fits).
const PENDING_CAP: usize = 32;

/// A refusal whose companions have not all answered yet.
#[derive(Debug, Clone)]
struct Pending {
    round_trip: Duration,
    /// Our sends in flight when it was answered.
    companions: Vec<u64>,
    /// Of those answered since, the ones served longer than chance allows.
    served: u32,
}

/// The concurrency-limit model of one scope.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConcurrencyLimit {
    /// Our sends in flight: sequence number → when sent.
    outstanding: BTreeMap<u64, Instant>,
    pending: VecDeque<Pending>,
    /// Round trips of every answer, refusals included (the wait bound).
    round_trip: RoundTrip,
    /// Round trips of refusals: what a round trip without service time
    /// looks like, and how much it varies by chance.
    refusal_round_trip: RoundTrip,
    /// `K̂`: how many of ours the server serves at once.
    limit: Option<u32>,
    evidence: i32,
}

/// What a refusal says under this model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The model is followed and explains it: retry this request after its
    /// hint, pause nobody.
    Explained,
    /// Not this model's to explain (not followed, or refuted by it).
    Other,
}

impl ConcurrencyLimit {
    /// The limit the scope follows, if the evidence says it has one.
    pub(crate) fn limit(&self) -> Option<u32> {
        self.limit.filter(|_| self.evidence > 0)
    }

    /// Whether a send may go with `in_flight` of ours out.
    pub(crate) fn admits(&self, in_flight: u32) -> bool {
        self.limit().is_none_or(|limit| in_flight < limit)
    }

    /// A bound on the wait for a slot: an answer frees one (the engine
    /// wakes waiters then); until then, the mean round trip, within
    /// 1 ms (tokio's timer tick) and 1 s.
    pub(crate) fn wait_for_slot(&self) -> Duration {
        self.round_trip
            .mean()
            .unwrap_or(Duration::from_millis(100))
            .clamp(Duration::from_millis(1), Duration::from_secs(1))
    }

    pub(crate) fn sent(&mut self, seq: u64, now: Instant) {
        self.outstanding.insert(seq, now);
    }

    /// Send `seq` will never be answered.
    pub(crate) fn abandoned(&mut self, seq: u64) {
        self.outstanding.remove(&seq);
        self.forget_companion(seq);
    }

    fn forget_companion(&mut self, seq: u64) {
        for pending in &mut self.pending {
            pending.companions.retain(|&c| c != seq);
        }
        self.judge_finished();
    }

    /// Send `seq` was refused at `now`.
    pub(crate) fn refused(&mut self, seq: u64, now: Instant) -> Refusal {
        let Some(round_trip) = self.answer(seq, now) else {
            return Refusal::Other;
        };
        let companions: Vec<u64> = self.outstanding.keys().copied().collect();
        self.forget_companion(seq);
        if companions.is_empty() {
            // Alone and refused: no concurrency limit explains it.
            self.evidence = (self.evidence - 2).max(-EVIDENCE_CAP);
            self.limit = None;
            self.refusal_round_trip.observe(round_trip);
            return Refusal::Other;
        }
        let followed = self.limit().is_some();
        if let Some(limit) = self.limit.as_mut().filter(|_| followed) {
            *limit = (*limit).min(companions.len() as u32);
        }
        if self.pending.len() == PENDING_CAP {
            self.pending.pop_front();
        }
        self.pending.push_back(Pending {
            round_trip,
            companions,
            served: 0,
        });
        self.round_trip.observe(round_trip);
        self.refusal_round_trip.observe(round_trip);
        if followed {
            Refusal::Explained
        } else {
            Refusal::Other
        }
    }

    /// Send `seq` was answered, not refused, at `now`. Returns whether the
    /// model became followed with this answer.
    pub(crate) fn served(&mut self, seq: u64, now: Instant) -> bool {
        let before = self.limit().is_some();
        if let Some(round_trip) = self.answer(seq, now) {
            let spread = self.refusal_round_trip.spread();
            for pending in &mut self.pending {
                if let Some(at) = pending.companions.iter().position(|&c| c == seq) {
                    pending.companions.swap_remove(at);
                    if round_trip > pending.round_trip.saturating_add(spread) {
                        pending.served += 1;
                    }
                }
            }
            self.judge_finished();
            self.round_trip.observe(round_trip);
        }
        !before && self.limit().is_some()
    }

    /// Takes `seq` out of the sends in flight; its round trip (`None` for
    /// a send never recorded).
    fn answer(&mut self, seq: u64, now: Instant) -> Option<Duration> {
        let sent = self.outstanding.remove(&seq)?;
        let round_trip = now.saturating_duration_since(sent);
        Some(round_trip)
    }

    /// Judges the refusals whose companions have all answered.
    fn judge_finished(&mut self) {
        let mut judged = Vec::new();
        self.pending.retain(|pending| {
            let finished = pending.companions.is_empty();
            if finished {
                judged.push(pending.served);
            }
            !finished
        });
        for served in judged.into_iter().filter(|&served| served > 0) {
            self.evidence = (self.evidence + 1).min(EVIDENCE_CAP);
            self.limit = Some(self.limit.map_or(served, |limit| limit.min(served)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Four sends at once to a server serving two for 200 ms and refusing
    /// the others within a 2 ms round trip.
    fn two_served_of_four(model: &mut ConcurrencyLimit, t0: Instant) -> Instant {
        for seq in 0..4 {
            model.sent(seq, t0);
        }
        assert_eq!(model.refused(1, t0 + ms(2)), Refusal::Other);
        assert_eq!(model.refused(3, t0 + ms(2)), Refusal::Other);
        assert!(!model.served(0, t0 + ms(201)));
        assert!(model.served(2, t0 + ms(202)), "followed once both answered");
        t0 + ms(202)
    }

    #[test]
    fn refusals_outlasted_by_slow_successes_show_the_limit() {
        let mut model = ConcurrencyLimit::default();
        let t0 = Instant::now();
        two_served_of_four(&mut model, t0);
        assert_eq!(model.limit(), Some(2));
        assert!(model.admits(1));
        assert!(!model.admits(2));
    }

    #[test]
    fn refusals_answered_as_fast_as_successes_show_no_limit() {
        let mut model = ConcurrencyLimit::default();
        let t0 = Instant::now();
        for seq in 0..4 {
            model.sent(seq, t0);
        }
        model.served(0, t0 + ms(2));
        model.refused(1, t0 + ms(2));
        model.served(2, t0 + ms(3));
        model.refused(3, t0 + ms(3));
        assert_eq!(model.limit(), None);
        assert!(model.admits(100));
    }

    #[test]
    fn a_lone_refusal_refutes_the_limit_until_explained_refusals_outweigh_it() {
        let mut model = ConcurrencyLimit::default();
        let t0 = Instant::now();
        let t = two_served_of_four(&mut model, t0);
        model.sent(10, t);
        assert_eq!(model.refused(10, t + ms(2)), Refusal::Other);
        assert_eq!(model.limit(), None, "two explained, one lone");
        // A second lone refusal weighs against the next explained one.
        model.sent(11, t + ms(2));
        model.refused(11, t + ms(4));
        let t = t + ms(4);
        model.sent(20, t);
        model.sent(21, t);
        model.refused(21, t + ms(2));
        assert!(!model.served(20, t + ms(201)));
        assert_eq!(model.limit(), None, "evidence 2 − 2 − 2 + 1");
        // Explained refusals outweigh the lone ones again: followed at the
        // second.
        let t = t + ms(201);
        model.sent(40, t);
        model.sent(41, t);
        model.refused(41, t + ms(2));
        assert!(!model.served(40, t + ms(201)));
        let t = t + ms(201);
        for seq in 30..32 {
            model.sent(seq, t);
        }
        model.refused(31, t + ms(2));
        assert!(model.served(30, t + ms(201)));
        assert_eq!(model.limit(), Some(1));
    }

    #[test]
    fn a_followed_limit_explains_refusals_and_shrinks_to_the_companions() {
        let mut model = ConcurrencyLimit::default();
        let t0 = Instant::now();
        let t = two_served_of_four(&mut model, t0);
        model.sent(10, t);
        model.sent(11, t);
        assert_eq!(model.refused(11, t + ms(2)), Refusal::Explained);
        assert_eq!(model.limit(), Some(1));
    }

    #[test]
    fn an_abandoned_companion_leaves_the_judgement_to_the_others() {
        let mut model = ConcurrencyLimit::default();
        let t0 = Instant::now();
        model.sent(0, t0);
        model.sent(1, t0);
        model.refused(1, t0 + ms(2));
        model.abandoned(0);
        assert_eq!(model.limit(), None, "no companion was seen served");
        assert!(model.pending.is_empty());
    }
}
