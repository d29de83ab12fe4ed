//! Run with: `cargo run --release --example naive -- --url http://127.0.0.1:8080/ --successes 100`
//!
//! The client every rate-limited server dreads: it ignores 429s and resends
//! at once, so almost everything it sends is wasted (the original experiment measured 52,853
//! requests for 100 successes). It stops at `--max-requests` (100,000) or
//! `--max-secs` (60 s) whatever happens, and prints as its last line one JSON
//! object with what it cost the server.

mod support;

use clap::Parser;

/// Resend at once after every 429 until enough requests succeeded.
#[derive(Debug, Parser)]
struct Args {
    #[command(flatten)]
    common: support::CommonArgs,
}

#[tokio::main]
async fn main() -> Result<(), String> {
    support::init_tracing();
    let args = Args::parse().common;
    let report = support::clients::naive(&args).await?;
    println!("{}", report.to_json());
    Ok(())
}
