//! [`RedisFleet`]: the shared scope store on Redis or Redis Cluster, and its
//! builder.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::{FromRedisValue, Script, ScriptInvocation};

use super::breaker::BreakerSettings;
use super::carry::Carry;
use super::deadline::CallTimer;
use super::error::FleetError;
use super::keys::ScopeKeys;
use super::lesson::Lesson;

/// How long one store call may take before the request goes on without it.
/// 20 ms: a loopback or same-zone Redis answers a script in well under a
/// millisecond (the comparison measures it beside `PING`), so 20 ms only
/// trips on a Redis that is stopped, overloaded or far away, and costs a
/// request at most that much when it does.
pub const DEFAULT_DEADLINE: Duration = Duration::from_millis(20);

/// The deadline of a store call until the store has answered this process
/// once, and the most a loaded host stretches any call's deadline to
/// ([`RedisFleet::current_deadline`]): 1 s, the retransmission timeout TCP
/// starts with before it has measured a round trip (RFC 6298 §2.1). A
/// process that has heard nothing from the fleet has nothing to fall back
/// on but a blind send, and its first calls are the slow ones: a connection
/// warming up, scripts loading, a host busy starting many processes at once
/// (a herd of 100 processes on 2 cores misses 200 ms). A configured
/// deadline longer than this is used as it is.
pub const FIRST_CALL_DEADLINE: Duration = Duration::from_secs(1);

/// The longest key TTL ([`RedisFleetBuilder::key_ttl`]): one day. Far
/// beyond any quota window worth sharing, and the scripts' millisecond
/// arithmetic stays exact (Lua prints numbers from 1e14 on as exponents,
/// which `PEXPIRE` refuses).
pub const MAX_KEY_TTL: Duration = Duration::from_secs(86_400);

/// Default key prefix: every key is `courteous:v1:{<scope digest>}:…`.
pub const DEFAULT_PREFIX: &str = "courteous:v1";

/// What the shared store answered to a reservation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reservation {
    /// A send slot is held for this caller: send after `after` (zero: now).
    Go {
        /// Wait before sending (Redis time, so every process agrees).
        after: Duration,
        /// Processes that reserved on this scope within the member window.
        members: u32,
        /// The shared send interval, once a rate was learned.
        interval: Option<Duration>,
        /// This send probes for the fleet (nothing is known yet): publish
        /// its response whatever it says, which lets the others go. The
        /// lease is held under this call's token: only this process can
        /// give it up early ([`RedisFleet::release_probe`]).
        probe: bool,
    },
    /// The fleet knows nothing yet and another process is probing: ask
    /// again after `after`. No slot is held.
    AskAgain {
        /// Wait before asking again.
        after: Duration,
    },
    /// The next slot is `after` away, further than the caller said it
    /// would wait ([`RedisFleet::reserve_within`]). Nothing was reserved,
    /// so giving up does not delay anyone else's slot.
    TooFar {
        /// How far away the next slot is.
        after: Duration,
    },
}

/// One store shared by any number of processes: the pause, the learned
/// rate and the send slots of every scope they name alike.
///
/// Built with [`RedisFleet::builder`], handed to a client with
/// `ClientBuilder::fleet` (or `CourteousLayer::fleet`). Cheap to clone;
/// clones share the connection and count as one member of the fleet.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use courteous::fleet::RedisFleet;
///
/// let fleet = RedisFleet::builder("redis://127.0.0.1:6379").connect().await?;
/// let client = courteous::Client::builder().fleet(fleet).build();
/// # let _ = client;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RedisFleet {
    inner: Arc<Inner>,
}

struct Inner {
    counters: Counters,
    connection: Connection,
    settings: Settings,
    member: String,
    reserve: Script,
    publish: Script,
    release: Script,
    address: String,
    /// Numbers this process's reservation tokens (`member:n`).
    tokens: AtomicU64,
    /// What the next call on each scope carries.
    carry: std::sync::Mutex<Carry>,
}

#[derive(Clone)]
enum Connection {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

#[derive(Debug, Default)]
struct Counters {
    /// How long calls took (the deadline follows it; see [`CallTimer`]).
    timer: std::sync::Mutex<CallTimer>,
    calls: AtomicU64,
    missed_deadline: AtomicU64,
    errors: AtomicU64,
}

/// What this process's store calls came to, since it connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FleetCounters {
    /// Calls made (reservations, publishes, pings).
    pub calls: u64,
    /// Calls that missed their deadline.
    pub missed_deadline: u64,
    /// Calls Redis refused or dropped.
    pub errors: u64,
}

/// Every number the store works with; see [`RedisFleetBuilder`] for each.
#[derive(Debug, Clone)]
struct Settings {
    prefix: String,
    deadline: Duration,
    breaker: BreakerSettings,
    probe_lease: Duration,
    poll: Duration,
    gap: Duration,
    member_window: Duration,
    ttl: Duration,
    margin: f64,
    headroom: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            prefix: DEFAULT_PREFIX.to_owned(),
            deadline: DEFAULT_DEADLINE,
            breaker: BreakerSettings::default(),
            probe_lease: Duration::from_secs(2),
            poll: Duration::from_millis(20),
            gap: Duration::from_millis(50),
            member_window: Duration::from_secs(10),
            ttl: Duration::from_secs(600),
            margin: 0.02,
            headroom: Duration::from_millis(100),
        }
    }
}

impl fmt::Debug for RedisFleet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisFleet")
            .field("address", &self.inner.address)
            .field("member", &self.inner.member)
            .field("settings", &self.inner.settings)
            .finish_non_exhaustive()
    }
}

/// Builds a [`RedisFleet`]; every setting has a documented default.
#[derive(Debug, Clone)]
pub struct RedisFleetBuilder {
    url: String,
    settings: Settings,
}

impl RedisFleetBuilder {
    /// Key prefix (default [`DEFAULT_PREFIX`]); processes share a quota only
    /// if they use the same prefix and name the scope alike.
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.settings.prefix = prefix.into();
        self
    }

    /// Deadline of each store call (default [`DEFAULT_DEADLINE`], 20 ms;
    /// [`FIRST_CALL_DEADLINE`] until the store has answered once).
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.settings.deadline = deadline;
        self
    }

    /// When to stop calling Redis for a while (default: after 2 failures in
    /// a row, for 1 s; see [`BreakerSettings`]).
    pub fn breaker(mut self, breaker: BreakerSettings) -> Self {
        self.settings.breaker = breaker.clamped();
        self
    }

    /// Safety margin on the shared interval (default 0.02: slots 2 % wider
    /// than `window / limit`, so a reading rounded down or a server clock a
    /// little slow never puts a send before the server's refill). Clamped to
    /// 0..=1.
    pub fn interval_margin(mut self, margin: f64) -> Self {
        self.settings.margin = if margin.is_finite() {
            margin.clamp(0.0, 1.0)
        } else {
            0.02
        };
        self
    }

    /// How late a send may reach the server after its slot without a
    /// refusal (default 100 ms: a connection opened on a loaded host). A
    /// full bucket loses the refill of that time, so every slot is held back
    /// by this much in whole intervals (at most the burst less one); this
    /// costs its share of the quota once, when a full bucket starts to be
    /// spent, not in the steady state.
    pub fn headroom(mut self, headroom: Duration) -> Self {
        self.settings.headroom = headroom.min(Duration::from_secs(60));
        self
    }

    /// How long the fleet waits for a probe's answer before another
    /// process probes (default 2 s: a first request's connection, TLS
    /// handshake and answer on a slow link). Clamped to 10 ms ..= 1 min.
    pub fn probe_lease(mut self, lease: Duration) -> Self {
        self.settings.probe_lease = lease.clamp(Duration::from_millis(10), Duration::from_secs(60));
        self
    }

    /// How long keys live after their last use (default 10 min; a pause or
    /// a slot queue further out extends it). Clamped to 1 s ..= 1 day
    /// ([`MAX_KEY_TTL`]).
    pub fn key_ttl(mut self, ttl: Duration) -> Self {
        self.settings.ttl = ttl.clamp(Duration::from_secs(1), MAX_KEY_TTL);
        self
    }

    /// Connect: one URL (`redis://host:port`) for a single Redis; a Redis
    /// Cluster with `redis+cluster://host:port[,host:port…]` or a
    /// comma-separated list of nodes (`redis://a:7000,redis://b:7001`).
    pub async fn connect(self) -> Result<RedisFleet, FleetError> {
        let (connection, address) = match endpoints(&self.url) {
            Endpoints::Single(url) => {
                let client = redis::Client::open(url.as_str())?;
                let address = client.get_connection_info().addr().to_string();
                let config = ConnectionManagerConfig::new()
                    .set_number_of_retries(1)
                    .set_min_delay(Duration::from_millis(20))
                    .set_max_delay(Duration::from_millis(200))
                    .set_connection_timeout(Some(FIRST_CALL_DEADLINE))
                    .set_response_timeout(Some(Duration::from_secs(1)));
                let manager = ConnectionManager::new_with_config(client, config).await?;
                (Connection::Single(manager), address)
            }
            Endpoints::Cluster(nodes) => {
                let address = format!("cluster {}", nodes.join(","));
                let client = ClusterClient::builder(nodes)
                    .connection_timeout(FIRST_CALL_DEADLINE)
                    .response_timeout(Duration::from_secs(1))
                    .retries(1)
                    .build()?;
                (
                    Connection::Cluster(client.get_async_connection().await?),
                    address,
                )
            }
        };
        Ok(RedisFleet {
            inner: Arc::new(Inner {
                counters: Counters::default(),
                connection,
                settings: self.settings,
                member: format!("{:016x}", rand::random::<u64>()),
                reserve: Script::new(concat!(
                    include_str!("learn.lua"),
                    include_str!("reserve.lua")
                )),
                publish: Script::new(concat!(
                    include_str!("learn.lua"),
                    include_str!("publish.lua")
                )),
                release: Script::new(include_str!("release.lua")),
                address,
                tokens: AtomicU64::new(0),
                carry: std::sync::Mutex::default(),
            }),
        })
    }
}

enum Endpoints {
    Single(String),
    Cluster(Vec<String>),
}

fn endpoints(url: &str) -> Endpoints {
    match cluster_nodes(url) {
        Some(nodes) => Endpoints::Cluster(nodes),
        None => Endpoints::Single(with_scheme(url.trim())),
    }
}

fn with_scheme(node: &str) -> String {
    if node.contains("://") {
        node.to_owned()
    } else {
        format!("redis://{node}")
    }
}

/// The nodes of a Redis Cluster URL, or `None` for one server: what
/// [`RedisFleetBuilder::connect`] reads. A cluster is
/// `redis+cluster://host:port[,host:port…]` or a comma-separated list of
/// nodes (`redis://a:7000,redis://b:7001`); a node without a scheme gets
/// `redis://`. Public so that other programs on the same Redis read such
/// URLs alike.
///
/// ```
/// use courteous::fleet::cluster_nodes;
///
/// assert_eq!(cluster_nodes("redis://127.0.0.1:6379"), None);
/// assert_eq!(
///     cluster_nodes("redis+cluster://127.0.0.1:7000,127.0.0.1:7001"),
///     Some(vec!["redis://127.0.0.1:7000".to_owned(), "redis://127.0.0.1:7001".to_owned()])
/// );
/// ```
pub fn cluster_nodes(url: &str) -> Option<Vec<String>> {
    let (cluster, rest) = match url.strip_prefix("redis+cluster://") {
        Some(rest) => (true, rest),
        None => (false, url),
    };
    let nodes: Vec<String> = rest
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(with_scheme)
        .collect();
    ((cluster && !nodes.is_empty()) || nodes.len() > 1).then_some(nodes)
}

impl RedisFleet {
    /// A builder for the store at `url` (see [`RedisFleetBuilder::connect`]).
    pub fn builder(url: impl Into<String>) -> RedisFleetBuilder {
        RedisFleetBuilder {
            url: url.into(),
            settings: Settings::default(),
        }
    }

    /// Where the store is, for logs.
    pub fn address(&self) -> &str {
        &self.inner.address
    }

    /// This process's member id (random, per store).
    pub fn member(&self) -> &str {
        &self.inner.member
    }

    /// The per-call deadline.
    pub fn deadline(&self) -> Duration {
        self.inner.settings.deadline
    }

    /// Calls made, missed and refused so far (every clone counts here).
    pub fn counters(&self) -> FleetCounters {
        let c = &self.inner.counters;
        FleetCounters {
            calls: c.calls.load(Ordering::Relaxed),
            missed_deadline: c.missed_deadline.load(Ordering::Relaxed),
            errors: c.errors.load(Ordering::Relaxed),
        }
    }

    /// Runs one call within the deadline, counting it.
    async fn timed<T>(
        &self,
        call: impl Future<Output = Result<T, FleetError>>,
    ) -> Result<T, FleetError> {
        let c = &self.inner.counters;
        c.calls.fetch_add(1, Ordering::Relaxed);
        let deadline = self.timer().deadline(self.inner.settings.deadline);
        let started = std::time::Instant::now();
        let result = match tokio::time::timeout(deadline, call).await {
            Ok(result) => result,
            Err(_) => {
                c.missed_deadline.fetch_add(1, Ordering::Relaxed);
                // Doubled for each retry before the breaker opens.
                let retries = self
                    .inner
                    .settings
                    .breaker
                    .failures_to_open
                    .saturating_sub(1);
                self.timer().missed(retries);
                return Err(FleetError::deadline());
            }
        };
        match &result {
            Ok(_) => self.timer().answered(started.elapsed()),
            Err(_) => {
                c.errors.fetch_add(1, Ordering::Relaxed);
            }
        }
        result
    }

    fn timer(&self) -> std::sync::MutexGuard<'_, CallTimer> {
        self.inner
            .counters
            .timer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The deadline of this process's next store call: the configured one
    /// ([`RedisFleetBuilder::deadline`]), stretched to the round trips seen
    /// so far (RFC 6298's timer, at most [`FIRST_CALL_DEADLINE`]).
    pub fn current_deadline(&self) -> Duration {
        self.timer().deadline(self.inner.settings.deadline)
    }

    pub(crate) fn breaker_settings(&self) -> BreakerSettings {
        self.inner.settings.breaker
    }

    fn carry(&self) -> std::sync::MutexGuard<'_, Carry> {
        self.inner
            .carry
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Reserve a send slot on `scope`: one script, one round trip. The
    /// caller takes whatever slot comes (see [`reserve_within`](Self::reserve_within)).
    pub async fn reserve(&self, scope: &str) -> Result<Reservation, FleetError> {
        self.reserve_within(scope, None).await
    }

    /// Reserve a send slot on `scope` only if it is at most `longest`
    /// away (`None`: any; capped at one hour, the longest wait a script
    /// answer may carry); otherwise [`Reservation::TooFar`], and nothing is
    /// reserved. A caller that would give up at a far slot asks this way,
    /// so abandoned reservations do not push the whole fleet's slots later.
    ///
    /// The same round trip first merges the lesson kept by
    /// [`defer`](Self::defer) and gives up any probe lease that one of
    /// this process's unanswered reservations was granted unawares.
    pub async fn reserve_within(
        &self,
        scope: &str,
        longest: Option<Duration>,
    ) -> Result<Reservation, FleetError> {
        let longest_us = longest.map_or(-1, |longest| {
            i64::try_from(longest.min(Duration::from_secs(3600)).as_micros()).unwrap_or(i64::MAX)
        });
        let s = &self.inner.settings;
        let keys = ScopeKeys::new(&s.prefix, scope);
        let token = format!(
            "{}:{}",
            self.inner.member,
            self.inner.tokens.fetch_add(1, Ordering::Relaxed)
        );
        let out = self.carry().outgoing(scope);
        let mut invocation = self.inner.reserve.key(&keys.state);
        invocation
            .key(&keys.members)
            .arg(&self.inner.member)
            .arg(millis(s.probe_lease))
            .arg(millis(s.poll))
            .arg(millis(s.gap))
            .arg(millis(s.member_window))
            .arg(millis(s.ttl))
            .arg(millis(s.headroom))
            .arg(longest_us)
            .arg(&token)
            .arg(&out.unanswered);
        if let Some((lesson, age)) = out.lesson_aged(std::time::Instant::now()) {
            lesson.push_args(&mut invocation, s.margin, age);
        }
        let reply: Vec<i64> = match self.invoke(&invocation).await {
            Ok(reply) => reply,
            Err(error) => {
                self.carry().unanswered(scope, &token, out);
                return Err(error);
            }
        };
        let [kind, wait_us, members, interval_us, probe] = reply[..] else {
            return Err(FleetError::reply());
        };
        self.carry()
            .answered(scope, &token, kind == 0 && probe == 1);
        let after = micros(wait_us);
        Ok(match kind {
            0 => Reservation::Go {
                after,
                members: u32::try_from(members.max(1)).unwrap_or(u32::MAX),
                interval: (interval_us > 0).then(|| micros(interval_us)),
                probe: probe == 1,
            },
            2 => Reservation::TooFar { after },
            _ => Reservation::AskAgain { after },
        })
    }

    /// Keep what a response on `scope` taught for this process's next
    /// reservation there, which merges it in the same round trip (a newer
    /// lesson replaces a kept one). For a lesson that only confirms what
    /// the fleet knows; a refusal, or anything the others must hear now,
    /// goes out with [`publish`](Self::publish). A kept lesson with no
    /// next reservation is never shared: the fleet loses a confirmation.
    pub fn defer(&self, scope: &str, lesson: Lesson) {
        self.carry().defer(scope, lesson, std::time::Instant::now());
    }

    /// Publish what a response on `scope` taught, now (one round trip).
    /// Returns the shared interval after the merge, once one is known.
    pub async fn publish(
        &self,
        scope: &str,
        lesson: &Lesson,
    ) -> Result<Option<Duration>, FleetError> {
        let s = &self.inner.settings;
        let keys = ScopeKeys::new(&s.prefix, scope);
        let mut invocation = self.inner.publish.key(&keys.state);
        invocation.arg(millis(s.ttl)).arg(millis(s.headroom));
        lesson.push_args(&mut invocation, s.margin, Duration::ZERO);
        let reply: Vec<i64> = self.invoke(&invocation).await?;
        self.carry().published(scope, lesson);
        let [_, interval_us] = reply[..] else {
            return Err(FleetError::reply());
        };
        Ok((interval_us > 0).then(|| micros(interval_us)))
    }

    /// Give up this process's probe lease on `scope` (its send failed
    /// before the server said anything): the next reservation probes
    /// instead of every member waiting out the lease. Nothing is learned,
    /// so the fleet still sends one probe at a time. Only a lease granted
    /// to this process goes: the script compares the lease's token with
    /// the one this process was granted, so a lease that ran out and went
    /// to another process stays that process's. Returns whether a lease
    /// was given up (no call at all when this process holds none).
    pub async fn release_probe(&self, scope: &str) -> Result<bool, FleetError> {
        let Some(token) = self.carry().take_probe(scope) else {
            return Ok(false);
        };
        let keys = ScopeKeys::new(&self.inner.settings.prefix, scope);
        let mut invocation = self.inner.release.key(&keys.state);
        invocation.arg(&token);
        let released: i64 = self.invoke(&invocation).await?;
        Ok(released == 1)
    }

    /// How long a probe lease lasts ([`RedisFleetBuilder::probe_lease`]).
    pub(crate) fn probe_lease(&self) -> Duration {
        self.inner.settings.probe_lease
    }

    /// How often a process asks again while another probes.
    pub(crate) fn poll(&self) -> Duration {
        self.inner.settings.poll
    }

    /// The interval margin (see [`RedisFleetBuilder::interval_margin`]).
    pub(crate) fn margin(&self) -> f64 {
        self.inner.settings.margin
    }

    /// A `PING` through the same connection, within the same deadline (the
    /// floor the store calls are compared with).
    pub async fn ping(&self) -> Result<(), FleetError> {
        let call = async {
            let cmd = redis::cmd("PING");
            let _: String = match &self.inner.connection {
                Connection::Single(c) => cmd.query_async(&mut c.clone()).await?,
                Connection::Cluster(c) => cmd.query_async(&mut c.clone()).await?,
            };
            Ok(())
        };
        self.timed(call).await
    }

    async fn invoke<T: FromRedisValue>(
        &self,
        invocation: &ScriptInvocation<'_>,
    ) -> Result<T, FleetError> {
        let call = async {
            Ok(match &self.inner.connection {
                Connection::Single(c) => invocation.invoke_async(&mut c.clone()).await?,
                Connection::Cluster(c) => invocation.invoke_async(&mut c.clone()).await?,
            })
        };
        self.timed(call).await
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Script microseconds (clamped: an absurd wait is capped at one hour).
fn micros(us: i64) -> Duration {
    Duration::from_micros(u64::try_from(us).unwrap_or(0)).min(Duration::from_secs(3600))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absurd_settings_are_clamped() {
        let builder = RedisFleet::builder("redis://127.0.0.1:1")
            .key_ttl(Duration::MAX)
            .breaker(BreakerSettings {
                failures_to_open: 0,
                open_for: Duration::MAX,
            });
        assert_eq!(builder.settings.ttl, MAX_KEY_TTL);
        assert_eq!(builder.settings.breaker.failures_to_open, 1);
        assert_eq!(
            builder.settings.breaker.open_for,
            super::super::MAX_OPEN_FOR
        );
        let short = RedisFleet::builder("redis://127.0.0.1:1").key_ttl(Duration::ZERO);
        assert_eq!(short.settings.ttl, Duration::from_secs(1));
    }

    #[test]
    fn urls_name_one_server_or_a_cluster() {
        assert!(
            matches!(endpoints("redis://127.0.0.1:6379"), Endpoints::Single(u) if u == "redis://127.0.0.1:6379")
        );
        let Endpoints::Cluster(nodes) = endpoints("redis+cluster://127.0.0.1:7000,127.0.0.1:7001")
        else {
            panic!("a cluster URL")
        };
        assert_eq!(nodes, ["redis://127.0.0.1:7000", "redis://127.0.0.1:7001"]);
        assert!(
            matches!(endpoints("redis+cluster://127.0.0.1:7000"), Endpoints::Cluster(n) if n.len() == 1)
        );
        assert!(
            matches!(endpoints("redis://a:1, redis://b:2"), Endpoints::Cluster(n) if n.len() == 2)
        );
    }
}
