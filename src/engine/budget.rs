//! The retry budget: retries may add only bounded extra load.
//!
//! Why a budget and not only max attempts? Max attempts bounds one request;
//! when a server is overloaded *every* request retries, and N attempts
//! multiply the load by N exactly when the server can least take it. A
//! budget bounds retries to a fraction of recent first attempts (plus a small
//! floor so a quiet client can still retry), like Finagle's `RetryBudget`
//! and tower's `TpsBudget`, whose defaults these are.

use std::time::{Duration, Instant};

/// Retries allowed over a sliding window: `min_per_sec · ttl` plus
/// `ratio` × the first attempts sent in the last `ttl`.
///
/// Defaults (Finagle's, also tower's `TpsBudget` documentation): a 10 s
/// window, at least 10 retries per second, plus 20 % of requests.
///
/// ```
/// use std::time::Duration;
/// use courteous::RetryBudget;
///
/// let budget = RetryBudget::new(Duration::from_secs(10), 10, 0.2);
/// assert_eq!(budget, RetryBudget::default());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryBudget {
    ttl: Duration,
    min_per_sec: u32,
    ratio: f64,
}

impl RetryBudget {
    /// Default window: 10 s.
    pub const DEFAULT_TTL: Duration = Duration::from_secs(10);
    /// Default floor: 10 retries per second.
    pub const DEFAULT_MIN_PER_SEC: u32 = 10;
    /// Default extra load: 20 % of first attempts.
    pub const DEFAULT_RATIO: f64 = 0.2;

    /// A budget over `ttl` (clamped to 1–60 s, as Finagle does) with a floor
    /// of `min_per_sec` retries per second plus `ratio` retries per first
    /// attempt (clamped to `0..=1000`; not finite means 0).
    pub fn new(ttl: Duration, min_per_sec: u32, ratio: f64) -> Self {
        Self {
            ttl: ttl.clamp(Duration::from_secs(1), Duration::from_secs(60)),
            min_per_sec,
            ratio: if ratio.is_finite() {
                ratio.clamp(0.0, 1000.0)
            } else {
                0.0
            },
        }
    }

    /// The sliding window.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The floor of retries per second.
    pub fn min_per_sec(&self) -> u32 {
        self.min_per_sec
    }

    /// Retries allowed per first attempt.
    pub fn ratio(&self) -> f64 {
        self.ratio
    }
}

impl Default for RetryBudget {
    fn default() -> Self {
        Self::new(
            Self::DEFAULT_TTL,
            Self::DEFAULT_MIN_PER_SEC,
            Self::DEFAULT_RATIO,
        )
    }
}

const SLOTS: usize = 10;

/// The budget's running account: first attempts and retries per slot of
/// `ttl / 10`, over the last `ttl`.
#[derive(Debug, Clone)]
pub(crate) struct BudgetAccount {
    budget: RetryBudget,
    slot_len: Duration,
    current: usize,
    current_start: Instant,
    deposits: [u64; SLOTS],
    withdrawals: [u64; SLOTS],
}

impl BudgetAccount {
    pub(crate) fn new(budget: RetryBudget, now: Instant) -> Self {
        Self {
            budget,
            slot_len: budget.ttl / SLOTS as u32,
            current: 0,
            current_start: now,
            deposits: [0; SLOTS],
            withdrawals: [0; SLOTS],
        }
    }

    fn rotate(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.current_start);
        if elapsed < self.slot_len {
            return;
        }
        let steps = (elapsed.as_nanos() / self.slot_len.as_nanos().max(1)) as usize;
        if steps == 0 {
            return;
        }
        for _ in 0..steps.min(SLOTS) {
            self.current = (self.current + 1) % SLOTS;
            self.deposits[self.current] = 0;
            self.withdrawals[self.current] = 0;
        }
        self.current_start += self.slot_len * steps.min(u32::MAX as usize) as u32;
    }

    /// Records a first attempt.
    pub(crate) fn deposit(&mut self, now: Instant) {
        self.rotate(now);
        self.deposits[self.current] += 1;
    }

    /// Takes one retry from the budget; false when it is spent.
    pub(crate) fn withdraw(&mut self, now: Instant) -> bool {
        self.rotate(now);
        let deposits: u64 = self.deposits.iter().sum();
        let withdrawals: u64 = self.withdrawals.iter().sum();
        let floor = f64::from(self.budget.min_per_sec) * self.budget.ttl.as_secs_f64();
        let allowed = floor + self.budget.ratio * deposits as f64;
        if (withdrawals as f64) < allowed {
            self.withdrawals[self.current] += 1;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_reads_back_what_it_was_given_within_its_bounds() {
        let budget = RetryBudget::new(Duration::from_secs(5), 7, 0.25);
        assert_eq!(
            (budget.ttl(), budget.min_per_sec(), budget.ratio()),
            (Duration::from_secs(5), 7, 0.25)
        );
        let short = RetryBudget::new(Duration::from_millis(500), 0, f64::NAN);
        assert_eq!((short.ttl(), short.ratio()), (Duration::from_secs(1), 0.0));
        let long = RetryBudget::new(Duration::from_secs(600), 0, 5_000.0);
        assert_eq!(
            (long.ttl(), long.ratio()),
            (Duration::from_secs(60), 1_000.0)
        );
    }

    #[test]
    fn floor_allows_min_per_sec_times_ttl() {
        let t0 = Instant::now();
        let mut account = BudgetAccount::new(RetryBudget::new(Duration::from_secs(1), 3, 0.0), t0);
        assert!(account.withdraw(t0));
        assert!(account.withdraw(t0));
        assert!(account.withdraw(t0));
        assert!(!account.withdraw(t0));
    }

    #[test]
    fn deposits_buy_retries_at_the_ratio() {
        let t0 = Instant::now();
        let mut account = BudgetAccount::new(RetryBudget::new(Duration::from_secs(10), 0, 0.5), t0);
        assert!(!account.withdraw(t0));
        for _ in 0..4 {
            account.deposit(t0);
        }
        assert!(account.withdraw(t0));
        assert!(account.withdraw(t0));
        assert!(!account.withdraw(t0));
    }

    /// Deposits leave the window one slot at a time, each `ttl` after it
    /// was made: the later one still buys a retry when the first is gone.
    #[test]
    fn deposits_expire_a_ttl_after_each_was_made() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let budget = RetryBudget::new(Duration::from_secs(10), 0, 1.0);
        let mut account = BudgetAccount::new(budget, t0);
        account.deposit(at(0));
        account.deposit(at(5_500));
        // The first deposit is older than the ttl: one retry left.
        assert!(account.withdraw(at(10_200)));
        assert!(!account.withdraw(at(10_300)));
        // Past the second one's ttl too: nothing bought any more.
        let mut later = BudgetAccount::new(budget, t0);
        later.deposit(at(0));
        later.deposit(at(5_500));
        assert!(!later.withdraw(at(15_700)));
    }

    #[test]
    fn spent_budget_recovers_after_ttl() {
        let t0 = Instant::now();
        let mut account = BudgetAccount::new(RetryBudget::new(Duration::from_secs(1), 1, 0.0), t0);
        assert!(account.withdraw(t0));
        assert!(!account.withdraw(t0 + Duration::from_millis(500)));
        assert!(account.withdraw(t0 + Duration::from_millis(1100)));
    }
}
