//! The `GitHub` classifier against a responder that limits like GitHub's
//! REST API (403 for both limits): no request is sent while the server has
//! said to wait, and without the preset the 403s would be final answers.
#![cfg(feature = "testing")]

use std::num::NonZeroU32;
use std::time::Duration;

use courteous::testing::GitHubApi;
use courteous::{Client, GiveUpMode};
use http::StatusCode;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn nz(n: u32) -> NonZeroU32 {
    NonZeroU32::new(n).unwrap()
}

async fn mount(api: &GitHubApi) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(api.clone())
        .mount(&server)
        .await;
    server
}

fn github() -> Client {
    Client::builder()
        .classifier(courteous::classify::GitHub)
        .build()
}

#[tokio::test]
async fn primary_limit_waits_for_the_reset() {
    // Another client of the token spent this window's quota.
    let api = GitHubApi::new(nz(5), Duration::from_secs(2)).already_used(5);
    let server = mount(&api).await;
    let client = github();
    for _ in 0..3 {
        let response = client.get(server.uri()).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    assert_eq!(api.early(), 0, "sent before the announced reset");
    // Only the first request, sent knowing nothing, was refused.
    assert_eq!((api.admitted(), api.rejected()), (3, 1));

    // The default classification takes the 403 for an answer.
    let api = GitHubApi::new(nz(5), Duration::from_secs(2)).already_used(5);
    let server = mount(&api).await;
    let response = Client::new().get(server.uri()).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn a_fresh_quota_is_spent_without_a_single_refusal() {
    // Eight requests against a fresh quota of five per ten seconds: the
    // headers of the fifth answer (`x-ratelimit-remaining: 0`,
    // `x-ratelimit-reset`) hold the sixth back until the window has reset.
    // `x-ratelimit-resource` says it is GitHub's, whose quotas come back
    // whole at their reset: no probe for a continuous refill
    // (`Quota::fixed_window`; without it, one refused probe per scope).
    let api = GitHubApi::new(nz(5), Duration::from_secs(10));
    let server = mount(&api).await;
    let client = github();
    for _ in 0..8 {
        let response = client.get(server.uri()).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    assert_eq!(api.rejected(), 0, "wasted requests");
    assert_eq!(api.early(), 0, "sent before the announced reset");
    assert_eq!((api.received(), api.admitted()), (8, 8));
}

#[tokio::test]
async fn secondary_limit_waits_for_retry_after() {
    let api = GitHubApi::new(nz(5_000), Duration::from_secs(3600))
        .secondary(nz(2), Duration::from_secs(1));
    let server = mount(&api).await;
    let client = github();
    for _ in 0..4 {
        let response = client.get(server.uri()).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    assert_eq!(api.early(), 0, "sent before retry-after ran out");
    assert_eq!(api.admitted(), 4);
    // The server's refusals could not be foreseen (no header announces the
    // secondary limit): one per burst of two after the first.
    assert!(api.rejected() <= 2, "{} refused", api.rejected());

    // Without the preset the third request fails on its 403.
    let api = GitHubApi::new(nz(5_000), Duration::from_secs(3600))
        .secondary(nz(2), Duration::from_secs(1));
    let server = mount(&api).await;
    let client = Client::builder().give_up(GiveUpMode::Error).build();
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let response = client.get(server.uri()).send().await.unwrap();
        statuses.push(response.status().as_u16());
    }
    assert_eq!(statuses, [200, 200, 403]);
}

#[tokio::test]
async fn a_post_refused_by_github_is_an_error() {
    let api = GitHubApi::new(nz(1), Duration::from_secs(60)).already_used(1);
    let server = mount(&api).await;
    let err = github().post(server.uri()).send().await.unwrap_err();
    assert!(err.is_rate_limited(), "{err:?}");
    assert_eq!(err.status(), Some(StatusCode::FORBIDDEN));
    // The wait the preset read from `x-ratelimit-reset` rides on the error.
    assert!(
        err.retry_after()
            .is_some_and(|wait| wait <= Duration::from_secs(61)),
        "{err:?}"
    );
    assert_eq!(api.received(), 1);
}

#[tokio::test]
async fn a_secondary_limit_told_only_by_its_body_waits_a_minute() {
    // GitHub: "If the retry-after response header is not present ... wait
    // at least one minute"; only the JSON body names the limit.
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(403).set_body_raw(
            r#"{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}"#,
            "application/json; charset=utf-8",
        ))
        .mount(&server)
        .await;
    // A longest wait under a minute: the preset's 60 s comes back at once.
    let client = Client::builder()
        .classifier(courteous::classify::GitHub)
        .max_wait(Duration::from_secs(30))
        .build();
    let err = client.get(server.uri()).send().await.unwrap_err();
    assert!(err.is_wait_too_long(), "{err:?}");
    assert_eq!(
        err.retry_after(),
        Some(courteous::classify::GitHub::SECONDARY_WAIT)
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 1);

    // The same 403 without the preset is a final answer.
    let response = Client::new().get(server.uri()).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
}
