//! Shared by the fleet tests (they live in the demo server's crate, which
//! owns them): the throw-away `redis-server` and Redis Cluster harnesses
//! (real servers on free loopback ports, killed
//! by their own PIDs on drop), and a few readings.
#![allow(dead_code)]

use std::time::Duration;

use courteous::fleet::{Lesson, RedisFleet, Reservation};
use courteous::signal::{Signal, parse};
use http::{HeaderMap, HeaderValue, StatusCode};

pub use demo_server::redis_process::RedisServer;

pub fn redis() -> RedisServer {
    RedisServer::start().expect("redis-server on PATH (.ci/run installs it)")
}

/// A fleet member: its own connection and member id, like a process.
pub async fn member(url: &str) -> RedisFleet {
    RedisFleet::builder(url)
        // Generous: a loaded 2-core CI box must not turn these into failures.
        .deadline(Duration::from_secs(2))
        .connect()
        .await
        .expect("connect to redis")
}

/// A scope name no other test uses.
pub fn scope(name: &str) -> String {
    format!("http://{name}-{:08x}.test", rand::random::<u32>())
}

/// An IETF reading: `limit` per `window_s` seconds, `remaining` left.
pub fn reading(limit: u64, window_s: u64, remaining: u64) -> Signal {
    let mut headers = HeaderMap::new();
    headers.insert(
        "ratelimit-policy",
        HeaderValue::from_str(&format!("\"q\";q={limit};w={window_s}")).unwrap(),
    );
    headers.insert(
        "ratelimit",
        HeaderValue::from_str(&format!("\"q\";r={remaining};t=1")).unwrap(),
    );
    parse(StatusCode::OK, &headers, None)
}

pub fn ok_lesson(limit: u64, window_s: u64, remaining: u64) -> Lesson {
    Lesson::from_response(false, &reading(limit, window_s, remaining), None)
}

pub fn refusal(pause: Duration) -> Lesson {
    Lesson::from_response(true, &Signal::default(), Some(pause))
}

/// The wait of a `Go`, or a panic naming what came instead.
pub fn go_after(r: Reservation) -> Duration {
    match r {
        Reservation::Go { after, .. } => after,
        other => panic!("expected a slot, got {other:?}"),
    }
}

/// Redis' own clock (`TIME`), which the scripts use: tests bound each
/// slot's due time by readings taken around the call instead of assuming
/// how much time passes on a loaded machine.
pub struct RedisClock(redis::aio::MultiplexedConnection);

impl RedisClock {
    pub async fn connect(url: &str) -> Self {
        let client = redis::Client::open(url).expect("redis url");
        Self(
            client
                .get_multiplexed_async_connection()
                .await
                .expect("connect to redis"),
        )
    }

    /// Redis `TIME`, since the epoch.
    pub async fn now(&mut self) -> Duration {
        let (s, us): (u64, u64) = redis::cmd("TIME")
            .query_async(&mut self.0)
            .await
            .expect("TIME");
        Duration::from_secs(s) + Duration::from_micros(us)
    }
}

/// A slot's due time on Redis' clock, known to lie in `lo..=hi`: the
/// script read `TIME` somewhere between the two readings around the call.
#[derive(Debug, Clone, Copy)]
pub struct Due {
    pub lo: Duration,
    pub hi: Duration,
    pub after: Duration,
}

pub async fn reserve_timed(clock: &mut RedisClock, fleet: &RedisFleet, scope: &str) -> Due {
    let before = clock.now().await;
    let after = go_after(fleet.reserve(scope).await.unwrap());
    let end = clock.now().await;
    Due {
        lo: before + after,
        hi: end + after,
        after,
    }
}

/// Whether two slots due at `a` then `b` can be `gap` apart, within the
/// uncertainty of both readings and `slack` for rounding.
pub fn spaced_by(a: Due, b: Due, gap: Duration, slack: Duration) -> bool {
    b.lo.saturating_sub(a.hi) <= gap + slack && b.hi.saturating_sub(a.lo) + slack >= gap
}
