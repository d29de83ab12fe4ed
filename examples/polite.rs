//! Run with: `cargo run --release --example polite -- --url http://127.0.0.1:8080/ --successes 100`
//!
//! The same job as the `naive` and `fixed_delay` examples, done with
//! `courteous::Client` at its default settings: it reads whatever the server
//! says (`Retry-After`, `RateLimit-*`, `X-RateLimit-*`, problem+json), paces
//! before the quota runs out, and retries a 429 no earlier than asked — so
//! nearly every request it sends succeeds. `--no-pacing` keeps only the
//! "honour Retry-After" part, for comparison. `sent` and `throttled` in the
//! last-line JSON come from the client's own counters and include its
//! internal retries.
//!
//! `--fleet-redis redis://127.0.0.1:6379` (feature `redis`) shares pauses,
//! learned quotas and send slots with every process given the same URL:
//! `cargo run --release --features redis --example polite -- --fleet-redis URL …`.

mod support;

use clap::Parser;

/// Send politely until enough requests succeeded.
#[derive(Debug, Parser)]
struct Args {
    #[command(flatten)]
    common: support::CommonArgs,
    /// Honour hints after a 429 but never slow down before one
    /// ("Retry-After only"); reported as `polite_no_pacing`.
    #[arg(long)]
    no_pacing: bool,
    /// Share the quota with other processes through this Redis (or
    /// `redis+cluster://…`); needs the `redis` feature.
    #[arg(long)]
    fleet_redis: Option<String>,
}

#[tokio::main]
async fn main() -> Result<(), String> {
    support::init_tracing();
    let args = Args::parse();
    let report =
        support::polite::run_with(&args.common, !args.no_pacing, args.fleet_redis.as_deref())
            .await?;
    println!("{}", report.to_json());
    Ok(())
}
