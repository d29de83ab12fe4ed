//! One configuration surface for the three adapters.
//!
//! [`ClientBuilder`](crate::ClientBuilder), [`CourteousLayer`](crate::CourteousLayer)
//! and `CourteousMiddleware` get the same setters from one macro,
//! [`courtesy_setters!`]: a setter added there exists on all three. Each
//! adapter provides two private methods the setters go through:
//! `update_config(&mut self, impl FnOnce(Config) -> Config)` and
//! `settings_mut(&mut self) -> &mut Settings`.

/// The setters every adapter has, over [`Config`](crate::Config) and the
/// adapter settings.
macro_rules! courtesy_setters {
    () => {
        /// Replace the whole engine configuration ([`Config`](crate::Config)).
        pub fn config(mut self, config: $crate::Config) -> Self {
            self.update_config(|_| config);
            self
        }

        /// Pace before a 429 (default `true`); `false` = "Retry-After only":
        /// hints are still honoured after a throttled response.
        /// See [`Config::pacing`](crate::Config::pacing).
        pub fn pacing(mut self, enabled: bool) -> Self {
            self.update_config(|c| c.pacing(enabled));
            self
        }

        /// A quota the server enforces but never announces: at most
        /// `limit` requests in any `window` per scope (default none).
        /// See [`Config::declared_quota`](crate::Config::declared_quota).
        pub fn declared_quota(
            mut self,
            quota: impl Into<Option<(u32, ::std::time::Duration)>>,
        ) -> Self {
            let quota = quota.into();
            self.update_config(|c| c.declared_quota(quota));
            self
        }

        /// Attempts per request, the first included (default 5).
        pub fn max_attempts(mut self, attempts: u32) -> Self {
            self.update_config(|c| c.max_attempts(attempts));
            self
        }

        /// Longest single wait (default 60 s); a longer hint gives up at once.
        pub fn max_wait(mut self, wait: ::std::time::Duration) -> Self {
            self.update_config(|c| c.max_wait(wait));
            self
        }

        /// Bounds each request as a whole, from `send` to its response
        /// (default 120 s; `None`: no deadline): attempts, transport and
        /// waits. A wait that would end after it is not slept (the request
        /// stops at once); an attempt still out when it passes is
        /// cancelled. Either way the error says
        /// [`is_deadline`](crate::Error::is_deadline), with the
        /// [`attempts`](crate::Error::attempts) and the
        /// [`elapsed`](crate::Error::elapsed) time. Reading the body of the
        /// response returned is not bounded by it.
        ///
        /// reqwest's own `timeout` (on its `ClientBuilder`, or
        /// [`RequestBuilder::timeout`](crate::RequestBuilder::timeout))
        /// bounds each attempt instead, body included; a timed-out attempt
        /// is retried like a connection error. Use both: `timeout` for one
        /// slow answer, the deadline for the whole request. Per request:
        /// [`RequestOptions::deadline`](crate::RequestOptions::deadline).
        pub fn deadline(mut self, deadline: impl Into<Option<::std::time::Duration>>) -> Self {
            let deadline = deadline.into();
            self.update_config(|c| c.deadline(deadline));
            self
        }

        /// The retry budget (default [`RetryBudget::default()`](crate::RetryBudget);
        /// `None` disables it).
        pub fn retry_budget(mut self, budget: impl Into<Option<$crate::RetryBudget>>) -> Self {
            let budget = budget.into();
            self.update_config(|c| c.retry_budget(budget));
            self
        }

        /// Statuses that mean "throttled" for the default classification
        /// (default 429, 503). A 503 without any hint (no `Retry-After`,
        /// no quota fields: often a maintenance page) is retried with
        /// backoff for its request alone; the scope pauses only when the
        /// same request gets a second one in a row. A
        /// [`classifier`](Self::classifier) replaces both rules.
        pub fn retry_statuses(
            mut self,
            statuses: impl IntoIterator<Item = ::http::StatusCode>,
        ) -> Self {
            let statuses: Vec<_> = statuses.into_iter().collect();
            self.update_config(|c| c.retry_statuses(statuses));
            self
        }

        /// Backoff when no hint is given (default full jitter, 100 ms … 20 s).
        pub fn backoff(mut self, backoff: $crate::Backoff) -> Self {
            self.update_config(|c| c.backoff(backoff));
            self
        }

        /// Jitter after a hint (default up to 10 %, at most 1 s).
        pub fn hint_jitter(mut self, ratio: f64, cap: ::std::time::Duration) -> Self {
            self.update_config(|c| c.hint_jitter(ratio, cap));
            self
        }

        /// The hint assumed for a refusal that carries none (default 1 s,
        /// doubling per refusal in a row; see [`Config`](crate::Config)).
        pub fn unhinted_wait(mut self, wait: ::std::time::Duration) -> Self {
            self.update_config(|c| c.unhinted_wait(wait));
            self
        }

        /// What to return when a response is not final and will not be
        /// retried (default an error, for every method).
        pub fn give_up(mut self, mode: $crate::GiveUpMode) -> Self {
            self.update_config(|c| c.give_up(mode));
            self
        }

        /// Key the shared state by something other than the origin (for
        /// example an API key header, when the server limits per key).
        pub fn scope_by<F>(mut self, key: F) -> Self
        where
            F: Fn(&reqwest::Request) -> $crate::Scope + Send + Sync + 'static,
        {
            self.settings_mut().scope_fn = Some(::std::sync::Arc::new(key));
            self
        }

        /// Give POST and PATCH requests without an `Idempotency-Key` a
        /// generated one (reused by all attempts), so they may be retried.
        /// Off by default.
        pub fn generate_idempotency_keys(mut self, enabled: bool) -> Self {
            self.settings_mut().idempotency_keys = enabled;
            self
        }

        /// The signal parser (its body limit bounds what is read of a
        /// refused response).
        pub fn parser(mut self, parser: $crate::signal::SignalParser) -> Self {
            self.settings_mut().parser = parser;
            self
        }

        /// What responses mean ([`classify`](crate::classify)); default: by
        /// [`retry_statuses`](Self::retry_statuses).
        pub fn classifier(mut self, classifier: impl $crate::classify::Classify) -> Self {
            self.settings_mut().classifier = Some(::std::sync::Arc::new(classifier));
            self
        }

        /// Called once before every resend, with the wait after the
        /// attempt that failed and its status and signal
        /// ([`WaitEvent`](crate::hooks::WaitEvent)); not for pacing or a
        /// paused scope ([`on_wait`](Self::on_wait) sees those). Keep it
        /// quick: it runs on the request's task.
        pub fn on_retry<F>(mut self, hook: F) -> Self
        where
            F: Fn(&$crate::hooks::WaitEvent<'_>) + Send + Sync + 'static,
        {
            self.settings_mut().on_retry = Some(::std::sync::Arc::new(hook));
            self
        }

        /// Called before every wait of a request, with its cause
        /// ([`WaitCause`](crate::hooks::WaitCause)): pacing, a paused
        /// scope (a server hint or the backoff), the wait before a resend.
        /// Keep it quick: it runs on the request's task.
        pub fn on_wait<F>(mut self, hook: F) -> Self
        where
            F: Fn(&$crate::hooks::WaitEvent<'_>) + Send + Sync + 'static,
        {
            self.settings_mut().on_wait = Some(::std::sync::Arc::new(hook));
            self
        }

        /// Share pauses, learned quotas and send slots with every other
        /// process using the same store (feature `redis`; default: none,
        /// this process learns alone). See [`fleet`](crate::fleet).
        #[cfg(feature = "redis")]
        #[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
        pub fn fleet(mut self, fleet: $crate::fleet::RedisFleet) -> Self {
            self.settings_mut().fleet = Some($crate::fleet::FleetGate::new(fleet));
            self
        }
    };
}

pub(crate) use courtesy_setters;
