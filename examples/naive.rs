//! Run with: `cargo run --release --example naive -- --url http://127.0.0.1:3000/ --successes 100`
//!
//! The client every rate-limited server dreads: it ignores 429s and resends
//! at once, so almost everything it sends is wasted (the seed measured 52,853
//! requests for 100 successes). It stops at `--max-requests` (100,000) or
//! `--max-secs` (60 s) whatever happens, and prints one JSON line with what it
//! cost the server.

mod support;

use clap::Parser;
use support::{CommonArgs, Outcome, Report};

/// Resend at once after every 429 until enough requests succeeded.
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
            match request.send().await {
                Ok(response) => support::classify(response.status()),
                Err(_) => Outcome::Error,
            }
        }
    })
    .await;
    println!("{}", Report::from_tally("naive", &tally).to_json());
    Ok(())
}
