//! The ready client: [`Client`], built by [`ClientBuilder`].

mod request;

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use http::Method;

pub use request::RequestBuilder;

use crate::engine::{Config, Engine, Scope, ScopeStats};
use crate::error::Error;
use crate::options::RequestOptions;
use crate::service::{Core, Origin, Settings, Transport, execute};

/// A polite HTTP client: reqwest's, plus courtesy to rate-limited servers.
///
/// It waits while a server's pause is on (one 429 pauses every request to
/// that origin), paces before the quota the server reports runs out, and
/// retries throttled idempotent requests no earlier than the server asked.
/// Cheap to clone; clones share the client's connection pool and everything
/// learned about each server.
///
/// ```no_run
/// # async fn run() -> Result<(), courteous::Error> {
/// let client = courteous::Client::new();
/// let response = client.get("http://127.0.0.1:8080/items").send().await?;
/// println!("{}", response.status());
///
/// for (scope, stats) in client.stats() {
///     println!("{scope}: sent {}, throttled {}", stats.sent(), stats.throttled());
/// }
/// # Ok(())
/// # }
/// ```
///
/// Against a server that refuses once (wiremock here), the refusal is
/// honoured and retried, and the response says what it took:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), courteous::Error> {
/// use wiremock::{Mock, MockServer, ResponseTemplate, matchers::any};
///
/// let server = MockServer::start().await;
/// Mock::given(any())
///     .respond_with(ResponseTemplate::new(429).insert_header("retry-after-ms", "50"))
///     .up_to_n_times(1)
///     .mount(&server)
///     .await;
/// Mock::given(any()).respond_with(ResponseTemplate::new(200)).mount(&server).await;
///
/// let client = courteous::Client::new();
/// let response = client.get(server.uri()).send().await?;
/// assert_eq!(response.status(), 200);
/// let report = response.extensions().get::<courteous::RetryReport>().unwrap();
/// assert_eq!(report.attempts(), 2);
/// assert!(report.waited().as_millis() >= 50);
/// # Ok(())
/// # }
/// ```
///
/// Configure with [`Client::builder`]:
///
/// ```
/// use std::time::Duration;
///
/// let client = courteous::Client::builder()
///     .max_attempts(3)
///     .max_wait(Duration::from_secs(10))
///     .http_client(reqwest::Client::new())
///     .build();
/// # let _ = client;
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<ClientInner>,
}

struct ClientInner {
    http: reqwest::Client,
    core: Core,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("courteous::Client")
            .field("http", &self.inner.http)
            .field("core", &self.inner.core)
            .finish()
    }
}

impl Default for Client {
    fn default() -> Self {
        Self::new()
    }
}

impl Client {
    /// A client over a default `reqwest::Client` with the default
    /// [`Config`].
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// A builder; every setting has a documented default ([`Config`]).
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// A `GET` request.
    pub fn get<U: reqwest::IntoUrl>(&self, url: U) -> RequestBuilder {
        self.request(Method::GET, url)
    }

    /// A `POST` request (retried only with an `Idempotency-Key`).
    pub fn post<U: reqwest::IntoUrl>(&self, url: U) -> RequestBuilder {
        self.request(Method::POST, url)
    }

    /// A `PUT` request.
    pub fn put<U: reqwest::IntoUrl>(&self, url: U) -> RequestBuilder {
        self.request(Method::PUT, url)
    }

    /// A `PATCH` request (retried only with an `Idempotency-Key`).
    pub fn patch<U: reqwest::IntoUrl>(&self, url: U) -> RequestBuilder {
        self.request(Method::PATCH, url)
    }

    /// A `DELETE` request.
    pub fn delete<U: reqwest::IntoUrl>(&self, url: U) -> RequestBuilder {
        self.request(Method::DELETE, url)
    }

    /// A `HEAD` request.
    pub fn head<U: reqwest::IntoUrl>(&self, url: U) -> RequestBuilder {
        self.request(Method::HEAD, url)
    }

    /// A request with any method.
    pub fn request<U: reqwest::IntoUrl>(&self, method: Method, url: U) -> RequestBuilder {
        RequestBuilder::new(self.clone(), self.inner.http.request(method, url))
    }

    /// Sends a built request politely; [`RequestOptions`] in its
    /// extensions apply.
    pub fn execute(
        &self,
        req: reqwest::Request,
    ) -> impl Future<Output = Result<reqwest::Response, Error>> + Send + 'static {
        self.execute_from(req, Origin::Any, None)
    }

    pub(super) fn execute_from(
        &self,
        req: reqwest::Request,
        origin: Origin,
        options: Option<Box<RequestOptions>>,
    ) -> impl Future<Output = Result<reqwest::Response, Error>> + Send + 'static + use<> {
        let inner = Arc::clone(&self.inner);
        async move {
            let mut transport = ClientTransport(&inner.http);
            execute(&inner.core, &mut transport, req, origin, options).await
        }
    }

    /// Counters of every scope (origin, by default) seen so far.
    pub fn stats(&self) -> Vec<(Scope, ScopeStats)> {
        self.inner.core.stats()
    }

    /// The shared engine (configuration and state).
    pub fn engine(&self) -> &Engine {
        &self.inner.core.engine
    }

    /// The wrapped reqwest client.
    pub fn http_client(&self) -> &reqwest::Client {
        &self.inner.http
    }
}

struct ClientTransport<'a>(&'a reqwest::Client);

impl Transport for ClientTransport<'_> {
    type Error = reqwest::Error;

    fn send(
        &mut self,
        req: reqwest::Request,
    ) -> impl Future<Output = Result<reqwest::Response, reqwest::Error>> + Send {
        self.0.execute(req)
    }
}

/// Builds a [`Client`]. Defaults: [`Config::default()`] and
/// `reqwest::Client::new()` (give your own with
/// [`http_client`](Self::http_client): TLS roots, proxies, timeouts).
///
/// Its setters are the same as [`CourteousLayer`](crate::CourteousLayer)'s
/// and `CourteousMiddleware`'s.
#[derive(Debug, Default)]
pub struct ClientBuilder {
    config: Config,
    settings: Settings,
    http: Option<reqwest::Client>,
}

impl ClientBuilder {
    fn update_config(&mut self, f: impl FnOnce(Config) -> Config) {
        self.config = f(std::mem::take(&mut self.config));
    }

    fn settings_mut(&mut self) -> &mut Settings {
        &mut self.settings
    }

    crate::setup::courtesy_setters!();

    /// The reqwest client to send with (default `reqwest::Client::new()`).
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Builds the client.
    pub fn build(self) -> Client {
        Client {
            inner: Arc::new(ClientInner {
                http: self.http.unwrap_or_default(),
                core: Core {
                    engine: Engine::new(self.config),
                    settings: Arc::new(self.settings),
                },
            }),
        }
    }
}
