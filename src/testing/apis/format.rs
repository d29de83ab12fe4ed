//! How the APIs write times and waits.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub(crate) use super::super::shape::{ceil_millis, ceil_secs};

/// Seconds with three decimals, rounded up (`0.640`), as Discord writes them.
pub(crate) fn decimal_secs(wait: Duration) -> String {
    let millis = ceil_millis(wait);
    format!("{}.{:03}", millis / 1000, millis % 1000)
}

/// A Go duration as `time.Duration.String()` writes it, to the
/// millisecond, rounded up: `250ms`, `1.5s`, `6m0s`, `1h2m3.25s`.
pub(crate) fn go_duration(wait: Duration) -> String {
    let millis = ceil_millis(wait);
    if millis < 1000 {
        return format!("{millis}ms");
    }
    let (hours, rest) = (millis / 3_600_000, millis % 3_600_000);
    let (minutes, rest) = (rest / 60_000, rest % 60_000);
    let seconds = if rest % 1000 == 0 {
        format!("{}s", rest / 1000)
    } else {
        let fraction = format!("{:03}", rest % 1000);
        format!("{}.{}s", rest / 1000, fraction.trim_end_matches('0'))
    };
    match (hours, minutes) {
        (0, 0) => seconds,
        (0, _) => format!("{minutes}m{seconds}"),
        _ => format!("{hours}h{minutes}m{seconds}"),
    }
}

/// Epoch seconds of `now + wait`, rounded up.
pub(crate) fn epoch_secs(now: SystemTime, wait: Duration) -> u64 {
    ceil_secs(now.duration_since(UNIX_EPOCH).unwrap_or_default() + wait)
}

/// `now + wait` in RFC 3339, UTC, to the second rounded up.
pub(crate) fn rfc3339(now: SystemTime, wait: Duration) -> String {
    let at = UNIX_EPOCH + Duration::from_secs(epoch_secs(now, wait));
    humantime::format_rfc3339_seconds(at).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_as_go_writes_them() {
        let ms = Duration::from_millis;
        assert_eq!(go_duration(ms(250)), "250ms");
        assert_eq!(go_duration(ms(1500)), "1.5s");
        assert_eq!(go_duration(ms(360_000)), "6m0s");
        assert_eq!(go_duration(ms(90_500)), "1m30.5s");
        assert_eq!(go_duration(ms(3_723_250)), "1h2m3.25s");
        assert_eq!(go_duration(Duration::from_micros(1)), "1ms");
        assert_eq!(decimal_secs(ms(640)), "0.640");
        let now = UNIX_EPOCH + Duration::from_secs(1_755_780_000);
        assert_eq!(rfc3339(now, ms(59_001)), "2025-08-21T12:41:00Z");
    }
}
