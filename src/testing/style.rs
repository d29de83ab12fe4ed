//! The header dialects a mock server can speak.

/// How a rejected response says when to come back.
///
/// Each variant is one shape from the `Retry-After` family (RFC 9110 §10.2.3,
/// vendor millisecond headers, RFC 9457 problem bodies). A responder may use
/// several at once; with none, its 429s carry no hint at all ("bare").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RetryAfterStyle {
    /// `Retry-After: 1` — delay-seconds, rounded *up* so the client never
    /// comes back early (a 50 ms wait becomes `1`).
    Seconds,
    /// `Retry-After: 0` or `1` — delay-seconds rounded to the *nearest*
    /// second, as some servers do (it can say 0 with up to half a second
    /// left, sending a client that trusts it back early).
    SecondsNearest,
    /// `Retry-After: <IMF-fixdate>` with the response's own `Date` header;
    /// the date is rounded up to the next whole second.
    HttpDate,
    /// As [`HttpDate`](Self::HttpDate) in the obsolete RFC 850 form
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`), which recipients must still accept.
    HttpDateRfc850,
    /// As [`HttpDate`](Self::HttpDate) in the obsolete asctime form
    /// (`Sun Nov  6 08:49:37 1994`), which recipients must still accept.
    HttpDateAsctime,
    /// `retry-after-ms: 50`, rounded up to the millisecond.
    Millis,
    /// `x-ms-retry-after-ms: 50`, rounded up to the millisecond.
    XMsMillis,
    /// An `application/problem+json` body with `"retry_after_ms": 50`.
    ProblemJsonMillis,
    /// An `application/problem+json` body with `"retry_after": 0.05`
    /// (fractional seconds).
    ProblemJsonSeconds,
}

impl RetryAfterStyle {
    /// Every style, in declaration order (handy for test matrices).
    pub const ALL: [RetryAfterStyle; 9] = [
        RetryAfterStyle::Seconds,
        RetryAfterStyle::SecondsNearest,
        RetryAfterStyle::HttpDate,
        RetryAfterStyle::HttpDateRfc850,
        RetryAfterStyle::HttpDateAsctime,
        RetryAfterStyle::Millis,
        RetryAfterStyle::XMsMillis,
        RetryAfterStyle::ProblemJsonMillis,
        RetryAfterStyle::ProblemJsonSeconds,
    ];

    /// Whether this style states a date, measured against the response's
    /// own `Date` header (which the responder then sends).
    pub fn is_date(self) -> bool {
        matches!(
            self,
            RetryAfterStyle::HttpDate
                | RetryAfterStyle::HttpDateRfc850
                | RetryAfterStyle::HttpDateAsctime
        )
    }
}

/// How every response (admitted or rejected) describes the quota.
///
/// Each variant is one shape of `RateLimit-*` or `X-RateLimit-*` fields.
/// The IETF shapes share field names (`RateLimit`, `RateLimit-Policy`), so a
/// responder given two IETF dialects that use the same field emits the value of
/// the one listed last in [`Dialect::ALL`] order for that field.
///
/// Policies are described as `q` = the limit and `w` = the time a full quota
/// takes to come back, in whole seconds rounded *up* (`w` is an integer in
/// the drafts), so the rate `q / w` a client derives never exceeds the real one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// Drafts -00 … -04: `RateLimit-Limit`, `RateLimit-Remaining`,
    /// `RateLimit-Reset` (delta seconds, rounded up).
    IetfSeparate,
    /// Drafts -00 … -04 with the policy in the limit field:
    /// `RateLimit-Limit: 20, 20;w=1` plus `-Remaining` and `-Reset`.
    IetfSeparateLimitPolicy,
    /// Drafts -05, -06: the same three fields plus `RateLimit-Policy: 20;w=1`.
    IetfSeparateWithPolicy,
    /// Draft -07: `RateLimit: limit=20, remaining=5, reset=1` plus
    /// `RateLimit-Policy: 20;w=1`.
    IetfDictionary,
    /// Drafts -08 … -11: `RateLimit-Policy: "default";q=20;w=1` and
    /// `RateLimit: "default";r=5;t=1`.
    IetfList,
    /// GitHub style: `X-RateLimit-Limit`, `-Remaining`, `-Used`, and
    /// `-Reset` as Unix epoch seconds (rounded up) with a `Date` header.
    XRateLimit,
    /// `X-RateLimit-Limit`, `-Remaining` and `X-RateLimit-Reset-After` in
    /// fractional delta seconds (some chat APIs).
    XRateLimitResetAfter,
}

impl Dialect {
    /// Every dialect, in declaration order (handy for test matrices).
    pub const ALL: [Dialect; 7] = [
        Dialect::IetfSeparate,
        Dialect::IetfSeparateLimitPolicy,
        Dialect::IetfSeparateWithPolicy,
        Dialect::IetfDictionary,
        Dialect::IetfList,
        Dialect::XRateLimit,
        Dialect::XRateLimitResetAfter,
    ];

    /// Whether this dialect states the policy (quota per window), from which a
    /// client can derive a sending rate.
    pub fn states_policy(self) -> bool {
        matches!(
            self,
            Dialect::IetfSeparateLimitPolicy
                | Dialect::IetfSeparateWithPolicy
                | Dialect::IetfDictionary
                | Dialect::IetfList
        )
    }
}
