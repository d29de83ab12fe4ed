//! What one check costs: latency per algorithm next to a raw `PING`, and
//! memory per key (`MEMORY USAGE`). Used by `demo-server bench` and the comparison.
//!
//! Latency: `iterations` rounds; each round times one `PING`, one empty Lua
//! script and one check of every algorithm, in a shuffled order, so that all
//! see the same machine conditions.

use std::fmt;
use std::time::{Duration, Instant};

use rand::seq::SliceRandom;
use serde::Serialize;

use crate::{Algorithm, KeySpace, Policy, RedisStore, Store, StoreError};

/// What to measure. Defaults: 10,000 checks (as in the original experiment), limit 100 per
/// second (a mix of admitted and rejected checks), memory at limits 100 and 10,000.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Timed rounds.
    pub iterations: usize,
    /// Untimed rounds first (connection set-up, script loading).
    pub warmup: usize,
    /// Limit of the latency policy.
    pub limit: u64,
    /// Window of the latency policy.
    pub window: Duration,
    /// Limits to fill keys to for `MEMORY USAGE` (Redis only); empty to skip.
    pub memory_limits: Vec<u64>,
}

impl Default for BenchOptions {
    fn default() -> Self {
        Self {
            iterations: 10_000,
            warmup: 500,
            limit: 100,
            window: Duration::from_secs(1),
            memory_limits: vec![100, 10_000],
        }
    }
}

/// Latency percentiles in microseconds.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Latency {
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
}

impl Latency {
    /// p50 and p99 of `samples`.
    pub fn of(mut samples: Vec<Duration>) -> Self {
        samples.sort_unstable();
        let at = |q: f64| {
            let i = ((samples.len() as f64 * q).ceil() as usize).clamp(1, samples.len().max(1)) - 1;
            samples.get(i).map_or(0.0, |d| d.as_secs_f64() * 1e6)
        };
        Self {
            p50_us: at(0.50),
            p99_us: at(0.99),
        }
    }
}

/// Cost of one check of one algorithm.
#[derive(Debug, Clone, Serialize)]
pub struct CheckCost {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Redis round trips per check.
    pub round_trips: u32,
    /// Latency of one check.
    pub latency: Latency,
    /// Checks admitted out of `iterations`.
    pub admitted: usize,
}

/// Memory of one client's key.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryCost {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// The limit the key was filled to.
    pub limit: u64,
    /// `MEMORY USAGE key SAMPLES 0`, bytes.
    pub bytes: u64,
}

/// Everything measured in one run.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// Which store.
    pub store: String,
    /// Timed rounds.
    pub iterations: usize,
    /// Raw `PING` (Redis only).
    pub ping: Option<Latency>,
    /// `EVALSHA` of a script that only returns five integers (Redis only):
    /// the floor of any Lua check.
    pub empty_script: Option<Latency>,
    /// One entry per algorithm.
    pub checks: Vec<CheckCost>,
    /// One entry per algorithm and limit (Redis only).
    pub memory: Vec<MemoryCost>,
}

/// Measure latency (and, on Redis, memory) of every algorithm.
pub async fn run(store: &Store, options: &BenchOptions) -> Result<BenchReport, StoreError> {
    let CheckCosts {
        ping,
        empty_script,
        checks,
    } = check_costs(store, options).await?;
    let memory = match store.as_redis() {
        Some(redis) => memory_costs(redis, &options.memory_limits).await?,
        None => Vec::new(),
    };
    Ok(BenchReport {
        store: store.describe(),
        iterations: options.iterations,
        ping,
        empty_script,
        checks,
        memory,
    })
}

fn fresh_keys() -> KeySpace {
    KeySpace::new(&format!("bench-{:08x}", rand::random::<u32>()), 1).expect("valid namespace")
}

/// Latencies of one [`check_costs`] run.
#[derive(Debug, Clone)]
pub struct CheckCosts {
    /// Raw `PING` (Redis only).
    pub ping: Option<Latency>,
    /// `EVALSHA` of a script that only returns (Redis only).
    pub empty_script: Option<Latency>,
    /// One entry per algorithm.
    pub checks: Vec<CheckCost>,
}

/// Latency of `PING`, of an empty script and of one check per algorithm, interleaved.
pub async fn check_costs(store: &Store, options: &BenchOptions) -> Result<CheckCosts, StoreError> {
    let keys = fresh_keys();
    let policies = Algorithm::ALL
        .iter()
        .map(|&a| Policy::new(a, options.limit, options.window).map(|p| (keys.key("bench", a), p)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| StoreError::bad_reply())?;
    let redis = store.as_redis();
    let mut ping = Vec::with_capacity(options.iterations);
    let mut empty = Vec::with_capacity(options.iterations);
    let empty_script = redis::Script::new("return {1, 0, 0, 0, 0}");
    let mut samples = vec![Vec::with_capacity(options.iterations); policies.len()];
    let mut admitted = vec![0; policies.len()];
    // Probe order is shuffled every round so no probe always runs first or
    // right after another (position effects on a busy machine).
    const PING: usize = usize::MAX;
    const EMPTY: usize = usize::MAX - 1;
    let mut order: Vec<usize> = (0..policies.len()).collect();
    if redis.is_some() {
        order.extend([PING, EMPTY]);
    }
    let mut rng = rand::rng();
    for round in 0..options.warmup + options.iterations {
        let timed = round >= options.warmup;
        order.shuffle(&mut rng);
        for &probe in &order {
            let start = Instant::now();
            match (probe, redis) {
                (PING, Some(redis)) => {
                    redis.ping().await?;
                    if timed {
                        ping.push(start.elapsed());
                    }
                }
                (EMPTY, Some(redis)) => {
                    let mut con = redis.connection();
                    let _: Vec<i64> = empty_script.key("bench").invoke_async(&mut con).await?;
                    if timed {
                        empty.push(start.elapsed());
                    }
                }
                (i, _) => {
                    let (key, policy) = &policies[i];
                    let decision = store.check(policy, key).await?;
                    if timed {
                        samples[i].push(start.elapsed());
                        admitted[i] += usize::from(decision.allowed);
                    }
                }
            }
        }
    }
    let checks = policies
        .iter()
        .zip(samples)
        .zip(admitted)
        .map(|(((_, p), s), admitted)| CheckCost {
            algorithm: p.algorithm(),
            round_trips: p.algorithm().round_trips(),
            latency: Latency::of(s),
            admitted,
        })
        .collect();
    Ok(CheckCosts {
        ping: redis.map(|_| Latency::of(ping)),
        empty_script: redis.map(|_| Latency::of(empty)),
        checks,
    })
}

/// `MEMORY USAGE` of one client's key per algorithm, filled to each limit
/// (window one hour, so nothing expires or refills noticeably while filling).
pub async fn memory_costs(
    redis: &RedisStore,
    limits: &[u64],
) -> Result<Vec<MemoryCost>, StoreError> {
    let keys = fresh_keys();
    let store = Store::Redis(redis.clone());
    let mut out = Vec::new();
    for &limit in limits {
        for algorithm in Algorithm::ALL {
            let policy = Policy::new(algorithm, limit, Duration::from_secs(3600))
                .map_err(|_| StoreError::bad_reply())?;
            let base = keys.key(&format!("mem{limit}"), algorithm);
            for _ in 0..limit {
                store.check(&policy, &base).await?;
            }
            let bytes = redis
                .memory_usage(&redis.storage_key(&policy, &base))
                .await?
                .unwrap_or(0);
            out.push(MemoryCost {
                algorithm,
                limit,
                bytes,
            });
        }
    }
    Ok(out)
}

impl fmt::Display for BenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "store: {}; {} sequential checks per algorithm",
            self.store, self.iterations
        )?;
        writeln!(
            f,
            "{:<18} {:>11} {:>10} {:>10} {:>9} {:>9}",
            "check", "round trips", "p50 µs", "p99 µs", "p50/PING", "admitted"
        )?;
        if let Some(ping) = self.ping {
            writeln!(
                f,
                "{:<18} {:>11} {:>10.1} {:>10.1} {:>9} {:>9}",
                "PING (raw)", 1, ping.p50_us, ping.p99_us, "1.00x", "-"
            )?;
        }
        if let (Some(empty), Some(ping)) = (self.empty_script, self.ping) {
            writeln!(
                f,
                "{:<18} {:>11} {:>10.1} {:>10.1} {:>8.2}x {:>9}",
                "empty Lua script",
                1,
                empty.p50_us,
                empty.p99_us,
                empty.p50_us / ping.p50_us,
                "-"
            )?;
        }
        for c in &self.checks {
            let ratio = self.ping.map_or("-".to_owned(), |p| {
                format!("{:.2}x", c.latency.p50_us / p.p50_us)
            });
            writeln!(
                f,
                "{:<18} {:>11} {:>10.1} {:>10.1} {:>9} {:>9}",
                c.algorithm.name(),
                if self.ping.is_some() {
                    c.round_trips.to_string()
                } else {
                    "-".to_owned()
                },
                c.latency.p50_us,
                c.latency.p99_us,
                ratio,
                c.admitted
            )?;
        }
        if !self.memory.is_empty() {
            writeln!(
                f,
                "\nmemory per client key (MEMORY USAGE, key filled to the limit)"
            )?;
            for m in &self.memory {
                writeln!(
                    f,
                    "{:<18} limit {:>6}: {:>8} bytes",
                    m.algorithm.name(),
                    m.limit,
                    m.bytes
                )?;
            }
        }
        Ok(())
    }
}
