//! The decision engine: pure, clock-injected, knows nothing of reqwest.
//!
//! One [`Engine`] holds the state of every [`Scope`] (the pause, the quota
//! learned, requests in flight, counters) behind one lock, shared by every
//! clone and every concurrent request. Adapters ask it two things:
//!
//! - before a send, [`Engine::admit`]: [`Admit::Now`] with an [`InFlight`]
//!   ticket, or [`Admit::After`] a wait (a pause from a hint, or pacing);
//! - after it, [`Engine::on_response`] / [`Engine::on_transport_error`]: a
//!   [`Verdict`] (return, retry after a wait, or give up and why).
//!
//! Time is passed in as [`Instant`]s, so the rules are tested without sleeping.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use courteous::engine::{Admit, Attempt, Config, Engine, Scope, Verdict};
//! use courteous::signal::Signal;
//! use http::StatusCode;
//!
//! let engine = Engine::new(Config::default());
//! let scope = Scope::new("http://127.0.0.1:8080");
//! let now = Instant::now();
//! let Admit::Now(ticket) = engine.admit(&scope, now) else { unreachable!() };
//! let attempt = Attempt::new(1, true, now);
//! let verdict = engine.on_response(ticket, now, StatusCode::OK, &Signal::default(), &attempt);
//! assert_eq!(verdict, Verdict::Return);
//! ```

mod budget;
mod concurrency;
mod config;
mod cost;
mod decision;
mod declared;
mod drain;
mod hint;
mod kind;
mod metered;
mod pacer;
mod round_trip;
mod scope;
mod server_clock;
mod state;
mod stats;
mod time;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use http::StatusCode;
use tokio::sync::Notify;
use tokio::sync::futures::Notified;

pub use budget::RetryBudget;
pub use config::{Backoff, Config, GiveUpMode};
pub use cost::Cost;
pub use decision::{Admit, GiveUpReason, ResponseClass, RetryReason, Verdict, WaitReason};
pub use kind::QuotaKind;
pub use scope::Scope;
pub use state::PROBE_PATIENCE;
pub use stats::ScopeStats;
pub use time::MAX_SERVER_WAIT;

use crate::signal::Signal;
use state::ScopeState;
#[cfg(feature = "redis")]
pub(crate) use state::pacing_quota;
#[cfg(feature = "redis")]
pub(crate) use time::later;

/// Shared per-scope rate-limit state and the rules applied to it.
///
/// Cheap to clone; clones share the state.
#[derive(Clone)]
pub struct Engine {
    shared: Arc<Shared>,
}

struct Shared {
    config: Config,
    scopes: Mutex<Scopes>,
}

/// Every scope's state, and the one resolved last: most clients talk to one
/// origin, so most lookups end there with a string compare and no hashing.
#[derive(Default)]
struct Scopes {
    all: HashMap<Scope, Arc<Slot>>,
    last: Option<ScopeHandle>,
    /// Idle scopes are swept when a scope is created and `all` holds this
    /// many (twice as many as after the last sweep, at least [`SWEEP_FLOOR`]).
    sweep_at: usize,
}

/// No sweep for idle scopes below this many: a few scopes cost nothing.
const SWEEP_FLOOR: usize = 1024;

impl Scopes {
    /// Drops the scopes idle for `idle` at `now` (see
    /// [`Config::evict_idle_scopes`]). A scope anyone holds (a request
    /// waiting or in flight, or the fast path's `last`) is kept: the map's
    /// `Arc` is then not the only one, and new holders are only made under
    /// the `Scopes` lock held here.
    fn sweep(&mut self, idle: Option<Duration>, now: Instant) {
        if let Some(idle) = idle {
            self.all.retain(|_, slot| {
                if Arc::strong_count(slot) > 1 {
                    return true;
                }
                match slot.state.try_lock() {
                    Ok(state) => !state.is_idle(now, idle),
                    Err(_) => true,
                }
            });
            if self.all.capacity() > 4 * self.all.len().max(SWEEP_FLOOR) {
                self.all.shrink_to_fit();
            }
        }
        self.sweep_at = self.all.len().saturating_mul(2).max(SWEEP_FLOOR);
    }
}

/// One scope's state behind its own lock, so requests to different scopes
/// do not contend and a request finds its state without hashing twice.
#[derive(Debug)]
struct Slot {
    state: Mutex<ScopeState>,
    /// Requests told to wait, woken when a response makes a send possible
    /// before their wait is over (a window opened early, a reading showed
    /// units the mirror did not expect yet, the first send after a pause
    /// was answered). A wait computed from the mirror is a bound; the
    /// server's answer is news.
    ready: Notify,
}

impl Slot {
    fn new(state: ScopeState) -> Self {
        Self {
            state: Mutex::new(state),
            ready: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, ScopeState> {
        lock(&self.state)
    }

    /// Runs `answer` on the state; wakes the waiters if a send was not
    /// possible before it and is after.
    fn answer<T>(
        &self,
        config: &Config,
        now: Instant,
        answer: impl FnOnce(&mut ScopeState) -> T,
    ) -> T {
        let mut state = self.lock();
        let before = state.ready(config, now);
        let out = answer(&mut state);
        let after = state.ready(config, now);
        drop(state);
        if after && !before {
            self.ready.notify_waiters();
        }
        out
    }
}

/// A scope with its state, resolved once per request.
#[derive(Clone)]
pub(crate) struct ScopeHandle {
    scope: Scope,
    slot: Arc<Slot>,
}

impl ScopeHandle {
    pub(crate) fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Completes when a response makes a send to this scope possible that
    /// was not before it (see `Slot::answer`).
    pub(crate) fn ready(&self) -> Notified<'_> {
        self.slot.ready.notified()
    }
}

impl fmt::Debug for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Engine")
            .field("config", &self.shared.config)
            .field("scopes", &lock(&self.shared.scopes).all.len())
            .finish()
    }
}

/// What the engine needs to know about the request being decided.
///
/// Its limits (attempts, longest wait, deadline) are the [`Config`]'s unless
/// the request set its own ([`with_limits`](Self::with_limits)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attempt {
    number: u32,
    retryable: bool,
    started: Instant,
    max_attempts: Option<u32>,
    max_wait: Option<Duration>,
    deadline: Option<Option<Duration>>,
}

impl Attempt {
    /// Attempt `number` (1 for the first send) of a request that `retryable`
    /// (can be replayed and may be repeated), started at `started`.
    pub fn new(number: u32, retryable: bool, started: Instant) -> Self {
        Self {
            number,
            retryable,
            started,
            max_attempts: None,
            max_wait: None,
            deadline: None,
        }
    }

    /// This request's own limits, each replacing the [`Config`]'s when
    /// `Some`: attempts (at least 1), longest single wait, and deadline
    /// (`Some(None)`: no deadline).
    pub fn with_limits(
        mut self,
        max_attempts: Option<u32>,
        max_wait: Option<Duration>,
        deadline: Option<Option<Duration>>,
    ) -> Self {
        self.max_attempts = max_attempts.map(|n| n.max(1));
        self.max_wait = max_wait;
        self.deadline = deadline;
        self
    }

    /// Attempts allowed for this request, the first included.
    pub fn max_attempts(&self, config: &Config) -> u32 {
        self.max_attempts.unwrap_or(config.max_attempts)
    }

    /// The longest single wait allowed for this request.
    pub fn max_wait(&self, config: &Config) -> Duration {
        self.max_wait.unwrap_or(config.max_wait)
    }

    /// This request's deadline, counted from [`started`](Self::started).
    pub fn deadline(&self, config: &Config) -> Option<Duration> {
        self.deadline.unwrap_or(config.deadline)
    }

    /// 1 for the first send.
    pub fn number(&self) -> u32 {
        self.number
    }

    /// Whether the request may be sent again.
    pub fn retryable(&self) -> bool {
        self.retryable
    }

    /// When the request started (the deadline counts from here).
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Whether a wait of `wait` from `now` would end after the deadline.
    /// A deadline too far to be an [`Instant`] (`Duration::MAX`) is never
    /// passed; a wait too long to be one always passes a finite deadline.
    pub fn would_pass_deadline(&self, config: &Config, now: Instant, wait: Duration) -> bool {
        let Some(limit) = self
            .deadline(config)
            .and_then(|deadline| self.started.checked_add(deadline))
        else {
            return false;
        };
        now.checked_add(wait).is_none_or(|end| end > limit)
    }
}

/// A send that was admitted: report its outcome with it. Dropping it
/// unreported (a cancelled request) releases its reservation.
pub struct InFlight {
    slot: Arc<Slot>,
    scope: Scope,
    seq: u64,
    settled: bool,
}

impl fmt::Debug for InFlight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InFlight")
            .field("scope", &self.scope)
            .field("seq", &self.seq)
            .finish()
    }
}

impl InFlight {
    /// The scope the send belongs to.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if !self.settled {
            self.slot.lock().abandon(self.seq);
        }
    }
}

/// Locks, ignoring poisoning: a panic while holding the lock cannot leave
/// the counters unusable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Default for Engine {
    fn default() -> Self {
        Self::new(Config::default())
    }
}

impl Engine {
    /// An engine with this configuration and no state yet.
    pub fn new(config: Config) -> Self {
        Self {
            shared: Arc::new(Shared {
                config,
                scopes: Mutex::default(),
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    /// The state of `key`, created on first use.
    pub(crate) fn handle(&self, key: &str, now: Instant) -> ScopeHandle {
        let mut scopes = lock(&self.shared.scopes);
        if let Some(last) = scopes
            .last
            .as_ref()
            .filter(|last| last.scope.as_str() == key)
        {
            return last.clone();
        }
        let handle = match scopes.all.get_key_value(key) {
            Some((scope, slot)) => ScopeHandle {
                scope: scope.clone(),
                slot: Arc::clone(slot),
            },
            None => {
                let config = &self.shared.config;
                if scopes.all.len() >= scopes.sweep_at {
                    scopes.sweep(config.scope_idle, now);
                }
                let scope = Scope::new(key);
                let slot = Arc::new(Slot::new(ScopeState::new(config, key, now)));
                scopes.all.insert(scope.clone(), Arc::clone(&slot));
                ScopeHandle { scope, slot }
            }
        };
        scopes.last = Some(handle.clone());
        handle
    }

    /// Before a send to `scope` at `now`: go, or wait how long and why.
    pub fn admit(&self, scope: &Scope, now: Instant) -> Admit {
        self.admit_costing(scope, now, &[])
    }

    /// [`admit`](Self::admit) for a send that declares what it spends of
    /// quotas in other units than requests ([`Cost`]): every quota the
    /// scope knows must admit it.
    pub fn admit_costing(&self, scope: &Scope, now: Instant, costs: &[Cost]) -> Admit {
        self.admit_in(&self.handle(scope.as_str(), now), now, costs)
    }

    /// [`admit_costing`](Self::admit_costing) with the scope already
    /// resolved.
    pub(crate) fn admit_in(&self, handle: &ScopeHandle, now: Instant, costs: &[Cost]) -> Admit {
        self.admit_with(handle, now, true, costs)
    }

    /// [`admit_in`](Self::admit_in) without local pacing of the requests
    /// quota: the pause still holds, but the pace was set by a shared store.
    #[cfg(feature = "redis")]
    pub(crate) fn admit_unpaced_in(
        &self,
        handle: &ScopeHandle,
        now: Instant,
        costs: &[Cost],
    ) -> Admit {
        self.admit_with(handle, now, false, costs)
    }

    fn admit_with(&self, handle: &ScopeHandle, now: Instant, pace: bool, costs: &[Cost]) -> Admit {
        let decision = handle
            .slot
            .lock()
            .admit(&self.shared.config, now, pace, costs);
        state::admission(decision, |seq| InFlight {
            slot: Arc::clone(&handle.slot),
            scope: handle.scope.clone(),
            seq,
            settled: false,
        })
    }

    /// How long `handle`'s local pause still holds at `now`, if one does
    /// (asked before a fleet reservation, so a paused process does not
    /// reserve a shared slot it cannot use).
    #[cfg(any(test, feature = "redis"))]
    pub(crate) fn paused_for_in(&self, handle: &ScopeHandle, now: Instant) -> Option<Duration> {
        handle.slot.lock().paused_for(now)
    }

    /// Records that a request to `scope` slept `waited` before a send.
    pub fn record_wait(&self, scope: &Scope, waited: Duration) {
        let slot = lock(&self.shared.scopes).all.get(scope).cloned();
        if let Some(slot) = slot {
            slot.lock().record_wait(waited);
        }
    }

    /// [`record_wait`](Self::record_wait) with the scope already resolved.
    pub(crate) fn record_wait_in(&self, handle: &ScopeHandle, waited: Duration) {
        handle.slot.lock().record_wait(waited);
    }

    /// Records that a request to the scope gave up before sending (a wait
    /// beyond `max_wait` or past its deadline).
    pub(crate) fn record_give_up_in(&self, handle: &ScopeHandle) {
        handle.slot.lock().record_give_up_before_send();
    }

    /// Records that a request to the scope gave up after sending: its
    /// deadline passed while an attempt was out (the attempt's ticket,
    /// dropped, released its reservation).
    pub(crate) fn record_give_up_after_send_in(&self, handle: &ScopeHandle) {
        handle.slot.lock().record_give_up_after_send();
    }

    /// A response arrived at `now` for the send `ticket`: learn from its
    /// signal and decide, classified by the configured
    /// [`retry_statuses`](Config::retry_statuses) (throttled or final).
    /// What the signal says the send spent ([`Signal::usage`]) settles its
    /// [`Cost`] before its quota readings re-sync.
    pub fn on_response(
        &self,
        ticket: InFlight,
        now: Instant,
        status: StatusCode,
        signal: &Signal,
        attempt: &Attempt,
    ) -> Verdict {
        let class = if self.shared.config.is_retry_status(status) {
            ResponseClass::Throttled { wait: None }
        } else {
            ResponseClass::Final
        };
        self.on_classified(ticket, now, status, class, signal, attempt)
    }

    /// [`on_response`](Self::on_response) with the response already
    /// classified (by a user's classifier, for example).
    pub fn on_classified(
        &self,
        mut ticket: InFlight,
        now: Instant,
        status: StatusCode,
        class: ResponseClass,
        signal: &Signal,
        attempt: &Attempt,
    ) -> Verdict {
        ticket.settled = true;
        let config = &self.shared.config;
        let seq = ticket.seq;
        ticket.slot.answer(config, now, |state| {
            state.on_response(config, seq, now, status, class, signal, attempt)
        })
    }

    /// The send `ticket` failed at `now` without a response.
    /// `retryable_error`: a connection failure or a timeout.
    pub fn on_transport_error(
        &self,
        mut ticket: InFlight,
        now: Instant,
        retryable_error: bool,
        attempt: &Attempt,
    ) -> Verdict {
        ticket.settled = true;
        let config = &self.shared.config;
        let seq = ticket.seq;
        ticket.slot.answer(config, now, |state| {
            state.on_transport_error(config, seq, now, retryable_error, attempt)
        })
    }

    /// Counters of every scope known, sorted by scope (a scope dropped
    /// after [`Config::evict_idle_scopes`] is gone with its counters).
    pub fn stats(&self) -> Vec<(Scope, ScopeStats)> {
        let slots: Vec<_> = lock(&self.shared.scopes)
            .all
            .iter()
            .map(|(scope, slot)| (scope.clone(), Arc::clone(slot)))
            .collect();
        let mut all: Vec<_> = slots
            .into_iter()
            .map(|(scope, slot)| (scope, slot.lock().stats()))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    /// How many scopes the engine holds state for now (idle ones are
    /// dropped: see [`Config::evict_idle_scopes`]).
    pub fn scope_count(&self) -> usize {
        lock(&self.shared.scopes).all.len()
    }

    /// Counters of one scope, if it has been seen.
    pub fn scope_stats(&self, scope: &Scope) -> Option<ScopeStats> {
        let slot = lock(&self.shared.scopes).all.get(scope).cloned();
        slot.map(|slot| slot.lock().stats())
    }
}

#[cfg(test)]
mod tests;
