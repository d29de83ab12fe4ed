//! One scope's shared state and the rules applied to it.

use std::time::{Duration, Instant};

use http::StatusCode;

use super::Attempt;
use super::budget::BudgetAccount;
use super::config::Config;
use super::decision::{Admit, GiveUpReason, ResponseClass, RetryReason, Verdict, WaitReason};
use super::pacer::{Pacer, QuotaReading};
use super::stats::ScopeStats;
use crate::signal::{Quota, QuotaUnit, Signal};

/// Everything known about one scope.
#[derive(Debug)]
pub(crate) struct ScopeState {
    pause_until: Option<Instant>,
    pacer: Pacer,
    in_flight: u32,
    next_seq: u64,
    last_synced_seq: Option<u64>,
    consecutive_throttles: u32,
    budget: Option<BudgetAccount>,
    pub(crate) stats: ScopeStats,
}

impl ScopeState {
    pub(crate) fn new(config: &Config, now: Instant) -> Self {
        Self {
            pause_until: None,
            pacer: Pacer::default(),
            in_flight: 0,
            next_seq: 0,
            last_synced_seq: None,
            consecutive_throttles: 0,
            budget: config.retry_budget.map(|b| BudgetAccount::new(b, now)),
            stats: ScopeStats::default(),
        }
    }

    /// Go now (returns the send's sequence number) or wait. `pace: false`
    /// skips local pacing (a shared store paced the send already).
    pub(crate) fn admit(
        &mut self,
        config: &Config,
        now: Instant,
        pace: bool,
    ) -> Result<u64, (Duration, WaitReason)> {
        if let Some(until) = self.pause_until {
            if until > now {
                return Err((until - now, WaitReason::Paused));
            }
            self.pause_until = None;
        }
        if config.pacing && pace {
            self.pacer
                .admit(now)
                .map_err(|wait| (wait, WaitReason::Pacing))?;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.in_flight += 1;
        self.stats.sent += 1;
        Ok(seq)
    }

    /// A send that will never report (cancelled).
    pub(crate) fn abandon(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    pub(crate) fn record_wait(&mut self, waited: Duration) {
        self.stats.waits += 1;
        self.stats.waited = self.stats.waited.saturating_add(waited);
    }

    pub(crate) fn record_give_up_before_send(&mut self) {
        self.stats.gave_up += 1;
        self.stats.gave_up_before_send += 1;
    }

    fn settle(&mut self, attempt: &Attempt, now: Instant) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if attempt.number <= 1
            && let Some(budget) = self.budget.as_mut()
        {
            budget.deposit(now);
        }
    }

    fn learn(&mut self, seq: u64, now: Instant, signal: &Signal) {
        let Some(quota) = pacing_quota(signal) else {
            return;
        };
        if quota.unit() != QuotaUnit::Requests {
            return;
        }
        // Newest send wins: a response to an older request than the last one
        // we synced from describes an older state of the server.
        if self.last_synced_seq.is_some_and(|last| seq < last) {
            return;
        }
        self.last_synced_seq = Some(seq);
        let reading = QuotaReading {
            remaining: quota.remaining(),
            limit: quota.limit(),
            window: quota.window(),
            reset: quota.reset(),
        };
        self.pacer.sync(now, reading, self.in_flight);
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
        self.settle(attempt, now);
        self.learn(seq, now, signal);
        let classified_wait = match class {
            ResponseClass::Throttled { wait } => wait,
            ResponseClass::Retry => {
                if !attempt.retryable {
                    return Verdict::GiveUp(GiveUpReason::NotRetryable);
                }
                let wait = config.backoff.draw(attempt.number.saturating_sub(1));
                let reason = RetryReason::Failed { status };
                return self.retry_or_give_up(config, now, wait, attempt, reason);
            }
            ResponseClass::Final => {
                self.consecutive_throttles = 0;
                self.pacer.on_success();
                return Verdict::Return;
            }
        };
        self.stats.throttled += 1;
        let hint = classified_wait.or_else(|| signal.retry_after().map(|h| h.delay()));
        self.pacer.on_throttle(now, hint);
        let pause = match hint {
            Some(h) => h.saturating_add(config.draw_hint_jitter(h)),
            None => config.backoff.draw(self.consecutive_throttles),
        };
        self.consecutive_throttles = self.consecutive_throttles.saturating_add(1);
        let until = now
            .checked_add(pause)
            .or_else(|| now.checked_add(attempt.max_wait(config).saturating_mul(2)))
            .unwrap_or(now);
        self.pause_until = Some(self.pause_until.map_or(until, |p| p.max(until)));

        if !attempt.retryable {
            return Verdict::GiveUp(GiveUpReason::NotRetryable);
        }
        let wait = self
            .pause_until
            .map_or(Duration::ZERO, |p| p.saturating_duration_since(now));
        if let Some(h) = hint.filter(|h| *h > attempt.max_wait(config)) {
            return self.give_up(GiveUpReason::WaitTooLong { wait: h });
        }
        let reason = RetryReason::Throttled { status, hint };
        self.retry_or_give_up(config, now, wait, attempt, reason)
    }

    /// A transport error for send `seq`; `retryable_error` says whether the
    /// error is a connection failure or timeout.
    pub(crate) fn on_transport_error(
        &mut self,
        config: &Config,
        now: Instant,
        retryable_error: bool,
        attempt: &Attempt,
    ) -> Verdict {
        self.settle(attempt, now);
        if !retryable_error || !attempt.retryable {
            return Verdict::GiveUp(GiveUpReason::NotRetryable);
        }
        let wait = config.backoff.draw(attempt.number.saturating_sub(1));
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
        if wait > attempt.max_wait(config) {
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

/// The quota to pace by: the binding one, or, when several dialects describe
/// it (a server sending IETF fields *and* `X-RateLimit-*`), the one among
/// equally binding policies that states its window, so the rate is known
/// (the longest reset among those, as the binding rule prefers).
pub(crate) fn pacing_quota(signal: &Signal) -> Option<&Quota> {
    let binding = signal.quota()?;
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
