//! The HTTP API: `GET /` (and `/api`) rate-limited, `GET /api/<name>` for
//! each named route (its own limiter), `GET /stats`, `GET /healthz`.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{ConnectInfo, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::identity::{ClientIdentity, IdentityConfig};
use crate::limiter::{Limiter, Verdict};
use crate::route::{self, Latency, RouteConfig};
use crate::stats::{Outcome, Stats};
use crate::{FailMode, HeaderStyle, KeySpace, Policy, Store, headers, health, problem};

/// How long a client is told to wait when the limiter is down and fails closed.
pub const UNAVAILABLE_RETRY_AFTER: Duration = Duration::from_secs(1);

/// Everything a replica needs besides the store. Defaults: header style `all`,
/// no added latency, no named routes, fail open, deadline and in-flight
/// bound of [`Limiter`], `X-Client-Id` / `X-Api-Key` identities, key space
/// `courteous:v1`.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    policy: Policy,
    headers: HeaderStyle,
    latency: Latency,
    routes: Vec<(String, RouteConfig)>,
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
            latency: Latency::default(),
            routes: Vec::new(),
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
    /// Latency of every answer of the default route (`/`, `/api`).
    pub fn latency(mut self, latency: Latency) -> Self {
        self.latency = latency;
        self
    }
    /// Serve `route` at `/api/<name>` with a quota of its own (a name given
    /// twice keeps the last).
    pub fn route(mut self, name: &str, route: RouteConfig) -> Result<Self, crate::ConfigError> {
        route::check_name(name)?;
        self.routes.retain(|(n, _)| n != name);
        self.routes.push((name.to_owned(), route));
        Ok(self)
    }
    /// The named routes.
    pub fn routes(&self) -> &[(String, RouteConfig)] {
        &self.routes
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
    /// Checks in flight per replica and route (each route has its own bound).
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
    default_route: Route,
    routes: HashMap<String, Route>,
    identity: IdentityConfig,
    keys: KeySpace,
    stats: Stats,
}

/// A route being served: its limiter and how it answers.
#[derive(Debug)]
struct Route {
    /// `None` for the default route; part of the keys otherwise.
    name: Option<String>,
    limiter: Limiter,
    headers: HeaderStyle,
    latency: Latency,
}

impl AppState {
    /// A replica of `config` over `store`.
    pub fn new(config: ServerConfig, store: Store) -> Self {
        let limiter = |policy: Policy| {
            Limiter::new(store.clone(), policy)
                .fail_mode(config.fail)
                .deadline(config.deadline)
                .max_in_flight(config.max_in_flight)
        };
        let routes = config
            .routes
            .iter()
            .map(|(name, r)| {
                let route = Route {
                    name: Some(name.clone()),
                    limiter: limiter(r.policy.clone()),
                    headers: r.headers,
                    latency: r.latency,
                };
                (name.clone(), route)
            })
            .collect();
        let default_route = Route {
            name: None,
            limiter: limiter(config.policy),
            headers: config.headers,
            latency: config.latency,
        };
        Self {
            inner: Arc::new(Shared {
                default_route,
                routes,
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

    /// The default route's limiter (policy, store).
    pub fn limiter(&self) -> &Limiter {
        &self.inner.default_route.limiter
    }

    /// The key this replica stores a client's state under on the default
    /// route (base key; see [`crate::RedisStore::storage_key`]).
    pub fn key_for(&self, client_hash: &str) -> String {
        self.key_on(&self.inner.default_route, client_hash)
    }

    /// A route's key: the default route's with `:<route name>` appended.
    fn key_on(&self, route: &Route, client_hash: &str) -> String {
        let base = self
            .inner
            .keys
            .key(client_hash, route.limiter.policy().algorithm());
        match &route.name {
            None => base,
            Some(name) => format!("{base}:{name}"),
        }
    }
}

/// The router of one replica.
pub fn app(state: AppState) -> Router {
    Router::new()
        .route("/", get(limited))
        .route("/api", get(limited))
        .route("/api/{name}", get(limited_route))
        .route("/stats", get(stats))
        .route("/healthz", get(healthz))
        .with_state(state)
}

async fn limited(
    State(state): State<AppState>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    request_headers: HeaderMap,
) -> Response {
    serve_route(&state, &state.inner.default_route, peer, &request_headers).await
}

async fn limited_route(
    State(state): State<AppState>,
    Path(name): Path<String>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    request_headers: HeaderMap,
) -> Response {
    match state.inner.routes.get(&name) {
        Some(route) => serve_route(&state, route, peer, &request_headers).await,
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

async fn serve_route(
    state: &AppState,
    route: &Route,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    request_headers: &HeaderMap,
) -> Response {
    let client = state.inner.identity.identify(
        request_headers,
        peer.map(|Extension(ConnectInfo(addr))| addr.ip()),
    );
    let key = state.key_on(route, client.hash());
    let Some(verdict) = check_and_count(state, route, key, &client).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    tracing::debug!(client = client.label(), ?verdict, "check");
    let policy = route.limiter.policy();
    let style = route.headers;
    let mut out = HeaderMap::new();
    let (status, body) = match verdict {
        Verdict::Allowed(d) => {
            headers::insert_rate_limit_headers(&mut out, style, policy, &d);
            let body = json!({"ok": true, "client": client.label(), "remaining": d.remaining});
            (StatusCode::OK, body)
        }
        Verdict::Rejected(d) => {
            headers::insert_rate_limit_headers(&mut out, style, policy, &d);
            headers::insert_hint(&mut out, style, &d);
            let ms = style.has_ms_hint().then_some(d.retry_after);
            let body = problem::too_many_requests(ms, style.has_ietf(), policy.name());
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

/// Check `client` on `route`, wait the route's latency (the service time a
/// concurrency lease is held for), give the lease back and count the
/// outcome in `/stats`, on a task of its own: when the client hangs up,
/// axum drops the handler, but the check (already sent to the store,
/// bounded by the deadline) still ends, its lease is given back and it is
/// counted, so every request received has exactly one outcome. `None` only
/// if the task panicked.
async fn check_and_count(
    state: &AppState,
    route: &Route,
    key: String,
    client: &ClientIdentity,
) -> Option<Verdict> {
    let (state, client) = (state.clone(), client.clone());
    let (limiter, latency) = (route.limiter.clone(), route.latency);
    let task = tokio::spawn(async move {
        let verdict = limiter.check(&key).await;
        let pause = latency.sample();
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        if let Verdict::Allowed(decision) = &verdict {
            limiter.release(&key, decision).await;
        }
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
