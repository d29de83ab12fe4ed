//! The report attached to every response: what it took to get it.

use std::time::Duration;

use crate::engine::{GiveUpReason, Scope};
use crate::signal::Signal;

/// What it took to get a response: attempts, time waited, the last signal.
///
/// Inserted in every response's extensions by courteous (the
/// [`Client`](crate::Client), the layer and the middleware):
///
/// ```no_run
/// # async fn run() -> Result<(), courteous::Error> {
/// let client = courteous::Client::new();
/// let response = client.get("http://127.0.0.1:8080/").send().await?;
/// if let Some(report) = response.extensions().get::<courteous::RetryReport>() {
///     println!("{} attempts, waited {:?}", report.attempts(), report.waited());
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct RetryReport {
    pub(crate) scope: Scope,
    pub(crate) attempts: u32,
    pub(crate) waited: Duration,
    pub(crate) throttled: u32,
    pub(crate) last_signal: Signal,
    pub(crate) gave_up: Option<GiveUpReason>,
}

impl RetryReport {
    /// The scope the request was counted in.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Requests put on the wire for this response, the first included.
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// Time this request slept before its sends (pauses, pacing,
    /// backoff), all its attempts together; the rest of its time was
    /// spent on the wire.
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// Throttled responses received on the way.
    pub fn throttled(&self) -> u32 {
        self.throttled
    }

    /// The rate-limit signal of the last response (empty if it had none).
    pub fn last_signal(&self) -> &Signal {
        &self.last_signal
    }

    /// Why the engine stopped retrying, when it did: `None` for a response
    /// handed back because it was not throttled, else the reason the
    /// throttled response came back as it is ([`GiveUpReason::NotRetryable`],
    /// or any reason with [`GiveUpMode::Response`](crate::GiveUpMode::Response)).
    pub fn gave_up(&self) -> Option<GiveUpReason> {
        self.gave_up
    }
}
