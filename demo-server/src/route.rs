//! A rate-limited route: its policy, header style and latency. A replica
//! serves its default route at `/` and `/api`, and any number of named
//! routes at `/api/<name>`, each with its own quota (the route's name is
//! part of its keys), so one server is a lab of operating points.

use std::time::Duration;

use crate::{ConfigError, HeaderStyle, Policy};

/// How long the server takes to answer, on every status alike: `fixed`
/// plus a uniform draw in `[0, jitter]`. Under a concurrency limit this is
/// the service time a request holds its lease for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Latency {
    fixed: Duration,
    jitter: Duration,
}

impl Latency {
    /// Longest accepted latency, fixed plus jitter: 10 s (a lab, not an outage).
    pub const MAX: Duration = Duration::from_secs(10);

    /// `fixed` plus up to `jitter`, both capped so the sum is at most [`Self::MAX`].
    pub fn new(fixed: Duration, jitter: Duration) -> Self {
        let fixed = fixed.min(Self::MAX);
        Self {
            fixed,
            jitter: jitter.min(Self::MAX - fixed),
        }
    }

    /// The fixed part.
    pub fn fixed(&self) -> Duration {
        self.fixed
    }

    /// The largest extra.
    pub fn jitter(&self) -> Duration {
        self.jitter
    }

    /// One draw.
    pub fn sample(&self) -> Duration {
        if self.jitter.is_zero() {
            return self.fixed;
        }
        let extra = rand::random_range(0..=self.jitter.as_micros() as u64);
        self.fixed + Duration::from_micros(extra)
    }
}

/// One route's limiter and how it answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteConfig {
    pub(crate) policy: Policy,
    pub(crate) headers: HeaderStyle,
    pub(crate) latency: Latency,
}

impl RouteConfig {
    /// `policy`, speaking every dialect (`all`), answering at once.
    pub fn new(policy: Policy) -> Self {
        Self {
            policy,
            headers: HeaderStyle::All,
            latency: Latency::default(),
        }
    }

    /// The header dialect.
    pub fn headers(mut self, headers: HeaderStyle) -> Self {
        self.headers = headers;
        self
    }

    /// The latency of every answer.
    pub fn latency(mut self, latency: Latency) -> Self {
        self.latency = latency;
        self
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }
}

/// A route name: `[A-Za-z0-9_.-]`, 1–64 characters (it becomes part of keys).
pub(crate) fn check_name(name: &str) -> Result<(), ConfigError> {
    if crate::config::is_safe_token(name, 64) {
        Ok(())
    } else {
        Err(ConfigError::new(format!(
            "route name must be 1-64 of [A-Za-z0-9_.-], got {name:?}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_draws_stay_within_fixed_plus_jitter_and_are_capped() {
        let latency = Latency::new(Duration::from_millis(50), Duration::from_millis(10));
        for _ in 0..100 {
            let d = latency.sample();
            assert!(
                d >= Duration::from_millis(50) && d <= Duration::from_millis(60),
                "{d:?}"
            );
        }
        let absurd = Latency::new(Duration::from_secs(3600), Duration::from_secs(3600));
        assert_eq!(absurd.sample(), Latency::MAX);
        assert!(check_name("a:b").is_err() && check_name("").is_err());
        assert!(check_name("token-bucket_20.1s").is_ok());
    }
}
