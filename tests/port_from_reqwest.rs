//! A typical reqwest program, ported to courteous by changing only the line
//! that builds the client: a JSON POST with an idempotency key, a query GET
//! with bearer auth and a multipart upload, over HTTPS to a local axum
//! server with a self-signed certificate that the reqwest builder trusts.
//!
//! The program is written once, as a macro over the client; the server
//! refuses the first POST with a 429, which the reqwest version fails on
//! and the courteous version waits out.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

type Failure = Box<dyn std::error::Error + Send + Sync>;

/// The program, as its author wrote it for reqwest. `$client` is the only
/// thing that differs between the two runs.
macro_rules! program {
    ($client:expr, $base:expr) => {
        async {
            let client = $client;
            let base: &str = $base;
            let order: serde_json::Value = client
                .post(format!("{base}/orders"))
                .header("idempotency-key", "order-1")
                .json(&serde_json::json!({ "item": "book", "quantity": 2 }))
                .send()
                .await?
                .error_for_status()?
                .json()
                .await?;
            let found = client
                .get(format!("{base}/search"))
                .query(&[("q", "rust"), ("page", "2")])
                .bearer_auth("s3cret")
                .send()
                .await?
                .error_for_status()?
                .text()
                .await?;
            let form = reqwest::multipart::Form::new().text("name", "report").part(
                "file",
                reqwest::multipart::Part::bytes(b"a,b\n1,2\n".to_vec()).file_name("r.csv"),
            );
            let uploaded = client
                .post(format!("{base}/upload"))
                .multipart(form)
                .send()
                .await?
                .error_for_status()?
                .text()
                .await?;
            Ok::<_, Failure>((order, found, uploaded))
        }
    };
}

#[derive(Clone, Default)]
struct Seen {
    orders: Arc<AtomicUsize>,
}

async fn orders(State(seen): State<Seen>, headers: HeaderMap, body: Bytes) -> Response {
    if seen.orders.fetch_add(1, Ordering::SeqCst) == 0 {
        return (StatusCode::TOO_MANY_REQUESTS, [("retry-after-ms", "50")]).into_response();
    }
    let key = headers.get("idempotency-key").cloned();
    let order: serde_json::Value = match serde_json::from_slice(&body) {
        Ok(order) => order,
        Err(_) => return StatusCode::BAD_REQUEST.into_response(),
    };
    let key = key.and_then(|k| k.to_str().ok().map(str::to_owned));
    let reply = serde_json::json!({ "order": order, "key": key });
    (StatusCode::CREATED, axum::Json(reply)).into_response()
}

async fn search(headers: HeaderMap, Query(query): Query<Vec<(String, String)>>) -> Response {
    if headers
        .get("authorization")
        .is_none_or(|v| v != "Bearer s3cret")
    {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let pairs: Vec<String> = query.iter().map(|(k, v)| format!("{k}={v}")).collect();
    pairs.join("&").into_response()
}

async fn upload(headers: HeaderMap, body: Bytes) -> Response {
    let multipart = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("multipart/form-data; boundary="));
    let text = String::from_utf8_lossy(&body);
    if !multipart || !text.contains("name=\"file\"; filename=\"r.csv\"") {
        return StatusCode::BAD_REQUEST.into_response();
    }
    format!("{} bytes, file r.csv", body.len()).into_response()
}

/// Accepts TCP connections and completes a TLS handshake on each.
struct TlsListener {
    tcp: TcpListener,
    acceptor: TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, addr)) = self.tcp.accept().await else {
                continue;
            };
            if let Ok(tls) = self.acceptor.accept(stream).await {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.tcp.local_addr()
    }
}

/// Starts the server on a free loopback port; returns its base URL and the
/// certificate (PEM) a client must trust.
async fn start() -> (String, Vec<u8>, Seen) {
    let issued = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let cert = CertificateDer::from(issued.cert.der().to_vec());
    let key = PrivateKeyDer::from(PrivatePkcs8KeyDer::from(issued.signing_key.serialize_der()));
    let config = ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .unwrap();
    let tcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = tcp.local_addr().unwrap().port();
    let listener = TlsListener {
        tcp,
        acceptor: TlsAcceptor::from(Arc::new(config)),
    };
    let seen = Seen::default();
    let app = Router::new()
        .route("/orders", post(orders))
        .route("/search", get(search))
        .route("/upload", post(upload))
        .with_state(seen.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let base = format!("https://localhost:{port}");
    (base, issued.cert.pem().into_bytes(), seen)
}

/// reqwest's own builder, trusting the test certificate only, and
/// resolving `localhost` to the loopback server.
fn reqwest_client(pem: &[u8], base: &str) -> reqwest::Client {
    let port: u16 = base.rsplit(':').next().unwrap().parse().unwrap();
    reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(pem).unwrap()])
        .resolve("localhost", SocketAddr::from(([127, 0, 0, 1], port)))
        .build()
        .unwrap()
}

#[tokio::test]
async fn the_same_program_runs_on_reqwest_and_on_courteous() {
    // courteous: the refused POST (it has an idempotency key) is retried.
    let (base, pem, seen) = start().await;
    let client = courteous::Client::builder()
        .http_client(reqwest_client(&pem, &base))
        .build();
    let (order, found, uploaded) = program!(client, &base).await.unwrap();
    assert_eq!(order["order"]["item"], "book");
    assert_eq!(order["key"], "order-1");
    assert_eq!(found, "q=rust&page=2");
    assert!(uploaded.ends_with("bytes, file r.csv"), "{uploaded}");
    assert_eq!(seen.orders.load(Ordering::SeqCst), 2);

    // reqwest: the same program stops at the 429.
    let (base, pem, seen) = start().await;
    let client = reqwest_client(&pem, &base);
    let err = program!(client.clone(), &base).await.unwrap_err();
    let err = err.downcast::<reqwest::Error>().unwrap();
    assert_eq!(err.status(), Some(reqwest::StatusCode::TOO_MANY_REQUESTS));
    assert_eq!(seen.orders.load(Ordering::SeqCst), 1);
    // …and runs through once the server has nothing to refuse.
    let (order, found, _) = program!(client, &base).await.unwrap();
    assert_eq!(
        (order["key"].as_str(), found.as_str()),
        (Some("order-1"), "q=rust&page=2")
    );
}

/// A function of the ported program that returns courteous's error: `?`
/// takes courteous's (`send`) and reqwest's (`error_for_status`, `json`)
/// alike, as it took reqwest's alone before the port.
async fn place_order(
    client: &courteous::Client,
    base: &str,
    key: &str,
) -> Result<serde_json::Value, courteous::Error> {
    let order = client
        .post(format!("{base}/orders"))
        .idempotency_key(key)
        .json(&serde_json::json!({ "item": "pen", "quantity": 1 }))
        .send()
        .await?
        .error_for_status()?
        .json()
        .await?;
    Ok(order)
}

/// The search without its token (a 401), or its text read as JSON.
async fn find(
    client: &courteous::Client,
    base: &str,
    token: Option<&str>,
) -> Result<serde_json::Value, courteous::Error> {
    let mut request = client.get(format!("{base}/search")).query(&[("q", "rust")]);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    Ok(request.send().await?.error_for_status()?.json().await?)
}

#[tokio::test]
async fn question_mark_takes_both_errors_in_a_function_returning_courteous_error() {
    let (base, pem, seen) = start().await;
    let client = courteous::Client::builder()
        .http_client(reqwest_client(&pem, &base))
        .build();
    let order = place_order(&client, &base, "order-2").await.unwrap();
    assert_eq!(order["key"], "order-2");
    assert_eq!(
        seen.orders.load(Ordering::SeqCst),
        2,
        "the 429 was waited out"
    );

    // reqwest's errors, converted, keep their kind and status.
    let err = find(&client, &base, None).await.unwrap_err();
    assert!(err.is_status(), "{err:?}");
    assert_eq!(err.status(), Some(reqwest::StatusCode::UNAUTHORIZED));
    let err = find(&client, &base, Some("s3cret")).await.unwrap_err();
    assert!(err.is_body() && err.is_decode(), "{err:?}");
    let reqwest = std::error::Error::source(&err).unwrap();
    assert!(reqwest.downcast_ref::<reqwest::Error>().is_some());
}

#[tokio::test]
async fn client_new_fetches_https_with_the_default_features() {
    // Default features include a TLS backend: an untrusted certificate is
    // a TLS failure (a connect error), not "scheme not supported".
    let (base, _pem, _) = start().await;
    let port = base.rsplit(':').next().unwrap();
    let err = courteous::Client::new()
        .get(format!("https://127.0.0.1:{port}/search"))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_connect(), "{err:?}");
}
