//! [`RetryEvent`]: what a hook sees before each wait, for logging and
//! metrics.

use std::sync::Arc;
use std::time::Duration;

use http::StatusCode;

use crate::engine::{RetryReason, Scope, WaitReason};
use crate::signal::Signal;

/// Why the request is about to wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WaitCause {
    /// Before a send: the scope is paused or paced ([`WaitReason`]).
    Admission(WaitReason),
    /// After an attempt, before sending it again ([`RetryReason`]).
    Retry(RetryReason),
}

/// Handed to the hook set with `on_retry` before every wait of a request
/// (a pause, pacing, or the wait before a retry).
///
/// ```
/// use courteous::hooks::{RetryEvent, WaitCause};
///
/// let client = courteous::Client::builder()
///     .on_retry(|event: &RetryEvent<'_>| {
///         if let WaitCause::Retry(reason) = event.cause() {
///             eprintln!(
///                 "{}: attempt {} failed ({reason:?}), next in {:?}",
///                 event.scope(),
///                 event.attempt(),
///                 event.wait()
///             );
///         }
///     })
///     .build();
/// # let _ = client;
/// ```
#[derive(Debug)]
pub struct RetryEvent<'a> {
    pub(crate) scope: &'a Scope,
    pub(crate) attempt: u32,
    pub(crate) cause: WaitCause,
    pub(crate) wait: Duration,
    pub(crate) status: Option<StatusCode>,
    pub(crate) signal: Option<&'a Signal>,
}

impl<'a> RetryEvent<'a> {
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

    /// How long it waits.
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
pub(crate) type OnRetry = Arc<dyn Fn(&RetryEvent<'_>) + Send + Sync>;
