//! Under a bounded load burst over several replicas sharing one Redis, the
//! per-client `/stats` tell the truth: summed over the replicas, each client's
//! counters equal what its requests were answered (200 checked, 429, 200
//! unchecked, 503), and received = allowed + rejected + failed_open +
//! unavailable. With a healthy store and with a frozen one (`SIGSTOP`),
//! including requests whose client hangs up before the check's deadline.

mod common;

use std::io::ErrorKind;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{Reply, client, fresh_keys, get_as};
use demo_server::redis_process::RedisServer;
use demo_server::stats::ClientStats;
use demo_server::{Algorithm, FailMode, Policy, RunningServer, ServerConfig, Store, spawn};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::task::JoinSet;

const REQUESTS: usize = 200;
const CONCURRENCY: usize = 20;
const CLIENTS: [&str; 4] = ["ann", "bob", "cyd", "dee"];
/// Every burst ends well within this, or the test fails.
const BURST_BOUND: Duration = Duration::from_secs(60);
/// Quota per client, shared by the replicas; no refill during the test.
const CAPACITY: u64 = 30;
/// Requests whose client hangs up before the answer (frozen store only).
const QUITTERS: usize = 20;

fn policy() -> Policy {
    Policy::new(
        Algorithm::TokenBucket,
        CAPACITY,
        Duration::from_secs(86_400),
    )
    .unwrap()
}

async fn spawn_replicas(
    redis: &RedisServer,
    modes: &[FailMode],
    deadline: Duration,
) -> Vec<RunningServer> {
    let keys = fresh_keys();
    let mut replicas = Vec::new();
    for &fail in modes {
        let config = ServerConfig::new(policy())
            .keys(keys.clone())
            .fail(fail)
            .deadline(deadline);
        let store = Store::redis(&redis.url()).await.unwrap();
        replicas.push(spawn(config, store).await.unwrap());
    }
    replicas
}

/// The counter a reply belongs in, read from what the client saw.
fn tally(seen: &mut ClientStats, reply: &Reply) {
    seen.received += 1;
    match reply.status.as_u16() {
        200 if reply.headers.contains_key("ratelimit") => seen.allowed += 1,
        200 => {
            assert_eq!(reply.json()["limiter"], "unavailable");
            seen.failed_open += 1;
        }
        429 => seen.rejected += 1,
        503 => seen.unavailable += 1,
        other => panic!("unexpected status {other}"),
    }
}

/// `REQUESTS` requests, `CONCURRENCY` at a time; request `i` is client
/// `i % 4` on replica `(i / 4) % replicas`, so every client meets every
/// replica. What each client saw, by client.
async fn burst(replicas: &[RunningServer]) -> Vec<ClientStats> {
    let started = Instant::now();
    let urls: Arc<Vec<String>> = Arc::new(replicas.iter().map(|r| r.url()).collect());
    let next = Arc::new(AtomicUsize::new(0));
    let mut workers = JoinSet::new();
    for _ in 0..CONCURRENCY {
        let (urls, next, client) = (urls.clone(), next.clone(), client());
        workers.spawn(async move {
            let mut seen = vec![ClientStats::default(); CLIENTS.len()];
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= REQUESTS {
                    return seen;
                }
                let who = i % CLIENTS.len();
                let url = &urls[(i / CLIENTS.len()) % urls.len()];
                let reply = get_as(&client, url, CLIENTS[who].as_bytes()).await;
                tally(&mut seen[who], &reply);
            }
        });
    }
    let all = tokio::time::timeout(BURST_BOUND, workers.join_all())
        .await
        .expect("the burst ends in time");
    eprintln!(
        "{REQUESTS} requests, {CONCURRENCY} at a time, over {} replicas: {:.0} ms",
        replicas.len(),
        started.elapsed().as_secs_f64() * 1000.0
    );
    let mut seen = vec![ClientStats::default(); CLIENTS.len()];
    for worker in all {
        for (total, part) in seen.iter_mut().zip(worker) {
            add(total, &part);
        }
    }
    seen
}

fn add(total: &mut ClientStats, part: &ClientStats) {
    total.received += part.received;
    total.allowed += part.allowed;
    total.rejected += part.rejected;
    total.failed_open += part.failed_open;
    total.unavailable += part.unavailable;
}

fn adds_up(s: &ClientStats) -> bool {
    s.received == s.allowed + s.rejected + s.failed_open + s.unavailable
}

/// `GET /stats?client=ID` of every replica, each checked to add up, summed.
async fn reported(replicas: &[RunningServer], id: &str) -> ClientStats {
    let client = client();
    let mut total = ClientStats::default();
    for replica in replicas {
        let bytes = client
            .get(format!("{}/stats?client={id}", replica.url()))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let body: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let field = |name: &str| body["stats"][name].as_u64().unwrap();
        let stats = ClientStats {
            received: field("received"),
            allowed: field("allowed"),
            rejected: field("rejected"),
            failed_open: field("failed_open"),
            unavailable: field("unavailable"),
        };
        assert!(adds_up(&stats), "{id} on {}: {stats:?}", replica.url());
        add(&mut total, &stats);
    }
    total
}

async fn assert_stats_match(replicas: &[RunningServer], seen: &[ClientStats]) {
    for (id, seen) in CLIENTS.iter().zip(seen) {
        assert_eq!(seen.received, (REQUESTS / CLIENTS.len()) as u64);
        let reported = reported(replicas, id).await;
        assert_eq!(&reported, seen, "{id}: /stats vs what the client saw");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_add_up_with_a_healthy_store() {
    let redis = RedisServer::start().unwrap();
    // A deadline far above a healthy check, so every check is answered by Redis.
    let modes = [FailMode::Open, FailMode::Closed, FailMode::Open];
    let replicas = spawn_replicas(&redis, &modes, Duration::from_secs(2)).await;
    let seen = burst(&replicas).await;
    assert_stats_match(&replicas, &seen).await;
    for (id, seen) in CLIENTS.iter().zip(&seen) {
        // 50 requests per client at a shared quota of 30: exactly 30 admitted.
        assert_eq!(
            (
                seen.allowed,
                seen.rejected,
                seen.failed_open,
                seen.unavailable
            ),
            (CAPACITY, 50 - CAPACITY, 0, 0),
            "{id}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_add_up_with_a_frozen_store() {
    let redis = RedisServer::start().unwrap();
    let modes = [
        FailMode::Open,
        FailMode::Closed,
        FailMode::Open,
        FailMode::Closed,
    ];
    let deadline = Duration::from_millis(50);
    let replicas = spawn_replicas(&redis, &modes, deadline).await;
    let slow = spawn_replicas(
        &redis,
        &[FailMode::Open, FailMode::Closed],
        Duration::from_secs(1),
    )
    .await;
    let paused = redis.pause().unwrap();
    let seen = burst(&replicas).await;
    // Clients that send a whole request and hang up mid-check still count,
    // once each: on the two `slow` replicas, whose checks wait up to 1 s, each
    // client hangs up after 200 ms (raw sockets: the request surely arrives).
    let mut quitters = JoinSet::new();
    for i in 0..QUITTERS {
        let addr = slow[i % slow.len()].addr();
        quitters.spawn(async move {
            let mut socket = TcpStream::connect(addr).await.unwrap();
            let request = "GET / HTTP/1.1\r\nhost: x\r\nx-client-id: quitter\r\n\r\n";
            socket.write_all(request.as_bytes()).await.unwrap();
            tokio::time::sleep(Duration::from_millis(200)).await;
            // Nothing to read yet: the client leaves before its answer.
            let mut byte = [0u8; 1];
            matches!(socket.try_read(&mut byte), Err(e) if e.kind() == ErrorKind::WouldBlock)
        });
    }
    let unanswered = quitters.join_all().await.into_iter().filter(|&u| u).count();
    assert!(unanswered > 0, "some clients hung up before their answer");
    // Let the abandoned checks reach their deadline (bounded wait).
    let mut quitter = reported(&slow, "quitter").await;
    for _ in 0..150 {
        if quitter.received == QUITTERS as u64 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        quitter = reported(&slow, "quitter").await;
    }
    assert!(
        redis.is_stopped(),
        "every answer came while Redis was frozen"
    );
    assert_stats_match(&replicas, &seen).await;
    paused.resume().unwrap();
    eprintln!(
        "{unanswered} of {QUITTERS} clients hung up before their answer; /stats: {quitter:?}"
    );
    assert_eq!(quitter.received, QUITTERS as u64, "{quitter:?}");
    let half = QUITTERS as u64 / 2;
    assert_eq!((quitter.failed_open, quitter.unavailable), (half, half));
    for (id, seen) in CLIENTS.iter().zip(&seen) {
        // 50 requests per client, 25 on the fail-open replicas (0, 2), 25 on
        // the fail-closed ones (1, 3); nothing checked while Redis is frozen.
        assert_eq!(
            (
                seen.allowed,
                seen.rejected,
                seen.failed_open,
                seen.unavailable
            ),
            (0, 0, 25, 25),
            "{id}"
        );
    }
}
