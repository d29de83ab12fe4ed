//! The operating-point sweep: seeded cases over limiter kind × limit
//! (1–1,000) × window (100 ms – 1 h) × round trip (0–300 ms, with jitter
//! and so reordering) × concurrency (1–16) × header style and rounding ×
//! the server's timer × a limit that drops mid-run × another client
//! spending the same quota. Each case runs the real tower layer over a
//! simulated server on paused tokio time, and is judged against its floor:
//! what a client that knows the limiter exactly could do (`oracle.rs`).
//!
//! `COURTEOUS_SWEEP_CASES` sets how many cases (default below),
//! `COURTEOUS_SWEEP_SEED` the first seed; the table is printed (run with
//! `--nocapture` to see it).

mod case;
mod client;
mod judge;
mod limiter;
mod oracle;
mod server;
mod style;

use std::sync::Mutex;

use case::Case;
use judge::Result;

/// Cases a default run sweeps: enough for every kind × style row to hold
/// a few, within a minute of a debug build on two cores.
const DEFAULT_CASES: u64 = 400;

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn run_case(seed: u64) -> Result {
    let case = Case::draw(seed);
    let floor = oracle::floor(&case);
    let cap = 10.0 * floor.max(case.unit_time()) + 60.0;
    let outcome = client::run(&case, cap, 10 * case.successes + 100);
    Result {
        case,
        outcome,
        floor,
    }
}

fn sweep(first: u64, cases: u64) -> Vec<Result> {
    let next = Mutex::new(first);
    let results = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let seed = {
                        let mut next = next.lock().unwrap();
                        if *next >= first + cases {
                            return;
                        }
                        *next += 1;
                        *next - 1
                    };
                    let result = run_case(seed);
                    results.lock().unwrap().push(result);
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|result| result.case.seed);
    results
}

#[test]
fn operating_point_sweep() {
    let first = env_number("COURTEOUS_SWEEP_SEED", 1);
    let cases = env_number("COURTEOUS_SWEEP_CASES", DEFAULT_CASES);
    let results = sweep(first, cases);
    println!("{}", judge::table(&results));
    // The oracle is a floor: no client finishes before it (else the
    // oracle, not the client, is wrong).
    let beaten: Vec<_> = results
        .iter()
        .filter(|result| result.outcome.finished && result.outcome.elapsed < result.floor - 1e-6)
        .map(|result| (result.case.seed, result.floor, result.outcome.elapsed))
        .collect();
    assert!(
        beaten.is_empty(),
        "floors beaten (seed, floor, elapsed): {beaten:?}"
    );
    if std::env::var_os("COURTEOUS_SWEEP_CASES_OUT").is_some() {
        for result in &results {
            println!(
                "{:?} floor {:.3} sent {} refused {} elapsed {:.3} ratio {:.2} within {}",
                result.case,
                result.floor,
                result.outcome.sent,
                result.outcome.refused,
                result.outcome.elapsed,
                result.ratio(),
                result.within_bounds()
            );
        }
    }
}
