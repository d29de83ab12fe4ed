//! Experiment 1: 50 concurrent requests at a bucket of 20, the read-then-write
//! `racy-bucket` against the one-script token bucket, three runs each.
//!
//! The bucket refills 20 per hour rather than the original experiment's 20/s, so that only the
//! race, never a refill during the burst, can admit more than 20. The racy
//! bucket sleeps [`RACY_GAP`] between its read and its write: on loopback the
//! window between two round trips is too short to show the race reliably (the
//! original run admitted 20 by luck, the next two 50).

use std::time::Duration;

use serde::Serialize;
use tokio::task::JoinSet;

use crate::{Algorithm, Policy};

use super::super::CompareError;
use super::Lab;

/// Requests per burst (the original experiment's 50 goroutines).
pub const REQUESTS: usize = 50;
/// Bucket capacity (the original experiment's 20).
pub const CAPACITY: u64 = 20;
/// Runs per algorithm (the original experiment's three).
pub const RUNS: usize = 3;
/// Sleep between the racy bucket's read and write.
pub const RACY_GAP: Duration = Duration::from_millis(10);

/// Admitted counts of one algorithm.
#[derive(Debug, Clone, Serialize)]
pub struct RaceRow {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Round trips per check.
    pub round_trips: u32,
    /// Requests admitted in each run, out of [`REQUESTS`].
    pub admitted: Vec<usize>,
    /// Requests per run.
    pub requests: usize,
    /// Bucket capacity.
    pub capacity: u64,
}

/// Run the experiment for the racy and the atomic bucket.
pub async fn run(lab: &Lab) -> Result<Vec<RaceRow>, CompareError> {
    let mut rows = Vec::new();
    for algorithm in [Algorithm::RacyBucket, Algorithm::TokenBucket] {
        let policy =
            Policy::bucket(algorithm, CAPACITY, CAPACITY as f64 / 3600.0)?.with_racy_gap(RACY_GAP);
        let replicas = lab.replicas(&policy, 1).await?;
        let url = replicas[0].url();
        let mut admitted = Vec::new();
        for run in 0..RUNS {
            let id = lab.client_id(&format!("race-{algorithm}-{run}"));
            admitted.push(burst(&url, &id).await?);
        }
        lab.progress(format!(
            "race: {algorithm}: admitted {admitted:?} of {REQUESTS} at capacity {CAPACITY}"
        ));
        rows.push(RaceRow {
            algorithm,
            round_trips: algorithm.round_trips(),
            admitted,
            requests: REQUESTS,
            capacity: CAPACITY,
        });
    }
    Ok(rows)
}

/// [`REQUESTS`] concurrent GETs as `client_id`; how many were answered 200.
async fn burst(url: &str, client_id: &str) -> Result<usize, CompareError> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| CompareError::setup(format!("http client: {e}")))?;
    let mut set = JoinSet::new();
    for _ in 0..REQUESTS {
        let request = http.get(url).header("x-client-id", client_id);
        set.spawn(async move { request.send().await.map(|r| r.status().as_u16()) });
    }
    let mut ok = 0;
    for result in set.join_all().await {
        match result {
            Ok(200) => ok += 1,
            Ok(429) => {}
            Ok(status) => return Err(CompareError::setup(format!("race: unexpected {status}"))),
            Err(e) => return Err(CompareError::setup(format!("race: {e}"))),
        }
    }
    Ok(ok)
}
