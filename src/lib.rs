//! # courteous
//!
//! Polite HTTP clients for rate-limited servers.
//!
//! Servers say how fast a client may go: `Retry-After`, the IETF
//! `RateLimit-*` / `RateLimit` / `RateLimit-Policy` fields, GitHub-style
//! `X-RateLimit-*`, and RFC 9457 problem+json bodies with `retry_after_ms`.
//! courteous reads all of them ([`signal`]), and the middleware built on top
//! slows down *before* the first 429, shares what it learned across clones
//! and concurrent requests, and retries only when and as late as the server
//! asked.
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod signal;
#[cfg(feature = "testing")]
pub mod testing;

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
