//! HTTP-dates in the two obsolete forms RFC 9110 §5.6.7 still requires
//! recipients to accept (`httpdate` only writes the preferred IMF-fixdate).

use std::time::SystemTime;

/// The three HTTP-date forms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DateForm {
    /// `Sun, 06 Nov 1994 08:49:37 GMT`
    ImfFixdate,
    /// `Sunday, 06-Nov-94 08:49:37 GMT`
    Rfc850,
    /// `Sun Nov  6 08:49:37 1994`
    Asctime,
}

/// `at` (whole seconds) in the given form.
pub(crate) fn format(at: SystemTime, form: DateForm) -> String {
    let fixdate = httpdate::fmt_http_date(at);
    // "Sun, 06 Nov 1994 08:49:37 GMT": fixed-width fields.
    let (weekday, day, month, year, time) = (
        &fixdate[0..3],
        &fixdate[5..7],
        &fixdate[8..11],
        &fixdate[12..16],
        &fixdate[17..25],
    );
    match form {
        DateForm::ImfFixdate => fixdate.clone(),
        DateForm::Rfc850 => {
            let full_day = match weekday {
                "Mon" => "Monday",
                "Tue" => "Tuesday",
                "Wed" => "Wednesday",
                "Thu" => "Thursday",
                "Fri" => "Friday",
                "Sat" => "Saturday",
                _ => "Sunday",
            };
            format!("{full_day}, {day}-{month}-{} {time} GMT", &year[2..])
        }
        DateForm::Asctime => {
            let day = day.trim_start_matches('0');
            format!("{weekday} {month} {day:>2} {time} {year}")
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    #[test]
    fn rfc_9110_example_in_every_form() {
        let at = UNIX_EPOCH + Duration::from_secs(784_111_777);
        assert_eq!(
            format(at, DateForm::ImfFixdate),
            "Sun, 06 Nov 1994 08:49:37 GMT"
        );
        assert_eq!(
            format(at, DateForm::Rfc850),
            "Sunday, 06-Nov-94 08:49:37 GMT"
        );
        assert_eq!(format(at, DateForm::Asctime), "Sun Nov  6 08:49:37 1994");
    }

    #[test]
    fn two_digit_days_and_every_form_parses_back() {
        let at = UNIX_EPOCH + Duration::from_secs(1_798_761_600);
        for form in [DateForm::ImfFixdate, DateForm::Rfc850, DateForm::Asctime] {
            let text = format(at, form);
            assert_eq!(httpdate::parse_http_date(&text).ok(), Some(at), "{text}");
        }
    }
}
