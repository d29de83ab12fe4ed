//! Running the limiter grid: for each cell, the "Retry-After seconds"
//! reference then the polite client, each against a fresh server.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use courteous::testing::{
    Dialect, FixedWindow, RetryAfterStyle, SlidingLog, SlidingWindowCounter, TokenBucket,
};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::cli::ClientKind;
use crate::limiters::{self, Cell, HeaderStyle, Limiter, Run, WINDOW};
use crate::scenarios::run_client;
use crate::support::CommonArgs;
use crate::{RUN_MAX_REQUESTS, RUN_MAX_SECS, SUCCESSES};

/// Any limiter of the grid, configured in one header style.
#[derive(Debug, Clone)]
enum Server {
    Bucket(TokenBucket),
    Window(FixedWindow),
    Log(SlidingLog),
    Counter(SlidingWindowCounter),
}

/// The same builder calls on each responder type (they share no trait).
macro_rules! styled {
    ($responder:expr, $style:expr) => {{
        let seconds = RetryAfterStyle::Seconds;
        match $style {
            HeaderStyle::Ietf => $responder.dialect(Dialect::IetfList).retry_after(seconds),
            HeaderStyle::IetfLegacy => $responder
                .dialect(Dialect::IetfSeparate)
                .retry_after(seconds),
            HeaderStyle::XRatelimit => $responder.dialect(Dialect::XRateLimit).retry_after(seconds),
            HeaderStyle::RetryAfter => $responder.retry_after(seconds),
            HeaderStyle::Bare => $responder.bare(),
        }
    }};
}

impl Server {
    fn new(limiter: Limiter, style: HeaderStyle) -> Self {
        let limit = limiters::limit();
        let window = |w: FixedWindow| Server::Window(styled!(w, style));
        match limiter {
            Limiter::TokenBucket => {
                let bucket = TokenBucket::per_second(limit).burst(limit);
                Server::Bucket(styled!(bucket, style))
            }
            Limiter::WindowFromFirst => window(fixed_window()),
            Limiter::WindowClock => window(fixed_window().aligned_to_clock()),
            Limiter::SlidingLog => {
                let log = SlidingLog::with_window(limit, WINDOW).expect("WINDOW is not zero");
                Server::Log(styled!(log, style))
            }
            Limiter::SlidingWindow => {
                let counter =
                    SlidingWindowCounter::with_window(limit, WINDOW).expect("WINDOW is not zero");
                Server::Counter(styled!(counter, style))
            }
        }
    }

    fn counts(&self) -> (u64, u64) {
        match self {
            Server::Bucket(r) => (r.received(), r.rejected()),
            Server::Window(r) => (r.received(), r.rejected()),
            Server::Log(r) => (r.received(), r.rejected()),
            Server::Counter(r) => (r.received(), r.rejected()),
        }
    }
}

fn fixed_window() -> FixedWindow {
    FixedWindow::with_window(limiters::limit(), WINDOW).expect("WINDOW is not zero")
}

/// The server, noting the wall clock when the first request reached it
/// (the clock-aligned windows' floors depend on it).
struct Recorded {
    server: Server,
    first: Arc<OnceLock<SystemTime>>,
}

impl Respond for Recorded {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        self.first.get_or_init(SystemTime::now);
        match &self.server {
            Server::Bucket(r) => r.respond(request),
            Server::Window(r) => r.respond(request),
            Server::Log(r) => r.respond(request),
            Server::Counter(r) => r.respond(request),
        }
    }
}

/// One client against a fresh server of the cell.
async fn run(cell: &Cell, kind: ClientKind) -> Result<Run, String> {
    let mock = MockServer::builder()
        .disable_request_recording()
        .start()
        .await;
    let server = Server::new(cell.limiter, cell.style);
    let first = Arc::new(OnceLock::new());
    let recorded = Recorded {
        server: server.clone(),
        first: first.clone(),
    };
    Mock::given(any()).respond_with(recorded).mount(&mock).await;
    let args = CommonArgs {
        url: mock.uri(),
        successes: SUCCESSES,
        concurrency: cell.concurrency,
        client_id: None,
        max_requests: RUN_MAX_REQUESTS,
        max_secs: RUN_MAX_SECS,
        max_errors_in_a_row: crate::support::DEFAULT_MAX_ERRORS_IN_A_ROW,
    };
    let started = (Instant::now(), SystemTime::now());
    let report = run_client(kind, &args).await?;
    let elapsed = started.0.elapsed();
    let (sent, throttled) = server.counts();
    let first = first.get().copied().unwrap_or(started.1);
    Ok(Run {
        sent,
        throttled,
        ok: report.ok,
        elapsed,
        floor: cell.limiter.floor(first),
    })
}

/// Sleep until the wall clock is `phase` into a window: both clients of a
/// clock-aligned cell start at the same phase, so they face the same floor.
async fn wait_for_phase(phase: Duration) {
    let now = limiters::phase(SystemTime::now());
    let wait = if phase >= now {
        phase - now
    } else {
        WINDOW - now + phase
    };
    tokio::time::sleep(wait).await;
}

/// The cells of a run: every limiter × style × concurrency, narrowed by any
/// non-empty filter.
pub(crate) fn cells(
    limiters: &[Limiter],
    styles: &[HeaderStyle],
    concurrency: &[u64],
) -> Vec<Cell> {
    let mut out = Vec::new();
    for limiter in pick(limiters, &Limiter::ALL) {
        for style in pick(styles, &HeaderStyle::ALL) {
            for &concurrency in concurrency {
                out.push(Cell {
                    limiter,
                    style,
                    concurrency,
                });
            }
        }
    }
    out
}

/// `only` when given, else `all`.
fn pick<T: Copy>(only: &[T], all: &[T]) -> Vec<T> {
    if only.is_empty() {
        all.to_vec()
    } else {
        only.to_vec()
    }
}

pub(crate) fn print_header() {
    println!(
        "{:<22} {:<11} {:>2} {:<10} {:>5} {:>5} {:>4} {:>8} {:>5} {:>6} {:>6}  verdict",
        "limiter (20 per 1 s)",
        "headers",
        "C",
        "client",
        "sent",
        "429s",
        "ok",
        "elapsed",
        "×ref",
        "floor",
        "×floor"
    );
}

fn print_row(cell: &Cell, client: &str, run: &Run, reference: &Run, verdict: &str) {
    let elapsed = run.elapsed.as_secs_f64();
    println!(
        "{:<22} {:<11} {:>2} {:<10} {:>5} {:>5} {:>4} {:>6.2} s {:>5.2} {:>4.2} s {:>6.2}  {verdict}",
        cell.limiter.name(),
        cell.style.name(),
        cell.concurrency,
        client,
        run.sent,
        run.throttled,
        run.ok,
        elapsed,
        elapsed / reference.elapsed.as_secs_f64(),
        run.floor.as_secs_f64(),
        elapsed / run.floor.as_secs_f64().max(f64::EPSILON),
    );
}

/// Run the reference and the polite client in every cell; print both rows
/// and the polite client's verdict. Returns the cells missed.
pub(crate) async fn run_all(cells: &[Cell]) -> Result<Vec<String>, String> {
    print_header();
    let mut missed = Vec::new();
    for cell in cells {
        let phase = limiters::phase(SystemTime::now());
        let reference = run(cell, ClientKind::RetryAfterSeconds).await?;
        if cell.limiter.aligned_to_clock() {
            wait_for_phase(phase).await;
        }
        let polite = run(cell, ClientKind::Polite).await?;
        print_row(cell, "RA seconds", &reference, &reference, "(reference)");
        let misses = limiters::misses(cell, &polite, &reference);
        let verdict = if misses.is_empty() {
            "ok".to_owned()
        } else {
            format!("MISS: {}", misses.join(", "))
        };
        print_row(cell, "polite", &polite, &reference, &verdict);
        if !misses.is_empty() {
            missed.push(format!(
                "{} {} c={}: {}",
                cell.limiter.name(),
                cell.style.name(),
                cell.concurrency,
                misses.join(", ")
            ));
        }
    }
    Ok(missed)
}
