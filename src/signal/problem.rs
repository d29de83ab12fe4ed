//! RFC 9457 problem details bodies: `retry_after_ms`, `retry_after` and the
//! IETF rate-limit problem types' `violated-policies`.
//!
//! Only bodies with a JSON media type are read (`application/json`,
//! `application/problem+json`, any `application/…+json`, parameters such as
//! `charset` allowed), and only the first `body_limit` bytes of them: a body
//! cut short by the limit is invalid JSON and simply yields nothing.

use std::time::Duration;

use http::HeaderMap;
use http::header::CONTENT_TYPE;
use serde_json::Value;

use super::error_body::{self, ErrorBody};
use super::numbers::{parse_seconds, seconds_from_f64};
use super::value::{HintSource, RetryHint};

/// What a problem body said.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Problem {
    pub(crate) retry_after_ms: Option<RetryHint>,
    pub(crate) retry_after: Option<RetryHint>,
    pub(crate) violated_policies: Vec<String>,
    /// What the API added in its own vocabulary.
    pub(crate) vendor: ErrorBody,
}

/// The media types an error body is read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Media {
    Json,
    /// Only for an AWS error's `<Code>`.
    Xml,
}

/// The media type of the response's `Content-Type`, when it is one read
/// for hints: JSON (`application/json`, any `application/…+json`, AWS's
/// `application/x-amz-json-1.0` and `-1.1`) or XML (`application/xml`,
/// `text/xml`, AWS's query and S3 errors).
pub(crate) fn media(headers: &HeaderMap) -> Option<Media> {
    let text = headers.get(CONTENT_TYPE)?.to_str().ok()?;
    let essence = text.split(';').next().unwrap_or_default().trim();
    let (kind, subtype) = essence.split_once('/')?;
    let application = kind.eq_ignore_ascii_case("application");
    let json = subtype.eq_ignore_ascii_case("json")
        || ends_with_ignore_case(subtype, "+json")
        || starts_with_ignore_case(subtype, "x-amz-json-");
    if application && json {
        Some(Media::Json)
    } else if subtype.eq_ignore_ascii_case("xml")
        && (application || kind.eq_ignore_ascii_case("text"))
    {
        Some(Media::Xml)
    } else {
        None
    }
}

/// Whether the response's `Content-Type` is a JSON media type.
#[cfg(test)]
fn is_json(headers: &HeaderMap) -> bool {
    media(headers) == Some(Media::Json)
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.len() >= prefix.len()
        && text.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

fn ends_with_ignore_case(text: &str, suffix: &str) -> bool {
    text.len() >= suffix.len()
        && text.as_bytes()[text.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

/// Reads an error body of `media`; anything but a JSON object (or an XML
/// body with an AWS `<Code>`) yields `None`.
pub(crate) fn read_as(media: Media, body: &[u8]) -> Option<Problem> {
    match media {
        Media::Json => read(body),
        Media::Xml => {
            let refusal = error_body::xml_aws_code(body)?;
            Some(Problem {
                vendor: ErrorBody {
                    refusal: Some(refusal),
                    ..ErrorBody::default()
                },
                ..Problem::default()
            })
        }
    }
}

/// Reads a JSON problem body; anything but a JSON object yields `None`.
fn read(body: &[u8]) -> Option<Problem> {
    let value: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(error) => {
            tracing::debug!(%error, "ignoring a JSON body that does not parse");
            return None;
        }
    };
    let object = value.as_object()?;
    let hint = |key: &str, seconds: fn(&Value) -> Option<Duration>, source| {
        let member = object.get(key)?;
        let delay = seconds(member);
        if delay.is_none() {
            tracing::debug!(key, ?member, "ignoring a malformed problem member");
        }
        delay.map(|delay| RetryHint::new(delay, source))
    };
    Some(Problem {
        retry_after_ms: hint(
            "retry_after_ms",
            millis_member,
            HintSource::ProblemRetryAfterMs,
        ),
        retry_after: hint("retry_after", seconds_member, HintSource::ProblemRetryAfter),
        violated_policies: object
            .get("violated-policies")
            .and_then(Value::as_array)
            .map(|names| {
                names
                    .iter()
                    .filter_map(|name| name.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        vendor: error_body::read(object),
    })
}

/// Seconds as a JSON number (may be fractional) or a numeric string.
fn seconds_member(value: &Value) -> Option<Duration> {
    match value {
        Value::Number(number) => match number.as_u64() {
            Some(secs) => Some(Duration::from_secs(secs)),
            None => seconds_from_f64(number.as_f64()?),
        },
        Value::String(text) => parse_seconds(text.trim().as_bytes()),
        _ => None,
    }
}

/// Milliseconds as a JSON number (may be fractional) or a numeric string.
fn millis_member(value: &Value) -> Option<Duration> {
    match value {
        Value::Number(number) => match number.as_u64() {
            Some(millis) => Some(Duration::from_millis(millis)),
            None => seconds_from_f64(number.as_f64()? / 1000.0),
        },
        // Parsed as if seconds, then scaled: "12.5" ms is 12.5 s / 1000.
        Value::String(text) => parse_seconds(text.trim().as_bytes()).map(|scaled| scaled / 1000),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn json(content_type: &'static str) -> bool {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
        is_json(&headers)
    }

    #[test]
    fn json_media_types() {
        assert!(json("application/problem+json"));
        assert!(json("application/json"));
        assert!(json("Application/JSON; charset=utf-8"));
        assert!(json("application/vnd.api+json"));
        assert!(!json("text/json+plain"));
        assert!(!json("text/html"));
        assert!(!json("application/jsonx"));
        assert!(!json("application"));
        assert!(json("application/x-amz-json-1.1"));
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/xml"));
        assert_eq!(media(&headers), Some(Media::Xml));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("image/xml"));
        assert_eq!(media(&headers), None);
        assert!(!is_json(&HeaderMap::new()));
    }

    #[test]
    fn reads_the_hints_and_violated_policies() {
        let body = br#"{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded",
            "title":"Too Many Requests","status":429,"retry_after_ms":50,"retry_after":0.05,
            "violated-policies":["daily", 7, "burst"]}"#;
        let problem = read(body).unwrap();
        let millis = |ms| Some(Duration::from_millis(ms));
        assert_eq!(problem.retry_after_ms.map(|h| h.delay()), millis(50));
        assert_eq!(problem.retry_after.map(|h| h.delay()), millis(50));
        assert_eq!(problem.violated_policies, ["daily", "burst"]);
    }

    #[test]
    fn fractional_large_and_string_numbers() {
        let problem = read(br#"{"retry_after_ms":12.5,"retry_after":"1.5"}"#).unwrap();
        assert_eq!(
            problem.retry_after_ms.unwrap().delay(),
            Duration::from_micros(12_500)
        );
        assert_eq!(
            problem.retry_after.unwrap().delay(),
            Duration::from_millis(1500)
        );
        let huge = format!(r#"{{"retry_after":{}}}"#, "9".repeat(40));
        let problem = read(huge.as_bytes()).unwrap();
        assert_eq!(problem.retry_after.unwrap().delay(), Duration::MAX);
    }

    #[test]
    fn malformed_members_and_bodies_yield_nothing() {
        let problem = read(br#"{"retry_after_ms":-5,"retry_after":null,"violated-policies":"x"}"#);
        assert_eq!(problem, Some(Problem::default()));
        assert_eq!(read(br#"{"retry_after_ms":50"#), None);
        assert_eq!(read(b"[1,2]"), None);
        assert_eq!(read(b"\xff\xfe"), None);
        let deep = "[".repeat(10_000);
        assert_eq!(read(deep.as_bytes()), None);
    }
}
