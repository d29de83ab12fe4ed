//! `demo-server serve` / `bench` / `compare` / `client`; see `--help`.

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use demo_server::bench::{self, BenchOptions};
use demo_server::cli::{BenchArgs, Cli, Command, ServeArgs};
use demo_server::local_store::LocalStore;
use demo_server::{AppState, Store};
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Serve(args) => serve(args).await,
        Command::Bench(args) => run_bench(args).await,
        Command::Compare(args) => run_compare(args).await,
        // The client sets up its own logging: its stdout carries its report.
        Command::Client(args) => demo_server::example_clients::main(args)
            .await
            .map_err(Into::into),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("demo-server: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Logs on stderr, `info` unless `RUST_LOG` says otherwise.
fn init_logging() {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
}

async fn serve(args: ServeArgs) -> Result<(), Box<dyn std::error::Error>> {
    init_logging();
    let config = args.server_config()?;
    let store = Store::from_url(args.redis.as_deref()).await?;
    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    let policy = config.policy();
    println!(
        "demo-server: listening on http://{}, store: {}, {} limit {} per {:?}, headers {}, fail {}",
        listener.local_addr()?,
        store.describe(),
        policy.algorithm(),
        policy.limit(),
        policy.window(),
        args.headers.name(),
        args.fail.name(),
    );
    for (name, route) in config.routes() {
        let p = route.policy();
        println!(
            "demo-server: /api/{name}: {} limit {} per {:?}",
            p.algorithm(),
            p.limit(),
            p.window()
        );
    }
    tracing::info!(store = %store.describe(), "serving");
    let state = AppState::new(config, store);
    demo_server::serve(listener, state, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await?;
    Ok(())
}

async fn run_bench(args: BenchArgs) -> Result<(), Box<dyn std::error::Error>> {
    init_logging();
    // A throw-away redis-server, if started, lives until `local` is dropped.
    let local = LocalStore::auto(args.redis.as_deref()).await?;
    eprintln!("demo-server: bench on {}", local.describe());
    let store = local.connect().await?;
    let options = BenchOptions {
        iterations: args.iterations.max(1),
        limit: args.limit.max(1),
        window: Duration::from_secs_f64(args.window.clamp(0.001, 3600.0)),
        memory_limits: if args.no_memory {
            Vec::new()
        } else {
            BenchOptions::default().memory_limits
        },
        ..BenchOptions::default()
    };
    let report = bench::run(&store, &options).await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{report}");
    }
    drop(local);
    Ok(())
}

async fn run_compare(
    args: demo_server::compare::CompareArgs,
) -> Result<(), Box<dyn std::error::Error>> {
    init_logging();
    let json = args.json;
    let report = demo_server::compare::main(args).await?;
    demo_server::compare::print(&report, json);
    Ok(())
}
