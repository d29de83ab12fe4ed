//! Servers that refuse everything with an odd hint, on real sockets
//! (wiremock): courteous never panics, never hammers, and ends every
//! request in a typed error. One row per hint of `Hostile::catalogue()`.

#![cfg(feature = "testing")]

use std::time::{Duration, Instant};

use courteous::testing::Hostile;
use courteous::{Client, Config};
use wiremock::{Mock, MockServer, matchers::any};

/// How long each row's client keeps calling `send`.
const RUN: Duration = Duration::from_secs(2);
/// Requests a server refusing everything may receive in [`RUN`]: the
/// backoff floor's first pauses are drawn from 0–100 ms, 0–200 ms, …, so
/// about 6 are expected (8 s allows 30, the bound; 2 s is a
/// quarter of it, plus one).
const MAX_SENT: u64 = 9;

struct Row {
    name: &'static str,
    sent: u64,
    sends: u64,
    panicked: bool,
    untyped: Vec<String>,
    wait_too_long: u64,
}

async fn run(name: &'static str, hostile: Hostile, seed: u64) -> Row {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(hostile.clone())
        .mount(&server)
        .await;
    let client = Client::builder()
        .config(Config::default().rng_seed(seed))
        .build();
    let url = server.uri();
    let task = tokio::spawn(async move {
        let started = Instant::now();
        let (mut sends, mut untyped, mut wait_too_long) = (0, Vec::new(), 0);
        while started.elapsed() < RUN && sends < 1_000 {
            sends += 1;
            let left = RUN.saturating_sub(started.elapsed());
            let Ok(outcome) = tokio::time::timeout(left, client.get(&url).send()).await else {
                break;
            };
            match outcome {
                Err(error) if error.is_rate_limited() => {
                    wait_too_long += u64::from(error.is_wait_too_long());
                }
                Err(error) => untyped.push(error.to_string()),
                Ok(response) => untyped.push(format!("a response: {}", response.status())),
            }
        }
        (sends, untyped, wait_too_long)
    });
    let outcome = task.await;
    let (sends, untyped, wait_too_long) = outcome.as_ref().cloned().unwrap_or_default();
    Row {
        name,
        sent: hostile.received(),
        sends,
        panicked: outcome.is_err(),
        untyped,
        wait_too_long,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_hint_panics_or_hammers() {
    let rows = Hostile::catalogue();
    let tasks: Vec<_> = rows
        .into_iter()
        .enumerate()
        .map(|(seed, (name, hostile))| tokio::spawn(run(name, hostile, seed as u64)))
        .collect();
    let mut failures = Vec::new();
    for task in tasks {
        let row = task.await.expect("the row's harness itself does not panic");
        eprintln!(
            "{}: {} sent for {} sends (wait too long: {})",
            row.name, row.sent, row.sends, row.wait_too_long
        );
        if row.panicked {
            failures.push(format!("{}: panicked", row.name));
        }
        if row.sent > MAX_SENT || row.sent == 0 {
            failures.push(format!("{}: {} requests in {RUN:?}", row.name, row.sent));
        }
        if !row.untyped.is_empty() {
            failures.push(format!("{}: {:?}", row.name, row.untyped));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test]
async fn absurd_waits_end_in_wait_too_long_after_one_request() {
    for name in [
        "retry-after-2^64",
        "retry-after-10^20",
        "problem-retry-after-ms-1e300",
        "problem-retry-after-1e300",
        "x-ratelimit-reset-10^20",
    ] {
        let (_, hostile) = Hostile::catalogue()
            .into_iter()
            .find(|(row, _)| *row == name)
            .unwrap();
        let row = run(name, hostile, 1).await;
        assert!(!row.panicked, "{name}");
        assert!(row.untyped.is_empty(), "{name}: {:?}", row.untyped);
        assert_eq!(row.wait_too_long, row.sends, "{name}: every send");
        let most = if name.starts_with("x-ratelimit") {
            2
        } else {
            1
        };
        assert!(row.sent <= most, "{name}: {} sent", row.sent);
    }
}
