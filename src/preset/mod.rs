//! Presets: one per API, each saying what its refusals mean, how it names
//! its limits, and the caps its official SDK uses.
//!
//! The headers and bodies of every API here are read without a preset (see
//! [`signal`](crate::signal)); a preset adds what only knowing the API
//! tells: which statuses are throttling (GitHub's `403`, Anthropic's `529`,
//! X's `420`), which refusals are final although they look like throttling
//! (OpenAI's `insufficient_quota`, a per-day Google quota, an AWS error code
//! that is not a throttle), how to read an ambiguous field (GitLab's
//! `RateLimit-Reset` is an epoch), which requests share a quota (GitHub's
//! resources), and the attempts its SDK makes.
//!
//! Each preset is a [`Classify`](crate::classify::Classify), so it plugs
//! into any adapter's `classifier` setter, and has `client()` and `layer()`
//! for a [`ClientBuilder`](crate::ClientBuilder) or
//! [`CourteousLayer`](crate::CourteousLayer) with everything set:
//!
//! ```
//! use std::time::Duration;
//!
//! // A preset client is an ordinary builder: change what you like.
//! let openai = courteous::preset::OpenAi.client().max_wait(Duration::from_secs(120)).build();
//! let layer = courteous::preset::Anthropic.layer();
//! # let _ = (openai, layer);
//! ```
//!
//! | API | preset | refusals it adds | final | scope | attempts |
//! |---|---|---|---|---|---|
//! | OpenAI, Azure OpenAI | [`OpenAi`] | `x-should-retry: true` | `insufficient_quota`, `x-should-retry: false` | origin | 3 |
//! | Anthropic | [`Anthropic`] | `529`, `x-should-retry: true` | `x-should-retry: false` | origin | 3 |
//! | GitHub | [`GitHub`] | `403`/`429` with a limit, GraphQL `RATE_LIMITED` | other `403`s | origin + resource | 5 |
//! | Discord | [`Discord`] | — | — | origin | 5 |
//! | Google APIs | [`Google`] | `403` `rateLimitExceeded` | per-day `QuotaFailure`, `403` `dailyLimitExceeded` | origin | 5 |
//! | GitLab | [`GitLab`] | — | — | origin | 5 |
//! | Shopify | [`Shopify`] | fractional `Retry-After` | — | origin | 5 |
//! | Azure Resource Manager | [`Azure`] | — | — | origin | 5 |
//! | Reddit | [`Reddit`] | — | — | origin | 5 |
//! | X (Twitter) | [`X`] | `420` (API v1.1) | — | origin | 5 |
//! | AWS | [`Aws`] | throttling error codes on any status | other codes on `4xx` | origin | 3 |
//!
//! A final refusal ([`ResponseClass::Refused`]) comes back at once, never
//! retried, as an error whose
//! [`is_final_refusal`](crate::Error::is_final_refusal) says so:
//! [`Error::refusal`](crate::Error::refusal) says which refusal it was
//! (as [`Signal::refusal`](crate::signal::Signal::refusal) read it),
//! [`Error::refusal_message`](crate::Error::refusal_message) what the
//! server wrote, and the response rides inside, body intact
//! ([`Error::into_response`](crate::Error::into_response)). With
//! [`GiveUpMode::Response`](crate::GiveUpMode::Response) it is the response
//! itself, as every give-up.

mod anthropic;
mod aws;
mod azure;
mod discord;
mod github;
mod gitlab;
mod google;
mod openai;
mod reddit;
mod shopify;
mod x;

pub use anthropic::Anthropic;
pub use aws::Aws;
pub use azure::Azure;
pub use discord::Discord;
pub use github::GitHub;
pub use gitlab::GitLab;
pub use google::Google;
pub use openai::OpenAi;
pub use reddit::Reddit;
pub use shopify::Shopify;
pub use x::X;

use http::StatusCode;

use crate::classify::{Response, ResponseClass};

/// What a preset sets besides its classifier.
pub(crate) trait Settings {
    /// The parser (default: the default one).
    fn parser(&self) -> crate::signal::SignalParser {
        crate::signal::SignalParser::new()
    }
    /// Attempts per request, the first included (default: the engine's).
    fn max_attempts(&self) -> Option<u32> {
        None
    }
    /// The scope key (default: the request's origin).
    fn scope(&self) -> Option<fn(&reqwest::Request) -> crate::Scope> {
        None
    }
    /// A quota the API enforces but never announces.
    fn declared_quota(&self) -> Option<(u32, std::time::Duration)> {
        None
    }
}

/// `client()` and `layer()` for a preset.
macro_rules! adapters {
    ($preset:ident, $name:literal) => {
        impl $preset {
            #[doc = concat!("A [`ClientBuilder`](crate::ClientBuilder) set up for ", $name, ": this")]
            /// classifier, and the parser, attempts and scope the preset
            /// documents; every other setting is the builder's default and
            /// can be changed on it.
            pub fn client(self) -> crate::ClientBuilder {
                super::apply!(self, crate::Client::builder())
            }

            #[doc = concat!("A [`CourteousLayer`](crate::CourteousLayer) set up for ", $name, ", as")]
            /// [`client`](Self::client) sets up a client.
            pub fn layer(self) -> crate::CourteousLayer {
                super::apply!(self, crate::CourteousLayer::new())
            }
        }
    };
}
pub(crate) use adapters;

/// The classification of a preset whose API refuses with the default
/// statuses only: [`Response::by_status`].
macro_rules! by_status {
    ($preset:ident) => {
        impl $crate::classify::Classify for $preset {
            fn classify(
                &self,
                response: &$crate::classify::Response<'_>,
            ) -> $crate::classify::ResponseClass {
                response.by_status()
            }
        }
    };
}
pub(crate) use by_status;

/// Sets a preset's classifier, parser, attempts and scope on a builder.
macro_rules! apply {
    ($preset:expr, $builder:expr) => {{
        use super::Settings as _;
        let preset = $preset;
        let mut builder = $builder.parser(preset.parser());
        if let Some(attempts) = preset.max_attempts() {
            builder = builder.max_attempts(attempts);
        }
        if let Some(scope) = preset.scope() {
            builder = builder.scope_by(scope);
        }
        if let Some(quota) = preset.declared_quota() {
            builder = builder.declared_quota(quota);
        }
        builder.classifier(preset)
    }};
}
pub(crate) use apply;

/// How the official OpenAI and Anthropic SDKs read a response: a server's
/// `x-should-retry` decides (`false`: refused for good if the response
/// would be retried otherwise, else final; `true`: retried, a throttling
/// status as throttled); without it, `408`, `409` and `5xx` are failures of
/// this request worth retrying, and other statuses as
/// [`Response::by_status`].
fn sdk_style(response: &Response<'_>, throttling: &[u16]) -> ResponseClass {
    let status = response.status();
    let throttled =
        response.by_status() != ResponseClass::Final || throttling.contains(&status.as_u16());
    match response.signal().should_retry() {
        Some(false) if throttled || sdk_retries(status) => ResponseClass::Refused,
        Some(false) => ResponseClass::Final,
        _ if throttled => ResponseClass::Throttled { wait: None },
        Some(true) => ResponseClass::Retry,
        None if sdk_retries(status) => ResponseClass::Retry,
        None => ResponseClass::Final,
    }
}

/// `408`, `409` and `5xx`: what openai-python and anthropic-sdk-python
/// retry besides `429` (`_base_client.py`, `_should_retry`).
fn sdk_retries(status: StatusCode) -> bool {
    matches!(status.as_u16(), 408 | 409) || status.is_server_error()
}

/// Whether `body` mentions `needle`, regardless of case.
fn mentions(body: Option<&[u8]>, needle: &[u8]) -> bool {
    body.is_some_and(|body| {
        body.windows(needle.len())
            .any(|window| window.eq_ignore_ascii_case(needle))
    })
}
