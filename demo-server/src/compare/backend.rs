//! Where the comparison keeps its quotas: the Redis at `REDIS_URL`, else a
//! throw-away `redis-server` on a free loopback port (stopped at the end),
//! else the embedded store.

use crate::redis_process::RedisServer;
use crate::{MemoryStore, Store};

use super::CompareError;

/// The chosen store and, when we started it, the `redis-server` child.
#[derive(Debug)]
pub struct Backend {
    kind: Kind,
    /// Why this store was chosen (for the progress line).
    pub reason: String,
}

#[derive(Debug)]
enum Kind {
    Redis {
        url: String,
        _child: Option<RedisServer>,
    },
    Memory(MemoryStore),
}

impl Backend {
    /// Redis at `url` when given; else start `redis-server` from `PATH`; else embedded.
    pub async fn choose(url: Option<&str>) -> Result<Self, CompareError> {
        if let Some(url) = url {
            Store::redis(url).await?.ping().await?;
            return Ok(Self {
                kind: Kind::Redis {
                    url: url.to_owned(),
                    _child: None,
                },
                reason: "REDIS_URL / --redis".to_owned(),
            });
        }
        match RedisServer::start() {
            Ok(child) => Ok(Self {
                kind: Kind::Redis {
                    url: child.url(),
                    _child: Some(child),
                },
                reason:
                    "started redis-server from PATH on a free loopback port; stopped at the end"
                        .to_owned(),
            }),
            Err(e) => Ok(Self {
                kind: Kind::Memory(MemoryStore::new()),
                reason: format!("{e}; set REDIS_URL to use Redis"),
            }),
        }
    }

    /// A store handle for one replica: its own connection on Redis, the
    /// shared map in memory.
    pub async fn store(&self) -> Result<Store, CompareError> {
        match &self.kind {
            Kind::Redis { url, .. } => Ok(Store::redis(url).await?),
            Kind::Memory(m) => Ok(Store::Memory(m.clone())),
        }
    }

    /// `redis at …` or `embedded …`.
    pub async fn describe(&self) -> String {
        match self.store().await {
            Ok(store) => store.describe(),
            Err(e) => format!("unreachable store ({e})"),
        }
    }
}
