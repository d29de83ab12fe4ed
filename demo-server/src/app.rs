//! The HTTP API: `GET /` (and `/api`) rate-limited, `GET /stats`, `GET /healthz`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{ConnectInfo, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::identity::{ClientIdentity, IdentityConfig};
use crate::limiter::{Limiter, Verdict};
use crate::stats::{Outcome, Stats};
use crate::{FailMode, HeaderStyle, KeySpace, Policy, Store, headers, health, problem};

/// How long a client is told to wait when the limiter is down and fails closed.
pub const UNAVAILABLE_RETRY_AFTER: Duration = Duration::from_secs(1);

/// Everything a replica needs besides the store. Defaults: header style `all`,
/// fail open, deadline and in-flight bound of [`Limiter`], `X-Client-Id` /
/// `X-Api-Key` identities, key space `courteous:v1`.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    policy: Policy,
    headers: HeaderStyle,
    fail: FailMode,
    deadline: Duration,
    max_in_flight: usize,
    identity: IdentityConfig,
    keys: KeySpace,
}

impl ServerConfig {
    /// Defaults around a policy.
    pub fn new(policy: Policy) -> Self {
        Self {
            policy,
            headers: HeaderStyle::default(),
            fail: FailMode::default(),
            deadline: Limiter::DEFAULT_DEADLINE,
            max_in_flight: Limiter::DEFAULT_MAX_IN_FLIGHT,
            identity: IdentityConfig::default(),
            keys: KeySpace::default(),
        }
    }
    /// Header dialect.
    pub fn headers(mut self, style: HeaderStyle) -> Self {
        self.headers = style;
        self
    }
    /// Failure policy.
    pub fn fail(mut self, fail: FailMode) -> Self {
        self.fail = fail;
        self
    }
    /// Per-check deadline.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }
    /// Checks in flight per replica.
    pub fn max_in_flight(mut self, permits: usize) -> Self {
        self.max_in_flight = permits;
        self
    }
    /// Where identities come from.
    pub fn identity(mut self, identity: IdentityConfig) -> Self {
        self.identity = identity;
        self
    }
    /// Namespace and policy version of the keys (use a fresh namespace per run to isolate runs).
    pub fn keys(mut self, keys: KeySpace) -> Self {
        self.keys = keys;
        self
    }
    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }
}

/// Shared state of one replica. Cheap to clone.
#[derive(Debug, Clone)]
pub struct AppState {
    inner: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    limiter: Limiter,
    headers: HeaderStyle,
    identity: IdentityConfig,
    keys: KeySpace,
    stats: Stats,
}

impl AppState {
    /// A replica of `config` over `store`.
    pub fn new(config: ServerConfig, store: Store) -> Self {
        let limiter = Limiter::new(store, config.policy)
            .fail_mode(config.fail)
            .deadline(config.deadline)
            .max_in_flight(config.max_in_flight);
        Self {
            inner: Arc::new(Shared {
                limiter,
                headers: config.headers,
                identity: config.identity,
                keys: config.keys,
                stats: Stats::default(),
            }),
        }
    }

    /// This replica's per-client counters.
    pub fn stats(&self) -> &Stats {
        &self.inner.stats
    }

    /// The limiter (policy, store).
    pub fn limiter(&self) -> &Limiter {
        &self.inner.limiter
    }

    /// The key this replica stores a client's state under (base key; see
    /// [`crate::RedisStore::storage_key`]).
    pub fn key_for(&self, client_hash: &str) -> String {
        self.inner
            .keys
            .key(client_hash, self.inner.limiter.policy().algorithm())
    }
}

/// The router of one replica.
pub fn app(state: AppState) -> Router {
    Router::new()
        .route("/", get(limited))
        .route("/api", get(limited))
        .route("/stats", get(stats))
        .route("/healthz", get(healthz))
        .with_state(state)
}

async fn limited(
    State(state): State<AppState>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    request_headers: HeaderMap,
) -> Response {
    let shared = &state.inner;
    let client = shared.identity.identify(
        &request_headers,
        peer.map(|Extension(ConnectInfo(addr))| addr.ip()),
    );
    let Some(verdict) = check_and_count(&state, &client).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    tracing::debug!(client = client.label(), ?verdict, "check");
    let policy = shared.limiter.policy();
    let mut out = HeaderMap::new();
    let (status, body) = match verdict {
        Verdict::Allowed(d) => {
            headers::insert_rate_limit_headers(&mut out, shared.headers, policy, &d);
            let body = json!({"ok": true, "client": client.label(), "remaining": d.remaining});
            (StatusCode::OK, body)
        }
        Verdict::Rejected(d) => {
            headers::insert_rate_limit_headers(&mut out, shared.headers, policy, &d);
            if shared.headers.has_hint() {
                headers::insert_retry_after(&mut out, d.retry_after);
            }
            let ms = shared.headers.has_ms_hint().then_some(d.retry_after);
            let body = problem::too_many_requests(ms, shared.headers.has_ietf(), policy.name());
            (StatusCode::TOO_MANY_REQUESTS, body)
        }
        Verdict::FailedOpen(_) => {
            let body = json!({"ok": true, "client": client.label(), "limiter": "unavailable"});
            (StatusCode::OK, body)
        }
        Verdict::Unavailable(_) => {
            headers::insert_retry_after(&mut out, UNAVAILABLE_RETRY_AFTER);
            (
                StatusCode::SERVICE_UNAVAILABLE,
                problem::limiter_unavailable(UNAVAILABLE_RETRY_AFTER),
            )
        }
    };
    if status != StatusCode::OK {
        out.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(problem::PROBLEM_JSON),
        );
        return (status, out, body.to_string()).into_response();
    }
    (status, out, Json(body)).into_response()
}

/// Check `client` and count the outcome in `/stats`, on a task of its own:
/// when the client hangs up, axum drops the handler, but the check (already
/// sent to the store, bounded by the deadline) still ends and is counted, so
/// every request received has exactly one outcome. `None` only if the check
/// panicked.
async fn check_and_count(state: &AppState, client: &ClientIdentity) -> Option<Verdict> {
    let (state, client) = (state.clone(), client.clone());
    let task = tokio::spawn(async move {
        let key = state.key_for(client.hash());
        let verdict = state.inner.limiter.check(&key).await;
        state.inner.stats.record(&client, outcome(&verdict));
        verdict
    });
    task.await.ok()
}

fn outcome(verdict: &Verdict) -> Outcome {
    match verdict {
        Verdict::Allowed(_) => Outcome::Allowed,
        Verdict::Rejected(_) => Outcome::Rejected,
        Verdict::FailedOpen(_) => Outcome::FailedOpen,
        Verdict::Unavailable(_) => Outcome::Unavailable,
    }
}

#[derive(Debug, Deserialize)]
struct StatsQuery {
    client: Option<String>,
}

async fn stats(State(state): State<AppState>, Query(query): Query<StatsQuery>) -> Json<Value> {
    let stats = state.stats();
    match query.client {
        Some(label) => {
            Json(json!({ "client": label, "stats": stats.client(&label).unwrap_or_default() }))
        }
        None => Json(json!({ "clients": stats.snapshot(), "total": stats.total() })),
    }
}

/// 200 when the store answers a `PING` within the check deadline, 503 when it
/// does not (whatever the fail mode: a fail-open replica still serves `/`).
async fn healthz(State(state): State<AppState>) -> (StatusCode, Json<Value>) {
    let limiter = state.limiter();
    let health = health::probe(limiter.store(), limiter.check_deadline()).await;
    let status = if health.healthy {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body = json!({
        "status": if health.healthy { "ok" } else { "unavailable" },
        "store": health.store,
        "store_reachable": health.healthy,
        "reason": health.reason,
        "deadline_ms": health.deadline_ms,
        "latency_ms": health.latency_ms,
        "algorithm": limiter.policy().algorithm(),
        "fail": limiter.fail(),
    });
    (status, Json(body))
}
