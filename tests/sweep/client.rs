//! The client under test: `concurrency` tasks sharing one
//! [`CourteousLayer`] over a `service_fn` that plays the network and the
//! simulated server, on paused tokio time. Each task takes the next of the
//! job's successes still unclaimed and sends until it is done.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use courteous::{Config, CourteousLayer, QuotaKind};
use http::Method;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use tokio::time::Instant;
use tower::{Layer, ServiceExt};

use super::case::{self, Case};
use super::server::Server;
use super::style;

/// What the client did.
#[derive(Debug, Clone, Copy, Default)]
pub struct Outcome {
    /// Requests that reached the server.
    pub sent: u64,
    /// Of those, refused.
    pub refused: u64,
    /// When the job's last success came back, case seconds.
    pub elapsed: f64,
    /// Whether the job finished within the run's bounds.
    pub finished: bool,
    /// The kind of quota the engine took the server's for, at the end.
    pub identified: QuotaKind,
}

struct Shared {
    server: Server,
    legs: SmallRng,
    sent: u64,
    refused: u64,
    /// Successes received, and jobs claimed but not yet done.
    done: u64,
    claimed: u64,
    finished_at: Option<f64>,
}

/// The configuration the sweep runs with: the defaults but for the
/// longest wait (hour-long windows are swept) and the deadline.
fn config(case: &Case) -> Config {
    Config::default()
        .max_wait(Duration::from_secs(2 * 3600))
        .deadline(None)
        .rng_seed(case.seed)
}

/// Runs the case's client; stops at `time_cap` case seconds or
/// `sent_cap` requests.
pub fn run(case: &Case, time_cap: f64, sent_cap: u64) -> Outcome {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");
    runtime.block_on(drive(case, time_cap, sent_cap))
}

async fn drive(case: &Case, time_cap: f64, sent_cap: u64) -> Outcome {
    let start = Instant::now();
    let since = move || (Instant::now() - start).as_secs_f64();
    let shared = Arc::new(Mutex::new(Shared {
        server: Server::new(case),
        legs: SmallRng::seed_from_u64(case.seed ^ 0x5eed),
        sent: 0,
        refused: 0,
        done: 0,
        claimed: 0,
        finished_at: None,
    }));
    let (rtt, jitter) = (case.rtt, case.jitter);
    let leg = move |rng: &mut SmallRng| {
        let spread = if jitter > 0.0 {
            rng.random_range(-jitter..jitter)
        } else {
            0.0
        };
        Duration::from_secs_f64(case::leg(rtt, spread))
    };
    let (kind_style, rounding) = (case.style, case.rounding);
    // `COURTEOUS_SWEEP_TRACE=1`: every arrival, for a case run alone.
    let trace = std::env::var_os("COURTEOUS_SWEEP_TRACE").is_some();
    if trace {
        // And the engine's decisions, as `RUST_LOG` asks (say
        // `courteous=trace`), in order among the arrivals.
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .without_time()
            .with_ansi(false)
            .with_test_writer()
            .try_init();
    }
    let network = {
        let shared = Arc::clone(&shared);
        tower::service_fn(move |_request: reqwest::Request| {
            let shared = Arc::clone(&shared);
            async move {
                let out = leg(&mut shared.lock().unwrap().legs);
                tokio::time::sleep(out).await;
                let t = since();
                let (answer, headers, content_type, body, back) = {
                    let mut shared = shared.lock().unwrap();
                    shared.sent += 1;
                    let answer = shared.server.arrive(t);
                    if !answer.admitted {
                        shared.refused += 1;
                    }
                    if trace {
                        println!(
                            "{t:.4} arrival: {} (remaining {}, retry after {:.3})",
                            if answer.admitted {
                                "admitted"
                            } else {
                                "refused"
                            },
                            answer.view.remaining,
                            answer.view.retry_after
                        );
                    }
                    let (headers, content_type, body) = style::render(
                        kind_style,
                        rounding,
                        &answer.view,
                        answer.tokens.as_ref(),
                        !answer.admitted,
                        t,
                    );
                    let back = leg(&mut shared.legs);
                    (answer, headers, content_type, body, back)
                };
                tokio::time::sleep(Duration::from_secs_f64(answer.departs - t)).await;
                tokio::time::sleep(back).await;
                let status = if answer.admitted { 200 } else { 429 };
                let mut response = http::Response::builder().status(status);
                for (name, value) in &headers {
                    response = response.header(name, value);
                }
                if let Some(content_type) = content_type {
                    response = response.header("content-type", content_type);
                }
                let response = response
                    .body(body.unwrap_or_default())
                    .expect("a valid response");
                Ok::<_, std::io::Error>(reqwest::Response::from(response))
            }
        })
    };
    let layer = CourteousLayer::with_config(config(case));
    let service = layer.layer(network);
    let mut tasks = Vec::new();
    for _ in 0..case.concurrency {
        let shared = Arc::clone(&shared);
        let service = service.clone();
        let successes = case.successes;
        tasks.push(tokio::spawn(async move {
            loop {
                {
                    let mut state = shared.lock().unwrap();
                    let over = since() > time_cap || state.sent >= sent_cap;
                    if over || state.done + state.claimed >= successes {
                        return;
                    }
                    state.claimed += 1;
                }
                let request =
                    reqwest::Request::new(Method::GET, "http://127.0.0.1:9/r".parse().unwrap());
                let result = service.clone().oneshot(request).await;
                let ok = matches!(&result, Ok(response) if response.status().is_success());
                {
                    let mut state = shared.lock().unwrap();
                    state.claimed -= 1;
                    if ok {
                        state.done += 1;
                        if state.done == successes {
                            state.finished_at = Some(since());
                        }
                    }
                }
                if !ok {
                    // A user's loop would not spin on a give-up either.
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }));
    }
    for task in tasks {
        task.await.expect("a client task");
    }
    let identified = layer
        .stats()
        .first()
        .map_or(QuotaKind::Unknown, |(_, stats)| stats.quota_kind());
    let shared = shared.lock().unwrap();
    Outcome {
        sent: shared.sent,
        refused: shared.refused,
        elapsed: shared.finished_at.unwrap_or(since()),
        finished: shared.finished_at.is_some(),
        identified,
    }
}
