//! Number and time parsing that never panics, wraps or overflows.
//!
//! Integers saturate at `u64::MAX`; durations saturate at [`Duration::MAX`];
//! anything that is not a plain non-negative number (`-1`, `+1`, `1e3`,
//! `NaN`, `inf`, ` 1 2`) is rejected.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// One year of seconds: a `Reset` above this is an epoch timestamp, not a delta.
pub(crate) const EPOCH_THRESHOLD_SECS: u64 = 365 * 24 * 60 * 60;

/// A `Reset` epoch at or above this many seconds (year 33658) is taken as
/// epoch *milliseconds* (2001-09-09 onwards), which some servers send.
pub(crate) const EPOCH_MILLIS_THRESHOLD_SECS: u64 = 1_000_000_000_000;

/// `1*DIGIT`, saturating at `u64::MAX`.
pub(crate) fn parse_integer(text: &[u8]) -> Option<u64> {
    if text.is_empty() {
        return None;
    }
    text.iter().try_fold(0u64, |value, &byte| {
        byte.is_ascii_digit().then(|| {
            value
                .saturating_mul(10)
                .saturating_add(u64::from(byte - b'0'))
        })
    })
}

/// `1*DIGIT [ "." 1*DIGIT ]` seconds; digits past nanoseconds are dropped.
pub(crate) fn parse_seconds(text: &[u8]) -> Option<Duration> {
    let (whole, fraction) = match text.iter().position(|&byte| byte == b'.') {
        Some(dot) => (&text[..dot], Some(&text[dot + 1..])),
        None => (text, None),
    };
    let secs = parse_integer(whole)?;
    let mut nanos = 0u32;
    if let Some(fraction) = fraction {
        if fraction.is_empty() || !fraction.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let mut scale = 100_000_000u32;
        for &byte in fraction.iter().take(9) {
            nanos += u32::from(byte - b'0') * scale;
            scale /= 10;
        }
    }
    // nanos < 1e9, so `Duration::new` cannot carry into (and overflow) secs.
    Some(Duration::new(secs, nanos))
}

/// A count that may be sent with a fraction (Reddit's `99.0`), rounded
/// down: fewer units left is the polite reading of a fraction.
pub(crate) fn parse_count(text: &[u8]) -> Option<u64> {
    parse_seconds(text).map(|count| count.as_secs())
}

/// A Go duration (`1s`, `6m0s`, `250ms`, `1m30.5s`, `1h2m`), as OpenAI
/// sends its resets, or plain seconds (`17`, `0.5`), as Azure OpenAI
/// sometimes does. A duration too long for [`Duration`] saturates.
pub(crate) fn parse_go_duration(text: &[u8]) -> Option<Duration> {
    if let Some(secs) = parse_seconds(text) {
        return Some(secs);
    }
    // Go writes no spaces and no sign; humantime would take `1 hour`.
    if !text.first().is_some_and(u8::is_ascii_digit) || !text.iter().all(is_go_duration_byte) {
        return None;
    }
    let text = std::str::from_utf8(text).ok()?;
    match humantime::parse_duration(text) {
        Ok(duration) => Some(duration),
        Err(humantime::DurationError::NumberOverflow) => Some(Duration::MAX),
        Err(_) => None,
    }
}

/// A digit, a unit letter, the decimal point, or part of `µ` (as in `µs`).
fn is_go_duration_byte(byte: &u8) -> bool {
    byte.is_ascii_alphanumeric() || *byte == b'.' || !byte.is_ascii()
}

/// An RFC 3339 timestamp in UTC (`2025-08-21T12:40:59Z`, fractional
/// seconds allowed), as Anthropic sends its resets.
pub(crate) fn parse_rfc3339(text: &[u8]) -> Option<SystemTime> {
    humantime::parse_rfc3339(std::str::from_utf8(text).ok()?).ok()
}

/// Seconds given as a JSON-style float: finite and non-negative, saturating.
pub(crate) fn seconds_from_f64(secs: f64) -> Option<Duration> {
    if !secs.is_finite() || secs < 0.0 {
        return None;
    }
    Some(Duration::try_from_secs_f64(secs).unwrap_or(Duration::MAX))
}

/// Seconds from a structured-field integer or decimal (negative rejected).
pub(crate) fn seconds_from_bare_item<S, B, T, D>(
    item: &sfv::GenericBareItem<S, B, T, D>,
) -> Option<Duration> {
    match item {
        sfv::GenericBareItem::Integer(value) => u64::try_from(i64::from(*value))
            .ok()
            .map(Duration::from_secs),
        sfv::GenericBareItem::Decimal(value) => {
            let millis = u64::try_from(i64::from(value.as_integer_scaled_1000())).ok()?;
            Some(Duration::from_millis(millis))
        }
        _ => None,
    }
}

/// A non-negative structured-field integer.
pub(crate) fn count_from_bare_item<S, B, T, D>(
    item: &sfv::GenericBareItem<S, B, T, D>,
) -> Option<u64> {
    item.as_integer()
        .and_then(|value| u64::try_from(i64::from(value)).ok())
}

/// The wait until `at`, measured against `reference`; zero when `at` is past.
pub(crate) fn until(at: SystemTime, reference: SystemTime) -> Duration {
    at.duration_since(reference).unwrap_or(Duration::ZERO)
}

/// A `Reset` value: a delta when at most one year, else an epoch timestamp
/// (see [`until_epoch`]) measured against `reference`. Saturates at
/// [`Duration::MAX`].
pub(crate) fn reset_from_seconds(
    value: Duration,
    reference: impl FnOnce() -> SystemTime,
) -> Duration {
    if value <= Duration::from_secs(EPOCH_THRESHOLD_SECS) {
        return value;
    }
    until_epoch(value, reference)
}

/// The wait until the epoch timestamp `value` (seconds, or milliseconds
/// when implausibly far for seconds), measured against `reference`; zero
/// when past, [`Duration::MAX`] when beyond [`SystemTime`].
pub(crate) fn until_epoch(value: Duration, reference: impl FnOnce() -> SystemTime) -> Duration {
    let since_epoch = if value.as_secs() >= EPOCH_MILLIS_THRESHOLD_SECS {
        value / 1000
    } else {
        value
    };
    match UNIX_EPOCH.checked_add(since_epoch) {
        Some(at) => until(at, reference()),
        None => Duration::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(text: &str) -> Option<u64> {
        parse_integer(text.as_bytes())
    }

    fn seconds(text: &str) -> Option<Duration> {
        parse_seconds(text.as_bytes())
    }

    #[test]
    fn integers_are_plain_digits_and_saturate() {
        assert_eq!(int("0"), Some(0));
        assert_eq!(int("120"), Some(120));
        assert_eq!(int("007"), Some(7));
        assert_eq!(int("18446744073709551615"), Some(u64::MAX));
        assert_eq!(int(&"9".repeat(40)), Some(u64::MAX));
        for bad in ["", "-1", "+1", "1.5", "1e3", "NaN", "inf", " 1", "1 2", "٣"] {
            assert_eq!(int(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn seconds_accept_fractions_and_saturate() {
        assert_eq!(seconds("1.25"), Some(Duration::from_millis(1250)));
        assert_eq!(seconds("64.57"), Some(Duration::from_millis(64_570)));
        assert_eq!(seconds("0.0000000019"), Some(Duration::from_nanos(1)));
        assert_eq!(seconds("3"), Some(Duration::from_secs(3)));
        let huge = seconds(&format!("{}.999999999", "9".repeat(40)));
        assert_eq!(huge, Some(Duration::MAX));
        for bad in ["", ".5", "1.", "-1.5", "1.5.2", "1,5", "NaN", "1e3"] {
            assert_eq!(seconds(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn go_durations_and_plain_seconds() {
        let go = |text: &str| parse_go_duration(text.as_bytes());
        let ms = Duration::from_millis;
        assert_eq!(go("1s"), Some(ms(1000)));
        assert_eq!(go("6m0s"), Some(ms(360_000)));
        assert_eq!(go("250ms"), Some(ms(250)));
        assert_eq!(go("12ms"), Some(ms(12)));
        assert_eq!(go("1m30.5s"), Some(ms(90_500)));
        assert_eq!(go("1h2m3s"), Some(ms(3_723_000)));
        assert_eq!(go("17"), Some(ms(17_000)));
        assert_eq!(go("0.5"), Some(ms(500)));
        assert_eq!(go("0s"), Some(Duration::ZERO));
        assert_eq!(go(&format!("{}h", "9".repeat(30))), Some(Duration::MAX));
        for bad in [
            "", "-1s", "+1s", "1 hour", "s", "1x", "NaN", "1e3s", "1.s", "\u{ff}",
        ] {
            assert_eq!(go(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn rfc3339_in_utc_and_fractional_counts() {
        let at = parse_rfc3339(b"2025-08-21T12:40:59Z").unwrap();
        assert_eq!(at, UNIX_EPOCH + Duration::from_secs(1_755_780_059));
        let fine = parse_rfc3339(b"2025-08-21T12:40:59.250Z").unwrap();
        assert_eq!(fine.duration_since(at).unwrap(), Duration::from_millis(250));
        for bad in [
            &b"2025-08-21"[..],
            b"2025-08-21T12:40:59+02:00",
            b"soon",
            b"\xff",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad:?}");
        }
        assert_eq!(parse_count(b"99.0"), Some(99));
        assert_eq!(parse_count(b"0.7"), Some(0));
        assert_eq!(parse_count(b"-1"), None);
    }

    #[test]
    fn floats_reject_nan_infinity_and_negatives() {
        assert_eq!(seconds_from_f64(0.05), Some(Duration::from_millis(50)));
        assert_eq!(seconds_from_f64(1e300), Some(Duration::MAX));
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.5] {
            assert_eq!(seconds_from_f64(bad), None);
        }
    }

    #[test]
    fn small_resets_are_deltas_large_ones_epochs() {
        let reference = UNIX_EPOCH + Duration::from_secs(1_798_761_000);
        let delta = reset_from_seconds(Duration::from_secs(60), || unreachable!());
        assert_eq!(delta, Duration::from_secs(60));
        let epoch = reset_from_seconds(Duration::from_secs(1_798_761_600), || reference);
        assert_eq!(epoch, Duration::from_secs(600));
        let millis = reset_from_seconds(Duration::from_secs(1_798_761_600_500), || reference);
        assert_eq!(millis, Duration::from_millis(600_500));
        let past = reset_from_seconds(Duration::from_secs(1_700_000_000), || reference);
        assert_eq!(past, Duration::ZERO);
        let far = reset_from_seconds(Duration::MAX, || reference);
        assert!(far > Duration::from_secs(1_000_000_000));
    }

    #[test]
    fn bare_items_reject_negatives() {
        let item = |text: &str| -> sfv::BareItem {
            let item: sfv::Item = sfv::Parser::new(text).parse().unwrap();
            item.bare_item
        };
        assert_eq!(
            seconds_from_bare_item(&item("30")),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            seconds_from_bare_item(&item("1.5")),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(seconds_from_bare_item(&item("-1")), None);
        assert_eq!(seconds_from_bare_item(&item("-0.5")), None);
        assert_eq!(seconds_from_bare_item(&item("\"5\"")), None);
        assert_eq!(count_from_bare_item(&item("5")), Some(5));
        assert_eq!(count_from_bare_item(&item("-5")), None);
        assert_eq!(count_from_bare_item(&item("5.0")), None);
    }
}
