//! The comparison's proxy balances per request, not per connection, over
//! real loopback sockets, passes 429s and their headers through, records what
//! it forwarded, and survives a dead upstream.

use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use demo_server::compare::proxy::RoundRobinProxy;
use demo_server::compare::recorder::{Recorder, Seen};
use demo_server::{Algorithm, Policy, ServerConfig, Store, spawn};
use tokio::net::TcpListener;

/// An upstream answering its own index; `/limited` answers 429 with a hint.
async fn upstream(index: usize) -> String {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = Router::new()
        .route("/", get(move || async move { index.to_string() }))
        .route(
            "/limited",
            get(|headers: HeaderMap| async move {
                let id = headers.get("x-client-id").cloned();
                let mut out = HeaderMap::new();
                out.insert("retry-after", "2".parse().unwrap());
                out.insert("connection", "close".parse().unwrap());
                if let Some(id) = id {
                    out.insert("x-echo-client", id);
                }
                (StatusCode::TOO_MANY_REQUESTS, out, "slow down").into_response()
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

fn keep_alive_client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(1)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

#[tokio::test]
async fn each_request_goes_to_the_next_upstream_even_on_one_connection() {
    let upstreams = vec![upstream(0).await, upstream(1).await, upstream(2).await];
    let recorder = Recorder::new();
    let proxy = RoundRobinProxy::spawn(upstreams, recorder.clone())
        .await
        .unwrap();
    let client = keep_alive_client();
    let mut answers = Vec::new();
    for _ in 0..9 {
        // Sequential requests on one pooled keep-alive connection.
        let response = client
            .get(format!("{}/", proxy.url()))
            .header("x-client-id", "alice")
            .send()
            .await
            .unwrap();
        answers.push(response.text().await.unwrap());
    }
    assert_eq!(answers, ["0", "1", "2", "0", "1", "2", "0", "1", "2"]);
    assert_eq!(proxy.hits(), [3, 3, 3]);
    assert_eq!(
        recorder.seen("alice"),
        Seen {
            received: 9,
            allowed: 9,
            throttled: 0
        }
    );
}

#[tokio::test]
async fn throttles_pass_through_with_their_headers_and_are_recorded() {
    let recorder = Recorder::new();
    let proxy = RoundRobinProxy::spawn(vec![upstream(0).await], recorder.clone())
        .await
        .unwrap();
    let response = keep_alive_client()
        .get(format!("{}/limited", proxy.url()))
        .header("x-client-id", "bob")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "2");
    assert_eq!(
        response.headers()["x-echo-client"],
        "bob",
        "request headers forwarded"
    );
    assert!(
        response.headers().get("connection").is_none(),
        "hop-by-hop headers are not forwarded"
    );
    assert_eq!(response.text().await.unwrap(), "slow down");
    let events = recorder.events_of("bob");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].status, 429);
    assert!(!events[0].allowed());
}

#[tokio::test]
async fn a_dead_upstream_answers_502_and_the_next_request_moves_on() {
    let dead = {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        format!("http://{}", listener.local_addr().unwrap())
        // dropped: nothing listens there any more
    };
    let recorder = Recorder::new();
    let proxy = RoundRobinProxy::spawn(vec![dead, upstream(1).await], recorder.clone())
        .await
        .unwrap();
    let client = keep_alive_client();
    let first = client
        .get(format!("{}/", proxy.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 502);
    let second = client
        .get(format!("{}/", proxy.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(second.status(), 200);
    assert_eq!(second.text().await.unwrap(), "1");
    assert_eq!(
        recorder.seen("").received,
        2,
        "requests without an id are recorded as \"\""
    );
}

#[tokio::test]
async fn no_upstream_is_an_error() {
    assert!(
        RoundRobinProxy::spawn(Vec::new(), Recorder::new())
            .await
            .is_err()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_behind_the_proxy_share_one_quota_and_the_load() {
    let policy = Policy::bucket(Algorithm::TokenBucket, 20, 20.0 / 3600.0).unwrap();
    let store = Store::memory();
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(
            spawn(ServerConfig::new(policy.clone()), store.clone())
                .await
                .unwrap(),
        );
    }
    let recorder = Recorder::new();
    let proxy =
        RoundRobinProxy::spawn(replicas.iter().map(|r| r.url()).collect(), recorder.clone())
            .await
            .unwrap();
    let client = keep_alive_client();
    for _ in 0..30 {
        let status = client
            .get(format!("{}/", proxy.url()))
            .header("x-client-id", "carol")
            .send()
            .await
            .unwrap()
            .status();
        assert!(status == 200 || status == 429, "{status}");
    }
    for replica in &replicas {
        assert_eq!(
            replica.state().stats().total().received,
            10,
            "each replica got a third"
        );
    }
    let seen = recorder.seen("carol");
    assert_eq!(
        (seen.received, seen.allowed, seen.throttled),
        (30, 20, 10),
        "one shared bucket of 20"
    );
}
