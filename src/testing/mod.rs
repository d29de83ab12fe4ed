//! Mock servers that rate-limit like real ones, for your own tests.
//!
//! [wiremock](https://docs.rs/wiremock) responders (feature `testing`):
//!
//! - [`TokenBucket`]: bursts up to a capacity, then a steady rate.
//! - [`FixedWindow`]: `limit` requests per window, opened by the first
//!   request or aligned to the clock.
//! - [`SlidingLog`]: `limit` requests in any window (a log of admissions).
//! - [`SlidingWindowCounter`]: `limit` requests per clock-aligned window,
//!   the previous window's count weighted by how much of it still overlaps.
//! - [`ThrottleThenOk`]: 429 for the first `n` requests, then 200.
//! - [`Hostile`]: refuses everything, with any hint you give it, however
//!   absurd (zero, past dates, 2⁶⁴, `1e300`, a 50 MB body, …).
//! - [`GitHubApi`]: GitHub's primary and secondary limits, refused with 403.
//! - One mock per API of [`preset`](crate::preset), limiting and answering
//!   as its documentation says: [`OpenAiApi`] (requests and tokens),
//!   [`AnthropicApi`] (requests, input and output tokens), [`DiscordApi`]
//!   (shared buckets and a global limit), [`GoogleApi`] (per minute and per
//!   day), [`GitLabApi`], [`ShopifyApi`] (a leaky bucket), [`AzureApi`]
//!   (reads and writes), [`RedditApi`], [`XApi`], [`AwsApi`] (no headers).
//!
//! Each speaks any combination of the header dialects servers use:
//! [`RetryAfterStyle`] says how a rejection announces when to come back
//! (`Retry-After` seconds or date, `retry-after-ms`, `x-ms-retry-after-ms`,
//! problem+json), and [`Dialect`] how every response describes the quota
//! (`RateLimit-*` in each IETF draft shape, `X-RateLimit-*`). With neither,
//! rejections are bare. Responders count what they [`received`](TokenBucket::received),
//! [`admitted`](TokenBucket::admitted) and [`rejected`](TokenBucket::rejected),
//! shared by all clones.
//!
//! They run on the real clock, as wiremock serves real sockets: never pair
//! them with `tokio::time::pause`.
//!
//! ```
//! use std::num::NonZeroU32;
//! use courteous::testing::{Dialect, RetryAfterStyle, TokenBucket};
//!
//! // A server that answers like GitHub and says when to retry in ms.
//! let bucket = TokenBucket::per_minute(NonZeroU32::new(60).unwrap())
//!     .burst(NonZeroU32::new(10).unwrap())
//!     .dialect(Dialect::XRateLimit)
//!     .retry_after(RetryAfterStyle::ProblemJsonMillis);
//! assert_eq!(bucket.received(), 0);
//! ```

mod apis;
mod builder;
mod counters;
mod dates;
mod fixed_window;
mod github;
mod hostile;
mod shape;
mod sliding_log;
mod sliding_window;
mod style;
mod throttle_then_ok;
mod token_bucket;

pub use apis::{
    AnthropicApi, AwsApi, AzureApi, DiscordApi, GitLabApi, GoogleApi, OpenAiApi, RedditApi,
    ShopifyApi, XApi,
};
pub use fixed_window::FixedWindow;
pub use github::GitHubApi;
pub use hostile::Hostile;
pub use sliding_log::SlidingLog;
pub use sliding_window::SlidingWindowCounter;
pub use style::{Dialect, RetryAfterStyle};
pub use throttle_then_ok::ThrottleThenOk;
pub use token_bucket::TokenBucket;
/// The wiremock version these responders implement [`wiremock::Respond`] for.
pub use wiremock;
