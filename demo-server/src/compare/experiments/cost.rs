//! Experiment 5: what one check costs per algorithm, next to a raw `PING`,
//! with the server's bench at [`ITERATIONS`] rounds (the original experiment's 10,000 take
//! too long for a two-minute comparison; `demo-server bench` runs them).

use serde::Serialize;

use crate::bench::{self, BenchOptions, CheckCost, CheckCosts, Latency};

use super::super::CompareError;
use super::Lab;

/// Timed rounds (each: one PING and one check of every algorithm).
pub const ITERATIONS: usize = 3000;

/// Latency per algorithm.
#[derive(Debug, Clone, Serialize)]
pub struct CostResult {
    /// Timed rounds.
    pub iterations: usize,
    /// Raw `PING` (Redis only).
    pub ping: Option<Latency>,
    /// `EVALSHA` of a script that only returns (Redis only): the floor of a Lua check.
    pub empty_script: Option<Latency>,
    /// Per algorithm.
    pub checks: Vec<CheckCost>,
}

/// Run the bench's latency part.
pub async fn run(lab: &Lab) -> Result<CostResult, CompareError> {
    let store = lab.store.connect().await?;
    let options = BenchOptions {
        iterations: ITERATIONS,
        warmup: 300,
        memory_limits: Vec::new(),
        ..BenchOptions::default()
    };
    let CheckCosts {
        ping,
        empty_script,
        checks,
    } = bench::check_costs(&store, &options).await?;
    for c in &checks {
        lab.progress(format!(
            "cost: {}: p50 {:.1} µs, p99 {:.1} µs, {} round trip(s)",
            c.algorithm, c.latency.p50_us, c.latency.p99_us, c.round_trips
        ));
    }
    Ok(CostResult {
        iterations: ITERATIONS,
        ping,
        empty_script,
        checks,
    })
}
