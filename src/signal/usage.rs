//! [`Usage`]: what a success body says its request spent, as OpenAI and
//! Anthropic report it in `usage`.
//!
//! - OpenAI (Chat Completions, Completions, Embeddings):
//!   `{"usage":{"prompt_tokens":…,"completion_tokens":…,"total_tokens":…}}`;
//!   the Responses API: `{"usage":{"input_tokens":…,"output_tokens":…,"total_tokens":…}}`.
//! - Anthropic (Messages): `{"usage":{"input_tokens":…,"output_tokens":…,
//!   "cache_creation_input_tokens":…,"cache_read_input_tokens":…}}`.
//!
//! Read only when the parser is told the API reports it
//! ([`SignalParser::read_usage`](super::SignalParser::read_usage)), only
//! from a `2xx` whose media type is `application/json` (a stream,
//! `text/event-stream`, is the caller's), and only when the whole body
//! fits the parser's body limit: a body cut short is not valid JSON and
//! yields nothing. Every count must be a JSON integer from 0 to
//! `u64::MAX`; anything else (a float, a negative, a string, `null`, an
//! object) is ignored, as is a body that is not a JSON object with a
//! `usage` object, or nests deeper than `serde_json`'s limit (128); of a
//! duplicated member the last is read, as `serde_json` does. Nothing here
//! panics or errors.

use http::HeaderMap;
use http::header::CONTENT_TYPE;
use serde_json::Value;

use super::quota::QuotaUnit;

/// What a response says its request spent, by unit: the `usage` of an
/// OpenAI or Anthropic success body ([`Signal::usage`](super::Signal::usage)).
///
/// - In [`QuotaUnit::Tokens`], OpenAI's `total_tokens`, else
///   `prompt_tokens + completion_tokens` (OpenAI's `tokens` quota counts
///   both).
/// - In [`QuotaUnit::InputTokens`], `input_tokens +
///   cache_creation_input_tokens` (Anthropic's input-tokens quota counts
///   the uncached input and what is written to the cache; reads from the
///   cache, `cache_read_input_tokens`, do not count on current models).
/// - In [`QuotaUnit::OutputTokens`], `output_tokens`.
///
/// Anthropic's `tokens` quota, the most restrictive of its input and
/// output limits, is not settled from a body that states input and output
/// apart: which of the two it counts is not said.
///
/// ```
/// use courteous::signal::{QuotaUnit, Usage};
///
/// let usage = Usage::from_json(br#"{"usage":{"prompt_tokens":12,"completion_tokens":30,"total_tokens":42}}"#).unwrap();
/// assert_eq!(usage.get(QuotaUnit::Tokens), Some(42));
/// assert_eq!(usage.get(QuotaUnit::OutputTokens), None);
///
/// let usage = Usage::from_json(br#"{"type":"message","usage":{"input_tokens":10,"cache_creation_input_tokens":5,"output_tokens":7}}"#).unwrap();
/// assert_eq!(usage.get(QuotaUnit::InputTokens), Some(15));
/// assert_eq!(usage.get(QuotaUnit::OutputTokens), Some(7));
///
/// assert!(Usage::from_json(br#"{"usage":{"total_tokens":-1}}"#).is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    tokens: Option<u64>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

impl Usage {
    /// The usage a JSON body states, if it states any count this type
    /// knows (see the type's docs); `None` for anything else.
    pub fn from_json(body: &[u8]) -> Option<Self> {
        let body: Value = serde_json::from_slice(body).ok()?;
        let usage = body.as_object()?.get("usage")?.as_object()?;
        let count = |name: &str| usage.get(name).and_then(Value::as_u64);
        let tokens = count("total_tokens")
            .or_else(|| count("prompt_tokens")?.checked_add(count("completion_tokens")?));
        let input_tokens = count("input_tokens")
            .and_then(|input| input.checked_add(count("cache_creation_input_tokens").unwrap_or(0)));
        let usage = Self {
            tokens,
            input_tokens,
            output_tokens: count("output_tokens"),
        };
        (usage != Self::default()).then_some(usage)
    }

    /// What the request spent of `unit`, if the body said.
    pub fn get(&self, unit: QuotaUnit) -> Option<u64> {
        match unit {
            QuotaUnit::Tokens => self.tokens,
            QuotaUnit::InputTokens => self.input_tokens,
            QuotaUnit::OutputTokens => self.output_tokens,
            _ => None,
        }
    }

    /// Every unit the body stated and its amount.
    pub fn iter(&self) -> impl Iterator<Item = (QuotaUnit, u64)> + '_ {
        [
            (QuotaUnit::Tokens, self.tokens),
            (QuotaUnit::InputTokens, self.input_tokens),
            (QuotaUnit::OutputTokens, self.output_tokens),
        ]
        .into_iter()
        .filter_map(|(unit, amount)| Some((unit, amount?)))
    }
}

/// Whether the response's `Content-Type` is `application/json` itself
/// (parameters such as `charset` allowed): what OpenAI and Anthropic send
/// for a whole answer. A stream (`text/event-stream`) is not.
pub(crate) fn is_plain_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|text| text.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn tokens(body: &str) -> Option<u64> {
        Usage::from_json(body.as_bytes())?.get(QuotaUnit::Tokens)
    }

    #[test]
    fn openai_chat_completion() {
        let body = r#"{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21,"prompt_tokens_details":{"cached_tokens":0}}}"#;
        let usage = Usage::from_json(body.as_bytes()).unwrap();
        assert_eq!(usage.get(QuotaUnit::Tokens), Some(21));
        assert_eq!(usage.get(QuotaUnit::InputTokens), None);
        assert_eq!(usage.get(QuotaUnit::Requests), None);
        assert_eq!(usage.iter().collect::<Vec<_>>(), [(QuotaUnit::Tokens, 21)]);
    }

    #[test]
    fn total_missing_is_the_sum_of_its_parts() {
        assert_eq!(
            tokens(r#"{"usage":{"prompt_tokens":9,"completion_tokens":12}}"#),
            Some(21)
        );
        assert_eq!(tokens(r#"{"usage":{"prompt_tokens":9}}"#), None);
        let max = u64::MAX;
        let sum = format!(r#"{{"usage":{{"prompt_tokens":{max},"completion_tokens":1}}}}"#);
        assert_eq!(tokens(&sum), None, "an overflowing sum is no count");
    }

    #[test]
    fn anthropic_message() {
        let body = r#"{"id":"msg_1","type":"message","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":25,"cache_creation_input_tokens":100,"cache_read_input_tokens":900,"output_tokens":40}}"#;
        let usage = Usage::from_json(body.as_bytes()).unwrap();
        assert_eq!(usage.get(QuotaUnit::InputTokens), Some(125));
        assert_eq!(usage.get(QuotaUnit::OutputTokens), Some(40));
        assert_eq!(usage.get(QuotaUnit::Tokens), None);
        // A cache count that is no count leaves the input as stated.
        let body = r#"{"usage":{"input_tokens":25,"cache_creation_input_tokens":null}}"#;
        let usage = Usage::from_json(body.as_bytes()).unwrap();
        assert_eq!(usage.get(QuotaUnit::InputTokens), Some(25));
    }

    #[test]
    fn openai_responses_api() {
        let body = r#"{"object":"response","usage":{"input_tokens":5,"output_tokens":7,"total_tokens":12}}"#;
        let usage = Usage::from_json(body.as_bytes()).unwrap();
        assert_eq!(usage.get(QuotaUnit::Tokens), Some(12));
        assert_eq!(usage.get(QuotaUnit::InputTokens), Some(5));
        assert_eq!(usage.get(QuotaUnit::OutputTokens), Some(7));
    }

    #[test]
    fn hostile_counts_are_ignored() {
        for value in [
            "-1",
            "1.5",
            "1e3",
            "\"100\"",
            "null",
            "true",
            "[100]",
            "{\"n\":100}",
            "18446744073709551616",
            "99999999999999999999999999999999",
            "-0.0",
            "NaN",
        ] {
            let body = format!(r#"{{"usage":{{"total_tokens":{value}}}}}"#);
            assert_eq!(tokens(&body), None, "{value}");
        }
        let max = format!(r#"{{"usage":{{"total_tokens":{}}}}}"#, u64::MAX);
        assert_eq!(tokens(&max), Some(u64::MAX));
        assert_eq!(tokens(r#"{"usage":{"total_tokens":0}}"#), Some(0));
    }

    #[test]
    fn bodies_without_usage_say_nothing() {
        for body in [
            "",
            "null",
            "[]",
            "42",
            "\"usage\"",
            "{}",
            r#"{"usage":null}"#,
            r#"{"usage":[1,2]}"#,
            r#"{"usage":"total_tokens=5"}"#,
            r#"{"usage":{}}"#,
            r#"{"usage":{"cached_tokens":5}}"#,
            r#"{"data":{"usage":{"total_tokens":5}}}"#,
            // Cut short by the body limit, or trailing bytes.
            r#"{"usage":{"total_tokens":5}"#,
            r#"{"usage":{"total_tokens":5}} {"#,
            "\u{feff}{\"usage\":{\"total_tokens\":5}}",
            "{\"usage\":{\"total_tokens\":5}\u{0}}",
        ] {
            assert_eq!(Usage::from_json(body.as_bytes()), None, "{body:?}");
        }
        assert_eq!(Usage::from_json(&[0xff, 0xfe, b'{']), None);
        // Of a duplicated member the last counts, as serde_json reads it.
        let twice = r#"{"usage":{"total_tokens":5},"usage":{"total_tokens":6}}"#;
        assert_eq!(tokens(twice), Some(6));
    }

    #[test]
    fn deep_nesting_neither_panics_nor_counts() {
        for depth in [127, 128, 129, 10_000, 100_000] {
            let body = format!(
                r#"{{"a":{}1{},"usage":{{"total_tokens":5}}}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            );
            // Within serde_json's recursion limit the usage is read; past
            // it, the body is refused whole.
            let read = tokens(&body);
            assert!(read.is_none() || read == Some(5), "{depth}");
            if depth >= 1_000 {
                assert_eq!(read, None, "{depth}");
            }
            let inside = format!(
                r#"{{"usage":{{"total_tokens":{}5{}}}}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            );
            assert_eq!(tokens(&inside), None, "{depth}");
        }
    }

    #[test]
    fn the_parser_reads_usage_only_where_told_and_never_as_a_hint() {
        use http::StatusCode;

        use crate::signal::SignalParser;

        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        let body = br#"{"retry_after":30,"usage":{"total_tokens":21}}"#;
        let on = SignalParser::new().read_usage(true);
        let read = |parser: &SignalParser, status| {
            let signal = parser.parse(status, &headers, Some(body));
            (signal.usage().copied(), signal.retry_after().is_some())
        };
        let usage = Usage::from_json(body);
        assert!(usage.is_some());
        // A success's `retry_after` is application data, usage or not.
        assert_eq!(read(&on, StatusCode::OK), (usage, false));
        assert_eq!(read(&SignalParser::new(), StatusCode::OK), (None, false));
        // An error body is read for hints, never for usage.
        let refused = read(&on, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(refused, (None, true));
        // A body limit of 0 reads nothing; one that cuts the body short
        // reads no usage.
        assert!(
            !on.clone()
                .body_limit(0)
                .wants_body(StatusCode::OK, &headers)
        );
        let short = on.clone().body_limit(body.len() - 1);
        assert!(short.wants_body(StatusCode::OK, &headers));
        assert_eq!(read(&short, StatusCode::OK), (None, false));
        let exact = on.clone().body_limit(body.len());
        assert_eq!(read(&exact, StatusCode::OK), (usage, false));
        // Nor a redirect, nor a stream.
        assert!(!on.wants_body(StatusCode::NO_CONTENT, &HeaderMap::new()));
        assert!(!on.wants_body(StatusCode::MOVED_PERMANENTLY, &headers));
        assert!(on.reads_usage() && !SignalParser::new().reads_usage());
    }

    #[test]
    fn only_plain_json_is_read() {
        let headers = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static(value));
            headers
        };
        assert!(is_plain_json(&headers("application/json")));
        assert!(is_plain_json(&headers("Application/JSON; charset=utf-8")));
        assert!(!is_plain_json(&headers("text/event-stream")));
        assert!(!is_plain_json(&headers("application/problem+json")));
        assert!(!is_plain_json(&headers("application/jsonl")));
        assert!(!is_plain_json(&headers("text/json")));
        assert!(!is_plain_json(&HeaderMap::new()));
    }
}
