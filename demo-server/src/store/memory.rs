//! The embedded store: the same algorithms over a map in this process, for a
//! machine without Redis. Replicas share it only when they share the value.
//! Time is this machine's clock. Entries expire like Redis keys (checked on
//! access, swept every [`SWEEP_EVERY`] checks).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::algorithms::client_window::{self, Opened};
use crate::algorithms::concurrency::{self, Leases};
use crate::algorithms::leaky_bucket::{self, Level};
use crate::algorithms::sliding_window::{self, Counters};
use crate::algorithms::token_bucket::{self, Bucket};
use crate::algorithms::{Parts, fixed_window, sliding_log};
use crate::{Algorithm, Decision, Policy, StoreError};

/// Checks between sweeps of expired entries.
const SWEEP_EVERY: u64 = 4096;

/// An in-process store. Cheap to clone; clones share the state.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<String, Entry>,
    checks: u64,
}

#[derive(Debug)]
struct Entry {
    state: State,
    expires_at_ms: f64,
}

#[derive(Debug)]
enum State {
    Bucket(Bucket),
    Count(u64),
    Window(fixed_window::Counter),
    Opened(Opened),
    Log(VecDeque<f64>),
    Sliding(Counters),
    Level(Level),
    Leases(Leases),
}

impl Inner {
    fn live(&mut self, key: &str, now: f64) -> Option<&mut State> {
        if self
            .entries
            .get(key)
            .is_some_and(|e| e.expires_at_ms <= now)
        {
            self.entries.remove(key);
        }
        self.entries.get_mut(key).map(|e| &mut e.state)
    }

    fn put(&mut self, key: &str, state: State, expires_at_ms: f64) {
        self.entries.insert(
            key.to_owned(),
            Entry {
                state,
                expires_at_ms,
            },
        );
    }

    fn tick(&mut self, now: f64) {
        self.checks += 1;
        if self.checks.is_multiple_of(SWEEP_EVERY) {
            self.entries.retain(|_, e| e.expires_at_ms > now);
        }
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The store's clock, milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> u64 {
        now_ms() as u64
    }

    /// Number of live and not yet swept entries.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether the store holds no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave the map half-written
        // (every update is a single insert), so a poisoned lock is still usable.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Check one request.
    pub async fn check(&self, policy: &Policy, key: &str) -> Result<Decision, StoreError> {
        let (limit, window) = (policy.limit(), policy.window_ms());
        let parts = match policy.algorithm() {
            Algorithm::FixedWindow => self.fixed_window_incr_then_expire(key, limit, window).await,
            Algorithm::RacyBucket => self.racy_bucket(policy, key).await,
            Algorithm::Concurrency => {
                let lease = rand::random::<u64>();
                let parts = self.atomic(policy, key, lease);
                return Ok(Decision::from_parts(limit, parts).with_lease(lease));
            }
            _ => self.atomic(policy, key, 0),
        };
        Ok(Decision::from_parts(limit, parts))
    }

    /// Give back a concurrency lease (nothing if it expired).
    pub fn release(&self, key: &str, lease: u64) {
        let mut inner = self.lock();
        if let Some(Entry {
            state: State::Leases(leases),
            ..
        }) = inner.entries.get_mut(key)
        {
            concurrency::release(leases, lease);
        }
    }

    /// One atomic check; `lease` is the id a concurrency limit's admitted
    /// request holds (ignored by the other algorithms).
    fn atomic(&self, policy: &Policy, key: &str, lease: u64) -> Parts {
        let (limit, window) = (policy.limit(), policy.window_ms());
        let now = now_ms();
        let mut inner = self.lock();
        inner.tick(now);
        let state = inner.live(key, now);
        match policy.algorithm() {
            Algorithm::TokenBucket | Algorithm::RacyBucket => {
                let old = match state {
                    Some(State::Bucket(b)) => Some(*b),
                    _ => None,
                };
                let (bucket, parts) = token_bucket::take(old, limit, window, now);
                let expires = now + token_bucket::ttl_ms(window) as f64;
                inner.put(key, State::Bucket(bucket), expires);
                parts
            }
            Algorithm::FixedWindowLua | Algorithm::FixedWindow => {
                let old = match state {
                    Some(State::Window(c)) => Some(*c),
                    _ => None,
                };
                let now_ms = now as u64;
                let (counter, parts) = fixed_window::take(old, limit, window, now_ms);
                if let Some(counter) = counter {
                    let expires = now_ms + fixed_window::to_end(now_ms, window);
                    inner.put(key, State::Window(counter), expires as f64);
                }
                parts
            }
            Algorithm::ClientWindow => {
                let old = match state {
                    Some(State::Opened(o)) => Some(*o),
                    _ => None,
                };
                let now_ms = now as u64;
                let (opened, parts) = client_window::take(old, limit, window, now_ms);
                if let Some(opened) = opened {
                    let expires = opened.start_ms.saturating_add(window);
                    inner.put(key, State::Opened(opened), expires as f64);
                }
                parts
            }
            Algorithm::SlidingLog => {
                let mut log = match inner.entries.remove(key).map(|e| e.state) {
                    Some(State::Log(log)) => log,
                    _ => VecDeque::new(),
                };
                let parts = sliding_log::take(&mut log, limit, window, now);
                if let Some(&newest) = log.back() {
                    inner.put(key, State::Log(log), newest + window as f64);
                }
                parts
            }
            Algorithm::LeakyBucket => {
                let old = match state {
                    Some(State::Level(l)) => Some(*l),
                    _ => None,
                };
                let (level, parts) = leaky_bucket::take(old, limit, window, now);
                if let Some(level) = level {
                    let expires = now + leaky_bucket::ttl_ms(window) as f64;
                    inner.put(key, State::Level(level), expires);
                }
                parts
            }
            Algorithm::Concurrency => {
                let mut leases = match inner.entries.remove(key).map(|e| e.state) {
                    Some(State::Leases(leases)) => leases,
                    _ => Leases::new(),
                };
                let parts = concurrency::take(&mut leases, limit, window, lease, now);
                if !leases.is_empty() {
                    inner.put(key, State::Leases(leases), now + window as f64);
                }
                parts
            }
            Algorithm::SlidingWindow => {
                let old = match state {
                    Some(State::Sliding(c)) => Some(*c),
                    _ => None,
                };
                let now_ms = now as u64;
                let (counters, parts) = sliding_window::take(old, limit, window, now_ms);
                if let Some(counters) = counters {
                    let expires = now_ms + sliding_window::ttl_ms(window, now_ms);
                    inner.put(key, State::Sliding(counters), expires as f64);
                }
                parts
            }
        }
    }

    /// Mirrors Redis `INCR`, then `PEXPIRE` in a separate step.
    async fn fixed_window_incr_then_expire(&self, base: &str, limit: u64, window: u64) -> Parts {
        let now = now_ms();
        let now_ms = now as u64;
        let key = format!("{base}:{}", fixed_window::index(now_ms, window));
        let count = {
            let mut inner = self.lock();
            inner.tick(now);
            let count = match inner.live(&key, now) {
                Some(State::Count(n)) => *n + 1,
                _ => 1,
            };
            // Like a Redis key INCRed before its PEXPIRE: no expiry yet.
            inner.put(&key, State::Count(count), f64::INFINITY);
            count
        };
        tokio::task::yield_now().await;
        let ttl = fixed_window::to_end(now_ms, window) + 1000;
        if let Some(entry) = self.lock().entries.get_mut(&key) {
            entry.expires_at_ms = now + ttl as f64;
        }
        fixed_window::after_incr(count, limit, window, now_ms)
    }

    /// COUNTER-EXAMPLE, as on Redis: read, (gap), write.
    async fn racy_bucket(&self, policy: &Policy, key: &str) -> Parts {
        let (capacity, window) = (policy.limit(), policy.window_ms());
        let now = now_ms();
        let old = {
            let mut inner = self.lock();
            inner.tick(now);
            match inner.live(key, now) {
                Some(State::Bucket(b)) => Some(*b),
                _ => None,
            }
        };
        let (bucket, parts) = token_bucket::take(old, capacity, window, now);
        if policy.racy_gap().is_zero() {
            tokio::task::yield_now().await;
        } else {
            tokio::time::sleep(policy.racy_gap()).await;
        }
        let expires = now + token_bucket::ttl_ms(window) as f64;
        self.lock().put(key, State::Bucket(bucket), expires);
        parts
    }
}

fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn expired_entries_restore_the_quota_and_are_swept() {
        let store = MemoryStore::new();
        let policy = Policy::new(Algorithm::FixedWindowLua, 1, Duration::from_millis(5)).unwrap();
        for i in 0..SWEEP_EVERY {
            store.check(&policy, &format!("k{i}")).await.unwrap();
        }
        // Every entry lives at most one 5 ms window; wait well past it.
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(store.check(&policy, "k0").await.unwrap().allowed);
        for i in 0..SWEEP_EVERY {
            store.check(&policy, &format!("other{i}")).await.unwrap();
        }
        assert!(
            store.len() <= SWEEP_EVERY as usize + 1,
            "the first {SWEEP_EVERY} keys were swept, {} left",
            store.len()
        );
    }
}
