//! One quota policy's state ([`Quota`]) and the binding-policy rule.

use std::cmp::Reverse;
use std::fmt;
use std::time::Duration;

/// The state of one quota policy.
///
/// Parsed quotas come from [`SignalParser`](super::SignalParser); tests and
/// custom parsers can build one with [`Quota::new`] and the `with_*` setters.
///
/// ```
/// use std::time::Duration;
/// use courteous::signal::{Quota, QuotaSource};
///
/// let quota = Quota::new(QuotaSource::IetfList)
///     .with_limit(100)
///     .with_window(Duration::from_secs(60));
/// assert_eq!(quota.rate(), Some(100.0 / 60.0));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quota {
    name: Option<String>,
    limit: Option<u64>,
    remaining: Option<u64>,
    reset: Option<Duration>,
    window: Option<Duration>,
    unit: QuotaUnit,
    partition_key: Option<Vec<u8>>,
    source: QuotaSource,
    /// How far the reset may be from the truth when coarser than its own
    /// unit: an epoch read against a whole-second `Date` (two seconds for
    /// whole-second epochs).
    reset_precision: Option<Duration>,
    /// The dialect says the quota comes back whole at its reset.
    fixed_window: bool,
}

impl Quota {
    /// An empty quota (nothing known yet) read from `source`.
    pub fn new(source: QuotaSource) -> Self {
        Self {
            name: None,
            limit: None,
            remaining: None,
            reset: None,
            window: None,
            unit: QuotaUnit::Requests,
            partition_key: None,
            source,
            reset_precision: None,
            fixed_window: false,
        }
    }

    /// Sets the policy name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Sets the quota units allowed per window.
    pub fn with_limit(mut self, limit: u64) -> Self {
        self.limit = Some(limit);
        self
    }
    /// Sets the quota units left.
    pub fn with_remaining(mut self, remaining: u64) -> Self {
        self.remaining = Some(remaining);
        self
    }
    /// Sets the time until the quota is restored.
    pub fn with_reset(mut self, reset: Duration) -> Self {
        self.reset = Some(reset);
        self
    }
    /// Sets the policy window.
    pub fn with_window(mut self, window: Duration) -> Self {
        self.window = Some(window);
        self
    }
    /// Sets what the quota counts.
    pub fn with_unit(mut self, unit: QuotaUnit) -> Self {
        self.unit = unit;
        self
    }
    /// States that the quota comes back whole at its reset, in fixed
    /// windows, as the dialect documents it (see [`Quota::fixed_window`]).
    pub fn with_fixed_window(mut self) -> Self {
        self.fixed_window = true;
        self
    }
    /// Sets the partition key.
    pub fn with_partition_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.partition_key = Some(key.into());
        self
    }

    /// The policy's name (IETF -08 and later), if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    /// Quota units allowed per window (`q`, `RateLimit-Limit`, `X-RateLimit-Limit`).
    pub fn limit(&self) -> Option<u64> {
        self.limit
    }
    /// Quota units left in the current window.
    pub fn remaining(&self) -> Option<u64> {
        self.remaining
    }
    /// Time until the quota is restored, from the moment the response was received.
    pub fn reset(&self) -> Option<Duration> {
        self.reset
    }
    /// The policy window (`w`), if the server stated it.
    pub fn window(&self) -> Option<Duration> {
        self.window
    }
    /// What the quota counts (`qu`).
    pub fn unit(&self) -> QuotaUnit {
        self.unit
    }
    /// The partition key (`pk`), if any.
    pub fn partition_key(&self) -> Option<&[u8]> {
        self.partition_key.as_deref()
    }
    /// Which header dialect the quota was read from.
    pub fn source(&self) -> QuotaSource {
        self.source
    }
    /// Whether the dialect documents that the quota comes back whole at
    /// its reset (fixed windows): GitHub's, named by
    /// `x-ratelimit-resource`. Otherwise a quota without a stated window
    /// may refill continuously, and the engine, once it has spent it,
    /// probes for a unit before its reset; a fixed window is waited out.
    ///
    /// ```
    /// use courteous::signal::SignalParser;
    /// use http::{HeaderMap, StatusCode};
    ///
    /// let mut headers = HeaderMap::new();
    /// headers.insert("x-ratelimit-limit", "5000".parse().unwrap());
    /// headers.insert("x-ratelimit-remaining", "0".parse().unwrap());
    /// headers.insert("x-ratelimit-resource", "core".parse().unwrap());
    /// let signal = SignalParser::new().parse(StatusCode::OK, &headers, None);
    /// assert!(signal.policies()[0].fixed_window());
    /// headers.remove("x-ratelimit-resource");
    /// let signal = SignalParser::new().parse(StatusCode::OK, &headers, None);
    /// assert!(!signal.policies()[0].fixed_window());
    /// ```
    pub fn fixed_window(&self) -> bool {
        self.fixed_window
    }

    /// The policy's sustained rate in quota units per second (`limit / window`),
    /// when both are known and the window is not zero.
    pub fn rate(&self) -> Option<f64> {
        let window = self.window?.as_secs_f64();
        if window > 0.0 {
            Some(self.limit? as f64 / window)
        } else {
            None
        }
    }

    pub(crate) fn set_remaining(&mut self, remaining: Option<u64>) {
        self.remaining = remaining;
    }
    pub(crate) fn set_fixed_window(&mut self) {
        self.fixed_window = true;
    }
    pub(crate) fn set_reset(&mut self, reset: Option<Duration>) {
        self.reset = reset;
    }
    /// The reset's precision, when coarser than its own unit (see the
    /// field).
    pub(crate) fn reset_precision(&self) -> Option<Duration> {
        self.reset_precision
    }
    pub(crate) fn set_reset_precision(&mut self, precision: Option<Duration>) {
        self.reset_precision = precision;
    }
    pub(crate) fn set_window(&mut self, window: Option<Duration>) {
        self.window = window;
    }
    pub(crate) fn set_partition_key(&mut self, key: Option<Vec<u8>>) {
        self.partition_key = key;
    }
    pub(crate) fn set_limit(&mut self, limit: Option<u64>) {
        self.limit = limit;
    }
    pub(crate) fn set_name(&mut self, name: Option<String>) {
        self.name = name;
    }
}

/// What a quota counts (`qu` in the IETF drafts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum QuotaUnit {
    /// Requests (the default).
    #[default]
    Requests,
    /// Bytes of content.
    ContentBytes,
    /// Requests in flight at once.
    ConcurrentRequests,
    /// Model tokens, input and output together (OpenAI's `-tokens`,
    /// Anthropic's `tokens`).
    Tokens,
    /// Model input tokens (Anthropic's `input-tokens`).
    InputTokens,
    /// Model output tokens (Anthropic's `output-tokens`).
    OutputTokens,
    /// Query cost points (Shopify GraphQL's `throttleStatus`).
    Points,
    /// A unit this crate does not know.
    Other,
}

impl QuotaUnit {
    /// The unit named by a `qu` parameter value.
    pub(crate) fn from_name(name: &str) -> Self {
        match name {
            "requests" => Self::Requests,
            "content-bytes" => Self::ContentBytes,
            "concurrent-requests" => Self::ConcurrentRequests,
            _ => Self::Other,
        }
    }
}

/// Which header dialect a [`Quota`] was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum QuotaSource {
    /// Separate `RateLimit-Limit` / `-Remaining` / `-Reset` (drafts -00 … -06).
    IetfSeparate,
    /// The `RateLimit` dictionary (draft -07).
    IetfDictionary,
    /// Lists of named policies in `RateLimit` / `RateLimit-Policy` (drafts -08 … -11).
    IetfList,
    /// `X-RateLimit-*` (GitHub style; also Discord's and Reddit's).
    XRateLimit,
    /// `x-rate-limit-*` (X, formerly Twitter).
    XDashRateLimit,
    /// `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` (OpenAI and
    /// Azure OpenAI).
    OpenAi,
    /// `anthropic-ratelimit-*`.
    Anthropic,
    /// `X-Shopify-Shop-Api-Call-Limit` (Shopify REST).
    Shopify,
    /// A GraphQL body's `extensions.cost.throttleStatus` (Shopify GraphQL).
    ShopifyGraphql,
    /// `x-ms-ratelimit-remaining-subscription-*` and
    /// `x-ms-ratelimit-remaining-resource` (Azure Resource Manager).
    AzureResourceManager,
}

impl fmt::Display for QuotaSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::IetfSeparate => "RateLimit-Limit/-Remaining/-Reset",
            Self::IetfDictionary => "RateLimit dictionary",
            Self::IetfList => "RateLimit/RateLimit-Policy lists",
            Self::XRateLimit => "X-RateLimit-*",
            Self::XDashRateLimit => "x-rate-limit-*",
            Self::OpenAi => "x-ratelimit-*-requests/-tokens",
            Self::Anthropic => "anthropic-ratelimit-*",
            Self::Shopify => "X-Shopify-Shop-Api-Call-Limit",
            Self::ShopifyGraphql => "GraphQL extensions.cost.throttleStatus",
            Self::AzureResourceManager => "x-ms-ratelimit-remaining-*",
        })
    }
}

/// Index of the binding policy: least remaining (unknown remaining ranks
/// last), ties to the longest reset (unknown reset ranks shortest), then to
/// the policy listed first. A count of tokens or points cannot be compared
/// with a count of requests: a quota in another unit than requests binds
/// only when it is exhausted, and otherwise ranks after every quota of
/// requests.
pub(crate) fn binding_index(policies: &[Quota]) -> Option<usize> {
    policies
        .iter()
        .enumerate()
        .min_by_key(|(_, quota)| {
            let other_unit_left =
                quota.unit != QuotaUnit::Requests && quota.remaining.is_some_and(|left| left > 0);
            (
                quota.remaining.is_none(),
                other_unit_left,
                quota.remaining,
                Reverse(quota.reset),
            )
        })
        .map(|(index, _)| index)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quota(remaining: Option<u64>, reset: Option<u64>) -> Quota {
        let mut quota = Quota::new(QuotaSource::IetfList);
        quota.remaining = remaining;
        quota.reset = reset.map(Duration::from_secs);
        quota
    }

    #[test]
    fn least_remaining_binds() {
        let policies = [
            quota(Some(9), None),
            quota(Some(3), None),
            quota(Some(5), None),
        ];
        assert_eq!(binding_index(&policies), Some(1));
    }

    #[test]
    fn ties_go_to_the_longest_reset_then_the_first_listed() {
        let policies = [
            quota(Some(0), Some(5)),
            quota(Some(0), Some(60)),
            quota(Some(0), Some(60)),
            quota(Some(0), None),
        ];
        assert_eq!(binding_index(&policies), Some(1));
    }

    #[test]
    fn unknown_remaining_ranks_after_known() {
        let policies = [quota(None, Some(100)), quota(Some(1000), None)];
        assert_eq!(binding_index(&policies), Some(1));
        assert_eq!(binding_index(&[quota(None, None)]), Some(0));
        assert_eq!(binding_index(&[]), None);
    }

    #[test]
    fn another_unit_binds_only_when_exhausted() {
        let tokens = |left| {
            Quota::new(QuotaSource::OpenAi)
                .with_unit(QuotaUnit::Tokens)
                .with_remaining(left)
        };
        let requests = Quota::new(QuotaSource::OpenAi).with_remaining(59);
        // 12 tokens left is not fewer "units" than 59 requests.
        assert_eq!(binding_index(&[tokens(12), requests.clone()]), Some(1));
        assert_eq!(binding_index(&[requests, tokens(0)]), Some(1));
    }

    #[test]
    fn rate_needs_limit_and_a_nonzero_window() {
        let base = Quota::new(QuotaSource::IetfList);
        assert_eq!(base.clone().with_limit(10).rate(), None);
        assert_eq!(
            base.clone().with_window(Duration::from_secs(1)).rate(),
            None
        );
        let zero = base.clone().with_limit(10).with_window(Duration::ZERO);
        assert_eq!(zero.rate(), None);
        let rate = base.with_limit(10).with_window(Duration::from_millis(500));
        assert_eq!(rate.rate(), Some(20.0));
    }
}
