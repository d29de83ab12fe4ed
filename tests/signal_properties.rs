//! Property tests: arbitrary header bytes and bodies never make the parser
//! panic, and what it returns is consistent with its input.

use std::time::{Duration, SystemTime};

use courteous::signal::{HintSource, Signal, SignalParser};
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use proptest::prelude::*;

const FIELDS: &[&str] = &[
    "retry-after",
    "retry-after-ms",
    "x-ms-retry-after-ms",
    "ratelimit",
    "ratelimit-policy",
    "ratelimit-limit",
    "ratelimit-remaining",
    "ratelimit-reset",
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
    "x-ratelimit-reset-after",
    "x-ratelimit-used",
    "date",
    "content-type",
];

/// Values built from the grammar's own pieces, to get past the first check.
fn plausible_value() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            "[0-9]{1,25}",
            Just("-".to_owned()),
            Just(".".to_owned()),
            Just(", ".to_owned()),
            Just(";".to_owned()),
            Just("=".to_owned()),
            Just("\"".to_owned()),
            Just(":MDEy:".to_owned()),
            "[qwrtpku]{1,2}=",
            Just("limit=".to_owned()),
            Just("remaining=".to_owned()),
            Just("reset=".to_owned()),
            Just("\"default\"".to_owned()),
            Just("Fri, 31 Dec 9999 23:59:59 GMT".to_owned()),
            Just("Sun, 06 Nov 1994 08:49:37 GMT".to_owned()),
            Just("application/problem+json".to_owned()),
            Just("NaN".to_owned()),
        ],
        0..12,
    )
    .prop_map(|parts| parts.concat().into_bytes())
}

fn any_value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![prop::collection::vec(any::<u8>(), 0..64), plausible_value()]
}

fn headers() -> impl Strategy<Value = HeaderMap> {
    prop::collection::vec((prop::sample::select(FIELDS), any_value()), 0..12).prop_map(|pairs| {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            if let Ok(value) = HeaderValue::from_bytes(&value) {
                headers.append(HeaderName::from_static(name), value);
            }
        }
        headers
    })
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..256),
        (any::<i64>(), any::<f64>(), "[a-z\"\\[\\]{},:0-9.e-]{0,40}").prop_map(|(ms, secs, junk)| {
            format!(r#"{{"retry_after_ms":{ms},"retry_after":{secs:?},"violated-policies":["default",{junk}]}}"#)
                .into_bytes()
        }),
    ]
}

fn status() -> impl Strategy<Value = StatusCode> {
    (100u16..600).prop_map(|code| StatusCode::from_u16(code).unwrap())
}

fn now() -> impl Strategy<Value = SystemTime> {
    (0u64..400_000_000_000).prop_map(|secs| SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
}

/// The wait came from a field the response actually has.
fn hint_has_a_source(signal: &Signal, headers: &HeaderMap, body_read: bool) -> bool {
    let Some(hint) = signal.retry_after() else {
        return true;
    };
    match hint.source() {
        HintSource::RetryAfterSeconds | HintSource::RetryAfterDate => {
            headers.contains_key("retry-after")
        }
        HintSource::RetryAfterMs => headers.contains_key("retry-after-ms"),
        HintSource::XMsRetryAfterMs => headers.contains_key("x-ms-retry-after-ms"),
        HintSource::ProblemRetryAfterMs | HintSource::ProblemRetryAfter => body_read,
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn arbitrary_responses_never_panic_and_stay_consistent(
        status in status(),
        headers in headers(),
        body in prop::option::of(body()),
        now in now(),
    ) {
        let parser = SignalParser::new().body_limit(128);
        let signal = parser.parse_at(status, &headers, body.as_deref(), now);
        let body_read = body.is_some() && parser.wants_body(status, &headers);
        prop_assert!(hint_has_a_source(&signal, &headers, body_read));
        if let Some(binding) = signal.quota() {
            prop_assert!(signal.policies().contains(binding));
            let least = signal.policies().iter().filter_map(|q| q.remaining()).min();
            prop_assert_eq!(binding.remaining(), least);
        } else {
            prop_assert!(signal.policies().is_empty());
        }
        // A `Date` alone is no rate-limit information (the engine keeps it
        // to locate the server's clock).
        prop_assert_eq!(signal.is_empty(), signal.clone().with_date(None) == Signal::default());
    }

    #[test]
    fn delay_seconds_are_exact_and_saturate(digits in "[0-9]{1,60}") {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_str(&digits).unwrap());
        let signal = SignalParser::new().parse(StatusCode::TOO_MANY_REQUESTS, &headers, None);
        let expected = digits.parse::<u64>().unwrap_or(u64::MAX);
        let hint = signal.retry_after().unwrap();
        prop_assert_eq!(hint.delay(), Duration::from_secs(expected));
        prop_assert_eq!(hint.source(), HintSource::RetryAfterSeconds);
    }

    #[test]
    fn a_millisecond_hint_refines_only_within_the_rounding(secs in 0u64..100_000, millis in 0u64..100_000_000) {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from(secs));
        headers.insert("retry-after-ms", HeaderValue::from(millis));
        let signal = SignalParser::new().parse(StatusCode::TOO_MANY_REQUESTS, &headers, None);
        let hint = signal.retry_after().unwrap();
        let agrees = millis <= secs * 1000 && (secs == 0 || millis > (secs - 1) * 1000);
        if agrees {
            prop_assert_eq!((hint.delay(), hint.source()), (Duration::from_millis(millis), HintSource::RetryAfterMs));
        } else {
            prop_assert_eq!((hint.delay(), hint.source()), (Duration::from_secs(secs), HintSource::RetryAfterSeconds));
        }
    }

    #[test]
    fn named_policies_round_trip_and_the_least_remaining_binds(
        policies in prop::collection::vec((0u64..1_000_000, 1u64..100_000, 0u64..1_000_000, 0u64..100_000), 1..6),
    ) {
        let policy: Vec<String> = policies.iter().enumerate()
            .map(|(i, (q, w, _, _))| format!("\"p{i}\";q={q};w={w}"))
            .collect();
        let limit: Vec<String> = policies.iter().enumerate()
            .map(|(i, (_, _, r, t))| format!("\"p{i}\";r={r};t={t}"))
            .collect();
        let mut headers = HeaderMap::new();
        headers.insert("ratelimit-policy", HeaderValue::from_str(&policy.join(", ")).unwrap());
        headers.insert("ratelimit", HeaderValue::from_str(&limit.join(", ")).unwrap());
        let signal = SignalParser::new().parse(StatusCode::OK, &headers, None);
        prop_assert_eq!(signal.policies().len(), policies.len());
        for (quota, (q, w, r, t)) in signal.policies().iter().zip(&policies) {
            prop_assert_eq!(quota.limit(), Some(*q));
            prop_assert_eq!(quota.window(), Some(Duration::from_secs(*w)));
            prop_assert_eq!(quota.remaining(), Some(*r));
            prop_assert_eq!(quota.reset(), Some(Duration::from_secs(*t)));
        }
        let binding = signal.quota().unwrap();
        let least = policies.iter().map(|p| p.2).min().unwrap();
        let longest = policies.iter().filter(|p| p.2 == least).map(|p| p.3).max().unwrap();
        prop_assert_eq!(binding.remaining(), Some(least));
        prop_assert_eq!(binding.reset(), Some(Duration::from_secs(longest)));
    }
}
