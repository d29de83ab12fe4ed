//! When Redis is in trouble: a circuit breaker that stops calling it for a
//! while, and the local pacing used meanwhile. Pure and clock-injected.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Breaker settings. Defaults: open after 2 failures in a row, for 1 s.
/// [`RedisFleetBuilder::breaker`](super::RedisFleetBuilder::breaker) clamps
/// them to [`MAX_FAILURES_TO_OPEN`] and [`MAX_OPEN_FOR`].
///
/// Two, not one: a single timed-out call on a loaded machine should cost
/// one deadline, not a second of local pacing. One second: long enough that
/// a stopped Redis costs each process about one deadline per second, short
/// enough that a fleet regroups within a second of Redis answering again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakerSettings {
    /// Consecutive failed calls (error or deadline) that open the breaker.
    pub failures_to_open: u32,
    /// How long an open breaker skips Redis before one trial call.
    pub open_for: Duration,
}

/// At most 100 failures in a row before the breaker opens (at least 1): a
/// breaker that never opens would make a stopped Redis cost every call its
/// deadline.
pub const MAX_FAILURES_TO_OPEN: u32 = 100;

/// At most one hour open: past that, a fleet apart that long has long
/// forgotten what it shared (the keys' default TTL is 10 min).
pub const MAX_OPEN_FOR: Duration = Duration::from_secs(3600);

impl BreakerSettings {
    /// These settings within their bounds.
    pub(crate) fn clamped(self) -> Self {
        Self {
            failures_to_open: self.failures_to_open.clamp(1, MAX_FAILURES_TO_OPEN),
            open_for: self.open_for.min(MAX_OPEN_FOR),
        }
    }
}

impl Default for BreakerSettings {
    fn default() -> Self {
        Self {
            failures_to_open: 2,
            open_for: Duration::from_secs(1),
        }
    }
}

/// Closed (calling Redis), open until an instant, or half-open (one trial
/// call in progress since an instant). A trial whose outcome never comes
/// (its caller's future was dropped mid-call) expires after `open_for`,
/// and the next caller gets a new trial: the breaker never stays open for
/// good.
#[derive(Debug)]
pub(crate) struct Breaker {
    settings: BreakerSettings,
    failures: u32,
    open_until: Option<Instant>,
    trial_since: Option<Instant>,
}

impl Breaker {
    pub(crate) fn new(settings: BreakerSettings) -> Self {
        Self {
            settings,
            failures: 0,
            open_until: None,
            trial_since: None,
        }
    }

    /// Whether to call Redis now. After the open period one caller gets a
    /// trial call; the others keep pacing locally until it answers.
    pub(crate) fn allows(&mut self, now: Instant) -> bool {
        match self.open_until {
            None => true,
            Some(until) if now >= until && self.trial_free(now) => {
                self.trial_since = Some(now);
                true
            }
            Some(_) => false,
        }
    }

    /// Redis answered: close. Returns whether it was open (a rejoin).
    pub(crate) fn success(&mut self) -> bool {
        let was_open = self.open_until.is_some();
        self.failures = 0;
        self.open_until = None;
        self.trial_since = None;
        was_open
    }

    /// No trial in progress, or the one in progress was abandoned: no
    /// outcome within `open_for` of its start.
    fn trial_free(&self, now: Instant) -> bool {
        self.trial_since
            .is_none_or(|since| now.saturating_duration_since(since) >= self.settings.open_for)
    }

    /// A call failed or missed its deadline.
    pub(crate) fn failure(&mut self, now: Instant) {
        self.failures = self.failures.saturating_add(1);
        self.trial_since = None;
        if self.failures >= self.settings.failures_to_open || self.open_until.is_some() {
            self.open_until = Some(crate::engine::later(now, self.settings.open_for));
        }
    }
}

/// What the fleet last said about a scope: its send interval and how many
/// processes shared it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Shared {
    pub(crate) interval: Duration,
    pub(crate) members: u32,
}

/// Local pacing while Redis is away: each scope's last shared rate, cut to
/// [`FALLBACK_SHARE`] of an equal share (`rate × 0.8 / members`), one send
/// at a time. Scopes the fleet never rated are not paced here (the local
/// engine still paces them as it does without a fleet), except that a
/// process which saw the fleet probing a scope holds back until that probe
/// would have answered or lost its lease: its blind send is what the probe
/// is there to prevent.
#[derive(Debug, Default)]
pub(crate) struct Fallback {
    scopes: HashMap<String, Lane>,
    probing: HashMap<String, Instant>,
}

/// The part of an equal share a process takes while it cannot coordinate:
/// 0.8, so that processes falling back at different moments, with member
/// counts a little stale, still stay under the shared rate.
pub const FALLBACK_SHARE: f64 = 0.8;

#[derive(Debug)]
struct Lane {
    shared: Shared,
    next: Option<Instant>,
}

impl Fallback {
    /// The fleet gave this process a slot due at `slot` on `scope`. Should
    /// Redis go away, this process's next send comes one local spacing
    /// after it: each process carries on from its own place in the fleet's
    /// schedule, so a fleet falling back at once stays spread over the
    /// spacing instead of every process sending at the same moment.
    pub(crate) fn remember(&mut self, scope: &str, shared: Shared, slot: Instant) {
        self.probing.remove(scope);
        let next = Some(crate::engine::later(slot, spacing(shared)));
        match self.scopes.get_mut(scope) {
            Some(lane) => {
                lane.shared = shared;
                lane.next = lane.next.max(next);
            }
            None => {
                self.scopes.insert(scope.to_owned(), Lane { shared, next });
            }
        }
    }

    /// The fleet said another process probes `scope`; its lease ends by
    /// `until` at the latest.
    pub(crate) fn probing(&mut self, scope: &str, until: Instant) {
        if !self.scopes.contains_key(scope) {
            self.probing.insert(scope.to_owned(), until);
        }
    }

    /// The shared interval the fleet last gave for `scope`.
    pub(crate) fn interval(&self, scope: &str) -> Option<Duration> {
        self.scopes.get(scope).map(|lane| lane.shared.interval)
    }

    /// Forget the local slots (Redis is back and paces again; its next
    /// slot sets where a later fallback carries on from).
    pub(crate) fn rejoin(&mut self) {
        for lane in self.scopes.values_mut() {
            lane.next = None;
        }
    }

    /// Zero: go (the slot is taken); else how long to wait first (for an
    /// unrated scope the fleet was probing, at most `poll` at a time, so
    /// the caller asks the breaker again meanwhile).
    pub(crate) fn take(&mut self, scope: &str, now: Instant, poll: Duration) -> Duration {
        let Some(lane) = self.scopes.get_mut(scope) else {
            return match self.probing.get(scope) {
                Some(until) if *until > now => (*until - now).min(poll),
                Some(_) => {
                    self.probing.remove(scope);
                    Duration::ZERO
                }
                None => Duration::ZERO,
            };
        };
        if let Some(next) = lane.next.filter(|next| *next > now) {
            return next - now;
        }
        lane.next = Some(crate::engine::later(now, spacing(lane.shared)));
        Duration::ZERO
    }
}

/// One process's spacing while apart: an equal share of the shared rate,
/// cut to [`FALLBACK_SHARE`] (at most an hour).
fn spacing(shared: Shared) -> Duration {
    let members = f64::from(shared.members.max(1));
    Duration::try_from_secs_f64(shared.interval.as_secs_f64() * members / FALLBACK_SHARE)
        .unwrap_or(Duration::MAX)
        .min(Duration::from_secs(3600))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_the_configured_failures_and_lets_one_trial_through() {
        let t0 = Instant::now();
        let mut b = Breaker::new(BreakerSettings::default());
        b.failure(t0);
        assert!(b.allows(t0), "one failure does not open");
        b.failure(t0);
        assert!(!b.allows(t0 + Duration::from_millis(999)));
        let later = t0 + Duration::from_secs(1);
        assert!(b.allows(later), "the trial call");
        assert!(!b.allows(later), "only one trial at a time");
        b.failure(later);
        assert!(
            !b.allows(later + Duration::from_millis(500)),
            "a failed trial reopens"
        );
        assert!(b.allows(later + Duration::from_secs(1)));
        assert!(b.success(), "closing an open breaker is a rejoin");
        assert!(
            b.allows(later) && b.allows(later),
            "closed: every call goes"
        );
    }

    #[test]
    fn an_abandoned_trial_does_not_keep_the_breaker_open() {
        let t0 = Instant::now();
        let mut b = Breaker::new(BreakerSettings::default());
        b.failure(t0);
        b.failure(t0);
        let trial = t0 + Duration::from_secs(1);
        assert!(b.allows(trial), "the trial call");
        // Its caller is dropped: neither success() nor failure() comes.
        assert!(!b.allows(trial + Duration::from_millis(999)));
        assert!(
            b.allows(trial + Duration::from_secs(1)),
            "a new trial once the abandoned one is older than open_for"
        );
        assert!(!b.allows(trial + Duration::from_secs(1)), "one at a time");
        assert!(b.success());
        assert!(b.allows(trial + Duration::from_secs(1)));
    }

    #[test]
    fn absurd_settings_neither_panic_nor_lock_redis_out() {
        let t0 = Instant::now();
        let mut b = Breaker::new(BreakerSettings {
            failures_to_open: 1,
            open_for: Duration::MAX,
        });
        b.failure(t0);
        assert!(!b.allows(t0 + Duration::from_secs(3600)));
        let clamped = BreakerSettings {
            failures_to_open: u32::MAX,
            open_for: Duration::MAX,
        }
        .clamped();
        assert_eq!(clamped.failures_to_open, MAX_FAILURES_TO_OPEN);
        assert_eq!(clamped.open_for, MAX_OPEN_FOR);
        let mut b = Breaker::new(clamped);
        for _ in 0..MAX_FAILURES_TO_OPEN {
            b.failure(t0);
        }
        assert!(!b.allows(t0), "opens after the capped count");
        assert!(
            b.allows(t0 + MAX_OPEN_FOR),
            "and tries again within the cap"
        );
    }

    const POLL: Duration = Duration::from_millis(20);

    #[test]
    fn an_unrated_scope_the_fleet_was_probing_waits_out_the_lease_only() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut f = Fallback::default();
        f.probing("s", t0 + ms(2000));
        assert_eq!(
            f.take("s", t0, POLL),
            POLL,
            "asks the breaker again after a poll"
        );
        assert_eq!(f.take("s", t0 + ms(1990), POLL), ms(10));
        assert_eq!(
            f.take("s", t0 + ms(2000), POLL),
            Duration::ZERO,
            "lease over: go"
        );
        assert_eq!(
            f.take("t", t0, POLL),
            Duration::ZERO,
            "never seen probing: go"
        );
        let shared = Shared {
            interval: ms(50),
            members: 1,
        };
        f.probing("u", t0 + ms(2000));
        f.remember("u", shared, t0);
        assert!(
            f.take("u", t0 + ms(100), POLL) == Duration::ZERO,
            "rated: paced by its lane"
        );
    }

    #[test]
    fn fallback_spaces_sends_at_a_cut_share_of_the_shared_rate() {
        let t0 = Instant::now();
        let mut f = Fallback::default();
        assert_eq!(
            f.take("s", t0, POLL),
            Duration::ZERO,
            "an unrated scope is not paced"
        );
        let shared = Shared {
            interval: Duration::from_millis(50),
            members: 4,
        };
        // The fleet's last slot for this process was due at t0: 4 members
        // at 50 ms is 200 ms each at an equal share, 250 ms at 0.8 of it.
        f.remember("s", shared, t0);
        let ms = Duration::from_millis;
        assert_eq!(
            f.take("s", t0, POLL),
            ms(250),
            "carries on from the last slot"
        );
        assert_eq!(f.take("s", t0 + ms(250), POLL), Duration::ZERO);
        assert_eq!(f.take("s", t0 + ms(250), POLL), ms(250));
        assert_eq!(f.take("s", t0 + ms(500), POLL), Duration::ZERO);
        // A later slot moves the next local send; an older one does not.
        f.remember("s", shared, t0 + ms(900));
        f.remember("s", shared, t0 + ms(100));
        assert_eq!(f.take("s", t0 + ms(1000), POLL), ms(150));
        f.rejoin();
        assert_eq!(f.take("s", t0 + ms(1000), POLL), Duration::ZERO);
    }
}
