//! Fuzzes the signal parser with arbitrary statuses, rate-limit header bytes
//! and bodies: it must never panic, and what it returns must be consistent.
//!
//! `cargo +nightly fuzz run parse -- -max_total_time=60`
#![no_main]

use std::time::{Duration, SystemTime};

use arbitrary::Arbitrary;
use courteous::signal::SignalParser;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use libfuzzer_sys::fuzz_target;

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

#[derive(Debug, Arbitrary)]
struct Response {
    status: u16,
    headers: Vec<(u8, Vec<u8>)>,
    body: Option<Vec<u8>>,
    body_limit: u16,
    now_secs: u64,
}

fuzz_target!(|response: Response| {
    let status = StatusCode::from_u16(response.status).unwrap_or(StatusCode::TOO_MANY_REQUESTS);
    let mut headers = HeaderMap::new();
    for (index, value) in &response.headers {
        let name = FIELDS[usize::from(*index) % FIELDS.len()];
        if let Ok(value) = HeaderValue::from_bytes(value) {
            headers.append(HeaderName::from_static(name), value);
        }
    }
    let now = SystemTime::UNIX_EPOCH
        .checked_add(Duration::from_secs(response.now_secs))
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let parser = SignalParser::new().body_limit(usize::from(response.body_limit));
    let signal = parser.parse_at(status, &headers, response.body.as_deref(), now);
    if let Some(binding) = signal.quota() {
        assert!(signal.policies().contains(binding));
        let least = signal.policies().iter().filter_map(|q| q.remaining()).min();
        assert_eq!(binding.remaining(), least);
    }
    assert_eq!(
        signal.is_empty(),
        signal.retry_after().is_none()
            && signal.policies().is_empty()
            && signal.violated_policies().is_empty()
    );
});
