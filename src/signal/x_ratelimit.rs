//! The de-facto `X-RateLimit-*` fields (GitHub, Discord, Reddit and many
//! others) and X's `x-rate-limit-*`.
//!
//! - `X-RateLimit-Limit`, `-Remaining`, `-Used`: counts; a fraction
//!   (Reddit's `99.0`) is rounded down;
//! - `X-RateLimit-Reset`: seconds, possibly fractional; a value above one
//!   year is an epoch timestamp (seconds, or milliseconds from 10^12 on)
//!   measured against the response's `Date`, a smaller one is a delta
//!   (unless the parser pins the reading, see
//!   [`ResetFormat`](super::ResetFormat));
//! - `X-RateLimit-Reset-After`: delta seconds, possibly fractional
//!   (Discord); preferred over `Reset` as it needs no clock;
//! - `x-ratelimit-resource` (GitHub) or `X-RateLimit-Bucket` (Discord):
//!   the quota's name.
//!
//! X sends `x-rate-limit-limit`, `-remaining` and `-reset` (epoch seconds),
//! read the same way as a quota of its own source.
//!
//! Without `Remaining`, remaining is `Limit - Used` (saturating at zero).
//! Duplicated lines keep the polite reading: smallest limit and remaining,
//! largest used and reset.

use super::fields::{Clock, Field, Fields};
use super::numbers::{parse_count, parse_seconds};
use super::quota::{Quota, QuotaSource};

/// The fields of one family.
struct Family {
    limit: Field,
    remaining: Field,
    reset: Field,
    reset_after: Option<Field>,
    used: Option<Field>,
    source: QuotaSource,
}

const X_RATELIMIT: Family = Family {
    limit: Field::XRateLimitLimit,
    remaining: Field::XRateLimitRemaining,
    reset: Field::XRateLimitReset,
    reset_after: Some(Field::XRateLimitResetAfter),
    used: Some(Field::XRateLimitUsed),
    source: QuotaSource::XRateLimit,
};

const X_DASH_RATE_LIMIT: Family = Family {
    limit: Field::XDashRateLimitLimit,
    remaining: Field::XDashRateLimitRemaining,
    reset: Field::XDashRateLimitReset,
    reset_after: None,
    used: None,
    source: QuotaSource::XDashRateLimit,
};

/// The `X-RateLimit-*` quota and X's `x-rate-limit-*` one, if any of their
/// fields is present and valid.
pub(crate) fn read(fields: &Fields<'_>, clock: &Clock<'_>, out: &mut Vec<Quota>) {
    for family in [&X_RATELIMIT, &X_DASH_RATE_LIMIT] {
        if let Some(mut quota) = read_family(fields, clock, family) {
            if family.source == QuotaSource::XRateLimit {
                let resource = fields.text(Field::XRateLimitResource);
                // GitHub's resources reset whole at `x-ratelimit-reset`.
                if resource.is_some() {
                    quota.set_fixed_window();
                }
                let name = resource.or_else(|| fields.text(Field::XRateLimitBucket));
                quota.set_name(name.map(str::to_owned));
            }
            out.push(quota);
        }
    }
}

fn read_family(fields: &Fields<'_>, clock: &Clock<'_>, family: &Family) -> Option<Quota> {
    let present = [family.limit, family.remaining, family.reset]
        .into_iter()
        .chain(family.reset_after)
        .chain(family.used)
        .any(|field| fields.has(field));
    if !present {
        return None;
    }
    let limit = fields.smallest(family.limit, parse_count);
    let used = family
        .used
        .and_then(|field| fields.largest(field, parse_count));
    let remaining = fields
        .smallest(family.remaining, parse_count)
        .or_else(|| Some(limit?.saturating_sub(used?)));
    let mut reset_precision = None;
    let reset = family
        .reset_after
        .and_then(|field| fields.largest(field, parse_seconds))
        .or_else(|| {
            let reset = fields.largest(family.reset, parse_seconds)?;
            reset_precision = clock.reset_precision(reset);
            Some(clock.reset(reset))
        });
    if limit.is_none() && remaining.is_none() && reset.is_none() {
        return None;
    }
    let mut quota = Quota::new(family.source);
    quota.set_limit(limit);
    quota.set_remaining(remaining);
    quota.set_reset(reset);
    quota.set_reset_precision(reset_precision);
    Some(quota)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use http::{HeaderMap, HeaderValue};

    use super::*;

    fn read_all(pairs: &[(&'static str, &'static str)]) -> Vec<Quota> {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_static(value));
        }
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_798_761_000);
        let mut out = Vec::new();
        read(
            &Fields::scan(&headers),
            &Clock::new(&headers, now),
            &mut out,
        );
        out
    }

    fn read_pairs(pairs: &[(&'static str, &'static str)]) -> Option<Quota> {
        read_all(pairs).pop()
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
    fn a_github_resource_is_a_fixed_window_and_a_discord_bucket_is_not_said_to_be() {
        let github = read_pairs(&[
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-resource", "core"),
        ])
        .unwrap();
        assert!(github.fixed_window());
        assert_eq!(github.name(), Some("core"));
        let discord = read_pairs(&[
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-bucket", "abcd1234"),
        ])
        .unwrap();
        assert!(!discord.fixed_window());
        assert_eq!(discord.name(), Some("abcd1234"));
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
            ("x-ratelimit-remaining", "-1, 3, 4.5"),
            ("x-ratelimit-limit", "NaN"),
        ])
        .unwrap();
        assert_eq!(quota.remaining(), Some(3));
        assert_eq!(quota.limit(), None);
        assert_eq!(read_pairs(&[("x-ratelimit-limit", "")]), None);
        assert_eq!(read_pairs(&[]), None);
    }

    #[test]
    fn github_resource_and_discord_bucket_name_the_quota() {
        let github = read_pairs(&[
            ("x-ratelimit-remaining", "29"),
            ("x-ratelimit-resource", "search"),
        ])
        .unwrap();
        assert_eq!(github.name(), Some("search"));
        let discord = read_pairs(&[
            ("x-ratelimit-limit", "5"),
            ("x-ratelimit-remaining", "0"),
            ("x-ratelimit-reset", "1798761000.250"),
            ("x-ratelimit-reset-after", "0.250"),
            ("x-ratelimit-bucket", "abcd1234"),
        ])
        .unwrap();
        assert_eq!(discord.name(), Some("abcd1234"));
        assert_eq!(discord.reset(), Some(Duration::from_millis(250)));
    }

    #[test]
    fn reddit_fractional_remaining_and_a_delta_reset() {
        let quota = read_pairs(&[
            ("x-ratelimit-used", "4"),
            ("x-ratelimit-remaining", "595.0"),
            ("x-ratelimit-reset", "337"),
        ])
        .unwrap();
        assert_eq!(quota.remaining(), Some(595));
        assert_eq!(quota.reset(), Some(Duration::from_secs(337)));
    }

    #[test]
    fn x_dashed_fields_are_their_own_quota() {
        let quotas = read_all(&[
            ("x-rate-limit-limit", "900"),
            ("x-rate-limit-remaining", "899"),
            ("x-rate-limit-reset", "1798761900"),
        ]);
        assert_eq!(quotas.len(), 1);
        assert_eq!(quotas[0].source(), QuotaSource::XDashRateLimit);
        assert_eq!(quotas[0].reset(), Some(Duration::from_secs(900)));
        assert_eq!(quotas[0].remaining(), Some(899));
    }
}
