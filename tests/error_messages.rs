//! The messages of the failures a new user meets first (a closed port, a
//! wait beyond `max_wait`, a refused POST, a give-up after every attempt),
//! against wiremock on real sockets: each names the request, what
//! happened, what it cost and the setting that decided it, and its
//! predicates agree. `--nocapture` prints them.

use std::time::Duration;

use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn serve(template: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(template)
        .mount(&server)
        .await;
    server
}

fn fast_backoff() -> courteous::ClientBuilder {
    courteous::Client::builder().backoff(courteous::Backoff::new(
        Duration::from_millis(1),
        Duration::from_millis(5),
    ))
}

fn assert_says(err: &courteous::Error, parts: &[&str]) {
    let message = err.to_string();
    println!("{message}");
    for part in parts {
        assert!(message.contains(part), "{part:?} missing from {message:?}");
    }
    // Debug-formatted durations (`121.99993141s`, `850ns`) are gone.
    let digit_before = |unit: &str| {
        message
            .match_indices(unit)
            .any(|(at, _)| message[..at].ends_with(|c: char| c.is_ascii_digit()))
    };
    assert!(
        !digit_before("ns") && !digit_before("µs") && !digit_before("s"),
        "a raw duration in {message:?}"
    );
}

#[tokio::test]
async fn a_closed_port_names_the_url_the_cause_and_the_attempts() {
    let url = format!("http://127.0.0.1:{}/x", closed_port());
    let err = fast_backoff().build().get(&url).send().await.unwrap_err();
    assert!(err.is_request() && err.is_connect(), "{err:?}");
    assert!(err.is_attempts_exhausted(), "{err:?}");
    assert_eq!(err.attempts(), 5);
    assert_eq!(err.url().map(|u| u.as_str()), Some(url.as_str()));
    let expected = format!("GET {url}: could not connect: ");
    assert_says(
        &err,
        &[
            &expected,
            "(5 attempts in ",
            "gave up: max_attempts (5) reached",
        ],
    );
    // The innermost cause is the OS's (its wording is the platform's).
    let cause = std::iter::successors(std::error::Error::source(&err), |e| e.source())
        .last()
        .unwrap()
        .to_string();
    assert!(err.to_string().contains(&cause), "{err}");
}

#[tokio::test]
async fn a_spent_quota_beyond_max_wait_says_who_asked_and_the_limit() {
    let server = serve(
        ResponseTemplate::new(200)
            .insert_header("x-ratelimit-limit", "10")
            .insert_header("x-ratelimit-remaining", "0")
            .insert_header("x-ratelimit-reset", "122")
            // GitHub's: a fixed window, waited out, not probed before its
            // reset (`Quota::fixed_window`).
            .insert_header("x-ratelimit-resource", "core"),
    )
    .await;
    let client = courteous::Client::new();
    client.get(server.uri()).send().await.unwrap();
    let err = client.get(server.uri()).send().await.unwrap_err();
    assert!(err.is_wait_too_long() && err.attempts() == 0, "{err:?}");
    assert_says(
        &err,
        &[
            "GET http://127.0.0.1:",
            "not sent: the quota read from the server's responses has no request left for 12",
            "longer than max_wait (60 s)",
        ],
    );

    let server = serve(ResponseTemplate::new(429).insert_header("retry-after", "3600")).await;
    let err = courteous::Client::new()
        .get(server.uri())
        .send()
        .await
        .unwrap_err();
    assert!(err.is_wait_too_long() && err.attempts() == 1, "{err:?}");
    assert_says(
        &err,
        &[
            "refused with 429 Too Many Requests after 1 attempt",
            "gave up: the server asked to wait 3600 s, longer than max_wait (60 s)",
        ],
    );
}

#[tokio::test]
async fn a_refused_post_names_idempotency_key() {
    let server = serve(ResponseTemplate::new(429).insert_header("retry-after-ms", "50")).await;
    let err = courteous::Client::new()
        .post(format!("{}/orders", server.uri()))
        .body("{}")
        .send()
        .await
        .unwrap_err();
    assert!(err.is_rate_limited() && err.attempts() == 1, "{err:?}");
    assert_says(
        &err,
        &[
            "POST http://127.0.0.1:",
            "/orders: refused with 429 Too Many Requests (the server asked to wait 50 ms)",
            "not sent again: a POST is sent again only with an Idempotency-Key",
            "idempotency_key",
        ],
    );
}

#[tokio::test]
async fn a_give_up_after_every_attempt_names_max_attempts() {
    let server = serve(ResponseTemplate::new(429).insert_header("retry-after-ms", "10")).await;
    let err = fast_backoff()
        .build()
        .get(server.uri())
        .send()
        .await
        .unwrap_err();
    assert!(
        err.is_attempts_exhausted() && err.attempts() == 5,
        "{err:?}"
    );
    assert_says(
        &err,
        &[
            "refused with 429 Too Many Requests after 5 attempts in ",
            "gave up: max_attempts (5) reached",
        ],
    );
}
