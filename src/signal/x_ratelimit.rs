//! The de-facto `X-RateLimit-*` fields (GitHub and many others).
//!
//! - `X-RateLimit-Limit`, `-Remaining`, `-Used`: integers;
//! - `X-RateLimit-Reset`: seconds, possibly fractional; a value above one
//!   year is an epoch timestamp (seconds, or milliseconds from 10^12 on)
//!   measured against the response's `Date`, a smaller one is a delta;
//! - `X-RateLimit-Reset-After`: delta seconds, possibly fractional; preferred
//!   over `Reset` as it needs no clock.
//!
//! Without `Remaining`, remaining is `Limit - Used` (saturating at zero).
//! Duplicated lines keep the polite reading: smallest limit and remaining,
//! largest used and reset.

use super::fields::{Clock, Field, Fields};
use super::numbers::{parse_integer, parse_seconds, reset_from_seconds};
use super::quota::{Quota, QuotaSource};

/// The `X-RateLimit-*` quota, if any of its fields is present and valid.
pub(crate) fn read(fields: &Fields<'_>, clock: &Clock<'_>) -> Option<Quota> {
    if !fields.has_any(&[
        Field::XRateLimitLimit,
        Field::XRateLimitRemaining,
        Field::XRateLimitReset,
        Field::XRateLimitResetAfter,
        Field::XRateLimitUsed,
    ]) {
        return None;
    }
    let limit = fields.smallest(Field::XRateLimitLimit, parse_integer);
    let used = fields.largest(Field::XRateLimitUsed, parse_integer);
    let remaining = fields
        .smallest(Field::XRateLimitRemaining, parse_integer)
        .or_else(|| Some(limit?.saturating_sub(used?)));
    let reset = fields
        .largest(Field::XRateLimitResetAfter, parse_seconds)
        .or_else(|| {
            let reset = fields.largest(Field::XRateLimitReset, parse_seconds)?;
            Some(reset_from_seconds(reset, || clock.reference()))
        });
    if limit.is_none() && remaining.is_none() && reset.is_none() {
        return None;
    }
    let mut quota = Quota::new(QuotaSource::XRateLimit);
    quota.set_limit(limit);
    quota.set_remaining(remaining);
    quota.set_reset(reset);
    Some(quota)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use http::{HeaderMap, HeaderValue};

    use super::*;

    fn read_pairs(pairs: &[(&'static str, &'static str)]) -> Option<Quota> {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_static(value));
        }
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_798_761_000);
        read(&Fields::scan(&headers), &Clock::new(&headers, now))
    }

    #[test]
    fn github_style_epoch_reset() {
        let quota = read_pairs(&[
            ("x-ratelimit-limit", "5000"),
            ("x-ratelimit-remaining", "4987"),
            ("x-ratelimit-reset", "1798761600"),
            ("x-ratelimit-used", "13"),
        ])
        .unwrap();
        assert_eq!(quota.limit(), Some(5000));
        assert_eq!(quota.remaining(), Some(4987));
        assert_eq!(quota.reset(), Some(Duration::from_secs(600)));
        assert_eq!(quota.source(), QuotaSource::XRateLimit);
    }

    #[test]
    fn delta_reset_fractional_reset_after_and_used() {
        let quota = read_pairs(&[
            ("x-ratelimit-limit", "10"),
            ("x-ratelimit-used", "12"),
            ("x-ratelimit-reset", "30"),
            ("x-ratelimit-reset-after", "1.25"),
        ])
        .unwrap();
        assert_eq!(quota.remaining(), Some(0));
        assert_eq!(quota.reset(), Some(Duration::from_millis(1250)));
        let quota = read_pairs(&[("x-ratelimit-reset", "30")]).unwrap();
        assert_eq!(quota.reset(), Some(Duration::from_secs(30)));
        assert_eq!(quota.remaining(), None);
    }

    #[test]
    fn duplicates_keep_the_polite_reading_and_garbage_is_ignored() {
        let quota = read_pairs(&[
            ("x-ratelimit-remaining", "7"),
            ("x-ratelimit-remaining", "-1, 3, 1.5"),
            ("x-ratelimit-limit", "NaN"),
        ])
        .unwrap();
        assert_eq!(quota.remaining(), Some(3));
        assert_eq!(quota.limit(), None);
        assert_eq!(read_pairs(&[("x-ratelimit-limit", "")]), None);
        assert_eq!(read_pairs(&[]), None);
    }
}
