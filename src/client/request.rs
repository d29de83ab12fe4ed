//! [`RequestBuilder`]: reqwest's builder, sent politely.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use futures_util::future::Either;
use http::header::{HeaderMap, HeaderName, HeaderValue};

use super::Client;
use crate::error::Error;
use crate::service::Origin;

/// A request being built; [`send`](Self::send) sends it through the
/// client's engine. Made by [`Client::get`] and friends.
pub struct RequestBuilder {
    client: Client,
    inner: reqwest::RequestBuilder,
}

impl fmt::Debug for RequestBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("courteous::RequestBuilder")
            .field("inner", &self.inner)
            .finish()
    }
}

impl RequestBuilder {
    pub(super) fn new(client: Client, inner: reqwest::RequestBuilder) -> Self {
        Self { client, inner }
    }

    fn map(self, f: impl FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder) -> Self {
        Self {
            client: self.client,
            inner: f(self.inner),
        }
    }

    /// Adds a header.
    pub fn header<K, V>(self, key: K, value: V) -> Self
    where
        HeaderName: TryFrom<K>,
        <HeaderName as TryFrom<K>>::Error: Into<http::Error>,
        HeaderValue: TryFrom<V>,
        <HeaderValue as TryFrom<V>>::Error: Into<http::Error>,
    {
        self.map(|b| b.header(key, value))
    }

    /// Adds headers.
    pub fn headers(self, headers: HeaderMap) -> Self {
        self.map(|b| b.headers(headers))
    }

    /// Sets the body. A stream body is sent once and never retried.
    pub fn body<T: Into<reqwest::Body>>(self, body: T) -> Self {
        self.map(|b| b.body(body))
    }

    /// A timeout for each attempt (from connecting to the end of the body).
    pub fn timeout(self, timeout: Duration) -> Self {
        self.map(|b| b.timeout(timeout))
    }

    /// HTTP basic authentication.
    pub fn basic_auth<U: fmt::Display, P: fmt::Display>(
        self,
        user: U,
        password: Option<P>,
    ) -> Self {
        self.map(|b| b.basic_auth(user, password))
    }

    /// Bearer authentication.
    pub fn bearer_auth<T: fmt::Display>(self, token: T) -> Self {
        self.map(|b| b.bearer_auth(token))
    }

    /// The HTTP version.
    pub fn version(self, version: http::Version) -> Self {
        self.map(|b| b.version(version))
    }

    /// Sets an `Idempotency-Key`, which makes a POST or PATCH retryable.
    pub fn idempotency_key(self, key: impl AsRef<str>) -> Self {
        let name = crate::service::classify::IDEMPOTENCY_KEY.clone();
        self.map(|b| b.header(name, key.as_ref()))
    }

    /// Builds the `reqwest::Request` without sending it.
    pub fn build(self) -> Result<reqwest::Request, Error> {
        self.inner.build().map_err(Error::builder)
    }

    /// Sends the request politely.
    pub fn send(self) -> impl Future<Output = Result<reqwest::Response, Error>> + Send + 'static {
        // Not an `async` block around the client's future: that would hold
        // the built request a second time, in a bigger future.
        match self.inner.build() {
            Ok(req) => Either::Left(self.client.execute_from(req, Origin::Builder)),
            Err(err) => Either::Right(std::future::ready(Err(Error::builder(err)))),
        }
    }
}
