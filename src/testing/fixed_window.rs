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
    opened: Instant,
    count: u32,
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

    /// How far into its clock-aligned window `wall` is.
    fn offset_in_aligned_window(&self, wall: SystemTime) -> Duration {
        let since_epoch = wall
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos();
        let into = since_epoch % self.window.as_nanos().max(1);
        Duration::from_nanos(u64::try_from(into).unwrap_or(0))
    }

    /// The verdict for a request at `now` (wall clock `wall`, read at the
    /// same moment, so an epoch reset names the window's exact end).
    fn decide(&self, now: Instant, wall: SystemTime) -> Verdict {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let current = state.get_or_insert_with(|| Window {
            opened: if self.aligned {
                now.checked_sub(self.offset_in_aligned_window(wall))
                    .unwrap_or(now)
            } else {
                now
            },
            count: 0,
        });
        let elapsed = now.duration_since(current.opened);
        if elapsed >= self.window {
            // Skip whole windows so later windows stay aligned to the first.
            let into_window = elapsed.as_nanos() % self.window.as_nanos();
            let into_window = Duration::from_nanos(u64::try_from(into_window).unwrap_or(0));
            current.opened = now.checked_sub(into_window).unwrap_or(now);
            current.count = 0;
        }
        let admitted = current.count < self.limit.get();
        if admitted {
            current.count += 1;
        }
        let remaining = self.limit.get() - current.count;
        let reset = (current.opened + self.window).saturating_duration_since(now);
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
