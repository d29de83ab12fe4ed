//! The `reqwest-middleware` adapter against wiremock on real sockets.
#![cfg(feature = "middleware")]

use std::time::{Duration, Instant};

use courteous::{Backoff, Config, CourteousMiddleware, RetryReport};
use http::StatusCode;
use wiremock::matchers::path;
use wiremock::{Mock, MockServer, ResponseTemplate};

#[tokio::test]
async fn throttled_requests_are_retried_after_the_hint() {
    let server = MockServer::start().await;
    Mock::given(path("/r"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after-ms", "200"))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(path("/r"))
        .respond_with(ResponseTemplate::new(200).set_body_string("fine"))
        .with_priority(2)
        .mount(&server)
        .await;
    let middleware = CourteousMiddleware::new();
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(middleware.clone())
        .build();
    let started = Instant::now();
    let response = client
        .get(format!("{}/r", server.uri()))
        .send()
        .await
        .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response
            .extensions()
            .get::<RetryReport>()
            .unwrap()
            .attempts(),
        2
    );
    assert_eq!(response.text().await.unwrap(), "fine");
    let (_, stats) = &middleware.stats()[0];
    assert_eq!((stats.sent(), stats.throttled()), (2, 1));
}

#[tokio::test]
async fn errors_keep_their_kind() {
    let server = MockServer::start().await;
    Mock::given(path("/r"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "3600"))
        .mount(&server)
        .await;
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(CourteousMiddleware::with_config(Config::default()))
        .build();
    let err = client
        .get(format!("{}/r", server.uri()))
        .send()
        .await
        .unwrap_err();
    let reqwest_middleware::Error::Middleware(inner) = err else {
        panic!("expected the engine's error, got {err:?}")
    };
    let courteous = inner.downcast_ref::<courteous::Error>().unwrap();
    assert!(courteous.is_wait_too_long());

    // A transport error of a request sent once comes back as reqwest's.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let closed = format!("http://127.0.0.1:{port}/");
    let client = |attempts| {
        reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
            .with(CourteousMiddleware::with_config(
                Config::default()
                    .max_attempts(attempts)
                    .backoff(Backoff::new(
                        Duration::from_millis(1),
                        Duration::from_millis(5),
                    )),
            ))
            .build()
    };
    let err = client(1).get(&closed).send().await.unwrap_err();
    assert!(err.is_connect(), "{err:?}");
    assert!(
        matches!(err, reqwest_middleware::Error::Reqwest(_)),
        "{err:?}"
    );

    // After retries, courteous's error keeps the attempts and the cause.
    let err = client(3).get(&closed).send().await.unwrap_err();
    let reqwest_middleware::Error::Middleware(inner) = err else {
        panic!("expected the engine's error, got {err:?}")
    };
    let courteous = inner.downcast_ref::<courteous::Error>().unwrap();
    assert!(
        courteous.is_connect() && courteous.is_request(),
        "{courteous:?}"
    );
    assert!(courteous.is_attempts_exhausted(), "{courteous:?}");
    assert_eq!(courteous.attempts(), 3);
    let message = courteous.to_string();
    assert!(
        message.starts_with(&format!("GET {closed}: could not connect: ")),
        "{message}"
    );
    assert!(message.contains("(3 attempts in "), "{message}");
}

#[tokio::test]
async fn a_final_refusal_is_the_engines_error_after_one_request() {
    let server = MockServer::start().await;
    Mock::given(path("/r"))
        .respond_with(ResponseTemplate::new(429).set_body_raw(
            r#"{"error":{"message":"You exceeded your current quota.","code":"insufficient_quota"}}"#,
            "application/json",
        ))
        .mount(&server)
        .await;
    let middleware = CourteousMiddleware::from(courteous::preset::OpenAi.layer());
    let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
        .with(middleware)
        .build();
    let err = client
        .get(format!("{}/r", server.uri()))
        .send()
        .await
        .unwrap_err();
    let reqwest_middleware::Error::Middleware(inner) = err else {
        panic!("expected the engine's error, got {err:?}")
    };
    let courteous = inner.downcast_ref::<courteous::Error>().unwrap();
    assert!(courteous.is_final_refusal(), "{courteous:?}");
    assert_eq!(
        courteous.refusal(),
        Some(&courteous::signal::Refusal::InsufficientQuota)
    );
    assert_eq!(courteous.attempts(), 1);
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}
