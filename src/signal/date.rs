//! HTTP-date parsing: `httpdate` for all three RFC 9110 forms, with a fast
//! path for the preferred IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
//!
//! `httpdate` validates a date by formatting it back, which made two dates
//! (a `Retry-After` and the `Date` it is measured against) cost about as much
//! as every other dialect together. The fast path reads the fixed layout
//! directly, checks the calendar (day of month, weekday) itself, and hands
//! anything it does not fully accept to `httpdate`, so both always agree
//! (a property test checks it).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Parses an HTTP-date in any RFC 9110 form.
pub(crate) fn parse_http_date(text: &str) -> Option<SystemTime> {
    imf_fixdate(text.as_bytes()).or_else(|| httpdate::parse_http_date(text).ok())
}

const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// Weekday names from Monday.
const WEEKDAYS: [&[u8; 3]; 7] = [b"Mon", b"Tue", b"Wed", b"Thu", b"Fri", b"Sat", b"Sun"];

fn digits(bytes: &[u8]) -> Option<u64> {
    bytes.iter().try_fold(0u64, |value, &byte| {
        byte.is_ascii_digit()
            .then(|| value * 10 + u64::from(byte - b'0'))
    })
}

fn is_leap(year: u64) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar, for
/// years 1970 ..= 9999 (H. Hinnant's `days_from_civil`).
fn days_since_epoch(year: u64, month: u64, day: u64) -> u64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year / 400;
    let year_of_era = year - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// `Sun, 06 Nov 1994 08:49:37 GMT`, exactly; `None` for anything else.
fn imf_fixdate(s: &[u8]) -> Option<SystemTime> {
    if s.len() != 29
        || &s[3..5] != b", "
        || s[7] != b' '
        || s[11] != b' '
        || s[16] != b' '
        || s[19] != b':'
        || s[22] != b':'
        || &s[25..] != b" GMT"
    {
        return None;
    }
    let day = digits(&s[5..7])?;
    let month = MONTHS.iter().position(|name| &s[8..11] == *name)? as u64 + 1;
    let year = digits(&s[12..16])?;
    let (hour, minute, second) = (
        digits(&s[17..19])?,
        digits(&s[20..22])?,
        digits(&s[23..25])?,
    );
    let month_days = match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if year < 1970 || day == 0 || day > month_days || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let days = days_since_epoch(year, month, day);
    // 1970-01-01 was a Thursday.
    if &s[..3] != WEEKDAYS[((days + 3) % 7) as usize] {
        return None;
    }
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second;
    UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn reads_all_three_forms() {
        let expected = UNIX_EPOCH + Duration::from_secs(784_111_777);
        for form in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ] {
            assert_eq!(parse_http_date(form), Some(expected), "{form}");
        }
        let last = parse_http_date("Fri, 31 Dec 9999 23:59:59 GMT").unwrap();
        assert_eq!(last, UNIX_EPOCH + Duration::from_secs(253_402_300_799));
    }

    #[test]
    fn rejects_impossible_dates() {
        for bad in [
            "Mon, 06 Nov 1994 08:49:37 GMT",
            "Sun, 31 Nov 1994 08:49:37 GMT",
            "Thu, 29 Feb 1900 00:00:00 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:60:00 GMT",
            "Sun, 06 Nov 1994 08:49:60 GMT",
            "Wed, 31 Dec 1969 23:59:59 GMT",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 6 Nov 1994 08:49:37 GMT",
        ] {
            assert_eq!(parse_http_date(bad), None, "{bad}");
        }
        assert!(imf_fixdate(b"Tue, 29 Feb 2000 00:00:00 GMT").is_some());
    }

    proptest! {
        #[test]
        fn the_fast_path_agrees_with_httpdate_on_every_date(secs in 0u64..253_402_300_800) {
            let time = UNIX_EPOCH + Duration::from_secs(secs);
            let text = httpdate::fmt_http_date(time);
            prop_assert_eq!(imf_fixdate(text.as_bytes()), Some(time));
        }

        #[test]
        fn the_fast_path_never_accepts_what_httpdate_rejects(
            text in "(Mon|Tue|Wed|Thu|Fri|Sat|Sun|Xyz), [0-3][0-9] (Jan|Feb|Mar|Apr|Jun|Nov|Dec|Foo) (19[6-9][0-9]|2[0-9]{3}|9999) [0-2][0-9]:[0-6][0-9]:[0-6][0-9] GMT",
        ) {
            let fast = imf_fixdate(text.as_bytes());
            if fast.is_some() {
                prop_assert_eq!(fast, httpdate::parse_http_date(&text).ok());
            }
            prop_assert_eq!(parse_http_date(&text), httpdate::parse_http_date(&text).ok());
        }
    }
}
