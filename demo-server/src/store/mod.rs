//! Where quota state lives: Redis, shared by every replica, or the embedded
//! in-process store (same algorithms, same answers) when there is no Redis.

mod memory;
mod redis_store;

pub use memory::MemoryStore;
pub use redis_store::{RedisConnection, RedisStore};

use std::fmt;

use crate::{Decision, Policy, StoreError};

/// A rate-limit store. Cheap to clone; clones share the connection (or the map).
#[derive(Clone)]
pub enum Store {
    /// Redis through a reconnecting multiplexed connection.
    Redis(RedisStore),
    /// The embedded in-process store.
    Memory(MemoryStore),
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Store {
    /// Connect to Redis at `url` (e.g. `redis://127.0.0.1:6379`).
    pub async fn redis(url: &str) -> Result<Self, StoreError> {
        Ok(Store::Redis(RedisStore::connect(url).await?))
    }

    /// A fresh embedded store.
    pub fn memory() -> Self {
        Store::Memory(MemoryStore::new())
    }

    /// Redis when a URL is given (`--redis` or `REDIS_URL`), the embedded store otherwise.
    pub async fn from_url(url: Option<&str>) -> Result<Self, StoreError> {
        match url {
            Some(url) => Self::redis(url).await,
            None => Ok(Self::memory()),
        }
    }

    /// One line saying which store this is, for the start-up log.
    pub fn describe(&self) -> String {
        match self {
            Store::Redis(r) => format!("redis at {}", r.address()),
            Store::Memory(_) => "embedded in-process store (no Redis)".to_owned(),
        }
    }

    /// Check one request against `policy` for the client state under `key`.
    pub async fn check(&self, policy: &Policy, key: &str) -> Result<Decision, StoreError> {
        match self {
            Store::Redis(r) => r.check(policy, key).await,
            Store::Memory(m) => m.check(policy, key).await,
        }
    }

    /// Give back `decision`'s lease, if it holds one (a concurrency limit's
    /// admitted request, once its answer leaves).
    pub async fn release(&self, key: &str, decision: &Decision) -> Result<(), StoreError> {
        let Some(lease) = decision.lease else {
            return Ok(());
        };
        match self {
            Store::Redis(r) => r.release(key, lease).await,
            Store::Memory(m) => {
                m.release(key, lease);
                Ok(())
            }
        }
    }

    /// The store's clock in milliseconds since the Unix epoch (Redis `TIME`).
    pub async fn now_ms(&self) -> Result<u64, StoreError> {
        match self {
            Store::Redis(r) => r.now_ms().await,
            Store::Memory(m) => Ok(m.now_ms()),
        }
    }

    /// Whether the store answers (Redis `PING`).
    pub async fn ping(&self) -> Result<(), StoreError> {
        match self {
            Store::Redis(r) => r.ping().await,
            Store::Memory(_) => Ok(()),
        }
    }

    /// The Redis store, if this is one.
    pub fn as_redis(&self) -> Option<&RedisStore> {
        match self {
            Store::Redis(r) => Some(r),
            Store::Memory(_) => None,
        }
    }
}
