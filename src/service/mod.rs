//! The tower adapter: [`CourteousLayer`] and the [`Courteous`] service over
//! any `Service<reqwest::Request>` — usually `reqwest::Client` itself.
//!
//! ```no_run
//! use tower::{Layer, Service};
//! use courteous::CourteousLayer;
//!
//! # async fn run() -> Result<(), courteous::Error> {
//! let layer = CourteousLayer::new();
//! let mut service = layer.layer(reqwest::Client::new());
//! let request = reqwest::Request::new(
//!     http::Method::GET,
//!     "http://127.0.0.1:8080/".parse().unwrap(),
//! );
//! let response = service.call(request).await?;
//! # let _ = response;
//! # Ok(())
//! # }
//! ```
//!
//! Every service made by one layer (and every clone of a service) shares
//! one [`Engine`]: what one request learns, all the others obey.

pub(crate) mod body;
pub(crate) mod classify;
mod execute;
mod layer;
mod log;
mod within;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

#[cfg(feature = "redis")]
pub(crate) use execute::now;
pub(crate) use execute::{Origin, Transport, execute};
pub use layer::CourteousLayer;

use crate::classify::SharedClassifier;
use crate::engine::{Config, Engine, Scope, ScopeHandle, ScopeStats};
use crate::error::{BoxError, Error};
use crate::hooks::Hook;
use crate::signal::SignalParser;

/// How requests map to scopes.
pub(crate) type ScopeFn = Arc<dyn Fn(&reqwest::Request) -> Scope + Send + Sync>;

/// Adapter settings (the engine's own live in [`Config`](crate::engine::Config)).
#[derive(Clone, Default)]
pub(crate) struct Settings {
    pub(crate) scope_fn: Option<ScopeFn>,
    pub(crate) parser: SignalParser,
    pub(crate) idempotency_keys: bool,
    pub(crate) classifier: Option<SharedClassifier>,
    pub(crate) on_retry: Option<Hook>,
    pub(crate) on_wait: Option<Hook>,
    /// The shared store of a fleet, when one was set.
    #[cfg(feature = "redis")]
    pub(crate) fleet: Option<crate::fleet::FleetGate>,
}

impl fmt::Debug for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let f = &mut f.debug_struct("Settings");
        let f = f
            .field("scope_fn", &self.scope_fn.as_ref().map(|_| "custom"))
            .field("parser", &self.parser)
            .field("idempotency_keys", &self.idempotency_keys)
            .field("classifier", &crate::classify::Debuggable(&self.classifier))
            .field("on_retry", &self.on_retry.as_ref().map(|_| "set"))
            .field("on_wait", &self.on_wait.as_ref().map(|_| "set"));
        #[cfg(feature = "redis")]
        let f = f.field("fleet", &self.fleet);
        f.finish()
    }
}

/// The engine and the adapter settings, shared by every adapter.
#[derive(Debug, Clone, Default)]
pub(crate) struct Core {
    pub(crate) engine: Engine,
    pub(crate) settings: Arc<Settings>,
}

impl Core {
    /// Rebuilds the engine with a changed configuration: clones of this
    /// core made earlier keep the old engine (and stop sharing state).
    pub(crate) fn update_config(&mut self, f: impl FnOnce(Config) -> Config) {
        let config = f(self.engine.config().clone());
        self.engine = Engine::new(config);
    }

    /// The adapter settings, copied first if clones share them.
    pub(crate) fn settings_mut(&mut self) -> &mut Settings {
        Arc::make_mut(&mut self.settings)
    }

    pub(crate) fn scope_of(
        &self,
        req: &reqwest::Request,
        chosen: Option<&Scope>,
        now: std::time::Instant,
    ) -> ScopeHandle {
        match (chosen, &self.settings.scope_fn) {
            (Some(scope), _) => self.engine.handle(scope.as_str(), now),
            (None, Some(key)) => self.engine.handle(key(req).as_str(), now),
            (None, None) => self.engine.handle(&classify::origin_key(req.url()), now),
        }
    }

    pub(crate) fn stats(&self) -> Vec<(Scope, ScopeStats)> {
        self.engine.stats()
    }
}

/// A service that makes `S` polite: it waits while its scope is paused,
/// paces before the quota runs out, and retries throttled requests no
/// earlier than the server asked. Made by [`CourteousLayer`].
#[derive(Clone)]
pub struct Courteous<S> {
    inner: S,
    core: Core,
}

impl<S: fmt::Debug> fmt::Debug for Courteous<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Courteous")
            .field("inner", &self.inner)
            .field("core", &self.core)
            .finish()
    }
}

impl<S> Courteous<S> {
    pub(crate) fn from_core(inner: S, core: Core) -> Self {
        Self { inner, core }
    }

    /// The wrapped service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The wrapped service, mutably.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Unwraps the service.
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// The shared engine.
    pub fn engine(&self) -> &Engine {
        &self.core.engine
    }

    /// Counters of every scope seen so far.
    pub fn stats(&self) -> Vec<(Scope, ScopeStats)> {
        self.core.stats()
    }
}

/// The future returned by [`Courteous`] when called as a `tower::Service`.
pub struct ResponseFuture {
    inner: Pin<Box<dyn Future<Output = Result<reqwest::Response, Error>> + Send>>,
}

impl fmt::Debug for ResponseFuture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResponseFuture").finish_non_exhaustive()
    }
}

impl Future for ResponseFuture {
    type Output = Result<reqwest::Response, Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.inner.as_mut().poll(cx)
    }
}

/// Sends through a tower service, waiting for readiness before each attempt.
struct ServiceTransport<S>(S);

impl<S> Transport for ServiceTransport<S>
where
    S: tower_service::Service<reqwest::Request, Response = reqwest::Response> + Send,
    S::Error: Into<BoxError> + Send,
    S::Future: Send,
{
    type Error = S::Error;

    async fn send(&mut self, req: reqwest::Request) -> Result<reqwest::Response, S::Error> {
        std::future::poll_fn(|cx| self.0.poll_ready(cx)).await?;
        self.0.call(req).await
    }
}

impl<S> tower_service::Service<reqwest::Request> for Courteous<S>
where
    S: tower_service::Service<reqwest::Request, Response = reqwest::Response>
        + Clone
        + Send
        + 'static,
    S::Error: Into<BoxError> + Send,
    S::Future: Send,
{
    type Response = reqwest::Response;
    type Error = Error;
    type Future = ResponseFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Readiness of the inner service is awaited before each attempt.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: reqwest::Request) -> Self::Future {
        let core = self.core.clone();
        let mut transport = ServiceTransport(self.inner.clone());
        ResponseFuture {
            inner: Box::pin(
                async move { execute(&core, &mut transport, req, Origin::Any, None).await },
            ),
        }
    }
}
