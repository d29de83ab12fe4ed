//! The error's message: which request, what happened, what it cost, and
//! the setting that decided it. Durations in ms or s.

use std::error::Error as StdError;
use std::fmt;
use std::time::Duration;

use reqwest::Url;

use super::{Error, Kind, NotRetryable, Refused, Waiter};
use crate::engine::GiveUpReason;

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &self.inner;
        if let (Some(method), Some(url)) = (&inner.method, &inner.url) {
            write!(f, "{method} {}: ", Redacted(url))?;
        }
        match inner.kind {
            Kind::Builder => {
                f.write_str("could not build the request")?;
                self.write_cause(f, false)
            }
            // Converted from reqwest (see `From`): its own message names
            // the URL and the kind.
            Kind::Request | Kind::Body | Kind::Status if inner.elapsed.is_none() => {
                match &inner.source {
                    Some(source) => {
                        write!(f, "{source}")?;
                        self.write_cause(f, true)
                    }
                    None => f.write_str("error sending the request"),
                }
            }
            Kind::Body | Kind::Status => f.write_str("error reading the response"),
            Kind::Request => {
                f.write_str(if self.is_connect() {
                    "could not connect"
                } else if self.is_timeout() {
                    "timed out"
                } else {
                    "error sending the request"
                })?;
                self.write_cause(f, false)?;
                self.write_spent(f, " (", ")")?;
                self.write_reason(f)
            }
            Kind::Throttled if inner.attempts == 0 => {
                f.write_str("not sent: ")?;
                self.write_reason_text(f)
            }
            Kind::Throttled => {
                match inner.status {
                    Some(status) => write!(f, "refused with {status}")?,
                    None => f.write_str("throttled")?,
                }
                if inner.reason == Some(GiveUpReason::NotRetryable)
                    && let Some(hint) = inner.retry_after
                {
                    write!(f, " (the server asked to wait {})", Span(hint))?;
                }
                self.write_spent(f, " after ", "")?;
                self.write_reason(f)
            }
            Kind::Refused => {
                f.write_str("refused for good")?;
                if let Some(refused) = inner.refused.as_ref().filter(|r| **r != Refused::default())
                {
                    write!(f, ": {refused}")?;
                }
                if let Some(status) = inner.status {
                    write!(f, " with {status}")?;
                }
                self.write_spent(f, " after ", "")
            }
            Kind::Deadline => {
                f.write_str("the deadline")?;
                if let Some(limit) = inner.detail.limit {
                    write!(f, " ({} from send)", Span(limit))?;
                }
                f.write_str(" passed")?;
                self.write_spent(f, " after ", "")?;
                f.write_str("; the attempt in flight was cancelled")
            }
        }
    }
}

impl Error {
    /// `: ` and the innermost error of the chain (the one that says what
    /// went wrong: `Connection refused (os error 111)`); nothing when that
    /// is the source itself and `written` says it was written already.
    fn write_cause(&self, f: &mut fmt::Formatter<'_>, written: bool) -> fmt::Result {
        let Some(top) = self.inner.source.as_deref() else {
            return Ok(());
        };
        let innermost = innermost(top);
        if written && std::ptr::addr_eq(innermost, top) {
            return Ok(());
        }
        write!(f, ": {innermost}")
    }

    /// `N attempt(s) in T`, between `open` and `close`.
    fn write_spent(&self, f: &mut fmt::Formatter<'_>, open: &str, close: &str) -> fmt::Result {
        let attempts = self.inner.attempts;
        let plural = if attempts == 1 { "" } else { "s" };
        write!(f, "{open}{attempts} attempt{plural}")?;
        if let Some(elapsed) = self.inner.elapsed {
            write!(f, " in {}", Span(elapsed))?;
        }
        f.write_str(close)
    }

    /// `; gave up: …` or `; not sent again: …`, if the engine stopped.
    fn write_reason(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.inner.reason {
            None => Ok(()),
            Some(GiveUpReason::NotRetryable) => {
                f.write_str("; not sent again: ")?;
                self.write_reason_text(f)
            }
            Some(_) => {
                f.write_str("; gave up: ")?;
                self.write_reason_text(f)
            }
        }
    }

    fn write_reason_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let detail = self.inner.detail;
        match self.inner.reason {
            None => f.write_str("gave up"),
            Some(GiveUpReason::Refused) => f.write_str("the server refused for good"),
            Some(GiveUpReason::AttemptsExhausted) => {
                write!(f, "max_attempts ({}) reached", self.inner.attempts)
            }
            Some(GiveUpReason::BudgetExhausted) => {
                f.write_str("the retry budget of this scope is spent (too many retries lately)")
            }
            Some(GiveUpReason::WaitTooLong { wait }) => {
                write_wait(f, detail.waiter, wait)?;
                f.write_str(", longer than max_wait")?;
                match detail.limit {
                    Some(limit) => write!(f, " ({})", Span(limit)),
                    None => Ok(()),
                }
            }
            Some(GiveUpReason::Deadline { wait }) => {
                write_wait(f, detail.waiter, wait)?;
                f.write_str(", which would pass the deadline")?;
                match detail.limit {
                    Some(limit) => write!(f, " ({} from send)", Span(limit)),
                    None => Ok(()),
                }
            }
            Some(GiveUpReason::NotRetryable) => match detail.not_retryable {
                Some(NotRetryable::Method) => {
                    let method = self.inner.method.as_ref().map_or("it", |m| m.as_str());
                    write!(
                        f,
                        "a {method} is sent again only with an Idempotency-Key \
                         (RequestBuilder::idempotency_key, or generate_idempotency_keys(true) \
                         on the client)"
                    )
                }
                Some(NotRetryable::Body) => {
                    f.write_str("its body is a stream, which cannot be sent twice")
                }
                Some(NotRetryable::Error) => {
                    f.write_str("only connection failures and timeouts are retried")
                }
                None => f.write_str("it may not be repeated"),
            },
        }
    }
}

/// The innermost error of a chain: the one that says what went wrong
/// (`Connection refused (os error 111)`).
pub(crate) fn innermost<'a>(err: &'a (dyn StdError + 'static)) -> &'a (dyn StdError + 'static) {
    let mut innermost = err;
    while let Some(next) = innermost.source() {
        innermost = next;
    }
    innermost
}

/// Who asked for `wait`, and how long.
fn write_wait(f: &mut fmt::Formatter<'_>, waiter: Option<Waiter>, wait: Duration) -> fmt::Result {
    let wait = Span(wait);
    match waiter {
        Some(Waiter::ServerHint) => write!(f, "the server asked to wait {wait}"),
        Some(Waiter::Pause) => write!(
            f,
            "the scope is paused for {wait} more (after a refusal, as the server asked or by backoff)"
        ),
        Some(Waiter::Quota) => write!(
            f,
            "the quota read from the server's responses has no request left for {wait}"
        ),
        Some(Waiter::Backoff) => write!(f, "the backoff before the next attempt is {wait}"),
        None => write!(f, "the wait is {wait}"),
    }
}

/// A duration for people: `850 ms`, `2.5 ms`, `1.5 s`, `122 s`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span(pub(crate) Duration);

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        if d >= Duration::from_secs(100) {
            return write!(f, "{} s", d.as_secs());
        }
        if d >= Duration::from_secs(1) {
            let tenths = (d.as_millis() + 50) / 100;
            return match tenths % 10 {
                0 => write!(f, "{} s", tenths / 10),
                t => write!(f, "{}.{t} s", tenths / 10),
            };
        }
        if d >= Duration::from_millis(10) || d.is_zero() {
            return write!(f, "{} ms", (d.as_micros() + 500) / 1000);
        }
        let tenths = (d.as_micros() + 50) / 100;
        match tenths % 10 {
            0 => write!(f, "{} ms", tenths / 10),
            t => write!(f, "{}.{t} ms", tenths / 10),
        }
    }
}

/// A URL with its credentials replaced by `REDACTED` (as OpenTelemetry's
/// `url.full` asks).
pub(crate) struct Redacted<'a>(pub(crate) &'a Url);

impl fmt::Display for Redacted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let url = self.0;
        if url.username().is_empty() && url.password().is_none() {
            return f.write_str(url.as_str());
        }
        let mut clean = url.clone();
        let _ = clean.set_username("REDACTED");
        if url.password().is_some() {
            let _ = clean.set_password(Some("REDACTED"));
        }
        f.write_str(clean.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_read_in_ms_or_s() {
        let show = |d: Duration| Span(d).to_string();
        assert_eq!(show(Duration::ZERO), "0 ms");
        assert_eq!(show(Duration::from_micros(2_450)), "2.5 ms");
        assert_eq!(show(Duration::from_millis(3)), "3 ms");
        assert_eq!(show(Duration::from_millis(50)), "50 ms");
        assert_eq!(show(Duration::from_millis(999)), "999 ms");
        assert_eq!(show(Duration::from_secs(1)), "1 s");
        assert_eq!(show(Duration::from_millis(1_540)), "1.5 s");
        assert_eq!(show(Duration::from_millis(60_000)), "60 s");
        assert_eq!(show(Duration::from_nanos(122_399_910_687)), "122 s");
        assert_eq!(show(Duration::from_secs(3600)), "3600 s");
        assert_eq!(show(Duration::MAX), format!("{} s", u64::MAX));
    }

    #[test]
    fn builder_and_converted_errors_say_what_reqwest_said() {
        let bad_url = || {
            reqwest::Client::new()
                .get("http://[::1")
                .build()
                .unwrap_err()
        };
        let cause = innermost(&bad_url()).to_string();
        let expected = format!("could not build the request: {cause}");
        assert_eq!(Error::builder(bad_url()).to_string(), expected);
        assert_eq!(Error::from(bad_url()).to_string(), expected);

        let not_found = || {
            let response = http::Response::builder().status(404).body("").unwrap();
            reqwest::Response::from(response)
                .error_for_status()
                .unwrap_err()
        };
        let converted = Error::from(not_found());
        assert!(converted.is_status(), "{converted:?}");
        assert_eq!(converted.to_string(), not_found().to_string());
    }

    #[test]
    fn credentials_are_redacted() {
        let url: Url = "http://user:pw@host:81/x?q=1".parse().unwrap();
        assert_eq!(
            Redacted(&url).to_string(),
            "http://REDACTED:REDACTED@host:81/x?q=1"
        );
        let url: Url = "https://host/x".parse().unwrap();
        assert_eq!(Redacted(&url).to_string(), "https://host/x");
    }
}
