//! A per-request round-robin HTTP proxy in front of the replicas.
//!
//! Round robin per *request*, not per connection: a keep-alive client holds
//! one connection for its whole run, so per-connection balancing would pin it
//! to one replica and hide what sharing a quota across replicas does. Every
//! answer is recorded (client id, time, status) for the timeline.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, StatusCode, header};
use axum::response::{IntoResponse, Response};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::recorder::Recorder;

/// Largest request body forwarded (the demo API takes none).
const MAX_BODY: usize = 64 * 1024;
/// Upper bound on one upstream exchange.
const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(10);
/// The header the recorder reads the client from.
const CLIENT_ID: HeaderName = HeaderName::from_static("x-client-id");

#[derive(Debug)]
struct Shared {
    upstreams: Vec<String>,
    next: AtomicUsize,
    hits: Vec<AtomicUsize>,
    http: reqwest::Client,
    recorder: Recorder,
}

/// A running proxy. Dropping it stops it.
#[derive(Debug)]
pub struct RoundRobinProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl RoundRobinProxy {
    /// Listen on an ephemeral loopback port and forward each request to the
    /// next of `upstreams` (base URLs such as `http://127.0.0.1:1234`).
    pub async fn spawn(upstreams: Vec<String>, recorder: Recorder) -> std::io::Result<Self> {
        if upstreams.is_empty() {
            return Err(std::io::Error::other("a proxy needs at least one upstream"));
        }
        let http = reqwest::Client::builder()
            .timeout(UPSTREAM_TIMEOUT)
            .build()
            .map_err(std::io::Error::other)?;
        let shared = Arc::new(Shared {
            hits: upstreams.iter().map(|_| AtomicUsize::new(0)).collect(),
            upstreams: upstreams
                .into_iter()
                .map(|u| u.trim_end_matches('/').to_owned())
                .collect(),
            next: AtomicUsize::new(0),
            http,
            recorder,
        });
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let router = Router::new().fallback(forward).with_state(shared.clone());
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(async move {
                    let _ = stopped.await;
                })
                .await
        });
        Ok(Self {
            addr,
            shared,
            stop: Some(stop),
            task,
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests forwarded to each upstream, in the order given.
    pub fn hits(&self) -> Vec<usize> {
        self.shared
            .hits
            .iter()
            .map(|h| h.load(Ordering::Relaxed))
            .collect()
    }
}

impl Drop for RoundRobinProxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.abort();
    }
}

/// Connection-level headers that must not be forwarded (RFC 9110 §7.6.1),
/// plus those the HTTP stack recomputes.
fn is_hop_by_hop(name: &HeaderName) -> bool {
    name == header::CONNECTION
        || name == header::HOST
        || name == header::CONTENT_LENGTH
        || name == header::TRANSFER_ENCODING
        || name == header::TE
        || name == header::TRAILER
        || name == header::UPGRADE
        || name == header::PROXY_AUTHORIZATION
        || name == header::PROXY_AUTHENTICATE
        || name.as_str() == "keep-alive"
}

fn end_to_end(headers: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        if !is_hop_by_hop(name) {
            out.append(name.clone(), value.clone());
        }
    }
    out
}

async fn forward(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let index = shared.next.fetch_add(1, Ordering::Relaxed) % shared.upstreams.len();
    shared.hits[index].fetch_add(1, Ordering::Relaxed);
    let (parts, body) = request.into_parts();
    let client = parts
        .headers
        .get(&CLIENT_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let url = format!("{}{}", shared.upstreams[index], path);
    let response = match to_bytes(body, MAX_BODY).await {
        Ok(bytes) => exchange(&shared.http, parts.method, &url, &parts.headers, bytes).await,
        Err(_) => StatusCode::PAYLOAD_TOO_LARGE.into_response(),
    };
    shared.recorder.record(&client, response.status().as_u16());
    response
}

async fn exchange(
    http: &reqwest::Client,
    method: axum::http::Method,
    url: &str,
    headers: &HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let sent = http
        .request(method, url)
        .headers(end_to_end(headers))
        .body(body)
        .send()
        .await;
    let upstream = match sent {
        Ok(upstream) => upstream,
        Err(e) => return (StatusCode::BAD_GATEWAY, format!("upstream: {e}")).into_response(),
    };
    let status = upstream.status();
    let headers = end_to_end(upstream.headers());
    match upstream.bytes().await {
        Ok(bytes) => {
            let mut response = Response::new(Body::from(bytes));
            *response.status_mut() = status;
            *response.headers_mut() = headers;
            response
        }
        Err(e) => (StatusCode::BAD_GATEWAY, format!("upstream body: {e}")).into_response(),
    }
}
