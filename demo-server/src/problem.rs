//! RFC 9457 problem documents for 429 and 503.

use std::time::Duration;

use serde_json::{Value, json};

/// IETF problem type for an exhausted quota (draft-ietf-httpapi-ratelimit-headers).
pub const QUOTA_EXCEEDED: &str = "https://iana.org/assignments/http-problem-types#quota-exceeded";
/// This server's problem type for a 429 outside the IETF style.
pub const RATE_LIMITED: &str = "/problems/rate-limited";
/// This server's problem type for a 503 when the limiter is unavailable and failing closed.
pub const LIMITER_UNAVAILABLE: &str = "/problems/limiter-unavailable";
/// The media type of the bodies.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// The 429 body: `retry_after_ms` when given, the IETF type and
/// `violated-policies` when the IETF fields are emitted.
pub fn too_many_requests(retry_after: Option<Duration>, ietf: bool, policy_name: &str) -> Value {
    let mut body = json!({
        "type": if ietf { QUOTA_EXCEEDED } else { RATE_LIMITED },
        "title": "Too Many Requests",
        "status": 429,
    });
    if let Some(retry_after) = retry_after {
        body["detail"] =
            format!("Quota exhausted; retry in {} ms.", retry_after.as_millis()).into();
        body["retry_after_ms"] = (retry_after.as_millis() as u64).into();
    } else {
        body["detail"] = "Quota exhausted.".into();
    }
    if ietf {
        body["violated-policies"] = json!([policy_name]);
    }
    body
}

/// The 503 body of a limiter failing closed.
pub fn limiter_unavailable(retry_after: Duration) -> Value {
    json!({
        "type": LIMITER_UNAVAILABLE,
        "title": "Service Unavailable",
        "status": 503,
        "detail": "The rate limiter is unavailable; this server fails closed.",
        "retry_after_ms": retry_after.as_millis() as u64,
    })
}
