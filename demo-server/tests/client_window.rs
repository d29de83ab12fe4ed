//! `client-window`: a fixed window opened by the client's first request,
//! not by the clock. A window opened 300 ms before a clock edge still holds
//! after that edge (an aligned window would have refilled), reports its own
//! end as the reset, and the next window opens with the first request after
//! it ended. Times are the store's (each decision reports when it was taken).

mod common;

use std::time::Duration;

use common::{Backend, fresh_keys};
use demo_server::{Algorithm, Policy, Store};

const LIMIT: u64 = 5;
const WINDOW_MS: u64 = 1000;

async fn sleep_until(store: &Store, at_ms: u64) {
    let now = store.now_ms().await.unwrap();
    tokio::time::sleep(Duration::from_millis(at_ms.saturating_sub(now))).await;
}

async fn window_opens_at_the_first_request(backend: Backend) {
    let store = backend.store().await;
    let policy = Policy::new(
        Algorithm::ClientWindow,
        LIMIT,
        Duration::from_millis(WINDOW_MS),
    )
    .unwrap();
    let key = fresh_keys().key("first", Algorithm::ClientWindow);
    let now = store.now_ms().await.unwrap();
    let edge = (now / WINDOW_MS + 2) * WINDOW_MS;
    sleep_until(&store, edge - 300).await;
    let mut first = Vec::new();
    for _ in 0..LIMIT + 1 {
        first.push(store.check(&policy, &key).await.unwrap());
    }
    let opened = first[0].now_ms;
    let admitted = first.iter().filter(|d| d.allowed).count() as u64;
    assert_eq!(admitted, LIMIT, "{}: {first:?}", backend.name());
    // The reset counts down to the window's end, measured from its opening.
    for d in &first {
        let end = d.now_ms + d.reset.as_millis() as u64;
        assert!(end.abs_diff(opened + WINDOW_MS) <= 1, "{d:?}");
    }
    // After the clock's edge (but inside the window): still refused.
    sleep_until(&store, edge + 50).await;
    let after_edge = store.check(&policy, &key).await.unwrap();
    if after_edge.now_ms < opened + WINDOW_MS {
        assert!(!after_edge.allowed, "{}: {after_edge:?}", backend.name());
    }
    // After the window: a new one opens with this request, full.
    sleep_until(&store, opened + WINDOW_MS + 20).await;
    let next = store.check(&policy, &key).await.unwrap();
    assert!(next.allowed, "{next:?}");
    assert_eq!(next.remaining, LIMIT - 1);
    assert_eq!(next.reset, Duration::from_millis(WINDOW_MS));
}

#[tokio::test]
async fn redis_window_opens_at_the_first_request() {
    window_opens_at_the_first_request(Backend::redis()).await;
}

#[tokio::test]
async fn memory_window_opens_at_the_first_request() {
    window_opens_at_the_first_request(Backend::memory()).await;
}
