//! What courteous adds to one request, without a network: the same canned
//! 200 from a `tower::service_fn` transport, called bare and through the
//! [`CourteousLayer`] (admit, copy for a retry, parse, decide, report).
//! The difference of the two is the per-request overhead in nanoseconds.
//!
//! Every future here completes on its first poll (the transport answers at
//! once and nothing waits), so it is polled once, with no runtime.
//!
//! `cargo bench --bench overhead -- --warm-up-time 1 --measurement-time 3`

use std::convert::Infallible;
use std::future::{Ready, ready};
use std::hint::black_box;

use courteous::CourteousLayer;
use criterion::{Criterion, criterion_group, criterion_main};
use futures_util::FutureExt;
use http::{HeaderValue, Method, StatusCode};
use tower::{Layer, Service, ServiceExt};

/// The response a plain server sends: a `Date` and an empty body, with or
/// without `X-RateLimit-*` quota fields.
fn canned(quota: bool) -> reqwest::Response {
    let mut response = http::Response::new(reqwest::Body::from(""));
    let headers = response.headers_mut();
    headers.insert("content-length", HeaderValue::from_static("0"));
    headers.insert(
        "date",
        HeaderValue::from_static("Wed, 21 Oct 2026 07:20:00 GMT"),
    );
    if quota {
        headers.insert("x-ratelimit-limit", HeaderValue::from_static("1000000"));
        headers.insert("x-ratelimit-remaining", HeaderValue::from_static("999999"));
        headers.insert("x-ratelimit-reset", HeaderValue::from_static("3600"));
    }
    reqwest::Response::from(response)
}

type Canned = fn(reqwest::Request) -> Ready<Result<reqwest::Response, Infallible>>;

fn plain(_: reqwest::Request) -> Ready<Result<reqwest::Response, Infallible>> {
    ready(Ok(canned(false)))
}

fn with_quota(_: reqwest::Request) -> Ready<Result<reqwest::Response, Infallible>> {
    ready(Ok(canned(true)))
}

/// Calls `service` once with a fresh GET and returns the status.
fn once<S>(service: &mut S, url: &reqwest::Url) -> StatusCode
where
    S: Service<reqwest::Request, Response = reqwest::Response>,
    S::Error: std::fmt::Debug,
{
    let request = reqwest::Request::new(Method::GET, url.clone());
    let response = service
        .ready()
        .now_or_never()
        .expect("always ready")
        .expect("no error")
        .call(request)
        .now_or_never()
        .expect("answers on the first poll")
        .expect("a 200");
    response.status()
}

fn bench(c: &mut Criterion) {
    let url: reqwest::Url = "http://127.0.0.1:8080/items?page=1".parse().unwrap();
    let mut group = c.benchmark_group("per request");

    for (transport, response) in [
        (plain as Canned, "plain 200"),
        (with_quota as Canned, "200 with X-RateLimit"),
    ] {
        let mut bare = tower::service_fn(transport);
        assert_eq!(once(&mut bare, &url), StatusCode::OK);
        group.bench_function(format!("bare service_fn, {response}"), |b| {
            b.iter(|| once(&mut bare, black_box(&url)))
        });
        let mut wrapped = CourteousLayer::new().layer(tower::service_fn(transport));
        assert_eq!(once(&mut wrapped, &url), StatusCode::OK);
        group.bench_function(format!("courteous layer, {response}"), |b| {
            b.iter(|| once(&mut wrapped, black_box(&url)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
