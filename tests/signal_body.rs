//! When and how much of a body the parser reads.

use std::time::Duration;

use courteous::signal::{HintSource, SignalParser};
use http::{HeaderMap, HeaderValue, StatusCode};

const PROBLEM: &[u8] = br#"{"title":"Too Many Requests","status":429,"retry_after_ms":50}"#;

fn headers(content_type: &'static str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("content-type", HeaderValue::from_static(content_type));
    headers
}

#[test]
fn wants_bodies_of_error_responses_with_a_json_media_type() {
    let parser = SignalParser::new();
    let problem = headers("application/problem+json");
    assert!(parser.wants_body(StatusCode::TOO_MANY_REQUESTS, &problem));
    assert!(parser.wants_body(
        StatusCode::SERVICE_UNAVAILABLE,
        &headers("application/json; charset=utf-8")
    ));
    assert!(!parser.wants_body(StatusCode::OK, &problem));
    assert!(!parser.wants_body(StatusCode::TOO_MANY_REQUESTS, &headers("text/html")));
    assert!(!parser.wants_body(StatusCode::TOO_MANY_REQUESTS, &HeaderMap::new()));
    assert!(
        !SignalParser::new()
            .body_limit(0)
            .wants_body(StatusCode::TOO_MANY_REQUESTS, &problem)
    );
}

#[test]
fn a_problem_body_is_the_wait() {
    let signal = SignalParser::new().parse(
        StatusCode::TOO_MANY_REQUESTS,
        &headers("application/problem+json"),
        Some(PROBLEM),
    );
    let hint = signal.retry_after().unwrap();
    assert_eq!(
        (hint.delay(), hint.source()),
        (Duration::from_millis(50), HintSource::ProblemRetryAfterMs)
    );
}

#[test]
fn bodies_the_parser_does_not_want_are_not_read() {
    let parser = SignalParser::new();
    let ok = parser.parse(StatusCode::OK, &headers("application/json"), Some(PROBLEM));
    assert!(ok.is_empty());
    let html = parser.parse(
        StatusCode::TOO_MANY_REQUESTS,
        &headers("text/html"),
        Some(PROBLEM),
    );
    assert!(html.is_empty());
}

#[test]
fn only_the_prefix_within_the_limit_is_read() {
    let problem = headers("application/problem+json");
    let status = StatusCode::TOO_MANY_REQUESTS;
    let exact = SignalParser::new().body_limit(PROBLEM.len());
    assert!(
        exact
            .parse(status, &problem, Some(PROBLEM))
            .retry_after()
            .is_some()
    );
    let short = SignalParser::new().body_limit(PROBLEM.len() - 1);
    assert_eq!(short.max_body_bytes(), PROBLEM.len() - 1);
    assert!(short.parse(status, &problem, Some(PROBLEM)).is_empty());
}

#[test]
fn a_hint_in_a_body_longer_than_the_limit_is_still_found_in_the_prefix() {
    // A parser reading a prefix sees the leading members even when the
    // caller hands it more; a prefix that cuts the JSON yields nothing.
    let mut padded = PROBLEM.to_vec();
    padded.extend(std::iter::repeat_n(b' ', 1000));
    let parser = SignalParser::new().body_limit(PROBLEM.len() + 10);
    let signal = parser.parse(
        StatusCode::TOO_MANY_REQUESTS,
        &headers("application/problem+json"),
        Some(&padded),
    );
    assert_eq!(
        signal.retry_after().unwrap().delay(),
        Duration::from_millis(50)
    );
}
