//! Run with: `cargo run --release --features testing --example hostile_table`
//!
//! Measures how hard the `polite` example hits a server that refuses
//! everything, once per hostile hint of [`Hostile::catalogue`]: each row
//! starts a wiremock server on loopback, runs the `polite` example's client
//! (`--successes 3`, bounded by `--max-secs`, 8 by default) against it, and
//! prints the requests the server received and whether anything panicked
//! (a panic hook counts panics in any thread, the client's tasks included).
//!
//! `--serve NAME --port P` serves one row instead, so the `polite` example
//! binary itself can be pointed at it:
//! `cargo run --release --example polite -- --url http://127.0.0.1:P/ --successes 3 --max-secs 8`.

mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use clap::Parser;
use courteous::testing::Hostile;
use wiremock::{Mock, MockServer, matchers::any};

/// Measure the polite client against servers that refuse everything.
#[derive(Debug, Parser)]
struct Args {
    /// Seconds each row runs.
    #[arg(long, default_value_t = 8.0)]
    max_secs: f64,
    /// Successes the client is asked for (it never gets any).
    #[arg(long, default_value_t = 3)]
    successes: u64,
    /// Only the rows whose name contains this.
    #[arg(long)]
    only: Option<String>,
    /// Serve this row on `--port` until interrupted instead of measuring.
    #[arg(long)]
    serve: Option<String>,
    /// The loopback port for `--serve`.
    #[arg(long, default_value_t = 8080)]
    port: u16,
}

static PANICS: AtomicU64 = AtomicU64::new(0);

#[tokio::main]
async fn main() -> Result<(), String> {
    support::init_tracing();
    let args = Args::parse();
    let rows = Hostile::catalogue();
    if let Some(name) = &args.serve {
        let (_, hostile) = rows
            .into_iter()
            .find(|(row, _)| row == name)
            .ok_or_else(|| format!("no row named {name}"))?;
        return serve(hostile, args.port).await;
    }
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::Relaxed);
        default_hook(info);
    }));
    println!(
        "| the 429 carries | requests on the wire in {} s | panicked | the client's last error |",
        args.max_secs
    );
    println!("|---|---|---|---|");
    for (name, hostile) in rows {
        if args
            .only
            .as_deref()
            .is_some_and(|only| !name.contains(only))
        {
            continue;
        }
        let server = MockServer::start().await;
        Mock::given(any())
            .respond_with(hostile.clone())
            .mount(&server)
            .await;
        let panics_before = PANICS.load(Ordering::Relaxed);
        let common = support::CommonArgs {
            url: format!("{}/", server.uri()),
            successes: args.successes,
            concurrency: 1,
            client_id: None,
            max_requests: 100_000,
            max_secs: args.max_secs,
            // What the client does for the whole run is the measure.
            max_errors_in_a_row: u64::MAX,
        };
        let report = support::polite::run(&common, true).await?;
        let received = hostile.received();
        let last_error = last_error(&common).await;
        let panics = PANICS.load(Ordering::Relaxed) - panics_before;
        println!(
            "| `{name}` | {received} | {} | {last_error} |",
            if panics == 0 {
                "no".to_owned()
            } else {
                format!("**yes ({panics})**")
            },
        );
        tracing::info!(?report, "row done");
    }
    Ok(())
}

/// What one more `send`, from a fresh client, ends in (after the measured
/// run: its requests are not counted).
async fn last_error(common: &support::CommonArgs) -> String {
    let Ok(http) = common.http_client() else {
        return "bad URL".to_owned();
    };
    let Ok(client) = support::polite::client(http, true) else {
        return "no client".to_owned();
    };
    let send = client.get(common.url.as_str()).send();
    // Spawned so a panic inside is caught as a join error.
    let outcome = tokio::spawn(tokio::time::timeout(Duration::from_secs(130), send)).await;
    match outcome {
        Ok(Ok(Ok(response))) => format!("response {}", response.status()),
        Ok(Ok(Err(error))) => error.to_string(),
        Ok(Err(_)) => "no answer in 130 s".to_owned(),
        Err(_) => "panicked".to_owned(),
    }
}

async fn serve(hostile: Hostile, port: u16) -> Result<(), String> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", port))
        .map_err(|e| format!("binding 127.0.0.1:{port}: {e}"))?;
    let server = MockServer::builder().listener(listener).start().await;
    Mock::given(any())
        .respond_with(hostile.clone())
        .mount(&server)
        .await;
    println!("serving on {}", server.uri());
    tokio::signal::ctrl_c().await.map_err(|e| e.to_string())?;
    println!("received {}", hostile.received());
    Ok(())
}
