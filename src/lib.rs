//! # courteous
//!
//! Polite HTTP clients for rate-limited servers.
//!
//! Servers say how fast a client may go: `Retry-After`, the IETF
//! `RateLimit-*` / `RateLimit` / `RateLimit-Policy` fields, GitHub-style
//! `X-RateLimit-*`, and RFC 9457 problem+json bodies with `retry_after_ms`.
//! courteous reads all of them ([`signal`]), and the middleware built on top
//! slows down *before* the first 429, shares what it learned across clones
//! and concurrent requests, and retries only when and as late as the server
//! asked.
//!
//! - [`Client`]: the ready client, reqwest-like builders, one line for the
//!   common case.
//! - [`CourteousLayer`] / [`Courteous`]: the tower layer and service over any
//!   `Service<reqwest::Request>` (`reqwest::Client` included).
//! - `CourteousMiddleware` (feature `middleware`): a `reqwest-middleware` adapter.
//! - [`engine`]: the pure, clock-injected decision engine under all three.
//! - `fleet` (feature `redis`): many processes sharing one quota through
//!   Redis, one builder call on any of the three adapters.
//!
//! ```no_run
//! # async fn run() -> Result<(), courteous::Error> {
//! let client = courteous::Client::new();
//! let body = client.get("http://127.0.0.1:8080/").send().await?.text().await;
//! # let _ = body;
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod signal;

mod client;
pub mod engine;
mod error;
#[cfg(feature = "redis")]
pub mod fleet;
#[cfg(feature = "middleware")]
mod middleware;
mod report;
mod service;
#[cfg(feature = "testing")]
pub mod testing;

pub use client::{Client, ClientBuilder, RequestBuilder};
pub use engine::{Backoff, Config, GiveUpMode, GiveUpReason, RetryBudget, Scope, ScopeStats};
pub use error::Error;
#[cfg(feature = "middleware")]
pub use middleware::CourteousMiddleware;
pub use report::RetryReport;
pub use service::{Courteous, CourteousLayer, ResponseFuture};

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
