//! [`CourteousLayer`]: wraps a service in [`Courteous`].

use std::sync::Arc;

use super::{Core, Courteous, Settings};
use crate::engine::{Config, Engine, Scope, ScopeStats};

/// A tower [`Layer`](tower_layer::Layer) that makes a
/// `Service<reqwest::Request>` polite. Every service it makes shares one
/// engine, so a pause or a learned quota applies to all of them.
///
/// `CourteousLayer::new()` uses [`Config::default()`]; see [`Config`] for
/// every default and where it comes from. Its setters are the same as
/// [`ClientBuilder`](crate::ClientBuilder)'s; set them before calling
/// `layer` (a setter starts a fresh engine).
///
/// ```
/// use std::time::Duration;
/// use tower::ServiceBuilder;
///
/// let layer = courteous::CourteousLayer::new()
///     .max_attempts(3)
///     .max_wait(Duration::from_secs(10))
///     .classifier(courteous::classify::GitHub);
/// let service = ServiceBuilder::new().layer(layer).service(reqwest::Client::new());
/// # let _ = service;
/// ```
///
/// ## Order with other layers
///
/// A layer *outside* `CourteousLayer` sees one call per request; one
/// *inside* (between it and the client) sees every attempt. Put
/// per-attempt concerns (signing, a concurrency limit, per-send tracing)
/// inside and per-call ones (a circuit breaker, caller-side metrics)
/// outside. Never stack another retry layer on either side: attempts
/// multiply.
#[derive(Debug, Clone, Default)]
pub struct CourteousLayer {
    core: Core,
}

impl CourteousLayer {
    /// A layer with the default configuration.
    pub fn new() -> Self {
        Self::default()
    }

    /// A layer with this configuration.
    pub fn with_config(config: Config) -> Self {
        Self {
            core: Core {
                engine: Engine::new(config),
                settings: Arc::default(),
            },
        }
    }

    /// Rebuilds the engine with a changed configuration: configure a layer
    /// before making services with it (services made earlier keep theirs).
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

    #[cfg(feature = "middleware")]
    pub(crate) fn into_core(self) -> Core {
        self.core
    }

    /// Counters of every scope seen so far.
    pub fn stats(&self) -> Vec<(Scope, ScopeStats)> {
        self.core.stats()
    }
}

impl<S> tower_layer::Layer<S> for CourteousLayer {
    type Service = Courteous<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Courteous::from_core(inner, self.core.clone())
    }
}
