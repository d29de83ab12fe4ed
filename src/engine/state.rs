//! One scope's shared state and the rules applied to it.

use std::cmp::Reverse;
use std::time::{Duration, Instant};

use http::StatusCode;
use rand::SeedableRng;
use rand::rngs::SmallRng;

use super::Attempt;
use super::budget::BudgetAccount;
use super::concurrency::{ConcurrencyLimit, Refusal};
use super::config::Config;
use super::cost::Cost;
use super::decision::{Admit, GiveUpReason, ResponseClass, RetryReason, Verdict, WaitReason};
use super::declared::DeclaredLog;
use super::drain::{Answer, Drain};
use super::hint::Hint;
use super::kind::QuotaKind;
use super::metered::{MeterReading, Metered};
use super::pacer::{Pacer, QuotaReading};
use super::round_trip::MIN_TIMEOUT;
use super::server_clock::{Located, ServerClock};
use super::stats::ScopeStats;
use super::time::{MAX_SERVER_WAIT, later, wait_from_secs};
use crate::signal::{HintSource, Quota, QuotaSource, QuotaUnit, Signal};

/// How long, at least, the others wait for the first send after a pause
/// to be answered before they go anyway (a lost answer must not hold the
/// scope): RFC 6298's least retransmission timeout. They wait as long as
/// a served answer may take, `SRTT + 4·RTTVAR` of the round trips of the
/// sends served (`round_trip.rs`), within 1 s and 60 s: a server that
/// serves for seconds answers its probe in seconds, and the others going
/// before it would all be refused with it.
pub const PROBE_PATIENCE: Duration = MIN_TIMEOUT;
/// The others look again after as long as the probe has been out, at
/// least 1 ms (tokio's timer tick)…
const PROBE_POLL_MIN: Duration = Duration::from_millis(1);
/// …and at most 50 ms.
const PROBE_POLL_MAX: Duration = Duration::from_millis(50);

/// Everything known about one scope.
#[derive(Debug)]
pub(crate) struct ScopeState {
    pause_until: Option<Instant>,
    pacer: Pacer,
    /// The pacer as it was when a concurrency limit went on trial, until a
    /// send succeeds under it: a trial refuted before that gives back what
    /// the pacer had seen (the burst its refusals end), as if it had never
    /// started.
    pacer_before_trial: Option<Box<Pacer>>,
    /// The concurrency-limit model (`concurrency.rs`): followed while the
    /// evidence says the server serves at most so many of ours at once.
    concurrency: ConcurrencyLimit,
    /// The quotas in other units than requests (`metered.rs`): every one
    /// must admit a send, at its cost.
    metered: Metered,
    /// The drain of a quota read as `used/size` (`drain.rs`): measured,
    /// the parser's assumed drain a prior.
    drain: Drain,
    /// The quota the configuration declares (`declared.rs`), if any.
    declared: Option<DeclaredLog>,
    /// The server's clock, located from its `Date` headers
    /// (`server_clock.rs`): times it states against `Date` to a leg, not
    /// a second.
    server_clock: ServerClock,
    in_flight: u32,
    next_seq: u64,
    last_synced_seq: Option<u64>,
    consecutive_throttles: u32,
    /// Sends from this sequence number on were admitted after the last
    /// refusal paused the scope; refusals of earlier ones are not news.
    pause_from_seq: Option<u64>,
    /// The first send after a pause (its sequence number and when it went):
    /// the others wait for its answer (see [`PROBE_PATIENCE`]).
    probe: Option<(u64, Instant)>,
    budget: Option<BudgetAccount>,
    /// Draws the backoff and the hint jitter (seeded: see [`Config::rng_seed`]).
    rng: SmallRng,
    /// When the scope was last admitted to or heard from.
    last_used: Instant,
    /// The latest quota reset the server announced: until then the scope
    /// knows something worth keeping.
    reset_at: Option<Instant>,
    stats: ScopeStats,
}

impl ScopeState {
    pub(crate) fn new(config: &Config, key: &str, now: Instant) -> Self {
        Self {
            pause_until: None,
            pacer: Pacer::default(),
            pacer_before_trial: None,
            concurrency: ConcurrencyLimit::default(),
            metered: Metered::default(),
            drain: Drain::default(),
            declared: config
                .declared_quota
                .map(|(limit, window)| DeclaredLog::new(limit, window)),
            server_clock: ServerClock::default(),
            in_flight: 0,
            next_seq: 0,
            last_synced_seq: None,
            consecutive_throttles: 0,
            pause_from_seq: None,
            probe: None,
            budget: config.retry_budget.map(|b| BudgetAccount::new(b, now)),
            rng: match config.rng_seed {
                Some(seed) => SmallRng::seed_from_u64(seed ^ fnv1a(key.as_bytes())),
                None => rand::make_rng(),
            },
            last_used: now,
            reset_at: None,
            stats: ScopeStats::default(),
        }
    }

    /// The counters, with the requests in flight now.
    pub(crate) fn stats(&self) -> ScopeStats {
        ScopeStats {
            in_flight: self.in_flight,
            quota_kind: self.quota_kind(),
            ..self.stats
        }
    }

    /// The kind of quota the scope is paced by now (`kind.rs`): a model
    /// beside the pacer that is followed, else the pacer's reading.
    fn quota_kind(&self) -> QuotaKind {
        if self.concurrency.limit().is_some() {
            QuotaKind::Concurrency
        } else if self.drain.measured() {
            QuotaKind::LeakyBucket
        } else {
            self.pacer.kind()
        }
    }

    /// Nothing in flight, no pause or reset pending, unused for `idle`.
    pub(crate) fn is_idle(&self, now: Instant, idle: Duration) -> bool {
        self.in_flight == 0
            && self.pause_until.is_none_or(|until| until <= now)
            && self.reset_at.is_none_or(|reset| reset <= now)
            && now.saturating_duration_since(self.last_used) >= idle
    }

    /// Go now (returns the send's sequence number) or wait. `pace: false`
    /// skips the requests quota's local pacing (a shared store paced the
    /// send already); `costs`: what the send declares it spends of quotas
    /// in other units.
    pub(crate) fn admit(
        &mut self,
        config: &Config,
        now: Instant,
        pace: bool,
        costs: &[Cost],
    ) -> Result<u64, (Duration, WaitReason)> {
        let pause_ended = match self.pause_until {
            Some(until) if until > now => return Err((until - now, WaitReason::Paused)),
            Some(_) => true,
            None => false,
        };
        if let Some((_, sent)) = self.probe {
            let out = now.saturating_duration_since(sent);
            if out < self.probe_patience() {
                // As long again as it has been out, within bounds: a poll
                // that follows the round trip without spinning.
                let wait = out.clamp(PROBE_POLL_MIN, PROBE_POLL_MAX);
                return Err((wait, WaitReason::Paused));
            }
            self.probe = None;
        }
        if !self.concurrency.admits(self.in_flight) {
            return Err((self.concurrency.wait_for_slot(), WaitReason::Pacing));
        }
        // Every quota must admit the send: the declared and metered ones
        // are asked first, as asking takes nothing, then the pacer takes
        // its unit.
        if config.pacing
            && let Some(wait) = self
                .declared_wait(now)
                .into_iter()
                .chain(self.metered.wait(now, costs))
                .max()
        {
            return Err((wait, WaitReason::Pacing));
        }
        if config.pacing && pace {
            self.pacer
                .admit(now, Some(self.next_seq))
                .map_err(|wait| (wait, WaitReason::Pacing))?;
        }
        self.last_used = self.last_used.max(now);
        let seq = self.next_seq;
        if pause_ended {
            // The first send after a pause goes alone (module docs of
            // `Config`: a pause ends with one request).
            self.pause_until = None;
            self.probe = Some((seq, now));
        } else if config.pacing && pace && self.pacer.next_unit_unknown(now) {
            // It took the last unit the mirror knows of, and nothing says
            // when the next comes: its answer is the news, and the others
            // wait for it as for a pause's first send, not go blind.
            self.probe = Some((seq, now));
        }
        self.next_seq += 1;
        self.in_flight += 1;
        self.stats.sent += 1;
        self.concurrency.sent(seq, now);
        self.drain.sent(seq, now);
        tracing::trace!(seq, in_flight = self.in_flight, "courteous: sent");
        if config.pacing {
            self.metered.take(now, seq, costs);
            if let Some(declared) = self.declared.as_mut() {
                declared.take(now);
            }
        }
        Ok(seq)
    }

    /// Whether a send could go at `now`, taking nothing: no pause, no
    /// first send after a pause still out, and a unit in the pacer.
    pub(crate) fn ready(&self, config: &Config, now: Instant) -> bool {
        let paused = self.pause_until.is_some_and(|until| until > now);
        let probing = self
            .probe
            .is_some_and(|(_, sent)| now.saturating_duration_since(sent) < self.probe_patience());
        !paused
            && !probing
            && self.concurrency.admits(self.in_flight)
            && (!config.pacing
                || (self.pacer.ready(now)
                    && self.metered.ready(now)
                    && self.declared_wait(now).is_none()))
    }

    /// How long the others wait for the first send after a pause: as long
    /// as a served answer may take, [`PROBE_PATIENCE`] at least (the
    /// timeout's own floor).
    fn probe_patience(&self) -> Duration {
        self.concurrency.served_round_trip().timeout()
    }

    /// How long the declared quota holds a send at `now`, if it does: its
    /// margin is the spread of the measured round trips.
    fn declared_wait(&self, now: Instant) -> Option<Duration> {
        let margin = self.concurrency.round_trip().spread();
        self.declared.as_ref()?.wait(now, margin)
    }

    /// How long this scope's pause still holds at `now`, if one does.
    #[cfg(any(test, feature = "redis"))]
    pub(crate) fn paused_for(&self, now: Instant) -> Option<Duration> {
        self.pause_until
            .filter(|until| *until > now)
            .map(|until| until - now)
    }

    /// Send `seq` will never report (cancelled).
    pub(crate) fn abandon(&mut self, seq: u64) {
        self.ended(seq, None);
        self.concurrency.abandoned(seq);
        self.drain.abandoned(seq);
        self.metered.answered(seq, None);
        self.in_flight = self.in_flight.saturating_sub(1);
        self.answered(seq);
    }

    /// Send `seq` ended, at `at` when known: both pacers (the one a
    /// concurrency trial set aside too, which may be given back) stop
    /// waiting for its answer (`Pacer::ended`).
    fn ended(&mut self, seq: u64, at: Option<Instant>) {
        self.pacer.ended(seq, at);
        if let Some(before) = self.pacer_before_trial.as_mut() {
            before.ended(seq, at);
        }
    }

    /// Send `seq` was answered (or abandoned): if it was the probe after a
    /// pause, the others may go.
    fn answered(&mut self, seq: u64) {
        if self.probe.is_some_and(|(probe, _)| probe == seq) {
            self.probe = None;
        }
    }

    pub(crate) fn record_wait(&mut self, waited: Duration) {
        self.stats.waits += 1;
        self.stats.waited = self.stats.waited.saturating_add(waited);
    }

    pub(crate) fn record_give_up_before_send(&mut self) {
        self.stats.gave_up += 1;
        self.stats.gave_up_before_send += 1;
    }

    pub(crate) fn record_give_up_after_send(&mut self) {
        self.stats.gave_up += 1;
    }

    fn settle(&mut self, seq: u64, attempt: &Attempt, now: Instant) {
        self.in_flight = self.in_flight.saturating_sub(1);
        self.ended(seq, Some(now));
        self.metered.answered(seq, Some(now));
        self.answered(seq);
        self.last_used = self.last_used.max(now);
        if attempt.number <= 1
            && let Some(budget) = self.budget.as_mut()
        {
            budget.deposit(now);
        }
    }

    /// Reads the quotas of a response to send `seq` (`answer`: admitted,
    /// or refused with the wait it stated); `located`: the server's clock,
    /// when the signal's times were read against its `Date`
    /// (`server_clock.rs`).
    fn learn(
        &mut self,
        seq: u64,
        now: Instant,
        signal: &Signal,
        (answer, located): (Answer, Option<Located>),
    ) {
        let used_size = signal
            .policies()
            .iter()
            .find(|q| q.source() == QuotaSource::Shopify)
            .and_then(|q| Some((q.limit()?.saturating_sub(q.remaining()?), q.limit()?)));
        self.drain.answered(seq, now, answer, used_size);
        for quota in signal.policies().iter().filter(|q| is_metered(q)) {
            if let Some(remaining) = quota.remaining() {
                let reading = MeterReading {
                    unit: quota.unit(),
                    name: quota.name(),
                    limit: quota.limit(),
                    remaining,
                    reset: located_reset(quota, located).map(|reset| reset.min(MAX_SERVER_WAIT)),
                    window: quota.window().map(|window| window.min(MAX_SERVER_WAIT)),
                    precision: located_precision(quota, located),
                };
                self.metered.sync(now, seq, &reading);
            }
        }
        let Some(quota) = pacing_quota(signal) else {
            return;
        };
        // Server numbers enter the engine clamped: no instant computed from
        // them can overflow.
        let mut reading = QuotaReading {
            remaining: quota.remaining(),
            limit: quota.limit(),
            window: quota.window().map(|window| window.min(MAX_SERVER_WAIT)),
            reset: tightest_reset(signal, quota, located).map(|reset| reset.min(MAX_SERVER_WAIT)),
            reset_precision: located_precision(quota, located),
            seq: Some(seq),
            fixed_window: quota.fixed_window(),
            lead: self.window_lead(),
            age: self
                .concurrency
                .sent_at(seq)
                .map_or(Duration::ZERO, |sent| now.saturating_duration_since(sent)),
        };
        // A `used/size` quota's drain is measured (`drain.rs`); the parser's
        // assumed one is the prior. The header states no reset: the time to
        // drain, computed from the assumed rate, is none.
        if quota.source() == QuotaSource::Shopify
            && let (Some((_, size)), Some(prior)) = (used_size, quota.rate())
        {
            let rate = self.drain.rate(prior);
            reading.window = Some(wait_from_secs(size as f64 / rate));
            reading.reset = None;
            self.pacer.set_drains(self.drain.measured());
        }
        // Newest send wins: a response to an older request than the last one
        // we synced from describes an older state of the server.
        if self.last_synced_seq.is_some_and(|last| seq < last) {
            self.pacer.note_older(now, reading);
            return;
        }
        self.last_synced_seq = Some(seq);
        let reset = located_reset(quota, located).map(|reset| reset.min(MAX_SERVER_WAIT));
        if let Some(reset) = reset {
            let at = later(now, reset);
            self.reset_at = Some(self.reset_at.map_or(at, |r| r.max(at)));
        }
        self.pacer.sync(now, reading, self.in_flight);
    }

    /// How much earlier than a window's end a send may leave: a round
    /// trip's legs less their spread (`pacer::QuotaReading::lead`). Legs
    /// only: a refusal's round trip (served without service) bounds them,
    /// so a server slow to serve, whose reset may be stated as of the
    /// answer, is never led by its service time; none before a refusal.
    fn window_lead(&self) -> Duration {
        let all = self.concurrency.round_trip();
        let legs = self.concurrency.refusal_round_trip().mean();
        match (all.mean(), legs) {
            (Some(mean), Some(legs)) => mean.saturating_sub(all.spread()).min(legs),
            _ => Duration::ZERO,
        }
    }

    /// A response arrived for send `seq`, classified as `class`.
    #[expect(
        clippy::too_many_arguments,
        reason = "one call site, each argument a fact"
    )]
    pub(crate) fn on_response(
        &mut self,
        config: &Config,
        seq: u64,
        now: Instant,
        status: StatusCode,
        class: ResponseClass,
        signal: &Signal,
        attempt: &Attempt,
    ) -> Verdict {
        // What the answer says the send spent replaces what it reserved,
        // before the send is released and the readings re-sync.
        if let Some(usage) = signal.usage() {
            let spent: Vec<Cost> = usage
                .iter()
                .map(|(unit, amount)| Cost::new(unit, amount))
                .collect();
            self.metered.settle(now, seq, &spent);
        }
        self.settle(seq, attempt, now);
        let located = signal
            .date()
            .map(|date| {
                self.server_clock
                    .observe(date, now, &self.concurrency.round_trip())
            })
            .filter(|_| signal.measured_against_date());
        let stated = match class {
            ResponseClass::Throttled { wait } => stated_wait(wait, signal, located),
            _ => None,
        };
        // Clamped for the arithmetic; a give-up still reports what was asked.
        let clamped = stated.map(|h| Hint {
            wait: h.wait.min(MAX_SERVER_WAIT),
            ..h
        });
        let answer = match class {
            ResponseClass::Throttled { .. } => Answer::Refused(clamped),
            _ => Answer::Admitted,
        };
        self.learn(seq, now, signal, (answer, located));
        match class {
            ResponseClass::Throttled { .. } => {}
            ResponseClass::Retry => {
                self.concurrency.abandoned(seq);
                if !attempt.retryable {
                    return Verdict::GiveUp(GiveUpReason::NotRetryable);
                }
                let wait = config
                    .backoff
                    .draw_with(&mut self.rng, attempt.number.saturating_sub(1));
                let reason = RetryReason::Failed { status };
                return self.retry_or_give_up(config, now, wait, attempt, reason);
            }
            // A refusal for good paces as a final answer (the server
            // answered; the scope does not pause), then gives up.
            ResponseClass::Final | ResponseClass::Refused => {
                if self.concurrency.served(seq, now) {
                    self.follow_concurrency();
                } else {
                    // A send served: the trial's pacer has news of its own.
                    self.pacer_before_trial = None;
                }
                self.consecutive_throttles = 0;
                let sent_before_refusal = self.pause_from_seq.is_some_and(|from| seq < from);
                self.pacer.answered(seq, now, true);
                self.pacer.on_success(now, sent_before_refusal);
                if class == ResponseClass::Refused {
                    return self.give_up(GiveUpReason::Refused);
                }
                return Verdict::Return;
            }
        };
        self.stats.throttled += 1;
        self.pacer.answered(seq, now, false);
        let asked = stated.map(|h| h.wait);
        let hint = clamped.map(|h| h.wait);
        let on_trial = self.concurrency.limit().is_some();
        let refusal = if self.concurrency.clocked(clamped) || names_its_quota(signal) {
            self.concurrency.refused_by_quota(seq, now);
            Refusal::Other
        } else {
            self.concurrency.refused(seq, now)
        };
        match refusal {
            Refusal::Other | Refusal::Undecided => {
                // Refuted before any send succeeded under it: the refusals
                // it explained were the quota's, and the burst they ended
                // is what the pacer learns from this one.
                if on_trial
                    && self.concurrency.limit().is_none()
                    && let Some(before) = self.pacer_before_trial.take()
                {
                    self.pacer = *before;
                    self.pacer.answered(seq, now, false);
                }
            }
            Refusal::Explained => {
                if let Some(before) = self.pacer_before_trial.as_mut() {
                    before.answered(seq, now, false);
                }
                return self.retry_alone(config, now, hint, asked, attempt, status);
            }
            Refusal::Followed => {
                self.follow_concurrency();
                return self.retry_alone(config, now, hint, asked, attempt, status);
            }
        }
        // A quota in another unit (tokens) that cannot admit the next send
        // explains the refusal: not one of the requests quota.
        let metered = self.metered.refused(now);
        let mut waits_own = false;
        let until = if self.pause_from_seq.is_some_and(|from| seq < from) {
            // Sent before the last refusal paused the scope: no news, only
            // a hint that may reach further, and a unit the pacer reserved
            // for it that it never took.
            self.pacer.refused_in_flight();
            hint.map(|h| later(now, h))
        } else {
            let (pause, sooner) = self.pause_after_refusal(config, now, clamped, metered);
            waits_own = sooner;
            Some(later(now, pause))
        };
        if let Some(until) = until {
            self.pause_until = Some(self.pause_until.map_or(until, |p| p.max(until)));
        }
        tracing::trace!(
            seq,
            paused_for = ?self.pause_until.map(|p| p.saturating_duration_since(now)),
            "courteous: refusal not explained by a concurrency limit: scope paused"
        );

        if !attempt.retryable {
            return Verdict::GiveUp(GiveUpReason::NotRetryable);
        }
        if let Some(h) = asked.filter(|h| *h > attempt.max_wait(config)) {
            return self.give_up(GiveUpReason::WaitTooLong { wait: h });
        }
        // An undecided refusal's request waits its own wait; the pause
        // holds it (and wakes it if a limit lifts the pause).
        // So does one whose pause ends before its hint.
        let wait = if refusal == Refusal::Undecided || waits_own {
            self.own_wait(config, hint, attempt)
        } else {
            self.pause_until
                .map_or(Duration::ZERO, |p| p.saturating_duration_since(now))
        };
        let reason = RetryReason::Throttled { status, hint };
        self.retry_or_give_up(config, now, wait, attempt, reason)
    }

    /// The concurrency-limit model is followed from now on: the refusals
    /// that paused the scope are explained by it (their requests wait their
    /// own hints), and a rate learned from them alone is void. The pacer is
    /// set aside, not dropped: a trial refuted before any send succeeded
    /// under it gives it back (`pacer_before_trial`).
    fn follow_concurrency(&mut self) {
        self.pause_until = None;
        self.probe = None;
        self.consecutive_throttles = 0;
        if !self.pacer.reads_quota() {
            self.pacer_before_trial = Some(Box::new(std::mem::take(&mut self.pacer)));
        }
    }

    /// A refusal the concurrency limit explains: this request waits its
    /// hint (a floor, jittered as every hint) or a backoff; the others go
    /// on as slots free.
    fn retry_alone(
        &mut self,
        config: &Config,
        now: Instant,
        hint: Option<Duration>,
        asked: Option<Duration>,
        attempt: &Attempt,
        status: StatusCode,
    ) -> Verdict {
        if !attempt.retryable {
            return Verdict::GiveUp(GiveUpReason::NotRetryable);
        }
        if let Some(h) = asked.filter(|h| *h > attempt.max_wait(config)) {
            return self.give_up(GiveUpReason::WaitTooLong { wait: h });
        }
        let wait = self.own_wait(config, hint, attempt);
        let reason = RetryReason::Throttled { status, hint };
        self.retry_or_give_up(config, now, wait, attempt, reason)
    }

    /// A refused request's own wait: its hint (a floor, jittered as every
    /// hint) or a backoff.
    fn own_wait(&mut self, config: &Config, hint: Option<Duration>, attempt: &Attempt) -> Duration {
        let backoff = config
            .backoff
            .draw_with(&mut self.rng, attempt.number.saturating_sub(1));
        hint.map_or(backoff, |floor| {
            floor.saturating_add(config.draw_hint_jitter(&mut self.rng, floor))
        })
    }

    /// The pause after a refusal that is news (its request was sent after
    /// the previous one's pause began). A hint is a floor: refused again
    /// after waiting what the server said (or told nothing, zero, a past
    /// date), back off as without one. Without a hint, the wait is what the
    /// pacer expects (a learned window's end, a reset), else
    /// [`Config::unhinted_wait`] doubled per refusal in a row. `metered`:
    /// a quota in another unit explains the refusal; the requests pacer
    /// does not read it as its own, and that quota's wait is the one
    /// expected. `stated`: the server's wait, located on our clock, with
    /// its grain (`hint.rs`). Returns the pause, and whether it ends before
    /// the hint (the refused request then waits its own).
    fn pause_after_refusal(
        &mut self,
        config: &Config,
        now: Instant,
        stated: Option<Hint>,
        metered: bool,
    ) -> (Duration, bool) {
        let n = self.consecutive_throttles;
        let expected = if metered {
            self.metered.wait(now, &[])
        } else {
            let spread = self.concurrency.round_trip().spread();
            self.pacer.on_throttle(now, stated, spread)
        };
        let hint = stated.map(|h| h.wait);
        let backoff = config.backoff.draw_with(&mut self.rng, n);
        self.consecutive_throttles = n.saturating_add(1);
        self.pause_from_seq = Some(self.next_seq);
        // A whole-second hint is rounded up by up to a second. Where the
        // window's own readings guarantee its end sooner, the scope
        // resumes then, with one send alone; the refused request waits
        // its hint.
        let window_end = self
            .pacer
            .window_end(now)
            .map(|end| end.saturating_duration_since(now));
        let sooner = window_end
            .filter(|end| stated.is_some_and(|h| h.is_coarse() && *end < h.wait) && !metered);
        if let Some(sooner) = sooner {
            return (sooner.max(backoff), true);
        }
        let floor = match hint.or(expected) {
            Some(floor) => floor,
            // The first unhinted wait is exact: the next success measures
            // the quota's cycle from it, so jitter would lengthen every
            // cycle after it; refusals in a row are jittered as hints are.
            None if n == 0 => return (config.unhinted_wait_for(0).max(backoff), false),
            None => config.unhinted_wait_for(n),
        };
        let pause = floor
            .saturating_add(config.draw_hint_jitter(&mut self.rng, floor))
            .max(backoff);
        (pause, false)
    }

    /// A transport error for send `seq`; `retryable_error` says whether the
    /// error is a connection failure or timeout.
    pub(crate) fn on_transport_error(
        &mut self,
        config: &Config,
        seq: u64,
        now: Instant,
        retryable_error: bool,
        attempt: &Attempt,
    ) -> Verdict {
        self.settle(seq, attempt, now);
        self.concurrency.abandoned(seq);
        self.drain.abandoned(seq);
        if !retryable_error || !attempt.retryable {
            return Verdict::GiveUp(GiveUpReason::NotRetryable);
        }
        let wait = config
            .backoff
            .draw_with(&mut self.rng, attempt.number.saturating_sub(1));
        self.retry_or_give_up(config, now, wait, attempt, RetryReason::Transport)
    }

    fn retry_or_give_up(
        &mut self,
        config: &Config,
        now: Instant,
        wait: Duration,
        attempt: &Attempt,
        reason: RetryReason,
    ) -> Verdict {
        let max_wait = attempt.max_wait(config);
        if wait > max_wait {
            return self.give_up(GiveUpReason::WaitTooLong { wait });
        }
        if attempt.number >= attempt.max_attempts(config) {
            return self.give_up(GiveUpReason::AttemptsExhausted);
        }
        if attempt.would_pass_deadline(config, now, wait) {
            return self.give_up(GiveUpReason::Deadline { wait });
        }
        if let Some(budget) = self.budget.as_mut()
            && !budget.withdraw(now)
        {
            return self.give_up(GiveUpReason::BudgetExhausted);
        }
        self.stats.retries += 1;
        Verdict::Retry {
            after: wait,
            reason,
        }
    }

    fn give_up(&mut self, reason: GiveUpReason) -> Verdict {
        self.stats.gave_up += 1;
        Verdict::GiveUp(reason)
    }
}

/// A refusal's wait as the server stated it: the classifier's, else
/// `Retry-After`. An HTTP-date read against `Date` ends sooner once the
/// server's clock is `located`, and stays as coarse as its whole seconds.
fn stated_wait(
    classified: Option<Duration>,
    signal: &Signal,
    located: Option<Located>,
) -> Option<Hint> {
    match classified {
        Some(wait) => Some(Hint::stated(wait)),
        None => signal.retry_after().map(|hint| match located {
            Some(located) if hint.source() == HintSource::RetryAfterDate => {
                Hint::to_whole_second(located.wait(hint.delay()))
            }
            _ => Hint::stated(hint.delay()),
        }),
    }
}

/// The quota to pace by: the binding one, or, when several dialects describe
/// it (a server sending IETF fields *and* `X-RateLimit-*`), the one among
/// equally binding policies that states its window, so the rate is known
/// (the longest reset among those, as the binding rule prefers).
pub(crate) fn pacing_quota(signal: &Signal) -> Option<&Quota> {
    let binding = match signal.quota() {
        Some(quota) if quota.unit() == QuotaUnit::Requests => quota,
        // A quota in another unit binds when exhausted: the requests quota
        // is still read, the least remaining first (`metered.rs` paces
        // the other).
        _ => signal
            .policies()
            .iter()
            .filter(|q| q.unit() == QuotaUnit::Requests)
            .min_by_key(|q| (q.remaining().is_none(), q.remaining(), Reverse(q.reset())))?,
    };
    if binding.window().is_some() {
        return Some(binding);
    }
    signal
        .policies()
        .iter()
        .filter(|q| q.remaining() == binding.remaining() && q.window().is_some())
        .max_by_key(|q| q.reset())
        .or(Some(binding))
}

/// Whether a refusal names the quota that refused it, one whose units
/// come back with time: a requests quota it reads as exhausted (a reading
/// with units left names none: GitHub's secondary limits refuse beside a
/// primary with room), or a refusal that names a rate (an AWS throttling
/// code, a Google quota; `Refusal::names_a_rate`). No concurrency limit
/// of ours is evidence for it.
fn names_its_quota(signal: &Signal) -> bool {
    pacing_quota(signal).is_some_and(|quota| quota.remaining() == Some(0))
        || signal
            .refusal()
            .is_some_and(|refusal| refusal.names_a_rate())
}

/// The reset of `quota`, or the shortest one among the dialects describing
/// the same quota (same limit and remaining): each is an upper bound of the
/// same instant, rounded its own way (a whole-second delta `t=1`, or an
/// epoch located to a round trip), so the shortest is the tightest.
fn tightest_reset(signal: &Signal, quota: &Quota, located: Option<Located>) -> Option<Duration> {
    signal
        .policies()
        .iter()
        .filter(|q| q.limit() == quota.limit() && q.remaining() == quota.remaining())
        .filter_map(|q| located_reset(q, located))
        .chain(located_reset(quota, located))
        .min()
}

/// `quota`'s reset, shortened by the server clock's slack when it was read
/// against `Date` (the parser gives it a precision then).
fn located_reset(quota: &Quota, located: Option<Located>) -> Option<Duration> {
    let reset = quota.reset()?;
    Some(match (located, quota.reset_precision()) {
        (Some(located), Some(_)) => located.wait(reset),
        _ => reset,
    })
}

/// `quota`'s reset precision, `Date`'s second in it replaced by how well
/// the server's seconds are located.
fn located_precision(quota: &Quota, located: Option<Located>) -> Option<Duration> {
    let precision = quota.reset_precision()?;
    Some(located.map_or(precision, |located| located.precision(precision)))
}

/// Whether `quota` counts another unit than requests and is paced by its
/// cost (`metered.rs`). A concurrency quota is not: its units come back
/// with answers, not with time.
fn is_metered(quota: &Quota) -> bool {
    !matches!(
        quota.unit(),
        QuotaUnit::Requests | QuotaUnit::ConcurrentRequests
    )
}

/// Builds an admission from a state decision.
pub(crate) fn admission(
    decision: Result<u64, (Duration, WaitReason)>,
    ticket: impl FnOnce(u64) -> super::InFlight,
) -> Admit {
    match decision {
        Ok(seq) => Admit::Now(ticket(seq)),
        Err((wait, reason)) => Admit::After { wait, reason },
    }
}

/// FNV-1a (64 bit): mixes a scope's key into the seed, so each scope draws
/// its own reproducible sequence whatever order scopes are created in.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}
