//! # demo-server
//!
//! A rate-limited API whose quotas live in Redis, so any number of replicas
//! share one quota, and which speaks every rate-limit header dialect
//! (draft-11 `RateLimit`/`RateLimit-Policy`, `RateLimit-Limit/Remaining/Reset`,
//! GitHub `X-RateLimit-*`, `Retry-After`, RFC 9457 problem bodies with
//! `retry_after_ms`). Without Redis it runs on an embedded store with the same
//! algorithms and the same answers.
//!
//! As a library (for tests and the comparison): build a [`Policy`], a
//! [`ServerConfig`], a [`Store`], and [`spawn`] replicas on ephemeral ports;
//! [`redis_process::RedisServer`] starts a throw-away `redis-server`,
//! [`local_store::LocalStore`] picks Redis or the embedded store for a run;
//! [`bench::run`] measures what a check costs.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use demo_server::redis_process::RedisServer;
//! use demo_server::{spawn, Algorithm, HeaderStyle, Policy, ServerConfig, Store};
//!
//! let redis = RedisServer::start()?; // killed on drop
//! let policy = Policy::bucket(Algorithm::TokenBucket, 20, 20.0)?;
//! let config = ServerConfig::new(policy).headers(HeaderStyle::All);
//! let mut replicas = Vec::new();
//! for _ in 0..3 {
//!     // One connection per replica, one shared quota.
//!     replicas.push(spawn(config.clone(), Store::redis(&redis.url()).await?).await?);
//! }
//! println!("{}", replicas[0].url());
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

pub mod algorithms;
pub mod app;
pub mod bench;
pub mod cli;
pub mod compare;
mod config;
mod decision;
mod error;
pub mod example_clients;
pub mod headers;
pub mod health;
pub mod identity;
pub mod lab;
pub mod limiter;
pub mod local_store;
pub mod problem;
pub mod redis_cluster;
pub mod redis_process;
pub mod route;
mod server;
pub mod stats;
mod store;

pub use app::{AppState, ServerConfig, app};
pub use config::{Algorithm, ConfigError, FailMode, HeaderStyle, KeySpace, Policy};
pub use decision::Decision;
pub use error::StoreError;
pub use route::{Latency, RouteConfig};
pub use server::{RunningServer, serve, spawn, spawn_on};
pub use store::{MemoryStore, RedisConnection, RedisStore, Store};

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
