//! Run with: `cargo run --release --example fixed_delay -- --url http://127.0.0.1:8080/ --successes 100`
//!
//! A client that backs off a fixed 50 ms after every 429 or 503 and reads
//! nothing the server says. Far better than resending at once, yet it still
//! guesses: against a bucket refilled at 20/s the original experiment measured 175 requests
//! for 100 successes. Bounded by `--max-requests` and `--max-secs`; prints as
//! its last line one JSON object with what it cost the server.

mod support;

use clap::Parser;

/// Wait a fixed 50 ms after every 429 until enough requests succeeded.
#[derive(Debug, Parser)]
struct Args {
    #[command(flatten)]
    common: support::CommonArgs,
}

#[tokio::main]
async fn main() -> Result<(), String> {
    support::init_tracing();
    let args = Args::parse().common;
    let report = support::clients::fixed_delay(&args).await?;
    println!("{}", report.to_json());
    Ok(())
}
