//! The engine's limits and their defaults.
//!
//! Every number here has a documented default and a reason; change them with
//! the builder methods on [`Config`], or the same methods on
//! [`ClientBuilder`](crate::ClientBuilder),
//! [`CourteousLayer`](crate::CourteousLayer) and `CourteousMiddleware`
//! (generated from one list, so each setter exists on all three). One
//! request can replace some of them with
//! [`RequestOptions`](crate::RequestOptions).

use std::time::Duration;

use http::StatusCode;
use rand::{Rng, RngExt};

use super::budget::RetryBudget;
use super::time::MAX_SERVER_WAIT;

/// What to hand back for a response that is not final (throttled, or
/// classified "retry") and will not be sent again, whatever the reason:
/// attempts, budget, a wait beyond [`Config::max_wait`], the deadline, or a
/// request that may not be repeated (a POST or PATCH without an
/// `Idempotency-Key`, a streamed body). The rule is the same for every
/// method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum GiveUpMode {
    /// A typed [`Error`](crate::Error) that carries the hint and the response
    /// ([`Error::into_response`](crate::Error::into_response)). The default,
    /// so `?` never mistakes a refusal for a success: a POST refused with
    /// 429 is an `Err` too.
    #[default]
    Error,
    /// The response itself, as `Ok`, body intact.
    Response,
}

/// Full-jitter exponential backoff, used when a throttled response carries
/// no hint and after transport errors.
///
/// The wait before retry `n` (0-based) is uniform in
/// `[0, min(cap, base · 2ⁿ))` — "full jitter" from the AWS Architecture Blog
/// post *Exponential Backoff And Jitter* (Marc Brooker, 2015), which showed it
/// spreads a herd of clients best for the least total work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    base: Duration,
    cap: Duration,
}

impl Backoff {
    /// Default base: 100 ms, the AWS SDK for Java's default base delay
    /// (`SDK_DEFAULT_BASE_DELAY`); about one token of a bucket refilled at
    /// 10–20/s, so the first blind retry rarely comes back too early by much.
    pub const DEFAULT_BASE: Duration = Duration::from_millis(100);
    /// Default cap: 20 s, the AWS SDK for Java's maximum backoff
    /// (`SDK_DEFAULT_MAX_BACKOFF_IN_MILLISECONDS`).
    pub const DEFAULT_CAP: Duration = Duration::from_secs(20);

    /// A backoff with this base and cap (the cap is raised to the base if lower).
    pub fn new(base: Duration, cap: Duration) -> Self {
        Self {
            base,
            cap: cap.max(base),
        }
    }

    /// The first retry's upper bound.
    pub fn base(&self) -> Duration {
        self.base
    }

    /// The largest wait ever drawn.
    pub fn cap(&self) -> Duration {
        self.cap
    }

    /// The upper bound of the wait before retry `n` (0-based): `min(cap, base · 2ⁿ)`.
    pub fn ceiling(&self, n: u32) -> Duration {
        let factor = 1u32.checked_shl(n.min(31)).unwrap_or(u32::MAX);
        self.base.saturating_mul(factor).min(self.cap)
    }

    /// Draws the wait before retry `n` from `[0, ceiling(n))`, with the
    /// thread's OS-seeded generator (the engine uses
    /// [`draw_with`](Self::draw_with) and its own, seedable one).
    pub fn draw(&self, n: u32) -> Duration {
        self.draw_with(&mut rand::rng(), n)
    }

    /// Draws the wait before retry `n` from `[0, ceiling(n))` with `rng`, so
    /// a seeded generator reproduces the same waits.
    ///
    /// ```
    /// use rand::{SeedableRng, rngs::SmallRng};
    /// use courteous::Backoff;
    ///
    /// let backoff = Backoff::default();
    /// let draw = |seed| backoff.draw_with(&mut SmallRng::seed_from_u64(seed), 3);
    /// assert_eq!(draw(7), draw(7));
    /// assert!(draw(7) < backoff.ceiling(3));
    /// ```
    pub fn draw_with<R: Rng + ?Sized>(&self, rng: &mut R, n: u32) -> Duration {
        let ceiling = self.ceiling(n);
        if ceiling.is_zero() {
            return Duration::ZERO;
        }
        let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(rng.random_range(0..nanos))
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new(Self::DEFAULT_BASE, Self::DEFAULT_CAP)
    }
}

/// The engine's configuration. `Config::default()` is what
/// [`Client::new`](crate::Client::new) uses.
///
/// | setting | default | why |
/// |---|---|---|
/// | [`pacing`](Self::pacing) | on | slow down *before* a 429 when quota headers allow |
/// | [`max_attempts`](Self::max_attempts) | 5 | go-retryablehttp's `RetryMax = 4` retries |
/// | [`max_wait`](Self::max_wait) | 60 s | covers a per-minute window; anything longer is returned, not slept |
/// | [`deadline`](Self::deadline) | 120 s | two `max_wait`s: no request (attempts, transport, waits) lasts longer than this after `send` |
/// | [`retry_statuses`](Self::retry_statuses) | 429, 503 | RFC 6585 §4 and RFC 9110 §15.6.4, the statuses that carry `Retry-After` |
/// | [`backoff`](Self::backoff) | full jitter, 100 ms … 20 s | see [`Backoff`] |
/// | [`hint_jitter`](Self::hint_jitter) | +0–10 %, at most 1 s | a herd told the same instant does not return in lockstep |
/// | [`unhinted_wait`](Self::unhinted_wait) | 1 s, doubling per refusal in a row | a refusal without any hint is read as `Retry-After: 1` (below) |
/// | [`retry_budget`](Self::retry_budget) | 10 s, 10/s, 20 % | see [`RetryBudget`] |
/// | [`give_up`](Self::give_up) | [`GiveUpMode::Error`] | |
/// | [`rng_seed`](Self::rng_seed) | none: OS-seeded | a seed makes every jitter draw reproducible |
/// | [`evict_idle_scopes`](Self::evict_idle_scopes) | after 10 min idle | memory stays bounded however many scopes |
///
/// # A hint is a floor, not a promise
///
/// After a throttled response the scope (every request to it, not only the
/// one refused) pauses for
///
/// ```text
/// max(hint + hint jitter, backoff draw for the n-th consecutive refusal)
/// ```
///
/// where n counts the scope's refusals since its last success (0 for the
/// first; a refusal of a request sent before the previous refusal's pause
/// began is not news and does not count) and the draw is uniform in
/// `[0, min(20 s, 100 ms · 2ⁿ))` with the default [`Backoff`].
///
/// One exception: a whole-second hint (`Retry-After: 1`) is rounded up by
/// up to a second, and where the quota is a fixed window whose own
/// readings (its resets) guarantee that it is over sooner, the scope
/// resumes then, with one request alone; the refused request still waits
/// its hint. The server's reset and its hint are both its word; the
/// earlier of them is when the window is surely over.
///
/// A refusal without any hint takes its hint from what the scope learned
/// (a learned window's end, the reset of the quota headers), else from
/// [`unhinted_wait`](Self::unhinted_wait): `min(20 s, 1 s · 2ⁿ)` by default
/// (jittered from the second refusal in a row on: the first one's wait is
/// exact, since the success after it measures the quota's cycle).
/// One second is the least a server can say with `Retry-After` and what
/// the original experiment's reference client waits, and a quota that
/// refuses bare (no header at all) most often counts per second: so the
/// first bare refusal of a per-second window costs one request, not the
/// handful a 100 ms backoff spends before the window ends. The wait until
/// the next success then measures the window (see the pacer), and the
/// windows after it are met at their boundary. A server that keeps its word (refuses, says 2 s, then
/// admits) is waited exactly as it asked; one that refuses again after the
/// wait it named, or names none, zero, a date in the past or a negative
/// number, is backed off exponentially, as if it had said nothing. A loop
/// calling `send` on a server that refuses everything therefore slows down
/// as retries do: with the defaults, the pauses' expected sum passes 6 s
/// after 7 refusals, and a refusal is never followed by a pause longer
/// than 20 s unless the server asked for it.
///
/// A pause ends with one request: the scope's other requests wait for its
/// answer (as long as a served answer may take, at least 1 s:
/// [`PROBE_PATIENCE`](crate::engine::PROBE_PATIENCE)),
/// so when the server refuses again, or gave back fewer units than hoped,
/// one request learns it instead of every task at once.
///
/// Server hints and resets are first clamped to [`MAX_SERVER_WAIT`] (one
/// day): a hint beyond [`max_wait`](Self::max_wait) gives up at once.
#[derive(Debug, Clone)]
pub struct Config {
    pub(crate) pacing: bool,
    pub(crate) max_attempts: u32,
    pub(crate) max_wait: Duration,
    pub(crate) deadline: Option<Duration>,
    pub(crate) retry_statuses: Vec<StatusCode>,
    pub(crate) backoff: Backoff,
    pub(crate) hint_jitter_ratio: f64,
    pub(crate) hint_jitter_cap: Duration,
    pub(crate) unhinted_wait: Duration,
    pub(crate) retry_budget: Option<RetryBudget>,
    pub(crate) give_up: GiveUpMode,
    pub(crate) rng_seed: Option<u64>,
    pub(crate) scope_idle: Option<Duration>,
    pub(crate) declared_quota: Option<(u32, Duration)>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            pacing: true,
            max_attempts: Self::DEFAULT_MAX_ATTEMPTS,
            max_wait: Self::DEFAULT_MAX_WAIT,
            deadline: Some(Self::DEFAULT_DEADLINE),
            retry_statuses: vec![
                StatusCode::TOO_MANY_REQUESTS,
                StatusCode::SERVICE_UNAVAILABLE,
            ],
            backoff: Backoff::default(),
            hint_jitter_ratio: Self::DEFAULT_HINT_JITTER_RATIO,
            hint_jitter_cap: Self::DEFAULT_HINT_JITTER_CAP,
            unhinted_wait: Self::DEFAULT_UNHINTED_WAIT,
            retry_budget: Some(RetryBudget::default()),
            give_up: GiveUpMode::Error,
            rng_seed: None,
            scope_idle: Some(Self::DEFAULT_SCOPE_IDLE),
            declared_quota: None,
        }
    }
}

impl Config {
    /// Default attempts per request, the first included: 5.
    pub const DEFAULT_MAX_ATTEMPTS: u32 = 5;
    /// Default longest single wait: 60 s.
    pub const DEFAULT_MAX_WAIT: Duration = Duration::from_secs(60);
    /// Default overall deadline per request: 120 s.
    pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(120);
    /// Default jitter added to a server hint: up to 10 % of it…
    pub const DEFAULT_HINT_JITTER_RATIO: f64 = 0.10;
    /// …and never more than 1 s.
    pub const DEFAULT_HINT_JITTER_CAP: Duration = Duration::from_secs(1);
    /// Default hint of a refusal that carries none and comes before the
    /// scope learned when units come back: 1 s (see the type's docs).
    pub const DEFAULT_UNHINTED_WAIT: Duration = Duration::from_secs(1);
    /// Default idle time after which a scope's state is dropped: 10 min,
    /// ten times the longest default wait (`max_wait`, 60 s) and five times
    /// the deadline (120 s). What a scope learned that long ago is stale
    /// (a per-minute window has reset ten times) and is learned again from
    /// the next response; a pause or a reset still pending keeps it longer.
    pub const DEFAULT_SCOPE_IDLE: Duration = Duration::from_secs(10 * 60);
    /// The longest wait or reset taken from a server: one day (see
    /// [`MAX_SERVER_WAIT`](crate::engine::MAX_SERVER_WAIT)).
    pub const MAX_SERVER_WAIT: Duration = MAX_SERVER_WAIT;

    /// The defaults (same as `Config::default()`).
    pub fn new() -> Self {
        Self::default()
    }

    /// Pace before a 429 from the quota the server reports (`true`), or only
    /// honour hints after one (`false`, "Retry-After only").
    ///
    /// Pacing mirrors the quota: it spends what `remaining` reports and
    /// refills at the policy rate (`limit / window`), learns a rate from
    /// refusals when no policy is given, and takes only its share when
    /// `remaining` shows other clients spending the same quota. Until a
    /// second of readings shows nobody else spending, it leaves the last 2
    /// units of a continuously refilled quota (at most a tenth of its limit)
    /// for a newcomer's first request.
    pub fn pacing(mut self, enabled: bool) -> Self {
        self.pacing = enabled;
        self
    }

    /// Attempts per request, the first included (at least 1).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The longest single wait the engine will sleep. A server hint beyond it
    /// gives up at once (see [`give_up`](Self::give_up)), carrying the hint.
    pub fn max_wait(mut self, wait: Duration) -> Self {
        self.max_wait = wait;
        self
    }

    /// No wait may end later than this after the request started, and the
    /// adapters cancel an attempt still out when it passes; `None` removes
    /// the deadline.
    pub fn deadline(mut self, deadline: impl Into<Option<Duration>>) -> Self {
        self.deadline = deadline.into();
        self
    }

    /// Statuses that mean "throttled: retry later" (default 429 and 503).
    pub fn retry_statuses(mut self, statuses: impl IntoIterator<Item = StatusCode>) -> Self {
        self.retry_statuses = statuses.into_iter().collect();
        self
    }

    /// The backoff used when no hint is given.
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// Jitter added after a server hint: uniform in
    /// `[0, min(cap, ratio · hint)]`. `ratio` is clamped to `0..=1`.
    pub fn hint_jitter(mut self, ratio: f64, cap: Duration) -> Self {
        self.hint_jitter_ratio = if ratio.is_finite() {
            ratio.clamp(0.0, 1.0)
        } else {
            0.0
        };
        self.hint_jitter_cap = cap;
        self
    }

    /// The hint assumed for a throttled response that carries none when the
    /// scope has learned nothing better (default 1 s): the n-th refusal in
    /// a row waits `min(backoff cap, wait · 2ⁿ)` plus the hint jitter.
    /// `Duration::ZERO` leaves such refusals to the [`backoff`](Self::backoff)
    /// alone.
    pub fn unhinted_wait(mut self, wait: Duration) -> Self {
        self.unhinted_wait = wait;
        self
    }

    /// The hint assumed for the n-th refusal in a row that carries none.
    pub(crate) fn unhinted_wait_for(&self, n: u32) -> Duration {
        Backoff::new(self.unhinted_wait, self.backoff.cap()).ceiling(n)
    }

    /// The retry budget, or `None` to retry without one.
    pub fn retry_budget(mut self, budget: impl Into<Option<RetryBudget>>) -> Self {
        self.retry_budget = budget.into();
        self
    }

    /// What to hand back when giving up on a throttled response.
    pub fn give_up(mut self, mode: GiveUpMode) -> Self {
        self.give_up = mode;
        self
    }

    /// Seed the engine's random draws (backoff and hint jitter) so that a
    /// run, a simulation or a failing property test reproduces exactly.
    /// Each scope draws from its own generator, seeded from this seed and
    /// the scope's key. Default: none, every scope's generator is seeded
    /// from the OS (through the thread's generator).
    pub fn rng_seed(mut self, seed: impl Into<Option<u64>>) -> Self {
        self.rng_seed = seed.into();
        self
    }

    /// Drop a scope's state once it has been unused this long with nothing
    /// in flight, no pause and no quota reset pending; `None` keeps every
    /// scope forever. Default: [`DEFAULT_SCOPE_IDLE`](Self::DEFAULT_SCOPE_IDLE).
    ///
    /// Without this, a crawler touching a million hosts, or
    /// [`scope_by`](crate::ClientBuilder::scope_by) keyed on API keys,
    /// would keep a million scopes. Idle scopes are swept when a new scope
    /// is created and the number of scopes has doubled since the last sweep,
    /// so the cost is amortized and the common case (one scope) pays
    /// nothing. A dropped scope's [`stats`](crate::Client::stats) go with it.
    pub fn evict_idle_scopes(mut self, idle: impl Into<Option<Duration>>) -> Self {
        self.scope_idle = idle.into();
        self
    }

    /// A quota the server enforces but never announces: at most `limit`
    /// requests in any `window`, per scope (none by default; the Discord
    /// preset declares its documented global limit, 50 a second). Each
    /// scope keeps that many of its sends in any `window` plus the spread
    /// of its measured round trips (so the server, counting at arrival,
    /// sees no more), beside what the server's own answers teach. `None`
    /// removes it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use courteous::Config;
    ///
    /// // An API documented as "100 requests per minute", silent about it.
    /// let config = Config::default().declared_quota((100, Duration::from_secs(60)));
    /// # let _ = config;
    /// ```
    pub fn declared_quota(mut self, quota: impl Into<Option<(u32, Duration)>>) -> Self {
        self.declared_quota = quota.into();
        self
    }

    /// Whether `status` means "throttled".
    pub fn is_retry_status(&self, status: StatusCode) -> bool {
        self.retry_statuses.contains(&status)
    }

    /// The jitter to add to a hint of `hint`, drawn with `rng`.
    pub(crate) fn draw_hint_jitter<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        hint: Duration,
    ) -> Duration {
        let ceiling = hint
            .mul_f64(self.hint_jitter_ratio)
            .min(self.hint_jitter_cap);
        if ceiling.is_zero() {
            return Duration::ZERO;
        }
        let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(rng.random_range(0..=nanos))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_ceiling_doubles_then_caps() {
        let b = Backoff::new(Duration::from_millis(100), Duration::from_secs(1));
        assert_eq!(
            (b.base(), b.cap()),
            (Duration::from_millis(100), Duration::from_secs(1))
        );
        // A cap below the base is raised to it.
        let flat = Backoff::new(Duration::from_secs(2), Duration::from_secs(1));
        assert_eq!(
            (flat.base(), flat.cap()),
            (Duration::from_secs(2), Duration::from_secs(2))
        );
        assert_eq!(b.ceiling(0), Duration::from_millis(100));
        assert_eq!(b.ceiling(1), Duration::from_millis(200));
        assert_eq!(b.ceiling(3), Duration::from_millis(800));
        assert_eq!(b.ceiling(4), Duration::from_secs(1));
        assert_eq!(b.ceiling(u32::MAX), Duration::from_secs(1));
    }

    #[test]
    fn backoff_draws_stay_below_ceiling() {
        let b = Backoff::default();
        for n in 0..40 {
            for _ in 0..50 {
                assert!(b.draw(n) < b.ceiling(n));
            }
        }
    }

    #[test]
    fn hint_jitter_is_bounded_by_ratio_and_cap() {
        let c = Config::default();
        let rng = &mut rand::rng();
        for _ in 0..200 {
            assert!(c.draw_hint_jitter(rng, Duration::from_millis(50)) <= Duration::from_millis(5));
            assert!(c.draw_hint_jitter(rng, Duration::from_secs(3600)) <= Duration::from_secs(1));
        }
        let none = Config::default().hint_jitter(f64::NAN, Duration::from_secs(1));
        assert_eq!(
            none.draw_hint_jitter(rng, Duration::from_secs(5)),
            Duration::ZERO
        );
    }
}
