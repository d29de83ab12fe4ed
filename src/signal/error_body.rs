//! What APIs put in their error bodies besides problem+json: Google's
//! `error.details[]` (`RetryInfo`, `QuotaFailure`), OpenAI's
//! `insufficient_quota`, AWS error codes (JSON `__type` / `Code`, XML
//! `<Code>`), Discord's `global`, GraphQL rate-limit errors and Shopify's
//! `extensions.cost.throttleStatus`.
//!
//! Every member is optional and checked for its type; anything else is
//! ignored. Numbers are hostile: non-finite or negative ones are dropped,
//! large ones saturate.

use std::time::Duration;

use serde_json::{Map, Value};

use super::numbers::parse_seconds;
use super::quota::{Quota, QuotaSource, QuotaUnit};
use super::refusal::{Refusal, aws_code};
use super::value::{HintSource, RetryHint};

/// What an error body said beyond problem+json.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct ErrorBody {
    pub(crate) retry_info: Option<RetryHint>,
    pub(crate) refusal: Option<Refusal>,
    pub(crate) global: bool,
    pub(crate) cost: Option<Quota>,
}

/// Reads a JSON error body's vendor members.
pub(crate) fn read(object: &Map<String, Value>) -> ErrorBody {
    let error = object.get("error").and_then(Value::as_object);
    let details = error
        .and_then(|error| error.get("details"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let refusal = error
        .and_then(insufficient_quota)
        .or_else(|| quota_failure(details))
        .or_else(|| json_aws_code(object))
        .or_else(|| graphql_rate_limited(object));
    ErrorBody {
        retry_info: retry_info(details),
        refusal,
        global: object.get("global").and_then(Value::as_bool) == Some(true),
        cost: throttle_status(object),
    }
}

/// OpenAI: `error.code` or `error.type` is `insufficient_quota`.
fn insufficient_quota(error: &Map<String, Value>) -> Option<Refusal> {
    ["code", "type"]
        .iter()
        .any(|key| error.get(*key).and_then(Value::as_str) == Some("insufficient_quota"))
        .then_some(Refusal::InsufficientQuota)
}

/// Whether a detail's `@type` is the protobuf message `name`
/// (`type.googleapis.com/google.rpc.RetryInfo`).
fn is_detail(detail: &Value, name: &str) -> bool {
    detail
        .get("@type")
        .and_then(Value::as_str)
        .is_some_and(|kind| kind.rsplit('/').next() == Some(name))
}

/// `google.rpc.RetryInfo.retryDelay`: a protobuf JSON duration, seconds
/// with up to nine fractional digits and an `s` (`"38s"`, `"1.250s"`).
fn retry_info(details: &[Value]) -> Option<RetryHint> {
    let delay = details
        .iter()
        .filter(|detail| is_detail(detail, "google.rpc.RetryInfo"))
        .find_map(|detail| {
            let text = detail.get("retryDelay")?.as_str()?;
            let delay = parse_seconds(text.trim().strip_suffix('s')?.as_bytes());
            if delay.is_none() {
                tracing::debug!(text, "ignoring a malformed RetryInfo retryDelay");
            }
            delay
        })?;
    Some(RetryHint::new(delay, HintSource::GoogleRetryInfo))
}

/// `google.rpc.QuotaFailure`: the violated quotas, and whether one is per day.
fn quota_failure(details: &[Value]) -> Option<Refusal> {
    let mut quota_ids = Vec::new();
    let mut per_day = false;
    let mut found = false;
    for detail in details
        .iter()
        .filter(|detail| is_detail(detail, "google.rpc.QuotaFailure"))
    {
        found = true;
        let violations = detail.get("violations").and_then(Value::as_array);
        for violation in violations.into_iter().flatten().take(64) {
            let text = |key: &str| violation.get(key).and_then(Value::as_str);
            if let Some(id) = text("quotaId").or_else(|| text("subject")) {
                quota_ids.push(id.to_owned());
            }
            per_day |= ["quotaId", "quotaMetric", "description"]
                .iter()
                .filter_map(|key| text(key))
                .any(says_per_day);
        }
    }
    found.then_some(Refusal::QuotaFailure { quota_ids, per_day })
}

/// `...PerDay...` in an id, "per day" in prose, either case.
fn says_per_day(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("perday") || lower.contains("per day") || lower.contains("per-day")
}

/// AWS JSON protocols: `__type` (`…#ThrottlingException`) or `Code`.
fn json_aws_code(object: &Map<String, Value>) -> Option<Refusal> {
    let raw = ["__type", "Code"]
        .iter()
        .find_map(|key| object.get(*key)?.as_str())?;
    Some(Refusal::Aws {
        code: aws_code(raw)?,
    })
}

/// An AWS XML error (`<Error><Code>SlowDown</Code>…`): the first `<Code>`.
pub(crate) fn xml_aws_code(body: &[u8]) -> Option<Refusal> {
    const OPEN: &[u8] = b"<Code>";
    let start = body.windows(OPEN.len()).position(|w| w == OPEN)? + OPEN.len();
    let rest = &body[start..];
    let end = rest.iter().position(|&byte| byte == b'<')?;
    let code = aws_code(std::str::from_utf8(&rest[..end]).ok()?)?;
    Some(Refusal::Aws { code })
}

/// GraphQL: an error typed `RATE_LIMITED` (GitHub) or with
/// `extensions.code == "THROTTLED"` (Shopify).
fn graphql_rate_limited(object: &Map<String, Value>) -> Option<Refusal> {
    let errors = object.get("errors")?.as_array()?;
    errors
        .iter()
        .take(64)
        .any(|error| {
            error.get("type").and_then(Value::as_str) == Some("RATE_LIMITED")
                || error
                    .get("extensions")
                    .and_then(|extensions| extensions.get("code"))
                    .and_then(Value::as_str)
                    == Some("THROTTLED")
        })
        .then_some(Refusal::GraphqlRateLimited)
}

/// Shopify GraphQL: `extensions.cost.throttleStatus {maximumAvailable,
/// currentlyAvailable, restoreRate}`, a bucket of points refilled at
/// `restoreRate` per second: limit the bucket, remaining what is available
/// (rounded down), the window the time to fill it from empty, the reset the
/// time to fill it from now.
pub(crate) fn throttle_status(object: &Map<String, Value>) -> Option<Quota> {
    let status = object
        .get("extensions")?
        .get("cost")?
        .get("throttleStatus")?;
    let number = |key: &str| {
        status
            .get(key)
            .and_then(Value::as_f64)
            .filter(|value| value.is_finite() && *value >= 0.0)
    };
    let maximum = number("maximumAvailable")?;
    let available = number("currentlyAvailable").map(|available| available.min(maximum));
    let mut quota = Quota::new(QuotaSource::ShopifyGraphql).with_unit(QuotaUnit::Points);
    // `as` saturates a finite non-negative float into u64.
    quota.set_limit(Some(maximum as u64));
    quota.set_remaining(available.map(|available| available as u64));
    if let Some(rate) = number("restoreRate").filter(|rate| *rate > 0.0) {
        let seconds = |points: f64| Duration::try_from_secs_f64(points / rate).ok();
        quota.set_window(seconds(maximum));
        quota.set_reset(available.and_then(|available| seconds(maximum - available)));
    }
    Some(quota)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(json: &str) -> ErrorBody {
        let value: Value = serde_json::from_str(json).unwrap();
        read(value.as_object().unwrap())
    }

    #[test]
    fn google_retry_info_and_a_per_minute_quota() {
        let read = body(
            r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[
            {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[
              {"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests",
               "quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},
            {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.250s"}]}}"#,
        );
        assert_eq!(
            read.retry_info.map(|hint| hint.delay()),
            Some(Duration::from_millis(1250))
        );
        let refusal = read.refusal.unwrap();
        assert!(refusal.is_throttling());
        assert_eq!(
            refusal,
            Refusal::QuotaFailure {
                quota_ids: vec!["GenerateRequestsPerMinutePerProjectPerModel-FreeTier".into()],
                per_day: false
            }
        );
    }

    #[test]
    fn google_per_day_quota_is_final_and_bad_delays_are_ignored() {
        let read = body(
            r#"{"error":{"details":[
            {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"-3s"},
            {"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[
              {"subject":"project:123","description":"Daily Limit Exceeded: 10000 requests per day"}]}]}}"#,
        );
        assert_eq!(read.retry_info, None);
        assert!(read.refusal.unwrap().is_final());
        for delay in ["\"38\"", "\"NaNs\"", "38", "\"1e9s\""] {
            let json = format!(
                r#"{{"error":{{"details":[{{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":{delay}}}]}}}}"#
            );
            assert_eq!(body(&json).retry_info, None, "{delay}");
        }
    }

    #[test]
    fn openai_insufficient_quota_either_member() {
        for key in ["code", "type"] {
            let json = format!(r#"{{"error":{{"{key}":"insufficient_quota"}}}}"#);
            assert_eq!(body(&json).refusal, Some(Refusal::InsufficientQuota));
        }
        let limited = body(r#"{"error":{"code":"rate_limit_exceeded","type":"requests"}}"#);
        assert_eq!(limited.refusal, None);
    }

    #[test]
    fn aws_codes_from_json_and_xml() {
        let read = body(r#"{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException"}"#);
        let code = |refusal: Option<Refusal>| match refusal {
            Some(Refusal::Aws { code }) => Some(code),
            _ => None,
        };
        assert_eq!(code(read.refusal).as_deref(), Some("ThrottlingException"));
        let xml =
            b"<?xml version=\"1.0\"?><Error><Code>SlowDown</Code><Message>Reduce</Message></Error>";
        assert_eq!(code(xml_aws_code(xml)).as_deref(), Some("SlowDown"));
        assert_eq!(xml_aws_code(b"<Error><Code>unterminated"), None);
        assert_eq!(xml_aws_code(b"<Error/>"), None);
    }

    #[test]
    fn discord_global_graphql_and_shopify_cost() {
        assert!(
            body(r#"{"message":"You are being rate limited.","retry_after":0.5,"global":true}"#)
                .global
        );
        assert!(!body(r#"{"global":"yes"}"#).global);
        let github =
            body(r#"{"errors":[{"type":"RATE_LIMITED","message":"API rate limit exceeded"}]}"#);
        assert_eq!(github.refusal, Some(Refusal::GraphqlRateLimited));
        let shopify = body(
            r#"{"errors":[{"message":"Throttled","extensions":{"code":"THROTTLED"}}],
            "extensions":{"cost":{"requestedQueryCost":101,"actualQueryCost":null,
            "throttleStatus":{"maximumAvailable":1000.0,"currentlyAvailable":50.5,"restoreRate":50.0}}}}"#,
        );
        assert_eq!(shopify.refusal, Some(Refusal::GraphqlRateLimited));
        let cost = shopify.cost.unwrap();
        assert_eq!(cost.limit(), Some(1000));
        assert_eq!(cost.remaining(), Some(50));
        assert_eq!(cost.unit(), QuotaUnit::Points);
        assert_eq!(cost.window(), Some(Duration::from_secs(20)));
        assert_eq!(cost.reset(), Some(Duration::from_millis(18_990)));
        let hostile = body(
            r#"{"extensions":{"cost":{"throttleStatus":{"maximumAvailable":1e308,"currentlyAvailable":-5,"restoreRate":1e-300}}}}"#,
        );
        let cost = hostile.cost.unwrap();
        assert_eq!(cost.limit(), Some(u64::MAX));
        assert_eq!((cost.remaining(), cost.window()), (None, None));
    }
}
