//! The fleet store's cost: its two calls (reserve a slot, publish a lesson)
//! beside a raw `PING`, interleaved on one connection to the same Redis in
//! the same run, [`ROUNDS`] rounds in a shuffled order.

use std::time::{Duration, Instant};

use courteous::fleet::{Lesson, RedisFleet};
use http::{HeaderMap, HeaderValue, StatusCode};
use rand::seq::SliceRandom;
use serde::Serialize;

use super::Lab;
use crate::bench::Latency;

/// Timed rounds (each: one PING, one reservation, one publish).
pub const ROUNDS: usize = 2000;
const WARMUP: usize = 200;

/// Latency of the fleet store's calls next to `PING`.
#[derive(Debug, Clone, Serialize)]
pub struct FleetCost {
    /// Timed rounds.
    pub rounds: usize,
    /// Raw `PING` through the store's connection.
    pub ping: Latency,
    /// `reserve`: the one round trip before each send.
    pub reserve: Latency,
    /// `publish`: after a response that taught something.
    pub publish: Latency,
}

/// Measure on the Redis at `url`; `None` (said on stderr) if it fails.
pub async fn measure(lab: &Lab, url: &str) -> Option<FleetCost> {
    match run(url).await {
        Ok(cost) => {
            lab.progress(format!(
                "herd: fleet store cost, {ROUNDS} rounds: PING p50 {:.1} µs p99 {:.1} µs; reserve p50 {:.1} µs p99 {:.1} µs; publish p50 {:.1} µs p99 {:.1} µs",
                cost.ping.p50_us,
                cost.ping.p99_us,
                cost.reserve.p50_us,
                cost.reserve.p99_us,
                cost.publish.p50_us,
                cost.publish.p99_us
            ));
            Some(cost)
        }
        Err(e) => {
            lab.progress(format!("herd: fleet store cost not measured: {e}"));
            None
        }
    }
}

async fn run(url: &str) -> Result<FleetCost, courteous::fleet::FleetError> {
    // A long deadline: a slow call is a sample here, not a fallback.
    let fleet = RedisFleet::builder(url)
        .key_prefix(format!("cost{:08x}", rand::random::<u32>()))
        .deadline(Duration::from_secs(2))
        .connect()
        .await?;
    let scope = "http://127.0.0.1/cost";
    let lesson = Lesson::from_response(false, &reading(), None);
    let mut samples = [Vec::new(), Vec::new(), Vec::new()];
    let mut order = [0usize, 1, 2];
    let mut rng = rand::rng();
    for round in 0..WARMUP + ROUNDS {
        order.shuffle(&mut rng);
        for &probe in &order {
            let start = Instant::now();
            match probe {
                0 => fleet.ping().await?,
                1 => {
                    fleet.reserve(scope).await?;
                }
                _ => {
                    fleet.publish(scope, &lesson).await?;
                }
            }
            if round >= WARMUP {
                samples[probe].push(start.elapsed());
            }
        }
    }
    let [ping, reserve, publish] = samples.map(Latency::of);
    Ok(FleetCost {
        rounds: ROUNDS,
        ping,
        reserve,
        publish,
    })
}

/// A quota of a million a second, so reservations never queue far ahead.
fn reading() -> courteous::signal::Signal {
    let mut headers = HeaderMap::new();
    headers.insert(
        "ratelimit-policy",
        HeaderValue::from_static("\"q\";q=1000000;w=1"),
    );
    headers.insert("ratelimit", HeaderValue::from_static("\"q\";r=999999;t=1"));
    courteous::signal::parse(StatusCode::OK, &headers, None)
}
