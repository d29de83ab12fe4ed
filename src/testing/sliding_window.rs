//! A mock server limited by a sliding window counter.

use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use wiremock::{Request, Respond, ResponseTemplate};

use super::builder::{dialect_methods, shape_methods, window_constructors};
use super::counters::Counters;
use super::shape::{QuotaState, Shape, Verdict};

/// The shortest wait a refusal announces: the demo server's script counts
/// whole milliseconds and never says 0 (`math.max(1, retry)`).
const MIN_RETRY: Duration = Duration::from_millis(1);

/// A [`Respond`] implementation that counts admissions per fixed window and
/// admits a request while the previous window's count, weighted by how much
/// of it a sliding window ending now still covers, plus the current
/// window's count leaves room for it; it rejects the rest (429 by default).
///
/// This is the limiter of the demo server's
/// `demo-server/src/algorithms/sliding_window.lua`, rule for rule. Windows
/// are aligned to the wall clock's epoch (a window of 1 s starts at every
/// whole second, as with [`FixedWindow::aligned_to_clock`]). At `f` into a
/// window the estimate is `previous · (1 − f / window) + current`, and a
/// request is admitted when `estimate + 1 ≤ limit`. So the boundary never
/// lets two windows' worth through (unlike a [`FixedWindow`]), and after a
/// full window the next one admits `limit − 1`: its last unit comes back at
/// the very end. The wall clock is read once, when the responder is built,
/// then advanced on the monotonic clock ([`Instant`]). Every clone shares
/// the same counts and counters: clone it *after* configuring, mount one
/// clone and keep the other to read [`received`](Self::received),
/// [`admitted`](Self::admitted) and [`rejected`](Self::rejected).
///
/// The quota the headers describe: limit, remaining = `⌊limit − estimate⌋`,
/// reset = until the quota is whole again (the end of the next window while
/// the current one holds admissions, else the end of this one), policy
/// window = the window. A rejection's wait (its `Retry-After`) is the first
/// instant a retry is admitted, and at least 1 ms, as in the script.
///
/// [`FixedWindow`]: super::FixedWindow
/// [`FixedWindow::aligned_to_clock`]: super::FixedWindow::aligned_to_clock
///
/// ```
/// use std::num::NonZeroU32;
/// use courteous::testing::{Dialect, RetryAfterStyle, SlidingWindowCounter};
/// use wiremock::{Mock, MockServer, matchers::any};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = MockServer::start().await;
/// // 3 requests per minute, the previous minute weighted by its overlap.
/// let counter = SlidingWindowCounter::per_minute(NonZeroU32::new(3).unwrap())
///     .dialect(Dialect::IetfList)
///     .retry_after(RetryAfterStyle::Seconds);
/// Mock::given(any()).respond_with(counter.clone()).mount(&server).await;
///
/// let client = reqwest::Client::new();
/// let mut statuses = Vec::new();
/// for _ in 0..4 {
///     statuses.push(client.get(server.uri()).send().await.unwrap().status().as_u16());
/// }
/// // Even across a minute's boundary: the 3 just admitted still weigh ~3.
/// assert_eq!(statuses, [200, 200, 200, 429]);
/// assert_eq!((counter.admitted(), counter.rejected()), (3, 1));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct SlidingWindowCounter {
    limit: NonZeroU32,
    window: Duration,
    shape: Shape,
    counters: Counters,
    clock: EpochClock,
    state: Arc<Mutex<State>>,
}

/// Time since the Unix epoch, read from the wall clock once and advanced on
/// the monotonic clock, so a wall-clock step cannot move a window back.
#[derive(Debug, Clone, Copy)]
struct EpochClock {
    read_at: Instant,
    since_epoch: Duration,
}

impl EpochClock {
    fn start() -> Self {
        Self {
            read_at: Instant::now(),
            since_epoch: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default(),
        }
    }

    fn since_epoch(&self, now: Instant) -> Duration {
        self.since_epoch + now.saturating_duration_since(self.read_at)
    }
}

#[derive(Debug, Default)]
struct State {
    counts: Option<Counts>,
    /// The latest instant decided, so requests decided out of order never
    /// take the counts back a window.
    latest: Duration,
}

/// The script's stored state: the window's number since the epoch, and the
/// admissions in it and in the one before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Counts {
    index: u128,
    current: u32,
    previous: u32,
}

/// What the counter decided for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Decision {
    /// `None` when admitted; the wait until a retry is admitted otherwise.
    retry: Option<Duration>,
    remaining: u32,
    /// Until the quota is whole again.
    reset: Duration,
}

/// The script's rule for a request at `now` (time since the epoch), in
/// exact integer nanoseconds where the script uses floats on milliseconds:
/// roll the windows, admit iff `previous · (1 − into / window) + current + 1
/// ≤ limit`, and say when a refused request would be admitted.
fn take(state: Option<Counts>, limit: u32, window: Duration, now: Duration) -> (Counts, Decision) {
    let window_ns = window.as_nanos().max(1);
    let index = now.as_nanos() / window_ns;
    let (mut current, previous) = match state {
        Some(c) if c.index == index => (c.current, c.previous),
        Some(c) if c.index + 1 == index => (0, c.current),
        _ => (0, 0),
    };
    let into_ns = now.as_nanos() % window_ns;
    // The previous window's weight is `left_ns / window_ns`.
    let left_ns = window_ns - into_ns;
    let (limit_n, previous_n) = (u128::from(limit), u128::from(previous));
    // `estimate + 1 ≤ limit`, times `window_ns`.
    let room_ns = u128::from(limit.saturating_sub(current)) * window_ns;
    let admitted = previous_n * left_ns + window_ns <= room_ns;
    if admitted {
        current += 1;
    }
    let retry = (!admitted).then(|| {
        let current_n = u128::from(current);
        let wait_ns = if current < limit {
            // In this window, once `previous · weight ≤ limit − current − 1`.
            // (Refused here, so `previous > limit − current − 1 ≥ 0`.)
            let free_from = (previous_n + current_n + 1).saturating_sub(limit_n) * window_ns;
            free_from
                .div_ceil(previous_n.max(1))
                .saturating_sub(into_ns)
        } else {
            // In the next one, where `current` weighs as `previous` did:
            // once `current · weight ≤ limit − 1`.
            let free_from = (current_n + 1).saturating_sub(limit_n) * window_ns;
            left_ns + free_from.div_ceil(current_n.max(1))
        };
        nanos(wait_ns).max(MIN_RETRY)
    });
    // ⌊limit − estimate⌋ = limit − current − ⌈previous · weight⌉.
    let weighed = (previous_n * left_ns).div_ceil(window_ns);
    let remaining = u128::from(limit.saturating_sub(current)).saturating_sub(weighed);
    let reset = if current > 0 {
        left_ns + window_ns
    } else if previous > 0 {
        left_ns
    } else {
        0
    };
    let counts = Counts {
        index,
        current,
        previous,
    };
    let decision = Decision {
        retry,
        remaining: u32::try_from(remaining).unwrap_or(0),
        reset: nanos(reset),
    };
    (counts, decision)
}

fn nanos(ns: u128) -> Duration {
    let secs = u64::try_from(ns / 1_000_000_000).unwrap_or(u64::MAX);
    // The remainder is below 10⁹, so it fits.
    let subsec = u32::try_from(ns % 1_000_000_000).unwrap_or(0);
    Duration::new(secs, subsec)
}

impl SlidingWindowCounter {
    fn build(limit: NonZeroU32, window: Duration) -> Self {
        Self {
            limit,
            window,
            shape: Shape::default(),
            counters: Counters::default(),
            clock: EpochClock::start(),
            state: Arc::default(),
        }
    }

    /// The verdict for a request at `now`, the time since the Unix epoch.
    fn decide(&self, now: Duration) -> Verdict {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let now = now.max(state.latest);
        state.latest = now;
        let (counts, decision) = take(state.counts, self.limit.get(), self.window, now);
        state.counts = Some(counts);
        drop(state);
        self.counters.record(decision.retry.is_none());
        Verdict {
            rejected_for: decision.retry,
            quota: Some(QuotaState {
                limit: self.limit.get(),
                remaining: decision.remaining,
                reset: decision.reset,
                window: self.window,
            }),
        }
    }
}

shape_methods!(SlidingWindowCounter);
dialect_methods!(SlidingWindowCounter);
window_constructors!(SlidingWindowCounter, "per");

impl Respond for SlidingWindowCounter {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let now = self.clock.since_epoch(Instant::now());
        // The same instant stamps `Date` and epoch resets.
        self.shape.render_at(&self.decide(now), UNIX_EPOCH + now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// `take` with a limit per second at `at` ms since the epoch.
    fn take_at(state: Option<Counts>, limit: u32, at: u64) -> (Option<Counts>, Decision) {
        let (counts, decision) = take(state, limit, SECOND, ms(at));
        (Some(counts), decision)
    }

    /// `n` requests at `at` ms, all admitted.
    fn fill(mut state: Option<Counts>, limit: u32, at: u64, n: u32) -> Option<Counts> {
        for _ in 0..n {
            let (next, decision) = take_at(state, limit, at);
            assert_eq!(decision.retry, None, "admitted at {at} ms");
            state = next;
        }
        state
    }

    #[test]
    fn admits_the_limit_then_refuses_at_the_next_windows_start() {
        let mut state = None;
        for (at, remaining) in [(100, 2), (200, 1), (300, 0)] {
            let (next, decision) = take_at(state, 3, at);
            assert_eq!(decision.retry, None, "{at} ms");
            assert_eq!(decision.remaining, remaining);
            // The window's admissions weigh until the end of the next one.
            assert_eq!(decision.reset, ms(2000 - at));
            state = next;
        }
        // Full: the next window's 1st unit is due a third into it, when
        // 3 · (1 − f) + 1 ≤ 3: 600 ms + ⌈333.3⌉ ms.
        let (_, refused) = take_at(state, 3, 400);
        assert_eq!(
            refused.retry,
            Some(ms(600) + Duration::from_nanos(333_333_334))
        );
        assert_eq!((refused.remaining, refused.reset), (0, ms(1600)));
        // At the next window's start the previous one weighs all 3.
        let (state, refused) = take_at(state, 3, 1000);
        assert_eq!(refused.retry, Some(Duration::from_nanos(333_333_334)));
        // Nothing admitted in this window yet: whole again at its end.
        assert_eq!((refused.remaining, refused.reset), (0, SECOND));
        let early = take(
            state,
            3,
            SECOND,
            ms(1000) + Duration::from_nanos(333_333_333),
        );
        assert!(early.1.retry.is_some(), "1 ns early");
        let due = take(
            state,
            3,
            SECOND,
            ms(1000) + Duration::from_nanos(333_333_334),
        );
        assert_eq!(due.1.retry, None);
    }

    #[test]
    fn a_full_window_lets_the_next_admit_one_less() {
        let state = fill(None, 20, 0, 20);
        // Probe every millisecond of the next window: its k-th unit comes
        // back at k / 20 of it, the 20th only at its very end.
        let mut state = state;
        let mut admitted_at = Vec::new();
        for at in 1000..2000 {
            let (next, decision) = take_at(state, 20, at);
            if decision.retry.is_none() {
                admitted_at.push(at);
            }
            state = next;
        }
        let expected: Vec<u64> = (1..20).map(|k| 1000 + k * 50).collect();
        assert_eq!(admitted_at, expected);
        // The window after that: the previous one held 19, so the 2nd unit
        // waits until 19 · (1 − f) ≤ 18, f = 1/19: ⌈52.6⌉ ms in.
        let (state, first) = take_at(state, 20, 2000);
        assert_eq!(first.retry, None);
        let (_, second) = take_at(state, 20, 2000);
        assert_eq!(second.retry, Some(Duration::from_nanos(52_631_579)));
    }

    #[test]
    fn the_previous_window_weighs_by_its_overlap() {
        // The demo server's test (algorithms/sliding_window.rs).
        let state = fill(None, 10, 900, 10);
        // 100 ms into the next window 10 · 0.9 = 9 still count: 1 more fits.
        let (state, admitted) = take_at(state, 10, 1100);
        assert_eq!((admitted.retry, admitted.remaining), (None, 0));
        let (_, refused) = take_at(state, 10, 1100);
        // Retry when 10 · (1 − f) + 1 + 1 ≤ 10, f = 0.2: 100 ms more.
        assert_eq!(refused.retry, Some(ms(100)));
        // This window's admission weighs until the end of the next.
        assert_eq!((refused.remaining, refused.reset), (0, ms(1900)));
    }

    #[test]
    fn a_refusal_in_a_full_window_waits_into_the_next() {
        // The demo server's second test: 2 at 0 ms, then the 3rd waits for
        // the next window's f = 0.5, when 2 · (1 − f) + 1 ≤ 2.
        let state = fill(None, 2, 0, 2);
        let (_, refused) = take_at(state, 2, 0);
        assert_eq!(refused.retry, Some(ms(1500)));
        assert_eq!((refused.remaining, refused.reset), (0, ms(2000)));
    }

    #[test]
    fn a_retry_at_the_hinted_instant_is_admitted_not_a_nanosecond_before() {
        for limit in 1..=4 {
            // A client sending every 7 ms across three windows.
            let mut state = None;
            for at in (0..3000).step_by(7) {
                let (next, decision) = take_at(state, limit, at);
                if let Some(wait) = decision.retry {
                    let due = take(next, limit, SECOND, ms(at) + wait).1;
                    assert_eq!(due.retry, None, "limit {limit}, {at} ms + {wait:?}");
                    let early = ms(at) + wait - Duration::from_nanos(1);
                    if wait > MIN_RETRY {
                        let refused = take(next, limit, SECOND, early).1;
                        assert!(refused.retry.is_some(), "limit {limit}, {at} ms");
                    }
                }
                state = next;
            }
        }
    }

    #[test]
    fn a_window_two_back_is_forgotten() {
        let state = fill(None, 2, 500, 2);
        // A whole window passed with nothing admitted: both counts drop.
        let (counts, decision) = take_at(state, 2, 2100);
        assert_eq!(decision.retry, None);
        assert_eq!((decision.remaining, decision.reset), (1, ms(1900)));
        assert_eq!(counts.map(|c| (c.current, c.previous)), Some((1, 0)));
    }

    #[test]
    fn the_responder_never_goes_back_in_time() {
        let counter = SlidingWindowCounter::per_second(NonZeroU32::new(2).unwrap());
        for at in [900, 950] {
            assert!(counter.decide(ms(at)).rejected_for.is_none());
        }
        let next_window = counter.decide(ms(1500)).quota.unwrap();
        assert_eq!((next_window.remaining, next_window.reset), (0, ms(1500)));
        // Decided after the 1500 ms one, though read earlier: counted at
        // 1500 ms, not as a new window two back.
        let late = counter.decide(ms(600));
        assert!(late.rejected_for.is_some());
        assert_eq!((counter.admitted(), counter.rejected()), (3, 1));
        assert!(SlidingWindowCounter::with_window(NonZeroU32::MIN, Duration::ZERO).is_none());
        assert!(format!("{counter:?}").contains("SlidingWindowCounter"));
    }
}
