//! The normalized result of parsing: [`Signal`], [`RetryHint`], [`HintSource`].

use std::fmt;
use std::time::{Duration, SystemTime};

use super::quota::{Quota, binding_index};
use super::refusal::Refusal;
use super::usage::Usage;

/// Everything a response said about the server's rate limits.
///
/// Built by [`SignalParser::parse`](super::SignalParser::parse); other code
/// (tests, custom parsers) can assemble one with [`Signal::from_parts`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Signal {
    retry_after: Option<RetryHint>,
    policies: Vec<Quota>,
    binding: Option<usize>,
    violated_policies: Vec<String>,
    extras: Extras,
    date: Option<ServerDate>,
    /// Boxed: most signals have none, and a signal rides in every
    /// request's future.
    usage: Option<Box<Usage>>,
}

/// A response's `Date` header, and whether the signal's times (an
/// HTTP-date hint, an epoch reset) were measured against it: the server's
/// clock disagreed with the local one, so `Date`, to its whole second, was
/// the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ServerDate {
    pub(crate) at: SystemTime,
    pub(crate) measured_against: bool,
}

/// What some APIs add beyond a wait and quotas.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Extras {
    pub(crate) bucket: Option<String>,
    pub(crate) global: bool,
    pub(crate) should_retry: Option<bool>,
    pub(crate) refusal: Option<Refusal>,
}

impl Signal {
    /// A signal from a wait and a list of policies; the binding policy is
    /// chosen by the same rule the parser uses (see [`Signal::quota`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use courteous::signal::{HintSource, Quota, QuotaSource, RetryHint, Signal};
    ///
    /// let signal = Signal::from_parts(
    ///     Some(RetryHint::new(Duration::from_secs(2), HintSource::RetryAfterSeconds)),
    ///     vec![
    ///         Quota::new(QuotaSource::IetfList).with_name("burst").with_remaining(5),
    ///         Quota::new(QuotaSource::IetfList).with_name("daily").with_remaining(0),
    ///     ],
    /// );
    /// assert_eq!(signal.quota().and_then(|q| q.name()), Some("daily"));
    /// ```
    pub fn from_parts(retry_after: Option<RetryHint>, policies: Vec<Quota>) -> Self {
        Self {
            retry_after,
            binding: binding_index(&policies),
            policies,
            violated_policies: Vec::new(),
            extras: Extras::default(),
            date: None,
            usage: None,
        }
    }

    /// The signal with what its request spent (`None`: not stated), for a
    /// custom parser or a test: the engine settles the request's cost
    /// with it.
    ///
    /// ```
    /// use courteous::signal::{QuotaUnit, Signal, Usage};
    ///
    /// let usage = Usage::from_json(br#"{"usage":{"total_tokens":42}}"#);
    /// let signal = Signal::default().with_usage(usage);
    /// assert_eq!(signal.usage().and_then(|u| u.get(QuotaUnit::Tokens)), Some(42));
    /// ```
    pub fn with_usage(mut self, usage: Option<Usage>) -> Self {
        self.usage = usage.map(Box::new);
        self
    }

    /// What the response says its request spent: the `usage` of an OpenAI
    /// or Anthropic success body, read when the parser is told the API
    /// reports it ([`SignalParser::read_usage`](super::SignalParser::read_usage);
    /// the two presets do).
    pub fn usage(&self) -> Option<&Usage> {
        self.usage.as_deref()
    }

    pub(crate) fn with_server_date(mut self, date: Option<ServerDate>) -> Self {
        self.date = date;
        self
    }

    /// The signal with the response's `Date` header (`None`: without one),
    /// for a custom parser: the engine locates the server's clock with it.
    /// Its times are taken as read against the local clock.
    ///
    /// ```
    /// use std::time::SystemTime;
    /// use courteous::signal::Signal;
    ///
    /// let date = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
    /// let signal = Signal::default().with_date(Some(date));
    /// assert_eq!(signal.date(), Some(date));
    /// // A `Date` alone says nothing of the rate limits.
    /// assert!(signal.is_empty());
    /// ```
    pub fn with_date(self, date: Option<SystemTime>) -> Self {
        self.with_server_date(date.map(|at| ServerDate {
            at,
            measured_against: false,
        }))
    }

    /// The response's `Date` header (whole seconds on the server's clock),
    /// if it had a valid one.
    pub fn date(&self) -> Option<SystemTime> {
        self.date.map(|date| date.at)
    }

    /// Whether the hint and resets were measured against [`date`](Self::date)
    /// (the server's clock disagreed with the local one), and so are known
    /// only to its whole second.
    pub(crate) fn measured_against_date(&self) -> bool {
        self.date.is_some_and(|date| date.measured_against)
    }

    pub(crate) fn with_violated_policies(mut self, names: Vec<String>) -> Self {
        self.violated_policies = names;
        self
    }

    pub(crate) fn with_extras(mut self, extras: Extras) -> Self {
        self.extras = extras;
        self
    }

    /// The bucket the server named for this request's quota: Discord's
    /// `X-RateLimit-Bucket` (an opaque id shared by several routes) or
    /// GitHub's `x-ratelimit-resource` (`core`, `search`, `graphql`, …).
    /// Requests whose responses name the same bucket draw on one quota.
    pub fn bucket(&self) -> Option<&str> {
        self.extras.bucket.as_deref()
    }

    /// Whether the refusal was of a limit over every route: Discord's
    /// `X-RateLimit-Global: true`, `X-RateLimit-Scope: global`, or a body
    /// with `"global": true`.
    pub fn is_global(&self) -> bool {
        self.extras.global
    }

    /// What the server said about retrying (`x-should-retry: true` or
    /// `false`, sent by OpenAI and Anthropic), if it said anything.
    pub fn should_retry(&self) -> Option<bool> {
        self.extras.should_retry
    }

    /// What an error body (or AWS's `x-amzn-ErrorType`) said the refusal is,
    /// in the API's own words, when it is one this crate knows (see
    /// [`Refusal`]).
    pub fn refusal(&self) -> Option<&Refusal> {
        self.extras.refusal.as_ref()
    }

    /// The server-directed wait before the next request, if the response gave
    /// one explicitly (`Retry-After`, a millisecond header, a problem body,
    /// a Google `RetryInfo`).
    ///
    /// An exhausted quota (`remaining == 0` with a reset) is *not* turned into
    /// a wait here: read [`quota`](Self::quota) for that.
    pub fn retry_after(&self) -> Option<&RetryHint> {
        self.retry_after.as_ref()
    }

    /// The quota state of the binding policy: the one with the least
    /// remaining quota; ties go to the longest reset, then to the policy
    /// listed first. Policies whose remaining quota is unknown rank after
    /// every policy whose remaining quota is known.
    pub fn quota(&self) -> Option<&Quota> {
        self.binding.and_then(|index| self.policies.get(index))
    }

    /// Every policy the response described, binding one included, in the
    /// order: IETF named lists (-08 …), IETF dictionary (-07), IETF separate
    /// fields (-00 … -06), `X-RateLimit-*`, X's `x-rate-limit-*`, OpenAI's
    /// requests and tokens, Anthropic's requests, tokens, input and output
    /// tokens, Shopify's call limit, Azure Resource Manager's remaining
    /// counts, a GraphQL body's `throttleStatus`.
    pub fn policies(&self) -> &[Quota] {
        &self.policies
    }

    /// Policy names listed in `violated-policies` of an IETF problem body.
    pub fn violated_policies(&self) -> &[String] {
        &self.violated_policies
    }

    /// True when the response carried no rate-limit information at all (a
    /// [`usage`](Self::usage) is none: it says what was spent, not what
    /// is left).
    pub fn is_empty(&self) -> bool {
        self.retry_after.is_none()
            && self.policies.is_empty()
            && self.violated_policies.is_empty()
            && self.extras == Extras::default()
    }
}

/// A server-directed wait and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryHint {
    delay: Duration,
    source: HintSource,
}

impl RetryHint {
    /// A wait of `delay` read from `source`.
    pub fn new(delay: Duration, source: HintSource) -> Self {
        Self { delay, source }
    }

    /// How long to wait, from the moment the response was received.
    ///
    /// This is the value the server sent, saturated at [`Duration::MAX`]
    /// rather than wrapped; it is *not* capped. Capping absurd waits is the
    /// caller's policy (the middleware does it).
    pub fn delay(&self) -> Duration {
        self.delay
    }

    /// Which field the wait was read from.
    pub fn source(&self) -> HintSource {
        self.source
    }
}

/// Where a [`RetryHint`] was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HintSource {
    /// `Retry-After: <delay-seconds>`.
    RetryAfterSeconds,
    /// `Retry-After: <HTTP-date>`.
    RetryAfterDate,
    /// `retry-after-ms` header.
    RetryAfterMs,
    /// `x-ms-retry-after-ms` header.
    XMsRetryAfterMs,
    /// `retry_after_ms` member of a problem+json body.
    ProblemRetryAfterMs,
    /// `retry_after` (seconds) member of a problem+json body.
    ProblemRetryAfter,
    /// `retryDelay` of a `google.rpc.RetryInfo` in a Google API error body.
    GoogleRetryInfo,
}

impl fmt::Display for HintSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::RetryAfterSeconds => "Retry-After (seconds)",
            Self::RetryAfterDate => "Retry-After (HTTP-date)",
            Self::RetryAfterMs => "retry-after-ms",
            Self::XMsRetryAfterMs => "x-ms-retry-after-ms",
            Self::ProblemRetryAfterMs => "problem body retry_after_ms",
            Self::ProblemRetryAfter => "problem body retry_after",
            Self::GoogleRetryInfo => "google.rpc.RetryInfo retryDelay",
        })
    }
}
