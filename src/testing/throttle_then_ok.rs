//! A mock server that rejects the first N requests, then admits every one.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use wiremock::{Request, Respond, ResponseTemplate};

use super::builder::shape_methods;
use super::counters::Counters;
use super::shape::{Shape, Verdict};

/// A [`Respond`] implementation that rejects the first `n` requests (429 by
/// default) and admits every request after them.
///
/// The simplest way to test that a client retries, and waits as long as it
/// was told: rejections carry the configured [`wait`](Self::wait) in every
/// [`retry_after`](Self::retry_after) style. Every clone shares the same
/// count: clone it *after* configuring and keep one to read the counters.
///
/// ```
/// use std::time::Duration;
/// use courteous::testing::{RetryAfterStyle, ThrottleThenOk};
/// use wiremock::{Mock, MockServer, matchers::any};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = MockServer::start().await;
/// let throttle = ThrottleThenOk::new(2)
///     .retry_after(RetryAfterStyle::Millis)
///     .wait(Duration::from_millis(50));
/// Mock::given(any()).respond_with(throttle.clone()).mount(&server).await;
///
/// let client = reqwest::Client::new();
/// let first = client.get(server.uri()).send().await.unwrap();
/// assert_eq!(first.status(), 429);
/// assert_eq!(first.headers()["retry-after-ms"], "50");
/// client.get(server.uri()).send().await.unwrap();
/// assert_eq!(client.get(server.uri()).send().await.unwrap().status(), 200);
/// assert_eq!((throttle.rejected(), throttle.admitted()), (2, 1));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ThrottleThenOk {
    rejections: u64,
    wait: Duration,
    shape: Shape,
    counters: Counters,
    seen: Arc<AtomicU64>,
}

impl ThrottleThenOk {
    /// Default wait announced by rejections: one second, the smallest
    /// non-zero `Retry-After` in delay-seconds.
    pub const DEFAULT_WAIT: Duration = Duration::from_secs(1);

    /// Reject the first `n` requests, then admit all (`n = 0` admits all).
    pub fn new(n: u32) -> Self {
        Self {
            rejections: u64::from(n),
            wait: Self::DEFAULT_WAIT,
            shape: Shape::default(),
            counters: Counters::default(),
            seen: Arc::default(),
        }
    }

    /// The wait rejections announce. Default: [`Self::DEFAULT_WAIT`].
    /// Whole-second styles round it up (`50 ms` → `Retry-After: 1`).
    pub fn wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }
}

shape_methods!(ThrottleThenOk);

impl Respond for ThrottleThenOk {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let index = self.seen.fetch_add(1, Ordering::Relaxed);
        let admitted = index >= self.rejections;
        self.counters.record(admitted);
        let verdict = Verdict {
            rejected_for: (!admitted).then_some(self.wait),
            quota: None,
        };
        self.shape.render(&verdict)
    }
}
