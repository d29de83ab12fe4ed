//! Picking a store for a local run, the way the bench and the comparison do:
//! Redis at a given URL (`--redis` / `REDIS_URL`); else a throw-away
//! `redis-server` child on a free loopback port (stopped when this value is
//! dropped); else the embedded store — and saying which.

use std::fmt;

use crate::redis_process::RedisServer;
use crate::{MemoryStore, Store, StoreError};

/// A store for one local run; hands out one connection per replica.
pub struct LocalStore {
    backend: Backend,
    note: String,
}

enum Backend {
    Redis {
        url: String,
        _child: Option<RedisServer>,
    },
    Memory(MemoryStore),
}

impl fmt::Debug for LocalStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

impl LocalStore {
    /// Redis at `url` if given, else a `redis-server` child if one is on PATH
    /// and starts, else the embedded store.
    pub async fn auto(url: Option<&str>) -> Result<Self, StoreError> {
        if let Some(url) = url {
            // Fail now, not at the first check, when the URL is wrong.
            Store::redis(url).await?;
            return Ok(Self {
                backend: Backend::Redis {
                    url: url.to_owned(),
                    _child: None,
                },
                note: "given URL".to_owned(),
            });
        }
        match RedisServer::start() {
            Ok(child) => {
                let url = child.url();
                let note = format!("throw-away redis-server, pid {}", child.pid());
                Store::redis(&url).await?;
                Ok(Self {
                    backend: Backend::Redis {
                        url,
                        _child: Some(child),
                    },
                    note,
                })
            }
            Err(e) => Ok(Self {
                backend: Backend::Memory(MemoryStore::new()),
                note: e.to_string(),
            }),
        }
    }

    /// The embedded store, explicitly.
    pub fn memory() -> Self {
        Self {
            backend: Backend::Memory(MemoryStore::new()),
            note: "chosen".to_owned(),
        }
    }

    /// A store handle for one replica: a new Redis connection (as a separate
    /// process would have), or a clone of the shared embedded store.
    pub async fn connect(&self) -> Result<Store, StoreError> {
        match &self.backend {
            Backend::Redis { url, .. } => Store::redis(url).await,
            Backend::Memory(m) => Ok(Store::Memory(m.clone())),
        }
    }

    /// The Redis URL, when the store is Redis.
    pub fn redis_url(&self) -> Option<&str> {
        match &self.backend {
            Backend::Redis { url, .. } => Some(url),
            Backend::Memory(_) => None,
        }
    }

    /// Which store, and why: "redis at redis://127.0.0.1:PORT (throw-away
    /// redis-server, pid N)" or "embedded in-process store (redis-server not found on PATH)".
    pub fn describe(&self) -> String {
        match &self.backend {
            Backend::Redis { url, .. } => format!("redis at {url} ({})", self.note),
            Backend::Memory(_) => format!("embedded in-process store ({})", self.note),
        }
    }
}
