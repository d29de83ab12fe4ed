//! Command-line choices of the must-show harness.

use clap::ValueEnum;
use courteous::testing::{Dialect, RetryAfterStyle};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ClientKind {
    /// courteous with default settings.
    Polite,
    /// courteous with pacing off: Retry-After only (milliseconds honoured).
    RetryAfterOnly,
    /// The seed's plain reqwest client: sleeps `Retry-After`'s whole
    /// seconds, 1 s without one (examples/retry_after_seconds.rs).
    RetryAfterSeconds,
    /// Fixed 50 ms after a 429.
    FixedDelay,
    /// Resend at once (bounded at 100,000 requests or 60 s).
    Naive,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum DialectArg {
    IetfSeparate,
    IetfSeparateLimitPolicy,
    IetfSeparateWithPolicy,
    IetfDictionary,
    IetfList,
    XRatelimit,
    XRatelimitResetAfter,
}

impl DialectArg {
    pub(crate) fn dialect(self) -> Dialect {
        match self {
            Self::IetfSeparate => Dialect::IetfSeparate,
            Self::IetfSeparateLimitPolicy => Dialect::IetfSeparateLimitPolicy,
            Self::IetfSeparateWithPolicy => Dialect::IetfSeparateWithPolicy,
            Self::IetfDictionary => Dialect::IetfDictionary,
            Self::IetfList => Dialect::IetfList,
            Self::XRatelimit => Dialect::XRateLimit,
            Self::XRatelimitResetAfter => Dialect::XRateLimitResetAfter,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum HintArg {
    Seconds,
    HttpDate,
    HttpDateRfc850,
    HttpDateAsctime,
    Millis,
    XMsMillis,
    ProblemJsonMillis,
    ProblemJsonSeconds,
}

impl HintArg {
    pub(crate) fn style(self) -> RetryAfterStyle {
        match self {
            Self::Seconds => RetryAfterStyle::Seconds,
            Self::HttpDate => RetryAfterStyle::HttpDate,
            Self::HttpDateRfc850 => RetryAfterStyle::HttpDateRfc850,
            Self::HttpDateAsctime => RetryAfterStyle::HttpDateAsctime,
            Self::Millis => RetryAfterStyle::Millis,
            Self::XMsMillis => RetryAfterStyle::XMsMillis,
            Self::ProblemJsonMillis => RetryAfterStyle::ProblemJsonMillis,
            Self::ProblemJsonSeconds => RetryAfterStyle::ProblemJsonSeconds,
        }
    }
}
