//! Table tests: real-world rate-limit responses in every dialect, parsed into
//! one normalized `Signal`.

use std::time::{Duration, SystemTime};

use courteous::signal::{HintSource, QuotaSource, Signal, SignalParser};
use http::{HeaderMap, HeaderValue, StatusCode};

/// A recorded response.
struct Case {
    name: &'static str,
    status: u16,
    headers: &'static [(&'static str, &'static str)],
    body: Option<&'static str>,
    /// The client's clock when the response arrived (HTTP-date).
    now: &'static str,
    expect: Expect,
}

/// What the parser must make of it.
struct Expect {
    wait: Option<(Duration, HintSource)>,
    binding: Option<Binding<'static>>,
    policies: usize,
}

#[derive(Debug, PartialEq)]
struct Binding<'a> {
    name: Option<&'a str>,
    limit: Option<u64>,
    remaining: Option<u64>,
    reset: Option<Duration>,
    window: Option<Duration>,
    source: QuotaSource,
}

const fn secs(secs: u64) -> Option<Duration> {
    Some(Duration::from_secs(secs))
}

const fn millis(millis: u64) -> Duration {
    Duration::from_millis(millis)
}

const NOW: &str = "Wed, 21 Oct 2026 07:20:00 GMT";

const CASES: &[Case] = &[
    Case {
        name: "GitHub 403, primary limit exhausted, reset epoch, client clock 2 min fast",
        status: 403,
        headers: &[
            ("date", "Tue, 20 Aug 2013 15:31:06 GMT"),
            ("content-type", "application/json; charset=utf-8"),
            ("x-ratelimit-limit", "60"),
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", "1377013266"),
            ("x-ratelimit-used", "60"),
            ("x-ratelimit-resource", "core"),
        ],
        body: Some(
            r#"{"message":"API rate limit exceeded for 203.0.113.7.","documentation_url":"https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting"}"#,
        ),
        now: "Tue, 20 Aug 2013 15:33:06 GMT",
        expect: Expect {
            wait: None,
            binding: Some(Binding {
                // `x-ratelimit-resource` names GitHub's bucket.
                name: Some("core"),
                limit: Some(60),
                remaining: Some(0),
                reset: secs(600),
                window: None,
                source: QuotaSource::XRateLimit,
            }),
            policies: 1,
        },
    },
    Case {
        name: "GitHub 429, secondary limit with Retry-After",
        status: 429,
        headers: &[
            ("date", "Tue, 20 Aug 2013 15:31:06 GMT"),
            ("retry-after", "60"),
            ("x-ratelimit-limit", "5000"),
            ("x-ratelimit-remaining", "4990"),
            ("x-ratelimit-reset", "1377014466"),
            ("x-ratelimit-used", "10"),
        ],
        body: None,
        now: "Tue, 20 Aug 2013 15:31:06 GMT",
        expect: Expect {
            wait: Some((millis(60_000), HintSource::RetryAfterSeconds)),
            binding: Some(Binding {
                name: None,
                limit: Some(5000),
                remaining: Some(4990),
                reset: secs(1800),
                window: None,
                source: QuotaSource::XRateLimit,
            }),
            policies: 1,
        },
    },
    Case {
        name: "express-rate-limit draft-6",
        status: 200,
        headers: &[
            ("ratelimit-policy", "100;w=60"),
            ("ratelimit-limit", "100"),
            ("ratelimit-remaining", "99"),
            ("ratelimit-reset", "60"),
        ],
        body: None,
        now: NOW,
        expect: Expect {
            wait: None,
            binding: Some(Binding {
                name: None,
                limit: Some(100),
                remaining: Some(99),
                reset: secs(60),
                window: secs(60),
                source: QuotaSource::IetfSeparate,
            }),
            policies: 1,
        },
    },
    Case {
        name: "express-rate-limit draft-6, 429 with legacy X-RateLimit headers",
        status: 429,
        headers: &[
            ("date", NOW),
            ("retry-after", "42"),
            ("ratelimit-policy", "100;w=60"),
            ("ratelimit-limit", "100"),
            ("ratelimit-remaining", "0"),
            ("ratelimit-reset", "42"),
            ("x-ratelimit-limit", "100"),
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", "1792567242"),
            ("content-type", "text/html; charset=utf-8"),
        ],
        body: Some("Too many requests, please try again later."),
        now: NOW,
        expect: Expect {
            wait: Some((millis(42_000), HintSource::RetryAfterSeconds)),
            // Both describe the same limit; the tie goes to the first listed.
            binding: Some(Binding {
                name: None,
                limit: Some(100),
                remaining: Some(0),
                reset: secs(42),
                window: secs(60),
                source: QuotaSource::IetfSeparate,
            }),
            policies: 2,
        },
    },
    Case {
        name: "express-rate-limit draft-7",
        status: 200,
        headers: &[
            ("ratelimit-policy", "100;w=60"),
            ("ratelimit", "limit=100, remaining=99, reset=60"),
        ],
        body: None,
        now: NOW,
        expect: Expect {
            wait: None,
            binding: Some(Binding {
                name: None,
                limit: Some(100),
                remaining: Some(99),
                reset: secs(60),
                window: secs(60),
                source: QuotaSource::IetfDictionary,
            }),
            policies: 1,
        },
    },
    Case {
        name: "express-rate-limit draft-8",
        status: 200,
        headers: &[
            (
                "ratelimit-policy",
                r#""100-in-1min"; q=100; w=60; pk=:MDEyMzQ1Njc4OWFi:"#,
            ),
            ("ratelimit", r#""100-in-1min"; r=99; t=60"#),
        ],
        body: None,
        now: NOW,
        expect: Expect {
            wait: None,
            binding: Some(Binding {
                name: Some("100-in-1min"),
                limit: Some(100),
                remaining: Some(99),
                reset: secs(60),
                window: secs(60),
                source: QuotaSource::IetfList,
            }),
            policies: 1,
        },
    },
    Case {
        name: "draft-11: two policies, the daily one binds",
        status: 200,
        headers: &[
            (
                "ratelimit-policy",
                r#""burst";q=100;w=60,"daily";q=1000;w=86400"#,
            ),
            ("ratelimit", r#""burst";r=50;t=30, "daily";r=10;t=3600"#),
        ],
        body: None,
        now: NOW,
        expect: Expect {
            wait: None,
            binding: Some(Binding {
                name: Some("daily"),
                limit: Some(1000),
                remaining: Some(10),
                reset: secs(3600),
                window: secs(86_400),
                source: QuotaSource::IetfList,
            }),
            policies: 2,
        },
    },
    Case {
        name: "draft-11: RateLimit without RateLimit-Policy",
        status: 200,
        headers: &[("ratelimit", r#""default";r=50;t=30"#)],
        body: None,
        now: NOW,
        expect: Expect {
            wait: None,
            binding: Some(Binding {
                name: Some("default"),
                limit: None,
                remaining: Some(50),
                reset: secs(30),
                window: None,
                source: QuotaSource::IetfList,
            }),
            policies: 1,
        },
    },
    Case {
        name: "draft-11: throttled, Retry-After takes precedence",
        status: 429,
        headers: &[
            ("ratelimit-policy", r#""hour";q=1000;w=3600"#),
            ("ratelimit", r#""hour";r=0;t=5"#),
            ("retry-after", "5"),
        ],
        body: None,
        now: NOW,
        expect: Expect {
            wait: Some((millis(5000), HintSource::RetryAfterSeconds)),
            binding: Some(Binding {
                name: Some("hour"),
                limit: Some(1000),
                remaining: Some(0),
                reset: secs(5),
                window: secs(3600),
                source: QuotaSource::IetfList,
            }),
            policies: 1,
        },
    },
    Case {
        name: "policy only: ratelimit-policy: \"default\";q=1200;w=300",
        status: 200,
        headers: &[("ratelimit-policy", r#""default";q=1200;w=300"#)],
        body: None,
        now: NOW,
        expect: Expect {
            wait: None,
            binding: Some(Binding {
                name: Some("default"),
                limit: Some(1200),
                remaining: None,
                reset: None,
                window: secs(300),
                source: QuotaSource::IetfList,
            }),
            policies: 1,
        },
    },
    Case {
        name: "problem+json 429 refines Retry-After to the millisecond",
        status: 429,
        headers: &[
            ("content-type", "application/problem+json"),
            ("retry-after", "1"),
            ("ratelimit-limit", "20"),
            ("ratelimit-remaining", "0"),
        ],
        body: Some(
            r#"{"type":"/errors/rate-limited","title":"Too Many Requests","status":429,"retry_after_ms":50}"#,
        ),
        now: NOW,
        expect: Expect {
            wait: Some((millis(50), HintSource::ProblemRetryAfterMs)),
            binding: Some(Binding {
                name: None,
                limit: Some(20),
                remaining: Some(0),
                reset: None,
                window: None,
                source: QuotaSource::IetfSeparate,
            }),
            policies: 1,
        },
    },
    Case {
        name: "IETF quota-exceeded problem names the violated policy",
        status: 429,
        headers: &[
            ("content-type", "application/problem+json"),
            (
                "ratelimit-policy",
                r#""burst";q=100;w=60,"daily";q=1000;w=86400"#,
            ),
        ],
        body: Some(
            r#"{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Request cannot be satisfied as assigned quota has been exceeded","violated-policies":["daily"]}"#,
        ),
        now: NOW,
        expect: Expect {
            wait: None,
            binding: Some(Binding {
                name: Some("daily"),
                limit: Some(1000),
                remaining: Some(0),
                reset: None,
                window: secs(86_400),
                source: QuotaSource::IetfList,
            }),
            policies: 2,
        },
    },
    Case {
        name: "503 with an HTTP-date Retry-After; server clock 6 min ahead of ours",
        status: 503,
        headers: &[
            ("date", "Wed, 21 Oct 2026 07:26:00 GMT"),
            ("retry-after", "Wed, 21 Oct 2026 07:28:00 GMT"),
        ],
        body: None,
        now: NOW,
        expect: Expect {
            wait: Some((millis(120_000), HintSource::RetryAfterDate)),
            binding: None,
            policies: 0,
        },
    },
    Case {
        name: "503 with an RFC 850 Retry-After and no Date: measured against our clock",
        status: 503,
        headers: &[("retry-after", "Wednesday, 21-Oct-26 07:20:30 GMT")],
        body: None,
        now: NOW,
        expect: Expect {
            wait: Some((millis(30_000), HintSource::RetryAfterDate)),
            binding: None,
            policies: 0,
        },
    },
    Case {
        name: "Azure-style x-ms-retry-after-ms refines Retry-After",
        status: 429,
        headers: &[("retry-after", "2"), ("x-ms-retry-after-ms", "1500")],
        body: None,
        now: NOW,
        expect: Expect {
            wait: Some((millis(1500), HintSource::XMsRetryAfterMs)),
            binding: None,
            policies: 0,
        },
    },
    Case {
        name: "retry-after-ms that disagrees with Retry-After is ignored",
        status: 429,
        headers: &[("retry-after", "2"), ("retry-after-ms", "250")],
        body: None,
        now: NOW,
        expect: Expect {
            wait: Some((millis(2000), HintSource::RetryAfterSeconds)),
            binding: None,
            policies: 0,
        },
    },
    Case {
        name: "retry-after-ms alone is the wait",
        status: 429,
        headers: &[("retry-after-ms", "250")],
        body: None,
        now: NOW,
        expect: Expect {
            wait: Some((millis(250), HintSource::RetryAfterMs)),
            binding: None,
            policies: 0,
        },
    },
    Case {
        name: "chat-API style fractional X-RateLimit-Reset-After",
        status: 429,
        headers: &[
            ("x-ratelimit-limit", "5"),
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", "1470173023.123"),
            ("x-ratelimit-reset-after", "64.57"),
        ],
        body: None,
        now: NOW,
        expect: Expect {
            wait: None,
            binding: Some(Binding {
                name: None,
                limit: Some(5),
                remaining: Some(0),
                reset: Some(Duration::from_millis(64_570)),
                window: None,
                source: QuotaSource::XRateLimit,
            }),
            policies: 1,
        },
    },
    Case {
        name: "plain 200",
        status: 200,
        headers: &[
            ("content-type", "application/json"),
            ("content-length", "2"),
            ("date", NOW),
        ],
        body: Some("{}"),
        now: NOW,
        expect: Expect {
            wait: None,
            binding: None,
            policies: 0,
        },
    },
];

fn parse(case: &Case) -> Signal {
    let mut headers = HeaderMap::new();
    for (name, value) in case.headers {
        headers.append(*name, HeaderValue::from_static(value));
    }
    let status = StatusCode::from_u16(case.status).unwrap();
    let now: SystemTime = httpdate::parse_http_date(case.now).unwrap();
    let body = case.body.map(str::as_bytes);
    SignalParser::new().parse_at(status, &headers, body, now)
}

#[test]
fn every_dialect_parses_to_the_expected_signal() {
    for case in CASES {
        let signal = parse(case);
        let wait = signal
            .retry_after()
            .map(|hint| (hint.delay(), hint.source()));
        assert_eq!(wait, case.expect.wait, "wait: {}", case.name);
        let binding = signal.quota().map(|quota| Binding {
            name: quota.name(),
            limit: quota.limit(),
            remaining: quota.remaining(),
            reset: quota.reset(),
            window: quota.window(),
            source: quota.source(),
        });
        assert_eq!(binding, case.expect.binding, "binding: {}", case.name);
        assert_eq!(
            signal.policies().len(),
            case.expect.policies,
            "policies: {}",
            case.name
        );
        let empty = case.expect.wait.is_none() && case.expect.policies == 0;
        assert_eq!(signal.is_empty(), empty, "is_empty: {}", case.name);
    }
}

#[test]
fn express_draft_8_partition_key_is_decoded() {
    let case = CASES
        .iter()
        .find(|case| case.name == "express-rate-limit draft-8")
        .unwrap();
    let signal = parse(case);
    assert_eq!(
        signal.quota().unwrap().partition_key(),
        Some(&b"0123456789ab"[..])
    );
}

#[test]
fn violated_policies_are_reported() {
    let case = CASES
        .iter()
        .find(|case| case.name.starts_with("IETF quota-exceeded"))
        .unwrap();
    assert_eq!(parse(case).violated_policies(), ["daily"]);
}

#[test]
fn express_legacy_epoch_reset_is_measured_against_date() {
    let case = CASES
        .iter()
        .find(|case| case.name.contains("legacy X-RateLimit"))
        .unwrap();
    let signal = parse(case);
    let legacy = signal
        .policies()
        .iter()
        .find(|q| q.source() == QuotaSource::XRateLimit);
    assert_eq!(legacy.unwrap().reset(), secs(42));
}

#[test]
fn every_dialect_at_once() {
    let case = Case {
        name: "every dialect at once",
        status: 429,
        headers: &[
            ("date", NOW),
            ("retry-after", "Wed, 21 Oct 2026 07:20:01 GMT"),
            ("retry-after-ms", "950"),
            ("x-ms-retry-after-ms", "900"),
            (
                "ratelimit-policy",
                r#""burst";q=100;w=60,"daily";q=1000;w=86400"#,
            ),
            ("ratelimit", r#""burst";r=0;t=1, "daily";r=900;t=3600"#),
            ("ratelimit-limit", "100, 100;w=60"),
            ("ratelimit-remaining", "0"),
            ("ratelimit-reset", "1"),
            ("x-ratelimit-limit", "100"),
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset-after", "0.95"),
        ],
        body: None,
        now: "Wed, 21 Oct 2026 09:00:00 GMT",
        expect: Expect {
            // The date form is measured against `Date`, not our (skewed) clock;
            // retry-after-ms agrees with it and comes first.
            wait: Some((millis(950), HintSource::RetryAfterMs)),
            // Three policies have nothing left; the longest reset (1 s) binds,
            // and of the two with 1 s the first listed.
            binding: Some(Binding {
                name: Some("burst"),
                limit: Some(100),
                remaining: Some(0),
                reset: secs(1),
                window: secs(60),
                source: QuotaSource::IetfList,
            }),
            policies: 4,
        },
    };
    let signal = parse(&case);
    let wait = signal
        .retry_after()
        .map(|hint| (hint.delay(), hint.source()));
    assert_eq!(wait, case.expect.wait);
    let sources: Vec<_> = signal
        .policies()
        .iter()
        .map(|quota| quota.source())
        .collect();
    assert_eq!(
        sources,
        [
            QuotaSource::IetfList,
            QuotaSource::IetfList,
            QuotaSource::IetfSeparate,
            QuotaSource::XRateLimit
        ]
    );
    let quota = signal.quota().unwrap();
    let binding = Binding {
        name: quota.name(),
        limit: quota.limit(),
        remaining: quota.remaining(),
        reset: quota.reset(),
        window: quota.window(),
        source: quota.source(),
    };
    assert_eq!(Some(binding), case.expect.binding);
}

/// Every response's `Date` is kept, a plain one's included (the engine
/// locates the server's clock with it), and a `Date` alone is no rate-limit
/// information.
#[test]
fn the_date_is_kept_and_is_no_signal_on_its_own() {
    let parser = SignalParser::new();
    let date = "Sun, 06 Nov 1994 08:49:37 GMT";
    let at = httpdate::parse_http_date(date).unwrap();
    let mut headers = HeaderMap::new();
    headers.insert("date", HeaderValue::from_static(date));
    let plain = parser.parse(StatusCode::OK, &headers, None);
    assert_eq!(plain.date(), Some(at));
    assert!(plain.is_empty());
    headers.insert("retry-after", HeaderValue::from_static("2"));
    let hinted = parser.parse(StatusCode::TOO_MANY_REQUESTS, &headers, None);
    assert_eq!(hinted.date(), Some(at));
    headers.insert("date", HeaderValue::from_static("yesterday"));
    assert_eq!(parser.parse(StatusCode::OK, &headers, None).date(), None);
}
