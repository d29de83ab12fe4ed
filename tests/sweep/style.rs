//! How the simulated server states its limit: the header dialects and their
//! rounding, as real servers send them.

use std::time::{Duration, UNIX_EPOCH};

use http::{HeaderMap, HeaderValue};

use super::limiter::View;

/// A header dialect. Every style that states a quota also sends
/// `Retry-After` (whole seconds, rounded up) with its refusals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Style {
    /// `RateLimit-Policy: "q";q=L;w=W` and `RateLimit: "q";r=R;t=T`.
    Ietf,
    /// `RateLimit-Limit/Remaining/Reset` (reset in seconds to wait).
    IetfLegacy,
    /// `X-RateLimit-Limit/Remaining/Reset`, the reset an epoch second,
    /// read against the response's `Date`.
    XRateLimitEpoch,
    /// `used/size` (Shopify's call-limit header) and `Retry-After`.
    UsedSize,
    /// Refusals only, `Retry-After` in whole seconds.
    RetryAfterSeconds,
    /// Refusals only, `Retry-After` as an HTTP-date with `Date`.
    RetryAfterDate,
    /// Refusals only, a problem+json body with `retry_after_ms`.
    ProblemMs,
    /// Refusals only, saying nothing.
    Bare,
}

impl Style {
    pub const ALL: [Style; 8] = [
        Style::Ietf,
        Style::IetfLegacy,
        Style::XRateLimitEpoch,
        Style::UsedSize,
        Style::RetryAfterSeconds,
        Style::RetryAfterDate,
        Style::ProblemMs,
        Style::Bare,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Style::Ietf => "ietf",
            Style::IetfLegacy => "ietf-legacy",
            Style::XRateLimitEpoch => "x-ratelimit epoch",
            Style::UsedSize => "used/size",
            Style::RetryAfterSeconds => "retry-after s",
            Style::RetryAfterDate => "retry-after date",
            Style::ProblemMs => "problem ms",
            Style::Bare => "bare 429",
        }
    }

    /// Whether successes carry the quota (the "quota headers" bounds), or
    /// only refusals say anything (the "hints only" bounds).
    pub fn states_quota(self) -> bool {
        matches!(
            self,
            Style::Ietf | Style::IetfLegacy | Style::XRateLimitEpoch | Style::UsedSize
        )
    }
}

/// How a millisecond hint is rounded by the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    Up,
    Nearest,
    Down,
}

impl Rounding {
    fn apply(self, x: f64) -> f64 {
        match self {
            Rounding::Up => x.ceil(),
            Rounding::Nearest => x.round(),
            Rounding::Down => x.floor(),
        }
    }
}

/// The simulated server's wall clock at case time 0: far from the machine's
/// own, so the parser measures every date against the response's `Date`
/// (whole seconds), as it does for a server whose clock differs.
const WALL_ZERO: u64 = 2_000_000_000;

fn wall(t: f64) -> f64 {
    WALL_ZERO as f64 + t
}

fn date(seconds: f64) -> HeaderValue {
    let at = UNIX_EPOCH + Duration::from_secs(seconds.max(0.0) as u64);
    HeaderValue::from_str(&httpdate::fmt_http_date(at)).expect("an HTTP-date is ASCII")
}

fn number(n: impl ToString) -> HeaderValue {
    HeaderValue::from_str(&n.to_string()).expect("a number is ASCII")
}

/// Whole seconds, rounded up, at least `min`.
fn seconds(x: f64, min: u64) -> u64 {
    (x.max(0.0).ceil() as u64).max(min)
}

/// The headers (and body) of a response at case time `t`.
pub fn render(
    style: Style,
    rounding: Rounding,
    view: &View,
    tokens: Option<&(View, u32)>,
    refused: bool,
    t: f64,
) -> (HeaderMap, Option<&'static str>, Option<String>) {
    let mut headers = HeaderMap::new();
    let mut content_type = None;
    let mut body = None;
    headers.insert("date", date(wall(t).floor()));
    // A policy window the dialect can state: whole seconds, at least one,
    // the quota scaled to it.
    let w = view.window.round().max(1.0);
    let q = (f64::from(view.limit) * w / view.window).round().max(1.0) as u64;
    match style {
        Style::Ietf => {
            let mut policy = format!("\"q\";q={q};w={w}");
            let mut state = format!("\"q\";r={};t={}", view.remaining, seconds(view.reset, 0));
            // A token quota: its own policy item, counted in tokens.
            if let Some((tokens, cost)) = tokens {
                let cost = u64::from(*cost);
                let w = tokens.window.round().max(1.0);
                let q = (f64::from(tokens.limit) * w / tokens.window)
                    .round()
                    .max(1.0) as u64;
                policy.push_str(&format!(", \"tok\";q={};w={w};qu=\"tokens\"", q * cost));
                state.push_str(&format!(
                    ", \"tok\";r={};t={}",
                    u64::from(tokens.remaining) * cost,
                    seconds(tokens.reset, 0)
                ));
            }
            headers.insert("ratelimit-policy", HeaderValue::from_str(&policy).unwrap());
            headers.insert("ratelimit", HeaderValue::from_str(&state).unwrap());
        }
        Style::IetfLegacy => {
            headers.insert("ratelimit-limit", number(view.limit));
            headers.insert("ratelimit-remaining", number(view.remaining));
            headers.insert("ratelimit-reset", number(seconds(view.reset, 0)));
        }
        Style::XRateLimitEpoch => {
            headers.insert("x-ratelimit-limit", number(view.limit));
            headers.insert("x-ratelimit-remaining", number(view.remaining));
            headers.insert(
                "x-ratelimit-reset",
                number(wall(t + view.reset).ceil() as u64),
            );
        }
        Style::UsedSize => {
            headers.insert(
                "x-shopify-shop-api-call-limit",
                HeaderValue::from_str(&format!("{}/{}", view.used, view.limit)).unwrap(),
            );
        }
        Style::RetryAfterSeconds | Style::RetryAfterDate | Style::ProblemMs | Style::Bare => {}
    }
    if refused {
        match style {
            Style::Bare => {}
            Style::RetryAfterDate => {
                headers.insert("retry-after", date(wall(t + view.retry_after).ceil()));
            }
            Style::ProblemMs => {
                content_type = Some("application/problem+json");
                body = Some(format!(
                    "{{\"type\":\"about:blank\",\"status\":429,\"retry_after_ms\":{}}}",
                    rounding.apply(view.retry_after * 1000.0).max(0.0) as u64
                ));
            }
            _ => {
                headers.insert("retry-after", number(seconds(view.retry_after, 1)));
            }
        }
    }
    (headers, content_type, body)
}
