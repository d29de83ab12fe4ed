//! Redis killed (the harness's own child, by its PID) and restarted empty on
//! the same port under three replicas per Lua algorithm, none of them
//! restarted: each replica reloads the script on `NOSCRIPT` by itself, the
//! counts start fresh (the first checks after the restart see a full quota),
//! and the limit holds again exactly as before the restart.

mod common;

use std::time::Duration;

use common::{Reply, client, fresh_keys, get_as};
use demo_server::algorithms::{
    FIXED_WINDOW_LUA, SLIDING_LOG_LUA, SLIDING_WINDOW_LUA, TOKEN_BUCKET_LUA,
};
use demo_server::redis_process::RedisServer;
use demo_server::{Algorithm, FailMode, Policy, RunningServer, ServerConfig, Store, spawn};

const LIMIT: u64 = 5;
/// A day: no refill and (edges avoided below) no new window during the test.
const WINDOW: Duration = Duration::from_secs(86_400);
/// Requests per round, round-robin over the replicas: `LIMIT` pass, 2 are refused.
const ROUND: usize = 7;
const MODES: [FailMode; 3] = [FailMode::Open, FailMode::Closed, FailMode::Open];

const SCRIPTED: [(Algorithm, &str); 4] = [
    (Algorithm::TokenBucket, TOKEN_BUCKET_LUA),
    (Algorithm::FixedWindowLua, FIXED_WINDOW_LUA),
    (Algorithm::SlidingLog, SLIDING_LOG_LUA),
    (Algorithm::SlidingWindow, SLIDING_WINDOW_LUA),
];

async fn raw(url: &str) -> redis::aio::MultiplexedConnection {
    redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap()
}

/// Which of the four scripts the Redis at `url` has cached.
async fn cached(url: &str) -> Vec<bool> {
    let mut command = redis::cmd("SCRIPT");
    command.arg("EXISTS");
    for (_, source) in SCRIPTED {
        command.arg(redis::Script::new(source).get_hash());
    }
    command.query_async(&mut raw(url).await).await.unwrap()
}

/// A checked answer: a 200 with rate-limit headers or a 429 (not a fail-mode answer).
fn checked(reply: &Reply) -> bool {
    reply.headers.contains_key("ratelimit") && matches!(reply.status.as_u16(), 200 | 429)
}

/// `(admitted, refused)` of `ROUND` requests round-robin over `replicas`.
async fn round(client: &reqwest::Client, replicas: &[RunningServer]) -> (u64, u64) {
    let (mut admitted, mut refused) = (0, 0);
    for i in 0..ROUND {
        let reply = get_as(client, &replicas[i % replicas.len()].url(), b"restart").await;
        assert!(checked(&reply), "{:?}", reply.status);
        match reply.status.as_u16() {
            200 => admitted += 1,
            _ => refused += 1,
        }
    }
    (admitted, refused)
}

/// Poll `replica` (at most 200 tries, 25 ms apart) until a check reaches the
/// store again: the first checked reply and how many fail-mode answers came before.
async fn first_checked(
    client: &reqwest::Client,
    replica: &RunningServer,
) -> Option<(Reply, usize)> {
    for failed in 0..200 {
        let reply = get_as(client, &replica.url(), b"restart").await;
        if checked(&reply) {
            return Some((reply, failed));
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    None
}

/// Wait past the next day edge if it is less than a minute away.
async fn clear_of_window_edge(url: &str) {
    let store = Store::redis(url).await.unwrap();
    let window_ms = WINDOW.as_millis() as u64;
    let to_edge = window_ms - store.now_ms().await.unwrap() % window_ms;
    if to_edge < 60_000 {
        tokio::time::sleep(Duration::from_millis(to_edge + 100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_restarted_empty_reloads_scripts_and_starts_counts_fresh() {
    let mut redis = RedisServer::start().unwrap();
    let (port, url) = (redis.port(), redis.url());
    clear_of_window_edge(&url).await;
    let keys = fresh_keys();
    let mut groups = Vec::new();
    for (algorithm, _) in SCRIPTED {
        let mut replicas = Vec::new();
        for fail in MODES {
            // A deadline far above a healthy check: no check times out after
            // reaching Redis (which would take a unit unseen).
            let config = ServerConfig::new(Policy::new(algorithm, LIMIT, WINDOW).unwrap())
                .keys(keys.clone())
                .fail(fail)
                .deadline(Duration::from_secs(2));
            replicas.push(
                spawn(config, Store::redis(&url).await.unwrap())
                    .await
                    .unwrap(),
            );
        }
        groups.push((algorithm, replicas));
    }
    let client = client();
    for (algorithm, replicas) in &groups {
        let (admitted, refused) = round(&client, replicas).await;
        assert_eq!((admitted, refused), (LIMIT, 2), "{algorithm:?} before");
    }
    assert_eq!(cached(&url).await, [true; 4]);

    let pid = redis.pid();
    redis.kill();
    let restarted = RedisServer::start_on_port(port).unwrap();
    assert_ne!(restarted.pid(), pid);
    let keys_left: u64 = redis::cmd("DBSIZE")
        .query_async(&mut raw(&url).await)
        .await
        .unwrap();
    assert_eq!(keys_left, 0, "restarted empty");
    assert_eq!(cached(&url).await, [false; 4], "script cache empty");

    for (algorithm, replicas) in &groups {
        // Each replica's first check after the restart takes one unit of a
        // fresh, shared quota: remaining 4, 3, 2.
        for (taken, replica) in replicas.iter().enumerate() {
            let (reply, failed) = first_checked(&client, replica)
                .await
                .unwrap_or_else(|| panic!("{algorithm:?}: replica {taken} recovers"));
            eprintln!(
                "{algorithm:?}, replica {taken} ({:?}): checked again after {failed} fail-mode answers",
                MODES[taken]
            );
            assert_eq!(reply.status, 200, "{algorithm:?}: fresh counts");
            assert_eq!(
                reply.json()["remaining"],
                LIMIT - 1 - taken as u64,
                "{algorithm:?}: replica {taken}"
            );
        }
        // Then the limit holds again: 2 more pass, the rest are refused.
        let (admitted, refused) = round(&client, replicas).await;
        assert_eq!(
            (admitted, refused),
            (LIMIT - replicas.len() as u64, ROUND as u64 - 2),
            "{algorithm:?} after"
        );
        for replica in replicas {
            let stats = replica.state().stats().total();
            let outcomes = stats.allowed + stats.rejected + stats.failed_open + stats.unavailable;
            assert_eq!(stats.received, outcomes, "{algorithm:?}: {stats:?}");
        }
    }
    assert_eq!(cached(&url).await, [true; 4], "every script reloaded");
}
