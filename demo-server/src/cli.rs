//! Command line: `demo-server serve`, `bench`, `compare` and `client`.

use std::net::SocketAddr;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::identity::IdentityConfig;
use crate::{Algorithm, ConfigError, FailMode, HeaderStyle, KeySpace, Policy, ServerConfig};

/// A Redis-backed rate-limited API that speaks every rate-limit header dialect.
#[derive(Debug, Parser)]
#[command(name = "demo-server", version)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the rate-limited API.
    Serve(ServeArgs),
    /// Measure the cost of one check per algorithm (latency, memory).
    Bench(BenchArgs),
    /// Run the original experiment's experiments side by side: race, window edge, wasted
    /// requests per client, a herd, cost per check; table plus SVG timeline.
    Compare(crate::compare::CompareArgs),
    /// Run one of the example clients (`examples/`) against a URL and print
    /// what it cost the server as one JSON line (what `compare` runs).
    Client(crate::example_clients::ClientArgs),
}

/// `demo-server serve`. Default policy: the original experiment's token bucket (docs/background.md), 20 tokens refilled 20/s.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The algorithm.
    #[arg(long, value_enum, default_value_t = Algorithm::TokenBucket)]
    pub algorithm: Algorithm,
    /// Bucket capacity (with --rate).
    #[arg(long, conflicts_with_all = ["limit", "window"])]
    pub capacity: Option<u64>,
    /// Bucket refill, tokens per second (with --capacity).
    #[arg(long, conflicts_with_all = ["limit", "window"])]
    pub rate: Option<f64>,
    /// Requests per window (with --window).
    #[arg(long)]
    pub limit: Option<u64>,
    /// Window in seconds, fractions allowed (with --limit).
    #[arg(long)]
    pub window: Option<f64>,
    /// Header dialect.
    #[arg(long, value_enum, default_value_t = HeaderStyle::All)]
    pub headers: HeaderStyle,
    /// Listen address.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Redis URL (`redis://host:port`), or a Redis Cluster (`redis+cluster://host:port,host:port…`
    /// or a comma-separated list of nodes); without it (and without REDIS_URL) the embedded store is used.
    #[arg(long, env = "REDIS_URL")]
    pub redis: Option<String>,
    /// What to do when the store fails or misses the deadline.
    #[arg(long, value_enum, default_value_t = FailMode::Open)]
    pub fail: FailMode,
    /// Per-check deadline, milliseconds.
    #[arg(long, default_value_t = 150)]
    pub deadline_ms: u64,
    /// Checks in flight per replica (and per `--lab` route) before failing fast.
    #[arg(long, default_value_t = crate::limiter::Limiter::DEFAULT_MAX_IN_FLIGHT)]
    pub max_in_flight: usize,
    /// Trust the last X-Forwarded-For entry (only behind one trusted proxy).
    #[arg(long)]
    pub trust_forwarded_for: bool,
    /// racy-bucket only: sleep between read and write, milliseconds.
    #[arg(long, default_value_t = 0)]
    pub racy_gap_ms: u64,
    /// Key namespace.
    #[arg(long, default_value = "courteous")]
    pub namespace: String,
    /// Policy version in the keys (bump to start everyone fresh).
    #[arg(long, default_value_t = 1)]
    pub policy_version: u32,
    /// Policy name in the IETF headers.
    #[arg(long, default_value = Policy::DEFAULT_NAME)]
    pub policy_name: String,
    /// Also serve every operating point of the lab at `/api/<name>`, each
    /// its own limiter, header style and latency (`demo_server::lab`).
    #[arg(long)]
    pub lab: bool,
}

impl ServeArgs {
    /// The policy these options describe.
    pub fn policy(&self) -> Result<Policy, ConfigError> {
        let policy = match (self.limit, self.window, self.capacity, self.rate) {
            (None, None, capacity, rate) => {
                let capacity = capacity.unwrap_or(20);
                Policy::bucket(self.algorithm, capacity, rate.unwrap_or(capacity as f64))?
            }
            (limit, window, _, _) => {
                let secs = window.unwrap_or(1.0);
                if !(secs.is_finite() && secs > 0.0 && secs <= Policy::MAX_WINDOW.as_secs_f64()) {
                    return Err(ConfigError::new(format!(
                        "window must be positive seconds, got {secs}"
                    )));
                }
                Policy::new(
                    self.algorithm,
                    limit.unwrap_or(20),
                    Duration::from_secs_f64(secs),
                )?
            }
        };
        policy
            .with_racy_gap(Duration::from_millis(self.racy_gap_ms))
            .named(&self.policy_name)
    }

    /// The replica configuration these options describe.
    pub fn server_config(&self) -> Result<ServerConfig, ConfigError> {
        let points: &[crate::lab::OperatingPoint] =
            if self.lab { &crate::lab::POINTS } else { &[] };
        let config = ServerConfig::new(self.policy()?)
            .headers(self.headers)
            .fail(self.fail)
            .deadline(Duration::from_millis(self.deadline_ms.max(1)))
            .max_in_flight(self.max_in_flight)
            .identity(IdentityConfig::default().trust_forwarded_for(self.trust_forwarded_for))
            .keys(KeySpace::new(&self.namespace, self.policy_version)?);
        crate::lab::mount(config, points)
    }
}

/// `demo-server bench`. Without --redis/REDIS_URL it starts a throw-away
/// `redis-server` if one is on PATH, else measures the embedded store.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Redis URL.
    #[arg(long, env = "REDIS_URL")]
    pub redis: Option<String>,
    /// Timed checks per algorithm.
    #[arg(long, default_value_t = 10_000)]
    pub iterations: usize,
    /// Limit of the latency policy (per --window seconds).
    #[arg(long, default_value_t = 100)]
    pub limit: u64,
    /// Window of the latency policy, seconds.
    #[arg(long, default_value_t = 1.0)]
    pub window: f64,
    /// Skip the MEMORY USAGE measurement.
    #[arg(long)]
    pub no_memory: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serve(args: &[&str]) -> Result<ServeArgs, clap::Error> {
        let argv = ["demo-server", "serve"].iter().chain(args).copied();
        match Cli::try_parse_from(argv)?.command {
            Command::Serve(args) => Ok(args),
            _ => unreachable!("parsed a serve command"),
        }
    }

    #[test]
    fn default_policy_is_the_seeds_bucket() {
        let policy = serve(&[]).unwrap().policy().unwrap();
        assert_eq!(policy.algorithm(), Algorithm::TokenBucket);
        assert_eq!(
            (policy.limit(), policy.window()),
            (20, Duration::from_secs(1))
        );
    }

    #[test]
    fn window_and_bucket_options() {
        let args = serve(&[
            "--algorithm",
            "sliding-log",
            "--limit",
            "100",
            "--window",
            "10",
        ])
        .unwrap();
        let policy = args.policy().unwrap();
        assert_eq!(
            (policy.limit(), policy.window()),
            (100, Duration::from_secs(10))
        );
        let args = serve(&["--capacity", "10", "--rate", "5", "--racy-gap-ms", "20"]).unwrap();
        let policy = args.policy().unwrap();
        assert_eq!((policy.limit(), policy.window_ms()), (10, 2000));
        assert_eq!(policy.racy_gap(), Duration::from_millis(20));
    }

    #[test]
    fn the_lab_mounts_every_operating_point() {
        let config = serve(&["--lab"]).unwrap().server_config().unwrap();
        assert_eq!(config.routes().len(), crate::lab::POINTS.len());
        assert!(
            serve(&[])
                .unwrap()
                .server_config()
                .unwrap()
                .routes()
                .is_empty()
        );
    }

    #[test]
    fn bad_options_are_errors_not_panics() {
        assert!(serve(&["--capacity", "1", "--limit", "2"]).is_err());
        assert!(serve(&["--algorithm", "leaky"]).is_err());
        assert!(serve(&["--window=-1"]).unwrap().policy().is_err());
        assert!(serve(&["--window", "NaN"]).unwrap().policy().is_err());
        assert!(serve(&["--rate", "0"]).unwrap().policy().is_err());
        assert!(
            serve(&["--namespace", "a:b"])
                .unwrap()
                .server_config()
                .is_err()
        );
        assert!(
            serve(&["--policy-name", "x\"y"])
                .unwrap()
                .server_config()
                .is_err()
        );
    }
}
