//! Finding the rate-limit fields of a response in one pass over its header
//! names, and reading their values.
//!
//! The scan is what a plain response without rate-limit fields costs: one
//! walk over the distinct header names comparing a first byte, no hashing
//! and no allocation.

use std::cell::OnceCell;
use std::time::{Duration, SystemTime};

use http::header::{DATE, HeaderMap, HeaderName, HeaderValue};

use super::numbers::{EPOCH_THRESHOLD_SECS, reset_from_seconds, until_epoch};
use super::parser::ResetFormat;

/// A header field the parser reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    RetryAfter,
    RetryAfterMs,
    XMsRetryAfterMs,
    RateLimit,
    RateLimitPolicy,
    RateLimitLimit,
    RateLimitRemaining,
    RateLimitReset,
    XRateLimitLimit,
    XRateLimitRemaining,
    XRateLimitReset,
    XRateLimitResetAfter,
    XRateLimitUsed,
    // GitLab's additions to the separate IETF fields.
    RateLimitResetTime,
    RateLimitObserved,
    RateLimitName,
    // GitHub's and Discord's additions to `X-RateLimit-*`.
    XRateLimitResource,
    XRateLimitBucket,
    XRateLimitGlobal,
    XRateLimitScope,
    // OpenAI and Azure OpenAI.
    XRateLimitLimitRequests,
    XRateLimitRemainingRequests,
    XRateLimitResetRequests,
    XRateLimitLimitTokens,
    XRateLimitRemainingTokens,
    XRateLimitResetTokens,
    XShouldRetry,
    // Anthropic.
    AnthropicRequestsLimit,
    AnthropicRequestsRemaining,
    AnthropicRequestsReset,
    AnthropicTokensLimit,
    AnthropicTokensRemaining,
    AnthropicTokensReset,
    AnthropicInputTokensLimit,
    AnthropicInputTokensRemaining,
    AnthropicInputTokensReset,
    AnthropicOutputTokensLimit,
    AnthropicOutputTokensRemaining,
    AnthropicOutputTokensReset,
    // X (Twitter).
    XDashRateLimitLimit,
    XDashRateLimitRemaining,
    XDashRateLimitReset,
    // Shopify REST.
    XShopifyShopApiCallLimit,
    // Azure Resource Manager.
    XMsRemainingSubscriptionReads,
    XMsRemainingSubscriptionWrites,
    XMsRemainingSubscriptionDeletes,
    XMsRemainingResource,
    // AWS REST-JSON services.
    XAmznErrorType,
}

const FIELD_COUNT: usize = 48;

impl Field {
    fn classify(name: &str) -> Option<Self> {
        // Cheap reject first: every field we read starts with `a`, `r` or `x`.
        if !matches!(name.as_bytes().first(), Some(b'a' | b'r' | b'x')) {
            return None;
        }
        Some(match name {
            "retry-after" => Self::RetryAfter,
            "retry-after-ms" => Self::RetryAfterMs,
            "x-ms-retry-after-ms" => Self::XMsRetryAfterMs,
            "ratelimit" => Self::RateLimit,
            "ratelimit-policy" => Self::RateLimitPolicy,
            "ratelimit-limit" => Self::RateLimitLimit,
            "ratelimit-remaining" => Self::RateLimitRemaining,
            "ratelimit-reset" => Self::RateLimitReset,
            "x-ratelimit-limit" => Self::XRateLimitLimit,
            "x-ratelimit-remaining" => Self::XRateLimitRemaining,
            "x-ratelimit-reset" => Self::XRateLimitReset,
            "x-ratelimit-reset-after" => Self::XRateLimitResetAfter,
            "x-ratelimit-used" => Self::XRateLimitUsed,
            "ratelimit-resettime" => Self::RateLimitResetTime,
            "ratelimit-observed" => Self::RateLimitObserved,
            "ratelimit-name" => Self::RateLimitName,
            "x-ratelimit-resource" => Self::XRateLimitResource,
            "x-ratelimit-bucket" => Self::XRateLimitBucket,
            "x-ratelimit-global" => Self::XRateLimitGlobal,
            "x-ratelimit-scope" => Self::XRateLimitScope,
            "x-ratelimit-limit-requests" => Self::XRateLimitLimitRequests,
            "x-ratelimit-remaining-requests" => Self::XRateLimitRemainingRequests,
            "x-ratelimit-reset-requests" => Self::XRateLimitResetRequests,
            "x-ratelimit-limit-tokens" => Self::XRateLimitLimitTokens,
            "x-ratelimit-remaining-tokens" => Self::XRateLimitRemainingTokens,
            "x-ratelimit-reset-tokens" => Self::XRateLimitResetTokens,
            "x-should-retry" => Self::XShouldRetry,
            "anthropic-ratelimit-requests-limit" => Self::AnthropicRequestsLimit,
            "anthropic-ratelimit-requests-remaining" => Self::AnthropicRequestsRemaining,
            "anthropic-ratelimit-requests-reset" => Self::AnthropicRequestsReset,
            "anthropic-ratelimit-tokens-limit" => Self::AnthropicTokensLimit,
            "anthropic-ratelimit-tokens-remaining" => Self::AnthropicTokensRemaining,
            "anthropic-ratelimit-tokens-reset" => Self::AnthropicTokensReset,
            "anthropic-ratelimit-input-tokens-limit" => Self::AnthropicInputTokensLimit,
            "anthropic-ratelimit-input-tokens-remaining" => Self::AnthropicInputTokensRemaining,
            "anthropic-ratelimit-input-tokens-reset" => Self::AnthropicInputTokensReset,
            "anthropic-ratelimit-output-tokens-limit" => Self::AnthropicOutputTokensLimit,
            "anthropic-ratelimit-output-tokens-remaining" => Self::AnthropicOutputTokensRemaining,
            "anthropic-ratelimit-output-tokens-reset" => Self::AnthropicOutputTokensReset,
            "x-rate-limit-limit" => Self::XDashRateLimitLimit,
            "x-rate-limit-remaining" => Self::XDashRateLimitRemaining,
            "x-rate-limit-reset" => Self::XDashRateLimitReset,
            "x-shopify-shop-api-call-limit" => Self::XShopifyShopApiCallLimit,
            "x-ms-ratelimit-remaining-subscription-reads" => Self::XMsRemainingSubscriptionReads,
            "x-ms-ratelimit-remaining-subscription-writes" => Self::XMsRemainingSubscriptionWrites,
            "x-ms-ratelimit-remaining-subscription-deletes" => {
                Self::XMsRemainingSubscriptionDeletes
            }
            "x-ms-ratelimit-remaining-resource" => Self::XMsRemainingResource,
            "x-amzn-errortype" => Self::XAmznErrorType,
            _ => return None,
        })
    }
}

/// The rate-limit fields present in one response.
pub(crate) struct Fields<'a> {
    headers: &'a HeaderMap,
    /// Each field's name and first line.
    first: [Option<(&'a HeaderName, &'a HeaderValue)>; FIELD_COUNT],
    /// Bit `field` set: the field has more than one line.
    repeated: u64,
    any: bool,
}

impl<'a> Fields<'a> {
    pub(crate) fn scan(headers: &'a HeaderMap) -> Self {
        let mut first = [None; FIELD_COUNT];
        let mut repeated = 0;
        let mut any = false;
        // The names alone first (a walk over the distinct names, cheaper
        // than over every line): most responses stop here.
        if !headers
            .keys()
            .any(|name| Field::classify(name.as_str()).is_some())
        {
            return Self {
                headers,
                first,
                repeated,
                any,
            };
        }
        for (name, value) in headers {
            if let Some(field) = Field::classify(name.as_str()) {
                let slot = &mut first[field as usize];
                if slot.is_none() {
                    *slot = Some((name, value));
                } else {
                    repeated |= 1 << field as u64;
                }
                any = true;
            }
        }
        Self {
            headers,
            first,
            repeated,
            any,
        }
    }

    /// True when no rate-limit field is present.
    pub(crate) fn is_empty(&self) -> bool {
        !self.any
    }

    pub(crate) fn has(&self, field: Field) -> bool {
        self.first[field as usize].is_some()
    }

    /// Whether any of `fields` is present (lets a dialect skip all its work).
    pub(crate) fn has_any(&self, fields: &[Field]) -> bool {
        fields.iter().any(|&field| self.has(field))
    }

    /// Every line of `field`, in order. Only a field with several lines
    /// costs a map lookup.
    pub(crate) fn values(&self, field: Field) -> impl Iterator<Item = &'a HeaderValue> + use<'a> {
        let first = self.first[field as usize];
        let more = (self.repeated & (1 << field as u64) != 0)
            .then_some(first)
            .flatten()
            .map(|(name, _)| self.headers.get_all(name).iter().skip(1));
        first
            .map(|(_, value)| value)
            .into_iter()
            .chain(more.into_iter().flatten())
    }

    /// The first line of `field` that is visible ASCII and not blank, trimmed
    /// (names, ids and flags, read as text).
    pub(crate) fn text(&self, field: Field) -> Option<&'a str> {
        self.values(field).find_map(|value| {
            let text = value.to_str().ok()?.trim();
            (!text.is_empty()).then_some(text)
        })
    }

    /// The smallest valid element of `field` (see [`fold`](Self::fold)).
    pub(crate) fn smallest<T: Ord>(
        &self,
        field: Field,
        parse: fn(&[u8]) -> Option<T>,
    ) -> Option<T> {
        self.fold(field, parse, Ord::min)
    }

    /// The largest valid element of `field` (see [`fold`](Self::fold)).
    pub(crate) fn largest<T: Ord>(&self, field: Field, parse: fn(&[u8]) -> Option<T>) -> Option<T> {
        self.fold(field, parse, Ord::max)
    }

    /// Every comma-separated element of every line of `field` (a proxy may
    /// have joined duplicated lines with commas), trimmed, parsed by `parse`
    /// and folded with `pick`; malformed elements are dropped with a debug
    /// event. Works on bytes: the number parsers reject anything that is not
    /// ASCII digits anyway. A plain loop: this runs for every numeric field.
    fn fold<T>(
        &self,
        field: Field,
        parse: fn(&[u8]) -> Option<T>,
        pick: fn(T, T) -> T,
    ) -> Option<T> {
        let (name, first) = self.first[field as usize]?;
        let mut best = None;
        let parse_logged = |element: &[u8]| {
            let element = element.trim_ascii();
            let parsed = parse(element);
            if parsed.is_none() {
                tracing::debug!(
                    ?field,
                    value = %String::from_utf8_lossy(element),
                    "ignoring malformed rate-limit value"
                );
            }
            parsed
        };
        let repeated = self.repeated & (1 << field as u64) != 0;
        if !repeated && !first.as_bytes().contains(&b',') {
            // The usual case: one line, one value.
            return parse_logged(first.as_bytes());
        }
        let mut visit = |value: &HeaderValue| {
            for element in value.as_bytes().split(|&byte| byte == b',') {
                if let Some(parsed) = parse_logged(element) {
                    best = Some(match best.take() {
                        Some(best) => pick(best, parsed),
                        None => parsed,
                    });
                }
            }
        };
        visit(first);
        if repeated {
            self.headers.get_all(name).iter().skip(1).for_each(visit);
        }
        best
    }
}

/// Logs a value the parser ignores.
pub(crate) fn ignored(field: Field, value: &HeaderValue, why: &str) {
    tracing::debug!(?field, ?value, why, "ignoring malformed rate-limit field");
}

/// The clock times are measured against: the response's own `Date` header
/// when present and valid (so clock skew cancels), else the local clock.
/// `Date` is parsed at most once, and only when a time needs it.
/// It also reads `Reset` values the way the parser was told to
/// ([`ResetFormat`]).
pub(crate) struct Clock<'a> {
    headers: &'a HeaderMap,
    now: SystemTime,
    date: OnceCell<Option<SystemTime>>,
    reference: OnceCell<SystemTime>,
    reset_format: ResetFormat,
}

impl<'a> Clock<'a> {
    pub(crate) fn new(headers: &'a HeaderMap, now: SystemTime) -> Self {
        Self {
            headers,
            now,
            date: OnceCell::new(),
            reference: OnceCell::new(),
            reset_format: ResetFormat::Auto,
        }
    }

    pub(crate) fn with_reset_format(mut self, format: ResetFormat) -> Self {
        self.reset_format = format;
        self
    }

    /// A `RateLimit-Reset` or `X-RateLimit-Reset` value, as a wait from
    /// the moment the response was received.
    pub(crate) fn reset(&self, value: Duration) -> Duration {
        match self.reset_format {
            ResetFormat::Auto => reset_from_seconds(value, || self.reference()),
            ResetFormat::Delta => value,
            ResetFormat::Epoch => until_epoch(value, || self.reference()),
        }
    }

    /// How far a `Reset` value read by [`Self::reset`] may be from the
    /// truth, when coarser than its own unit: an epoch measured against
    /// `Date` (the local clock disagreeing) is its unit plus `Date`'s whole
    /// second; a delta, or an epoch measured against the local clock, is
    /// good to its unit (`None`).
    pub(crate) fn reset_precision(&self, value: Duration) -> Option<Duration> {
        let epoch = match self.reset_format {
            ResetFormat::Auto => value > Duration::from_secs(EPOCH_THRESHOLD_SECS),
            ResetFormat::Delta => false,
            ResetFormat::Epoch => true,
        };
        let against_date = self.reference() != self.now;
        (epoch && against_date).then(|| {
            let unit = if value.subsec_nanos() == 0 {
                Duration::from_secs(1)
            } else {
                Duration::from_millis(1)
            };
            unit + Duration::from_secs(1)
        })
    }

    /// The moment the response was produced, on the clock its times use.
    ///
    /// `Date` says it to the whole second. When the local clock reads a time
    /// within that second (`Date` ≤ now < `Date` + 1 s), the two clocks agree
    /// to `Date`'s precision and the local reading is the finer measure of
    /// the same moment: an epoch reset or a date hint is then located to a
    /// round trip instead of a second (a clock-aligned window's boundary).
    /// Otherwise the clocks differ (or the response spent more than the rest
    /// of its second in transit) and `Date` is the reference.
    pub(crate) fn reference(&self) -> SystemTime {
        *self.reference.get_or_init(|| match self.date() {
            Some(date) if !agrees_with(self.now, date) => date,
            _ => self.now,
        })
    }

    /// The response's `Date` (parsed once).
    pub(crate) fn date(&self) -> Option<SystemTime> {
        *self.date.get_or_init(|| date_header(self.headers))
    }

    /// Whether a time was read against `Date` (see [`Self::reference`]).
    pub(crate) fn measured_against_date(&self) -> bool {
        self.reference
            .get()
            .is_some_and(|reference| *reference != self.now)
    }
}

/// The first valid `Date` header: the server's clock, to the whole second.
pub(crate) fn date_header(headers: &HeaderMap) -> Option<SystemTime> {
    headers.get_all(DATE).iter().find_map(|value| {
        let parsed = value
            .to_str()
            .ok()
            .and_then(|text| httpdate::parse_http_date(text.trim()).ok());
        if parsed.is_none() {
            tracing::debug!(?value, "ignoring malformed Date header");
        }
        parsed
    })
}

/// Whether `now` lies within the whole second `date` names.
fn agrees_with(now: SystemTime, date: SystemTime) -> bool {
    now.duration_since(date)
        .is_ok_and(|ahead| ahead < Duration::from_secs(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_is_measured_against_date_only_when_the_clocks_disagree() {
        let text = "Sun, 06 Nov 1994 08:49:37 GMT";
        let date = httpdate::parse_http_date(text).unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(DATE, HeaderValue::from_static(text));
        let agreeing = Clock::new(&headers, date + Duration::from_millis(300));
        assert!(!agreeing.measured_against_date(), "nothing read yet");
        assert_eq!(agreeing.reference(), date + Duration::from_millis(300));
        assert!(!agreeing.measured_against_date());
        let disagreeing = Clock::new(&headers, date + Duration::from_secs(5));
        assert_eq!(disagreeing.reference(), date);
        assert!(disagreeing.measured_against_date());
        assert_eq!(date_header(&headers), Some(date));
        // What the signal carries: an HTTP-date hint read against the
        // local clock only when the clocks agree.
        headers.insert(
            http::header::RETRY_AFTER,
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:39 GMT"),
        );
        let parser = crate::signal::SignalParser::new();
        let status = http::StatusCode::TOO_MANY_REQUESTS;
        let read = |now| parser.parse_at(status, &headers, None, now);
        assert!(!read(date + Duration::from_millis(300)).measured_against_date());
        assert!(read(date + Duration::from_secs(5)).measured_against_date());
    }

    #[test]
    fn every_field_name_and_only_those_classify() {
        let names = [
            ("retry-after", Field::RetryAfter),
            ("retry-after-ms", Field::RetryAfterMs),
            ("x-ms-retry-after-ms", Field::XMsRetryAfterMs),
            ("ratelimit", Field::RateLimit),
            ("ratelimit-policy", Field::RateLimitPolicy),
            ("ratelimit-limit", Field::RateLimitLimit),
            ("ratelimit-remaining", Field::RateLimitRemaining),
            ("ratelimit-reset", Field::RateLimitReset),
            ("x-ratelimit-limit", Field::XRateLimitLimit),
            ("x-ratelimit-remaining", Field::XRateLimitRemaining),
            ("x-ratelimit-reset", Field::XRateLimitReset),
            ("x-ratelimit-reset-after", Field::XRateLimitResetAfter),
            ("x-ratelimit-used", Field::XRateLimitUsed),
            ("ratelimit-resettime", Field::RateLimitResetTime),
            ("ratelimit-observed", Field::RateLimitObserved),
            ("ratelimit-name", Field::RateLimitName),
            ("x-ratelimit-resource", Field::XRateLimitResource),
            ("x-ratelimit-bucket", Field::XRateLimitBucket),
            ("x-ratelimit-global", Field::XRateLimitGlobal),
            ("x-ratelimit-scope", Field::XRateLimitScope),
            ("x-ratelimit-limit-requests", Field::XRateLimitLimitRequests),
            (
                "x-ratelimit-remaining-requests",
                Field::XRateLimitRemainingRequests,
            ),
            ("x-ratelimit-reset-requests", Field::XRateLimitResetRequests),
            ("x-ratelimit-limit-tokens", Field::XRateLimitLimitTokens),
            (
                "x-ratelimit-remaining-tokens",
                Field::XRateLimitRemainingTokens,
            ),
            ("x-ratelimit-reset-tokens", Field::XRateLimitResetTokens),
            ("x-should-retry", Field::XShouldRetry),
            (
                "anthropic-ratelimit-requests-limit",
                Field::AnthropicRequestsLimit,
            ),
            (
                "anthropic-ratelimit-requests-remaining",
                Field::AnthropicRequestsRemaining,
            ),
            (
                "anthropic-ratelimit-requests-reset",
                Field::AnthropicRequestsReset,
            ),
            (
                "anthropic-ratelimit-tokens-limit",
                Field::AnthropicTokensLimit,
            ),
            (
                "anthropic-ratelimit-tokens-remaining",
                Field::AnthropicTokensRemaining,
            ),
            (
                "anthropic-ratelimit-tokens-reset",
                Field::AnthropicTokensReset,
            ),
            (
                "anthropic-ratelimit-input-tokens-limit",
                Field::AnthropicInputTokensLimit,
            ),
            (
                "anthropic-ratelimit-input-tokens-remaining",
                Field::AnthropicInputTokensRemaining,
            ),
            (
                "anthropic-ratelimit-input-tokens-reset",
                Field::AnthropicInputTokensReset,
            ),
            (
                "anthropic-ratelimit-output-tokens-limit",
                Field::AnthropicOutputTokensLimit,
            ),
            (
                "anthropic-ratelimit-output-tokens-remaining",
                Field::AnthropicOutputTokensRemaining,
            ),
            (
                "anthropic-ratelimit-output-tokens-reset",
                Field::AnthropicOutputTokensReset,
            ),
            ("x-rate-limit-limit", Field::XDashRateLimitLimit),
            ("x-rate-limit-remaining", Field::XDashRateLimitRemaining),
            ("x-rate-limit-reset", Field::XDashRateLimitReset),
            (
                "x-shopify-shop-api-call-limit",
                Field::XShopifyShopApiCallLimit,
            ),
            (
                "x-ms-ratelimit-remaining-subscription-reads",
                Field::XMsRemainingSubscriptionReads,
            ),
            (
                "x-ms-ratelimit-remaining-subscription-writes",
                Field::XMsRemainingSubscriptionWrites,
            ),
            (
                "x-ms-ratelimit-remaining-subscription-deletes",
                Field::XMsRemainingSubscriptionDeletes,
            ),
            (
                "x-ms-ratelimit-remaining-resource",
                Field::XMsRemainingResource,
            ),
            ("x-amzn-errortype", Field::XAmznErrorType),
        ];
        assert_eq!(names.len(), FIELD_COUNT);
        for (name, field) in names {
            assert_eq!(Field::classify(name), Some(field), "{name}");
            // Same length, one byte off: not a field.
            let mut near = name.as_bytes().to_vec();
            near[5] ^= 1;
            let near = String::from_utf8(near).unwrap();
            assert_eq!(Field::classify(&near), None, "{near}");
        }
        for other in [
            "referrer-policy",
            "x-request-id",
            "date",
            "",
            "r",
            "anthropic-version",
            "x-ratelimit-limit-images",
        ] {
            assert_eq!(Field::classify(other), None, "{other}");
        }
    }

    #[test]
    fn scan_finds_only_rate_limit_fields() {
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("text/plain"));
        headers.insert("x-request-id", HeaderValue::from_static("abc"));
        headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
        assert!(Fields::scan(&headers).is_empty());

        headers.insert("RateLimit-Policy", HeaderValue::from_static("10;w=1"));
        headers.append("x-ratelimit-used", HeaderValue::from_static("1"));
        let fields = Fields::scan(&headers);
        assert!(!fields.is_empty());
        assert!(fields.has(Field::RateLimitPolicy));
        assert!(fields.has(Field::XRateLimitUsed));
        assert!(!fields.has(Field::RetryAfter));
    }

    #[test]
    fn elements_split_lines_and_commas_and_skip_non_utf8() {
        let mut headers = HeaderMap::new();
        headers.append("x-ratelimit-remaining", HeaderValue::from_static(" 5, 7"));
        headers.append(
            "x-ratelimit-remaining",
            HeaderValue::from_bytes(b"\xff9").unwrap(),
        );
        headers.append("x-ratelimit-remaining", HeaderValue::from_static("x, 3"));
        let fields = Fields::scan(&headers);
        let parse = super::super::numbers::parse_integer;
        assert_eq!(fields.smallest(Field::XRateLimitRemaining, parse), Some(3));
        assert_eq!(fields.largest(Field::XRateLimitRemaining, parse), Some(7));
        assert_eq!(fields.largest(Field::XRateLimitLimit, parse), None);
    }

    #[test]
    fn clock_prefers_a_valid_date_header() {
        let now = SystemTime::UNIX_EPOCH;
        let mut headers = HeaderMap::new();
        assert_eq!(Clock::new(&headers, now).reference(), now);
        headers.append("date", HeaderValue::from_static("yesterday"));
        headers.append(
            "date",
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"),
        );
        let expected = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(Clock::new(&headers, now).reference(), expected);
    }

    #[test]
    fn a_local_clock_within_the_dates_second_is_the_finer_reference() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "date",
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"),
        );
        let date = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        let ms = Duration::from_millis;
        for inside in [ms(0), ms(1), ms(640), ms(999)] {
            let now = date + inside;
            assert_eq!(Clock::new(&headers, now).reference(), now, "{inside:?}");
        }
        // Clocks that disagree, by any amount either way: the server's `Date`.
        for now in [date - ms(1), date + ms(1000), date + ms(86_400_000)] {
            assert_eq!(Clock::new(&headers, now).reference(), date, "{now:?}");
        }
    }

    #[test]
    fn an_epoch_read_against_date_is_two_seconds_from_the_truth() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "date",
            HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"),
        );
        let date = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        let secs = Duration::from_secs;
        let epoch = date.duration_since(SystemTime::UNIX_EPOCH).unwrap() + secs(2);
        // The local clock disagrees: the epoch is read against `Date`, whole
        // seconds both, each up to a second from the truth.
        let far = Clock::new(&headers, date + secs(3600));
        assert_eq!(far.reset(epoch), secs(2));
        assert_eq!(far.reset_precision(epoch), Some(secs(2)));
        assert_eq!(
            far.reset_precision(epoch + Duration::from_millis(500)),
            Some(secs(1) + Duration::from_millis(1))
        );
        // A delta, or an epoch read against an agreeing local clock: its
        // own unit only.
        assert_eq!(far.reset_precision(secs(2)), None);
        let near = Clock::new(&headers, date + Duration::from_millis(300));
        assert_eq!(near.reset_precision(epoch), None);
    }
}
