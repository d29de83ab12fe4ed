//! Fleets of clients (each with its own engine and its own store
//! connection, as separate processes have) against a wiremock token bucket
//! on a real socket, coordinating through a real `redis-server`: through
//! `Client`, `CourteousLayer` and `CourteousMiddleware`; and Redis stopped
//! or killed mid-run.

mod fleet_support;

use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use courteous::testing::{Dialect, RetryAfterStyle, TokenBucket};
use courteous::{Client, CourteousLayer, RetryReport};
use fleet_support::*;
use tokio::task::JoinSet;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Respond, ResponseTemplate};

async fn bucket_server() -> (MockServer, TokenBucket) {
    let server = MockServer::start().await;
    let bucket = TokenBucket::per_second(NonZeroU32::new(20).unwrap())
        .retry_after(RetryAfterStyle::Seconds)
        .dialect(Dialect::IetfList);
    Mock::given(any())
        .respond_with(bucket.clone())
        .mount(&server)
        .await;
    (server, bucket)
}

/// When each request reached the server, in order.
#[derive(Clone, Default)]
struct Arrivals(Arc<Mutex<Vec<Instant>>>);

struct Recorded(Arrivals, ResponseTemplate);

impl Respond for Recorded {
    fn respond(&self, _: &wiremock::Request) -> ResponseTemplate {
        self.0.0.lock().unwrap().push(Instant::now());
        self.1.clone()
    }
}

impl Arrivals {
    fn answer(&self, template: ResponseTemplate) -> Recorded {
        Recorded(self.clone(), template)
    }

    fn times(&self) -> Vec<Instant> {
        self.0.lock().unwrap().clone()
    }
}

async fn fleet_client(redis_url: &str) -> Client {
    Client::builder()
        .fleet(
            courteous::fleet::RedisFleet::builder(redis_url)
                .connect()
                .await
                .unwrap(),
        )
        .build()
}

/// `members` clients each needing `each` successes, all at once.
async fn herd(clients: Vec<Client>, url: String, each: u32) -> u32 {
    let mut set = JoinSet::new();
    for client in clients {
        let url = url.clone();
        set.spawn(async move {
            let mut ok = 0;
            for _ in 0..each {
                let response = client
                    .get(&url)
                    .send()
                    .await
                    .expect("a fleet never fails a request");
                ok += u32::from(response.status().is_success());
            }
            ok
        });
    }
    set.join_all().await.into_iter().sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_of_clients_spends_one_bucket_without_refusals() {
    let redis = redis();
    let (server, bucket) = bucket_server().await;
    let mut clients = Vec::new();
    for _ in 0..8 {
        clients.push(fleet_client(&redis.url()).await);
    }
    let ok = herd(clients, server.uri(), 10).await;
    assert_eq!(ok, 80);
    // Without the store the same herd sends blind first requests into a
    // bucket of 20 and is refused several times (issue 11: 2–6 % for 10
    // processes); with it, slots follow the bucket. One refusal of slack
    // for a loaded machine.
    assert!(
        bucket.rejected() <= 1,
        "{} refused of {}",
        bucket.rejected(),
        bucket.received()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_seen_through_a_layer_pauses_a_middleware_in_another_process() {
    let redis = redis();
    let server = MockServer::start().await;
    let arrivals = Arrivals::default();
    Mock::given(any())
        .respond_with(arrivals.answer(ResponseTemplate::new(429).insert_header("retry-after", "1")))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(any())
        .respond_with(arrivals.answer(ResponseTemplate::new(200)))
        .mount(&server)
        .await;
    let store = |url: String| async move {
        courteous::fleet::RedisFleet::builder(url)
            .connect()
            .await
            .unwrap()
    };
    // Process A: a tower layer. Its first request is refused, with a 1 s hint.
    use tower::{Layer, Service, ServiceExt};
    let layer = CourteousLayer::new().fleet(store(redis.url()).await);
    let mut a = layer.layer(reqwest::Client::new());
    let request = reqwest::Request::new(http::Method::GET, server.uri().parse().unwrap());
    let probe = tokio::spawn(async move { a.ready().await.unwrap().call(request).await });
    // Process B: reqwest-middleware, its own engine, asking while A's pause is on.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let middleware =
        courteous::CourteousMiddleware::from(CourteousLayer::new().fleet(store(redis.url()).await));
    let b = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(middleware)
        .build();
    let response = b.get(server.uri()).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let report = response.extensions().get::<RetryReport>().unwrap();
    assert_eq!(report.throttled(), 0, "B was never refused itself");
    let a = probe.await.unwrap().unwrap();
    assert_eq!(a.status(), 200);
    // Arrival times at the server, not how long B happened to wait on a
    // loaded machine: after A's refusal with a 1 s hint, nothing (neither
    // A's retry nor B's send) reached the server before that second ended.
    let seen = arrivals.times();
    assert_eq!(seen.len(), 3, "A's refusal, A's retry, B's send");
    for later in &seen[1..] {
        assert!(
            *later - seen[0] >= Duration::from_millis(990),
            "the fleet honoured the pause: {:?} after the refusal",
            *later - seen[0]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_stopped_then_killed_mid_run_loses_no_request() {
    let mut redis = redis();
    let (server, bucket) = bucket_server().await;
    let mut clients = Vec::new();
    for _ in 0..5 {
        clients.push(fleet_client(&redis.url()).await);
    }
    let run = tokio::spawn(herd(clients.clone(), server.uri(), 12));
    tokio::time::sleep(Duration::from_millis(700)).await;
    let paused = redis.pause().unwrap();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    drop(paused);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let port = redis.port();
    redis.kill();
    let ok = run.await.expect("no client panicked");
    assert_eq!(ok, 60, "every request succeeded");
    // Stopped and killed, the fleet fell back to local pacing: a few
    // refusals at most, never a lost request.
    assert!(bucket.rejected() <= 10, "{} refused", bucket.rejected());

    // Redis back (empty): the clients rejoin and share again.
    let fresh = RedisServer::start_on_port(port).unwrap();
    // Past the breaker's open second, the next call is its trial.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let again = herd(clients.clone(), server.uri(), 4).await;
    assert_eq!(again, 20);
    let client = redis::Client::open(fresh.url()).unwrap();
    let con = client.get_multiplexed_async_connection().await.unwrap();
    let keys = || {
        let mut con = con.clone();
        async move {
            let keys: Vec<String> = redis::cmd("KEYS")
                .arg("courteous:v1:*")
                .query_async(&mut con)
                .await
                .unwrap();
            keys
        }
    };
    // On a loaded machine the breakers may still be open after that herd:
    // a few more sends (bounded: 20, 100 ms apart) until one is a trial.
    for _ in 0..20 {
        if keys().await.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let response = clients[0].get(server.uri()).send().await.unwrap();
        assert!(response.status().is_success());
    }
    let keys = keys().await;
    assert_eq!(
        keys.len(),
        2,
        "the rejoined fleet keeps its state in the new Redis: {keys:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_steady_process_makes_one_store_round_trip_per_send() {
    let redis = redis();
    // A quota that never runs low: every response confirms what the fleet
    // knows, so its reading rides along with the next reservation.
    let server = MockServer::start().await;
    let bucket = TokenBucket::per_second(NonZeroU32::new(1000).unwrap())
        .burst(NonZeroU32::new(1000).unwrap())
        .dialect(Dialect::IetfList);
    Mock::given(any())
        .respond_with(bucket.clone())
        .mount(&server)
        .await;
    let fleet = courteous::fleet::RedisFleet::builder(redis.url())
        // Generous: a missed deadline would be tried again and add a call.
        .deadline(Duration::from_secs(2))
        .connect()
        .await
        .unwrap();
    let client = Client::builder().fleet(fleet.clone()).build();
    let sends = 30;
    for _ in 0..sends {
        let response = client.get(server.uri()).send().await.unwrap();
        assert!(response.status().is_success());
    }
    assert_eq!(bucket.received(), sends);
    let counters = fleet.counters();
    assert_eq!(counters.missed_deadline + counters.errors, 0);
    // One reservation per send, plus the probe's answer published at once
    // (the only lesson the others must hear before this process sends again).
    assert_eq!(counters.calls, sends + 1, "{counters:?}");
}
