//! Each preset's classification through the client against wiremock,
//! counting the requests sent: final refusals that look like throttling
//! (OpenAI's `insufficient_quota`, a per-day Google quota, an AWS error code
//! that is not a throttle, `x-should-retry: false`) come back at once as
//! typed errors (`is_final_refusal`) and are never retried, while the same
//! API's throttling is retried.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use courteous::preset;
use courteous::signal::Refusal;
use courteous::{ClientBuilder, RetryReport};
use http::StatusCode;
use tower::{Layer, ServiceExt};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A server that answers `first` once, then 200.
async fn serve(first: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(first)
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_string("{}"))
        .with_priority(2)
        .mount(&server)
        .await;
    server
}

/// Sends one GET through `builder`'s client; the status, the report and
/// the requests the server received.
async fn send(builder: ClientBuilder, first: ResponseTemplate) -> (StatusCode, RetryReport, usize) {
    let server = serve(first).await;
    // A refusal without a hint waits 10 ms, not the default second.
    let client = builder.unhinted_wait(Duration::from_millis(10)).build();
    let response = match client.get(server.uri()).send().await {
        Ok(response) => response,
        Err(err) => panic!("unexpected error: {err}"),
    };
    let report = response.extensions().get::<RetryReport>().unwrap().clone();
    let received = server.received_requests().await.unwrap().len();
    (response.status(), report, received)
}

/// Sends one GET through `builder`'s client, which must fail with a final
/// refusal; the error and the requests the server received.
async fn refuse(builder: ClientBuilder, first: ResponseTemplate) -> (courteous::Error, usize) {
    let server = serve(first).await;
    let client = builder.unhinted_wait(Duration::from_millis(10)).build();
    let err = match client.get(server.uri()).send().await {
        Ok(response) => panic!("expected a final refusal, got {}", response.status()),
        Err(err) => err,
    };
    assert!(err.is_final_refusal(), "{err:?}");
    assert!(!err.is_rate_limited(), "{err:?}");
    assert_eq!(err.attempts(), 1, "{err}");
    let received = server.received_requests().await.unwrap().len();
    (err, received)
}

fn json(status: u16, body: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_raw(body.to_owned(), "application/json")
}

#[tokio::test]
async fn openai_insufficient_quota_is_final_and_a_rate_limit_is_retried() {
    let out_of_credit = json(
        429,
        r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#,
    );
    let (err, received) = refuse(preset::OpenAi.client(), out_of_credit).await;
    assert_eq!(received, 1);
    assert_eq!(err.status(), Some(StatusCode::TOO_MANY_REQUESTS));
    assert_eq!(err.refusal(), Some(&Refusal::InsufficientQuota));
    assert_eq!(
        err.refusal_message(),
        Some("You exceeded your current quota, please check your plan and billing details.")
    );
    let message = err.to_string();
    assert!(message.starts_with("GET http://127.0.0.1:"), "{message}");
    assert!(
        message.contains(
            "refused for good: insufficient_quota (You exceeded your current quota, please \
             check your plan and billing details.) with 429 Too Many Requests after 1 attempt"
        ),
        "{message}"
    );
    // The response rides inside, its body whole (the prefix read for hints
    // was chained back).
    let response = err.into_response().unwrap();
    let report = response.extensions().get::<RetryReport>().unwrap().clone();
    assert_eq!(report.gave_up(), Some(courteous::GiveUpReason::Refused));
    assert!(
        response
            .text()
            .await
            .unwrap()
            .ends_with(r#""code":"insufficient_quota"}}"#)
    );

    // With GiveUpMode::Response it is the response, as every give-up.
    let out_of_credit = json(429, r#"{"error":{"code":"insufficient_quota"}}"#);
    let as_response = preset::OpenAi
        .client()
        .give_up(courteous::GiveUpMode::Response);
    let (status, report, received) = send(as_response, out_of_credit).await;
    assert_eq!(
        (status, received, report.gave_up()),
        (
            StatusCode::TOO_MANY_REQUESTS,
            1,
            Some(courteous::GiveUpReason::Refused)
        )
    );

    let limited = json(
        429,
        r#"{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}"#,
    )
    .insert_header("retry-after-ms", "20");
    let (status, report, received) = send(preset::OpenAi.client(), limited).await;
    assert_eq!(
        (status, received, report.attempts()),
        (StatusCode::OK, 2, 2)
    );

    // Without the preset, the out-of-credit 429 is retried.
    let out_of_credit = json(429, r#"{"error":{"code":"insufficient_quota"}}"#);
    let (_, _, received) = send(courteous::Client::builder(), out_of_credit).await;
    assert_eq!(received, 2);
}

#[tokio::test]
async fn x_should_retry_false_is_final() {
    let refused = ResponseTemplate::new(500).insert_header("x-should-retry", "false");
    let (err, received) = refuse(preset::Anthropic.client(), refused).await;
    assert_eq!(received, 1);
    assert_eq!(err.status(), Some(StatusCode::INTERNAL_SERVER_ERROR));
    assert_eq!(err.refusal(), None);
    let message = err.to_string();
    assert!(
        message.contains("refused for good: x-should-retry: false with 500"),
        "{message}"
    );
    // On a response that would not be retried anyway, it is the answer.
    let answer = ResponseTemplate::new(200).insert_header("x-should-retry", "false");
    let (status, _, received) = send(preset::OpenAi.client(), answer).await;
    assert_eq!((status, received), (StatusCode::OK, 1));
    // A 500 without it is retried, as the SDK does.
    let (status, _, received) = send(preset::Anthropic.client(), ResponseTemplate::new(500)).await;
    assert_eq!((status, received), (StatusCode::OK, 2));
}

#[tokio::test]
async fn anthropic_529_overloaded_is_throttled() {
    let overloaded = json(
        529,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    )
    .insert_header("retry-after", "0");
    let (status, report, received) = send(preset::Anthropic.client(), overloaded).await;
    assert_eq!(
        (status, received, report.throttled()),
        (StatusCode::OK, 2, 1)
    );
}

#[tokio::test]
async fn google_per_day_quota_is_final_and_per_minute_is_waited() {
    let per_day = json(
        429,
        r#"{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED","details":[
        {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]},
        {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0.020s"}]}}"#,
    );
    let (err, received) = refuse(preset::Google.client(), per_day).await;
    assert_eq!(received, 1);
    assert_eq!(err.status(), Some(StatusCode::TOO_MANY_REQUESTS));
    match err.refusal() {
        Some(Refusal::QuotaFailure {
            quota_ids, per_day, ..
        }) => {
            assert!(*per_day);
            assert_eq!(
                quota_ids,
                &["GenerateRequestsPerDayPerProjectPerModel-FreeTier"]
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.refusal_message(), Some("Quota exceeded"));
    assert!(
        err.to_string().contains(
            "refused for good: per-day quota exceeded \
             (GenerateRequestsPerDayPerProjectPerModel-FreeTier) (Quota exceeded)"
        ),
        "{err}"
    );

    let per_minute = json(
        429,
        r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[
        {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},
        {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0.020s"}]}}"#,
    );
    let (status, report, received) = send(preset::Google.client(), per_minute).await;
    assert_eq!(
        (status, received, report.throttled()),
        (StatusCode::OK, 2, 1)
    );

    let legacy_rate = json(
        403,
        r#"{"error":{"errors":[{"domain":"usageLimits","reason":"userRateLimitExceeded","message":"User Rate Limit Exceeded"}],"code":403}}"#,
    );
    let (status, _, received) = send(preset::Google.client(), legacy_rate).await;
    assert_eq!((status, received), (StatusCode::OK, 2));
    let daily = json(
        403,
        r#"{"error":{"errors":[{"domain":"usageLimits","reason":"dailyLimitExceeded"}],"code":403}}"#,
    );
    let (err, received) = refuse(preset::Google.client(), daily).await;
    assert_eq!((err.status(), received), (Some(StatusCode::FORBIDDEN), 1));
    // A 403 for permissions is the answer, not an error.
    let denied = json(
        403,
        r#"{"error":{"errors":[{"domain":"global","reason":"forbidden"}],"code":403}}"#,
    );
    let (status, _, received) = send(preset::Google.client(), denied).await;
    assert_eq!((status, received), (StatusCode::FORBIDDEN, 1));
}

#[tokio::test]
async fn aws_throttling_codes_are_retried_and_other_codes_are_final() {
    let validation = ResponseTemplate::new(400).set_body_raw(
        r#"{"__type":"com.amazon.coral.validate#ValidationException","message":"1 validation error detected"}"#,
        "application/x-amz-json-1.1",
    );
    let (err, received) = refuse(preset::Aws.client(), validation).await;
    assert_eq!((err.status(), received), (Some(StatusCode::BAD_REQUEST), 1));
    assert!(
        matches!(err.refusal(), Some(Refusal::Aws { code, .. }) if code == "ValidationException"),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("refused for good: ValidationException (1 validation error detected)"),
        "{err}"
    );

    let throttled = ResponseTemplate::new(400).set_body_raw(
        r#"{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"Rate exceeded"}"#,
        "application/x-amz-json-1.0",
    );
    let (status, _, received) = send(preset::Aws.client(), throttled).await;
    assert_eq!((status, received), (StatusCode::OK, 2));

    let slow_down = ResponseTemplate::new(503).set_body_raw(
        "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>",
        "application/xml",
    );
    let (status, _, received) = send(preset::Aws.client(), slow_down).await;
    assert_eq!((status, received), (StatusCode::OK, 2));

    // An access-denied 403 (a REST-JSON service's header) is final.
    let denied = ResponseTemplate::new(403).insert_header(
        "x-amzn-errortype",
        "AccessDeniedException:http://internal.amazon.com/",
    );
    let (err, received) = refuse(preset::Aws.client(), denied).await;
    assert_eq!((err.status(), received), (Some(StatusCode::FORBIDDEN), 1));
    assert!(
        matches!(err.refusal(), Some(Refusal::Aws { code, .. }) if code == "AccessDeniedException"),
        "{err:?}"
    );
}

#[tokio::test]
async fn the_tower_layer_gives_up_on_a_final_refusal_at_once() {
    let out_of_credit = json(
        429,
        r#"{"error":{"message":"You exceeded your current quota.","code":"insufficient_quota"}}"#,
    );
    let server = serve(out_of_credit).await;
    let service = preset::OpenAi.layer().layer(reqwest::Client::new());
    let request = reqwest::Request::new(http::Method::GET, server.uri().parse().unwrap());
    let err = service.clone().oneshot(request).await.unwrap_err();
    assert!(err.is_final_refusal(), "{err:?}");
    assert_eq!(err.refusal(), Some(&Refusal::InsufficientQuota));
    assert_eq!(
        err.refusal_message(),
        Some("You exceeded your current quota.")
    );
    assert_eq!(
        (err.attempts(), err.status()),
        (1, Some(StatusCode::TOO_MANY_REQUESTS))
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    // The scope is not paused: the next request goes out at once and gets
    // the server's 200.
    let stats = service.stats();
    assert_eq!(stats.len(), 1);
    assert_eq!(
        (stats[0].1.gave_up(), stats[0].1.throttled()),
        (1, 0),
        "{stats:?}"
    );
    let request = reqwest::Request::new(http::Method::GET, server.uri().parse().unwrap());
    let response = service.oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn x_420_is_throttled() {
    let calm = ResponseTemplate::new(420).insert_header("retry-after", "0");
    let (status, _, received) = send(preset::X.client(), calm).await;
    assert_eq!((status, received), (StatusCode::OK, 2));
}

#[tokio::test]
async fn shopify_fractional_retry_after_is_the_wait() {
    let shopify = ResponseTemplate::new(429).insert_header("retry-after", "0.05");
    let server = serve(shopify).await;
    let waits = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&waits);
    let client = preset::Shopify
        .client()
        .on_retry(move |event| seen.lock().unwrap().push(event.wait()))
        .build();
    let response = client.get(server.uri()).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
    // The engine's wait before the retry comes from the fractional header
    // (plus the engine's margin), not from the 1 s assumed without a hint.
    let waits = waits.lock().unwrap().clone();
    assert_eq!(waits.len(), 1);
    assert!(
        waits[0] >= Duration::from_millis(50) && waits[0] < Duration::from_millis(500),
        "{waits:?}"
    );
}

#[tokio::test]
async fn github_graphql_rate_limited_is_throttled() {
    let graphql = json(
        403,
        r#"{"errors":[{"type":"RATE_LIMITED","message":"API rate limit exceeded for user ID 1."}]}"#,
    );
    let (status, _, received) = send(preset::GitHub.client(), graphql).await;
    assert_eq!((status, received), (StatusCode::OK, 2));
}
