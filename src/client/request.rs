//! [`RequestBuilder`]: reqwest's builder, sent politely.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use futures_util::future::Either;
use http::header::{HeaderMap, HeaderName, HeaderValue};

use super::Client;
use crate::error::Error;
use crate::options::RequestOptions;
use crate::service::Origin;

/// A request being built; [`send`](Self::send) sends it through the
/// client's engine. Made by [`Client::get`] and friends.
///
/// Every method of reqwest 0.13's `RequestBuilder` that a client of a
/// rate-limited API uses is here, behind the same cargo feature as in
/// reqwest (`json`, `query`, `form`, `multipart`), plus
/// [`options`](Self::options) for this request's limits and
/// [`idempotency_key`](Self::idempotency_key).
///
/// A body that cannot be replayed (a stream, a multipart form with a
/// streamed part) is sent at most once and never retried. Like any
/// request, it may still be given up before it is sent, when the wait for
/// the scope (a pause or pacing) is longer than
/// [`max_wait`](crate::ClientBuilder::max_wait) or would end after the
/// [`deadline`](crate::ClientBuilder::deadline): `send` then returns an
/// [`Error`] saying why ([`Error::is_wait_too_long`],
/// [`Error::is_deadline`]) and the request, body included, is consumed; a
/// stream cannot be handed back, so build it again to resend it later
/// (after [`Error::retry_after`]).
pub struct RequestBuilder {
    client: Client,
    inner: reqwest::RequestBuilder,
    options: Option<Box<RequestOptions>>,
    extensions: Option<Box<http::Extensions>>,
}

impl fmt::Debug for RequestBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("courteous::RequestBuilder")
            .field("inner", &self.inner)
            .field("options", &self.options)
            .finish()
    }
}

impl RequestBuilder {
    pub(super) fn new(client: Client, inner: reqwest::RequestBuilder) -> Self {
        Self {
            client,
            inner,
            options: None,
            extensions: None,
        }
    }

    fn map(self, f: impl FnOnce(reqwest::RequestBuilder) -> reqwest::RequestBuilder) -> Self {
        Self {
            inner: f(self.inner),
            ..self
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

    /// A timeout for each attempt (from connecting to the end of the
    /// body), as reqwest's; a timed-out attempt is retried. The whole
    /// request is bounded by the [`deadline`](crate::ClientBuilder::deadline)
    /// (or [`RequestOptions::deadline`](crate::RequestOptions::deadline)).
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

    /// Modifies the URL's query with a serialized value (feature `query`).
    #[cfg(feature = "query")]
    #[cfg_attr(docsrs, doc(cfg(feature = "query")))]
    pub fn query<T: serde::Serialize + ?Sized>(self, query: &T) -> Self {
        self.map(|b| b.query(query))
    }

    /// A JSON body (feature `json`); sets `Content-Type: application/json`.
    #[cfg(feature = "json")]
    #[cfg_attr(docsrs, doc(cfg(feature = "json")))]
    pub fn json<T: serde::Serialize + ?Sized>(self, json: &T) -> Self {
        self.map(|b| b.json(json))
    }

    /// A url-encoded form body (feature `form`).
    #[cfg(feature = "form")]
    #[cfg_attr(docsrs, doc(cfg(feature = "form")))]
    pub fn form<T: serde::Serialize + ?Sized>(self, form: &T) -> Self {
        self.map(|b| b.form(form))
    }

    /// A `multipart/form-data` body (feature `multipart`). reqwest streams
    /// multipart bodies, so such a request is sent once and never retried.
    #[cfg(feature = "multipart")]
    #[cfg_attr(docsrs, doc(cfg(feature = "multipart")))]
    pub fn multipart(self, form: reqwest::multipart::Form) -> Self {
        self.map(|b| b.multipart(form))
    }

    /// Limits and a scope for this request alone ([`RequestOptions`]).
    pub fn options(mut self, options: RequestOptions) -> Self {
        self.options = Some(Box::new(options));
        self
    }

    /// Puts `value` in the built request's extensions, for a service or
    /// middleware below that reads them (through `http::Request`).
    pub fn extension<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions
            .get_or_insert_with(Default::default)
            .insert(value);
        self
    }

    /// A copy of this builder, or `None` if its body is a stream.
    pub fn try_clone(&self) -> Option<Self> {
        Some(Self {
            client: self.client.clone(),
            inner: self.inner.try_clone()?,
            options: self.options.clone(),
            extensions: self.extensions.clone(),
        })
    }

    /// Sets an `Idempotency-Key`, which makes a POST or PATCH retryable.
    pub fn idempotency_key(self, key: impl AsRef<str>) -> Self {
        let name = crate::service::classify::IDEMPOTENCY_KEY.clone();
        self.map(|b| b.header(name, key.as_ref()))
    }

    /// Builds the `reqwest::Request` without sending it; its
    /// [`options`](Self::options) and [`extension`](Self::extension)s go
    /// into its extensions, so [`Client::execute`] still applies them.
    pub fn build(self) -> Result<reqwest::Request, Error> {
        self.build_split().1
    }

    /// The client and the built request (as reqwest's `build_split`).
    pub fn build_split(self) -> (Client, Result<reqwest::Request, Error>) {
        let Self {
            client,
            inner,
            options,
            extensions,
        } = self;
        let built = inner.build().map(|mut req| {
            if options.is_some() || extensions.is_some() {
                crate::options::with_extensions(&mut req, |all| {
                    if let Some(extensions) = extensions {
                        all.extend(*extensions);
                    }
                    if let Some(options) = options {
                        all.insert(*options);
                    }
                });
            }
            req
        });
        (client, built.map_err(Error::builder))
    }

    /// Sends the request politely.
    pub fn send(self) -> impl Future<Output = Result<reqwest::Response, Error>> + Send + 'static {
        // Not an `async` block around the client's future: that would hold
        // the built request a second time, in a bigger future.
        let Self {
            client,
            inner,
            options,
            extensions,
        } = self;
        match inner.build() {
            Ok(mut req) => {
                // A request with extensions of its own is copied whole for a
                // retry; one without, field by field.
                let origin = match extensions {
                    Some(extensions) => {
                        crate::options::with_extensions(&mut req, |all| all.extend(*extensions));
                        Origin::Any
                    }
                    None => Origin::Builder,
                };
                Either::Left(client.execute_from(req, origin, options))
            }
            Err(err) => Either::Right(std::future::ready(Err(Error::builder(err)))),
        }
    }
}
