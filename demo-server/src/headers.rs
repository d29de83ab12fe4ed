//! Emitting the rate-limit header dialects (the dialects `courteous::signal` reads).
//!
//! All seconds are rounded up, so a client that waits what it is told is
//! never early.

use std::time::Duration;

use axum::http::{HeaderMap, HeaderName, HeaderValue};

use crate::{Decision, HeaderStyle, Policy};

/// Whole seconds, rounded up.
pub fn ceil_secs(d: Duration) -> u64 {
    d.as_millis().div_ceil(1000) as u64
}

/// Add the rate-limit fields of `style` describing `decision` under `policy`.
///
/// - `ietf` (draft-11): `RateLimit-Policy: "name";q=limit;w=window` and
///   `RateLimit: "name";r=remaining;t=reset`.
/// - `ietf-legacy` (drafts -00…-06): `RateLimit-Limit`, `RateLimit-Remaining`,
///   `RateLimit-Reset` (delta seconds).
/// - `x-ratelimit` (GitHub): `X-RateLimit-Limit`, `-Remaining`, `-Used`,
///   `-Reset` (Unix epoch seconds on the store's clock).
pub fn insert_rate_limit_headers(
    headers: &mut HeaderMap,
    style: HeaderStyle,
    policy: &Policy,
    decision: &Decision,
) {
    let reset = ceil_secs(decision.reset);
    if style.has_ietf() {
        let window = ceil_secs(policy.window()).max(1);
        put(
            headers,
            "ratelimit-policy",
            format!("\"{}\";q={};w={window}", policy.name(), decision.limit),
        );
        put(
            headers,
            "ratelimit",
            format!("\"{}\";r={};t={reset}", policy.name(), decision.remaining),
        );
    }
    if style.has_ietf_legacy() {
        put(headers, "ratelimit-limit", decision.limit.to_string());
        put(
            headers,
            "ratelimit-remaining",
            decision.remaining.to_string(),
        );
        put(headers, "ratelimit-reset", reset.to_string());
    }
    if style.has_used_size() {
        put(
            headers,
            "x-shopify-shop-api-call-limit",
            format!("{}/{}", decision.limit - decision.remaining, decision.limit),
        );
    }
    if style.has_x_ratelimit() {
        let reset_at_ms = decision.now_ms + decision.reset.as_millis() as u64;
        put(headers, "x-ratelimit-limit", decision.limit.to_string());
        put(
            headers,
            "x-ratelimit-remaining",
            decision.remaining.to_string(),
        );
        put(
            headers,
            "x-ratelimit-used",
            (decision.limit - decision.remaining).to_string(),
        );
        put(
            headers,
            "x-ratelimit-reset",
            reset_at_ms.div_ceil(1000).to_string(),
        );
    }
}

/// A 429's hint in `style`: `Retry-After` in whole seconds, or as an
/// HTTP-date, or none (the problem body carries `retry_after_ms` when the
/// style has it, see [`crate::problem::too_many_requests`]).
pub fn insert_hint(headers: &mut HeaderMap, style: HeaderStyle, decision: &Decision) {
    if style.has_retry_after_seconds() {
        insert_retry_after(headers, decision.retry_after);
    } else if style == HeaderStyle::HttpDate {
        insert_retry_after_date(headers, decision.now_ms, decision.retry_after);
    }
}

/// `Retry-After` as an HTTP-date: the second the next unit is available in,
/// rounded up, on the store's clock (`now_ms`).
pub fn insert_retry_after_date(headers: &mut HeaderMap, now_ms: u64, wait: Duration) {
    let at_ms = now_ms.saturating_add(wait.as_millis() as u64);
    let at = std::time::UNIX_EPOCH + Duration::from_secs(at_ms.div_ceil(1000));
    put(headers, "retry-after", httpdate::fmt_http_date(at));
}

/// `Retry-After` in whole seconds, rounded up, at least 1 (RFC 9110 §10.2.3).
pub fn insert_retry_after(headers: &mut HeaderMap, wait: Duration) {
    put(headers, "retry-after", ceil_secs(wait).max(1).to_string());
}

fn put(headers: &mut HeaderMap, name: &'static str, value: String) {
    // Every value here is digits, quotes, `;`, `=` and a validated policy name.
    if let Ok(value) = HeaderValue::try_from(value) {
        headers.insert(HeaderName::from_static(name), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Algorithm;

    fn decision() -> Decision {
        Decision {
            allowed: false,
            limit: 20,
            remaining: 0,
            retry_after: Duration::from_millis(50),
            reset: Duration::from_millis(1001),
            now_ms: 1_798_761_599_500,
            lease: None,
        }
    }

    #[test]
    fn each_style_emits_its_fields() {
        let policy = Policy::bucket(Algorithm::TokenBucket, 20, 20.0).unwrap();
        let mut h = HeaderMap::new();
        insert_rate_limit_headers(&mut h, HeaderStyle::Ietf, &policy, &decision());
        assert_eq!(h["ratelimit-policy"], "\"default\";q=20;w=1");
        assert_eq!(h["ratelimit"], "\"default\";r=0;t=2");
        assert!(h.get("ratelimit-limit").is_none() && h.get("x-ratelimit-limit").is_none());

        let mut h = HeaderMap::new();
        insert_rate_limit_headers(&mut h, HeaderStyle::IetfLegacy, &policy, &decision());
        assert_eq!(
            [
                &h["ratelimit-limit"],
                &h["ratelimit-remaining"],
                &h["ratelimit-reset"]
            ],
            ["20", "0", "2"]
        );
        assert!(h.get("ratelimit").is_none());

        let mut h = HeaderMap::new();
        insert_rate_limit_headers(&mut h, HeaderStyle::XRatelimit, &policy, &decision());
        assert_eq!(h["x-ratelimit-reset"], "1798761601");
        assert_eq!(h["x-ratelimit-used"], "20");

        let mut h = HeaderMap::new();
        insert_rate_limit_headers(&mut h, HeaderStyle::All, &policy, &decision());
        insert_retry_after(&mut h, decision().retry_after);
        assert_eq!(h.len(), 10);
        assert_eq!(h["retry-after"], "1");
    }

    #[test]
    fn lab_styles_say_only_their_own_hint() {
        let policy = Policy::bucket(Algorithm::LeakyBucket, 20, 20.0).unwrap();
        let hint = |style| {
            let mut h = HeaderMap::new();
            insert_rate_limit_headers(&mut h, style, &policy, &decision());
            insert_hint(&mut h, style, &decision());
            h
        };
        let h = hint(HeaderStyle::UsedSize);
        assert_eq!(h["x-shopify-shop-api-call-limit"], "20/20");
        assert_eq!((h["retry-after"].to_str().unwrap(), h.len()), ("1", 2));
        // 1_798_761_599_500 + 50 ms rounds up to …600 s: 2027-01-01 00:00:00.
        let h = hint(HeaderStyle::HttpDate);
        assert_eq!(h["retry-after"], "Fri, 01 Jan 2027 00:00:00 GMT");
        assert_eq!(h.len(), 1);
        assert!(hint(HeaderStyle::ProblemOnly).is_empty());
        assert!(hint(HeaderStyle::Bare).is_empty());
    }
}
