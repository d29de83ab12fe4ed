//! [`CourteousLayer`]: wraps a service in [`Courteous`].

use std::sync::Arc;

use super::{Core, Courteous, Settings};
use crate::engine::{Config, Engine, Scope, ScopeStats};
use crate::signal::SignalParser;

/// A tower [`Layer`](tower_layer::Layer) that makes a
/// `Service<reqwest::Request>` polite. Every service it makes shares one
/// engine, so a pause or a learned quota applies to all of them.
///
/// `CourteousLayer::new()` uses [`Config::default()`]; see [`Config`] for
/// every default and where it comes from.
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

    fn settings(&mut self) -> &mut Settings {
        Arc::make_mut(&mut self.core.settings)
    }

    /// Key the shared state by something other than the origin (for example
    /// an API key header, when the server limits per key).
    pub fn scope_by<F>(mut self, key: F) -> Self
    where
        F: Fn(&reqwest::Request) -> Scope + Send + Sync + 'static,
    {
        self.settings().scope_fn = Some(Arc::new(key));
        self
    }

    /// Give POST and PATCH requests without an `Idempotency-Key` a generated
    /// one (reused by all attempts), so they may be retried. Off by default.
    pub fn generate_idempotency_keys(mut self, enabled: bool) -> Self {
        self.settings().idempotency_keys = enabled;
        self
    }

    /// The parser used for responses (its body limit bounds what is read).
    pub fn parser(mut self, parser: SignalParser) -> Self {
        self.settings().parser = parser;
        self
    }

    /// Share pauses, learned quotas and send slots with every other process
    /// using the same store (feature `redis`; default: none). A
    /// `CourteousMiddleware` made from this layer shares it too. See
    /// [`fleet`](crate::fleet).
    #[cfg(feature = "redis")]
    pub fn fleet(mut self, fleet: crate::fleet::RedisFleet) -> Self {
        self.settings().fleet = Some(crate::fleet::FleetGate::new(fleet));
        self
    }

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
