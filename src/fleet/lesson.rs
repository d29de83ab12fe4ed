//! [`Lesson`]: what one response teaches the fleet, clamped at the boundary.

use std::time::Duration;

use crate::signal::{QuotaUnit, Signal};

/// Longest pause a lesson carries (a hint beyond it is capped).
const MAX_PAUSE: Duration = Duration::from_secs(3600);
/// Longest window or reset taken from a server (a day).
const MAX_SPAN: Duration = Duration::from_secs(86_400);
/// Largest limit taken from a server.
const MAX_LIMIT: u64 = 1_000_000_000;

/// What a response taught about its scope: a refusal and its pause, and the
/// quota reading (limit, remaining, window, reset, kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Lesson {
    refused: bool,
    pause: Option<Duration>,
    limit: Option<u64>,
    remaining: Option<u64>,
    window: Option<Duration>,
    reset: Option<Duration>,
    kind: Option<QuotaKind>,
}

/// How a quota comes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuotaKind {
    /// Refilled continuously (a token bucket, GCRA, a sliding window):
    /// `reset` is about the time to refill what was spent.
    Continuous,
    /// Restored whole at `reset` (a fixed window).
    Window,
}

impl Lesson {
    /// The lesson of a response: `refused` for a 429/503, `pause` how long
    /// the fleet should hold off after it (its hint, or the local backoff).
    /// A plain 2xx with no quota teaches nothing ([`teaches`](Self::teaches)).
    pub fn from_response(refused: bool, signal: &Signal, pause: Option<Duration>) -> Self {
        let quota = crate::engine::pacing_quota(signal).filter(|q| q.unit() == QuotaUnit::Requests);
        let mut lesson = Lesson {
            refused,
            pause: if refused {
                Some(pause.unwrap_or(Duration::ZERO).min(MAX_PAUSE))
            } else {
                None
            },
            ..Lesson::default()
        };
        if let Some(q) = quota {
            lesson.limit = q.limit().filter(|l| *l > 0).map(|l| l.min(MAX_LIMIT));
            lesson.remaining = q.remaining().map(|r| r.min(MAX_LIMIT));
            lesson.window = q.window().filter(|w| !w.is_zero()).map(|w| w.min(MAX_SPAN));
            lesson.reset = q.reset().map(|r| r.min(MAX_SPAN));
            lesson.kind = kind(lesson.limit, lesson.remaining, lesson.window, lesson.reset);
        }
        lesson
    }

    /// Whether there is anything to share: a refusal or a quota reading.
    pub fn teaches(&self) -> bool {
        self.refused || self.limit.is_some() || self.remaining.is_some()
    }

    /// Whether it carries a quota reading (a limit or a remaining count).
    pub fn reads_quota(&self) -> bool {
        self.limit.is_some() || self.remaining.is_some()
    }

    /// Whether the fleet should hear it at once rather than with this
    /// process's next reservation: a refusal (its pause holds the whole
    /// fleet), an empty quota (the fleet is spending faster than it
    /// thought, or a window closed), or a policy whose interval (with the
    /// store's `margin`) is tighter than the `shared` one this process
    /// last heard of, or none heard yet. Anything else only confirms what
    /// the fleet knows, give or take one send, and may wait.
    pub(crate) fn is_news(&self, shared: Option<Duration>, margin: f64) -> bool {
        if self.refused || self.remaining == Some(0) {
            return true;
        }
        let (Some(limit), Some(window)) = (self.limit, self.window) else {
            return false;
        };
        let Some(shared) = shared else {
            return true;
        };
        // The scripts keep intervals to the microsecond (`%.3f` ms, replies
        // in whole µs): closer than two of them is the same interval.
        let read = window.as_secs_f64() / limit as f64 * (1.0 + margin);
        read > shared.as_secs_f64() + 2e-6
    }

    /// Whether it was a refusal.
    pub fn refused(&self) -> bool {
        self.refused
    }

    /// The kind of quota it suggests, when limit, remaining, window and
    /// reset are all known.
    pub fn kind(&self) -> Option<QuotaKind> {
        self.kind
    }

    /// The lesson's arguments as learn.lua reads them: what it says, the
    /// store's interval `margin`, and its `age` (how long ago the response
    /// came).
    pub(crate) fn push_args(
        &self,
        invocation: &mut redis::ScriptInvocation<'_>,
        margin: f64,
        age: Duration,
    ) {
        let ms = |d: Option<Duration>| {
            d.map_or(-1, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        };
        let n = |v: Option<u64>| v.map_or(-1, |v| i64::try_from(v).unwrap_or(i64::MAX));
        invocation
            .arg(if self.refused { 1 } else { 0 })
            .arg(ms(self.pause))
            .arg(n(self.limit))
            .arg(n(self.remaining))
            .arg(ms(self.window))
            .arg(ms(self.reset))
            .arg(match self.kind {
                Some(QuotaKind::Continuous) => "c",
                Some(QuotaKind::Window) => "w",
                None => "-",
            })
            .arg(margin)
            .arg(ms(Some(age.min(MAX_SPAN))));
    }
}

/// Continuous when `reset` is no longer than refilling what was spent at
/// `limit / window` (plus one second, since most dialects round `reset` up
/// to whole seconds); a window otherwise.
fn kind(
    limit: Option<u64>,
    remaining: Option<u64>,
    window: Option<Duration>,
    reset: Option<Duration>,
) -> Option<QuotaKind> {
    let (limit, remaining, window, reset) = (limit?, remaining?, window?, reset?);
    let spent = limit.saturating_sub(remaining) as f64;
    // A limit of 0 (a server's garbage) would make the fraction NaN:
    // nothing was spent of nothing.
    let fraction = if limit == 0 {
        0.0
    } else {
        spent / limit as f64
    };
    // Saturating: `mul_f64` panics when a huge window rounds past `Duration::MAX`.
    let refill =
        Duration::try_from_secs_f64(window.as_secs_f64() * fraction).unwrap_or(Duration::MAX);
    Some(if reset <= refill.saturating_add(Duration::from_secs(1)) {
        QuotaKind::Continuous
    } else {
        QuotaKind::Window
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signal::parse;
    use http::{HeaderMap, HeaderValue, StatusCode};

    fn signal(pairs: &[(&'static str, &str)]) -> Signal {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        parse(StatusCode::OK, &headers, None)
    }

    #[test]
    fn a_plain_success_teaches_nothing_and_a_refusal_always_pauses() {
        assert!(!Lesson::from_response(false, &Signal::default(), None).teaches());
        let l = Lesson::from_response(true, &Signal::default(), None);
        assert!(l.refused());
        assert_eq!(l.pause, Some(Duration::ZERO));
        let long = Lesson::from_response(true, &Signal::default(), Some(Duration::MAX));
        assert_eq!(long.pause, Some(MAX_PAUSE));
    }

    #[test]
    fn a_bucket_reads_continuous_and_a_long_window_reads_window() {
        let bucket = signal(&[
            ("ratelimit-policy", "\"b\";q=20;w=1"),
            ("ratelimit", "\"b\";r=5;t=1"),
        ]);
        let l = Lesson::from_response(false, &bucket, None);
        assert_eq!((l.limit, l.remaining), (Some(20), Some(5)));
        assert_eq!(l.kind(), Some(QuotaKind::Continuous));
        let window = signal(&[
            ("ratelimit-policy", "\"h\";q=100;w=3600"),
            ("ratelimit", "\"h\";r=90;t=3000"),
        ]);
        let l = Lesson::from_response(false, &window, None);
        assert_eq!(l.kind(), Some(QuotaKind::Window));
    }

    #[test]
    fn a_zero_limit_or_an_absurd_window_does_not_panic() {
        let second = Some(Duration::from_secs(1));
        let kind_of = |limit, window, reset| kind(Some(limit), Some(0), window, reset);
        assert_eq!(kind_of(0, second, second), Some(QuotaKind::Continuous));
        let forever = Some(Duration::MAX);
        assert_eq!(kind_of(10, forever, forever), Some(QuotaKind::Continuous));
        assert_eq!(kind_of(10, second, forever), Some(QuotaKind::Window));
    }
}
