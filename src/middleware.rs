//! The `reqwest-middleware` adapter (feature `middleware`).
//!
//! ```no_run
//! # async fn run() -> Result<(), reqwest_middleware::Error> {
//! let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
//!     .with(courteous::CourteousMiddleware::new())
//!     .build();
//! let response = client.get("http://127.0.0.1:8080/").send().await?;
//! # let _ = response;
//! # Ok(())
//! # }
//! ```
//!
//! Errors from reqwest come back as `reqwest_middleware::Error::Reqwest`
//! unchanged; the engine's own (gave up on a throttled response) as
//! `reqwest_middleware::Error::Middleware` wrapping a [`crate::Error`].

use std::future::Future;

use http::Extensions;
use reqwest_middleware::{Middleware, Next};

use crate::engine::{Config, Engine, Scope, ScopeStats};
use crate::options::RequestOptions;
use crate::service::{Core, CourteousLayer, Origin, Settings, Transport, execute};

/// A [`Middleware`] that makes a `reqwest_middleware::ClientWithMiddleware`
/// polite. Clones share one engine, so a pause or a learned quota applies
/// to all of them.
///
/// Its setters are the same as [`ClientBuilder`](crate::ClientBuilder)'s
/// and [`CourteousLayer`]'s (or convert a configured layer with `From`).
/// Set them before cloning or adding it to a client: a setter of the
/// engine's configuration (attempts, waits, backoff, give-up mode...)
/// starts a fresh engine, so a clone it is called on stops sharing pauses
/// and learned quotas with the others; the other setters (classifier,
/// hooks, parser) change only the clone they are called on.
///
/// ```
/// let middleware = courteous::CourteousMiddleware::new()
///     .generate_idempotency_keys(true)
///     .max_attempts(3);
/// # let _ = middleware;
/// ```
///
/// [`RequestOptions`](crate::RequestOptions) for one request go in
/// `reqwest-middleware`'s extensions (`RequestBuilder::with_extension`) or
/// the request's own; the former win.
///
/// ## Order with other middleware
///
/// Middleware added *before* it (`.with(a).with(courteous)`) runs once per
/// call; middleware added *after* it runs once per attempt. Never combine
/// it with `reqwest-retry`'s `RetryTransientMiddleware`: attempts multiply.
#[cfg_attr(docsrs, doc(cfg(feature = "middleware")))]
#[derive(Debug, Clone, Default)]
pub struct CourteousMiddleware {
    core: Core,
}

impl CourteousMiddleware {
    /// A middleware with the default configuration.
    pub fn new() -> Self {
        Self::default()
    }

    /// A middleware with this configuration.
    pub fn with_config(config: Config) -> Self {
        CourteousLayer::with_config(config).into()
    }

    /// Rebuilds the engine with a changed configuration: this middleware
    /// (and clones made from it afterwards) stop sharing state with clones
    /// made before.
    fn update_config(&mut self, f: impl FnOnce(Config) -> Config) {
        self.core.update_config(f);
    }

    fn settings_mut(&mut self) -> &mut Settings {
        self.core.settings_mut()
    }

    crate::setup::courtesy_setters!();

    /// The shared engine.
    pub fn engine(&self) -> &Engine {
        &self.core.engine
    }

    /// Counters of every scope seen so far.
    pub fn stats(&self) -> Vec<(Scope, ScopeStats)> {
        self.core.stats()
    }
}

/// The layer's configuration (scopes, idempotency keys, parser) and engine.
impl From<CourteousLayer> for CourteousMiddleware {
    fn from(layer: CourteousLayer) -> Self {
        Self {
            core: layer.into_core(),
        }
    }
}

struct NextTransport<'a, 'e> {
    next: Next<'a>,
    extensions: &'e mut Extensions,
}

impl Transport for NextTransport<'_, '_> {
    type Error = reqwest_middleware::Error;

    fn send(
        &mut self,
        req: reqwest::Request,
    ) -> impl Future<Output = Result<reqwest::Response, Self::Error>> + Send {
        self.next.clone().run(req, self.extensions)
    }
}

#[async_trait::async_trait]
impl Middleware for CourteousMiddleware {
    async fn handle(
        &self,
        req: reqwest::Request,
        extensions: &mut Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        let options = extensions.get::<RequestOptions>().cloned().map(Box::new);
        let mut transport = NextTransport { next, extensions };
        execute(&self.core, &mut transport, req, Origin::Any, options)
            .await
            .map_err(into_middleware_error)
    }
}

/// Hands reqwest's own errors back unchanged; wraps the engine's.
fn into_middleware_error(err: crate::Error) -> reqwest_middleware::Error {
    if !err.is_request() {
        return reqwest_middleware::Error::middleware(err);
    }
    let attempts = err.attempts();
    match err.into_source() {
        Some(source) => match source.downcast::<reqwest_middleware::Error>() {
            Ok(original) => *original,
            Err(other) => {
                reqwest_middleware::Error::middleware(crate::Error::request(other, attempts))
            }
        },
        None => {
            reqwest_middleware::Error::middleware(crate::Error::new(crate::error::Kind::Request))
        }
    }
}
