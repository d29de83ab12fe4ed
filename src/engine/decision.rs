//! The engine's decisions, as enums.

use std::time::Duration;

use http::StatusCode;

use super::InFlight;

/// Before a send: go now, or wait first.
#[derive(Debug)]
#[must_use = "an admission holds an in-flight reservation until its outcome is reported"]
pub enum Admit {
    /// Send now; report the outcome with the ticket.
    Now(InFlight),
    /// Wait this long, then ask again.
    After {
        /// How long to wait.
        wait: Duration,
        /// Why.
        reason: WaitReason,
    },
}

/// Why a send must wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WaitReason {
    /// The scope is paused by a server hint or a backoff after a throttled response.
    Paused,
    /// The quota the server reported (or the rate learned from its refusals)
    /// has no unit left before this instant.
    Pacing,
}

/// After a response or a transport error: what to do with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Hand the response back.
    Return,
    /// Wait `after`, then send the request again (asking for admission first).
    Retry {
        /// The wait before the next attempt.
        after: Duration,
        /// Why the request is retried.
        reason: RetryReason,
    },
    /// Stop retrying: hand back what we have, or an error, as configured.
    GiveUp(GiveUpReason),
}

/// Why a request is sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RetryReason {
    /// A throttling status, with the server's hint if it gave one.
    Throttled {
        /// The status (429, 503, …).
        status: StatusCode,
        /// The server-directed wait, if any.
        hint: Option<Duration>,
    },
    /// A connection error or timeout.
    Transport,
}

/// Why the engine stops retrying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GiveUpReason {
    /// The request may not be retried (method not idempotent without a key,
    /// or a body that cannot be replayed): its response goes back as it is.
    NotRetryable,
    /// The last allowed attempt was throttled or failed.
    AttemptsExhausted,
    /// The retry budget is spent.
    BudgetExhausted,
    /// The wait asked for exceeds the configured maximum.
    WaitTooLong {
        /// The wait that would have been needed.
        wait: Duration,
    },
    /// The wait would end after the deadline.
    Deadline {
        /// The wait that would have been needed.
        wait: Duration,
    },
}

impl GiveUpReason {
    /// The wait that was refused, if the reason is about one.
    pub fn wait(&self) -> Option<Duration> {
        match self {
            Self::WaitTooLong { wait } | Self::Deadline { wait } => Some(*wait),
            _ => None,
        }
    }
}
