//! Resident memory for 1,000,000 distinct scopes, with and without idle
//! eviction, on a controlled clock.
//!
//! Run with: `cargo bench --bench scopes` (eviction at its default, 10 min
//! idle) and `cargo bench --bench scopes -- --no-evict` (every scope kept).
//! Each run is its own process, so one mode's allocations do not hide the
//! other's. Scope `i` (`http://host-i.example`) gets one request answered
//! `200` at `t0 + i · step` (`--step-ms`, 10 ms by default: a crawler
//! touching 100 new hosts a second, so 1,000,000 hosts span 2.8 hours of
//! virtual time). Resident memory (`VmRSS`, Linux only) is printed every
//! 100,000 scopes with the number of scopes the engine holds.

use std::time::{Duration, Instant};

use courteous::engine::{Admit, Attempt, Config, Engine, Scope};
use courteous::signal::Signal;
use http::StatusCode;

const SCOPES: u64 = 1_000_000;

fn resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let evict = !args.iter().any(|a| a == "--no-evict");
    let step_ms = args
        .iter()
        .position(|a| a == "--step-ms")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(10u64);
    let config = if evict {
        Config::default()
    } else {
        Config::default().evict_idle_scopes(None)
    };
    let engine = Engine::new(config);
    let t0 = Instant::now();
    let start_rss = resident_kib().unwrap_or(0);
    println!(
        "mode: {}, step {step_ms} ms, RSS at start {start_rss} KiB",
        if evict {
            "evict after 10 min idle"
        } else {
            "no eviction"
        }
    );
    println!("| scopes created | scopes held | RSS (KiB) | RSS growth (MiB) |");
    println!("|---|---|---|---|");
    let wall = Instant::now();
    for i in 0..SCOPES {
        let now = t0 + Duration::from_millis(i * step_ms);
        let scope = Scope::new(format!("http://host-{i}.example"));
        let Admit::Now(ticket) = engine.admit(&scope, now) else {
            panic!("a new scope admits at once");
        };
        let attempt = Attempt::new(1, true, now);
        let _ = engine.on_response(ticket, now, StatusCode::OK, &Signal::default(), &attempt);
        if (i + 1) % 100_000 == 0 {
            let rss = resident_kib().unwrap_or(0);
            let held = engine.scope_count();
            println!(
                "| {} | {held} | {rss} | {:.1} |",
                i + 1,
                rss.saturating_sub(start_rss) as f64 / 1024.0
            );
        }
    }
    println!(
        "{SCOPES} scopes in {:.2} s wall ({:.0} ns per new scope)",
        wall.elapsed().as_secs_f64(),
        wall.elapsed().as_nanos() as f64 / SCOPES as f64
    );
}
