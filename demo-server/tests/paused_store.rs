//! Redis frozen with `SIGSTOP` (the PID of the harness's own child, resumed
//! by a guard even when an assertion fails) under six replicas sharing it, one
//! per fail mode and deadline: each answers on its own deadline (fail open:
//! 200 unchecked, counted `failed_open`; fail closed: 503, counted
//! `unavailable`), `/healthz` answers 503 meanwhile and 200 after `SIGCONT`,
//! and checks work again without restarting anything.
//!
//! Every answer arrives while Redis is still frozen (checked), which is what
//! shows the deadline bounds it; the times are printed (`--nocapture`), not
//! asserted.

mod common;

use std::time::{Duration, Instant};

use common::{Reply, client, fresh_keys, get_as};
use demo_server::problem::LIMITER_UNAVAILABLE;
use demo_server::redis_process::RedisServer;
use demo_server::{Algorithm, FailMode, Policy, RunningServer, ServerConfig, Store, spawn};

const DEADLINES_MS: [u64; 3] = [50, 150, 400];
const ANSWERS: usize = 3;

struct Replica {
    server: RunningServer,
    fail: FailMode,
    deadline: Duration,
}

async fn replicas(redis: &RedisServer) -> Vec<Replica> {
    // Far more than the test sends: every checked request is a 200.
    let policy = Policy::bucket(Algorithm::TokenBucket, 1000, 1000.0).unwrap();
    let keys = fresh_keys();
    let mut replicas = Vec::new();
    for fail in [FailMode::Open, FailMode::Closed] {
        for ms in DEADLINES_MS {
            let deadline = Duration::from_millis(ms);
            let config = ServerConfig::new(policy.clone())
                .keys(keys.clone())
                .fail(fail)
                .deadline(deadline);
            let store = Store::redis(&redis.url()).await.unwrap();
            let server = spawn(config, store).await.unwrap();
            replicas.push(Replica {
                server,
                fail,
                deadline,
            });
        }
    }
    replicas
}

async fn healthz(client: &reqwest::Client, replica: &Replica) -> Reply {
    let url = format!("{}/healthz", replica.server.url());
    let response = client.get(url).send().await.unwrap();
    Reply {
        status: response.status(),
        headers: response.headers().clone(),
        body: response.bytes().await.unwrap().to_vec(),
    }
}

fn checked(reply: &Reply) -> bool {
    reply.status == 200 && reply.headers.contains_key("ratelimit")
}

fn assert_fail_mode_answer(replica: &Replica, reply: &Reply) {
    match replica.fail {
        FailMode::Open => {
            assert_eq!(reply.status, 200, "fail open serves");
            assert!(!reply.headers.contains_key("ratelimit"));
            assert_eq!(reply.json()["limiter"], "unavailable");
        }
        FailMode::Closed => {
            assert_eq!(reply.status, 503, "fail closed answers 503, never 429");
            assert_eq!(reply.json()["type"], LIMITER_UNAVAILABLE);
        }
    }
}

/// Poll (at most 200 tries, 25 ms apart) until `/healthz` says 200, then until
/// a checked 200 comes back.
async fn recovers(client: &reqwest::Client, replica: &Replica) -> bool {
    let mut healthy = false;
    for _ in 0..200 {
        if !healthy {
            healthy = healthz(client, replica).await.status == 200;
        }
        if healthy && checked(&get_as(client, &replica.server.url(), b"frozen").await) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    false
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_redis_is_answered_within_each_replicas_deadline() {
    let redis = RedisServer::start().unwrap();
    let replicas = replicas(&redis).await;
    let client = client();
    for replica in &replicas {
        let health = healthz(&client, replica).await;
        assert_eq!(health.status, 200, "{:?}", health.json());
        let body = health.json();
        assert_eq!(
            body["store"],
            format!("redis at 127.0.0.1:{}", redis.port())
        );
        assert_eq!(body["store_reachable"], true);
        let reply = get_as(&client, &replica.server.url(), b"frozen").await;
        assert!(checked(&reply), "{:?}", reply.status);
    }

    let paused = redis.pause().unwrap();
    let mut figures = Vec::new();
    for replica in &replicas {
        let mut took = Vec::new();
        for _ in 0..ANSWERS {
            let started = Instant::now();
            let reply = get_as(&client, &replica.server.url(), b"frozen").await;
            took.push(started.elapsed());
            assert_fail_mode_answer(replica, &reply);
        }
        let started = Instant::now();
        let health = healthz(&client, replica).await;
        let health_took = started.elapsed();
        assert_eq!(health.status, 503, "/healthz while Redis is frozen");
        let body = health.json();
        assert_eq!(body["status"], "unavailable");
        assert_eq!(body["store_reachable"], false);
        assert_eq!(body["deadline_ms"], replica.deadline.as_millis() as u64);
        let reason = body["reason"].as_str().unwrap().to_owned();
        figures.push(format!(
            "fail {:?}, deadline {} ms: / answered in {} ms; /healthz 503 in {} ms ({reason})",
            replica.fail,
            replica.deadline.as_millis(),
            took.iter().map(|d| ms(*d)).collect::<Vec<_>>().join(", "),
            ms(health_took),
        ));
    }
    assert!(
        redis.is_stopped(),
        "every answer came while Redis was frozen"
    );
    for replica in &replicas {
        let stats = replica.server.state().stats().client("frozen").unwrap();
        let expected = match replica.fail {
            FailMode::Open => (1, ANSWERS as u64, 0),
            FailMode::Closed => (1, 0, ANSWERS as u64),
        };
        assert_eq!(
            (stats.allowed, stats.failed_open, stats.unavailable),
            expected
        );
        assert_eq!(stats.rejected, 0);
    }
    paused.resume().unwrap();
    assert!(!redis.is_stopped());

    for replica in &replicas {
        assert!(
            recovers(&client, replica).await,
            "fail {:?}, deadline {:?}: healthy and checking again after SIGCONT",
            replica.fail,
            replica.deadline
        );
    }
    for line in figures {
        eprintln!("{line}");
    }
}
