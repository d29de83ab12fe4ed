//! Fuzzes the engine with arbitrary sequences of admissions, responses
//! (statuses and rate-limit headers parsed as a server sent them),
//! transport errors, cancellations, clock steps and settings: it must never
//! panic, every wait it asks for is finite and bounded, and nothing stays
//! in flight once every ticket is settled or dropped.
//!
//! `cargo +nightly fuzz run engine -- -max_total_time=60`
#![no_main]

use std::time::{Duration, Instant, SystemTime};

use arbitrary::Arbitrary;
use courteous::engine::{Admit, Attempt, Config, Engine, InFlight, MAX_SERVER_WAIT, Scope};
use courteous::signal::SignalParser;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use libfuzzer_sys::fuzz_target;

const FIELDS: &[&str] = &[
    "retry-after",
    "retry-after-ms",
    "ratelimit",
    "ratelimit-policy",
    "ratelimit-remaining",
    "ratelimit-reset",
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
    "date",
    "content-type",
];

#[derive(Debug, Arbitrary)]
enum Event {
    /// Let this many milliseconds pass.
    Step(u32),
    /// Ask to send to scope `scope % 3`.
    Admit { scope: u8 },
    /// Answer the oldest ticket.
    Respond {
        status: u16,
        headers: Vec<(u8, Vec<u8>)>,
        body: Option<Vec<u8>>,
        attempt: u8,
        retryable: bool,
    },
    /// Fail the oldest ticket.
    Fail { retryable_error: bool, attempt: u8 },
    /// Cancel the oldest ticket.
    Cancel,
}

#[derive(Debug, Arbitrary)]
struct Run {
    seed: u64,
    max_wait_ms: Option<u64>,
    deadline_ms: Option<u64>,
    pacing: bool,
    events: Vec<Event>,
}

fuzz_target!(|run: Run| {
    let config = Config::default()
        .rng_seed(run.seed)
        .pacing(run.pacing)
        .max_wait(run.max_wait_ms.map_or(Duration::MAX, Duration::from_millis))
        .deadline(run.deadline_ms.map(Duration::from_millis));
    let engine = Engine::new(config);
    let parser = SignalParser::new();
    let scopes = [Scope::new("a"), Scope::new("b"), Scope::new("c")];
    let t0 = Instant::now();
    let mut now = t0;
    let mut tickets: Vec<InFlight> = Vec::new();
    // A pause is at most a day's hint plus its jitter (≤ 1 s); a pacing
    // wait at most a day's reset plus a day's refill.
    let longest = MAX_SERVER_WAIT * 2 + Duration::from_secs(1);
    for event in run.events {
        match event {
            Event::Step(ms) => now += Duration::from_millis(u64::from(ms)),
            Event::Admit { scope } => match engine.admit(&scopes[usize::from(scope) % 3], now) {
                Admit::Now(ticket) => tickets.push(ticket),
                Admit::After { wait, .. } => assert!(wait <= longest, "{wait:?}"),
            },
            Event::Respond { status, headers, body, attempt, retryable } => {
                if tickets.is_empty() {
                    continue;
                }
                let status = StatusCode::from_u16(status).unwrap_or(StatusCode::TOO_MANY_REQUESTS);
                let mut map = HeaderMap::new();
                for (index, value) in &headers {
                    let name = FIELDS[usize::from(*index) % FIELDS.len()];
                    if let Ok(value) = HeaderValue::from_bytes(value) {
                        map.append(HeaderName::from_static(name), value);
                    }
                }
                let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
                let signal = parser.parse_at(status, &map, body.as_deref(), wall);
                let attempt = Attempt::new(u32::from(attempt).max(1), retryable, t0);
                let ticket = tickets.remove(0);
                let _ = engine.on_response(ticket, now, status, &signal, &attempt);
            }
            Event::Fail { retryable_error, attempt } => {
                if tickets.is_empty() {
                    continue;
                }
                let attempt = Attempt::new(u32::from(attempt).max(1), true, t0);
                let ticket = tickets.remove(0);
                let _ = engine.on_transport_error(ticket, now, retryable_error, &attempt);
            }
            Event::Cancel => {
                if !tickets.is_empty() {
                    drop(tickets.remove(0));
                }
            }
        }
    }
    drop(tickets);
    for (scope, stats) in engine.stats() {
        assert_eq!(stats.in_flight(), 0, "{scope}");
    }
});
