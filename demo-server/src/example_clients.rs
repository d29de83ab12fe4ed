//! `demo-server client NAME …`: the example clients of `examples/` (naive,
//! fixed delay, "Retry-After seconds", polite) built into this binary.
//!
//! `compare` runs each client as a child process of this same executable, so
//! the first README command builds one binary: building the examples instead
//! compiles every dev-dependency of courteous (proptest, criterion, wiremock,
//! rcgen, …), which took 2 minutes on a fresh clone on 2 cores. The code is
//! the examples' own (`examples/support/`, compiled here through `#[path]`),
//! so `cargo run --example polite -- …` and `demo-server client polite …`
//! run the same load loop and print the same report line.

#[path = "../../examples/support/mod.rs"]
mod support;

use clap::{Args, ValueEnum};

/// Which example client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClientName {
    /// `examples/naive.rs`: resend at once after a 429.
    Naive,
    /// `examples/fixed_delay.rs`: wait 50 ms after a 429.
    FixedDelay,
    /// `examples/retry_after_seconds.rs`: sleep the whole seconds of `Retry-After`.
    RetryAfterSeconds,
    /// `examples/polite.rs`: courteous at its defaults (`--no-pacing`: hints only).
    Polite,
}

/// `demo-server client`: the arguments of the examples.
#[derive(Debug, Args)]
pub struct ClientArgs {
    /// The client to run.
    #[arg(value_enum)]
    pub client: ClientName,
    #[command(flatten)]
    common: support::CommonArgs,
    /// `polite` only: honour hints after a 429, never slow down before one.
    #[arg(long)]
    pub no_pacing: bool,
    /// `polite` only: share the quota through this Redis (or `redis+cluster://…`).
    #[arg(long)]
    pub fleet_redis: Option<String>,
}

/// Run the client and print its one-line JSON report on stdout (logs go to
/// stderr, filtered by `RUST_LOG`).
pub async fn main(args: ClientArgs) -> Result<(), String> {
    support::init_tracing();
    let common = &args.common;
    let report = match args.client {
        ClientName::Naive => support::clients::naive(common).await?,
        ClientName::FixedDelay => support::clients::fixed_delay(common).await?,
        ClientName::RetryAfterSeconds => support::clients::retry_after_seconds(common).await?,
        ClientName::Polite => {
            support::polite::run_with(common, !args.no_pacing, args.fleet_redis.as_deref()).await?
        }
    };
    println!("{}", report.to_json());
    Ok(())
}
