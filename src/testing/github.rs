//! A mock server that limits like GitHub's REST API.

use std::collections::VecDeque;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use wiremock::{Request, Respond, ResponseTemplate};

use super::counters::Counters;
use super::shape::ceil_secs;

/// A [`Respond`] implementation that answers as GitHub documents its rate
/// limits, both refused with `403`:
///
/// - the **primary** limit, `limit` requests per fixed `window`: every
///   response carries `x-ratelimit-limit`, `-remaining`, `-used`, `-reset`
///   (epoch seconds, rounded up) and `Date`; past the limit, `403` with
///   `x-ratelimit-remaining: 0`;
/// - the optional **secondary** limit, at most `burst` requests in any
///   `period`: `403` with `retry-after` (whole seconds, rounded up).
///
/// Besides [`received`](Self::received), [`admitted`](Self::admitted) and
/// [`rejected`](Self::rejected), it counts [`early`](Self::early): requests
/// that arrived while the server had said not to send (before the reset it
/// announced with `x-ratelimit-remaining: 0`, or before a `retry-after` ran
/// out). A client that follows GitHub's rules sends none.
///
/// ```
/// use std::num::NonZeroU32;
/// use std::time::Duration;
/// use courteous::testing::GitHubApi;
///
/// let api = GitHubApi::new(NonZeroU32::new(60).unwrap(), Duration::from_secs(3600))
///     .secondary(NonZeroU32::new(10).unwrap(), Duration::from_secs(1));
/// assert_eq!(api.early(), 0);
/// ```
#[derive(Debug, Clone)]
pub struct GitHubApi {
    limit: NonZeroU32,
    window: Duration,
    secondary: Option<(NonZeroU32, Duration)>,
    state: Arc<Mutex<State>>,
    counters: Counters,
}

#[derive(Debug, Default)]
struct State {
    opened: Option<Instant>,
    used: u32,
    recent: VecDeque<Instant>,
    quiet_until: Option<Instant>,
    early: u64,
}

enum Answer {
    Ok,
    Primary,
    Secondary(Duration),
}

impl GitHubApi {
    /// `limit` requests per fixed `window` (GitHub: 60 or 5,000 per hour).
    /// The first window opens with the first request.
    pub fn new(limit: NonZeroU32, window: Duration) -> Self {
        Self {
            limit,
            window: window.max(Duration::from_millis(1)),
            secondary: None,
            state: Arc::default(),
            counters: Counters::default(),
        }
    }

    /// Also refuse more than `burst` requests in any `period`.
    pub fn secondary(mut self, burst: NonZeroU32, period: Duration) -> Self {
        self.secondary = Some((burst, period));
        self
    }

    /// Starts with `used` of the first window's quota already spent (by
    /// another client of the same token).
    pub fn already_used(self, used: u32) -> Self {
        self.lock().used = used.min(self.limit.get());
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Requests received.
    pub fn received(&self) -> u64 {
        self.counters.received()
    }

    /// Requests answered 200.
    pub fn admitted(&self) -> u64 {
        self.counters.admitted()
    }

    /// Requests refused with 403.
    pub fn rejected(&self) -> u64 {
        self.counters.rejected()
    }

    /// Requests sent while the server had said to wait.
    pub fn early(&self) -> u64 {
        self.lock().early
    }

    fn decide(&self, now: Instant) -> (Answer, u32, Duration) {
        let mut state = self.lock();
        if state.quiet_until.is_some_and(|until| now < until) {
            state.early += 1;
        }
        let opened = *state.opened.get_or_insert(now);
        let mut end = opened + self.window;
        if now >= end {
            state.opened = Some(now);
            state.used = 0;
            end = now + self.window;
        }
        let reset = end.saturating_duration_since(now);
        if let Some((burst, period)) = self.secondary {
            while state
                .recent
                .front()
                .is_some_and(|t| now.saturating_duration_since(*t) >= period)
            {
                state.recent.pop_front();
            }
            if state.recent.len() >= burst.get() as usize {
                let oldest = state.recent.front().copied().unwrap_or(now);
                let wait = (oldest + period).saturating_duration_since(now);
                let wait = Duration::from_secs(ceil_secs(wait).max(1));
                state.quiet_until = Some(now + wait);
                return (
                    Answer::Secondary(wait),
                    self.limit.get() - state.used,
                    reset,
                );
            }
        }
        if state.used >= self.limit.get() {
            state.quiet_until = Some(end);
            return (Answer::Primary, 0, reset);
        }
        state.used += 1;
        state.recent.push_back(now);
        let remaining = self.limit.get() - state.used;
        if remaining == 0 {
            state.quiet_until = Some(end);
        }
        (Answer::Ok, remaining, reset)
    }
}

impl Respond for GitHubApi {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let (answer, remaining, reset) = self.decide(Instant::now());
        let now = SystemTime::now();
        let epoch = now.duration_since(UNIX_EPOCH).unwrap_or_default();
        let template = match answer {
            Answer::Ok => ResponseTemplate::new(200).set_body_string("{}"),
            Answer::Primary => ResponseTemplate::new(403).set_body_raw(
                r#"{"message":"API rate limit exceeded"}"#,
                "application/json",
            ),
            Answer::Secondary(wait) => ResponseTemplate::new(403)
                .insert_header("retry-after", wait.as_secs().to_string())
                .set_body_raw(
                    r#"{"message":"You have exceeded a secondary rate limit."}"#,
                    "application/json",
                ),
        };
        self.counters.record(matches!(answer, Answer::Ok));
        template
            .insert_header("date", httpdate::fmt_http_date(now))
            .insert_header("x-ratelimit-limit", self.limit.get().to_string())
            .insert_header("x-ratelimit-remaining", remaining.to_string())
            .insert_header(
                "x-ratelimit-used",
                (self.limit.get() - remaining).to_string(),
            )
            .insert_header("x-ratelimit-reset", ceil_secs(epoch + reset).to_string())
            .insert_header("x-ratelimit-resource", "core")
    }
}
