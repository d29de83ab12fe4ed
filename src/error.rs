//! The crate's one error type: opaque, with predicates.

mod message;
mod refused;

pub(crate) use message::{Redacted, innermost};
pub(crate) use refused::Refused;

use std::error::Error as StdError;
use std::fmt;
use std::time::Duration;

use http::{Method, StatusCode};
use reqwest::Url;

use crate::engine::GiveUpReason;
use crate::signal::Refusal;

/// A boxed error from the inner service.
pub(crate) type BoxError = Box<dyn StdError + Send + Sync>;

/// Why a request failed.
///
/// Opaque on purpose (fields can be added without breaking anyone): ask it
/// with the predicates. A throttled response the engine gave up on rides
/// inside ([`into_response`](Self::into_response)), body intact.
///
/// Its message says what happened: the method and URL, the attempts and
/// the time spent, the innermost cause (`Connection refused`), who asked
/// for a wait that was refused and the setting that refused it. The
/// [`source`](StdError::source) chain keeps the original errors.
///
/// `reqwest::Error` converts into it (`?` works on both `send()` and
/// `response.json()` in a function returning `courteous::Error`), keeping
/// reqwest's predicates ([`is_body`](Self::is_body),
/// [`is_decode`](Self::is_decode), [`is_status`](Self::is_status),
/// [`is_connect`](Self::is_connect), …).
///
/// ```
/// fn explain(err: courteous::Error) -> String {
///     if err.is_rate_limited() {
///         format!("throttled; server asked for {:?}", err.retry_after())
///     } else if err.is_deadline() {
///         format!("deadline passed after {} attempts", err.attempts())
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
    reason: Option<GiveUpReason>,
    retry_after: Option<Duration>,
    status: Option<StatusCode>,
    response: Option<reqwest::Response>,
    attempts: u32,
    elapsed: Option<Duration>,
    method: Option<Method>,
    url: Option<Url>,
    detail: Detail,
    refused: Option<Refused>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// The request could not be built.
    Builder,
    /// Sending failed without a response (connection, timeout, …).
    Request,
    /// Reading or decoding a body failed (converted from reqwest).
    Body,
    /// `error_for_status` (converted from reqwest).
    Status,
    /// Gave up on a throttled response or a throttled scope.
    Throttled,
    /// The server refused for good ([`GiveUpReason::Refused`]).
    Refused,
    /// The request's deadline passed during an attempt or a wait.
    Deadline,
}

/// What the message adds to a give-up: who asked for the wait, the limit
/// it passed, why a request was not sent again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Detail {
    pub(crate) waiter: Option<Waiter>,
    /// The `max_wait` or deadline that refused the wait.
    pub(crate) limit: Option<Duration>,
    pub(crate) not_retryable: Option<NotRetryable>,
}

/// Who asked for a wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Waiter {
    /// The response's own hint (`Retry-After` or an equivalent).
    ServerHint,
    /// The scope's pause after a refusal (a hint, the backoff, or a learned
    /// window), before a send.
    Pause,
    /// The quota read from the server's responses has no unit left.
    Quota,
    /// The backoff after a refusal without a hint or after a failure.
    Backoff,
}

/// Why a request was not sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NotRetryable {
    /// A POST or PATCH without an `Idempotency-Key`.
    Method,
    /// A body that cannot be replayed (a stream).
    Body,
    /// A transport error other than a connection failure or a timeout.
    Error,
}

impl Error {
    pub(crate) fn new(kind: Kind) -> Self {
        Self {
            inner: Box::new(Inner {
                kind,
                source: None,
                reason: None,
                retry_after: None,
                status: None,
                response: None,
                attempts: 0,
                elapsed: None,
                method: None,
                url: None,
                detail: Detail::default(),
                refused: None,
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
        let kind = match reason {
            GiveUpReason::Refused => Kind::Refused,
            _ => Kind::Throttled,
        };
        let mut err = Self::new(kind).with_reason(Some(reason));
        err.inner.attempts = attempts;
        err
    }

    pub(crate) fn deadline(deadline: Duration, attempts: u32) -> Self {
        let mut err = Self::new(Kind::Deadline);
        err.inner.attempts = attempts;
        err.inner.detail.limit = Some(deadline);
        err
    }

    pub(crate) fn with_source(mut self, source: impl Into<BoxError>) -> Self {
        self.inner.source = Some(source.into());
        self
    }

    /// Why the engine stopped (and the wait it refused, if any).
    pub(crate) fn with_reason(mut self, reason: Option<GiveUpReason>) -> Self {
        self.inner.reason = reason;
        if let Some(wait) = reason.and_then(|r| r.wait()) {
            self.inner.retry_after = Some(wait);
        }
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
        if self.inner.url.is_none() {
            self.inner.url = Some(response.url().clone());
        }
        self.inner.response = Some(response);
        self
    }

    /// The request this error is about.
    pub(crate) fn with_target(mut self, method: Method, url: Option<Url>) -> Self {
        self.inner.method = Some(method);
        if url.is_some() {
            self.inner.url = url;
        }
        self
    }

    /// What the server said when it refused for good.
    pub(crate) fn with_refused(mut self, refused: Option<Refused>) -> Self {
        self.inner.refused = refused;
        self
    }

    pub(crate) fn with_elapsed(mut self, elapsed: Duration) -> Self {
        self.inner.elapsed = Some(elapsed);
        self
    }

    pub(crate) fn with_detail(mut self, detail: Detail) -> Self {
        self.inner.detail = Detail {
            limit: detail.limit.or(self.inner.detail.limit),
            ..detail
        };
        self
    }

    /// The source, if it is a `T`; else the error unchanged.
    #[cfg(feature = "middleware")]
    pub(crate) fn downcast_source<T: StdError + 'static>(mut self) -> Result<T, Self> {
        match self
            .inner
            .source
            .take()
            .map(|source| source.downcast::<T>())
        {
            Some(Ok(source)) => Ok(*source),
            Some(Err(other)) => {
                self.inner.source = Some(other);
                Err(self)
            }
            None => Err(self),
        }
    }

    /// The request's method, when known.
    pub(crate) fn method(&self) -> Option<&Method> {
        self.inner.method.as_ref()
    }

    /// Why the engine stopped, if it did.
    pub(crate) fn reason(&self) -> Option<GiveUpReason> {
        self.inner.reason
    }

    /// The server refused (or the scope was paused) and the engine stopped
    /// waiting: too many attempts, a wait beyond `max_wait`, the deadline,
    /// the retry budget, or a request that may not be repeated (see
    /// [`GiveUpMode`](crate::GiveUpMode)).
    pub fn is_rate_limited(&self) -> bool {
        self.inner.kind == Kind::Throttled
    }

    /// The wait the server asked for (or the scope's pause) when it was
    /// longer than allowed, or the last hint of a throttled response.
    pub fn retry_after(&self) -> Option<Duration> {
        self.inner.retry_after
    }

    /// The request's deadline ([`deadline`](crate::ClientBuilder::deadline)
    /// or [`RequestOptions::deadline`](crate::RequestOptions::deadline))
    /// passed during an attempt, which was cancelled (also
    /// [`is_timeout`](Self::is_timeout)), or a wait would have ended after
    /// it (the request stopped before sleeping it).
    pub fn is_deadline(&self) -> bool {
        self.inner.kind == Kind::Deadline
            || matches!(self.inner.reason, Some(GiveUpReason::Deadline { .. }))
    }

    /// The server refused for good: out of credit (OpenAI's
    /// `insufficient_quota`), a per-day quota spent, an error code that is
    /// not a throttle, `x-should-retry: false`: whatever its classifier
    /// returned [`ResponseClass::Refused`](crate::classify::ResponseClass::Refused)
    /// for. The request was sent once and never retried; the scope was not
    /// paused. [`refusal`](Self::refusal) and
    /// [`refusal_message`](Self::refusal_message) say what the server said,
    /// [`status`](Self::status) with what, and the response rides inside,
    /// body intact ([`into_response`](Self::into_response)). Not
    /// [`is_rate_limited`](Self::is_rate_limited): no wait ends it.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), courteous::Error> {
    /// let client = courteous::preset::OpenAi.client().build();
    /// match client.get("https://api.openai.com/v1/models").send().await {
    ///     Err(err) if err.is_final_refusal() => {
    ///         eprintln!("refused for good: {:?} {:?}", err.refusal(), err.refusal_message());
    ///     }
    ///     other => drop(other?),
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_final_refusal(&self) -> bool {
        self.inner.kind == Kind::Refused
    }

    /// What the server's body or headers said the final refusal is, as
    /// [`Signal::refusal`](crate::signal::Signal::refusal) read it (its kind
    /// and code); `None` for other errors, or for a refusal the parser does
    /// not name (`x-should-retry: false`, a user classifier's own reason).
    pub fn refusal(&self) -> Option<&Refusal> {
        self.inner.refused.as_ref()?.refusal.as_ref()
    }

    /// The server's own message with a final refusal (a JSON body's
    /// `error.message`, `message`, `Message` or `errors[0].message`, an XML
    /// `<Message>`), when the body's prefix was read for hints: control
    /// characters replaced, at most 200 characters.
    pub fn refusal_message(&self) -> Option<&str> {
        self.inner.refused.as_ref()?.message.as_deref()
    }

    /// A single wait exceeded `max_wait`.
    pub fn is_wait_too_long(&self) -> bool {
        matches!(self.inner.reason, Some(GiveUpReason::WaitTooLong { .. }))
    }

    /// The retry budget was spent.
    pub fn is_budget_exhausted(&self) -> bool {
        matches!(self.inner.reason, Some(GiveUpReason::BudgetExhausted))
    }

    /// Every allowed attempt was used (`max_attempts`), each throttled or
    /// failed (a connection error, a timeout).
    pub fn is_attempts_exhausted(&self) -> bool {
        matches!(self.inner.reason, Some(GiveUpReason::AttemptsExhausted))
    }

    /// The request could not be built (bad URL, header, …).
    pub fn is_builder(&self) -> bool {
        self.inner.kind == Kind::Builder
    }

    /// Sending failed without a response (connection, timeout, …).
    pub fn is_request(&self) -> bool {
        self.inner.kind == Kind::Request
    }

    /// Sending failed to connect.
    pub fn is_connect(&self) -> bool {
        self.reqwest().is_some_and(reqwest::Error::is_connect)
            || crate::service::classify::is_connect_io(self.inner.source.as_deref())
    }

    /// Sending timed out: reqwest's own timeout, or the request's deadline
    /// passed during an attempt (also [`is_deadline`](Self::is_deadline)).
    pub fn is_timeout(&self) -> bool {
        self.inner.kind == Kind::Deadline || self.reqwest().is_some_and(reqwest::Error::is_timeout)
    }

    /// Reading or writing a body failed (a `reqwest::Error` with
    /// `is_body` or `is_decode`, converted).
    pub fn is_body(&self) -> bool {
        self.inner.kind == Kind::Body
    }

    /// Decoding a response body failed (reqwest's `is_decode`: bad JSON
    /// from `Response::json`, say).
    pub fn is_decode(&self) -> bool {
        self.reqwest().is_some_and(reqwest::Error::is_decode)
    }

    /// From reqwest's `Response::error_for_status`: [`status`](Self::status)
    /// says which.
    pub fn is_status(&self) -> bool {
        self.inner.kind == Kind::Status
    }

    /// The first `reqwest::Error` in the chain, if any.
    fn reqwest(&self) -> Option<&reqwest::Error> {
        let source = self.inner.source.as_deref()?;
        #[cfg(feature = "middleware")]
        if let Some(reqwest_middleware::Error::Reqwest(err)) =
            source.downcast_ref::<reqwest_middleware::Error>()
        {
            return Some(err);
        }
        source.downcast_ref::<reqwest::Error>()
    }

    /// The status of the throttled or refused response, or of an
    /// `error_for_status` error.
    pub fn status(&self) -> Option<StatusCode> {
        self.inner.status
    }

    /// Attempts sent before the error (0 if none was sent; a cancelled
    /// attempt counts).
    pub fn attempts(&self) -> u32 {
        self.inner.attempts
    }

    /// Time from `send` to the error: attempts, transport and waits
    /// (`None` for an error that did not come from sending, such as a
    /// builder error or a converted `reqwest::Error`).
    pub fn elapsed(&self) -> Option<Duration> {
        self.inner.elapsed
    }

    /// The URL of the request, when known.
    pub fn url(&self) -> Option<&Url> {
        self.inner.url.as_ref().or_else(|| self.reqwest()?.url())
    }

    /// The throttled (or refused) response the engine gave up on, body intact.
    pub fn response(&self) -> Option<&reqwest::Response> {
        self.inner.response.as_ref()
    }

    /// Takes the throttled (or refused) response the engine gave up on, body
    /// intact.
    pub fn into_response(self) -> Option<reqwest::Response> {
        self.inner.response
    }
}

/// A reqwest error becomes a courteous one, so `?` works on both
/// `send()` and the response's body methods in a function returning
/// `courteous::Error`. Its kind follows reqwest's: [`is_builder`](Error::is_builder),
/// [`is_body`](Error::is_body) (body and decode errors),
/// [`is_status`](Error::is_status) (from `error_for_status`, with its
/// [`status`](Error::status)), else [`is_request`](Error::is_request).
/// The reqwest error is its [`source`](StdError::source).
impl From<reqwest::Error> for Error {
    fn from(err: reqwest::Error) -> Self {
        let kind = if err.is_builder() {
            Kind::Builder
        } else if err.is_body() || err.is_decode() {
            Kind::Body
        } else if err.is_status() {
            Kind::Status
        } else {
            Kind::Request
        };
        let mut converted = Self::new(kind);
        converted.inner.status = err.status();
        converted.with_source(err)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("courteous::Error");
        d.field("kind", &self.inner.kind);
        if let Some(reason) = self.inner.reason {
            d.field("reason", &reason);
        }
        if let Some(refused) = &self.inner.refused {
            d.field("refused", refused);
        }
        if let Some(method) = &self.inner.method {
            d.field("method", method);
        }
        if let Some(url) = &self.inner.url {
            d.field("url", &message::Redacted(url).to_string());
        }
        if let Some(hint) = self.inner.retry_after {
            d.field("retry_after", &hint);
        }
        if let Some(status) = self.inner.status {
            d.field("status", &status);
        }
        d.field("attempts", &self.inner.attempts);
        if let Some(elapsed) = self.inner.elapsed {
            d.field("elapsed", &elapsed);
        }
        if let Some(source) = &self.inner.source {
            d.field("source", source);
        }
        d.finish()
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
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let err =
            Error::request(Box::new(refused), 5).with_reason(Some(GiveUpReason::AttemptsExhausted));
        assert!(err.is_request() && err.is_connect() && err.is_attempts_exhausted());
        assert!(!err.is_rate_limited());
        let err = Error::gave_up(GiveUpReason::Refused, 1);
        assert!(err.is_final_refusal() && !err.is_rate_limited());
        assert!(err.refusal().is_none() && err.refusal_message().is_none());
        let err = Error::deadline(Duration::from_secs(1), 1);
        assert!(err.is_deadline() && err.is_timeout());
        assert!(!err.is_rate_limited() && !err.is_request());
    }
}
