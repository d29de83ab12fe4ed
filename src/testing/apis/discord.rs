//! A mock of Discord's HTTP API at its limits.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use wiremock::{Request, Respond, ResponseTemplate};

use super::counter_methods;
use super::format::{ceil_secs, decimal_secs};
use super::meter::{Quotas, Spec};

/// A [`Respond`] implementation that limits as Discord does: each route
/// draws on a bucket (several routes may share one), `limit` requests per
/// fixed window each, and every request on a global limit of `global`
/// requests a second.
///
/// Every response of a bucket carries `X-RateLimit-Limit`, `-Remaining`,
/// `-Reset` (a Unix epoch with milliseconds), `-Reset-After` (seconds with
/// milliseconds) and `-Bucket` (the bucket's opaque id). A bucket's refusal
/// is a `429` with `Retry-After` (whole seconds), `X-RateLimit-Scope:
/// user` and `{"message", "retry_after": <float>, "global": false}`; the
/// global limit's has `X-RateLimit-Global: true`, `X-RateLimit-Scope:
/// global` and `"global": true`. A route in no bucket draws on the global
/// limit alone. [`early`](Self::early) counts requests, on any route, that
/// arrived while a global refusal's `retry_after` had not run out, and
/// [`pauses`](Self::pauses) the refusals that began such a wait: a client
/// that honours the global limit sends none but those already in flight
/// when a pause began.
///
/// ```
/// use std::time::Duration;
/// use courteous::testing::DiscordApi;
///
/// // Two routes sharing one bucket of 5 per 2 s; 50 requests a second in all.
/// let api = DiscordApi::new(50).bucket(
///     "d721dea6054f6322373d361f98e5c38b",
///     5,
///     Duration::from_secs(2),
///     &["/channels/1/messages", "/channels/1/pins"],
/// );
/// assert_eq!(api.received(), 0);
/// ```
#[derive(Debug, Clone)]
pub struct DiscordApi {
    global: Quotas,
    buckets: Vec<Bucket>,
    quotas: Quotas,
    paused: Arc<Pause>,
}

/// The global refusal's end, and the requests that came before it.
#[derive(Debug, Default)]
struct Pause {
    until: Mutex<Option<Instant>>,
    early: AtomicU64,
    pauses: AtomicU64,
}

#[derive(Debug, Clone)]
struct Bucket {
    id: String,
    routes: Vec<String>,
    quotas: Quotas,
}

impl DiscordApi {
    /// A global limit of `global` requests a second (Discord: 50).
    pub fn new(global: u64) -> Self {
        Self {
            global: Quotas::new(&[Spec::window("global", global, Duration::from_secs(1))]),
            buckets: Vec::new(),
            quotas: Quotas::new(&[]),
            paused: Arc::default(),
        }
    }

    /// Requests that arrived while a global refusal said to wait.
    pub fn early(&self) -> u64 {
        self.paused.early.load(Ordering::Relaxed)
    }

    /// Global refusals that began a pause (not those during one).
    pub fn pauses(&self) -> u64 {
        self.paused.pauses.load(Ordering::Relaxed)
    }

    /// A bucket named `id`, `limit` requests per fixed `window`, drawn on
    /// by requests whose path starts with one of `routes`.
    pub fn bucket(mut self, id: &str, limit: u64, window: Duration, routes: &[&str]) -> Self {
        self.buckets.push(Bucket {
            id: id.to_owned(),
            routes: routes.iter().map(|route| (*route).to_owned()).collect(),
            quotas: Quotas::new(&[Spec::window("bucket", limit, window)]),
        });
        self
    }
}

counter_methods!(DiscordApi);

fn refusal(wait: Duration, global: bool) -> ResponseTemplate {
    let scope = if global { "global" } else { "user" };
    let template = ResponseTemplate::new(429)
        .insert_header("retry-after", ceil_secs(wait).to_string())
        .insert_header("x-ratelimit-scope", scope)
        .set_body_raw(
            format!(
                r#"{{"message":"You are being rate limited.","retry_after":{},"global":{global}}}"#,
                decimal_secs(wait)
            ),
            "application/json",
        );
    if global {
        template.insert_header("x-ratelimit-global", "true")
    } else {
        template
    }
}

impl Respond for DiscordApi {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let now = Instant::now();
        {
            let mut until = self
                .paused
                .until
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let paused = until.is_some_and(|until| now < until);
            if paused {
                self.paused.early.fetch_add(1, Ordering::Relaxed);
            }
            let global = self.global.decide(now, &[1]);
            if let Some(wait) = global.rejected_for {
                if !paused {
                    self.paused.pauses.fetch_add(1, Ordering::Relaxed);
                }
                *until = Some(now + wait);
                self.quotas.counters.record(false);
                return refusal(wait, true);
            }
        }
        let path = request.url.path();
        let Some(bucket) = self.buckets.iter().find(|bucket| {
            bucket
                .routes
                .iter()
                .any(|route| path.starts_with(route.as_str()))
        }) else {
            self.quotas.counters.record(true);
            return ResponseTemplate::new(200).set_body_raw("{}", "application/json");
        };
        let decision = bucket.quotas.decide(now, &[1]);
        self.quotas.counters.record(decision.rejected_for.is_none());
        let reading = decision.readings[0];
        let template = match decision.rejected_for {
            None => ResponseTemplate::new(200).set_body_raw("{}", "application/json"),
            Some(wait) => refusal(wait, false),
        };
        let epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            + reading.reset;
        template
            .insert_header("x-ratelimit-limit", reading.limit.to_string())
            .insert_header("x-ratelimit-remaining", reading.remaining.to_string())
            .insert_header("x-ratelimit-reset", decimal_secs(epoch))
            .insert_header("x-ratelimit-reset-after", decimal_secs(reading.reset))
            .insert_header("x-ratelimit-bucket", bucket.id.clone())
    }
}
