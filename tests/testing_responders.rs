//! The test kit's responders admit, reject and describe exactly as configured.
#![cfg(feature = "testing")]

use std::num::NonZeroU32;
use std::time::Duration;

use courteous::testing::{
    Dialect, FixedWindow, RetryAfterStyle, SlidingLog, SlidingWindowCounter, ThrottleThenOk,
    TokenBucket,
};
use futures_util::future::join_all;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Respond, ResponseTemplate};

fn nz(n: u32) -> NonZeroU32 {
    NonZeroU32::new(n).expect("non-zero")
}

async fn serve(responder: impl Respond + 'static) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(responder)
        .mount(&server)
        .await;
    server
}

async fn statuses(server: &MockServer, n: usize) -> Vec<u16> {
    let client = reqwest::Client::new();
    let mut out = Vec::new();
    for _ in 0..n {
        let response = client.get(server.uri()).send().await.expect("send");
        out.push(response.status().as_u16());
    }
    out
}

fn header<'a>(response: &'a reqwest::Response, name: &str) -> Option<&'a str> {
    response
        .headers()
        .get(name)
        .map(|v| v.to_str().expect("ascii"))
}

/// Sends until the first rejection (within 10 requests) and returns the
/// wait its `retry-after-ms` announces; the rejection says nothing is left.
async fn first_rejection_wait_ms(server: &MockServer, client: &reqwest::Client) -> u64 {
    for _ in 0..10 {
        let response = client.get(server.uri()).send().await.expect("send");
        if response.status() == 429 {
            assert_eq!(header(&response, "ratelimit-remaining"), Some("0"));
            return header(&response, "retry-after-ms")
                .expect("retry-after-ms")
                .parse()
                .expect("whole milliseconds");
        }
    }
    panic!("no rejection within 10 requests");
}

/// Sends `n` requests at once; returns how many were admitted.
async fn admitted_of_concurrent(server: &MockServer, n: usize) -> usize {
    let client = reqwest::Client::new();
    let sends = (0..n).map(|_| client.get(server.uri()).send());
    join_all(sends)
        .await
        .into_iter()
        .filter(|r| r.as_ref().expect("send").status() == 200)
        .count()
}

#[tokio::test]
async fn token_bucket_admits_its_burst_then_rejects() {
    // One token a minute: no refill can happen during the test.
    let bucket = TokenBucket::per_minute(nz(1)).burst(nz(3));
    let server = serve(bucket.clone()).await;
    assert_eq!(statuses(&server, 5).await, [200, 200, 200, 429, 429]);
    assert_eq!(
        (bucket.received(), bucket.admitted(), bucket.rejected()),
        (5, 3, 2)
    );
}

#[tokio::test]
async fn token_bucket_is_atomic_under_concurrency() {
    let bucket = TokenBucket::per_minute(nz(1)).burst(nz(20));
    let server = serve(bucket.clone()).await;
    assert_eq!(admitted_of_concurrent(&server, 50).await, 20);
    assert_eq!(bucket.admitted(), 20);
    assert_eq!(bucket.rejected(), 30);
}

#[tokio::test]
async fn token_bucket_admits_a_client_that_waits_the_hint() {
    // Two tokens a second: the second request comes well within 500 ms.
    let bucket = TokenBucket::per_second(nz(2))
        .burst(nz(1))
        .retry_after(RetryAfterStyle::Millis);
    let server = serve(bucket.clone()).await;
    let client = reqwest::Client::new();
    assert_eq!(client.get(server.uri()).send().await.unwrap().status(), 200);
    let rejected = client.get(server.uri()).send().await.unwrap();
    assert_eq!(rejected.status(), 429);
    let wait: u64 = header(&rejected, "retry-after-ms")
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (1..=500).contains(&wait),
        "one token at 2/s is at most 500 ms away, got {wait}"
    );
    tokio::time::sleep(Duration::from_millis(wait)).await;
    assert_eq!(client.get(server.uri()).send().await.unwrap().status(), 200);
}

#[tokio::test]
async fn bare_rejections_carry_no_hint_and_no_body() {
    let bucket = TokenBucket::per_minute(nz(1))
        .burst(nz(1))
        .retry_after(RetryAfterStyle::Seconds)
        .dialect(Dialect::IetfList)
        .bare();
    let server = serve(bucket).await;
    let client = reqwest::Client::new();
    client.get(server.uri()).send().await.unwrap();
    let rejected = client.get(server.uri()).send().await.unwrap();
    assert_eq!(rejected.status(), 429);
    for name in [
        "retry-after",
        "ratelimit",
        "ratelimit-policy",
        "content-type",
    ] {
        assert!(rejected.headers().get(name).is_none(), "{name} present");
    }
    assert!(rejected.bytes().await.unwrap().is_empty());
}

#[tokio::test]
async fn ietf_list_fields_describe_the_bucket() {
    let bucket = TokenBucket::per_minute(nz(1))
        .burst(nz(3))
        .dialect(Dialect::IetfList);
    let server = serve(bucket).await;
    let response = reqwest::get(server.uri()).await.unwrap();
    // One token used, 60 s to get it back; a full bucket takes 180 s.
    assert_eq!(
        header(&response, "ratelimit"),
        Some(r#""default";r=2;t=60"#)
    );
    assert_eq!(
        header(&response, "ratelimit-policy"),
        Some(r#""default";q=3;w=180"#)
    );
}

#[tokio::test]
async fn each_dialect_emits_its_own_fields() {
    let expected: [(Dialect, &[&str]); 7] = [
        (
            Dialect::IetfSeparate,
            &["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"],
        ),
        (
            Dialect::IetfSeparateLimitPolicy,
            &["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"],
        ),
        (
            Dialect::IetfSeparateWithPolicy,
            &[
                "ratelimit-limit",
                "ratelimit-remaining",
                "ratelimit-reset",
                "ratelimit-policy",
            ],
        ),
        (Dialect::IetfDictionary, &["ratelimit", "ratelimit-policy"]),
        (Dialect::IetfList, &["ratelimit", "ratelimit-policy"]),
        (
            Dialect::XRateLimit,
            &[
                "x-ratelimit-limit",
                "x-ratelimit-remaining",
                "x-ratelimit-reset",
                "x-ratelimit-used",
                "date",
            ],
        ),
        (
            Dialect::XRateLimitResetAfter,
            &[
                "x-ratelimit-limit",
                "x-ratelimit-remaining",
                "x-ratelimit-reset-after",
            ],
        ),
    ];
    for (dialect, fields) in expected {
        let server = serve(TokenBucket::per_minute(nz(1)).dialect(dialect)).await;
        let response = reqwest::get(server.uri()).await.unwrap();
        for field in fields {
            assert!(
                response.headers().get(*field).is_some(),
                "{dialect:?}: no {field}"
            );
        }
        let rate_fields = response
            .headers()
            .keys()
            .filter(|k| k.as_str().contains("ratelimit"))
            .count();
        let own = fields.iter().filter(|f| f.contains("ratelimit")).count();
        assert_eq!(rate_fields, own, "{dialect:?}: extra rate-limit fields");
    }
}

#[tokio::test]
async fn an_application_date_is_not_doubled() {
    let server = serve(TokenBucket::per_minute(nz(1)).dialect(Dialect::XRateLimit)).await;
    let response = reqwest::get(server.uri()).await.unwrap();
    assert_eq!(response.headers().get_all("date").iter().count(), 1);
}

#[tokio::test]
async fn fixed_window_admits_its_limit_per_window() {
    let window = FixedWindow::per_minute(nz(3));
    let server = serve(window.clone()).await;
    assert_eq!(statuses(&server, 5).await, [200, 200, 200, 429, 429]);
    assert_eq!((window.admitted(), window.rejected()), (3, 2));
}

#[tokio::test]
async fn fixed_window_opens_again_after_the_announced_wait() {
    let window = FixedWindow::with_window(nz(2), Duration::from_secs(1))
        .expect("non-zero window")
        .retry_after(RetryAfterStyle::XMsMillis);
    let server = serve(window.clone()).await;
    let client = reqwest::Client::new();
    let mut last = None;
    for _ in 0..3 {
        last = Some(client.get(server.uri()).send().await.unwrap());
    }
    let rejected = last.unwrap();
    assert_eq!(rejected.status(), 429);
    let wait: u64 = header(&rejected, "x-ms-retry-after-ms")
        .unwrap()
        .parse()
        .unwrap();
    assert!(wait <= 1000, "at most one window away, got {wait} ms");
    tokio::time::sleep(Duration::from_millis(wait)).await;
    assert_eq!(client.get(server.uri()).send().await.unwrap().status(), 200);
    assert_eq!((window.admitted(), window.rejected()), (3, 1));
}

#[test]
fn a_zero_window_is_refused() {
    assert!(FixedWindow::with_window(nz(1), Duration::ZERO).is_none());
}

#[tokio::test]
async fn sliding_log_admits_its_limit_in_any_window() {
    let log = SlidingLog::per_minute(nz(3)).retry_after(RetryAfterStyle::Seconds);
    let server = serve(log.clone()).await;
    assert_eq!(statuses(&server, 5).await, [200, 200, 200, 429, 429]);
    assert_eq!((log.received(), log.admitted(), log.rejected()), (5, 3, 2));
}

#[tokio::test]
async fn sliding_log_is_atomic_under_concurrency() {
    let log = SlidingLog::per_minute(nz(20));
    let server = serve(log.clone()).await;
    let admitted = admitted_of_concurrent(&server, 50).await;
    assert_eq!((admitted, log.admitted(), log.rejected()), (20, 20, 30));
}

#[tokio::test]
async fn sliding_log_admits_a_client_that_waits_the_hint() {
    let log = SlidingLog::with_window(nz(2), Duration::from_secs(1))
        .expect("non-zero window")
        .retry_after(RetryAfterStyle::Millis)
        .dialect(Dialect::IetfSeparate);
    let server = serve(log.clone()).await;
    let client = reqwest::Client::new();
    // The third request, unless the machine stalled for a whole window.
    let wait = first_rejection_wait_ms(&server, &client).await;
    assert!(
        (1..=1000).contains(&wait),
        "the oldest admission leaves within one window, got {wait} ms"
    );
    tokio::time::sleep(Duration::from_millis(wait)).await;
    assert_eq!(client.get(server.uri()).send().await.unwrap().status(), 200);
    assert_eq!(log.rejected(), 1);
}

#[test]
fn a_zero_sliding_window_is_refused() {
    assert!(SlidingLog::with_window(nz(1), Duration::ZERO).is_none());
}

#[tokio::test]
async fn sliding_window_counter_admits_its_limit_then_rejects() {
    // Across a minute's boundary too: what was just admitted still weighs
    // (nearly) whole in the next window.
    let counter = SlidingWindowCounter::per_minute(nz(3)).retry_after(RetryAfterStyle::Seconds);
    let server = serve(counter.clone()).await;
    assert_eq!(statuses(&server, 5).await, [200, 200, 200, 429, 429]);
    assert_eq!(
        (counter.received(), counter.admitted(), counter.rejected()),
        (5, 3, 2)
    );
}

#[tokio::test]
async fn sliding_window_counter_is_atomic_under_concurrency() {
    let counter = SlidingWindowCounter::per_minute(nz(20));
    let server = serve(counter.clone()).await;
    let admitted = admitted_of_concurrent(&server, 50).await;
    assert_eq!(
        (admitted, counter.admitted(), counter.rejected()),
        (20, 20, 30)
    );
}

#[tokio::test]
async fn sliding_window_counter_admits_a_client_that_waits_the_hint() {
    let counter = SlidingWindowCounter::with_window(nz(2), Duration::from_secs(1))
        .expect("non-zero window")
        .retry_after(RetryAfterStyle::Millis)
        .dialect(Dialect::IetfSeparate);
    let server = serve(counter.clone()).await;
    let client = reqwest::Client::new();
    let wait = first_rejection_wait_ms(&server, &client).await;
    // The counts leave the weighted pair within two windows.
    assert!((1..=2000).contains(&wait), "got {wait} ms");
    // The estimate only falls with time: admitted from the hinted instant on.
    tokio::time::sleep(Duration::from_millis(wait)).await;
    assert_eq!(client.get(server.uri()).send().await.unwrap().status(), 200);
    assert_eq!(counter.rejected(), 1);
}

#[test]
fn a_zero_counter_window_is_refused() {
    assert!(SlidingWindowCounter::with_window(nz(1), Duration::ZERO).is_none());
}

#[tokio::test]
async fn throttle_then_ok_rejects_exactly_n() {
    let throttle = ThrottleThenOk::new(3);
    let server = serve(throttle.clone()).await;
    assert_eq!(statuses(&server, 5).await, [429, 429, 429, 200, 200]);
    assert_eq!(
        (
            throttle.received(),
            throttle.admitted(),
            throttle.rejected()
        ),
        (5, 2, 3)
    );
}

#[tokio::test]
async fn throttle_then_ok_counts_concurrent_requests_exactly() {
    let throttle = ThrottleThenOk::new(4);
    let server = serve(throttle.clone()).await;
    // The rest answer 200.
    assert_eq!(admitted_of_concurrent(&server, 10).await, 6);
}

#[tokio::test]
async fn hints_round_up_and_combine() {
    let throttle = ThrottleThenOk::new(1)
        .wait(Duration::from_micros(1_500_100))
        .retry_after(RetryAfterStyle::Seconds)
        .retry_after(RetryAfterStyle::Millis)
        .retry_after(RetryAfterStyle::ProblemJsonMillis)
        .retry_after(RetryAfterStyle::ProblemJsonSeconds);
    let server = serve(throttle).await;
    let response = reqwest::get(server.uri()).await.unwrap();
    assert_eq!(header(&response, "retry-after"), Some("2"));
    assert_eq!(header(&response, "retry-after-ms"), Some("1501"));
    assert_eq!(
        header(&response, "content-type"),
        Some("application/problem+json")
    );
    let body: serde_json::Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(body["status"], 429);
    assert_eq!(body["retry_after_ms"], 1501);
    assert_eq!(body["retry_after"], 1.501);
}

#[tokio::test]
async fn status_and_admitted_response_are_configurable() {
    let throttle = ThrottleThenOk::new(1)
        .reject_status(http::StatusCode::SERVICE_UNAVAILABLE)
        .retry_after(RetryAfterStyle::ProblemJsonMillis)
        .admitted_response(ResponseTemplate::new(201).set_body_string("made"));
    let server = serve(throttle).await;
    let client = reqwest::Client::new();
    let rejected = client.get(server.uri()).send().await.unwrap();
    assert_eq!(rejected.status(), 503);
    let problem: serde_json::Value =
        serde_json::from_slice(&rejected.bytes().await.unwrap()).unwrap();
    assert_eq!(
        problem["type"],
        "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"
    );
    let admitted = client.get(server.uri()).send().await.unwrap();
    assert_eq!(admitted.status(), 201);
    assert_eq!(admitted.text().await.unwrap(), "made");
}

#[test]
fn responders_are_debug() {
    let text = format!("{:?}", TokenBucket::per_second(nz(5)));
    assert!(text.contains("TokenBucket"));
    let text = format!("{:?}", SlidingLog::per_second(nz(5)));
    assert!(text.contains("SlidingLog"));
}

#[tokio::test]
async fn early_drafts_can_carry_the_policy_in_the_limit_field() {
    let bucket = TokenBucket::per_minute(nz(1))
        .burst(nz(3))
        .dialect(Dialect::IetfSeparateLimitPolicy);
    let server = serve(bucket).await;
    let response = reqwest::get(server.uri()).await.unwrap();
    assert_eq!(header(&response, "ratelimit-limit"), Some("3, 3;w=180"));
    assert_eq!(header(&response, "ratelimit-remaining"), Some("2"));
    assert_eq!(header(&response, "ratelimit-reset"), Some("60"));
}

#[test]
fn dialect_list_is_complete_and_policies_are_flagged() {
    let with_policy: Vec<_> = Dialect::ALL
        .into_iter()
        .filter(|d| d.states_policy())
        .collect();
    assert_eq!(
        with_policy,
        [
            Dialect::IetfSeparateLimitPolicy,
            Dialect::IetfSeparateWithPolicy,
            Dialect::IetfDictionary,
            Dialect::IetfList
        ]
    );
}
