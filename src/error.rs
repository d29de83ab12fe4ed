//! The crate's one error type: opaque, with predicates.

use std::error::Error as StdError;
use std::fmt;
use std::time::Duration;

use http::StatusCode;

use crate::engine::GiveUpReason;

/// A boxed error from the inner service.
pub(crate) type BoxError = Box<dyn StdError + Send + Sync>;

/// Why a request failed.
///
/// Opaque on purpose (fields can be added without breaking anyone): ask it
/// with the predicates. A throttled response the engine gave up on rides
/// inside ([`into_response`](Self::into_response)), body intact.
///
/// ```
/// fn explain(err: courteous::Error) -> String {
///     if err.is_rate_limited() {
///         format!("throttled; server asked for {:?}", err.retry_after())
///     } else if err.is_deadline() {
///         "deadline".to_owned()
///     } else {
///         err.to_string()
///     }
/// }
/// # let _ = explain;
/// ```
pub struct Error {
    inner: Box<Inner>,
}

struct Inner {
    kind: Kind,
    source: Option<BoxError>,
    retry_after: Option<Duration>,
    status: Option<StatusCode>,
    response: Option<reqwest::Response>,
    attempts: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The request could not be built.
    Builder,
    /// The inner service failed (connection, timeout, body, …).
    Request,
    /// Gave up on a throttled response or a throttled scope.
    GaveUp(GiveUpReason),
}

impl Error {
    pub(crate) fn new(kind: Kind) -> Self {
        Self {
            inner: Box::new(Inner {
                kind,
                source: None,
                retry_after: None,
                status: None,
                response: None,
                attempts: 0,
            }),
        }
    }

    pub(crate) fn builder(source: impl Into<BoxError>) -> Self {
        Self::new(Kind::Builder).with_source(source)
    }

    pub(crate) fn request(source: BoxError, attempts: u32) -> Self {
        let mut err = Self::new(Kind::Request).with_source(source);
        err.inner.attempts = attempts;
        err
    }

    pub(crate) fn gave_up(reason: GiveUpReason, attempts: u32) -> Self {
        let mut err = Self::new(Kind::GaveUp(reason));
        err.inner.attempts = attempts;
        err.inner.retry_after = reason.wait();
        err
    }

    pub(crate) fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        self.inner.source = Some(source.into());
        self
    }

    pub(crate) fn with_retry_after(mut self, hint: Option<Duration>) -> Self {
        if hint.is_some() {
            self.inner.retry_after = hint;
        }
        self
    }

    pub(crate) fn with_response(mut self, response: reqwest::Response) -> Self {
        self.inner.status = Some(response.status());
        self.inner.response = Some(response);
        self
    }

    #[cfg(feature = "middleware")]
    pub(crate) fn into_source(self) -> Option<BoxError> {
        self.inner.source
    }

    fn reason(&self) -> Option<GiveUpReason> {
        match self.inner.kind {
            Kind::GaveUp(reason) => Some(reason),
            _ => None,
        }
    }

    /// The server refused (or the scope was paused) and the engine stopped
    /// waiting: too many attempts, a wait beyond `max_wait`, the deadline,
    /// the retry budget, or a request that may not be repeated (see
    /// [`GiveUpMode`](crate::GiveUpMode)).
    pub fn is_rate_limited(&self) -> bool {
        matches!(self.inner.kind, Kind::GaveUp(_))
    }

    /// The wait the server asked for (or the scope's pause) when it was
    /// longer than allowed, or the last hint of a throttled response.
    pub fn retry_after(&self) -> Option<Duration> {
        self.inner.retry_after
    }

    /// Waiting would have ended after the overall deadline.
    pub fn is_deadline(&self) -> bool {
        matches!(self.reason(), Some(GiveUpReason::Deadline { .. }))
    }

    /// A single wait exceeded `max_wait`.
    pub fn is_wait_too_long(&self) -> bool {
        matches!(self.reason(), Some(GiveUpReason::WaitTooLong { .. }))
    }

    /// The retry budget was spent.
    pub fn is_budget_exhausted(&self) -> bool {
        matches!(self.reason(), Some(GiveUpReason::BudgetExhausted))
    }

    /// Every allowed attempt was used.
    pub fn is_attempts_exhausted(&self) -> bool {
        matches!(self.reason(), Some(GiveUpReason::AttemptsExhausted))
    }

    /// The request could not be built (bad URL, header, …).
    pub fn is_builder(&self) -> bool {
        self.inner.kind == Kind::Builder
    }

    /// Sending failed without a response (connection, timeout, body, …).
    pub fn is_request(&self) -> bool {
        self.inner.kind == Kind::Request
    }

    /// Sending failed to connect.
    pub fn is_connect(&self) -> bool {
        self.reqwest().is_some_and(reqwest::Error::is_connect)
            || crate::service::classify::is_connect_io(self.inner.source.as_deref())
    }

    /// Sending timed out.
    pub fn is_timeout(&self) -> bool {
        self.reqwest().is_some_and(reqwest::Error::is_timeout)
    }

    fn reqwest(&self) -> Option<&reqwest::Error> {
        self.inner
            .source
            .as_deref()?
            .downcast_ref::<reqwest::Error>()
    }

    /// The status of the throttled response, if there was one.
    pub fn status(&self) -> Option<StatusCode> {
        self.inner.status
    }

    /// Attempts sent before the error (0 if none was sent).
    pub fn attempts(&self) -> u32 {
        self.inner.attempts
    }

    /// The throttled response the engine gave up on, body intact.
    pub fn response(&self) -> Option<&reqwest::Response> {
        self.inner.response.as_ref()
    }

    /// Takes the throttled response the engine gave up on, body intact.
    pub fn into_response(self) -> Option<reqwest::Response> {
        self.inner.response
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("courteous::Error");
        d.field("kind", &self.inner.kind);
        if let Some(hint) = self.inner.retry_after {
            d.field("retry_after", &hint);
        }
        if let Some(status) = self.inner.status {
            d.field("status", &status);
        }
        d.field("attempts", &self.inner.attempts);
        if let Some(source) = &self.inner.source {
            d.field("source", source);
        }
        d.finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.inner.kind {
            Kind::Builder => f.write_str("could not build the request")?,
            Kind::Request => f.write_str("error sending the request")?,
            Kind::GaveUp(reason) => match reason {
                GiveUpReason::NotRetryable => {
                    f.write_str("the request was refused and may not be sent again")?
                }
                GiveUpReason::AttemptsExhausted => {
                    write!(f, "still throttled after {} attempts", self.inner.attempts)?
                }
                GiveUpReason::BudgetExhausted => {
                    f.write_str("throttled and the retry budget is spent")?
                }
                GiveUpReason::WaitTooLong { wait } => {
                    write!(f, "the server asked to wait {wait:?}, more than allowed")?
                }
                GiveUpReason::Deadline { wait } => {
                    write!(f, "waiting {wait:?} more would pass the deadline")?
                }
            },
        }
        if let Some(status) = self.inner.status {
            write!(f, " ({status})")?;
        }
        Ok(())
    }
}

impl StdError for Error {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.inner
            .source
            .as_deref()
            .map(|e| e as &(dyn StdError + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_is_send_sync_and_small() {
        fn assert_send_sync<T: Send + Sync + 'static>() {}
        assert_send_sync::<Error>();
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
    }

    #[test]
    fn predicates_follow_the_reason() {
        let wait = Duration::from_secs(3600);
        let err = Error::gave_up(GiveUpReason::WaitTooLong { wait }, 1);
        assert!(err.is_rate_limited());
        assert!(err.is_wait_too_long());
        assert!(!err.is_deadline());
        assert_eq!(err.retry_after(), Some(wait));
        let err = Error::gave_up(GiveUpReason::BudgetExhausted, 2);
        assert!(err.is_budget_exhausted() && !err.is_request());
        assert!(err.to_string().contains("budget"));
    }
}
