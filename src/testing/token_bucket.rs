//! A mock server limited by a token bucket.

use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use wiremock::{Request, Respond, ResponseTemplate};

use super::builder::{dialect_methods, shape_methods};
use super::counters::Counters;
use super::shape::{QuotaState, Shape, Verdict};

/// A [`Respond`] implementation that admits requests while its token bucket
/// has a token and rejects them (429 by default) otherwise.
///
/// The bucket starts full, holds at most `burst` tokens and gains tokens
/// continuously at the configured rate, measured on the real clock
/// ([`Instant`]). Every clone shares the same bucket and counters: clone it
/// *after* configuring, mount one clone and keep the other to read
/// [`received`](Self::received), [`admitted`](Self::admitted) and
/// [`rejected`](Self::rejected).
///
/// The quota the headers describe: limit = burst, remaining = whole tokens
/// left, reset = time until the bucket is full again, policy window = the
/// time a full bucket takes to refill.
///
/// ```
/// use std::num::NonZeroU32;
/// use courteous::testing::{Dialect, RetryAfterStyle, TokenBucket};
/// use wiremock::{Mock, MockServer, matchers::any};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let server = MockServer::start().await;
/// // The original experiment's server: 20 requests per second, bursts of 20.
/// let bucket = TokenBucket::per_second(NonZeroU32::new(20).unwrap())
///     .retry_after(RetryAfterStyle::Seconds)
///     .dialect(Dialect::IetfList);
/// Mock::given(any()).respond_with(bucket.clone()).mount(&server).await;
///
/// let client = reqwest::Client::new();
/// for _ in 0..21 {
///     client.get(server.uri()).send().await.unwrap();
/// }
/// assert_eq!(bucket.admitted(), 20);
/// assert_eq!(bucket.rejected(), 1);
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct TokenBucket {
    refill: NonZeroU32,
    period: Duration,
    burst: NonZeroU32,
    shape: Shape,
    counters: Counters,
    state: Arc<Mutex<Option<Tokens>>>,
}

#[derive(Debug)]
struct Tokens {
    available: f64,
    at: Instant,
}

impl TokenBucket {
    /// `refill` tokens per second; the bucket holds one second's worth unless
    /// [`burst`](Self::burst) says otherwise.
    pub fn per_second(refill: NonZeroU32) -> Self {
        Self::with_period(refill, Duration::from_secs(1))
    }

    /// `refill` tokens per minute; the bucket holds one minute's worth unless
    /// [`burst`](Self::burst) says otherwise.
    pub fn per_minute(refill: NonZeroU32) -> Self {
        Self::with_period(refill, Duration::from_secs(60))
    }

    fn with_period(refill: NonZeroU32, period: Duration) -> Self {
        Self {
            refill,
            period,
            burst: refill,
            shape: Shape::default(),
            counters: Counters::default(),
            state: Arc::default(),
        }
    }

    /// The bucket's capacity: how many requests a client may send at once
    /// after a pause. Default: the refill amount per period.
    pub fn burst(mut self, capacity: NonZeroU32) -> Self {
        self.burst = capacity;
        self
    }

    fn tokens_per_sec(&self) -> f64 {
        f64::from(self.refill.get()) / self.period.as_secs_f64()
    }

    fn decide(&self) -> Verdict {
        let rate = self.tokens_per_sec();
        let capacity = f64::from(self.burst.get());
        let now = Instant::now();
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let tokens = state.get_or_insert(Tokens {
            available: capacity,
            at: now,
        });
        let gained = now.duration_since(tokens.at).as_secs_f64() * rate;
        tokens.available = (tokens.available + gained).min(capacity);
        tokens.at = now;
        let admitted = tokens.available >= 1.0;
        if admitted {
            tokens.available -= 1.0;
        }
        let left = tokens.available;
        drop(state);
        self.counters.record(admitted);
        Verdict {
            rejected_for: (!admitted).then(|| Duration::from_secs_f64((1.0 - left) / rate)),
            quota: Some(QuotaState {
                limit: self.burst.get(),
                remaining: left.floor() as u32,
                reset: Duration::from_secs_f64((capacity - left) / rate),
                window: Duration::from_secs_f64(capacity / rate),
            }),
        }
    }
}

shape_methods!(TokenBucket);
dialect_methods!(TokenBucket);

impl Respond for TokenBucket {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        self.shape.render(&self.decide())
    }
}
