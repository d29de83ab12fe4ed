//! The server-directed wait: `Retry-After`, millisecond hints, and the
//! precedence between them.
//!
//! `Retry-After` wins. A precise hint (`retry-after-ms`,
//! `x-ms-retry-after-ms`, a problem body's `retry_after_ms` or `retry_after`)
//! that agrees with it within its one-second rounding, that is
//! `retry_after - 1 s < hint <= retry_after`, refines it. Without
//! `Retry-After`, the first precise hint in that order is the wait.
//!
//! Duplicated lines of one field keep the longest wait (the polite reading).

use std::time::Duration;

use super::fields::{Clock, Field, Fields, ignored};
use super::numbers::{parse_integer, until};
use super::value::{HintSource, RetryHint};

const ONE_SECOND: Duration = Duration::from_secs(1);

/// `Retry-After`, as delay-seconds or an HTTP-date in any of the three
/// RFC 9110 forms, the date measured against the response's `Date`.
pub(crate) fn retry_after(fields: &Fields<'_>, clock: &Clock<'_>) -> Option<RetryHint> {
    fields
        .values(Field::RetryAfter)
        .filter_map(|value| {
            let Ok(text) = value.to_str() else {
                ignored(Field::RetryAfter, value, "not visible ASCII");
                return None;
            };
            let text = text.trim();
            if let Some(secs) = parse_integer(text.as_bytes()) {
                let delay = Duration::from_secs(secs);
                return Some(RetryHint::new(delay, HintSource::RetryAfterSeconds));
            }
            match httpdate::parse_http_date(text).ok() {
                Some(at) => {
                    let delay = until(at, clock.reference());
                    Some(RetryHint::new(delay, HintSource::RetryAfterDate))
                }
                None => {
                    ignored(
                        Field::RetryAfter,
                        value,
                        "neither delay-seconds nor HTTP-date",
                    );
                    None
                }
            }
        })
        .max_by_key(RetryHint::delay)
}

/// `retry-after-ms` and `x-ms-retry-after-ms`, in that order.
pub(crate) fn millisecond_headers(fields: &Fields<'_>) -> [Option<RetryHint>; 2] {
    let read = |field, source| {
        fields
            .largest(field, parse_integer)
            .map(|millis| RetryHint::new(Duration::from_millis(millis), source))
    };
    [
        read(Field::RetryAfterMs, HintSource::RetryAfterMs),
        read(Field::XMsRetryAfterMs, HintSource::XMsRetryAfterMs),
    ]
}

/// Whether a precise hint agrees with `Retry-After` within its rounding.
fn agrees(coarse: Duration, precise: Duration) -> bool {
    precise <= coarse && precise.saturating_add(ONE_SECOND) > coarse
}

/// Applies the precedence rule to `Retry-After` and the precise hints
/// (already in preference order).
pub(crate) fn decide(
    retry_after: Option<RetryHint>,
    precise: impl IntoIterator<Item = Option<RetryHint>>,
) -> Option<RetryHint> {
    let mut precise = precise.into_iter().flatten();
    match retry_after {
        Some(coarse) => precise
            .find(|hint| agrees(coarse.delay(), hint.delay()))
            .or(Some(coarse)),
        None => precise.next(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::{SystemTime, UNIX_EPOCH};

    use http::{HeaderMap, HeaderValue};

    use super::*;

    fn read(pairs: &[(&'static str, &'static [u8])], now: SystemTime) -> Option<RetryHint> {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_bytes(value).unwrap());
        }
        let fields = Fields::scan(&headers);
        retry_after(&fields, &Clock::new(&headers, now))
    }

    fn at(text: &str) -> SystemTime {
        httpdate::parse_http_date(text).unwrap()
    }

    #[test]
    fn delay_seconds() {
        let hint = read(&[("retry-after", b"120")], UNIX_EPOCH).unwrap();
        assert_eq!(hint.delay(), Duration::from_secs(120));
        assert_eq!(hint.source(), HintSource::RetryAfterSeconds);
        let huge = read(
            &[("retry-after", b"99999999999999999999999999999999999999")],
            UNIX_EPOCH,
        );
        assert_eq!(huge.unwrap().delay(), Duration::from_secs(u64::MAX));
    }

    #[test]
    fn all_three_date_forms_against_the_local_clock() {
        let now = at("Sun, 06 Nov 1994 08:49:00 GMT");
        for form in [
            &b"Sun, 06 Nov 1994 08:49:37 GMT"[..],
            b"Sunday, 06-Nov-94 08:49:37 GMT",
            b"Sun Nov  6 08:49:37 1994",
        ] {
            let hint = read(&[("retry-after", form)], now).unwrap();
            assert_eq!(hint.delay(), Duration::from_secs(37), "{form:?}");
            assert_eq!(hint.source(), HintSource::RetryAfterDate);
        }
    }

    #[test]
    fn date_is_measured_against_the_date_header() {
        // Local clock an hour behind the server: skew cancels.
        let now = at("Sun, 06 Nov 1994 07:49:00 GMT");
        let hint = read(
            &[
                ("date", b"Sun, 06 Nov 1994 08:49:30 GMT"),
                ("retry-after", b"Sun, 06 Nov 1994 08:49:37 GMT"),
            ],
            now,
        );
        assert_eq!(hint.unwrap().delay(), Duration::from_secs(7));
    }

    #[test]
    fn past_dates_mean_now_and_far_dates_do_not_overflow() {
        let now = at("Sun, 06 Nov 1994 08:49:00 GMT");
        let past = read(&[("retry-after", b"Sat, 05 Nov 1994 08:49:37 GMT")], now);
        assert_eq!(past.unwrap().delay(), Duration::ZERO);
        let far = read(&[("retry-after", b"Fri, 31 Dec 9999 23:59:59 GMT")], now).unwrap();
        assert!(far.delay() > Duration::from_secs(8000 * 365 * 86_400));
    }

    #[test]
    fn garbage_is_ignored_and_duplicates_keep_the_longest() {
        for bad in [
            &b"-1"[..],
            b"1.5",
            b"abc",
            b"",
            b"\xff\xfe",
            b"NaN",
            b"+3",
            b"5, 7",
        ] {
            assert_eq!(read(&[("retry-after", bad)], UNIX_EPOCH), None, "{bad:?}");
        }
        let hint = read(
            &[
                ("retry-after", b"3"),
                ("retry-after", b"x"),
                ("retry-after", b"9"),
            ],
            UNIX_EPOCH,
        );
        assert_eq!(hint.unwrap().delay(), Duration::from_secs(9));
    }

    fn hint(millis: u64, source: HintSource) -> Option<RetryHint> {
        Some(RetryHint::new(Duration::from_millis(millis), source))
    }

    #[test]
    fn an_agreeing_millisecond_hint_refines_retry_after() {
        let coarse = hint(1000, HintSource::RetryAfterSeconds);
        let precise = hint(50, HintSource::RetryAfterMs);
        assert_eq!(decide(coarse, [precise]), precise);
        assert_eq!(
            decide(coarse, [hint(1000, HintSource::RetryAfterMs)]),
            hint(1000, HintSource::RetryAfterMs)
        );
        // 0 ms is outside (0 s, 1 s]; 1001 ms is more than Retry-After said.
        assert_eq!(decide(coarse, [hint(0, HintSource::RetryAfterMs)]), coarse);
        assert_eq!(
            decide(coarse, [hint(1001, HintSource::RetryAfterMs)]),
            coarse
        );
        let zero = hint(0, HintSource::RetryAfterSeconds);
        assert_eq!(
            decide(zero, [hint(0, HintSource::XMsRetryAfterMs)]),
            hint(0, HintSource::XMsRetryAfterMs)
        );
    }

    #[test]
    fn the_first_agreeing_hint_wins_and_without_retry_after_the_first_present() {
        let coarse = hint(3000, HintSource::RetryAfterSeconds);
        let hints = [
            None,
            hint(500, HintSource::XMsRetryAfterMs),
            hint(2500, HintSource::ProblemRetryAfterMs),
            hint(2900, HintSource::ProblemRetryAfter),
        ];
        assert_eq!(decide(coarse, hints), hints[2]);
        assert_eq!(decide(None, hints), hints[1]);
        assert_eq!(decide(None, [None, None]), None);
    }

    #[test]
    fn millisecond_headers_read_integers_only() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after-ms", HeaderValue::from_static("50"));
        headers.insert("x-ms-retry-after-ms", HeaderValue::from_static("12.5"));
        let fields = Fields::scan(&headers);
        assert_eq!(
            millisecond_headers(&fields),
            [hint(50, HintSource::RetryAfterMs), None]
        );
    }
}
