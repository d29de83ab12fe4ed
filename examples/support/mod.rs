//! Shared by the example clients: command line, the bounded load loop and
//! the one-line JSON report the comparison reads.
//!
//! Not every example uses every item.
#![allow(dead_code)]

pub mod clients;
mod drive;
pub mod polite;

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;

pub use drive::{Outcome, Tally, drive};

/// Where the examples send requests unless told otherwise: loopback only.
pub const DEFAULT_URL: &str = "http://127.0.0.1:8080/";

/// Attempts in a row ending in an error after which a load loop stops.
pub const DEFAULT_MAX_ERRORS_IN_A_ROW: u64 = 20;

/// The command line every example client accepts.
#[derive(Debug, Clone, clap::Args)]
pub struct CommonArgs {
    /// URL to GET (keep it on loopback: these clients exist to load a server).
    #[arg(long, default_value = DEFAULT_URL)]
    pub url: String,
    /// Stop once this many responses were 2xx.
    #[arg(long, default_value_t = 100)]
    pub successes: u64,
    /// Concurrent workers sharing the target count.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub concurrency: u64,
    /// Sent as `X-Client-Id` on every request, when given.
    #[arg(long)]
    pub client_id: Option<String>,
    /// Stop after starting this many requests whatever happened (the original experiment's
    /// naive client needed ~53,000; 100,000 bounds a misbehaving run). For
    /// `polite` these are `send` calls, each bounded by its own attempt limit.
    #[arg(long, default_value_t = 100_000)]
    pub max_requests: u64,
    /// Stop after this many seconds whatever happened.
    #[arg(long, default_value_t = 60.0)]
    pub max_secs: f64,
    /// Stop once this many attempts in a row ended in an error (a transport
    /// error or a status other than 2xx, 429 and 503): a server that is down
    /// or a wrong `--url` has nothing left to measure, and an attempt loop
    /// against a closed port would otherwise open thousands of connections.
    #[arg(long, default_value_t = DEFAULT_MAX_ERRORS_IN_A_ROW, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_errors_in_a_row: u64,
}

impl CommonArgs {
    /// The overall time bound, whatever `--max-secs` said (negative or NaN: 0).
    pub fn max_duration(&self) -> Duration {
        Duration::try_from_secs_f64(self.max_secs).unwrap_or(Duration::ZERO)
    }

    /// A plain reqwest client sending `X-Client-Id` when one was given.
    pub fn http_client(&self) -> Result<reqwest::Client, String> {
        reqwest::Url::parse(&self.url).map_err(|e| format!("--url {}: {e}", self.url))?;
        let mut headers = HeaderMap::new();
        if let Some(id) = &self.client_id {
            let value = HeaderValue::from_str(id).map_err(|e| format!("--client-id: {e}"))?;
            headers.insert(HeaderName::from_static("x-client-id"), value);
        }
        reqwest::Client::builder()
            .default_headers(headers)
            .timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| format!("building the HTTP client: {e}"))
    }
}

/// What a status means to the load loop.
pub fn classify(status: StatusCode) -> Outcome {
    if status.is_success() {
        Outcome::Ok
    } else if is_throttle(status) {
        Outcome::Throttled
    } else {
        Outcome::Error
    }
}

/// 429 and 503: the statuses counted as `throttled`.
pub fn is_throttle(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::SERVICE_UNAVAILABLE
}

/// The last line each example prints: what it cost the server.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Example name (`naive`, `fixed_delay`, `polite`, …).
    pub client: String,
    /// Every request put on the wire, retries included.
    pub sent: u64,
    /// 2xx responses.
    pub ok: u64,
    /// 429 and 503 responses, including those a client retried internally.
    pub throttled: u64,
    /// Transport errors and other non-2xx responses.
    pub errors: u64,
    /// Wall time of the load loop.
    pub elapsed_ms: u64,
    /// The fleet store's calls, when `--fleet-redis` was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet: Option<FleetCalls>,
}

/// What a process's fleet store calls came to.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct FleetCalls {
    /// Calls made.
    pub calls: u64,
    /// Calls that missed their deadline.
    pub missed_deadline: u64,
    /// Calls Redis refused or dropped.
    pub errors: u64,
}

impl Report {
    /// The report for a tally whose every attempt was one request.
    pub fn from_tally(client: &str, tally: &Tally) -> Self {
        Self {
            client: client.to_owned(),
            sent: tally.attempts,
            ok: tally.ok,
            throttled: tally.throttled,
            errors: tally.errors,
            elapsed_ms: u64::try_from(tally.elapsed.as_millis()).unwrap_or(u64::MAX),
            fleet: None,
        }
    }

    /// The JSON line (one object, no newline).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a report of strings and integers serializes")
    }
}

/// Log to stderr (stdout's last line is the report), filtered by `RUST_LOG`.
pub fn init_tracing() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
}
