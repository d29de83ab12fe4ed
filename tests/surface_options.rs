//! The configuration surface against wiremock on loopback: one give-up rule
//! for every method, per-request options read by all three adapters,
//! classifiers, and the retry hook.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use courteous::classify::{Response, ResponseClass};
use courteous::hooks::{WaitCause, WaitEvent};
use courteous::{Client, CourteousLayer, GiveUpMode, RequestOptions};
use http::StatusCode;
use tower::{Layer, ServiceExt};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A server that answers `first` `times` times, then 200.
async fn server(first: ResponseTemplate, times: u64) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(first)
        .up_to_n_times(times)
        .mount(&server)
        .await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_string("fine"))
        .mount(&server)
        .await;
    server
}

fn refused() -> ResponseTemplate {
    ResponseTemplate::new(429)
        .insert_header("retry-after-ms", "20")
        .set_body_string("slow down")
}

async fn received(server: &MockServer) -> usize {
    server.received_requests().await.unwrap_or_default().len()
}

#[tokio::test]
async fn give_up_modes_mean_the_same_for_get_and_post() {
    for mode in [GiveUpMode::Error, GiveUpMode::Response] {
        for post in [false, true] {
            // GET: retried once, then given up; POST without a key: not retried.
            let server = server(refused(), 10).await;
            let client = Client::builder().give_up(mode).max_attempts(2).build();
            let url = server.uri();
            let request = if post {
                client.post(url)
            } else {
                client.get(url)
            };
            let result = request.send().await;
            let response = match (mode, result) {
                (GiveUpMode::Error, Err(err)) => {
                    assert!(err.is_rate_limited(), "{err:?}");
                    assert_eq!(err.status(), Some(StatusCode::TOO_MANY_REQUESTS));
                    err.into_response().unwrap()
                }
                (GiveUpMode::Response, Ok(response)) => response,
                (mode, other) => panic!("{mode:?}, post {post}: {other:?}"),
            };
            assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
            assert_eq!(response.text().await.unwrap(), "slow down");
            assert_eq!(received(&server).await, if post { 1 } else { 2 });
        }
    }
}

#[tokio::test]
async fn options_from_the_builder_limit_one_request() {
    let server = server(refused(), 10).await;
    let client = Client::builder().max_attempts(5).build();
    let err = client
        .get(server.uri())
        .options(RequestOptions::new().no_retries())
        .send()
        .await
        .unwrap_err();
    assert!(err.is_rate_limited() && err.attempts() == 1, "{err:?}");
    assert_eq!(received(&server).await, 1);

    // A longest wait below the hint gives up without waiting.
    let hinted = ResponseTemplate::new(429).insert_header("retry-after", "2");
    let server = self::server(hinted, 1).await;
    let err = Client::new()
        .get(server.uri())
        .options(RequestOptions::new().max_wait(Duration::from_millis(500)))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_wait_too_long(), "{err:?}");
}

#[tokio::test]
async fn options_in_a_plain_request_reach_the_client_and_the_layer() {
    let server = server(refused(), 10).await;
    let client = Client::builder().max_attempts(5).build();
    let mut request = reqwest::Request::new(http::Method::GET, server.uri().parse().unwrap());
    RequestOptions::new().max_attempts(2).attach(&mut request);
    let err = client.execute(request).await.unwrap_err();
    assert_eq!(err.attempts(), 2, "{err:?}");

    let server = server_again().await;
    let service = CourteousLayer::new()
        .max_attempts(5)
        .layer(reqwest::Client::new());
    // An http::Request's extensions survive reqwest's conversion.
    let request = http::Request::get(server.uri())
        .extension(RequestOptions::new().no_retries().scope("one-off"))
        .body(reqwest::Body::from(Vec::new()))
        .unwrap();
    let request = reqwest::Request::try_from(request).unwrap();
    let err = service.clone().oneshot(request).await.unwrap_err();
    assert_eq!(err.attempts(), 1, "{err:?}");
    let scopes: Vec<_> = service.stats().into_iter().map(|(s, _)| s).collect();
    assert_eq!(scopes, [courteous::Scope::new("one-off")]);
    assert_eq!(received(&server).await, 1);
}

async fn server_again() -> MockServer {
    server(refused(), 10).await
}

#[tokio::test]
async fn a_classifier_decides_what_is_throttled_and_what_is_retried() {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(420).insert_header("retry-after-ms", "30"))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(502))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let client = Client::builder()
        .classifier(|r: &Response<'_>| match r.status().as_u16() {
            420 => ResponseClass::Throttled { wait: None },
            502 => ResponseClass::Retry,
            _ => r.by_status(),
        })
        .on_retry(move |event: &WaitEvent<'_>| {
            assert!(matches!(event.cause(), WaitCause::Retry(_)), "{event:?}");
            seen.lock()
                .unwrap()
                .push((event.attempt(), event.status(), event.wait()));
        })
        .build();
    let response = client.get(server.uri()).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let report = response
        .extensions()
        .get::<courteous::RetryReport>()
        .unwrap();
    assert_eq!((report.attempts(), report.throttled()), (3, 1));
    let events = events.lock().unwrap().clone();
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0].0, 1);
    assert_eq!(events[0].1, Some(StatusCode::from_u16(420).unwrap()));
    assert!(events[0].2 >= Duration::from_millis(30));
    assert_eq!(events[1].1, Some(StatusCode::BAD_GATEWAY));
    let (_, stats) = &client.stats()[0];
    assert_eq!(stats.throttled(), 1);

    // Without the classifier, 420 is an answer like any other.
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(420))
        .mount(&server)
        .await;
    let response = Client::new().get(server.uri()).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 420);
}

#[cfg(feature = "middleware")]
#[tokio::test]
async fn the_middleware_reads_options_from_its_extensions() {
    let server = server(refused(), 10).await;
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(courteous::CourteousMiddleware::new().max_attempts(5))
        .build();
    let err = client
        .get(server.uri())
        .with_extension(RequestOptions::new().max_attempts(2))
        .send()
        .await
        .unwrap_err();
    assert!(matches!(err, reqwest_middleware::Error::Middleware(_)));
    assert_eq!(received(&server).await, 2);
}

/// A server whose first answer asks for a wait (2 s) longer than the
/// per-request deadline the tests below set (500 ms), then 200.
async fn hint_past_the_deadline() -> MockServer {
    server(
        ResponseTemplate::new(429).insert_header("retry-after", "2"),
        1,
    )
    .await
}

fn short_deadline() -> RequestOptions {
    RequestOptions::new().deadline(Duration::from_millis(500))
}

#[tokio::test]
async fn a_per_request_deadline_gives_up_through_the_client() {
    let server = hint_past_the_deadline().await;
    // The client's own deadline would allow the wait; the request's does not.
    let client = Client::builder().deadline(Duration::from_secs(60)).build();
    let err = client
        .get(server.uri())
        .options(short_deadline())
        .send()
        .await
        .unwrap_err();
    assert!(err.is_deadline(), "{err:?}");
    assert_eq!(err.attempts(), 1, "{err:?}");
    assert_eq!(received(&server).await, 1);

    // Without the option the same client waits out the hint and succeeds.
    let server = hint_past_the_deadline().await;
    let response = client.get(server.uri()).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_per_request_deadline_gives_up_through_the_layer() {
    let server = hint_past_the_deadline().await;
    let service = CourteousLayer::new()
        .deadline(Duration::from_secs(60))
        .layer(reqwest::Client::new());
    let mut request = reqwest::Request::new(http::Method::GET, server.uri().parse().unwrap());
    short_deadline().attach(&mut request);
    let err = service.oneshot(request).await.unwrap_err();
    assert!(err.is_deadline(), "{err:?}");
    assert_eq!(received(&server).await, 1);
}

#[cfg(feature = "middleware")]
#[tokio::test]
async fn a_per_request_deadline_gives_up_through_the_middleware() {
    let server = hint_past_the_deadline().await;
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(courteous::CourteousMiddleware::new().deadline(Duration::from_secs(60)))
        .build();
    let err = client
        .get(server.uri())
        .with_extension(short_deadline())
        .send()
        .await
        .unwrap_err();
    let reqwest_middleware::Error::Middleware(err) = err else {
        panic!("{err:?}");
    };
    let err = err.downcast_ref::<courteous::Error>().unwrap();
    assert!(err.is_deadline(), "{err:?}");
    assert_eq!(received(&server).await, 1);
}
