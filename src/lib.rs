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
//!
//! ## Cargo features
//!
//! courteous's features are reqwest 0.13's, forwarded to it, so the line
//! that enabled them on reqwest enables them here. The defaults are
//! reqwest's defaults: `Client::new()` fetches `https://` URLs.
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `default-tls` | yes | TLS through reqwest's default backend (rustls with aws-lc-rs in 0.13) |
//! | `charset` | yes | `Response::text` decodes the declared charset |
//! | `http2` | yes | HTTP/2 |
//! | `system-proxy` | yes | proxies from the system's settings |
//! | `rustls`, `rustls-no-provider`, `native-tls`, `native-tls-vendored` | | another TLS backend (turn defaults off: `default-features = false`) |
//! | `json` | | `RequestBuilder::json` (and reqwest's `Response::json`) |
//! | `query` | | `RequestBuilder::query` |
//! | `form` | | `RequestBuilder::form` |
//! | `multipart` | | `RequestBuilder::multipart` (a form with a streamed part is sent once, never retried) |
//! | `stream` | | reqwest's `stream` (always on inside courteous, which re-chains a throttled body it read; listed so reqwest's feature lines carry over) |
//! | `cookies`, `gzip`, `brotli`, `deflate`, `zstd` | | forwarded to reqwest as they are |
//! | `middleware` | | `CourteousMiddleware`, a `reqwest-middleware` adapter |
//! | `testing` | | `testing`: wiremock responders that rate-limit like real servers |
//! | `redis` | | `fleet`: processes sharing pauses, learned quotas and send slots through Redis (`ClientBuilder::fleet` and the same setter on each adapter) |
//!
//! Without any TLS feature, `https://` requests fail with a builder error
//! from reqwest; bring a `reqwest::Client` configured your way with
//! [`ClientBuilder::http_client`].
//!
//! ## Logging
//!
//! courteous logs through [`tracing`](https://docs.rs/tracing). With
//! `tracing-subscriber`'s `EnvFilter` (`tracing_subscriber::fmt()
//! .with_env_filter(EnvFilter::from_default_env()).init()`), run with
//! `RUST_LOG=courteous=debug` to see every wait, resend and give-up, or
//! `RUST_LOG=courteous=warn` for the give-ups alone.
//!
//! | target | level | what |
//! |---|---|---|
//! | `courteous::service` | WARN | a request gave up: its error's whole message (`error.message`), `error.type` (`wait_too_long`, `attempts_exhausted`, `deadline`, `not_retryable`, `budget_exhausted`, `connect`, …) |
//! | `courteous::service` | DEBUG | a resend: the status or error of the attempt, the wait before it and why |
//! | `courteous::engine` | DEBUG | a wait before a send: pacing (the quota read from responses) or a paused scope |
//! | `courteous::fleet` | DEBUG | the shared store (feature `redis`) failing or coming back |
//! | `courteous::signal` | DEBUG | a malformed rate-limit header or body, ignored |
//!
//! Fields follow OpenTelemetry's HTTP client conventions where one exists:
//! `http.request.method`, `url.full` (credentials replaced by
//! `REDACTED`), `http.response.status_code`, `http.request.resend_count`,
//! `error.type`; courteous's own are `courteous.scope`,
//! `courteous.attempts`, `courteous.cause` and `courteous.wait_ms`.
//! For metrics of every wait or resend, see the
//! [`on_wait`](ClientBuilder::on_wait) and
//! [`on_retry`](ClientBuilder::on_retry) hooks ([`hooks`]).
//!
//! ## Stacking with other middleware
//!
//! courteous retries: never stack it with another retry layer
//! (`reqwest-retry`, tower's `Retry`), or the attempts multiply (5 × 3 = 15
//! sends for one call). Layers that should run once per *call* (metrics of
//! what the caller saw, a circuit breaker) go outside it; layers that should
//! run once per *attempt* (authentication that signs each send, tracing of
//! each send, a concurrency limit) go inside it, between it and the client.
//! See [`service`](crate::Courteous) and `CourteousMiddleware` for each
//! adapter's order rules.
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod signal;

pub mod classify;
mod client;
pub mod engine;
mod error;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub mod fleet;
pub mod hooks;
#[cfg(feature = "middleware")]
mod middleware;
mod options;
pub mod preset;
mod report;
mod service;
mod setup;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;

/// The reqwest courteous is built on, re-exported: `courteous::reqwest`
/// names the same types courteous takes and returns (`Response`,
/// `Request`, `Client`), with no second reqwest to pin in `Cargo.toml`.
pub use reqwest;

pub use client::{Client, ClientBuilder, RequestBuilder};
pub use engine::{
    Backoff, Config, GiveUpMode, GiveUpReason, QuotaKind, RetryBudget, Scope, ScopeStats,
};
pub use error::Error;
#[cfg(feature = "middleware")]
#[cfg_attr(docsrs, doc(cfg(feature = "middleware")))]
pub use middleware::CourteousMiddleware;
pub use options::RequestOptions;
pub use report::RetryReport;
pub use service::{Courteous, CourteousLayer, ResponseFuture};

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
