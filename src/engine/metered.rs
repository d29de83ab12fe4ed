//! Quotas counted in another unit than requests (model tokens, input or
//! output tokens, query points, bytes): each send spends its **cost** in
//! that unit, declared by the request ([`Cost`]) or estimated from the
//! readings. Every quota of a scope must admit a send: the pacer the
//! requests quota, this model each of the others.
//!
//! **Observation.** A response reading `R` units left of `L`, whole again
//! in `T` (its reset), received at `t` in the answer to our send `s`,
//! while sends of ours holding `P` units (their costs) are still out:
//!
//! ```text
//! level(t) ∈ [R − P, R]      the server may not have counted those yet
//! level(t + T) = L           whole again by then, if nobody spends more
//! ```
//!
//! The mirror takes the low end, `E ← R − P` at `t`. `P` also holds our
//! later sends than `s` already answered by answers without a reading of
//! this quota (the server counted them after `s`), at what they spent or
//! reserved. Only the answer to a
//! later send than the last one synced re-syncs it (an older send's
//! answer describes an older state). `t + T` is measured from the answer's
//! arrival, a trip after the server counted, so a send at `t + T` reaches
//! it at least a round trip after the instant `T` named: the margin is the
//! network's own.
//!
//! **Refill.** Two ways units come back, told apart by the readings:
//!
//! | kind | evidence | level at `t′ > t` |
//! |---|---|---|
//! | window (until shown otherwise) | nothing came back early | `E` until `t + T`, then `L` |
//! | bucket | well before the previous reading's `t + T`: a count above it by more than our sends then out, or an end `t + T` that moved later as we spent | `min(L, E + r·(t′ − t))`, `r` the stated rate (below) |
//! | back to window | a count that fell while the end stayed put; a refusal while the bucket's level admitted the send | as a window |
//!
//! A bucket's rate is the policy's `L / w` where it states a window (IETF
//! `q` and `w`); else its reset is the time to refill what is missing
//! (OpenAI's `x-ratelimit-reset-tokens`, Anthropic's `…-tokens-reset`), so
//! each reading with `R < L` states the rate `(L − R) / T`, and each send of
//! cost `c` moves that end `c / r` later, where a window's end stays put.
//! Every comparison of instants allows the measured round trip and its
//! spread (`round_trip.rs`, `SRTT + 4·RTTVAR`: a reading counted just after
//! a boundary may arrive before the previous one's `t + T` by as much as
//! one trip) and the reset's precision (a whole number of seconds is taken
//! as rounded to the second). Read as a bucket, a window refuses; read as
//! a window, a bucket is spent in bursts at its rate: so a window is the
//! default, and a bucket needs the evidence.
//!
//! **Cost.** A send declaring `c` units of a quota's unit reserves `c`;
//! one declaring none reserves the estimate `ĉ`, the quota's fall per
//! request between two readings with no boundary between them:
//!
//! ```text
//! ĉ_sample = (R₁ − R₂ + r·Δt − Σ declared) / k     k: undeclared sends of ours between the two
//! c̄ ← ĉ_sample (first) or c̄ + ½·(ĉ_sample − c̄)
//! ĉ = max(c̄, ĉ_sample)
//! ```
//!
//! An estimate too low admits a send the quota cannot hold (a refusal);
//! too high, it only waits longer: so the latest sample, when higher, is
//! taken over the mean.
//!
//! A first reading gives no sample: it tells what is left, not what we
//! spent (others or an earlier process may have spent before, and a
//! policy's limit may exceed what its bucket holds at once). Before any
//! estimate an undeclared send reserves nothing; once there is one, the
//! sends still out are priced at it.
//!
//! **Settling.** An answer may state what its send spent, `a` units (the
//! `usage` of an OpenAI or Anthropic body, [`Signal::usage`](crate::signal::Signal::usage)).
//! The send reserved `c` (declared, or `ĉ` then, or its price at the
//! latest re-sync); while the mirror still holds that reservation (no
//! window's end passed since: a window whole again holds no send of the
//! old one), it holds `a` instead:
//!
//! ```text
//! E ← min(L, E(now) + c − a)
//! ```
//!
//! Then, in the fall between two readings, a settled declared send counts
//! `a` where it counted `c`; and an undeclared send's `a` is a sample of
//! `ĉ` itself (`c̄ ← a` first, or `c̄ + ½·(a − c̄)`; `ĉ = max(c̄, a)`), one
//! a first reading cannot give: a quota first read after such answers
//! starts from them. A reading in the same answer re-syncs after the
//! settling (`E ← R − P`, its sample after `a`): where the server states
//! what is left, it is what the mirror holds, and the fall still samples
//! what the server counts per undeclared send (a server that counts more
//! than `usage` says, as OpenAI may count `max_tokens` at admission, is still
//! paced by its own count when that sample is the latest). So with a
//! reading in every answer, settling changes only `ĉ`; without one (a
//! gateway that drops the headers, a reading that lags), it keeps `E`
//! what the sends spent until the next reading.
//!
//! **Admission.** A send of cost `c` goes when `E(now) ≥ min(c, L)` (a
//! cost above the limit waits for a whole quota and may still be refused:
//! the server's answer decides), else waits until the level reaches it:
//! `(min(c, L) − E) / r` in a bucket, `t + T` in a window. A quota with no
//! reset and no rate holds nothing back: nothing says when it returns, and
//! the server's refusal (with its hint) will.
//!
//! A refusal after which a quota's level cannot admit the next send is
//! that quota's: the scope waits for the hint, and the requests pacer does
//! not read it as a refusal of the requests quota.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use super::cost::Cost;
use super::round_trip::RoundTrip;
use super::time::{apart, later, precision_of, wait_from_secs};
use crate::signal::QuotaUnit;

/// Quotas followed per scope, at most: a response listing more adds none
/// beyond (OpenAI sends one besides requests, Anthropic three).
const MAX_QUOTAS: usize = 8;
/// Sends remembered for the cost estimate: the latest 64 (a sample
/// counts the sends between two readings; 16 in flight fit several times).
const RECENT_SENDS: usize = 64;
/// Weight of a new sample in the cost estimate: a half, so a changed cost
/// is followed within a few readings while one odd sample moves it half.
const COST_WEIGHT: f64 = 0.5;
/// Tolerance on unit arithmetic (float rounding).
const EPSILON: f64 = 1e-9;

/// One quota's numbers in a response.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MeterReading<'a> {
    pub(crate) unit: QuotaUnit,
    pub(crate) name: Option<&'a str>,
    pub(crate) limit: Option<u64>,
    pub(crate) remaining: u64,
    /// Until whole again (clamped by the caller).
    pub(crate) reset: Option<Duration>,
    /// The policy's window, if it states one (`limit` per `window`).
    pub(crate) window: Option<Duration>,
    /// How far the reset may be off, where the parser knows (an epoch read
    /// against `Date`); else taken from the reset's value.
    pub(crate) precision: Option<Duration>,
}

/// One send of ours, remembered for the cost samples.
#[derive(Debug, Clone)]
struct Sent {
    seq: u64,
    /// What it declared, in units other than requests.
    declared: Vec<Cost>,
    /// What its answer said it spent (settled), in units other than
    /// requests.
    spent: Vec<Cost>,
}

/// A send still out, in one quota.
#[derive(Debug, Clone, Copy)]
struct Held {
    /// What it declared of this quota (`None`: the estimate).
    declared: Option<f64>,
    /// What the mirror's level holds for it now: its cost when it went or
    /// at the latest re-sync; `None` once a window's end passed since.
    reserved: Option<f64>,
}

/// The last reading synced from.
#[derive(Debug, Clone, Copy)]
struct Synced {
    seq: u64,
    remaining: f64,
    at: Instant,
    full_at: Option<Instant>,
    /// The costs of our other sends out then.
    out: f64,
}

/// One quota in another unit.
#[derive(Debug, Clone)]
struct MeteredQuota {
    unit: QuotaUnit,
    name: Option<String>,
    limit: f64,
    /// `E` at `at`.
    level: f64,
    at: Instant,
    /// Whole again by then (a window's end; a bucket's "full").
    full_at: Option<Instant>,
    /// Units a second, once the readings showed units coming back before
    /// a reset (a bucket); `None`: a window.
    rate: Option<f64>,
    /// The rate the latest reading states, `(L − R) / T`.
    stated_rate: Option<f64>,
    latest: Option<Synced>,
    /// The samples' smoothed mean.
    smoothed_cost: Option<f64>,
    /// `ĉ`: what an undeclared send costs.
    estimate: Option<f64>,
    /// Our sends out: what each declared, what the level holds for it.
    held: BTreeMap<u64, Held>,
}

impl MeteredQuota {
    fn new(reading: &MeterReading, now: Instant) -> Self {
        Self {
            unit: reading.unit,
            name: reading.name.map(str::to_owned),
            limit: 0.0,
            level: 0.0,
            at: now,
            full_at: None,
            rate: None,
            stated_rate: None,
            latest: None,
            smoothed_cost: None,
            estimate: None,
            held: BTreeMap::new(),
        }
    }

    fn is(&self, unit: QuotaUnit, name: Option<&str>) -> bool {
        self.unit == unit && self.name.as_deref() == name
    }

    /// `E(now)`.
    fn level(&self, now: Instant) -> f64 {
        let since = now.saturating_duration_since(self.at).as_secs_f64();
        match (self.rate, self.full_at) {
            (_, Some(full)) if now >= full => self.limit,
            (Some(rate), _) => (self.level + rate * since).min(self.limit),
            (None, _) => self.level,
        }
    }

    /// What a send declaring `costs` declares of this quota.
    fn declared(&self, costs: &[Cost]) -> Option<f64> {
        costs
            .iter()
            .find(|cost| cost.unit() == self.unit)
            .map(|cost| cost.amount() as f64)
    }

    /// What a send declaring `declared` takes: that, else the estimate
    /// (nothing before one).
    fn cost(&self, declared: Option<f64>) -> f64 {
        declared.or(self.estimate).unwrap_or(0.0)
    }

    /// How long until a send of cost `cost` may go; `None`: now.
    fn wait(&self, now: Instant, cost: f64) -> Option<Duration> {
        let need = cost.min(self.limit);
        let have = self.level(now);
        if have + EPSILON >= need {
            return None;
        }
        let by_rate = self
            .rate
            .filter(|rate| *rate > 0.0)
            .map(|rate| wait_from_secs((need - have) / rate));
        let by_reset = self.full_at.map(|full| full.saturating_duration_since(now));
        match (by_rate, by_reset) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn take(&mut self, now: Instant, seq: u64, declared: Option<f64>) {
        let cost = self.cost(declared);
        self.level = self.level(now) - cost;
        self.at = now;
        if self.full_at.is_some_and(|full| now >= full) {
            // That window's end has passed; the next one's is unknown
            // until a reading names it. The level is whole again: it
            // holds none of the sends of the last one.
            self.full_at = None;
            for held in self.held.values_mut() {
                held.reserved = None;
            }
        }
        let reserved = Some(cost);
        self.held.insert(seq, Held { declared, reserved });
    }

    /// Send `held` (still held) spent `spent`; `undeclared`: it declared
    /// no cost of this quota, so `spent` is a sample of the estimate. Past
    /// a window's end the level is whole whatever it held (`level`), and
    /// the next send forgets every reservation (`take`).
    fn settle(&mut self, now: Instant, held: Option<Held>, spent: f64, undeclared: bool) {
        if let Some(reserved) = held.and_then(|held| held.reserved) {
            self.level = (self.level(now) + reserved - spent).min(self.limit);
            self.at = now;
        }
        if undeclared {
            self.learn(spent);
        }
    }

    fn sync(
        &mut self,
        now: Instant,
        seq: u64,
        reading: &MeterReading,
        recent: &VecDeque<Sent>,
        margin: Duration,
    ) {
        if self.latest.is_some_and(|latest| seq < latest.seq) {
            return;
        }
        let remaining = reading.remaining as f64;
        let limit = reading
            .limit
            .map_or(self.limit.max(remaining), |limit| limit as f64)
            .max(remaining);
        self.stated_rate = match (reading.window, reading.reset) {
            (Some(window), _) if !window.is_zero() => Some(limit / window.as_secs_f64()),
            (_, Some(reset)) if !reset.is_zero() && remaining < limit => {
                Some((limit - remaining) / reset.as_secs_f64())
            }
            _ => self.stated_rate,
        };
        // A first reading tells what is left, not what we spent: the quota
        // may not have been whole before our sends (others, an earlier
        // process), and a policy's limit may exceed what its bucket holds
        // at once. Two readings well before the earlier one's end (no
        // boundary between the two counts, allowing one trip) tell both.
        if let Some(previous) = self.latest
            && previous
                .full_at
                .is_none_or(|full| later(now, margin) < full)
        {
            self.judge_refill(&previous, now, reading, margin);
            let refill = self.rate.map_or(0.0, |rate| {
                rate * now.saturating_duration_since(previous.at).as_secs_f64()
            });
            let fell = previous.remaining - remaining + refill;
            self.learn_cost(fell, limit, recent, previous.seq, seq);
        }
        if self.rate.is_some() {
            self.rate = self.stated_rate;
        }
        // Sends out before an estimate existed are priced at it now that
        // it does (the first burst went before any reading).
        let mut out = 0.0;
        for (held_seq, held) in &mut self.held {
            let cost = held.declared.or(self.estimate).unwrap_or(0.0);
            held.reserved = Some(cost);
            if *held_seq != seq {
                out += cost;
            }
        }
        // Later sends already answered, by answers without a reading of
        // this quota: the server counted them after this answer's count.
        for sent in recent {
            if sent.seq > seq && !self.held.contains_key(&sent.seq) {
                let declared = self.declared(&sent.declared);
                out += self.declared(&sent.spent).unwrap_or(self.cost(declared));
            }
        }
        self.limit = limit;
        self.level = remaining - out;
        self.at = now;
        self.full_at = reading.reset.map(|reset| later(now, reset));
        self.latest = Some(Synced {
            seq,
            remaining,
            at: now,
            full_at: self.full_at,
            out,
        });
    }

    /// Between two readings with no boundary between them: a bucket shows
    /// units back early (the count rose by more than our sends then out
    /// explain) or an end that moved later as we spent (a bucket's reset
    /// counts to full, `(L − R) / r`); a window keeps its end where it was,
    /// within the answers' timing spread and the reset's precision. A
    /// window is the default: read as a bucket, a window refuses.
    fn judge_refill(
        &mut self,
        previous: &Synced,
        now: Instant,
        reading: &MeterReading,
        margin: Duration,
    ) {
        let remaining = reading.remaining as f64;
        let rose = remaining > previous.remaining + previous.out + EPSILON;
        let ends = previous.full_at.zip(reading.reset.map(|reset| {
            let precision = reading.precision.unwrap_or_else(|| precision_of(reset));
            (later(now, reset), margin.saturating_add(precision))
        }));
        let moved = ends.is_some_and(|(before, (end, slack))| end > later(before, slack));
        let stayed = ends.is_some_and(|(before, (end, slack))| apart(end, before) <= slack);
        if rose || moved {
            self.rate = self.stated_rate;
        } else if stayed && remaining < previous.remaining {
            self.rate = None;
        }
    }

    /// One cost sample: the quota fell `fell` units over our sends numbered
    /// from `after` (exclusive) to `upto`; a settled declared send counts
    /// what it spent.
    fn learn_cost(
        &mut self,
        fell: f64,
        limit: f64,
        recent: &VecDeque<Sent>,
        after: u64,
        upto: u64,
    ) {
        let (declared, undeclared) = recent
            .iter()
            .filter(|sent| sent.seq > after && sent.seq <= upto)
            .fold((0.0, 0u32), |(declared, undeclared), sent| {
                match self.declared(&sent.declared) {
                    Some(cost) => {
                        let spent = self.declared(&sent.spent).unwrap_or(cost);
                        (declared + spent, undeclared)
                    }
                    None => (declared, undeclared + 1),
                }
            });
        if undeclared == 0 {
            return;
        }
        self.learn(((fell - declared) / f64::from(undeclared)).clamp(0.0, limit));
    }

    /// One sample of what an undeclared send costs.
    fn learn(&mut self, sample: f64) {
        self.smoothed_cost = Some(match self.smoothed_cost {
            None => sample,
            Some(smoothed) => smoothed + COST_WEIGHT * (sample - smoothed),
        });
        self.estimate = self.smoothed_cost.map(|smoothed| smoothed.max(sample));
    }

    /// After a refusal: whether this quota's level cannot admit the next
    /// send. If so, a bucket is read as a window from now on (its pace
    /// ran ahead of the server's).
    fn refused(&mut self, now: Instant) -> bool {
        let need = self.estimate.unwrap_or(1.0).clamp(1.0, self.limit.max(1.0));
        let short = self.level(now) + EPSILON < need;
        if short {
            self.rate = None;
        }
        short
    }
}

/// The metered quotas of one scope.
#[derive(Debug, Clone, Default)]
pub(crate) struct Metered {
    quotas: Vec<MeteredQuota>,
    /// The latest sends: number, declared costs, settled costs.
    recent: VecDeque<Sent>,
    /// When each send of ours still out went.
    sent_at: BTreeMap<u64, Instant>,
    round_trip: RoundTrip,
}

impl Metered {
    /// How long until a send declaring `costs` may go at `now` (`None`:
    /// now): the longest wait any quota asks.
    pub(crate) fn wait(&self, now: Instant, costs: &[Cost]) -> Option<Duration> {
        self.quotas
            .iter()
            .filter_map(|quota| quota.wait(now, quota.cost(quota.declared(costs))))
            .max()
    }

    /// Whether an undeclared send could go at `now`.
    pub(crate) fn ready(&self, now: Instant) -> bool {
        self.wait(now, &[]).is_none()
    }

    /// Send `seq` declaring `costs` goes at `now`: every quota reserves
    /// its cost.
    pub(crate) fn take(&mut self, now: Instant, seq: u64, costs: &[Cost]) {
        for quota in &mut self.quotas {
            let declared = quota.declared(costs);
            quota.take(now, seq, declared);
        }
        let declared = costs
            .iter()
            .copied()
            .filter(|cost| cost.unit() != QuotaUnit::Requests)
            .collect();
        if self.recent.len() == RECENT_SENDS {
            self.recent.pop_front();
        }
        self.recent.push_back(Sent {
            seq,
            declared,
            spent: Vec::new(),
        });
        self.sent_at.insert(seq, now);
    }

    /// The answer to send `seq`, received at `now`, says it spent `spent`
    /// (before [`answered`](Self::answered) and [`sync`](Self::sync) for
    /// the same answer): each quota in a unit of `spent` holds that
    /// instead of what the send reserved, and learns from it (module
    /// docs, **Settling**).
    pub(crate) fn settle(&mut self, now: Instant, seq: u64, spent: &[Cost]) {
        let spent: Vec<Cost> = spent
            .iter()
            .copied()
            .filter(|cost| cost.unit() != QuotaUnit::Requests)
            .collect();
        let sent = self.recent.iter_mut().find(|sent| sent.seq == seq);
        let declared = sent.as_ref().map(|sent| sent.declared.clone());
        if let Some(sent) = sent {
            sent.spent.clone_from(&spent);
        }
        for quota in &mut self.quotas {
            let Some(amount) = quota.declared(&spent) else {
                continue;
            };
            let held = quota.held.get(&seq).copied();
            // Declared nothing of this quota: from what it went with if it
            // is still held, else from the latest sends.
            let undeclared = match (held, &declared) {
                (Some(held), _) => held.declared.is_none(),
                (None, Some(declared)) => quota.declared(declared).is_none(),
                (None, None) => false,
            };
            quota.settle(now, held, amount, undeclared);
        }
    }

    /// Send `seq` was answered at `now` (or abandoned: `now` is `None`).
    pub(crate) fn answered(&mut self, seq: u64, now: Option<Instant>) {
        if let (Some(sent), Some(now)) = (self.sent_at.remove(&seq), now) {
            self.round_trip.observe(now.saturating_duration_since(sent));
        }
        for quota in &mut self.quotas {
            quota.held.remove(&seq);
        }
    }

    /// The answer to send `seq`, received at `now`, read `reading`.
    pub(crate) fn sync(&mut self, now: Instant, seq: u64, reading: &MeterReading) {
        let name = reading.name;
        let index = match self.quotas.iter().position(|q| q.is(reading.unit, name)) {
            Some(index) => index,
            None if self.quotas.len() < MAX_QUOTAS => {
                let mut quota = MeteredQuota::new(reading, now);
                for sent in &self.recent {
                    let declared = quota.declared(&sent.declared);
                    // The sends still out spend from it too…
                    if self.sent_at.contains_key(&sent.seq) {
                        let reserved = None;
                        quota.held.insert(sent.seq, Held { declared, reserved });
                    }
                    // …and what the settled ones spent prices the others.
                    if let (None, Some(spent)) = (declared, quota.declared(&sent.spent)) {
                        quota.learn(spent);
                    }
                }
                self.quotas.push(quota);
                self.quotas.len() - 1
            }
            None => return,
        };
        let margin = self
            .round_trip
            .mean()
            .unwrap_or_default()
            .saturating_add(self.round_trip.spread());
        self.quotas[index].sync(now, seq, reading, &self.recent, margin);
    }

    /// A refusal was answered at `now`, its readings synced: whether a
    /// metered quota explains it (its level cannot admit the next send).
    pub(crate) fn refused(&mut self, now: Instant) -> bool {
        let mut explained = false;
        for quota in &mut self.quotas {
            explained |= quota.refused(now);
        }
        explained
    }
}

#[cfg(test)]
mod tests;
