//! What the server enforces: the algorithm, the quota, the key space.
//!
//! Policy is server configuration, never read from a request.

use std::fmt;
use std::time::Duration;

use serde::Serialize;

/// A rate-limit algorithm; each one runs the same way on Redis and in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// Token bucket in one Lua script: read, refill, take, write, expire (1 round trip).
    TokenBucket,
    /// Fixed window the common way: `INCR`, then `PEXPIRE` as a second round trip.
    /// The window number comes from the replica's clock (one more shortcut).
    FixedWindow,
    /// Fixed window in one Lua script: rejected requests are not counted (1 round trip).
    /// Windows are aligned to the clock (the Unix epoch).
    FixedWindowLua,
    /// Fixed window opened by each client's first request (the per-client
    /// window of API gateways and middleware limiters), in one Lua script;
    /// rejected requests are not counted (1 round trip).
    ClientWindow,
    /// Sliding log: a sorted set of the last window's requests, in one Lua script (1 round trip).
    SlidingLog,
    /// Sliding window counter: two fixed windows weighted by overlap (1 round trip).
    SlidingWindow,
    /// COUNTER-EXAMPLE: a bucket read with `HMGET` and written with `HSET` as separate
    /// commands (2 round trips). Concurrent requests all read the same tokens: it over-admits.
    RacyBucket,
    /// Leaky bucket as a meter (Shopify's REST limit): a level of `used`
    /// units draining `limit` per window; a request fits while the level
    /// is at most `limit − 1`, in one Lua script (1 round trip).
    LeakyBucket,
    /// Concurrency limit: at most `limit` requests of a client in service at
    /// once (a lease each, released when the answer leaves, expiring after
    /// the window if it never does); the rest are refused. One Lua script
    /// to take a lease, one `ZREM` to give it back (2 round trips).
    Concurrency,
}

impl Algorithm {
    /// Every algorithm; `racy-bucket` (not atomic) is the last but one.
    pub const ALL: [Algorithm; 9] = [
        Algorithm::TokenBucket,
        Algorithm::FixedWindow,
        Algorithm::FixedWindowLua,
        Algorithm::ClientWindow,
        Algorithm::SlidingLog,
        Algorithm::SlidingWindow,
        Algorithm::LeakyBucket,
        Algorithm::RacyBucket,
        Algorithm::Concurrency,
    ];

    /// The CLI / JSON name (`token-bucket`, …).
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::TokenBucket => "token-bucket",
            Algorithm::FixedWindow => "fixed-window",
            Algorithm::FixedWindowLua => "fixed-window-lua",
            Algorithm::ClientWindow => "client-window",
            Algorithm::SlidingLog => "sliding-log",
            Algorithm::SlidingWindow => "sliding-window",
            Algorithm::RacyBucket => "racy-bucket",
            Algorithm::LeakyBucket => "leaky-bucket",
            Algorithm::Concurrency => "concurrency",
        }
    }

    /// Whether one check is atomic, so concurrent checks never over-admit.
    /// `fixed-window` counts atomically with `INCR` (its flaws are the window
    /// edge and the separate `PEXPIRE`); only `racy-bucket` is not.
    pub fn is_atomic(self) -> bool {
        !matches!(self, Algorithm::RacyBucket)
    }

    /// Redis round trips per check.
    pub fn round_trips(self) -> u32 {
        match self {
            Algorithm::FixedWindow | Algorithm::RacyBucket | Algorithm::Concurrency => 2,
            _ => 1,
        }
    }

    /// Whether the quota is units per time (every algorithm but
    /// `concurrency`, whose units come back when answers leave).
    pub fn limits_rate(self) -> bool {
        !matches!(self, Algorithm::Concurrency)
    }

    /// Whether the quota is a bucket (capacity refilled, or a level
    /// drained, at a rate) rather than a window.
    pub fn is_bucket(self) -> bool {
        matches!(
            self,
            Algorithm::TokenBucket | Algorithm::RacyBucket | Algorithm::LeakyBucket
        )
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A policy was configured with values that cannot work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    message: String,
}

impl ConfigError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid configuration: {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

/// The quota one client gets: `limit` units per `window`.
///
/// For the buckets, `limit` is the capacity and the bucket refills
/// `limit` tokens per `window` (capacity 20 at 20/s is `limit = 20, window = 1 s`),
/// so every algorithm advertises the same `RateLimit-Policy: q=limit;w=window`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    algorithm: Algorithm,
    limit: u64,
    window: Duration,
    racy_gap: Duration,
    name: String,
}

impl Policy {
    /// Largest accepted limit: far above any demo, small enough for exact `f64` maths in Lua.
    pub const MAX_LIMIT: u64 = 1 << 40;
    /// Longest accepted window: one year.
    pub const MAX_WINDOW: Duration = Duration::from_secs(365 * 24 * 3600);
    /// Name advertised in the IETF headers unless [`Policy::named`] says otherwise.
    pub const DEFAULT_NAME: &'static str = "default";

    /// `limit` units per `window` (at least 1 and 1 ms; at most [`Self::MAX_LIMIT`]
    /// and [`Self::MAX_WINDOW`]).
    pub fn new(algorithm: Algorithm, limit: u64, window: Duration) -> Result<Self, ConfigError> {
        if limit == 0 || limit > Self::MAX_LIMIT {
            return Err(ConfigError::new(format!(
                "limit must be between 1 and {}, got {limit}",
                Self::MAX_LIMIT
            )));
        }
        if window < Duration::from_millis(1) || window > Self::MAX_WINDOW {
            return Err(ConfigError::new(format!(
                "window must be between 1 ms and one year, got {window:?}"
            )));
        }
        Ok(Self {
            algorithm,
            limit,
            window,
            racy_gap: Duration::ZERO,
            name: Self::DEFAULT_NAME.to_owned(),
        })
    }

    /// A bucket of `capacity` tokens refilled at `per_second` tokens per second.
    pub fn bucket(
        algorithm: Algorithm,
        capacity: u64,
        per_second: f64,
    ) -> Result<Self, ConfigError> {
        if !(per_second.is_finite() && per_second > 0.0) {
            return Err(ConfigError::new(format!(
                "rate must be a positive number of tokens per second, got {per_second}"
            )));
        }
        let window_secs = capacity as f64 / per_second;
        if !(window_secs.is_finite() && window_secs <= Self::MAX_WINDOW.as_secs_f64()) {
            return Err(ConfigError::new("capacity / rate exceeds one year"));
        }
        let window = Duration::from_millis((window_secs * 1000.0).round().max(1.0) as u64);
        Self::new(algorithm, capacity, window)
    }

    /// Sleep this long between the read and the write of `racy-bucket`, so the
    /// race shows reliably (default zero; ignored by the other algorithms).
    pub fn with_racy_gap(mut self, gap: Duration) -> Self {
        self.racy_gap = gap.min(Duration::from_secs(5));
        self
    }

    /// Name the policy in the IETF headers (`[A-Za-z0-9_.-]`, 1–64 characters).
    pub fn named(mut self, name: &str) -> Result<Self, ConfigError> {
        if !is_safe_token(name, 64) {
            return Err(ConfigError::new(format!(
                "policy name must be 1-64 of [A-Za-z0-9_.-], got {name:?}"
            )));
        }
        self.name = name.to_owned();
        Ok(self)
    }

    /// The algorithm.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
    /// Units per window (bucket capacity).
    pub fn limit(&self) -> u64 {
        self.limit
    }
    /// The window (time for a bucket to refill from empty).
    pub fn window(&self) -> Duration {
        self.window
    }
    /// The window in milliseconds.
    pub fn window_ms(&self) -> u64 {
        self.window.as_millis() as u64
    }
    /// The gap between read and write in `racy-bucket`.
    pub fn racy_gap(&self) -> Duration {
        self.racy_gap
    }
    /// The policy name advertised in the IETF headers.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Where keys live: `{namespace}:v{version}:{hash tag}:{algorithm}`.
///
/// Bumping the version starts every client with a fresh quota (a policy
/// change never reads counters written under another policy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySpace {
    namespace: String,
    version: u32,
}

impl Default for KeySpace {
    fn default() -> Self {
        Self {
            namespace: "courteous".to_owned(),
            version: 1,
        }
    }
}

impl KeySpace {
    /// A namespace (`[A-Za-z0-9_.-]`, 1–64 characters) and a policy version.
    pub fn new(namespace: &str, version: u32) -> Result<Self, ConfigError> {
        if !is_safe_token(namespace, 64) {
            return Err(ConfigError::new(format!(
                "namespace must be 1-64 of [A-Za-z0-9_.-], got {namespace:?}"
            )));
        }
        Ok(Self {
            namespace: namespace.to_owned(),
            version,
        })
    }

    /// A namespace no other run uses (`{prefix}-{random}`, version 1): isolates
    /// a run or a test without flushing anything. `prefix` must be a valid namespace.
    pub fn unique(prefix: &str) -> Result<Self, ConfigError> {
        Self::new(&format!("{prefix}-{:016x}", rand::random::<u64>()), 1)
    }

    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }
    /// The policy version.
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The key of one client's state for one algorithm. `client_hash` is the
    /// hex digest from [`crate::identity::ClientIdentity::hash`]; it becomes
    /// the `{hash tag}`, so every key of a client lands in one cluster slot.
    pub fn key(&self, client_hash: &str, algorithm: Algorithm) -> String {
        format!(
            "{}:v{}:{{{}}}:{}",
            self.namespace,
            self.version,
            client_hash,
            algorithm.name()
        )
    }
}

pub(crate) fn is_safe_token(value: &str, max: usize) -> bool {
    !value.is_empty()
        && value.len() <= max
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// What to do when the store fails or misses the per-check deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum FailMode {
    /// Serve the request anyway and count it (availability first; most public APIs).
    #[default]
    Open,
    /// Answer 503 with `Retry-After` and a problem body — never a 429, the client
    /// did nothing wrong.
    Closed,
}

/// Which rate-limit header dialect the server emits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum HeaderStyle {
    /// draft-ietf-httpapi-ratelimit-headers-11: `RateLimit` + `RateLimit-Policy` lists.
    Ietf,
    /// drafts -00 … -06: `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (delta).
    IetfLegacy,
    /// GitHub style `X-RateLimit-Limit/Remaining/Used/Reset` (reset as epoch seconds).
    XRatelimit,
    /// All of the above at once.
    #[default]
    All,
    /// No quota fields: a 429 says only `Retry-After` (whole seconds, rounded
    /// up), and its problem body carries no `retry_after_ms`.
    RetryAfter,
    /// Nothing at all: a bare 429 (its problem body carries no hint either).
    Bare,
    /// Only the 429's problem+json body's `retry_after_ms` (exact
    /// milliseconds to the next unit): no header at all.
    ProblemOnly,
    /// Only `Retry-After` as an HTTP-date (the next unit's second, rounded up).
    HttpDate,
    /// Shopify's `X-Shopify-Shop-Api-Call-Limit: used/size` on every answer,
    /// and `Retry-After` (whole seconds) on a 429.
    UsedSize,
}

impl FailMode {
    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            FailMode::Open => "open",
            FailMode::Closed => "closed",
        }
    }
}

impl HeaderStyle {
    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            HeaderStyle::Ietf => "ietf",
            HeaderStyle::IetfLegacy => "ietf-legacy",
            HeaderStyle::XRatelimit => "x-ratelimit",
            HeaderStyle::All => "all",
            HeaderStyle::RetryAfter => "retry-after",
            HeaderStyle::Bare => "bare",
            HeaderStyle::ProblemOnly => "problem-only",
            HeaderStyle::HttpDate => "http-date",
            HeaderStyle::UsedSize => "used-size",
        }
    }

    /// Every style that describes the quota.
    pub const WITH_QUOTA: [HeaderStyle; 4] = [
        HeaderStyle::Ietf,
        HeaderStyle::IetfLegacy,
        HeaderStyle::XRatelimit,
        HeaderStyle::All,
    ];

    /// Every style.
    pub const ALL: [HeaderStyle; 9] = [
        HeaderStyle::Ietf,
        HeaderStyle::IetfLegacy,
        HeaderStyle::XRatelimit,
        HeaderStyle::All,
        HeaderStyle::RetryAfter,
        HeaderStyle::Bare,
        HeaderStyle::ProblemOnly,
        HeaderStyle::HttpDate,
        HeaderStyle::UsedSize,
    ];

    /// Whether a 429 carries `Retry-After` in whole seconds.
    pub(crate) fn has_retry_after_seconds(self) -> bool {
        !matches!(
            self,
            HeaderStyle::Bare | HeaderStyle::ProblemOnly | HeaderStyle::HttpDate
        )
    }

    /// Whether a 429's problem body carries `retry_after_ms`.
    pub(crate) fn has_ms_hint(self) -> bool {
        !matches!(
            self,
            HeaderStyle::Bare
                | HeaderStyle::RetryAfter
                | HeaderStyle::HttpDate
                | HeaderStyle::UsedSize
        )
    }

    pub(crate) fn has_used_size(self) -> bool {
        matches!(self, HeaderStyle::UsedSize)
    }

    pub(crate) fn has_ietf(self) -> bool {
        matches!(self, HeaderStyle::Ietf | HeaderStyle::All)
    }
    pub(crate) fn has_ietf_legacy(self) -> bool {
        matches!(self, HeaderStyle::IetfLegacy | HeaderStyle::All)
    }
    pub(crate) fn has_x_ratelimit(self) -> bool {
        matches!(self, HeaderStyle::XRatelimit | HeaderStyle::All)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_window_is_capacity_over_rate() {
        let p = Policy::bucket(Algorithm::TokenBucket, 20, 20.0).unwrap();
        assert_eq!(p.window(), Duration::from_secs(1));
        let p = Policy::bucket(Algorithm::TokenBucket, 10, 4.0).unwrap();
        assert_eq!(p.window_ms(), 2500);
    }

    #[test]
    fn absurd_policies_are_errors() {
        assert!(Policy::new(Algorithm::TokenBucket, 0, Duration::from_secs(1)).is_err());
        assert!(Policy::new(Algorithm::TokenBucket, 1, Duration::ZERO).is_err());
        assert!(Policy::bucket(Algorithm::TokenBucket, 1, 0.0).is_err());
        assert!(Policy::bucket(Algorithm::TokenBucket, 1, f64::NAN).is_err());
        assert!(Policy::bucket(Algorithm::TokenBucket, u64::MAX, 1e-30).is_err());
        assert!(KeySpace::new("a:b", 1).is_err());
        assert!(KeySpace::new("", 1).is_err());
        let p = Policy::new(Algorithm::TokenBucket, 1, Duration::from_secs(1)).unwrap();
        assert!(p.clone().named("x\"y").is_err());
        assert!(p.named("burst").is_ok());
    }

    #[test]
    fn key_has_namespace_version_and_hash_tag() {
        let ks = KeySpace::new("demo", 3).unwrap();
        assert_eq!(
            ks.key("abc123", Algorithm::SlidingLog),
            "demo:v3:{abc123}:sliding-log"
        );
    }
}
