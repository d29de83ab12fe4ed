//! Hooks for logging and metrics: [`on_wait`](crate::ClientBuilder::on_wait)
//! before every wait of a request, [`on_retry`](crate::ClientBuilder::on_retry)
//! before every resend. Both see a [`WaitEvent`].

use std::sync::Arc;
use std::time::Duration;

use http::StatusCode;

use crate::engine::{RetryReason, Scope, WaitReason};
use crate::signal::Signal;

/// Why the request is about to wait.
///
/// | cause | who asked |
/// |---|---|
/// | `Admission(WaitReason::Pacing)` | the quota read from the server's responses (a 200's `RateLimit`/`X-RateLimit-*` fields) has no unit left yet |
/// | `Admission(WaitReason::Paused)` | the scope is paused after a refusal (this request's or another's): the server's hint, or the backoff |
/// | `Retry(RetryReason::Throttled { hint: Some(_), .. })` | the server's hint on the refusal being retried |
/// | `Retry(RetryReason::Throttled { hint: None, .. })` | the backoff (or a window the scope learned) after a refusal without a hint |
/// | `Retry(RetryReason::Transport)`, `Retry(RetryReason::Failed { .. })` | the backoff after a connection error, a timeout or a failed response |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WaitCause {
    /// Before a send: the scope is paused or paced ([`WaitReason`]).
    Admission(WaitReason),
    /// After an attempt, before sending it again ([`RetryReason`]).
    Retry(RetryReason),
}

impl WaitCause {
    /// The wait the server asked for, when it is the cause: the hint of
    /// the refusal being retried.
    pub fn server_hint(&self) -> Option<Duration> {
        match self {
            Self::Retry(RetryReason::Throttled { hint, .. }) => *hint,
            _ => None,
        }
    }
}

/// Handed to the hooks: [`on_wait`](crate::ClientBuilder::on_wait) before
/// every wait of a request (pacing, a paused scope, the wait before a
/// resend), [`on_retry`](crate::ClientBuilder::on_retry) before every
/// resend (once per resend, with the wait after the attempt that failed).
///
/// ```
/// use courteous::hooks::{WaitCause, WaitEvent};
///
/// let client = courteous::Client::builder()
///     .on_retry(|event: &WaitEvent<'_>| {
///         eprintln!(
///             "{}: attempt {} refused ({:?}), sent again in {:?}",
///             event.scope(),
///             event.attempt(),
///             event.status(),
///             event.wait()
///         );
///     })
///     .on_wait(|event: &WaitEvent<'_>| {
///         if let WaitCause::Admission(reason) = event.cause() {
///             eprintln!("{}: {reason:?} for {:?}", event.scope(), event.wait());
///         }
///     })
///     .build();
/// # let _ = client;
/// ```
#[derive(Debug)]
pub struct WaitEvent<'a> {
    pub(crate) scope: &'a Scope,
    pub(crate) attempt: u32,
    pub(crate) cause: WaitCause,
    pub(crate) wait: Duration,
    pub(crate) status: Option<StatusCode>,
    pub(crate) signal: Option<&'a Signal>,
}

impl<'a> WaitEvent<'a> {
    /// The request's scope.
    pub fn scope(&self) -> &'a Scope {
        self.scope
    }

    /// Attempts sent so far (0 while waiting before the first).
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// Why it waits.
    pub fn cause(&self) -> WaitCause {
        self.cause
    }

    /// Whether the wait is before a resend (what `on_retry` sees).
    pub fn is_retry(&self) -> bool {
        matches!(self.cause, WaitCause::Retry(_))
    }

    /// How long it waits (at most: a wait before a send ends early when a
    /// response shows the scope may send sooner).
    pub fn wait(&self) -> Duration {
        self.wait
    }

    /// The status of the attempt being retried, if it got a response.
    pub fn status(&self) -> Option<StatusCode> {
        self.status
    }

    /// The signal of the attempt being retried, if it got a response.
    pub fn signal(&self) -> Option<&'a Signal> {
        self.signal
    }
}

/// How a hook is held by the adapters.
pub(crate) type Hook = Arc<dyn Fn(&WaitEvent<'_>) + Send + Sync>;
