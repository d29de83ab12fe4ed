//! The limiter grid's cells: every kind of limiter × header style ×
//! concurrency, each one's floor and its targets (issue 10's "Must show").
//!
//! **The floor** is the earliest a perfect client (zero round trips, every
//! unit spent the instant it exists) can have its `N`th success, measured
//! from its first request, for a quota of `L` per window `W` (`N` = 100,
//! `L` = 20, `W` = 1 s here):
//! - token bucket (burst `B` = `L`, refilled at `L / W`): `(N − B) · W / L`
//!   = 4.0 s;
//! - sliding log, and a fixed window opened by the first request: the `N`th
//!   unit is the first of window `⌈N / L⌉`, `(⌈N / L⌉ − 1) · W` = 4.0 s;
//! - a fixed window aligned to the clock: the first window ends `W − φ`
//!   after the first request (`φ`: how far into its window the first request
//!   fell, read from the wall clock when the server saw it), then
//!   `⌈N / L⌉ − 2` more whole windows: between 3.0 and 4.0 s;
//! - the sliding window counter (windows aligned to the clock, the previous
//!   one weighted by how much of it still overlaps): computed by admitting
//!   each request the millisecond the counter's rule first would
//!   (`sliding_window_floor`), as `demo-server compare` computes it: `L` in
//!   the first window, then `L − 1` per window (a full window lets the next
//!   admit one less), so the first window's end `W − φ`, 4 windows of 19 and
//!   the 5th's first 4 units (the last 158 ms in): `W − φ` + 4.16 s, between
//!   4.16 and 5.16 s.

use std::num::NonZeroU32;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::ValueEnum;

use crate::{BARE_MAX_SENT, SUCCESSES};

/// Units per window (the bucket's capacity and refill per window), as in
/// the seed experiment and `demo-server compare` (20 per second).
pub(crate) const LIMIT: u32 = 20;
/// The window (the time an empty bucket takes to refill).
pub(crate) const WINDOW: Duration = Duration::from_secs(1);
/// Elapsed may be at most this multiple of the "Retry-After seconds"
/// reference's in the same cell (issue 10).
pub(crate) const REFERENCE_FACTOR: f64 = 1.05;
/// Where the headers locate the boundary, elapsed may be at most this
/// multiple of the floor (issue 10).
pub(crate) const FLOOR_FACTOR: f64 = 1.10;

/// A kind of limiter, as deployed APIs run them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Limiter {
    /// Token bucket: bursts of `LIMIT`, refilled continuously.
    TokenBucket,
    /// Fixed window opened by the client's first request (API gateways,
    /// middleware limiters).
    WindowFromFirst,
    /// Fixed window aligned to the wall clock's whole seconds.
    WindowClock,
    /// Sliding log: at most `LIMIT` admissions in any window.
    SlidingLog,
    /// Sliding window counter: windows aligned to the wall clock's whole
    /// seconds, the previous one's count weighted by its overlap (the demo
    /// server's `sliding_window.lua`; Cloudflare, nginx-style limiters).
    SlidingWindow,
}

impl Limiter {
    pub(crate) const ALL: [Limiter; 5] = [
        Limiter::TokenBucket,
        Limiter::WindowFromFirst,
        Limiter::WindowClock,
        Limiter::SlidingLog,
        Limiter::SlidingWindow,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Limiter::TokenBucket => "token bucket",
            Limiter::WindowFromFirst => "window from 1st req",
            Limiter::WindowClock => "window on the clock",
            Limiter::SlidingLog => "sliding log",
            Limiter::SlidingWindow => "sliding window counter",
        }
    }

    /// Whether its windows are aligned to the wall clock, so its floor (and
    /// what a whole-second delta reset says of the boundary) depends on the
    /// phase of the first request.
    pub(crate) fn aligned_to_clock(self) -> bool {
        matches!(self, Limiter::WindowClock | Limiter::SlidingWindow)
    }

    /// The floor for a run whose first request reached the server at
    /// wall-clock `first` (module docs).
    pub(crate) fn floor(self, first: SystemTime) -> Duration {
        let windows = SUCCESSES.div_ceil(u64::from(LIMIT));
        let window = u32::try_from(windows).unwrap_or(u32::MAX);
        match self {
            Limiter::TokenBucket => {
                let units =
                    u32::try_from(SUCCESSES.saturating_sub(u64::from(LIMIT))).unwrap_or(u32::MAX);
                WINDOW * units / LIMIT
            }
            Limiter::WindowFromFirst | Limiter::SlidingLog => WINDOW * window.saturating_sub(1),
            Limiter::WindowClock if windows < 2 => Duration::ZERO,
            Limiter::WindowClock => {
                let to_boundary = WINDOW - phase(first);
                to_boundary + WINDOW * window.saturating_sub(2)
            }
            Limiter::SlidingWindow => sliding_window_floor(first),
        }
    }
}

/// The sliding window counter's floor: a client sending the instant the
/// counter admits, millisecond by millisecond from `first`, by the demo
/// server's rule (`demo-server/src/algorithms/sliding_window.lua`, which the
/// `SlidingWindowCounter` responder follows): windows aligned to the clock,
/// admitted while `previous · overlap + current + 1 ≤ L`. The same walk as
/// `demo-server compare`'s `sliding_window_floor_ms`, in exact integers.
/// After the first window's burst every window admits `L − 1` (its last
/// unit is due at the very boundary), so the `N`th success comes about
/// 160 ms into window `⌈N / L⌉` after the first request's.
fn sliding_window_floor(first: SystemTime) -> Duration {
    let window_ms = u64::try_from(WINDOW.as_millis()).unwrap_or(u64::MAX);
    let since_epoch = first.duration_since(UNIX_EPOCH).unwrap_or_default();
    let first_ms = u64::try_from(since_epoch.as_millis()).unwrap_or(0);
    let limit = u64::from(LIMIT);
    let (mut previous, mut current, mut index) = (0, 0, first_ms / window_ms);
    let mut admitted = 0;
    // Twice the windows the limit alone would need: ample, as every
    // window admits at least `L − 1`.
    let end = first_ms + 2 * SUCCESSES.div_ceil(limit) * window_ms;
    for now in first_ms..end {
        let window = now / window_ms;
        if window != index {
            previous = if window == index + 1 { current } else { 0 };
            current = 0;
            index = window;
        }
        // The previous window's overlap is `left / window_ms`.
        let left = window_ms - now % window_ms;
        while previous * left + (current + 1) * window_ms <= limit * window_ms {
            current += 1;
            admitted += 1;
            if admitted == SUCCESSES {
                return Duration::from_millis(now - first_ms);
            }
        }
    }
    Duration::from_millis(end - first_ms)
}

/// How far into its clock-aligned window `wall` is.
pub(crate) fn phase(wall: SystemTime) -> Duration {
    let since_epoch = wall.duration_since(UNIX_EPOCH).unwrap_or_default();
    let into = since_epoch.as_nanos() % WINDOW.as_nanos();
    Duration::from_nanos(u64::try_from(into).unwrap_or(0))
}

/// How the server's responses describe the quota and the wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum HeaderStyle {
    /// Draft-11 `RateLimit` + `RateLimit-Policy` lists; `Retry-After`
    /// seconds on 429.
    Ietf,
    /// Drafts -00…-04 `RateLimit-Limit/Remaining/Reset` (no policy);
    /// `Retry-After` seconds on 429.
    IetfLegacy,
    /// GitHub's `X-RateLimit-*` (reset as epoch seconds, whole-second
    /// `Date`); `Retry-After` seconds on 429.
    XRatelimit,
    /// No quota fields: a 429 says `Retry-After` in whole seconds only.
    RetryAfter,
    /// A bare 429: no hint at all.
    Bare,
}

impl HeaderStyle {
    pub(crate) const ALL: [HeaderStyle; 5] = [
        HeaderStyle::Ietf,
        HeaderStyle::IetfLegacy,
        HeaderStyle::XRatelimit,
        HeaderStyle::RetryAfter,
        HeaderStyle::Bare,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            HeaderStyle::Ietf => "ietf",
            HeaderStyle::IetfLegacy => "ietf-legacy",
            HeaderStyle::XRatelimit => "x-ratelimit",
            HeaderStyle::RetryAfter => "retry-after",
            HeaderStyle::Bare => "bare",
        }
    }

    /// Whether every response describes the quota.
    pub(crate) fn has_quota(self) -> bool {
        !matches!(self, HeaderStyle::RetryAfter | HeaderStyle::Bare)
    }
}

/// One limiter, header style and concurrency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cell {
    pub(crate) limiter: Limiter,
    pub(crate) style: HeaderStyle,
    pub(crate) concurrency: u64,
}

impl Cell {
    /// Most requests the polite client may send (issue 10's "Must show"):
    /// with quota fields 101 at concurrency 1 and `100 + C` above; with
    /// hints only `100 + C`; bare 105 at 1 and 108 at 4.
    pub(crate) fn max_sent(&self) -> u64 {
        let c = self.concurrency;
        match self.style {
            HeaderStyle::Bare => BARE_MAX_SENT
                .iter()
                .find(|(most_c, _)| *most_c >= c)
                .map_or(SUCCESSES + c * 2, |(_, most)| *most),
            _ => SUCCESSES + c,
        }
    }

    /// Whether the headers locate the window's boundary (or the bucket's
    /// refill) well enough to hold the client to the floor: quota fields,
    /// except on clock-aligned windows (the fixed window's, the sliding
    /// window counter's) whose whole-second delta reset (`t=1` at every
    /// instant of a 1 s window, the counter's `t=2`) says nothing of their
    /// phase. The same rule as `demo-server compare`'s.
    pub(crate) fn locates_boundary(&self) -> bool {
        self.style.has_quota()
            && !(self.limiter.aligned_to_clock()
                && matches!(self.style, HeaderStyle::Ietf | HeaderStyle::IetfLegacy))
    }
}

/// What one client did in one cell.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run {
    /// Requests the server received.
    pub(crate) sent: u64,
    /// Requests the server rejected.
    pub(crate) throttled: u64,
    /// Successes the client counted.
    pub(crate) ok: u64,
    pub(crate) elapsed: Duration,
    pub(crate) floor: Duration,
}

/// The polite client's verdict against the reference in the same cell:
/// empty when every target is met, the misses otherwise.
pub(crate) fn misses(cell: &Cell, polite: &Run, reference: &Run) -> Vec<String> {
    let mut misses = Vec::new();
    if polite.ok < SUCCESSES {
        misses.push(format!("only {} ok", polite.ok));
    }
    let most = cell.max_sent();
    if polite.sent > most {
        misses.push(format!("sent {} > {most}", polite.sent));
    }
    let (elapsed, bound) = (
        polite.elapsed.as_secs_f64(),
        reference.elapsed.as_secs_f64() * REFERENCE_FACTOR,
    );
    if elapsed > bound {
        misses.push(format!("{elapsed:.2} s > {REFERENCE_FACTOR}× ref"));
    }
    if cell.locates_boundary() && elapsed > polite.floor.as_secs_f64() * FLOOR_FACTOR {
        misses.push(format!("{elapsed:.2} s > {FLOOR_FACTOR}× floor"));
    }
    misses
}

/// `LIMIT` as the responders take it.
pub(crate) fn limit() -> NonZeroU32 {
    NonZeroU32::new(LIMIT).expect("LIMIT is not zero")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_ms(ms: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(ms)
    }

    #[test]
    fn floors() {
        let first = at_ms(1_798_761_599_456);
        assert_eq!(Limiter::TokenBucket.floor(first), Duration::from_secs(4));
        assert_eq!(
            Limiter::WindowFromFirst.floor(first),
            Duration::from_secs(4)
        );
        assert_eq!(Limiter::SlidingLog.floor(first), Duration::from_secs(4));
        // 544 ms to the clock's next second, then 3 whole windows.
        assert_eq!(
            Limiter::WindowClock.floor(first),
            Duration::from_millis(3544)
        );
        // A first request on the boundary gets the whole first window.
        assert_eq!(
            Limiter::WindowClock.floor(at_ms(1_798_761_599_000)),
            Duration::from_secs(4)
        );
    }

    #[test]
    fn sliding_window_counter_floors() {
        // `demo-server compare`'s figures: 544 ms to the boundary, then 4
        // windows of 19 and 4 of the 5th (at 0, 53, 106 and 158 ms, as the
        // previous window held 19).
        let counter = Limiter::SlidingWindow;
        assert_eq!(counter.floor(at_ms(123_456)), Duration::from_millis(4702));
        assert_eq!(counter.floor(at_ms(999)), Duration::from_millis(4159));
        // Only the phase counts: the same 544 ms to the boundary.
        assert_eq!(
            counter.floor(at_ms(1_798_761_599_456)),
            Duration::from_millis(4702)
        );
        // On the boundary: 20 at once, 19 in each of the next 4 windows
        // (96 in all), then 4 more, the last 158 ms into the 6th.
        assert_eq!(counter.floor(at_ms(5_000)), Duration::from_millis(5158));
    }

    fn cell(limiter: Limiter, style: HeaderStyle, concurrency: u64) -> Cell {
        Cell {
            limiter,
            style,
            concurrency,
        }
    }

    #[test]
    fn targets_per_style() {
        let w = Limiter::WindowFromFirst;
        assert_eq!(cell(w, HeaderStyle::Ietf, 1).max_sent(), 101);
        assert_eq!(cell(w, HeaderStyle::XRatelimit, 4).max_sent(), 104);
        assert_eq!(cell(w, HeaderStyle::RetryAfter, 1).max_sent(), 101);
        assert_eq!(cell(w, HeaderStyle::RetryAfter, 4).max_sent(), 104);
        assert_eq!(cell(w, HeaderStyle::Bare, 1).max_sent(), 105);
        assert_eq!(cell(w, HeaderStyle::Bare, 4).max_sent(), 108);
        assert!(cell(w, HeaderStyle::IetfLegacy, 1).locates_boundary());
        assert!(!cell(w, HeaderStyle::RetryAfter, 1).locates_boundary());
        let clock = Limiter::WindowClock;
        assert!(!cell(clock, HeaderStyle::Ietf, 1).locates_boundary());
        assert!(cell(clock, HeaderStyle::XRatelimit, 1).locates_boundary());
        let counter = Limiter::SlidingWindow;
        assert!(!cell(counter, HeaderStyle::IetfLegacy, 4).locates_boundary());
        assert!(cell(counter, HeaderStyle::XRatelimit, 1).locates_boundary());
        assert!(!cell(counter, HeaderStyle::Bare, 1).locates_boundary());
    }

    #[test]
    fn verdicts() {
        let run = |sent, secs: f64| Run {
            sent,
            throttled: sent - 100,
            ok: 100,
            elapsed: Duration::from_secs_f64(secs),
            floor: Duration::from_secs(4),
        };
        let ietf = cell(Limiter::SlidingLog, HeaderStyle::Ietf, 1);
        let reference = run(104, 4.4);
        assert!(misses(&ietf, &run(101, 4.3), &reference).is_empty());
        assert_eq!(misses(&ietf, &run(102, 4.3), &reference).len(), 1);
        // Faster than the reference, but more than 10 % over the floor.
        assert_eq!(misses(&ietf, &run(100, 4.45), &run(104, 6.0)).len(), 1);
        // Slower than 1.05× the reference.
        let hints = cell(Limiter::SlidingLog, HeaderStyle::RetryAfter, 1);
        assert_eq!(misses(&hints, &run(101, 4.7), &reference).len(), 1);
        assert!(misses(&hints, &run(101, 4.6), &reference).is_empty());
    }
}
