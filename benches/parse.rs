//! Parser cost: a response carrying every dialect at once, and a plain 200
//! with no rate-limit field (the cost paid on every response).
//!
//! `cargo bench --bench parse -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::time::SystemTime;

use courteous::signal::SignalParser;
use criterion::{Criterion, criterion_group, criterion_main};
use http::{HeaderMap, HeaderValue, StatusCode};

fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in pairs {
        headers.append(*name, HeaderValue::from_static(value));
    }
    headers
}

fn plain_200() -> HeaderMap {
    headers(&[
        ("date", "Wed, 21 Oct 2026 07:20:00 GMT"),
        ("content-type", "application/json; charset=utf-8"),
        ("content-length", "1024"),
        ("cache-control", "no-cache"),
        ("server", "nginx"),
        ("vary", "accept-encoding"),
        ("x-request-id", "f3b8c0de-9a3c-4f7b-8a4e-2c1d5e6f7a8b"),
        ("strict-transport-security", "max-age=63072000"),
    ])
}

fn every_dialect() -> HeaderMap {
    headers(&[
        ("date", "Wed, 21 Oct 2026 07:20:00 GMT"),
        ("content-type", "application/problem+json"),
        ("retry-after", "Wed, 21 Oct 2026 07:20:01 GMT"),
        ("retry-after-ms", "950"),
        ("x-ms-retry-after-ms", "950"),
        (
            "ratelimit-policy",
            r#""burst";q=100;w=60;pk=:MDEyMzQ1Njc4OWFi:,"daily";q=1000;w=86400"#,
        ),
        ("ratelimit", r#""burst";r=0;t=1, "daily";r=900;t=3600"#),
        ("ratelimit-limit", "100, 100;w=60"),
        ("ratelimit-remaining", "0"),
        ("ratelimit-reset", "1"),
        ("x-ratelimit-limit", "100"),
        ("x-ratelimit-remaining", "0"),
        ("x-ratelimit-reset", "1792567201"),
        ("x-ratelimit-reset-after", "0.95"),
        ("x-ratelimit-used", "100"),
    ])
}

const PROBLEM: &[u8] = br#"{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded","title":"Too Many Requests","status":429,"retry_after_ms":950,"violated-policies":["burst"]}"#;

fn bench(c: &mut Criterion) {
    let parser = SignalParser::new();
    let now = SystemTime::now();

    let plain = plain_200();
    assert!(
        parser
            .parse_at(StatusCode::OK, &plain, None, now)
            .is_empty()
    );
    c.bench_function("plain 200, no rate-limit fields", |b| {
        b.iter(|| parser.parse_at(black_box(StatusCode::OK), black_box(&plain), None, now))
    });

    let every = every_dialect();
    let status = StatusCode::TOO_MANY_REQUESTS;
    let parsed = parser.parse_at(status, &every, None, now);
    assert_eq!(parsed.policies().len(), 4, "{parsed:#?}");
    c.bench_function("429, every header dialect", |b| {
        b.iter(|| parser.parse_at(black_box(status), black_box(&every), None, now))
    });
    let dialects: [(&str, &[(&'static str, &'static str)]); 5] = [
        (
            "Retry-After HTTP-date + Date",
            &[
                ("date", "Wed, 21 Oct 2026 07:20:00 GMT"),
                ("retry-after", "Wed, 21 Oct 2026 07:20:01 GMT"),
            ],
        ),
        (
            "IETF -08+ lists",
            &[
                (
                    "ratelimit-policy",
                    r#""burst";q=100;w=60;pk=:MDEyMzQ1Njc4OWFi:,"daily";q=1000;w=86400"#,
                ),
                ("ratelimit", r#""burst";r=0;t=1, "daily";r=900;t=3600"#),
            ],
        ),
        (
            "IETF -07 dictionary",
            &[
                ("ratelimit-policy", "100;w=60"),
                ("ratelimit", "limit=100, remaining=0, reset=1"),
            ],
        ),
        (
            "IETF -00..-06 separate",
            &[
                ("ratelimit-limit", "100, 100;w=60"),
                ("ratelimit-remaining", "0"),
                ("ratelimit-reset", "1"),
            ],
        ),
        (
            "X-RateLimit",
            &[
                ("date", "Wed, 21 Oct 2026 07:20:00 GMT"),
                ("x-ratelimit-limit", "100"),
                ("x-ratelimit-remaining", "0"),
                ("x-ratelimit-reset", "1792567201"),
                ("x-ratelimit-used", "100"),
            ],
        ),
    ];
    for (name, pairs) in dialects {
        let one = headers(pairs);
        assert!(!parser.parse_at(status, &one, None, now).is_empty());
        c.bench_function(&format!("429, {name} only"), |b| {
            b.iter(|| parser.parse_at(black_box(status), black_box(&one), None, now))
        });
    }
    c.bench_function("429, every header dialect + problem+json body", |b| {
        b.iter(|| {
            parser.parse_at(
                black_box(status),
                black_box(&every),
                Some(black_box(PROBLEM)),
                now,
            )
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
