//! N requests just before a window edge and N just after, limit N per window.
//!
//! Expected (seeds/000 §2): `fixed-window` admits 2N, `sliding-log` N, and
//! `sliding-window` at most N + ceil(N · f), where f is how far into the new
//! window the last request of the second burst landed (the previous window
//! still weighs 1 − f). Both bursts are placed with the store's clock (Redis
//! `TIME` or the embedded store's) and each decision reports the store time
//! it was taken at, so the test checks the bursts really straddled the edge
//! rather than trusting sleeps; an attempt the scheduler pushed off its slot
//! is retried with fresh keys.

mod common;

use std::time::Duration;

use common::{Backend, fresh_keys};
use demo_server::{Algorithm, Decision, Policy, Store};
use tokio::task::JoinSet;

const N: u64 = 10;
const WINDOW_MS: u64 = 1000;
const BEFORE_MS: u64 = 150;
const AFTER_MS: u64 = 30;
/// The second burst must land within this much of the edge for the attempt to count.
const MAX_AFTER_MS: u64 = 300;
const ALGORITHMS: [Algorithm; 4] = [
    Algorithm::FixedWindow,
    Algorithm::FixedWindowLua,
    Algorithm::SlidingLog,
    Algorithm::SlidingWindow,
];

async fn burst(store: &Store, policy: &Policy, key: &str) -> Vec<Decision> {
    let mut set = JoinSet::new();
    for _ in 0..N {
        let (store, policy, key) = (store.clone(), policy.clone(), key.to_owned());
        set.spawn(async move { store.check(&policy, &key).await.expect("check") });
    }
    set.join_all().await
}

async fn sleep_until(store: &Store, at_ms: u64) {
    let now = store.now_ms().await.unwrap();
    tokio::time::sleep(Duration::from_millis(at_ms.saturating_sub(now))).await;
}

/// One attempt: per algorithm (admitted before, admitted after, f of the last request after).
async fn attempt(store: &Store) -> Option<Vec<(Algorithm, u64, u64, f64)>> {
    let keys = fresh_keys();
    let now = store.now_ms().await.unwrap();
    let mut edge = (now / WINDOW_MS + 1) * WINDOW_MS;
    if edge - now < BEFORE_MS + 100 {
        edge += WINDOW_MS;
    }
    let policies: Vec<_> = ALGORITHMS
        .iter()
        .map(|&a| {
            (
                Policy::new(a, N, Duration::from_millis(WINDOW_MS)).unwrap(),
                keys.key("edge", a),
            )
        })
        .collect();
    sleep_until(store, edge - BEFORE_MS).await;
    let mut before = Vec::new();
    for (policy, key) in &policies {
        before.push(burst(store, policy, key).await);
    }
    sleep_until(store, edge + AFTER_MS).await;
    let mut after = Vec::new();
    for (policy, key) in &policies {
        after.push(burst(store, policy, key).await);
    }
    let early = before.iter().flatten().any(|d| d.now_ms >= edge);
    let late = after
        .iter()
        .flatten()
        .any(|d| d.now_ms < edge || d.now_ms >= edge + MAX_AFTER_MS);
    if early || late {
        return None;
    }
    let admitted = |ds: &[Decision]| ds.iter().filter(|d| d.allowed).count() as u64;
    Some(
        policies
            .iter()
            .zip(before.iter().zip(&after))
            .map(|((p, _), (b, a))| {
                let last = a.iter().map(|d| d.now_ms).max().unwrap();
                let f = (last - edge) as f64 / WINDOW_MS as f64;
                (p.algorithm(), admitted(b), admitted(a), f)
            })
            .collect(),
    )
}

async fn edge_burst(backend: Backend) {
    let store = backend.store().await;
    for _ in 0..3 {
        let Some(results) = attempt(&store).await else {
            continue;
        };
        for (algorithm, before, after, f) in results {
            eprintln!(
                "{} {algorithm}: {before} before + {after} after (f = {f:.2})",
                backend.name()
            );
            assert_eq!(before, N, "{algorithm}: the first burst fits the limit");
            match algorithm {
                Algorithm::FixedWindow | Algorithm::FixedWindowLua => {
                    assert_eq!(after, N, "{algorithm} admits 2N across the edge")
                }
                Algorithm::SlidingLog => assert_eq!(after, 0, "sliding-log admits N in any window"),
                Algorithm::SlidingWindow => {
                    let bound = (N as f64 * f).ceil() as u64;
                    assert!(
                        after <= bound,
                        "sliding-window admitted {after} after the edge, bound {bound}"
                    );
                }
                _ => unreachable!(),
            }
        }
        return;
    }
    panic!("three attempts in a row missed the window edge; the machine is too loaded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_window_edge() {
    edge_burst(Backend::redis()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_window_edge() {
    edge_burst(Backend::memory()).await;
}
