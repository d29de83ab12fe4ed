//! Every header style's 429 (and 200) parses back with the SDK's parser,
//! `courteous::signal::parse`, to the numbers the server meant.

mod common;

use std::time::Duration;

use common::{Backend, client, fresh_keys, get_as};
use courteous::signal::{QuotaSource, parse};
use demo_server::problem::{PROBLEM_JSON, QUOTA_EXCEEDED, RATE_LIMITED};
use demo_server::{Algorithm, HeaderStyle, Policy, ServerConfig, spawn};

/// Capacity 3 refilled 0.5/s: after 3 requests the next token is 2 s away
/// (`Retry-After: 2`) and a full bucket 6 s away.
fn policy() -> Policy {
    Policy::bucket(Algorithm::TokenBucket, 3, 0.5).unwrap()
}

fn between(d: Duration, low_ms: u64, high_ms: u64) -> bool {
    d >= Duration::from_millis(low_ms) && d <= Duration::from_millis(high_ms)
}

async fn check_style(backend: &Backend, style: HeaderStyle) {
    let config = ServerConfig::new(policy())
        .headers(style)
        .keys(fresh_keys());
    let server = spawn(config, backend.store().await).await.unwrap();
    let client = client();
    let url = server.url();

    let first = get_as(&client, &url, b"parse-back").await;
    assert_eq!(first.status, 200);
    let signal = parse(first.status, &first.headers, Some(&first.body));
    assert!(
        signal.retry_after().is_none(),
        "{style:?}: no wait on a 200"
    );
    let quota = signal
        .quota()
        .unwrap_or_else(|| panic!("{style:?}: quota on a 200"));
    assert_eq!(
        (quota.limit(), quota.remaining()),
        (Some(3), Some(2)),
        "{style:?}"
    );

    get_as(&client, &url, b"parse-back").await;
    get_as(&client, &url, b"parse-back").await;
    let rejected = get_as(&client, &url, b"parse-back").await;
    assert_eq!(rejected.status, 429);
    assert_eq!(rejected.headers["retry-after"], "2");
    assert_eq!(rejected.headers["content-type"], PROBLEM_JSON);
    let body = rejected.json();
    let retry_ms = body["retry_after_ms"].as_u64().expect("retry_after_ms");
    assert!((1000..=2000).contains(&retry_ms), "{retry_ms}");
    assert_eq!(body["status"], 429);

    let signal = parse(rejected.status, &rejected.headers, Some(&rejected.body));
    let wait = signal.retry_after().expect("a wait on a 429").delay();
    assert!(between(wait, 1000, 2000), "{style:?}: wait {wait:?}");
    let quota = signal.quota().expect("quota on a 429");
    assert_eq!(
        (quota.limit(), quota.remaining()),
        (Some(3), Some(0)),
        "{style:?}"
    );
    let reset = quota.reset().expect("reset");
    // 6 s to a full bucket; the epoch form may round up by one more second.
    assert!(between(reset, 5000, 8000), "{style:?}: reset {reset:?}");

    match style {
        HeaderStyle::Ietf => {
            assert_eq!(quota.source(), QuotaSource::IetfList);
            assert_eq!(quota.name(), Some("default"));
            assert_eq!(quota.window(), Some(Duration::from_secs(6)));
            assert_eq!(body["type"], QUOTA_EXCEEDED);
            assert_eq!(body["violated-policies"][0], "default");
        }
        HeaderStyle::IetfLegacy => {
            assert_eq!(quota.source(), QuotaSource::IetfSeparate);
            assert_eq!(body["type"], RATE_LIMITED);
        }
        HeaderStyle::XRatelimit => {
            assert_eq!(quota.source(), QuotaSource::XRateLimit);
            assert_eq!(body["type"], RATE_LIMITED);
        }
        HeaderStyle::RetryAfter
        | HeaderStyle::Bare
        | HeaderStyle::ProblemOnly
        | HeaderStyle::HttpDate
        | HeaderStyle::UsedSize => unreachable!("styles with a quota only"),
        HeaderStyle::All => {
            assert!(!signal.policies().is_empty());
            for p in signal.policies() {
                assert_eq!(
                    (p.limit(), p.remaining()),
                    (Some(3), Some(0)),
                    "{:?}",
                    p.source()
                );
            }
            assert_eq!(body["type"], QUOTA_EXCEEDED);
        }
    }
}

#[tokio::test]
async fn every_style_parses_back_on_redis() {
    let backend = Backend::redis();
    for style in HeaderStyle::WITH_QUOTA {
        check_style(&backend, style).await;
    }
}

#[tokio::test]
async fn every_style_parses_back_on_memory() {
    let backend = Backend::memory();
    for style in HeaderStyle::WITH_QUOTA {
        check_style(&backend, style).await;
    }
}

/// `retry-after`: a 429 says only `Retry-After`; `bare`: nothing at all.
async fn check_hint_styles(backend: &Backend) {
    for (style, wait) in [
        (HeaderStyle::RetryAfter, Some(Duration::from_secs(2))),
        (HeaderStyle::Bare, None),
    ] {
        let config = ServerConfig::new(policy())
            .headers(style)
            .keys(fresh_keys());
        let server = spawn(config, backend.store().await).await.unwrap();
        let (client, url) = (client(), server.url());
        let first = get_as(&client, &url, b"hints").await;
        assert_eq!(first.status, 200);
        let signal = parse(first.status, &first.headers, Some(&first.body));
        assert!(signal.quota().is_none(), "{style:?}: no quota fields");
        get_as(&client, &url, b"hints").await;
        get_as(&client, &url, b"hints").await;
        let rejected = get_as(&client, &url, b"hints").await;
        assert_eq!(rejected.status, 429);
        assert!(rejected.json().get("retry_after_ms").is_none(), "{style:?}");
        let signal = parse(rejected.status, &rejected.headers, Some(&rejected.body));
        assert!(signal.quota().is_none(), "{style:?}: no quota fields");
        assert_eq!(signal.retry_after().map(|h| h.delay()), wait, "{style:?}");
    }
}

#[tokio::test]
async fn hint_styles_say_only_what_they_promise_on_redis() {
    check_hint_styles(&Backend::redis()).await;
}

#[tokio::test]
async fn hint_styles_say_only_what_they_promise_on_memory() {
    check_hint_styles(&Backend::memory()).await;
}
