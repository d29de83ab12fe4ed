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

/// What a response means for the request that got it, as a classifier
/// says (by default: a status in [`Config::retry_statuses`](super::Config::retry_statuses)
/// is throttled, anything else final).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResponseClass {
    /// The server refused for rate: every request to the scope pauses, the
    /// pacer learns, and the request is retried if it may be.
    Throttled {
        /// The wait the server asked for, when the classifier read it
        /// somewhere the signal does not look (`None`: the signal's
        /// [`retry_after`](crate::signal::Signal::retry_after), else backoff).
        wait: Option<Duration>,
    },
    /// A failure of this request alone (a 502 from one upstream, say): it
    /// is retried after backoff if it may be; the scope does not pause.
    Retry,
    /// The response is the answer: hand it back.
    Final,
    /// The server refused for good (out of credit, a per-day quota spent,
    /// an error no wait ends): the request stops at once with an error
    /// ([`GiveUpReason::Refused`]), never retried; the scope does not pause.
    Refused,
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
    /// A response its classifier said to retry ([`ResponseClass::Retry`]).
    Failed {
        /// The status.
        status: StatusCode,
    },
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
    /// The server refused for good ([`ResponseClass::Refused`]): no wait
    /// or retry makes the request succeed.
    Refused,
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
