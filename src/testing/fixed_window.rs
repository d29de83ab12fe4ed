//! A mock server limited by a fixed window counter.

use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use wiremock::{Request, Respond, ResponseTemplate};

use super::builder::{dialect_methods, shape_methods, window_constructors};
use super::counters::Counters;
use super::shape::{QuotaState, Shape, Verdict};

/// A [`Respond`] implementation that admits `limit` requests per window and
/// rejects the rest (429 by default) until the window ends.
///
/// The first window opens with the first request; later windows follow
/// back to back on the real clock ([`Instant`]). With
/// [`aligned_to_clock`](Self::aligned_to_clock), windows are instead aligned
/// to the wall clock's epoch (a window of 1 s starts at every whole second,
/// as `X-RateLimit-Reset` epochs and whole-second `Date` headers then say). Every clone shares the same
/// counter: clone it *after* configuring, mount one clone and keep the other
/// to read [`received`](Self::received), [`admitted`](Self::admitted) and
/// [`rejected`](Self::rejected).
///
/// The quota the headers describe: limit, remaining in this window, reset =
/// time until the window ends, policy window = the window length.
///
/// ```
/// use std::num::NonZeroU32;
/// use std::time::Duration;
/// use courteous::testing::{FixedWindow, RetryAfterStyle};
/// use wiremock::{Mock, MockServer, matchers::any};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = MockServer::start().await;
/// let window = FixedWindow::per_minute(NonZeroU32::new(3).unwrap())
///     .retry_after(RetryAfterStyle::Millis);
/// Mock::given(any()).respond_with(window.clone()).mount(&server).await;
///
/// let client = reqwest::Client::new();
/// let mut statuses = Vec::new();
/// for _ in 0..4 {
///     statuses.push(client.get(server.uri()).send().await.unwrap().status().as_u16());
/// }
/// assert_eq!(statuses, [200, 200, 200, 429]);
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct FixedWindow {
    limit: NonZeroU32,
    window: Duration,
    shape: Shape,
    counters: Counters,
    state: Arc<Mutex<Option<Window>>>,
    aligned: bool,
}

#[derive(Debug)]
struct Window {
    opened: WindowId,
    count: u32,
}

/// Which window a request falls in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WindowId {
    /// Opened at this instant (the first request's, then back to back).
    FromFirst(Instant),
    /// The clock-aligned window with this number since the epoch.
    Aligned(u128),
}

impl FixedWindow {
    fn build(limit: NonZeroU32, window: Duration) -> Self {
        Self {
            limit,
            window,
            shape: Shape::default(),
            counters: Counters::default(),
            state: Arc::default(),
            aligned: false,
        }
    }

    /// Align windows to the wall clock's epoch (`SystemTime`), as servers
    /// counting per calendar second or minute do, instead of opening the
    /// first one with the first request.
    pub fn aligned_to_clock(mut self) -> Self {
        self.aligned = true;
        self
    }

    /// The verdict for a request at `now` (wall clock `wall`, read at the
    /// same moment).
    fn decide(&self, now: Instant, wall: SystemTime) -> Verdict {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let (opened, reset) = if self.aligned {
            self.aligned_window(wall)
        } else {
            self.window_from_first(state.as_ref().map(|w| w.opened), now)
        };
        let current = state.get_or_insert(Window { opened, count: 0 });
        if current.opened != opened {
            *current = Window { opened, count: 0 };
        }
        let admitted = current.count < self.limit.get();
        if admitted {
            current.count += 1;
        }
        let remaining = self.limit.get() - current.count;
        drop(state);
        self.counters.record(admitted);
        Verdict {
            rejected_for: (!admitted).then_some(reset),
            quota: Some(QuotaState {
                limit: self.limit.get(),
                remaining,
                reset,
                window: self.window,
            }),
        }
    }

    /// The window containing the wall-clock instant `wall` (its number
    /// since the epoch) and the time left in it, from the wall clock alone,
    /// so that an epoch reset names the window's exact end (an `Instant`
    /// beside it drifts from the wall clock by nanoseconds, which a reset
    /// rounded up to whole seconds turns into a whole second).
    fn aligned_window(&self, wall: SystemTime) -> (WindowId, Duration) {
        let since_epoch = wall
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let length = self.window.as_nanos().max(1);
        let left = length - since_epoch % length;
        (
            WindowId::Aligned(since_epoch / length),
            Duration::from_nanos(u64::try_from(left).unwrap_or(u64::MAX)),
        )
    }

    /// The window containing `now` when the first one opened with the first
    /// request and later ones follow back to back (`current`: the window
    /// the last request fell in; none, and this request opens the first),
    /// and the time left in it.
    fn window_from_first(&self, current: Option<WindowId>, now: Instant) -> (WindowId, Duration) {
        let opened = match current {
            Some(WindowId::FromFirst(opened)) => {
                let elapsed = now.duration_since(opened);
                // Skip whole windows so later windows stay aligned to the first.
                let into_window = elapsed.as_nanos() % self.window.as_nanos().max(1);
                let into_window = Duration::from_nanos(u64::try_from(into_window).unwrap_or(0));
                if elapsed >= self.window {
                    now.checked_sub(into_window).unwrap_or(now)
                } else {
                    opened
                }
            }
            _ => now,
        };
        let reset = (opened + self.window).saturating_duration_since(now);
        (WindowId::FromFirst(opened), reset)
    }
}

shape_methods!(FixedWindow);
dialect_methods!(FixedWindow);
window_constructors!(FixedWindow, "per");

impl Respond for FixedWindow {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let (now, wall) = (Instant::now(), SystemTime::now());
        self.shape.render_at(&self.decide(now, wall), wall)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: NonZeroU32 = NonZeroU32::new(2).unwrap();

    fn wall(nanos: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_nanos(nanos)
    }

    #[test]
    fn an_aligned_window_names_its_exact_end_and_counts_by_the_wall_clock() {
        let window = FixedWindow::per_second(LIMIT).aligned_to_clock();
        // An instant that has drifted from the wall clock changes nothing.
        let now = Instant::now();
        let second = 1_000_000_000;
        let first = window.decide(now, wall(7 * second + 250_000_000));
        let quota = first.quota.unwrap();
        assert_eq!(
            (quota.remaining, quota.reset),
            (1, Duration::from_millis(750))
        );
        let drifted = now + Duration::from_secs(5);
        let last_nano = window.decide(drifted, wall(8 * second - 1)).quota.unwrap();
        assert_eq!(
            (last_nano.remaining, last_nano.reset),
            (0, Duration::from_nanos(1))
        );
        let refused = window.decide(now, wall(8 * second - 1));
        assert_eq!(refused.rejected_for, Some(Duration::from_nanos(1)));
        // The next second is the next window, whatever the instant says.
        let next = window.decide(now, wall(8 * second)).quota.unwrap();
        assert_eq!((next.remaining, next.reset), (1, Duration::from_secs(1)));
    }

    #[test]
    fn a_window_opened_by_the_first_request_runs_back_to_back() {
        let window = FixedWindow::per_second(LIMIT);
        let start = Instant::now();
        let at = |ms| start + Duration::from_millis(ms);
        let epoch = wall(0);
        assert_eq!(
            window.decide(at(0), epoch).quota.unwrap().reset,
            Duration::from_secs(1)
        );
        let second = window.decide(at(400), epoch).quota.unwrap();
        assert_eq!(
            (second.remaining, second.reset),
            (0, Duration::from_millis(600))
        );
        assert!(window.decide(at(999), epoch).rejected_for.is_some());
        // 2.3 s in: the third window, opened at 2 s.
        let third = window.decide(at(2_300), epoch).quota.unwrap();
        assert_eq!(
            (third.remaining, third.reset),
            (1, Duration::from_millis(700))
        );
    }
}
