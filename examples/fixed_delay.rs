//! Run with: `cargo run --release --example fixed_delay -- --url http://127.0.0.1:3000/ --successes 100`
//!
//! A client that backs off a fixed 50 ms after every 429 or 503 and reads
//! nothing the server says. Far better than resending at once, yet it still
//! guesses: against a bucket refilled at 20/s the seed measured 175 requests
//! for 100 successes. Bounded by `--max-requests` and `--max-secs`; prints one
//! JSON line with what it cost the server.

mod support;

use std::time::Duration;

use clap::Parser;
use support::{CommonArgs, Outcome, Report};

/// The fixed pause after a throttled response (the seed's experiment).
const PAUSE_AFTER_THROTTLE: Duration = Duration::from_millis(50);

/// Wait a fixed 50 ms after every 429 until enough requests succeeded.
#[derive(Debug, Parser)]
struct Args {
    #[command(flatten)]
    common: CommonArgs,
}

#[tokio::main]
async fn main() -> Result<(), String> {
    support::init_tracing();
    let args = Args::parse().common;
    let client = args.http_client()?;
    let url = args.url.clone();
    let tally = support::drive(&args, move || {
        let request = client.get(&url);
        async move {
            let outcome = match request.send().await {
                Ok(response) => support::classify(response.status()),
                Err(_) => Outcome::Error,
            };
            if outcome == Outcome::Throttled {
                tokio::time::sleep(PAUSE_AFTER_THROTTLE).await;
            }
            outcome
        }
    })
    .await;
    println!("{}", Report::from_tally("fixed_delay", &tally).to_json());
    Ok(())
}
