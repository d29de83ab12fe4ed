//! The deadline bounds the whole request: attempts, transport and waits.
//! On paused time over a `tower::service_fn` that answers after an hour
//! (the deadline is exact there), and on real sockets against a wiremock
//! server that delays its answer (only the outcome is asserted; the time
//! it took is printed).

use std::time::Duration;

use courteous::{Config, CourteousLayer, RequestOptions};
use http::Method;
use tokio::time::Instant;
use tower::{Layer, Service, ServiceExt};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

const HOUR: Duration = Duration::from_secs(3600);
const SECOND: Duration = Duration::from_secs(1);

/// A server that answers 200 an hour after each request.
fn slow_service() -> impl Service<
    reqwest::Request,
    Response = reqwest::Response,
    Error = std::io::Error,
    Future = impl Send,
> + Clone
+ Send
+ 'static {
    tower::service_fn(|_req: reqwest::Request| async {
        tokio::time::sleep(HOUR).await;
        Ok(reqwest::Response::from(http::Response::new("late")))
    })
}

fn get() -> reqwest::Request {
    reqwest::Request::new(Method::GET, "http://127.0.0.1:9/slow".parse().unwrap())
}

/// The error's facts, and the scope's counters after it.
fn assert_cut(layer: &CourteousLayer, err: &courteous::Error, took: Duration) {
    assert!(err.is_deadline() && err.is_timeout(), "{err:?}");
    assert!(!err.is_rate_limited(), "{err:?}");
    assert_eq!(err.attempts(), 1, "{err:?}");
    assert_eq!(err.elapsed(), Some(SECOND));
    assert_eq!(took, SECOND);
    let message = err.to_string();
    assert!(
        message.starts_with("GET http://127.0.0.1:9/slow: the deadline (1 s from send) passed"),
        "{message}"
    );
    let stats = layer.stats()[0].1;
    assert_eq!(
        (stats.sent(), stats.gave_up(), stats.in_flight()),
        (1, 1, 0)
    );
}

#[tokio::test(start_paused = true)]
async fn the_client_deadline_cancels_an_attempt_that_takes_an_hour() {
    let layer = CourteousLayer::with_config(Config::default().deadline(SECOND));
    let started = Instant::now();
    let err = layer
        .layer(slow_service())
        .oneshot(get())
        .await
        .unwrap_err();
    assert_cut(&layer, &err, started.elapsed());
}

#[tokio::test(start_paused = true)]
async fn a_request_deadline_cancels_an_attempt_that_takes_an_hour() {
    // The layer's deadline (120 s by default) is replaced by the request's.
    let layer = CourteousLayer::new();
    let mut request = get();
    RequestOptions::new().deadline(SECOND).attach(&mut request);
    let started = Instant::now();
    let err = layer
        .layer(slow_service())
        .oneshot(request)
        .await
        .unwrap_err();
    assert_cut(&layer, &err, started.elapsed());
}

#[tokio::test(start_paused = true)]
async fn without_a_deadline_the_answer_is_waited_for() {
    let layer = CourteousLayer::with_config(Config::default().deadline(None));
    let started = Instant::now();
    let response = layer.layer(slow_service()).oneshot(get()).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(started.elapsed(), HOUR);
}

/// A server whose every answer takes a minute.
async fn slow_server() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(60)))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn on_a_socket_the_client_deadline_ends_a_slow_answer() {
    let server = slow_server().await;
    let client = courteous::Client::builder().deadline(SECOND).build();
    let started = std::time::Instant::now();
    let err = client.get(server.uri()).send().await.unwrap_err();
    let took = started.elapsed();
    println!("client deadline 1 s, server answers after 60 s: {took:?}: {err}");
    assert!(err.is_deadline() && err.attempts() == 1, "{err:?}");
    assert!(took < Duration::from_secs(30), "{took:?}");
}

#[tokio::test]
async fn on_a_socket_a_request_deadline_ends_a_slow_answer() {
    let server = slow_server().await;
    let client = courteous::Client::new();
    let started = std::time::Instant::now();
    let err = client
        .get(server.uri())
        .options(RequestOptions::new().deadline(SECOND))
        .send()
        .await
        .unwrap_err();
    let took = started.elapsed();
    println!("request deadline 1 s, server answers after 60 s: {took:?}: {err}");
    assert!(err.is_deadline() && err.attempts() == 1, "{err:?}");
    assert!(took < Duration::from_secs(30), "{took:?}");
}
