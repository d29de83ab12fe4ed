//! 50 concurrent requests at a bucket of 20, spread over 3 replicas sharing
//! one store: every atomic algorithm admits exactly 20; the racy bucket with a
//! gap between read and write admits more.

mod common;

use std::time::Duration;

use common::{Backend, client, fresh_keys, get_as};
use demo_server::{Algorithm, Policy, ServerConfig, spawn};
use tokio::task::JoinSet;

const CAPACITY: u64 = 20;
const REQUESTS: usize = 50;
const REPLICAS: usize = 3;
/// One day: no refill and no window edge during the burst (edges are avoided below).
const WINDOW: Duration = Duration::from_secs(86_400);

/// Admitted count of a burst of `REQUESTS` at `policy` over `REPLICAS` replicas.
async fn admitted(backend: &Backend, policy: Policy) -> (usize, u64) {
    let keys = fresh_keys();
    let mut replicas = Vec::new();
    for _ in 0..REPLICAS {
        // A generous deadline: this test is about atomicity, and a check
        // failing open on a loaded machine would be counted as neither.
        let config = ServerConfig::new(policy.clone())
            .keys(keys.clone())
            .deadline(Duration::from_secs(5));
        replicas.push(spawn(config, backend.store().await).await.unwrap());
    }
    // Stay clear of a day edge for the window algorithms.
    let store = backend.store().await;
    let to_edge =
        WINDOW.as_millis() as u64 - store.now_ms().await.unwrap() % WINDOW.as_millis() as u64;
    if to_edge < 10_000 {
        tokio::time::sleep(Duration::from_millis(to_edge + 100)).await;
    }
    let client = client();
    let mut burst = JoinSet::new();
    for i in 0..REQUESTS {
        let (client, url) = (client.clone(), replicas[i % REPLICAS].url());
        burst.spawn(async move { get_as(&client, &url, b"burst").await.status });
    }
    let statuses = burst.join_all().await;
    let ok = statuses.iter().filter(|s| s.as_u16() == 200).count();
    let rejected = statuses.iter().filter(|s| s.as_u16() == 429).count();
    assert_eq!(ok + rejected, REQUESTS, "only 200 or 429: {statuses:?}");
    // /stats of the replicas add up to the same story.
    let total: u64 = replicas
        .iter()
        .map(|r| r.state().stats().total().allowed)
        .sum();
    let rejected_total: u64 = replicas
        .iter()
        .map(|r| r.state().stats().total().rejected)
        .sum();
    assert_eq!(total + rejected_total, REQUESTS as u64);
    (ok, total)
}

async fn atomic_algorithms_admit_exactly_the_capacity(backend: Backend) {
    for algorithm in Algorithm::ALL
        .into_iter()
        .filter(|a| a.is_atomic() && a.limits_rate())
    {
        let policy = Policy::new(algorithm, CAPACITY, WINDOW).unwrap();
        let (ok, counted) = admitted(&backend, policy).await;
        assert_eq!(ok, CAPACITY as usize, "{algorithm} on {}", backend.name());
        assert_eq!(counted, CAPACITY);
    }
}

async fn racy_bucket_with_a_gap_over_admits(backend: Backend) {
    let policy = Policy::new(Algorithm::RacyBucket, CAPACITY, WINDOW)
        .unwrap()
        .with_racy_gap(Duration::from_millis(20));
    let (ok, _) = admitted(&backend, policy).await;
    eprintln!("racy-bucket admitted {ok}/{REQUESTS} on {}", backend.name());
    assert!(
        ok > CAPACITY as usize,
        "racy-bucket admitted {ok} on {}",
        backend.name()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_atomic_algorithms_admit_exactly_the_capacity() {
    atomic_algorithms_admit_exactly_the_capacity(Backend::redis()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_atomic_algorithms_admit_exactly_the_capacity() {
    atomic_algorithms_admit_exactly_the_capacity(Backend::memory()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_racy_bucket_over_admits() {
    racy_bucket_with_a_gap_over_admits(Backend::redis()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_racy_bucket_over_admits() {
    racy_bucket_with_a_gap_over_admits(Backend::memory()).await;
}
