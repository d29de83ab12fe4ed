//! Each API's own rate-limit fields, as its documentation shows them,
//! parsed without a preset; and the traps worth a test each
//! (`../shared/docs/vendors.md`): `RateLimit-Reset` as a delta or an epoch,
//! several quotas in one response, refusals that look like throttling but
//! are final.

use std::time::{Duration, SystemTime};

use courteous::signal::{
    HintSource, Quota, QuotaSource, QuotaUnit, Refusal, ResetFormat, Signal, SignalParser,
};
use http::{HeaderMap, HeaderValue, StatusCode};

const NOW: &str = "Thu, 21 Aug 2025 12:40:00 GMT";

fn parse_with(
    parser: &SignalParser,
    status: u16,
    headers: &[(&'static str, &'static str)],
    body: Option<&str>,
) -> Signal {
    let mut map = HeaderMap::new();
    map.insert("date", HeaderValue::from_static(NOW));
    for (name, value) in headers {
        map.append(*name, HeaderValue::from_static(value));
    }
    let now: SystemTime = httpdate::parse_http_date(NOW).unwrap();
    let status = StatusCode::from_u16(status).unwrap();
    parser.parse_at(status, &map, body.map(str::as_bytes), now)
}

fn parse(status: u16, headers: &[(&'static str, &'static str)], body: Option<&str>) -> Signal {
    parse_with(&SignalParser::new(), status, headers, body)
}

fn named<'a>(signal: &'a Signal, name: &str) -> &'a Quota {
    signal
        .policies()
        .iter()
        .find(|quota| quota.name() == Some(name))
        .unwrap_or_else(|| panic!("no quota {name} in {signal:?}"))
}

const JSON: (&str, &str) = ("content-type", "application/json");

#[test]
fn openai_two_quotas_go_durations_and_the_millisecond_hint() {
    let signal = parse(
        429,
        &[
            JSON,
            ("x-ratelimit-limit-requests", "60"),
            ("x-ratelimit-limit-tokens", "150000"),
            ("x-ratelimit-remaining-requests", "59"),
            ("x-ratelimit-remaining-tokens", "0"),
            ("x-ratelimit-reset-requests", "1s"),
            ("x-ratelimit-reset-tokens", "1m30.5s"),
            ("retry-after-ms", "90500"),
            ("x-should-retry", "true"),
        ],
        Some(
            r#"{"error":{"message":"Rate limit reached for tokens per min","type":"tokens","code":"rate_limit_exceeded"}}"#,
        ),
    );
    let hint = signal.retry_after().unwrap();
    assert_eq!(hint.delay(), Duration::from_millis(90_500));
    assert_eq!(hint.source(), HintSource::RetryAfterMs);
    assert_eq!(signal.policies().len(), 2);
    // The exhausted token quota binds, though 59 requests are left.
    let binding = signal.quota().unwrap();
    assert_eq!(binding.unit(), QuotaUnit::Tokens);
    assert_eq!(binding.reset(), Some(Duration::from_millis(90_500)));
    assert_eq!(named(&signal, "requests").remaining(), Some(59));
    assert_eq!(signal.should_retry(), Some(true));
    assert_eq!(signal.refusal(), None);
}

#[test]
fn openai_insufficient_quota_is_a_final_refusal() {
    let signal = parse(
        429,
        &[JSON, ("x-should-retry", "false")],
        Some(
            r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#,
        ),
    );
    assert_eq!(signal.refusal(), Some(&Refusal::InsufficientQuota));
    assert!(signal.refusal().unwrap().is_final());
    assert_eq!(signal.should_retry(), Some(false));
}

#[test]
fn anthropic_three_quotas_rfc3339_resets_and_529() {
    let signal = parse(
        429,
        &[
            ("retry-after", "30"),
            ("anthropic-ratelimit-requests-limit", "50"),
            ("anthropic-ratelimit-requests-remaining", "12"),
            ("anthropic-ratelimit-requests-reset", "2025-08-21T12:40:01Z"),
            ("anthropic-ratelimit-input-tokens-limit", "30000"),
            ("anthropic-ratelimit-input-tokens-remaining", "0"),
            (
                "anthropic-ratelimit-input-tokens-reset",
                "2025-08-21T12:40:30Z",
            ),
            ("anthropic-ratelimit-output-tokens-limit", "8000"),
            ("anthropic-ratelimit-output-tokens-remaining", "8000"),
            (
                "anthropic-ratelimit-output-tokens-reset",
                "2025-08-21T12:40:00Z",
            ),
        ],
        None,
    );
    assert_eq!(signal.policies().len(), 3);
    let binding = signal.quota().unwrap();
    assert_eq!(
        (binding.name(), binding.source()),
        (Some("input-tokens"), QuotaSource::Anthropic)
    );
    assert_eq!(binding.reset(), Some(Duration::from_secs(30)));
    assert_eq!(
        named(&signal, "requests").reset(),
        Some(Duration::from_secs(1))
    );
    assert_eq!(
        signal.retry_after().unwrap().delay(),
        Duration::from_secs(30)
    );
}

#[test]
fn github_resource_is_the_bucket() {
    let signal = parse(
        403,
        &[
            ("x-ratelimit-limit", "30"),
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-used", "30"),
            ("x-ratelimit-reset", "1755780060"),
            ("x-ratelimit-resource", "search"),
        ],
        None,
    );
    assert_eq!(signal.bucket(), Some("search"));
    let quota = signal.quota().unwrap();
    assert_eq!(quota.name(), Some("search"));
    assert_eq!(quota.reset(), Some(Duration::from_secs(60)));
}

#[test]
fn discord_bucket_global_and_float_retry_after() {
    let signal = parse(
        429,
        &[
            JSON,
            ("retry-after", "1"),
            ("x-ratelimit-limit", "5"),
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", "1755780000.640"),
            ("x-ratelimit-reset-after", "0.640"),
            ("x-ratelimit-bucket", "d721dea6054f6322373d361f98e5c38b"),
            ("x-ratelimit-scope", "user"),
        ],
        Some(r#"{"message":"You are being rate limited.","retry_after":0.64,"global":false}"#),
    );
    assert_eq!(signal.bucket(), Some("d721dea6054f6322373d361f98e5c38b"));
    assert!(!signal.is_global());
    // The body's float refines the whole-second header.
    let hint = signal.retry_after().unwrap();
    assert_eq!(hint.delay(), Duration::from_millis(640));
    assert_eq!(hint.source(), HintSource::ProblemRetryAfter);
    assert_eq!(
        signal.quota().unwrap().reset(),
        Some(Duration::from_millis(640))
    );

    let global = parse(
        429,
        &[
            JSON,
            ("x-ratelimit-global", "true"),
            ("x-ratelimit-scope", "global"),
        ],
        Some(r#"{"message":"You are being rate limited.","retry_after":2.5,"global":true}"#),
    );
    assert!(global.is_global());
    assert_eq!(
        global.retry_after().unwrap().delay(),
        Duration::from_millis(2500)
    );
    assert!(parse(429, &[("x-ratelimit-scope", "global")], None).is_global());
}

#[test]
fn google_retry_info_and_quota_failure() {
    let per_minute = parse(
        429,
        &[("content-type", "application/json; charset=UTF-8")],
        Some(
            r#"{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED","details":[
            {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier","quotaValue":"15"}]},
            {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"45.837906927s"}]}}"#,
        ),
    );
    let hint = per_minute.retry_after().unwrap();
    assert_eq!(hint.source(), HintSource::GoogleRetryInfo);
    assert_eq!(hint.delay(), Duration::new(45, 837_906_927));
    assert!(per_minute.refusal().unwrap().is_throttling());

    let per_day = parse(
        429,
        &[JSON],
        Some(
            r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[
            {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]},
            {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"38s"}]}}"#,
        ),
    );
    assert!(per_day.refusal().unwrap().is_final());
    // The hint is still reported; whether to wait is the classifier's call.
    assert_eq!(
        per_day.retry_after().unwrap().delay(),
        Duration::from_secs(38)
    );
}

#[test]
fn ratelimit_reset_is_a_delta_or_an_epoch_by_its_size_and_a_preset_pins_it() {
    // IETF drafts: seconds to wait.
    let ietf = parse(
        200,
        &[
            ("ratelimit-limit", "100"),
            ("ratelimit-remaining", "40"),
            ("ratelimit-reset", "30"),
        ],
        None,
    );
    assert_eq!(ietf.quota().unwrap().reset(), Some(Duration::from_secs(30)));
    // GitLab: the same name, a Unix epoch; also its name, observed count
    // and the HTTP-date form.
    let gitlab_headers = [
        ("ratelimit-name", "throttle_authenticated_api"),
        ("ratelimit-limit", "60"),
        ("ratelimit-observed", "67"),
        ("ratelimit-reset", "1755780060"),
        ("ratelimit-resettime", "Thu, 21 Aug 2025 12:41:00 GMT"),
        ("retry-after", "60"),
    ];
    let gitlab = parse(429, &gitlab_headers, None);
    let quota = gitlab.quota().unwrap();
    assert_eq!(quota.name(), Some("throttle_authenticated_api"));
    assert_eq!(quota.remaining(), Some(0));
    assert_eq!(quota.reset(), Some(Duration::from_secs(60)));
    // Without `RateLimit-Reset`, `RateLimit-ResetTime` says it.
    let reset_time = parse(429, &gitlab_headers[4..5], None);
    assert_eq!(
        reset_time.quota().unwrap().reset(),
        Some(Duration::from_secs(60))
    );
    // Pinned: a small value is an epoch long past (GitLab), or a huge one
    // a delta (clamped by the engine, not here).
    let epoch = SignalParser::new().reset_format(ResetFormat::Epoch);
    let pinned = parse_with(&epoch, 200, &[("ratelimit-reset", "30")], None);
    assert_eq!(pinned.quota().unwrap().reset(), Some(Duration::ZERO));
    let delta = SignalParser::new().reset_format(ResetFormat::Delta);
    let pinned = parse_with(&delta, 200, &[("x-ratelimit-reset", "1755780060")], None);
    assert_eq!(
        pinned.quota().unwrap().reset(),
        Some(Duration::from_secs(1_755_780_060))
    );
}

#[test]
fn shopify_rest_bucket_and_graphql_cost() {
    let rest = parse(
        429,
        &[
            ("x-shopify-shop-api-call-limit", "40/40"),
            ("retry-after", "2.0"),
        ],
        None,
    );
    let quota = rest.quota().unwrap();
    assert_eq!((quota.limit(), quota.remaining()), (Some(40), Some(0)));
    assert_eq!(quota.source(), QuotaSource::Shopify);
    assert_eq!(quota.reset(), Some(Duration::from_secs(20)));
    // `Retry-After: 2.0` is not delay-seconds: ignored.
    assert_eq!(rest.retry_after(), None);

    let graphql = parse(
        429,
        &[JSON],
        Some(
            r#"{"errors":[{"message":"Throttled","extensions":{"code":"THROTTLED","documentation":"https://shopify.dev/api/usage/rate-limits"}}],
            "extensions":{"cost":{"requestedQueryCost":202,"actualQueryCost":null,"throttleStatus":{"maximumAvailable":2000.0,"currentlyAvailable":100,"restoreRate":100.0}}}}"#,
        ),
    );
    assert_eq!(graphql.refusal(), Some(&Refusal::GraphqlRateLimited));
    let cost = graphql.quota().unwrap();
    assert_eq!(cost.unit(), QuotaUnit::Points);
    assert_eq!(cost.rate(), Some(100.0));
    assert_eq!(cost.reset(), Some(Duration::from_secs(19)));
}

#[test]
fn azure_resource_manager_and_azure_openai() {
    let arm = parse(
        429,
        &[
            ("retry-after", "17"),
            ("x-ms-ratelimit-remaining-subscription-reads", "0"),
            ("x-ms-ratelimit-remaining-subscription-writes", "1199"),
        ],
        None,
    );
    assert_eq!(arm.quota().unwrap().name(), Some("subscription-reads"));
    assert_eq!(arm.retry_after().unwrap().delay(), Duration::from_secs(17));
    // Azure OpenAI: OpenAI's fields, a token reset in plain seconds, and
    // Azure's millisecond hint.
    let aoai = parse(
        429,
        &[
            ("retry-after", "7"),
            ("x-ms-retry-after-ms", "6250"),
            ("x-ratelimit-remaining-tokens", "0"),
            ("x-ratelimit-reset-tokens", "7"),
            ("x-ratelimit-remaining-requests", "9"),
        ],
        None,
    );
    let hint = aoai.retry_after().unwrap();
    assert_eq!(
        (hint.delay(), hint.source()),
        (Duration::from_millis(6250), HintSource::XMsRetryAfterMs)
    );
    assert_eq!(aoai.quota().unwrap().reset(), Some(Duration::from_secs(7)));
}

#[test]
fn reddit_fractional_counts_and_x_epoch() {
    let reddit = parse(
        200,
        &[
            ("x-ratelimit-used", "4"),
            ("x-ratelimit-remaining", "596.0"),
            ("x-ratelimit-reset", "337"),
        ],
        None,
    );
    let quota = reddit.quota().unwrap();
    assert_eq!(quota.remaining(), Some(596));
    assert_eq!(quota.reset(), Some(Duration::from_secs(337)));

    let x = parse(
        429,
        &[
            ("x-rate-limit-limit", "900"),
            ("x-rate-limit-remaining", "0"),
            ("x-rate-limit-reset", "1755780900"),
        ],
        Some(r#"{"errors":[{"code":88,"message":"Rate limit exceeded"}]}"#),
    );
    let quota = x.quota().unwrap();
    assert_eq!(quota.source(), QuotaSource::XDashRateLimit);
    assert_eq!(quota.reset(), Some(Duration::from_secs(900)));
}

#[test]
fn aws_error_codes_from_header_json_and_xml() {
    let code = |signal: &Signal| match signal.refusal() {
        Some(Refusal::Aws { code, .. }) => Some(code.clone()),
        _ => None,
    };
    let header = parse(
        400,
        &[(
            "x-amzn-errortype",
            "ThrottlingException:http://internal.amazon.com/coral/com.amazonaws.lambda/",
        )],
        None,
    );
    assert_eq!(code(&header).as_deref(), Some("ThrottlingException"));
    assert!(header.refusal().unwrap().is_throttling());
    let json = parse(
        400,
        &[("content-type", "application/x-amz-json-1.0")],
        Some(
            r#"{"__type":"com.amazon.coral.validate#ValidationException","message":"1 validation error"}"#,
        ),
    );
    assert_eq!(code(&json).as_deref(), Some("ValidationException"));
    assert!(json.refusal().unwrap().is_final());
    let xml = parse(
        503,
        &[("content-type", "application/xml")],
        Some(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>",
        ),
    );
    assert_eq!(code(&xml).as_deref(), Some("SlowDown"));
    // A success body is never read.
    let ok = parse(200, &[JSON], Some(r#"{"__type":"ThrottlingException"}"#));
    assert_eq!(ok.refusal(), None);
}

#[test]
fn hostile_vendor_values_are_ignored_or_clamped() {
    let signal = parse(
        429,
        &[
            ("x-ratelimit-remaining-tokens", "-1"),
            ("x-ratelimit-reset-tokens", "99999999999999999999999h"),
            ("x-ratelimit-limit-requests", "1e9"),
            ("anthropic-ratelimit-requests-reset", "9999-99-99T99:99:99Z"),
            (
                "anthropic-ratelimit-tokens-remaining",
                "18446744073709551616",
            ),
            ("x-shopify-shop-api-call-limit", "99999999999999999999999/1"),
            ("x-ratelimit-bucket", ""),
            ("x-should-retry", "maybe"),
            ("x-amzn-errortype", "<script>alert(1)</script>"),
        ],
        Some("{}"),
    );
    let tokens = named(&signal, "tokens");
    assert_eq!(tokens.remaining(), None);
    assert_eq!(tokens.reset(), Some(Duration::MAX));
    // A malformed count alone is no quota.
    let openai_requests = signal
        .policies()
        .iter()
        .find(|q| q.source() == QuotaSource::OpenAi && q.name() == Some("requests"));
    assert_eq!(openai_requests, None);
    assert_eq!(
        signal
            .policies()
            .iter()
            .find(|q| q.source() == QuotaSource::Anthropic)
            .and_then(Quota::remaining),
        Some(u64::MAX)
    );
    assert_eq!(signal.bucket(), None);
    assert_eq!(signal.should_retry(), None);
    assert_eq!(signal.refusal(), None);
    let shopify = signal
        .policies()
        .iter()
        .find(|q| q.source() == QuotaSource::Shopify)
        .unwrap();
    assert_eq!(shopify.remaining(), Some(0));
}
