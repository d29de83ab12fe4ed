//! The lab: named operating points, each a route of its own
//! (`/api/<name>`) on one server: an algorithm, a limit per window, a header
//! style, a server latency, and the job the comparison gives a client
//! there (its concurrency and the successes it needs).
//!
//! `demo-server serve --lab` mounts every point; `compare`'s operating-point
//! experiment runs the polite client and the "Retry-After seconds"
//! reference on each. The points cover limits of 5 to 200, windows of 1 to
//! 10 s, latencies of 0, 50, 100, 150 and 200 ms, c = 1, 4 and 8, the
//! concurrency limit, the leaky bucket, and the rows of issue 32 (the
//! concurrency limit of 2 at 200 ms, the window opened by the first request
//! at 100 ms, the bucket that says only `retry_after_ms` or only an
//! HTTP-date, the leaky bucket of 10 draining 5/s). Each job needs about
//! 2–3 s at the floor (one needs 10 s: the 10 s window), so the whole grid
//! runs in about a minute and a half.

use std::time::Duration;

use serde::Serialize;

use crate::{Algorithm, ConfigError, HeaderStyle, Latency, Policy, RouteConfig, ServerConfig};

/// One operating point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OperatingPoint {
    /// The route name (`/api/<name>`).
    pub name: &'static str,
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Units per window (bucket size; requests in service for `concurrency`).
    pub limit: u64,
    /// The window, milliseconds (a bucket's time to refill or drain from
    /// full; a concurrency lease's longest life).
    pub window_ms: u64,
    /// What the server says.
    pub headers: HeaderStyle,
    /// Server latency, fixed part, milliseconds (on every answer; the
    /// service time under a concurrency limit).
    pub latency_ms: u64,
    /// Server latency, largest extra, milliseconds.
    pub jitter_ms: u64,
    /// The client's concurrency.
    pub concurrency: u64,
    /// Successes the client needs.
    pub successes: u64,
}

impl OperatingPoint {
    /// The route's policy.
    pub fn policy(&self) -> Result<Policy, ConfigError> {
        Policy::new(
            self.algorithm,
            self.limit,
            Duration::from_millis(self.window_ms),
        )?
        .named(self.name)
    }

    /// The route.
    pub fn route(&self) -> Result<RouteConfig, ConfigError> {
        Ok(RouteConfig::new(self.policy()?)
            .headers(self.headers)
            .latency(self.latency()))
    }

    /// The server latency.
    pub fn latency(&self) -> Latency {
        Latency::new(
            Duration::from_millis(self.latency_ms),
            Duration::from_millis(self.jitter_ms),
        )
    }

    /// `20/1s`, `10/2s`, `2 in service`: the limit in words.
    pub fn limit_label(&self) -> String {
        if self.algorithm == Algorithm::Concurrency {
            return format!("{} in service", self.limit);
        }
        let secs = self.window_ms as f64 / 1000.0;
        format!("{}/{secs}s", self.limit)
    }
}

const fn point(
    name: &'static str,
    algorithm: Algorithm,
    (limit, window_ms): (u64, u64),
    headers: HeaderStyle,
    (latency_ms, jitter_ms): (u64, u64),
    (concurrency, successes): (u64, u64),
) -> OperatingPoint {
    OperatingPoint {
        name,
        algorithm,
        limit,
        window_ms,
        headers,
        latency_ms,
        jitter_ms,
        concurrency,
        successes,
    }
}

/// Every operating point, in the comparison's order.
pub const POINTS: [OperatingPoint; 11] = [
    point(
        "bucket-5",
        Algorithm::TokenBucket,
        (5, 1000),
        HeaderStyle::Ietf,
        (0, 0),
        (1, 15),
    ),
    point(
        "bucket-200-c8",
        Algorithm::TokenBucket,
        (200, 1000),
        HeaderStyle::XRatelimit,
        (0, 0),
        (8, 600),
    ),
    point(
        "bucket-problem-only",
        Algorithm::TokenBucket,
        (20, 1000),
        HeaderStyle::ProblemOnly,
        (0, 0),
        (1, 60),
    ),
    point(
        "bucket-http-date",
        Algorithm::TokenBucket,
        (20, 1000),
        HeaderStyle::HttpDate,
        (0, 0),
        (1, 60),
    ),
    point(
        "bucket-rtt50-c8",
        Algorithm::TokenBucket,
        (10, 1000),
        HeaderStyle::IetfLegacy,
        (50, 10),
        (8, 30),
    ),
    point(
        "bucket-rtt150-c4",
        Algorithm::TokenBucket,
        (20, 1000),
        HeaderStyle::All,
        (150, 0),
        (4, 60),
    ),
    point(
        "window-rtt100-c4",
        Algorithm::ClientWindow,
        (20, 1000),
        HeaderStyle::XRatelimit,
        (100, 0),
        (4, 60),
    ),
    point(
        "sliding-window-c4",
        Algorithm::SlidingWindow,
        (20, 1000),
        HeaderStyle::All,
        (0, 0),
        (4, 60),
    ),
    point(
        "log-100-10s",
        Algorithm::SlidingLog,
        (100, 10_000),
        HeaderStyle::Ietf,
        (0, 0),
        (4, 110),
    ),
    point(
        "leaky-10",
        Algorithm::LeakyBucket,
        (10, 2000),
        HeaderStyle::UsedSize,
        (0, 0),
        (1, 20),
    ),
    point(
        "concurrency-2",
        Algorithm::Concurrency,
        (2, 30_000),
        HeaderStyle::RetryAfter,
        (200, 0),
        (4, 30),
    ),
];

/// `config` with every operating point mounted at `/api/<name>`.
pub fn mount(config: ServerConfig, points: &[OperatingPoint]) -> Result<ServerConfig, ConfigError> {
    points
        .iter()
        .try_fold(config, |config, p| config.route(p.name, p.route()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_point_is_a_valid_route_with_a_name_of_its_own() {
        let config = ServerConfig::new(Policy::bucket(Algorithm::TokenBucket, 20, 20.0).unwrap());
        let config = mount(config, &POINTS).unwrap();
        assert_eq!(config.routes().len(), POINTS.len());
        assert_eq!(POINTS[0].limit_label(), "5/1s");
        assert_eq!(POINTS[10].limit_label(), "2 in service");
    }
}
