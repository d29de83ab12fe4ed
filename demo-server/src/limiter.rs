//! One check with a deadline, a bound on checks in flight, and the failure
//! policy for when the store cannot answer.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::{Decision, FailMode, Policy, Store, StoreError};

/// The outcome of a check as the HTTP layer sees it.
#[derive(Debug)]
pub enum Verdict {
    /// Within the quota.
    Allowed(Decision),
    /// Over the quota: answer 429.
    Rejected(Decision),
    /// The store failed and the server fails open: serve, uncounted.
    FailedOpen(StoreError),
    /// The store failed and the server fails closed: answer 503.
    Unavailable(StoreError),
}

/// Checks requests against a policy in a store.
#[derive(Debug, Clone)]
pub struct Limiter {
    store: Store,
    policy: Policy,
    fail: FailMode,
    deadline: Duration,
    in_flight: Arc<Semaphore>,
}

impl Limiter {
    /// Per-check deadline: 150 ms, the budget of the Redis limiter lab in
    /// docs/background.md — a limiter must not take a large share of a request's time.
    pub const DEFAULT_DEADLINE: Duration = Duration::from_millis(150);
    /// Checks in flight per replica: 256. A multiplexed connection pipelines
    /// them; at ~50 µs per check that is far above a healthy load, and during an
    /// outage it caps the pile of waiting futures (the rest fail at once).
    pub const DEFAULT_MAX_IN_FLIGHT: usize = 256;

    /// A limiter with the default deadline and bound, failing open.
    pub fn new(store: Store, policy: Policy) -> Self {
        Self {
            store,
            policy,
            fail: FailMode::default(),
            deadline: Self::DEFAULT_DEADLINE,
            in_flight: Arc::new(Semaphore::new(Self::DEFAULT_MAX_IN_FLIGHT)),
        }
    }

    /// What to do when the store fails.
    pub fn fail_mode(mut self, fail: FailMode) -> Self {
        self.fail = fail;
        self
    }

    /// Give up on a check after this long (then apply the fail mode).
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// At most this many checks in flight; more fail at once (then the fail mode).
    pub fn max_in_flight(mut self, permits: usize) -> Self {
        self.in_flight = Arc::new(Semaphore::new(permits.max(1)));
        self
    }

    /// The policy enforced.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The fail mode.
    pub fn fail(&self) -> FailMode {
        self.fail
    }

    /// The per-check deadline (also the deadline of the `/healthz` probe).
    pub fn check_deadline(&self) -> Duration {
        self.deadline
    }

    /// Check one request for the client state under `key`.
    pub async fn check(&self, key: &str) -> Verdict {
        match self.try_check(key).await {
            Ok(d) if d.allowed => Verdict::Allowed(d),
            Ok(d) => Verdict::Rejected(d),
            Err(e) => {
                tracing::warn!(error = %e, fail = ?self.fail, "rate-limit check failed");
                match self.fail {
                    FailMode::Open => Verdict::FailedOpen(e),
                    FailMode::Closed => Verdict::Unavailable(e),
                }
            }
        }
    }

    /// Give back an admitted request's lease (a concurrency limit's), within
    /// the deadline. A failure is only logged: the lease expires after the
    /// policy's window anyway.
    pub async fn release(&self, key: &str, decision: &Decision) {
        if decision.lease.is_none() {
            return;
        }
        match tokio::time::timeout(self.deadline, self.store.release(key, decision)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "releasing a lease failed"),
            Err(_) => tracing::warn!("releasing a lease missed the deadline"),
        }
    }

    async fn try_check(&self, key: &str) -> Result<Decision, StoreError> {
        let _permit = self
            .in_flight
            .try_acquire()
            .map_err(|_| StoreError::overloaded())?;
        tokio::time::timeout(self.deadline, self.store.check(&self.policy, key))
            .await
            .map_err(|_| StoreError::timeout())?
    }
}
