//! The store failing: Redis killed mid-run (fail open keeps serving, fail
//! closed answers 503, never 429), Redis restarted empty on the same port
//! (script cache gone: the server reloads its scripts on NOSCRIPT, no
//! restart), and Redis too slow for the per-check deadline (`CLIENT PAUSE`).

mod common;

use std::time::Duration;

use common::{Reply, client, fresh_keys, get_as};
use demo_server::algorithms::TOKEN_BUCKET_LUA;
use demo_server::limiter::{Limiter, Verdict};
use demo_server::problem::{LIMITER_UNAVAILABLE, PROBLEM_JSON};
use demo_server::redis_process::RedisServer;
use demo_server::{Algorithm, FailMode, Policy, RunningServer, ServerConfig, Store, spawn};
use tokio::task::JoinSet;

/// Far more than the test sends: every checked request is a 200.
fn config(fail: FailMode) -> ServerConfig {
    let policy = Policy::bucket(Algorithm::TokenBucket, 1000, 1000.0).unwrap();
    ServerConfig::new(policy).fail(fail).keys(fresh_keys())
}

async fn replicas(redis: &RedisServer) -> (RunningServer, RunningServer) {
    let open = spawn(
        config(FailMode::Open),
        Store::redis(&redis.url()).await.unwrap(),
    );
    let closed = spawn(
        config(FailMode::Closed),
        Store::redis(&redis.url()).await.unwrap(),
    );
    (open.await.unwrap(), closed.await.unwrap())
}

fn checked(reply: &Reply) -> bool {
    reply.status == 200 && reply.headers.contains_key("ratelimit")
}

fn assert_served_unchecked(reply: &Reply) {
    assert_eq!(reply.status, 200, "fail open serves");
    assert!(
        !reply.headers.contains_key("ratelimit"),
        "no quota to report"
    );
    assert_eq!(reply.json()["limiter"], "unavailable");
}

fn assert_unavailable(reply: &Reply) {
    assert_eq!(reply.status, 503, "fail closed answers 503, never 429");
    assert_eq!(reply.headers["retry-after"], "1");
    assert_eq!(reply.headers["content-type"], PROBLEM_JSON);
    let body = reply.json();
    assert_eq!(body["type"], LIMITER_UNAVAILABLE);
    assert_eq!(body["status"], 503);
    assert_eq!(body["retry_after_ms"], 1000);
}

async fn script_cached(url: &str) -> bool {
    let mut raw = redis::Client::open(url)
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let sha = redis::Script::new(TOKEN_BUCKET_LUA).get_hash().to_owned();
    let exists: Vec<bool> = redis::cmd("SCRIPT")
        .arg("EXISTS")
        .arg(sha)
        .query_async(&mut raw)
        .await
        .unwrap();
    exists[0]
}

/// Poll (at most 200 tries, 25 ms apart) until a checked 200 comes back.
async fn recovers(client: &reqwest::Client, server: &RunningServer) -> bool {
    for _ in 0..200 {
        if checked(&get_as(client, &server.url(), b"outage").await) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_then_restarted_empty() {
    let mut redis = RedisServer::start().unwrap();
    let (port, url) = (redis.port(), redis.url());
    let (open, closed) = replicas(&redis).await;
    let client = client();
    for server in [&open, &closed] {
        assert!(checked(&get_as(&client, &server.url(), b"outage").await));
    }
    assert!(script_cached(&url).await);

    redis.kill();
    for _ in 0..5 {
        assert_served_unchecked(&get_as(&client, &open.url(), b"outage").await);
        assert_unavailable(&get_as(&client, &closed.url(), b"outage").await);
    }
    let open_stats = open.state().stats().client("outage").unwrap();
    assert_eq!((open_stats.allowed, open_stats.failed_open), (1, 5));
    let closed_stats = closed.state().stats().client("outage").unwrap();
    assert_eq!(
        (
            closed_stats.allowed,
            closed_stats.unavailable,
            closed_stats.rejected
        ),
        (1, 5, 0)
    );

    let _restarted = RedisServer::start_on_port(port).unwrap();
    assert!(
        !script_cached(&url).await,
        "a restarted Redis has an empty script cache"
    );
    assert!(recovers(&client, &open).await, "fail-open replica recovers");
    assert!(
        recovers(&client, &closed).await,
        "fail-closed replica recovers"
    );
    assert!(
        script_cached(&url).await,
        "the server reloaded its script after NOSCRIPT"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_slower_than_the_deadline() {
    let redis = RedisServer::start().unwrap();
    let (open, closed) = replicas(&redis).await;
    let client = client();
    for server in [&open, &closed] {
        assert!(checked(&get_as(&client, &server.url(), b"slow").await));
    }
    // Two checks in flight at most: the rest fail at once instead of queueing.
    let bounded = Limiter::new(
        Store::redis(&redis.url()).await.unwrap(),
        Policy::bucket(Algorithm::TokenBucket, 1000, 1000.0).unwrap(),
    )
    .fail_mode(FailMode::Closed)
    .max_in_flight(2);
    // Redis holds every command of every client for a second (confirmed
    // before the requests are sent), far beyond the 150 ms deadline.
    let mut raw = redis::Client::open(redis.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(1000)
        .arg("ALL")
        .query_async(&mut raw)
        .await
        .unwrap();
    let (open_url, closed_url) = (open.url(), closed.url());
    let (open_reply, closed_reply) = tokio::join!(
        get_as(&client, &open_url, b"slow"),
        get_as(&client, &closed_url, b"slow")
    );
    assert_served_unchecked(&open_reply);
    assert_unavailable(&closed_reply);
    let mut checks = JoinSet::new();
    for _ in 0..10 {
        let bounded = bounded.clone();
        checks.spawn(async move { bounded.check("bounded").await });
    }
    let (mut timed_out, mut overloaded) = (0, 0);
    for verdict in checks.join_all().await {
        match verdict {
            Verdict::Unavailable(e) if e.is_timeout() => timed_out += 1,
            Verdict::Unavailable(e) if e.is_overloaded() => overloaded += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!((timed_out, overloaded), (2, 8));
    assert!(recovers(&client, &open).await);
    assert!(recovers(&client, &closed).await);
}
