//! Unit tests for every IETF draft shape.

use std::time::{Duration, SystemTime};

use http::{HeaderMap, HeaderValue};

use super::super::fields::{Clock, Fields};
use super::super::quota::{Quota, QuotaSource, QuotaUnit};
use super::read;

fn policies(pairs: &[(&'static str, &'static str)]) -> Vec<Quota> {
    let mut headers = HeaderMap::new();
    for (name, value) in pairs {
        headers.append(*name, HeaderValue::from_static(value));
    }
    let mut out = Vec::new();
    let fields = Fields::scan(&headers);
    read(
        &fields,
        &Clock::new(&headers, SystemTime::UNIX_EPOCH),
        &mut out,
    );
    out
}

fn secs(secs: u64) -> Option<Duration> {
    Some(Duration::from_secs(secs))
}

#[test]
fn named_policies_join_their_state_by_name() {
    let out = policies(&[
        (
            "ratelimit-policy",
            r#""burst";q=100;w=60,"daily";q=1000;w=86400"#,
        ),
        ("ratelimit", r#""daily";r=50;t=30"#),
    ]);
    assert_eq!(out.len(), 2);
    let burst = &out[0];
    assert_eq!(
        (burst.name(), burst.limit(), burst.window()),
        (Some("burst"), Some(100), secs(60))
    );
    assert_eq!(burst.remaining(), None);
    let daily = &out[1];
    assert_eq!(daily.name(), Some("daily"));
    assert_eq!((daily.limit(), daily.remaining()), (Some(1000), Some(50)));
    assert_eq!((daily.window(), daily.reset()), (secs(86_400), secs(30)));
    assert_eq!(daily.source(), QuotaSource::IetfList);
}

#[test]
fn named_policies_read_units_partition_keys_and_token_names() {
    let out = policies(&[
        (
            "ratelimit-policy",
            r#"peruser;q=100;w=60;qu="content-bytes";pk=:MDEyMzQ1Njc4OWFi:, conc;q=5;qu=concurrent-requests, odd;q=1;qu="parsecs""#,
        ),
        ("ratelimit", "peruser;r=7;t=3, orphan;r=1"),
    ]);
    assert_eq!(out.len(), 4);
    assert_eq!(out[0].unit(), QuotaUnit::ContentBytes);
    assert_eq!(out[0].partition_key(), Some(&b"0123456789ab"[..]));
    assert_eq!(out[0].remaining(), Some(7));
    assert_eq!(out[1].unit(), QuotaUnit::ConcurrentRequests);
    assert_eq!(out[2].unit(), QuotaUnit::Other);
    let orphan = &out[3];
    assert_eq!(
        (orphan.name(), orphan.limit(), orphan.remaining()),
        (Some("orphan"), None, Some(1))
    );
}

#[test]
fn named_items_without_required_parameters_are_ignored() {
    let out = policies(&[
        (
            "ratelimit-policy",
            r#""noq";w=60, "neg";q=-1, "ok";q=10;w=-5"#,
        ),
        ("ratelimit", r#""ok";t=3, "ok";r=2;t=-1"#),
    ]);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].limit(), out[0].window()), (Some(10), None));
    assert_eq!((out[0].remaining(), out[0].reset()), (Some(2), None));
}

#[test]
fn fields_split_over_lines_combine() {
    let out = policies(&[
        ("ratelimit-policy", r#""burst";q=100;w=60"#),
        ("ratelimit-policy", r#""daily";q=1000;w=86400"#),
        ("ratelimit", r#""burst";r=9"#),
        ("ratelimit", r#""daily";r=3"#),
    ]);
    let remaining: Vec<_> = out.iter().map(Quota::remaining).collect();
    assert_eq!(remaining, [Some(9), Some(3)]);
}

#[test]
fn an_invalid_line_invalidates_the_whole_field() {
    let out = policies(&[
        ("ratelimit-policy", r#""burst";q=100;w=60"#),
        ("ratelimit-policy", r#""daily";q=1000;w="#),
    ]);
    assert!(out.is_empty());
    assert!(policies(&[("ratelimit-policy", "1234567890123456;w=1")]).is_empty());
}

#[test]
fn draft_07_dictionary_takes_its_window_from_the_policy() {
    let out = policies(&[
        ("ratelimit", "limit=100, remaining=50, reset=5"),
        ("ratelimit-policy", "100;w=10"),
    ]);
    assert_eq!(out.len(), 1);
    let quota = &out[0];
    assert_eq!(quota.source(), QuotaSource::IetfDictionary);
    assert_eq!((quota.limit(), quota.remaining()), (Some(100), Some(50)));
    assert_eq!((quota.reset(), quota.window()), (secs(5), secs(10)));
}

#[test]
fn draft_07_dictionary_ignores_malformed_members() {
    let out = policies(&[("ratelimit", "limit=100, remaining=-3, reset=?1")]);
    assert_eq!(
        (out[0].limit(), out[0].remaining(), out[0].reset()),
        (Some(100), None, None)
    );
    assert!(policies(&[("ratelimit", "foo=1")]).is_empty());
    assert!(policies(&[("ratelimit", "limit=(1 2)")]).is_empty());
}

#[test]
fn separate_fields_with_limit_policies() {
    let out = policies(&[
        ("ratelimit-limit", "10, 10;w=1, 50;w=60"),
        ("ratelimit-remaining", "7"),
        ("ratelimit-reset", "1"),
    ]);
    assert_eq!(out.len(), 2);
    let current = &out[0];
    assert_eq!(current.source(), QuotaSource::IetfSeparate);
    assert_eq!((current.limit(), current.remaining()), (Some(10), Some(7)));
    assert_eq!((current.reset(), current.window()), (secs(1), secs(1)));
    assert_eq!(
        (out[1].limit(), out[1].window(), out[1].remaining()),
        (Some(50), secs(60), None)
    );
}

#[test]
fn separate_fields_with_a_policy_field_and_draft_00_window() {
    let out = policies(&[
        ("ratelimit-limit", "100"),
        ("ratelimit-remaining", "0"),
        ("ratelimit-reset", "42"),
        ("ratelimit-policy", "100;w=60, 1000;window=3600"),
    ]);
    assert_eq!(out.len(), 2);
    assert_eq!(
        (out[0].remaining(), out[0].reset(), out[0].window()),
        (Some(0), secs(42), secs(60))
    );
    assert_eq!((out[1].limit(), out[1].window()), (Some(1000), secs(3600)));
}

#[test]
fn separate_fields_keep_the_polite_reading_of_duplicates() {
    let out = policies(&[
        ("ratelimit-remaining", "9"),
        ("ratelimit-remaining", "4, x"),
        ("ratelimit-reset", "2"),
        ("ratelimit-reset", "30"),
        ("ratelimit-limit", "not a list"),
    ]);
    assert_eq!(out.len(), 1);
    assert_eq!(
        (out[0].limit(), out[0].remaining(), out[0].reset()),
        (None, Some(4), secs(30))
    );
}

#[test]
fn separate_reset_above_a_year_is_an_epoch() {
    // The clock in `policies` is the Unix epoch, so an epoch of 1e9 is 1e9 s away.
    let out = policies(&[("ratelimit-reset", "1000000000")]);
    assert_eq!(out[0].reset(), secs(1_000_000_000));
}

#[test]
fn only_policies_without_state() {
    let out = policies(&[("ratelimit-policy", r#""default";q=1200;w=300"#)]);
    assert_eq!(out.len(), 1);
    assert_eq!(
        (out[0].limit(), out[0].window(), out[0].remaining()),
        (Some(1200), secs(300), None)
    );
    let out = policies(&[("ratelimit-policy", "100;w=60")]);
    assert_eq!(
        (out[0].limit(), out[0].source()),
        (Some(100), QuotaSource::IetfSeparate)
    );
}

#[test]
fn thousands_of_policies_are_capped() {
    let policy: Vec<String> = (0..5000).map(|i| format!("\"p{i}\";q=10")).collect();
    let limit: Vec<String> = (0..5000).map(|i| format!("\"p{i}\";r=1")).collect();
    let mut headers = HeaderMap::new();
    headers.insert(
        "ratelimit-policy",
        HeaderValue::from_str(&policy.join(",")).unwrap(),
    );
    headers.insert(
        "ratelimit",
        HeaderValue::from_str(&limit.join(",")).unwrap(),
    );
    let mut out = Vec::new();
    let fields = Fields::scan(&headers);
    read(
        &fields,
        &Clock::new(&headers, SystemTime::UNIX_EPOCH),
        &mut out,
    );
    // The first 64 of each field are read, and joined.
    assert_eq!(out.len(), super::members::MAX_MEMBERS);
    assert!(out.iter().all(|quota| quota.remaining() == Some(1)));
    assert_eq!(out.last().and_then(Quota::name), Some("p63"));
}
