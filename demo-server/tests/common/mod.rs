//! Shared test harness: a real `redis-server` child (killed on drop) or the
//! embedded store, replicas on ephemeral loopback ports, and a small client.
#![allow(dead_code)]

use std::time::Duration;

use demo_server::redis_process::RedisServer;
use demo_server::{KeySpace, MemoryStore, Store};
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderValue};

/// Where the quota lives in a test.
pub enum Backend {
    Redis(RedisServer),
    Memory(MemoryStore),
}

impl Backend {
    pub fn redis() -> Self {
        Backend::Redis(RedisServer::start().expect("redis-server on PATH (CI installs it)"))
    }

    pub fn memory() -> Self {
        Backend::Memory(MemoryStore::new())
    }

    /// A store handle: a new connection per call on Redis (like a separate
    /// replica), a clone of the shared map in memory.
    pub async fn store(&self) -> Store {
        match self {
            Backend::Redis(server) => Store::redis(&server.url()).await.expect("connect to redis"),
            Backend::Memory(m) => Store::Memory(m.clone()),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Backend::Redis(_) => "redis",
            Backend::Memory(_) => "memory",
        }
    }
}

/// A namespace no other test or run uses (instead of FLUSHDB).
pub fn fresh_keys() -> KeySpace {
    KeySpace::unique("test").unwrap()
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("JSON body")
    }
}

/// `GET url` as client `id` (raw header bytes).
pub async fn get_as(client: &reqwest::Client, url: &str, id: &[u8]) -> Reply {
    let response = client
        .get(url)
        .header(
            "x-client-id",
            HeaderValue::from_bytes(id).expect("valid header bytes"),
        )
        .send()
        .await
        .expect("request");
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.bytes().await.expect("body").to_vec();
    Reply {
        status,
        headers,
        body,
    }
}
