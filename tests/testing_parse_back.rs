//! What the test kit's responders emit reads back, through the SDK's own
//! parser, as the wait and quota they meant.
#![cfg(feature = "testing")]

use std::num::NonZeroU32;
use std::time::Duration;

use courteous::signal::{self, HintSource, QuotaSource, Signal};
use courteous::testing::{
    Dialect, FixedWindow, RetryAfterStyle, SlidingLog, ThrottleThenOk, TokenBucket,
};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Respond};

fn nz(n: u32) -> NonZeroU32 {
    NonZeroU32::new(n).expect("non-zero")
}

/// The signal of the first response a fresh mock server gives.
async fn first_signal(responder: impl Respond + 'static) -> (u16, Signal) {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(responder)
        .mount(&server)
        .await;
    let response = reqwest::get(server.uri()).await.expect("send");
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.bytes().await.expect("body");
    let signal = signal::parse(status, &headers, Some(&body));
    (status.as_u16(), signal)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[tokio::test]
async fn every_hint_style_reads_back_as_its_wait() {
    // 1.5 s announced: whole-second shapes round it up, never down.
    let cases = [
        (
            RetryAfterStyle::Seconds,
            HintSource::RetryAfterSeconds,
            ms(2000),
            ms(2000),
        ),
        // Date rounded up to the next second, measured from the local clock
        // (it agrees with `Date`'s second: same machine), or from the
        // floored `Date` when the response crossed a second in transit.
        (
            RetryAfterStyle::HttpDate,
            HintSource::RetryAfterDate,
            ms(1500),
            ms(3000),
        ),
        (
            RetryAfterStyle::HttpDateRfc850,
            HintSource::RetryAfterDate,
            ms(1500),
            ms(3000),
        ),
        (
            RetryAfterStyle::HttpDateAsctime,
            HintSource::RetryAfterDate,
            ms(1500),
            ms(3000),
        ),
        (
            RetryAfterStyle::Millis,
            HintSource::RetryAfterMs,
            ms(1500),
            ms(1500),
        ),
        (
            RetryAfterStyle::XMsMillis,
            HintSource::XMsRetryAfterMs,
            ms(1500),
            ms(1500),
        ),
        (
            RetryAfterStyle::ProblemJsonMillis,
            HintSource::ProblemRetryAfterMs,
            ms(1500),
            ms(1500),
        ),
        (
            RetryAfterStyle::ProblemJsonSeconds,
            HintSource::ProblemRetryAfter,
            ms(1500),
            ms(1500),
        ),
    ];
    for (style, source, at_least, at_most) in cases {
        let throttle = ThrottleThenOk::new(1).wait(ms(1500)).retry_after(style);
        let (status, signal) = first_signal(throttle).await;
        assert_eq!(status, 429);
        let hint = signal
            .retry_after()
            .unwrap_or_else(|| panic!("{style:?}: no hint"));
        assert_eq!(hint.source(), source, "{style:?}");
        assert!(
            (at_least..=at_most).contains(&hint.delay()),
            "{style:?}: {:?} not in {at_least:?}..={at_most:?}",
            hint.delay()
        );
    }
}

#[tokio::test]
async fn a_bare_rejection_reads_back_empty() {
    let (status, signal) = first_signal(ThrottleThenOk::new(1)).await;
    assert_eq!(status, 429);
    assert!(signal.is_empty(), "{signal:?}");
}

#[tokio::test]
async fn every_dialect_reads_back_as_the_bucket() {
    // Three tokens, one a minute: the first response leaves 2, and the used
    // token is 60 s away; a full bucket takes 180 s.
    let cases = [
        (Dialect::IetfSeparate, QuotaSource::IetfSeparate, false),
        (
            Dialect::IetfSeparateLimitPolicy,
            QuotaSource::IetfSeparate,
            true,
        ),
        (
            Dialect::IetfSeparateWithPolicy,
            QuotaSource::IetfSeparate,
            true,
        ),
        (Dialect::IetfDictionary, QuotaSource::IetfDictionary, true),
        (Dialect::IetfList, QuotaSource::IetfList, true),
        (Dialect::XRateLimit, QuotaSource::XRateLimit, false),
        (
            Dialect::XRateLimitResetAfter,
            QuotaSource::XRateLimit,
            false,
        ),
    ];
    for (dialect, source, has_policy) in cases {
        assert_eq!(dialect.states_policy(), has_policy, "{dialect:?}");
        let bucket = TokenBucket::per_minute(nz(1)).burst(nz(3)).dialect(dialect);
        let (status, signal) = first_signal(bucket).await;
        assert_eq!(status, 200);
        assert!(
            signal.retry_after().is_none(),
            "{dialect:?}: a hint on a 200"
        );
        let quota = signal
            .quota()
            .unwrap_or_else(|| panic!("{dialect:?}: no quota"));
        assert_eq!(quota.source(), source, "{dialect:?}");
        assert_eq!(quota.limit(), Some(3), "{dialect:?}");
        assert_eq!(quota.remaining(), Some(2), "{dialect:?}");
        let reset = quota
            .reset()
            .unwrap_or_else(|| panic!("{dialect:?}: no reset"));
        // Epoch resets are whole seconds against a whole-second `Date`.
        assert!(
            (ms(59_000)..=ms(61_000)).contains(&reset),
            "{dialect:?}: reset {reset:?}"
        );
        if has_policy {
            assert_eq!(
                quota.window(),
                Some(Duration::from_secs(180)),
                "{dialect:?}"
            );
        }
    }
}

#[tokio::test]
async fn an_exhausted_bucket_says_zero_remaining_and_when_to_return() {
    // Four tokens a second: five quick requests empty it.
    let bucket = TokenBucket::per_second(nz(4))
        .dialect(Dialect::IetfList)
        .retry_after(RetryAfterStyle::ProblemJsonMillis);
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(bucket.clone())
        .mount(&server)
        .await;
    let client = reqwest::Client::new();
    let mut last = None;
    while bucket.rejected() == 0 && bucket.received() < 100 {
        last = Some(client.get(server.uri()).send().await.expect("send"));
    }
    let response = last.expect("a response");
    assert_eq!(response.status(), 429);
    let (status, headers) = (response.status(), response.headers().clone());
    let body = response.bytes().await.unwrap();
    let signal = signal::parse(status, &headers, Some(&body));
    let quota = signal.quota().expect("quota");
    assert_eq!(quota.remaining(), Some(0));
    assert_eq!(quota.rate(), Some(4.0));
    let hint = signal.retry_after().expect("hint");
    assert!(
        hint.delay() > Duration::ZERO && hint.delay() <= ms(250),
        "{hint:?}"
    );
    assert_eq!(signal.violated_policies(), ["default"]);
}

#[tokio::test]
async fn a_fixed_window_reads_back_as_its_policy() {
    let window = FixedWindow::per_minute(nz(3)).dialect(Dialect::IetfList);
    let (status, signal) = first_signal(window).await;
    assert_eq!(status, 200);
    let quota = signal.quota().expect("quota");
    assert_eq!(quota.limit(), Some(3));
    assert_eq!(quota.remaining(), Some(2));
    assert_eq!(quota.window(), Some(Duration::from_secs(60)));
    assert_eq!(quota.reset(), Some(Duration::from_secs(60)));
    assert_eq!(quota.rate(), Some(3.0 / 60.0));
}

#[tokio::test]
async fn a_sliding_log_reads_back_as_its_policy() {
    let log = SlidingLog::per_minute(nz(3)).dialect(Dialect::IetfList);
    let (status, signal) = first_signal(log).await;
    assert_eq!(status, 200);
    let quota = signal.quota().expect("quota");
    assert_eq!(quota.limit(), Some(3));
    assert_eq!(quota.remaining(), Some(2));
    assert_eq!(quota.window(), Some(Duration::from_secs(60)));
    // The one admission leaves the window a minute later.
    assert_eq!(quota.reset(), Some(Duration::from_secs(60)));
}

#[tokio::test]
async fn seconds_rounded_to_the_nearest_can_say_zero() {
    for (wait, said) in [(ms(400), 0), (ms(600), 1), (ms(1400), 1)] {
        let throttle = ThrottleThenOk::new(1)
            .wait(wait)
            .retry_after(RetryAfterStyle::SecondsNearest);
        let (status, signal) = first_signal(throttle).await;
        assert_eq!(status, 429);
        let hint = signal.retry_after().expect("a hint");
        assert_eq!(hint.delay(), Duration::from_secs(said), "{wait:?}");
    }
}

#[tokio::test]
async fn a_clock_aligned_window_ends_at_the_next_whole_second() {
    let window = FixedWindow::per_second(nz(50))
        .aligned_to_clock()
        .dialect(Dialect::XRateLimit);
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(window.clone())
        .mount(&server)
        .await;
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let response = reqwest::get(server.uri()).await.expect("send");
    let after = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let reset: u64 = response.headers()["x-ratelimit-reset"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    // The window that held the request ends at a whole second: the one
    // after `before`, or after `after` if the request crossed a second.
    assert!(
        reset == before.as_secs() + 1 || reset == after.as_secs() + 1,
        "reset {reset}, sent at {before:?}, answered at {after:?}"
    );
    assert_eq!(window.admitted(), 1);
}
