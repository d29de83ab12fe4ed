//! What a server said when it refused a request for good
//! ([`ResponseClass::Refused`](crate::classify::ResponseClass::Refused)):
//! the refusal its body or headers named, its own message, and whether it
//! said `x-should-retry: false`.

use std::fmt;

use serde_json::Value;

use crate::signal::{Refusal, Signal};

/// The longest server message kept, in characters: enough for OpenAI's
/// and Google's one-sentence messages, short enough for a log line.
const MAX_MESSAGE_CHARS: usize = 200;

/// What the server said when it refused for good.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Refused {
    pub(crate) refusal: Option<Refusal>,
    /// The body's human message (`error.message`, `message`, `Message`,
    /// `errors[0].message` or XML `<Message>`), cleaned and shortened.
    pub(crate) message: Option<String>,
    /// The response said `x-should-retry: false`.
    pub(crate) no_retry: bool,
}

impl Refused {
    /// What `signal` and the body prefix that was read (if any) say.
    pub(crate) fn read(signal: &Signal, body: Option<&[u8]>) -> Self {
        Self {
            refusal: signal.refusal().cloned(),
            message: body.and_then(message),
            no_retry: signal.should_retry() == Some(false),
        }
    }
}

/// `insufficient_quota (You exceeded your current quota…)`: the refusal,
/// then the server's message; empty when the server named neither.
impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut named = true;
        match &self.refusal {
            Some(Refusal::InsufficientQuota) => f.write_str("insufficient_quota")?,
            Some(Refusal::QuotaFailure {
                quota_ids, per_day, ..
            }) => {
                f.write_str(if *per_day {
                    "per-day quota exceeded"
                } else {
                    "quota exceeded"
                })?;
                if !quota_ids.is_empty() {
                    write!(f, " ({})", clean(&quota_ids.join(", ")))?;
                }
            }
            Some(Refusal::Aws { code, .. }) => f.write_str(code)?,
            Some(Refusal::GraphqlRateLimited) => f.write_str("RATE_LIMITED")?,
            None if self.no_retry => f.write_str("x-should-retry: false")?,
            None => named = false,
        }
        match &self.message {
            Some(message) if named => write!(f, " ({message})"),
            Some(message) => f.write_str(message),
            None => Ok(()),
        }
    }
}

/// The human message of an error body: JSON (`error.message`, `message`,
/// `Message`, `errors[0].message`) or AWS's XML `<Message>`.
fn message(body: &[u8]) -> Option<String> {
    let text = match serde_json::from_slice::<Value>(body) {
        Ok(json) => json_message(&json)?.to_owned(),
        Err(_) => xml_message(std::str::from_utf8(body).ok()?)?.to_owned(),
    };
    let text = clean(&text);
    (!text.is_empty()).then_some(text)
}

fn json_message(json: &Value) -> Option<&str> {
    let error = json.get("error");
    let first = json.get("errors").and_then(|errors| errors.get(0));
    [
        error.and_then(|error| error.get("message")),
        json.get("message"),
        json.get("Message"),
        first.and_then(|first| first.get("message")),
    ]
    .into_iter()
    .flatten()
    .find_map(Value::as_str)
}

fn xml_message(text: &str) -> Option<&str> {
    let (_, rest) = text.split_once("<Message>")?;
    let (message, _) = rest.split_once("</Message>")?;
    Some(message)
}

/// Server text made fit for one log line: control characters become
/// spaces, runs of spaces one, and at most [`MAX_MESSAGE_CHARS`] are kept
/// (then `…`).
fn clean(text: &str) -> String {
    let mut out = String::new();
    let mut words = text
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|word| !word.is_empty());
    let mut chars = 0;
    for (i, word) in words.by_ref().enumerate() {
        let gap = usize::from(i > 0);
        let len = word.chars().count();
        if chars + gap + len > MAX_MESSAGE_CHARS {
            let room = MAX_MESSAGE_CHARS.saturating_sub(chars + gap);
            if gap == 1 && room > 0 {
                out.push(' ');
            }
            out.extend(word.chars().take(room));
            out.push('…');
            return out;
        }
        if gap == 1 {
            out.push(' ');
        }
        out.push_str(word);
        chars += gap + len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_come_from_json_or_xml_bodies() {
        let openai = br#"{"error":{"message":"You exceeded your current quota.","code":"insufficient_quota"}}"#;
        assert_eq!(
            message(openai).as_deref(),
            Some("You exceeded your current quota.")
        );
        let aws = br#"{"__type":"ValidationException","message":"1 validation error"}"#;
        assert_eq!(message(aws).as_deref(), Some("1 validation error"));
        let graphql = br#"{"errors":[{"type":"X","message":"no"}]}"#;
        assert_eq!(message(graphql).as_deref(), Some("no"));
        let xml = b"<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>";
        assert_eq!(message(xml).as_deref(), Some("Access Denied"));
        assert_eq!(message(br#"{"error":{"message":42}}"#), None);
        assert_eq!(message(br#"{"message":" \n "}"#), None);
        assert_eq!(message(b"\xff\xfe"), None);
    }

    #[test]
    fn hostile_messages_are_one_short_line() {
        assert_eq!(
            clean("a\r\nInjected: yes\u{1b}[31m"),
            "a Injected: yes [31m"
        );
        let long = "word ".repeat(100);
        let cleaned = clean(&long);
        assert!(
            cleaned.chars().count() <= MAX_MESSAGE_CHARS + 1,
            "{cleaned}"
        );
        assert!(cleaned.ends_with("word…"), "{cleaned}");
        let one = "x".repeat(500);
        assert_eq!(clean(&one).chars().count(), MAX_MESSAGE_CHARS + 1);
    }

    #[test]
    fn the_refusal_is_named_before_the_message() {
        let refused = Refused {
            refusal: Some(Refusal::InsufficientQuota),
            message: Some("You exceeded your current quota.".into()),
            no_retry: false,
        };
        assert_eq!(
            refused.to_string(),
            "insufficient_quota (You exceeded your current quota.)"
        );
        let header_only = Refused {
            no_retry: true,
            ..Refused::default()
        };
        assert_eq!(header_only.to_string(), "x-should-retry: false");
        assert_eq!(Refused::default().to_string(), "");
    }
}
