//! A mock server limited by a sliding log.

use std::collections::VecDeque;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use wiremock::{Request, Respond, ResponseTemplate};

use super::builder::{dialect_methods, shape_methods, window_constructors};
use super::counters::Counters;
use super::shape::{QuotaState, Shape, Verdict};

/// A [`Respond`] implementation that admits a request while fewer than
/// `limit` requests were admitted in the last `window`, and rejects it
/// (429 by default) otherwise.
///
/// It keeps a log of the admission times of the last window, on the real
/// clock ([`Instant`]): a request admitted at `t` counts against the quota
/// until `t + window` exactly, so there is no boundary where two windows'
/// worth get through (unlike a [`FixedWindow`](super::FixedWindow)), and
/// units come back one at a time, as the oldest admissions leave the window.
/// Every clone shares the same log and counters: clone it *after*
/// configuring, mount one clone and keep the other to read
/// [`received`](Self::received), [`admitted`](Self::admitted) and
/// [`rejected`](Self::rejected).
///
/// The quota the headers describe: limit, remaining = `limit` minus the
/// admissions in the last window, reset = until the oldest logged admission
/// leaves the window (when `remaining` next goes up; a sliding log never
/// refills all at once), policy window = the window. A rejection's wait (its
/// `Retry-After`) is that same moment: the first instant a retry is admitted.
///
/// ```
/// use std::num::NonZeroU32;
/// use courteous::testing::{Dialect, RetryAfterStyle, SlidingLog};
/// use wiremock::{Mock, MockServer, matchers::any};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = MockServer::start().await;
/// // 3 requests in any minute.
/// let log = SlidingLog::per_minute(NonZeroU32::new(3).unwrap())
///     .dialect(Dialect::IetfList)
///     .retry_after(RetryAfterStyle::Seconds);
/// Mock::given(any()).respond_with(log.clone()).mount(&server).await;
///
/// let client = reqwest::Client::new();
/// let mut statuses = Vec::new();
/// for _ in 0..4 {
///     statuses.push(client.get(server.uri()).send().await.unwrap().status().as_u16());
/// }
/// assert_eq!(statuses, [200, 200, 200, 429]);
/// assert_eq!((log.admitted(), log.rejected()), (3, 1));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct SlidingLog {
    limit: NonZeroU32,
    window: Duration,
    shape: Shape,
    counters: Counters,
    /// Admission times within the last window, oldest first.
    log: Arc<Mutex<VecDeque<Instant>>>,
}

impl SlidingLog {
    fn build(limit: NonZeroU32, window: Duration) -> Self {
        Self {
            limit,
            window,
            shape: Shape::default(),
            counters: Counters::default(),
            log: Arc::default(),
        }
    }

    /// The verdict for a request at `now`.
    fn decide(&self, now: Instant) -> Verdict {
        let mut log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
        // An admission at `t` counts until `t + window`, exclusive.
        while log
            .front()
            .is_some_and(|&at| now.saturating_duration_since(at) >= self.window)
        {
            log.pop_front();
        }
        let limit = self.limit.get();
        let logged = u32::try_from(log.len()).unwrap_or(u32::MAX);
        let admitted = logged < limit;
        if admitted {
            // Keep the log sorted should requests be decided out of order.
            let at = log.back().map_or(now, |&last| last.max(now));
            log.push_back(at);
        }
        let remaining = limit.saturating_sub(logged + u32::from(admitted));
        let reset = log.front().map_or(Duration::ZERO, |&oldest| {
            (oldest + self.window).saturating_duration_since(now)
        });
        drop(log);
        self.counters.record(admitted);
        Verdict {
            rejected_for: (!admitted).then_some(reset),
            quota: Some(QuotaState {
                limit,
                remaining,
                reset,
                window: self.window,
            }),
        }
    }
}

shape_methods!(SlidingLog);
dialect_methods!(SlidingLog);
window_constructors!(SlidingLog, "in any");

impl Respond for SlidingLog {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        self.shape.render(&self.decide(Instant::now()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    fn log(limit: u32) -> SlidingLog {
        SlidingLog::with_window(NonZeroU32::new(limit).unwrap(), SECOND).unwrap()
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn admits_the_limit_then_waits_for_the_oldest_to_leave() {
        let log = log(3);
        let t0 = Instant::now();
        for (offset, remaining) in [(0, 2), (100, 1), (200, 0)] {
            let verdict = log.decide(t0 + ms(offset));
            assert!(verdict.rejected_for.is_none(), "{offset} ms");
            let quota = verdict.quota.unwrap();
            assert_eq!(quota.remaining, remaining);
            // The oldest admission (at 0) leaves at 1000 ms.
            assert_eq!(quota.reset, SECOND - ms(offset));
        }
        let refused = log.decide(t0 + ms(300));
        assert_eq!(refused.rejected_for, Some(ms(700)));
        assert_eq!(refused.quota.unwrap().remaining, 0);
        assert_eq!((log.admitted(), log.rejected()), (3, 1));
    }

    #[test]
    fn a_unit_comes_back_exactly_one_window_after_its_admission() {
        let log = log(2);
        let t0 = Instant::now();
        log.decide(t0);
        log.decide(t0 + ms(400));
        // 1 ns early: both admissions still count.
        let early = log.decide(t0 + SECOND - Duration::from_nanos(1));
        assert_eq!(early.rejected_for, Some(Duration::from_nanos(1)));
        // At exactly one window, the first has left; the second has not.
        let back = log.decide(t0 + SECOND);
        assert!(back.rejected_for.is_none());
        let quota = back.quota.unwrap();
        assert_eq!(quota.remaining, 0);
        assert_eq!(quota.reset, ms(400));
        // Units come back one at a time, not all at once.
        assert_eq!(log.decide(t0 + ms(1100)).rejected_for, Some(ms(300)));
    }

    #[test]
    fn no_boundary_lets_twice_the_limit_through() {
        // A fixed window of 1 s admits 3 at 0.99 s and 3 more at 1.01 s; a
        // sliding log admits at most 3 in any second.
        let log = log(3);
        let t0 = Instant::now();
        let admitted = [990, 995, 999, 1001, 1005, 1010]
            .into_iter()
            .filter(|&at| log.decide(t0 + ms(at)).rejected_for.is_none())
            .count();
        assert_eq!(admitted, 3);
        assert!(log.decide(t0 + ms(1990)).rejected_for.is_none());
    }

    #[test]
    fn the_log_empties_after_a_quiet_window() {
        let log = log(1);
        let t0 = Instant::now();
        log.decide(t0);
        // Long after: the log empties, then this request is logged.
        let later = log.decide(t0 + 10 * SECOND).quota.unwrap();
        assert_eq!((later.remaining, later.reset), (0, SECOND));
        assert!(SlidingLog::with_window(NonZeroU32::MIN, Duration::ZERO).is_none());
    }
}
