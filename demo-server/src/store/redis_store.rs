//! The Redis store: one Lua script per atomic algorithm (`EVALSHA`, with
//! `SCRIPT LOAD` and a retry on `NOSCRIPT`, so a restarted Redis with an empty
//! script cache is handled), and the two non-atomic ones as separate commands.
//!
//! One Redis, or a Redis Cluster (`redis+cluster://host:port[,host:port…]`
//! or a comma-separated list of nodes): every script touches one key, and
//! every key carries a hash tag, so each check runs on the node owning it.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::{AsyncCommands, Cmd, Pipeline, RedisFuture, Script, Value};

use crate::algorithms::{self, Parts, concurrency, fixed_window, token_bucket};
use crate::{Algorithm, Decision, Policy, StoreError};

/// A connection to one Redis (reconnecting, multiplexed) or to a Redis
/// Cluster (routing each command to the node owning its key).
#[derive(Clone)]
pub enum RedisConnection {
    /// One server.
    Single(ConnectionManager),
    /// A cluster.
    Cluster(ClusterConnection),
}

impl ConnectionLike for RedisConnection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            RedisConnection::Single(c) => c.req_packed_command(cmd),
            RedisConnection::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            RedisConnection::Single(c) => c.req_packed_commands(pipeline, offset, count),
            RedisConnection::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            RedisConnection::Single(c) => c.get_db(),
            RedisConnection::Cluster(c) => c.get_db(),
        }
    }
}

/// The nodes of a cluster URL, or `None` for a single server:
/// `redis+cluster://a:1,b:2`, or a list `redis://a:1,redis://b:2` (the SDK's
/// fleet store reads its `--fleet-redis` URLs the same way).
pub use courteous::fleet::cluster_nodes;

/// Redis (or a Redis Cluster) behind a reconnecting multiplexed connection.
/// Cheap to clone.
#[derive(Clone)]
pub struct RedisStore {
    connection: RedisConnection,
    scripts: Arc<Scripts>,
    address: String,
}

struct Scripts {
    token_bucket: Script,
    fixed_window: Script,
    client_window: Script,
    sliding_log: Script,
    sliding_window: Script,
    leaky_bucket: Script,
    concurrency: Script,
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStore")
            .field("address", &self.address)
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    /// Reconnect attempts after a lost connection: a few quick ones (from 20 ms,
    /// doubling, at most 500 ms apart), then the next command starts a new round.
    /// Each attempt gives up after 250 ms. The per-check deadline bounds the wait anyway.
    /// A cluster URL (see [`cluster_nodes`]) connects to every node given
    /// and discovers the rest.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        if let Some(nodes) = cluster_nodes(url) {
            let address = format!("cluster {}", nodes.join(","));
            let client = ClusterClient::builder(nodes)
                .connection_timeout(Duration::from_millis(250))
                .response_timeout(Duration::from_secs(2))
                .retries(3)
                .build()?;
            let connection = RedisConnection::Cluster(client.get_async_connection().await?);
            return Ok(Self::with(connection, address));
        }
        let client = redis::Client::open(url)?;
        let address = client.get_connection_info().addr().to_string();
        let config = ConnectionManagerConfig::new()
            .set_number_of_retries(3)
            .set_min_delay(Duration::from_millis(20))
            .set_max_delay(Duration::from_millis(500))
            .set_connection_timeout(Some(Duration::from_millis(250)))
            .set_response_timeout(Some(Duration::from_secs(2)));
        let connection = ConnectionManager::new_with_config(client, config).await?;
        Ok(Self::with(RedisConnection::Single(connection), address))
    }

    fn with(connection: RedisConnection, address: String) -> Self {
        Self {
            connection,
            scripts: Arc::new(Scripts {
                token_bucket: Script::new(algorithms::TOKEN_BUCKET_LUA),
                fixed_window: Script::new(algorithms::FIXED_WINDOW_LUA),
                client_window: Script::new(algorithms::CLIENT_WINDOW_LUA),
                sliding_log: Script::new(algorithms::SLIDING_LOG_LUA),
                sliding_window: Script::new(algorithms::SLIDING_WINDOW_LUA),
                leaky_bucket: Script::new(algorithms::LEAKY_BUCKET_LUA),
                concurrency: Script::new(algorithms::CONCURRENCY_LUA),
            }),
            address,
        }
    }

    /// `host:port` of the server (`cluster host:port,…` for a cluster).
    pub fn address(&self) -> &str {
        &self.address
    }

    /// A clone of the underlying connection, for raw commands (`PING`, `MEMORY USAGE`).
    pub fn connection(&self) -> RedisConnection {
        self.connection.clone()
    }

    /// Check one request.
    pub async fn check(&self, policy: &Policy, key: &str) -> Result<Decision, StoreError> {
        let (limit, window) = (policy.limit(), policy.window_ms());
        let mut con = self.connection.clone();
        let script = |script| invocation(script, key, limit, window);
        let parts: Parts = match policy.algorithm() {
            Algorithm::TokenBucket => to_parts(
                script(&self.scripts.token_bucket)
                    .invoke_async(&mut con)
                    .await?,
            )?,
            Algorithm::FixedWindowLua => to_parts(
                script(&self.scripts.fixed_window)
                    .invoke_async(&mut con)
                    .await?,
            )?,
            Algorithm::ClientWindow => to_parts(
                script(&self.scripts.client_window)
                    .invoke_async(&mut con)
                    .await?,
            )?,
            Algorithm::SlidingLog => {
                let member = format!("{:016x}", rand::random::<u64>());
                let mut invocation = script(&self.scripts.sliding_log);
                invocation.arg(member);
                to_parts(invocation.invoke_async(&mut con).await?)?
            }
            Algorithm::SlidingWindow => to_parts(
                script(&self.scripts.sliding_window)
                    .invoke_async(&mut con)
                    .await?,
            )?,
            Algorithm::LeakyBucket => to_parts(
                script(&self.scripts.leaky_bucket)
                    .invoke_async(&mut con)
                    .await?,
            )?,
            Algorithm::Concurrency => {
                let lease = rand::random::<u64>();
                let mut invocation = script(&self.scripts.concurrency);
                invocation.arg(lease).arg(concurrency::RETRY_MS);
                let parts = to_parts(invocation.invoke_async(&mut con).await?)?;
                return Ok(Decision::from_parts(limit, parts).with_lease(lease));
            }
            Algorithm::FixedWindow => {
                fixed_window_incr_then_expire(&mut con, key, limit, window).await?
            }
            Algorithm::RacyBucket => {
                racy_bucket(&mut con, key, limit, window, policy.racy_gap()).await?
            }
        };
        Ok(Decision::from_parts(limit, parts))
    }

    /// Give back the lease of an admitted request (`ZREM`; concurrency only).
    pub async fn release(&self, key: &str, lease: u64) -> Result<(), StoreError> {
        let mut con = self.connection.clone();
        let _: u64 = con.zrem(key, lease).await?;
        Ok(())
    }

    /// Redis `TIME` in milliseconds.
    pub async fn now_ms(&self) -> Result<u64, StoreError> {
        let mut con = self.connection.clone();
        let (secs, micros): (u64, u64) = redis::cmd("TIME").query_async(&mut con).await?;
        Ok(secs * 1000 + micros / 1000)
    }

    /// Redis `PING`.
    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut con = self.connection.clone();
        let _: String = redis::cmd("PING").query_async(&mut con).await?;
        Ok(())
    }

    /// `MEMORY USAGE key SAMPLES 0` (exact), or `None` when the key does not exist.
    pub async fn memory_usage(&self, key: &str) -> Result<Option<u64>, StoreError> {
        let mut con = self.connection.clone();
        let bytes: Option<u64> = redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(key)
            .arg("SAMPLES")
            .arg(0)
            .query_async(&mut con)
            .await?;
        Ok(bytes)
    }

    /// The Redis key an algorithm stores a client's state under, now.
    /// Only `fixed-window` differs from `base`: it has one key per window.
    pub fn storage_key(&self, policy: &Policy, base: &str) -> String {
        match policy.algorithm() {
            Algorithm::FixedWindow => window_key(
                base,
                fixed_window::index(local_now_ms(), policy.window_ms()),
            ),
            _ => base.to_owned(),
        }
    }
}

/// `script` with the arguments every algorithm's script takes.
fn invocation<'a>(
    script: &'a redis::Script,
    key: &str,
    limit: u64,
    window_ms: u64,
) -> redis::ScriptInvocation<'a> {
    let mut invocation = script.key(key);
    invocation.arg(limit).arg(window_ms);
    invocation
}

fn to_parts(values: Vec<i64>) -> Result<Parts, StoreError> {
    values.try_into().map_err(|_| StoreError::bad_reply())
}

fn window_key(base: &str, index: u64) -> String {
    format!("{base}:{index}")
}

/// The replica's clock: only `fixed-window` uses it (its key names the window).
fn local_now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The common fixed window: `INCR` (counts rejections too), then `PEXPIRE` as a
/// second round trip. A crash between the two leaves a key without TTL.
async fn fixed_window_incr_then_expire(
    con: &mut RedisConnection,
    base: &str,
    limit: u64,
    window_ms: u64,
) -> Result<Parts, StoreError> {
    let now = local_now_ms();
    let key = window_key(base, fixed_window::index(now, window_ms));
    let count: u64 = redis::cmd("INCR").arg(&key).query_async(con).await?;
    let ttl = fixed_window::to_end(now, window_ms) + 1000;
    let _: bool = con.pexpire(&key, ttl as i64).await?;
    Ok(fixed_window::after_incr(count, limit, window_ms, now))
}

/// COUNTER-EXAMPLE. Read (`HMGET` with `TIME`), compute, write (`HSET` +
/// `PEXPIRE`): concurrent checks all read the same tokens and all admit.
async fn racy_bucket(
    con: &mut RedisConnection,
    key: &str,
    capacity: u64,
    window_ms: u64,
    gap: Duration,
) -> Result<Parts, StoreError> {
    let ((tokens, updated), (secs, micros)): ((Option<f64>, Option<f64>), (u64, u64)) =
        redis::pipe()
            .cmd("HMGET")
            .arg(key)
            .arg("t")
            .arg("ts")
            .cmd("TIME")
            .query_async(con)
            .await?;
    let now = secs as f64 * 1000.0 + micros as f64 / 1000.0;
    let state = tokens
        .zip(updated)
        .map(|(tokens, updated_ms)| token_bucket::Bucket { tokens, updated_ms });
    let (bucket, parts) = token_bucket::take(state, capacity, window_ms, now);
    if !gap.is_zero() {
        tokio::time::sleep(gap).await;
    }
    let _: () = redis::pipe()
        .hset_multiple(
            key,
            &[
                ("t", format!("{:.6}", bucket.tokens)),
                ("ts", format!("{:.3}", bucket.updated_ms)),
            ],
        )
        .ignore()
        .pexpire(key, token_bucket::ttl_ms(window_ms) as i64)
        .ignore()
        .query_async(con)
        .await?;
    Ok(parts)
}
