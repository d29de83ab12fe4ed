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
//! A transport error of a request sent once comes back as it was
//! (`reqwest_middleware::Error::Reqwest` for reqwest's, so its predicates
//! such as `is_connect` still answer). Every other error, as
//! `reqwest_middleware::Error::Middleware` wrapping a [`crate::Error`]:
//! a transport error after retries (as `reqwest-retry` wraps one), which
//! keeps the [`attempts`](crate::Error::attempts), why it stopped
//! ([`is_attempts_exhausted`](crate::Error::is_attempts_exhausted), …) and
//! the original error as its `source()`; a give-up on a throttled
//! response; a refusal for good
//! ([`is_final_refusal`](crate::Error::is_final_refusal), sent once); a
//! passed [`deadline`](crate::Error::is_deadline).
//!
//! ```
//! fn attempts(err: &reqwest_middleware::Error) -> Option<u32> {
//!     match err {
//!         reqwest_middleware::Error::Middleware(inner) => {
//!             Some(inner.downcast_ref::<courteous::Error>()?.attempts())
//!         }
//!         reqwest_middleware::Error::Reqwest(_) => Some(1),
//!     }
//! }
//! # let _ = attempts;
//! ```

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

/// Hands a transport error of a request sent once back unchanged; wraps
/// every other error (see the module docs).
fn into_middleware_error(err: crate::Error) -> reqwest_middleware::Error {
    if err.is_request() && err.attempts() <= 1 {
        return match err.downcast_source::<reqwest_middleware::Error>() {
            Ok(original) => original,
            Err(err) => reqwest_middleware::Error::middleware(err),
        };
    }
    reqwest_middleware::Error::middleware(err)
}
