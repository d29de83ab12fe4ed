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
//! round trip without service time varies by chance. That holds only of a
//! server that serves for longer than it refuses, on the mean of each (the
//! same margin): one slow send among fast ones (a connection opened, a
//! cold start) is no service time, and shows no limit.
//!
//! Those sends were in service throughout `r`'s refusal; their number `k`
//! bounds our share of the limit: `K̂ = k`. A rate limit refuses as fast as
//! it admits, so its refusals find no such companions, except by a chance
//! of jitter the margin excludes.
//!
//! A server that takes as long to refuse as to serve shows no such timing.
//! Then counting tells: a send refused with `m` others of ours in flight as
//! it went, when sends served in the same burst (one at least: a burst
//! refused whole shows no limit of ours) all went with fewer, is explained
//! by a limit of `m`, judged when the later of the two answers comes. The
//! burst shows no limit above its fewest: `m` is the fewest in flight
//! beside any refusal answered since this one went. And while a send that
//! went beside `m` of ours (less those refused since) is still out, the
//! count waits for it: served, it shows `m + 1` at once and no limit of
//! `m`. That refusal is **undecided**: it pauses the scope as any refusal
//! does, but its request waits only its own hint or backoff, so a trial
//! that starts when the answer comes (lifting the pause) loses it no time.
//! A rate limit's first refused burst looks
//! the same, so the limit is followed **on trial**: a send refused with
//! fewer in flight lowers it, down to a send refused alone, which refutes
//! it. The trial costs a rate limit a few refused requests, once; the
//! rate limit's pacer, set aside while the limit is on trial, is given
//! back when a send refused alone refutes it before any send succeeded
//! under it, so the burst those refusals ended is still learned.
//!
//! **Counted as they went, and again once all answered.** The count above
//! takes the sends in the order they went: the server saw them in that
//! order only if arrivals keep it. Sends that go together reach it in any
//! order (on sockets each opens a connection of its own; legs jitter), so
//! a burst of four at a limit of two may see the first and the *last*
//! served: counted as they went, the last went beside three and the
//! refusals beside one and two, and no limit shows, though one is there.
//! So each answer is counted again once its *companions* (the sends of
//! ours in flight at some instant of its round trip) have all answered,
//! from round trips alone: how many sends served were in flight at once
//! beside it. A refusal with `m` served at once beside it, when no send
//! served recently was served with more than `m` at once (itself
//! included), is explained by a limit of `m`, on trial as above. This
//! count does not depend on the order of arrivals but comes later, when
//! the companions answer, and a refusal not explained by then has paused
//! the scope; so it starts a trial only where the count as they went did
//! not (that one lets the refusal that shows a limit wait its own hint
//! and pause nobody).
//!
//! **A refusal timed by a clock.** A concurrency limit frees a slot when
//! one of the requests in service is answered. A refusal whose hint is
//! precise (finer than a second) and longer than the longest round trip
//! of ours served lately, by more than the refusals' spread, names an
//! instant no answer of ours frees a slot at: the unit comes back with
//! time (Google's `retryDelay` of 998 ms, every request served in 1 ms).
//! It is no evidence of a limit, and refutes one on trial as a send
//! refused alone does, at no cost of its own: the staggered first burst of
//! a rate limit no longer puts a limit on trial that only a lone refusal,
//! a request spent, could refute (Google's mock at c=4: 14–17 sent for 12
//! before, 13–16 after).
//!
//! **A refusal that names its quota.** One that reads its requests quota
//! exhausted (`remaining: 0`), or names a rate (an AWS throttling code of
//! a rate, a Google quota: `Refusal::names_a_rate`), says which quota
//! refused and that its units come back with time: it is taken as a
//! refusal timed by a clock (`state.rs`). A reading with units left names
//! no quota (GitHub's secondary limits refuse beside a primary with room).
//!
//! A send refused although it was alone in flight its whole round trip is
//! one no concurrency limit explains: refuted. One refused with fewer in flight than the limit
//! followed lowers it to their number (others share the limit, or answers
//! came back out of order).
//!
//! **Choice, nothing latched.** `evidence` counts explained refusals up and
//! refuting ones down twice as hard, within `±EVIDENCE_CAP`; no trial starts
//! below zero. The model is followed while `evidence > 0`: the scope keeps
//! at most `K̂` sends in flight, raised when a send is served beside more
//! (those in flight as it went, less those refused), and a refusal of a send
//! that went before the limit was followed is retried after its own hint,
//! without pausing the others (their slots free as their answers come).
//!
//! | observation | reading |
//! |---|---|
//! | refused; slower companions answered after it | a limit of `k` (the companions) |
//! | refused with `m` of ours in flight, more than any served went with | a limit of `m`, on trial |
//! | once its companions answered: refused beside `m` served at once, none served with more | a limit of `m`, on trial |
//! | served with `m` in flight, `f` of them refused, model followed | `K̂ ← max(K̂, m − f + 1)` |
//! | refused with `m < K̂` in flight, model followed | `K̂ ← m` |
//! | refused alone | not a concurrency limit |
//! | refused with `m` in flight while a send that went beside `m` (less refusals) is out | undecided: its answer decides |
//! | refused with a precise hint longer than any send of ours was in service | a quota's clock: no evidence of a limit; one on trial refuted |
//! | refused reading its quota exhausted, or naming a rate | as by a clock |

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use super::hint::Hint;
use super::round_trip::RoundTrip;

/// How far the evidence count goes either way: two lone refusals outweigh
/// any run of explained ones.
const EVIDENCE_CAP: i32 = 4;
/// Served sends remembered for the counting evidence: the latest 32.
const RECENT: usize = 32;
/// Refusals awaiting their companions' answers, at most (older ones are
/// dropped unjudged: a burst of refusals at concurrency 16 fits).
const PENDING_CAP: usize = 32;

/// Answers remembered for the counting evidence: enough to hold every
/// companion of the answers awaiting theirs.
const ANSWERS: usize = 4 * RECENT;

/// One answer, for the counting evidence: when its send went and when it
/// was answered, whether it was served, and the latest send of ours when
/// it was answered (its companions are numbered up to that).
#[derive(Debug, Clone, Copy)]
struct Answer {
    seq: u64,
    sent: Instant,
    answered: Instant,
    served: bool,
    last: u64,
}

/// A refusal whose companions have not all answered yet. Its companions
/// are the sends of ours in flight when it was answered: those numbered up
/// to `last` that answer after it.
#[derive(Debug, Clone)]
struct Pending {
    round_trip: Duration,
    last: u64,
    /// Companions still to answer.
    unanswered: u32,
    /// Of those answered, the ones served longer than chance allows.
    served: u32,
}

/// The concurrency-limit model of one scope.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConcurrencyLimit {
    /// Our sends in flight: sequence number → when sent, and how many
    /// others of ours were in flight then.
    outstanding: BTreeMap<u64, (Instant, u32)>,
    /// How many others of ours were in flight as each of the last
    /// [`RECENT`] sends served went.
    recent_served: VecDeque<u32>,
    /// How many of ours were served at once beside each of the last
    /// [`RECENT`] sends served, itself included (counted once its
    /// companions answered).
    recent_together: VecDeque<u32>,
    /// The last [`RECENT`] refusals counted: when answered, and how many
    /// of ours were served at once beside it.
    recent_counted: VecDeque<(Instant, u32)>,
    /// The latest [`ANSWERS`] answers, and those whose companions have not
    /// all answered yet (at most [`PENDING_CAP`]).
    answers: VecDeque<Answer>,
    uncounted: VecDeque<Answer>,
    /// The last [`RECENT`] refusals: sequence number, when answered, and
    /// how many others of ours were in flight as it went.
    recent_refused: VecDeque<(u64, Instant, u32)>,
    pending: VecDeque<Pending>,
    /// Round trips of every answer, refusals included (the wait bound).
    round_trip: RoundTrip,
    /// Round trips of refusals: what a round trip without service time
    /// looks like, and how much it varies by chance.
    refusal_round_trip: RoundTrip,
    /// Round trips of sends served: longer than refusals' by more than
    /// chance when the server serves for longer than it refuses.
    served_round_trip: RoundTrip,
    /// `K̂`: how many of ours the server serves at once.
    limit: Option<u32>,
    evidence: i32,
    /// The number of our latest send.
    last_sent: Option<u64>,
}

/// What a refusal says under this model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The model is followed and explains it: retry this request after its
    /// hint, pause nobody.
    Explained,
    /// As `Explained`, and the model is followed from this refusal on.
    Followed,
    /// Not this model's to explain (not followed, or refuted by it).
    Other,
    /// As `Other` for now, but a send that went beside as many of ours is
    /// still out: its answer decides whether this refusal shows a limit
    /// (a trial then starts), so the request waits its own hint or
    /// backoff, not the whole pause, and goes when the scope may.
    Undecided,
}

impl ConcurrencyLimit {
    /// The limit the scope follows, if the evidence says it has one.
    pub(crate) fn limit(&self) -> Option<u32> {
        self.limit.filter(|_| self.evidence > 0)
    }

    /// The round trips of the scope's answers, refusals included.
    pub(crate) fn round_trip(&self) -> RoundTrip {
        self.round_trip
    }

    /// The round trips of sends served: the network's legs and the
    /// server's work.
    pub(crate) fn served_round_trip(&self) -> RoundTrip {
        self.served_round_trip
    }

    /// The round trips of refused sends: the network's legs alone, as a
    /// server refuses without serving.
    pub(crate) fn refusal_round_trip(&self) -> RoundTrip {
        self.refusal_round_trip
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

    /// When send `seq` left, while it is in flight.
    pub(crate) fn sent_at(&self, seq: u64) -> Option<Instant> {
        self.outstanding.get(&seq).map(|(at, _)| *at)
    }

    pub(crate) fn sent(&mut self, seq: u64, now: Instant) {
        let others = self.outstanding.len() as u32;
        self.outstanding.insert(seq, (now, others));
        self.last_sent = Some(self.last_sent.map_or(seq, |last| last.max(seq)));
    }

    /// Send `seq` will never be answered.
    pub(crate) fn abandoned(&mut self, seq: u64) {
        if self.outstanding.remove(&seq).is_some() {
            self.companion_answered(seq, None);
            self.count_settled(true);
        }
    }

    /// A companion of the pending refusals numbered from `seq` on answered;
    /// `served`: it was in service through theirs.
    fn companion_answered(&mut self, seq: u64, round_trip: Option<Duration>) {
        let spread = self.refusal_round_trip.spread();
        for pending in self.pending.iter_mut().filter(|p| seq <= p.last) {
            pending.unanswered = pending.unanswered.saturating_sub(1);
            if round_trip.is_some_and(|rt| rt > pending.round_trip.saturating_add(spread)) {
                pending.served += 1;
            }
        }
        self.judge_finished();
    }

    /// Send `seq` was refused at `now`.
    pub(crate) fn refused(&mut self, seq: u64, now: Instant) -> Refusal {
        let Some((round_trip, others)) = self.answer(seq, now, false) else {
            return Refusal::Other;
        };
        // A refused send is nobody's companion served.
        self.companion_answered(seq, None);
        self.refusal_round_trip.observe(round_trip);
        self.round_trip.observe(round_trip);
        if self.recent_refused.len() == RECENT {
            self.recent_refused.pop_front();
        }
        self.recent_refused.push_back((seq, now, others));
        // Alone means alone for its whole round trip: a send that went
        // first may arrive after those that went next (answers and
        // arrivals reorder, new connections most).
        let sent_after = self.last_sent.is_some_and(|last| last > seq);
        let followed = self.limit().is_some();
        if others == 0 && !sent_after {
            // Alone and refused: no concurrency limit explains it.
            self.refute();
            self.count_settled(false);
            tracing::trace!(
                seq,
                ?round_trip,
                evidence = self.evidence,
                "courteous: concurrency model: refused alone, refuted"
            );
            return Refusal::Other;
        }
        let mut outcome = Refusal::Other;
        if followed {
            // Fewer of ours in service than followed: others share the
            // limit, or a reading was high (answers reordered).
            self.limit = self.limit.map(|limit| limit.min(others.max(1)));
            outcome = Refusal::Explained;
        } else {
            // The burst shows no limit above its fewest.
            let sent = now.checked_sub(round_trip).unwrap_or(now);
            let fewest = self.fewest_refused_since(sent, others);
            if self.undecided(fewest) {
                outcome = Refusal::Undecided;
            } else if self.trial(fewest) {
                outcome = Refusal::Followed;
            }
        }
        if let Some(&last) = self.outstanding.keys().next_back() {
            if self.pending.len() == PENDING_CAP {
                self.pending.pop_front();
            }
            self.pending.push_back(Pending {
                round_trip,
                last,
                unanswered: self.outstanding.len() as u32,
                served: 0,
            });
        }
        if self.count_settled(true) {
            outcome = Refusal::Followed;
        }
        tracing::trace!(
            seq,
            ?round_trip,
            others,
            sent_after,
            ?outcome,
            limit = ?self.limit,
            evidence = self.evidence,
            "courteous: concurrency model: refused"
        );
        outcome
    }

    /// Whether a refusal's `hint` says its unit comes back with time, not
    /// with an answer: a precise wait longer than any send of ours was in
    /// service, as far as chance allows (the longest recent round trip
    /// served, and the refusals' spread). A concurrency limit frees a slot
    /// when one of the requests in service is answered; a wait of 998 ms
    /// when every request was served in under one is a quota's clock.
    pub(crate) fn clocked(&self, hint: Option<Hint>) -> bool {
        let longest = self
            .answers
            .iter()
            .filter(|answer| answer.served)
            .map(|answer| answer.answered.saturating_duration_since(answer.sent))
            .max();
        hint.zip(longest).is_some_and(|(hint, longest)| {
            !hint.is_coarse()
                && hint.wait > longest.saturating_add(self.refusal_round_trip.spread())
        })
    }

    /// Send `seq` was refused at `now` by a quota whose units come back with
    /// time: its clock ([`Self::clocked`]), or the refusal names it (a
    /// reading exhausted, a rate's error code). No evidence of a limit, and
    /// a limit on trial refuted as by a send refused alone.
    pub(crate) fn refused_by_quota(&mut self, seq: u64, now: Instant) {
        let Some((round_trip, _)) = self.answer(seq, now, false) else {
            return;
        };
        // Not counted as a refusal beside others once they answer.
        self.uncounted.retain(|answer| answer.seq != seq);
        self.companion_answered(seq, None);
        self.refusal_round_trip.observe(round_trip);
        self.round_trip.observe(round_trip);
        if self.limit().is_some() {
            self.refute();
        }
        tracing::trace!(
            seq,
            ?round_trip,
            evidence = self.evidence,
            "courteous: concurrency model: refused by a quota refilled with time"
        );
    }

    /// A refusal no concurrency limit explains: the evidence falls twice
    /// as hard as an explained one raises it, and no limit is followed.
    fn refute(&mut self) {
        self.evidence = (self.evidence - 2).max(-EVIDENCE_CAP);
        self.limit = None;
    }

    /// Send `seq` was answered, not refused, at `now`. Returns whether the
    /// model became followed with this answer.
    pub(crate) fn served(&mut self, seq: u64, now: Instant) -> bool {
        let before = self.limit().is_some();
        if let Some((round_trip, others)) = self.answer(seq, now, true) {
            self.served_round_trip.observe(round_trip);
            self.companion_answered(seq, Some(round_trip));
            self.round_trip.observe(round_trip);
            // Served beside the others in flight as it went, less those of
            // them refused: the server served at least that many at once.
            let sent = now.checked_sub(round_trip).unwrap_or(now);
            let together = others.saturating_sub(self.refused_beside(seq, sent)) + 1;
            if self.recent_served.len() == RECENT {
                self.recent_served.pop_front();
            }
            self.recent_served.push_back(others);
            if before {
                self.limit = self.limit.map(|limit| limit.max(together));
            } else {
                self.trial_from(sent);
            }
            self.count_settled(true);
            tracing::trace!(
                seq,
                ?round_trip,
                others,
                together,
                limit = ?self.limit,
                evidence = self.evidence,
                "courteous: concurrency model: served"
            );
        }
        !before && self.limit().is_some()
    }

    /// Starts a trial at a limit of `others` if the count made as the
    /// sends went says so: a send refused with `others` of ours in flight,
    /// while sends served recently (one at least: a burst refused whole
    /// shows no limit of ours) all went with fewer.
    fn trial(&mut self, others: u32) -> bool {
        self.counted_shows(others) && !self.beside_as_many_out(others) && self.start_trial(others)
    }

    /// Whether the count as the sends went shows a limit of `others`: a
    /// refusal beside that many, sends served recently (one at least) all
    /// beside fewer, and the evidence not below zero (no trial starts
    /// there).
    fn counted_shows(&self, others: u32) -> bool {
        others > 0
            && self.evidence >= 0
            && !self.recent_served.is_empty()
            && self.shown_below(others)
    }

    /// Whether a send still in flight went with at least `others` of ours
    /// in flight not refused since (counted as `served` counts a send
    /// served beside others): served, it would show the server serving
    /// `others + 1` at once, so a limit of `others` waits for its answer.
    fn beside_as_many_out(&self, others: u32) -> bool {
        self.outstanding.iter().any(|(&seq, &(sent, went_with))| {
            went_with.saturating_sub(self.refused_beside(seq, sent)) >= others
        })
    }

    /// Of the sends in flight as send `seq` went at `sent`, those refused
    /// since: the earlier sends answered by a refusal after it went.
    fn refused_beside(&self, seq: u64, sent: Instant) -> u32 {
        self.recent_refused
            .iter()
            .filter(|&&(refused, answered, _)| refused < seq && answered >= sent)
            .count() as u32
    }

    /// Whether the sends served recently all went with fewer than `others`
    /// of ours in flight: then a limit of `others` is what a refusal beside
    /// that many shows.
    fn shown_below(&self, others: u32) -> bool {
        self.recent_served.iter().all(|&served| served < others)
    }

    /// A send that went at `sent` was served: the refusals answered since
    /// (the same burst) may now show a limit (`trial`), the fewest in
    /// flight among them.
    fn trial_from(&mut self, sent: Instant) {
        if let Some(others) = self.fewest_answered_since(sent) {
            self.trial(others);
        }
    }

    /// Whether a refusal with `others` of ours in flight as it went would
    /// start a trial (`counted_shows`) but for a send still in flight that went
    /// with as many (`beside_as_many_out`): the trial waits for its answer
    /// (`trial_from` looks again when it is served; its own refusal, when
    /// refused).
    fn undecided(&self, others: u32) -> bool {
        self.counted_shows(others) && self.beside_as_many_out(others)
    }

    /// The fewest others in flight beside a refusal of the burst of one
    /// that went at `sent` with `others`: those answered since it went (as
    /// `trial_from`, none refused with nothing in flight as it went: it
    /// reached the server after sends that went later). A limit of `K`
    /// refuses no send that went with fewer than `K` of ours in flight, so
    /// the burst shows no limit above its fewest.
    fn fewest_refused_since(&self, sent: Instant, others: u32) -> u32 {
        self.fewest_answered_since(sent)
            .map_or(others, |fewest| fewest.min(others))
    }

    /// The fewest others in flight as they went among the refusals
    /// answered at or after `sent`, none counted that went alone.
    fn fewest_answered_since(&self, sent: Instant) -> Option<u32> {
        self.recent_refused
            .iter()
            .filter(|&&(_, answered, others)| answered >= sent && others > 0)
            .map(|&(_, _, others)| others)
            .min()
    }

    /// Follows a limit of `limit` (or less, if one was measured) on trial,
    /// unless the evidence is below zero.
    fn start_trial(&mut self, limit: u32) -> bool {
        if self.evidence < 0 {
            return false;
        }
        self.limit = Some(self.limit.map_or(limit, |known| known.min(limit)));
        self.evidence = self.evidence.max(1);
        tracing::trace!(limit, "courteous: concurrency model: a limit on trial");
        true
    }

    /// Takes `seq` out of the sends in flight and remembers its answer:
    /// its round trip and how many others were in flight as it went
    /// (`None` for a send never recorded).
    fn answer(&mut self, seq: u64, now: Instant, served: bool) -> Option<(Duration, u32)> {
        let (sent, others) = self.outstanding.remove(&seq)?;
        let answer = Answer {
            seq,
            sent,
            answered: now,
            served,
            last: self.last_sent.unwrap_or(seq),
        };
        if self.answers.len() == ANSWERS {
            self.answers.pop_front();
        }
        self.answers.push_back(answer);
        if self.uncounted.len() == PENDING_CAP {
            self.uncounted.pop_front();
        }
        self.uncounted.push_back(answer);
        Some((now.saturating_duration_since(sent), others))
    }

    /// Counts the answers whose companions (the sends of ours in flight at
    /// some instant of their round trips) have all answered: how many of
    /// those served were in flight at once beside each. A count made then
    /// does not depend on the order the server saw the sends in (sends
    /// that go together reach it in any order). Returns whether a trial
    /// started (`may_trial`: one may).
    fn count_settled(&mut self, may_trial: bool) -> bool {
        let oldest_out = self.outstanding.keys().next().copied();
        let (settled, waiting): (VecDeque<Answer>, VecDeque<Answer>) = self
            .uncounted
            .drain(..)
            .partition(|answer| oldest_out.is_none_or(|oldest| oldest > answer.last));
        self.uncounted = waiting;
        let mut refusals = Vec::new();
        for answer in &settled {
            let beside = self.served_beside(answer);
            if answer.served {
                if self.recent_together.len() == RECENT {
                    self.recent_together.pop_front();
                }
                self.recent_together.push_back(beside + 1);
            } else {
                if self.recent_counted.len() == RECENT {
                    self.recent_counted.pop_front();
                }
                self.recent_counted.push_back((answer.answered, beside));
                refusals.push(beside);
            }
        }
        if !may_trial || self.limit().is_some() {
            return false;
        }
        // A refusal counted now, or one answered since a send counted now
        // went (the same burst): the fewest served beside any of them.
        let since = settled
            .iter()
            .filter(|answer| answer.served)
            .map(|answer| answer.sent)
            .min();
        let fewest = self
            .recent_counted
            .iter()
            .filter(|&&(answered, _)| since.is_some_and(|sent| answered >= sent))
            .map(|&(_, beside)| beside)
            .chain(refusals)
            .filter(|&beside| beside > 0)
            .min();
        // Shown as by `trial`, counted from the round trips: refused while
        // `beside` were served at once, when none was served with more.
        fewest.is_some_and(|beside| {
            !self.recent_together.is_empty()
                && self
                    .recent_together
                    .iter()
                    .all(|&together| together <= beside)
                && self.start_trial(beside)
        })
    }

    /// How many sends of ours served were in flight at once beside
    /// `answer` at some instant of its round trip (its companions, all
    /// answered). Round trips are half-open, `[sent, answered)`: a send
    /// that went as another was answered went after it.
    fn served_beside(&self, answer: &Answer) -> u32 {
        let companions = || {
            self.answers.iter().filter(|other| {
                other.served
                    && other.seq != answer.seq
                    && other.seq <= answer.last
                    && other.answered > answer.sent
            })
        };
        let at = |instant: Instant| {
            companions()
                .filter(|other| other.sent <= instant && instant < other.answered)
                .count() as u32
        };
        // The count changes only where a companion went.
        companions()
            .map(|other| other.sent)
            .filter(|&sent| sent > answer.sent && sent <= answer.answered)
            .chain([answer.sent])
            .map(at)
            .max()
            .unwrap_or(0)
    }

    /// Judges the refusals whose companions have all answered.
    fn judge_finished(&mut self) {
        let mut judged = Vec::new();
        self.pending.retain(|pending| {
            let finished = pending.unanswered == 0;
            if finished {
                judged.push(pending.served);
            }
            !finished
        });
        // The companions' round trips are service time only if the server
        // serves for longer than it refuses: sends served take longer than
        // refusals, on the mean, by more than chance. One slow send among
        // fast ones (a connection opened, a cold start) is no service time.
        let serves_longer = self
            .served_round_trip
            .mean()
            .zip(self.refusal_round_trip.mean())
            .is_some_and(|(served, refused)| {
                served > refused.saturating_add(self.refusal_round_trip.spread())
            });
        for served in judged {
            if served > 0 && serves_longer {
                self.evidence = (self.evidence + 1).min(EVIDENCE_CAP);
                self.limit = Some(self.limit.map_or(served, |limit| limit.min(served)));
            }
            tracing::trace!(
                served,
                limit = ?self.limit,
                evidence = self.evidence,
                "courteous: concurrency model: refusal judged by its companions"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Four sends at once, all served within 2 ms: sends with three others
    /// in flight were served, so no burst of four is the limit.
    fn four_served_at_once(model: &mut ConcurrencyLimit, t: Instant) -> Instant {
        for seq in 0..4 {
            model.sent(seq, t);
        }
        for seq in 0..4 {
            assert!(!model.served(seq, t + ms(2)));
        }
        t + ms(2)
    }

    #[test]
    fn a_send_is_dated_while_in_flight() {
        let t0 = Instant::now();
        let mut model = ConcurrencyLimit::default();
        model.sent(7, t0);
        model.sent(8, t0 + ms(5));
        assert_eq!(model.sent_at(7), Some(t0));
        assert_eq!(model.sent_at(8), Some(t0 + ms(5)));
        model.served(7, t0 + ms(9));
        assert_eq!(model.sent_at(7), None, "answered: no longer in flight");
        assert_eq!(model.sent_at(9), None, "never sent");
    }

    /// Four sends at once to a server serving two (0 and 2) for 200 ms and
    /// refusing the others within a 2 ms round trip.
    /// Sends numbered from `base`.
    fn two_served_of_four(
        model: &mut ConcurrencyLimit,
        t: Instant,
        base: u64,
    ) -> (Refusal, Refusal, bool) {
        for seq in base..base + 4 {
            model.sent(seq, t);
        }
        let first = model.refused(base + 1, t + ms(2));
        let second = model.refused(base + 3, t + ms(2));
        model.served(base, t + ms(201));
        let followed = model.served(base + 2, t + ms(202));
        (first, second, followed)
    }

    #[test]
    fn refusals_outlasted_by_slow_successes_show_the_limit() {
        let mut model = ConcurrencyLimit::default();
        let t = four_served_at_once(&mut model, Instant::now());
        let (first, second, followed) = two_served_of_four(&mut model, t, 10);
        assert_eq!((first, second), (Refusal::Other, Refusal::Other));
        assert!(followed, "followed once both companions answered");
        assert_eq!(model.limit(), Some(2));
        assert!(model.admits(1));
        assert!(!model.admits(2));
    }

    /// Four sends at once reach a server that serves two for 200 ms and
    /// refuses the others after as long, in another order than they went
    /// (on sockets, each on a connection of its own): the first and the
    /// last are served. Counted as they went, the refusals went beside one
    /// and two, the last send served beside three: no limit shows. Counted
    /// once all four answered, two were served at once beside each
    /// refusal, and no more beside either send served: a limit of two.
    #[test]
    fn a_burst_served_in_another_order_shows_its_limit_once_all_answered() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        for seq in 0..4 {
            model.sent(seq, t);
        }
        assert_eq!(model.refused(1, t + ms(202)), Refusal::Other);
        assert_eq!(model.refused(2, t + ms(202)), Refusal::Other);
        assert!(!model.served(3, t + ms(202)), "the first send is still out");
        assert!(model.served(0, t + ms(203)));
        assert_eq!(model.limit(), Some(2));
        assert!(model.admits(1));
        assert!(!model.admits(2));
    }

    /// The same burst after four were served at once: a refusal beside two
    /// is no limit of two (a rate's units ran out).
    #[test]
    fn a_burst_counted_once_all_answered_shows_no_limit_below_one_served() {
        let mut model = ConcurrencyLimit::default();
        let t = four_served_at_once(&mut model, Instant::now());
        for seq in 10..14 {
            model.sent(seq, t);
        }
        model.refused(11, t + ms(202));
        model.refused(12, t + ms(202));
        model.served(13, t + ms(202));
        assert!(!model.served(10, t + ms(203)));
        assert_eq!(model.limit(), None);
    }

    #[test]
    fn refusals_answered_as_fast_as_successes_show_no_limit() {
        let mut model = ConcurrencyLimit::default();
        let t = four_served_at_once(&mut model, Instant::now());
        for seq in 10..14 {
            model.sent(seq, t);
        }
        model.served(10, t + ms(2));
        model.refused(11, t + ms(2));
        model.served(12, t + ms(3));
        model.refused(13, t + ms(3));
        assert_eq!(model.limit(), None);
        assert!(model.admits(100));
    }

    #[test]
    fn a_burst_partly_served_shows_a_limit_on_trial() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        for seq in 0..4 {
            model.sent(seq, t);
        }
        // Refused with two and three others in flight, before anything
        // was served: nothing shown yet.
        assert_eq!(model.refused(2, t + ms(200)), Refusal::Other);
        assert_eq!(model.refused(3, t + ms(200)), Refusal::Other);
        // Served with none in flight: a limit of two explains the burst.
        assert!(model.served(0, t + ms(200)));
        model.served(1, t + ms(200));
        assert_eq!(model.limit(), Some(2));
        assert!(model.admits(1));
        assert!(!model.admits(2));
        // Served with one other in flight: the limit stands.
        model.sent(10, t + ms(200));
        model.sent(11, t + ms(200));
        model.served(10, t + ms(400));
        model.served(11, t + ms(400));
        assert_eq!(model.limit(), Some(2));
    }

    #[test]
    fn a_burst_refused_whole_shows_no_limit() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        for seq in 0..4 {
            model.sent(seq, t);
        }
        for seq in 0..4 {
            assert_eq!(model.refused(seq, t + ms(2)), Refusal::Other);
        }
        assert_eq!(model.limit(), None);
        assert!(model.admits(4));
    }

    #[test]
    fn a_send_refused_alone_on_trial_refutes_the_limit() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        model.sent(0, t);
        model.sent(1, t);
        model.served(0, t + ms(2));
        assert_eq!(model.refused(1, t + ms(2)), Refusal::Followed);
        model.sent(10, t + ms(2));
        assert_eq!(model.refused(10, t + ms(4)), Refusal::Other);
        assert_eq!(model.limit(), None);
        assert!(model.admits(100));
    }

    /// A rate limit's first burst, sent staggered: the send served went
    /// alone, the one refused beside it. Counting shows a limit of one;
    /// a precise hint of 998 ms, when every send was served in 2 ms, says
    /// the unit comes back with a clock, not with an answer.
    #[test]
    fn a_refusal_whose_precise_hint_outlasts_every_service_is_a_clock() {
        let t = Instant::now();
        let staggered = |model: &mut ConcurrencyLimit| {
            model.sent(0, t);
            model.sent(1, t);
            model.served(0, t + ms(2));
        };
        let precise = |wait| Some(Hint::stated(wait));
        let mut model = ConcurrencyLimit::default();
        staggered(&mut model);
        assert!(model.clocked(precise(ms(998))));
        model.refused_by_quota(1, t + ms(2));
        assert_eq!(model.limit(), None);
        assert!(model.admits(100));
        // A wait within the service seen, or a whole second, says nothing.
        let mut model = ConcurrencyLimit::default();
        staggered(&mut model);
        assert!(!model.clocked(precise(ms(2))));
        assert!(!model.clocked(precise(ms(1000))));
        assert!(!model.clocked(None));
        assert_eq!(model.refused(1, t + ms(2)), Refusal::Followed);
        // On trial, a refusal by the clock refutes the limit.
        assert!(model.clocked(precise(ms(998))));
        model.sent(2, t + ms(3));
        model.sent(3, t + ms(3));
        model.refused_by_quota(2, t + ms(4));
        assert_eq!(model.limit(), None);
        // Refuted as by a send refused alone: the next staggered burst's
        // count starts no trial.
        model.served(3, t + ms(5));
        for seq in 4..7 {
            model.sent(seq, t + ms(6));
        }
        // Refused beside two, when none served went beside more than one.
        assert_eq!(model.refused(6, t + ms(7)), Refusal::Other);
        assert_eq!(model.limit(), None);
        // Nor is it counted as a refusal beside a send served once that
        // one answers.
        let mut model = ConcurrencyLimit::default();
        model.sent(9, t);
        model.served(9, t + ms(2));
        model.sent(10, t + ms(2));
        model.sent(11, t + ms(2));
        assert!(model.clocked(precise(ms(998))));
        model.refused_by_quota(11, t + ms(3));
        assert!(!model.served(10, t + ms(4)));
        assert_eq!(model.limit(), None);
        // Before any service, nothing is known of how long it takes.
        assert!(!ConcurrencyLimit::default().clocked(precise(ms(998))));
    }

    #[test]
    fn a_send_refused_with_fewer_in_flight_than_the_limit_refutes_it() {
        let mut model = ConcurrencyLimit::default();
        let t = four_served_at_once(&mut model, Instant::now());
        let (_, _, followed) = two_served_of_four(&mut model, t, 10);
        assert!(followed);
        let t = t + ms(202);
        model.sent(20, t);
        assert_eq!(model.refused(20, t + ms(2)), Refusal::Other, "sent alone");
        assert_eq!(model.limit(), None);
        // Evidence 1 − 2: no trial starts below zero; the next burst's two
        // refusals explained by timing bring it back to 1: followed again.
        let t = t + ms(2);
        let (first, second, followed) = two_served_of_four(&mut model, t, 30);
        assert_eq!((first, second), (Refusal::Other, Refusal::Other));
        assert!(followed);
        assert_eq!(model.limit(), Some(2));
    }

    #[test]
    fn a_followed_limit_explains_refusals_of_sends_that_went_before_it() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        for seq in 0..4 {
            model.sent(seq, t);
        }
        model.served(0, t + ms(2));
        assert_eq!(model.refused(3, t + ms(2)), Refusal::Followed);
        assert_eq!(model.limit(), Some(3));
        assert_eq!(model.refused(2, t + ms(2)), Refusal::Explained);
        assert_eq!(model.limit(), Some(2));
    }

    /// A rate's bucket of four at c=4, sends going as answers come (AWS's
    /// mock): the fifth send is refused beside three while the fourth,
    /// which went beside three too, is still out. Its answer decides: served,
    /// it shows four at once and no limit of three; refused, a limit of
    /// three goes on trial.
    #[test]
    fn a_refusal_waits_for_the_send_that_went_beside_as_many() {
        let staggered = |model: &mut ConcurrencyLimit, t: Instant| {
            for seq in 0..4 {
                model.sent(seq, t);
            }
            model.served(0, t + ms(1));
            model.sent(4, t + ms(1));
            assert_eq!(model.refused(4, t + ms(2)), Refusal::Undecided);
            assert_eq!(model.limit(), None);
        };
        let t = Instant::now();
        let mut model = ConcurrencyLimit::default();
        staggered(&mut model, t);
        model.served(1, t + ms(2));
        model.served(2, t + ms(2));
        model.served(3, t + ms(2));
        assert_eq!(model.limit(), None, "four were served at once");

        let mut model = ConcurrencyLimit::default();
        staggered(&mut model, t);
        model.served(1, t + ms(2));
        model.served(2, t + ms(2));
        assert_eq!(model.refused(3, t + ms(2)), Refusal::Followed);
        assert_eq!(model.limit(), Some(3));
    }

    /// A send still out that went beside two of ours, both refused since:
    /// served, it shows one at once, no contradiction of a limit of two.
    /// The burst's last refusal starts the trial without waiting for it.
    #[test]
    fn a_send_out_beside_refusals_only_leaves_the_count_decided() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        for seq in 0..4 {
            model.sent(seq, t);
        }
        model.served(0, t + ms(1));
        model.served(1, t + ms(1));
        model.sent(4, t + ms(1));
        // The fourth went beside three, one refused since: undecided.
        assert_eq!(model.refused(2, t + ms(2)), Refusal::Undecided);
        // The fifth went beside the third and fourth, both refused.
        assert_eq!(model.refused(3, t + ms(2)), Refusal::Followed);
        assert_eq!(model.limit(), Some(2));
    }

    /// Timing shows a limit only through companions served: a refusal
    /// whose only companion was refused too shows none, however much
    /// longer the server serves than it refuses.
    #[test]
    fn refusals_beside_refusals_only_show_no_limit() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        for seq in 0..4 {
            model.sent(seq, t);
        }
        for seq in 0..4 {
            model.served(seq, t + ms(200));
        }
        let t = t + ms(200);
        model.sent(10, t);
        model.sent(11, t);
        assert_eq!(model.refused(10, t + ms(2)), Refusal::Other);
        assert_eq!(model.refused(11, t + ms(2)), Refusal::Other);
        assert_eq!(model.limit(), None);
    }

    /// One slow send among fast ones (a connection opened, a cold start)
    /// outlasts the refusals beside it, but the server serves no longer
    /// than it refuses: no limit is shown by timing.
    #[test]
    fn one_slow_send_among_fast_ones_shows_no_limit() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        for seq in 0..4 {
            model.sent(seq, t);
        }
        for seq in 1..4 {
            model.served(seq, t + ms(1));
        }
        for seq in 4..7 {
            model.sent(seq, t + ms(1));
        }
        for seq in 4..7 {
            model.refused(seq, t + ms(2));
        }
        model.served(0, t + ms(3));
        assert_eq!(model.limit(), None);
    }

    #[test]
    fn a_refusal_with_fewer_in_flight_than_followed_lowers_the_limit() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        for seq in 0..4 {
            model.sent(seq, t);
        }
        model.served(0, t + ms(200));
        // Answers out of order: the send that went fourth is refused first.
        assert_eq!(model.refused(3, t + ms(200)), Refusal::Followed);
        assert_eq!(model.limit(), Some(3));
        assert_eq!(model.refused(1, t + ms(200)), Refusal::Explained);
        assert_eq!(model.limit(), Some(1));
        // Served beside two of ours, one of them refused: two.
        model.served(2, t + ms(201));
        assert_eq!(model.limit(), Some(2));
    }

    #[test]
    fn an_abandoned_send_leaves_the_judgement_to_the_others() {
        let mut model = ConcurrencyLimit::default();
        let t = four_served_at_once(&mut model, Instant::now());
        model.sent(10, t);
        model.sent(11, t);
        assert_eq!(model.refused(11, t + ms(2)), Refusal::Other);
        model.abandoned(10);
        assert_eq!(model.limit(), None, "no companion was seen served");
        assert!(model.pending.is_empty());
    }

    #[test]
    fn a_limit_is_followed_only_while_the_evidence_is_positive() {
        let mut model = ConcurrencyLimit::default();
        let t = four_served_at_once(&mut model, Instant::now());
        // A lone refusal first: evidence −2.
        model.sent(20, t);
        model.refused(20, t + ms(2));
        // One refusal outlasted by a slow companion: evidence −1, a limit
        // measured but not followed.
        let t = t + ms(2);
        model.sent(30, t);
        model.sent(31, t);
        assert_eq!(model.refused(31, t + ms(2)), Refusal::Other);
        assert!(!model.served(30, t + ms(201)));
        assert_eq!(model.limit(), None);
        // Another: evidence 0, still not followed.
        let t = t + ms(201);
        model.sent(40, t);
        model.sent(41, t);
        model.refused(41, t + ms(2));
        assert!(!model.served(40, t + ms(201)));
        assert_eq!(model.limit(), None, "evidence 0");
        assert!(model.admits(100));
    }

    #[test]
    fn the_wait_for_a_slot_is_never_zero() {
        let mut model = ConcurrencyLimit::default();
        assert_eq!(model.wait_for_slot(), ms(100), "nothing measured yet");
        let t = Instant::now();
        model.sent(0, t);
        model.served(0, t);
        assert_eq!(model.wait_for_slot(), ms(1), "a zero round trip");
        model.sent(1, t);
        model.served(1, t + Duration::from_secs(60));
        assert_eq!(model.wait_for_slot(), Duration::from_secs(1));
    }

    #[test]
    fn a_send_that_went_first_but_arrived_after_the_next_is_not_alone() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        for seq in 0..4 {
            model.sent(seq, t);
        }
        // The first send (nothing in flight as it went) is refused: the
        // others went after it, so it was not alone.
        assert_eq!(model.refused(0, t + ms(200)), Refusal::Other);
        assert_eq!(model.evidence, 0, "not refuted");
        assert!(!model.served(1, t + ms(200)), "no refusal with others out");
        assert_eq!(model.refused(3, t + ms(200)), Refusal::Followed);
        assert_eq!(model.limit(), Some(3));
    }

    #[test]
    fn a_followed_limit_never_drops_below_one() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        for seq in 0..3 {
            model.sent(seq, t);
        }
        model.served(1, t + ms(2));
        assert_eq!(model.refused(2, t + ms(2)), Refusal::Followed);
        // The first send, refused while followed: nothing was in flight as
        // it went, but sends went after it.
        assert_eq!(model.refused(0, t + ms(3)), Refusal::Explained);
        assert_eq!(model.limit(), Some(1));
        assert!(model.admits(0));
    }

    #[test]
    fn a_send_served_beside_more_raises_the_limit_less_those_refused_before_it() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        for seq in 0..2 {
            model.sent(seq, t);
        }
        model.served(0, t + ms(2));
        assert_eq!(model.refused(1, t + ms(2)), Refusal::Followed);
        assert_eq!(model.limit(), Some(1));
        for seq in 2..5 {
            model.sent(seq, t + ms(3));
        }
        assert_eq!(model.refused(3, t + ms(4)), Refusal::Explained);
        // The fifth send went with two in flight, one of which (the
        // fourth) was refused: two served at once.
        model.served(4, t + ms(200));
        assert_eq!(model.limit(), Some(2));
    }

    /// A lone refusal set the evidence below zero: a burst partly served
    /// then shows a limit, but no trial starts until refusals explained by
    /// timing bring the evidence back.
    #[test]
    fn no_trial_starts_while_the_evidence_is_below_zero() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        model.sent(0, t);
        assert_eq!(model.refused(0, t + ms(2)), Refusal::Other, "alone");
        let t = t + ms(2);
        for seq in 10..14 {
            model.sent(seq, t);
        }
        assert_eq!(model.refused(12, t + ms(200)), Refusal::Other);
        assert_eq!(model.refused(13, t + ms(200)), Refusal::Other);
        assert!(!model.served(10, t + ms(200)), "evidence −2: no trial");
        assert!(!model.served(11, t + ms(200)));
        assert_eq!(model.limit(), None);
        assert!(model.admits(100));
    }

    /// A refusal as slow as the sends served (no timing evidence), sent
    /// first: two sends served at once beside it, the second of which
    /// went during its round trip. Counted once all answered, a limit of
    /// two.
    #[test]
    fn a_companion_that_went_during_a_refusal_counts_beside_it() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        model.sent(0, t);
        model.sent(1, t);
        model.sent(2, t + ms(1));
        assert!(!model.served(1, t + ms(300)));
        assert!(!model.served(2, t + ms(300)));
        assert_eq!(model.refused(0, t + ms(301)), Refusal::Followed);
        assert_eq!(model.limit(), Some(2));
        assert!(model.admits(1));
        assert!(!model.admits(2));
    }

    /// Round trips are half-open: a send that went the instant another was
    /// answered was never in flight beside it. A server serving one at a
    /// time, back to back, beside a slow refusal: a limit of one.
    #[test]
    fn a_send_that_went_as_another_was_answered_was_not_beside_it() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        model.sent(0, t);
        model.sent(1, t);
        assert!(!model.served(1, t + ms(100)));
        model.sent(2, t + ms(100));
        assert!(!model.served(2, t + ms(200)));
        assert_eq!(model.refused(0, t + ms(201)), Refusal::Followed);
        assert_eq!(model.limit(), Some(1));
        assert!(model.admits(0));
        assert!(!model.admits(1));
    }

    /// Of the refusals counted together, one with nothing served beside it
    /// (another's doing) hides no limit the others show.
    #[test]
    fn a_refusal_with_none_served_beside_it_hides_no_limit() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        // 0: refused last, after everything; 1: refused at once, alone of
        // ours served.
        model.sent(0, t);
        model.sent(1, t);
        assert_eq!(model.refused(1, t + ms(5)), Refusal::Other);
        // 2 refused beside 3, served, as slowly: counted once 0 answers.
        model.sent(2, t + ms(10));
        model.sent(3, t + ms(10));
        assert!(!model.served(3, t + ms(100)));
        assert_eq!(model.refused(2, t + ms(100)), Refusal::Other);
        assert_eq!(model.refused(0, t + ms(500)), Refusal::Followed);
        assert_eq!(model.limit(), Some(1));
    }

    /// A refusal counted before the send served beside it (that send waits
    /// for one that went as it was answered) still shows the limit when
    /// that send is counted.
    #[test]
    fn a_refusal_counted_before_the_send_served_beside_it_shows_the_limit() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        model.sent(0, t);
        model.sent(1, t + ms(200));
        // As slow as the send served: no timing evidence.
        assert_eq!(model.refused(0, t + ms(300)), Refusal::Other);
        model.sent(2, t + ms(500));
        assert!(!model.served(1, t + ms(500)), "2 is still out");
        assert_eq!(model.refused(2, t + ms(600)), Refusal::Followed);
        assert_eq!(model.limit(), Some(1));
    }

    /// The sends served at once beside a slow refusal count however many
    /// answers came after theirs while it was out.
    #[test]
    fn companions_answered_long_before_a_slow_refusal_still_count() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        for seq in 0..4 {
            model.sent(seq, t);
        }
        for seq in 1..4 {
            assert!(!model.served(seq, t + ms(10)));
        }
        // Forty sends served one at a time while 0 is out.
        for k in 0..40 {
            let seq = 10 + k;
            let at = t + ms(20 + 10 * k);
            model.sent(seq, at);
            assert!(!model.served(seq, at + ms(5)));
        }
        assert_eq!(model.refused(0, t + ms(1000)), Refusal::Followed);
        assert_eq!(model.limit(), Some(3));
    }

    /// What the model remembers stays bounded however many answers come.
    #[test]
    fn the_answers_remembered_are_bounded() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        for seq in 0..1000 {
            let at = t + ms(10 * seq);
            model.sent(seq, at);
            if seq % 2 == 0 {
                model.served(seq, at + ms(5));
            } else {
                model.refused(seq, at + ms(5));
            }
        }
        assert!(model.answers.len() <= ANSWERS, "{}", model.answers.len());
        assert!(model.uncounted.len() <= PENDING_CAP);
        assert!(model.outstanding.is_empty());
    }

    /// A refusal of a send that went first (nothing in flight as it went,
    /// others after it) counts nothing as they went: the burst's other
    /// refusals show the limit.
    #[test]
    fn a_refusal_that_went_first_hides_no_limit_counted_as_they_went() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        for seq in 0..4 {
            model.sent(seq, t);
        }
        assert_eq!(model.refused(0, t + ms(200)), Refusal::Other);
        assert_eq!(model.refused(2, t + ms(200)), Refusal::Other);
        assert_eq!(model.refused(3, t + ms(200)), Refusal::Other);
        assert!(model.served(1, t + ms(200)));
        assert_eq!(model.limit(), Some(2));
    }

    /// A refusal is counted once its last companion answered, not before:
    /// the send that went last, served after it, counts beside it.
    #[test]
    fn a_refusal_is_counted_once_its_last_companion_answered() {
        let mut model = ConcurrencyLimit::default();
        let t = Instant::now();
        model.sent(0, t);
        model.sent(1, t);
        model.sent(2, t + ms(1));
        assert!(!model.served(1, t + ms(300)));
        assert_eq!(model.refused(0, t + ms(301)), Refusal::Other, "2 is out");
        assert!(model.served(2, t + ms(302)));
        assert_eq!(model.limit(), Some(2));
    }
}
