//! [`Refusal`]: what an API's error says a refusal is, in its own words.

/// What an error body (or AWS's `x-amzn-ErrorType` header) said a refusal
/// is, for the refusals whose meaning decides between waiting and giving
/// up. Read by [`SignalParser`](super::SignalParser) from any error
/// response whose body it reads, whatever the API; the
/// [presets](crate::preset) classify by it.
///
/// ```
/// use courteous::signal::{self, Refusal};
/// use http::{HeaderMap, HeaderValue, StatusCode};
///
/// let mut headers = HeaderMap::new();
/// headers.insert("content-type", HeaderValue::from_static("application/json"));
/// let body = br#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#;
/// let signal = signal::parse(StatusCode::TOO_MANY_REQUESTS, &headers, Some(body));
/// assert_eq!(signal.refusal(), Some(&Refusal::InsufficientQuota));
/// assert!(signal.refusal().unwrap().is_final());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// OpenAI's `insufficient_quota` (as `error.code` or `error.type`): the
    /// account is out of credit. Final: no wait makes it succeed.
    InsufficientQuota,
    /// A Google `google.rpc.QuotaFailure` (in `error.details[]`).
    #[non_exhaustive]
    QuotaFailure {
        /// The violated quotas' `quotaId`s (or `subject`s when a violation
        /// names no quota id), in order.
        quota_ids: Vec<String>,
        /// Whether a violated quota is per day (its id says `PerDay`, or its
        /// description "per day"): final until tomorrow, never waited out.
        per_day: bool,
    },
    /// An AWS error code (`__type`, `code`, `Code`, `<Code>` or
    /// `x-amzn-ErrorType`, without namespace or suffix).
    #[non_exhaustive]
    Aws {
        /// The code, such as `ThrottlingException` or `ValidationException`.
        code: String,
    },
    /// A GraphQL error typed as a rate limit: GitHub's
    /// `errors[].type == "RATE_LIMITED"`, Shopify's
    /// `errors[].extensions.code == "THROTTLED"`.
    GraphqlRateLimited,
}

/// The AWS error codes that mean "throttled": botocore's standard retry
/// mode's list (`botocore/retries/standard.py`, `_THROTTLED_ERROR_CODES`).
pub const AWS_THROTTLING_CODES: &[&str] = &[
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestThrottledException",
    "TooManyRequestsException",
    "ProvisionedThroughputExceededException",
    "TransactionInProgressException",
    "RequestLimitExceeded",
    "BandwidthLimitExceeded",
    "LimitExceededException",
    "RequestThrottled",
    "SlowDown",
    "PriorRequestNotComplete",
    "EC2ThrottledException",
];

impl Refusal {
    /// Whether waiting cannot make the request succeed: out of credit, a
    /// per-day quota spent, or an AWS error code that is not a throttle.
    pub fn is_final(&self) -> bool {
        match self {
            Self::InsufficientQuota => true,
            Self::QuotaFailure { per_day, .. } => *per_day,
            Self::Aws { code } => !is_aws_throttling(code),
            Self::GraphqlRateLimited => false,
        }
    }

    /// Whether the refusal is a rate limit that a wait ends: a throttling
    /// AWS code, a Google quota that is not per day, a GraphQL rate limit.
    pub fn is_throttling(&self) -> bool {
        !self.is_final()
    }

    /// Whether the refusal names a quota whose units come back with time
    /// (a rate), not as requests in service are answered: a Google quota
    /// (per minute or per day), a GraphQL rate limit (GitHub's points per
    /// hour, Shopify's restore rate), or an AWS code of a rate
    /// ([`AWS_RATE_CODES`]). AWS's `TooManyRequestsException` (Lambda's
    /// concurrency limit too), `PriorRequestNotComplete`,
    /// `TransactionInProgressException` and the generic
    /// `LimitExceededException` name no rate.
    ///
    /// ```
    /// use http::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
    ///
    /// let mut headers = HeaderMap::new();
    /// headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/x-amz-json-1.0"));
    /// let signal = courteous::signal::parse(
    ///     http::StatusCode::BAD_REQUEST,
    ///     &headers,
    ///     Some(br#"{"__type":"ThrottlingException"}"#),
    /// );
    /// assert!(signal.refusal().is_some_and(|r| r.names_a_rate()));
    /// ```
    pub fn names_a_rate(&self) -> bool {
        match self {
            Self::InsufficientQuota => false,
            Self::QuotaFailure { .. } | Self::GraphqlRateLimited => true,
            Self::Aws { code } => AWS_RATE_CODES.contains(&code.as_str()),
        }
    }
}

/// The AWS throttling codes ([`AWS_THROTTLING_CODES`]) that name a rate:
/// requests, bandwidth or provisioned throughput per second.
pub const AWS_RATE_CODES: &[&str] = &[
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestThrottledException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "BandwidthLimitExceeded",
    "RequestThrottled",
    "SlowDown",
    "EC2ThrottledException",
];

/// Whether `code` is one of [`AWS_THROTTLING_CODES`].
pub(crate) fn is_aws_throttling(code: &str) -> bool {
    AWS_THROTTLING_CODES.contains(&code)
}

/// An AWS error code as sent: `ThrottlingException`,
/// `com.amazonaws.dynamodb.v20120810#ThrottlingException`, or
/// `ThrottlingException:http://internal.amazon.com/coral/…`: the name alone.
pub(crate) fn aws_code(raw: &str) -> Option<String> {
    let name = raw.rsplit('#').next().unwrap_or(raw);
    let name = name.split(':').next().unwrap_or(name).trim();
    let valid = !name.is_empty()
        && name.len() <= 128
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'.' || byte == b'_');
    valid.then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aws_codes_lose_namespace_and_suffix() {
        let code = |raw| aws_code(raw);
        assert_eq!(
            code("ThrottlingException").as_deref(),
            Some("ThrottlingException")
        );
        assert_eq!(
            code("com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException")
                .as_deref(),
            Some("ProvisionedThroughputExceededException")
        );
        assert_eq!(
            code("TooManyRequestsException:http://internal.amazon.com/coral/com.amazon/")
                .as_deref(),
            Some("TooManyRequestsException")
        );
        assert_eq!(code(""), None);
        assert_eq!(code("<script>"), None);
        assert_eq!(code(&"A".repeat(500)), None);
    }

    #[test]
    fn finality() {
        let aws = |code: &str| Refusal::Aws { code: code.into() };
        assert!(Refusal::InsufficientQuota.is_final());
        assert!(aws("ValidationException").is_final());
        assert!(aws("AccessDeniedException").is_final());
        for code in AWS_THROTTLING_CODES {
            assert!(aws(code).is_throttling(), "{code}");
        }
        let quota = |per_day| Refusal::QuotaFailure {
            quota_ids: vec!["q".into()],
            per_day,
        };
        assert!(quota(true).is_final());
        assert!(quota(false).is_throttling());
        assert!(Refusal::GraphqlRateLimited.is_throttling());
    }

    #[test]
    fn rates_are_named_by_throttling_codes_of_a_rate_and_quotas() {
        let aws = |code: &str| Refusal::Aws { code: code.into() };
        for code in AWS_RATE_CODES {
            assert!(AWS_THROTTLING_CODES.contains(code), "{code}");
            assert!(aws(code).names_a_rate(), "{code}");
        }
        for code in [
            "TooManyRequestsException",
            "PriorRequestNotComplete",
            "TransactionInProgressException",
            "LimitExceededException",
            "ValidationException",
        ] {
            assert!(!aws(code).names_a_rate(), "{code}");
        }
        let quota = Refusal::QuotaFailure {
            quota_ids: vec!["q".into()],
            per_day: false,
        };
        assert!(quota.names_a_rate());
        assert!(Refusal::GraphqlRateLimited.names_a_rate());
        assert!(!Refusal::InsufficientQuota.names_a_rate());
    }
}
