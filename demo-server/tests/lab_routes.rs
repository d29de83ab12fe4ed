//! The lab: named routes with quotas of their own on one replica, a
//! concurrency limit whose lease is held for the route's latency, a leaky
//! bucket saying `used/size`, and the hint-only header styles, on a real
//! `redis-server` and on the embedded store.

mod common;

use std::time::Duration;

use common::{Backend, client, fresh_keys, get_as};
use demo_server::{Algorithm, HeaderStyle, Latency, Policy, RouteConfig, ServerConfig, spawn};

fn window(algorithm: Algorithm, limit: u64, secs: u64) -> Policy {
    Policy::new(algorithm, limit, Duration::from_secs(secs)).unwrap()
}

async fn routes_have_quotas_of_their_own(backend: &Backend) {
    let config = ServerConfig::new(window(Algorithm::TokenBucket, 1, 60))
        .keys(fresh_keys())
        .route(
            "one",
            RouteConfig::new(window(Algorithm::SlidingLog, 1, 60)),
        )
        .unwrap()
        .route(
            "two",
            RouteConfig::new(window(Algorithm::FixedWindowLua, 2, 60))
                .headers(HeaderStyle::XRatelimit),
        )
        .unwrap();
    let server = spawn(config, backend.store().await).await.unwrap();
    let (client, base) = (client(), server.url());
    let status = |path: &'static str| {
        let (client, url) = (client.clone(), format!("{base}{path}"));
        async move { get_as(&client, &url, b"routes").await }
    };
    assert_eq!(status("/").await.status, 200);
    assert_eq!(status("/").await.status, 429);
    assert_eq!(status("/api/one").await.status, 200, "a quota of its own");
    assert_eq!(status("/api/one").await.status, 429);
    let two = status("/api/two").await;
    assert_eq!(two.status, 200);
    assert_eq!(two.headers["x-ratelimit-limit"], "2", "its own dialect");
    assert!(two.headers.get("ratelimit").is_none());
    assert_eq!(status("/api/two").await.status, 200);
    assert_eq!(status("/api/two").await.status, 429);
    assert_eq!(status("/api/three").await.status, 404);
    let stats = server.state().stats().total();
    assert_eq!(
        (stats.allowed, stats.rejected),
        (4, 3),
        "{}",
        backend.name()
    );
}

#[tokio::test]
async fn routes_have_quotas_of_their_own_on_redis() {
    routes_have_quotas_of_their_own(&Backend::redis()).await;
}

#[tokio::test]
async fn routes_have_quotas_of_their_own_on_memory() {
    routes_have_quotas_of_their_own(&Backend::memory()).await;
}

/// One request in service at a time for 1.5 s: of two sent together, one
/// is served and the other refused with `Retry-After: 1`; once the first
/// has answered, its lease is back and the next is admitted.
async fn a_concurrency_limit_holds_a_lease_for_the_service_time(backend: &Backend) {
    let route = RouteConfig::new(window(Algorithm::Concurrency, 1, 30))
        .headers(HeaderStyle::RetryAfter)
        .latency(Latency::new(Duration::from_millis(1500), Duration::ZERO));
    let config = ServerConfig::new(window(Algorithm::TokenBucket, 20, 1))
        .keys(fresh_keys())
        .route("slow", route)
        .unwrap();
    let server = spawn(config, backend.store().await).await.unwrap();
    let (client, url) = (client(), format!("{}/api/slow", server.url()));
    let (a, b) = tokio::join!(
        get_as(&client, &url, b"conc"),
        get_as(&client, &url, b"conc")
    );
    let mut statuses = [a.status.as_u16(), b.status.as_u16()];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 429], "{}", backend.name());
    let refused = if a.status == 429 { &a } else { &b };
    assert_eq!(refused.headers["retry-after"], "1");
    assert_eq!(
        get_as(&client, &url, b"conc").await.status,
        200,
        "the lease came back"
    );
    let (c, d) = tokio::join!(
        get_as(&client, &url, b"conc"),
        get_as(&client, &url, b"other")
    );
    assert_eq!(
        (c.status.as_u16(), d.status.as_u16()),
        (200, 200),
        "a limit per client"
    );
}

#[tokio::test]
async fn a_concurrency_limit_holds_a_lease_for_the_service_time_on_redis() {
    a_concurrency_limit_holds_a_lease_for_the_service_time(&Backend::redis()).await;
}

#[tokio::test]
async fn a_concurrency_limit_holds_a_lease_for_the_service_time_on_memory() {
    a_concurrency_limit_holds_a_lease_for_the_service_time(&Backend::memory()).await;
}

/// A leaky bucket of 3 draining 3 per minute says how full it is.
async fn a_leaky_bucket_says_used_over_size(backend: &Backend) {
    let route =
        RouteConfig::new(window(Algorithm::LeakyBucket, 3, 60)).headers(HeaderStyle::UsedSize);
    let config = ServerConfig::new(window(Algorithm::TokenBucket, 20, 1))
        .keys(fresh_keys())
        .route("leaky", route)
        .unwrap();
    let server = spawn(config, backend.store().await).await.unwrap();
    let (client, url) = (client(), format!("{}/api/leaky", server.url()));
    for used in 1..=3 {
        let reply = get_as(&client, &url, b"leaky").await;
        assert_eq!(reply.status, 200);
        assert_eq!(
            reply.headers["x-shopify-shop-api-call-limit"],
            format!("{used}/3")
        );
    }
    let full = get_as(&client, &url, b"leaky").await;
    assert_eq!(full.status, 429, "{}", backend.name());
    assert_eq!(full.headers["x-shopify-shop-api-call-limit"], "3/3");
    // One unit drains in 20 s; whole seconds rounded up.
    let wait: u64 = full.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((19..=20).contains(&wait), "{wait}");
    assert!(full.json().get("retry_after_ms").is_none());
}

#[tokio::test]
async fn a_leaky_bucket_says_used_over_size_on_redis() {
    a_leaky_bucket_says_used_over_size(&Backend::redis()).await;
}

#[tokio::test]
async fn a_leaky_bucket_says_used_over_size_on_memory() {
    a_leaky_bucket_says_used_over_size(&Backend::memory()).await;
}

/// `problem-only`: nothing but the body's `retry_after_ms`; `http-date`:
/// nothing but `Retry-After` as a date, the next unit's second rounded up.
async fn hint_only_styles(backend: &Backend) {
    let bucket = || Policy::bucket(Algorithm::TokenBucket, 1, 0.5).unwrap();
    let config = ServerConfig::new(bucket())
        .keys(fresh_keys())
        .route(
            "problem",
            RouteConfig::new(bucket()).headers(HeaderStyle::ProblemOnly),
        )
        .unwrap()
        .route(
            "date",
            RouteConfig::new(bucket()).headers(HeaderStyle::HttpDate),
        )
        .unwrap();
    let server = spawn(config, backend.store().await).await.unwrap();
    let client = client();
    let url = |name| format!("{}/api/{name}", server.url());
    let ok = get_as(&client, &url("problem"), b"hints").await;
    assert_eq!(ok.status, 200);
    assert!(!ok.headers.keys().any(|k| k.as_str().contains("ratelimit")));
    let refused = get_as(&client, &url("problem"), b"hints").await;
    assert_eq!(refused.status, 429, "{}", backend.name());
    assert!(refused.headers.get("retry-after").is_none());
    let ms = refused.json()["retry_after_ms"]
        .as_u64()
        .expect("retry_after_ms");
    assert!((1000..=2000).contains(&ms), "{ms}");

    get_as(&client, &url("date"), b"hints").await;
    let refused = get_as(&client, &url("date"), b"hints").await;
    assert_eq!(refused.status, 429);
    assert!(refused.json().get("retry_after_ms").is_none());
    let date = refused.headers["retry-after"].to_str().unwrap();
    let at = httpdate::parse_http_date(date).expect("an HTTP-date");
    let wait = at
        .duration_since(std::time::SystemTime::now())
        .unwrap_or_default();
    assert!(wait <= Duration::from_secs(3), "{date}: {wait:?}");
}

#[tokio::test]
async fn hint_only_styles_on_redis() {
    hint_only_styles(&Backend::redis()).await;
}

#[tokio::test]
async fn hint_only_styles_on_memory() {
    hint_only_styles(&Backend::memory()).await;
}
