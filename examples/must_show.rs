//! Run with: `cargo run --release --example must_show`
//!
//! The measurement behind the middleware's promises. A token bucket of 20
//! refilled at 20/s (the test kit's wiremock responder, on loopback) speaks
//! one header dialect at a time; the polite client needs 100 successes at
//! concurrency 1 and 4. Targets: with any hint, at most 101 requests and
//! 4.2 s; when `RateLimit-Remaining` comes with a policy, no 429 at all; with
//! bare 429s, at most 110 requests. Then wrapped vs bare reqwest against a
//! server with no limits: at least 0.97x the throughput (median of runs).
//! `sent` and `429s` are what the *server* counted. `--client` runs the same
//! scenarios with another example client, to check the harness against the
//! seed's figures (fixed 50 ms: about 175 sent).

mod support;

use std::num::NonZeroU32;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};
use courteous::testing::{Dialect, RetryAfterStyle, TokenBucket};
use support::{CommonArgs, Report};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

#[derive(Debug, Parser)]
struct Args {
    /// Which example client to measure.
    #[arg(long, value_enum, default_value_t = ClientKind::Polite)]
    client: ClientKind,
    /// Only scenarios whose name contains this text.
    #[arg(long)]
    only: Option<String>,
    /// Concurrency levels to run each scenario at.
    #[arg(long, value_delimiter = ',', default_values_t = [1, 4])]
    concurrency: Vec<u64>,
    /// Instead of the fixed scenarios, run one with these quota dialects
    /// (repeatable; combine with --hint).
    #[arg(long, value_enum)]
    dialect: Vec<DialectArg>,
    /// Instead of the fixed scenarios, run one with these 429 hint styles
    /// (repeatable; combine with --dialect).
    #[arg(long, value_enum)]
    hint: Vec<HintArg>,
    /// Skip the throughput comparison.
    #[arg(long)]
    no_throughput: bool,
    /// Requests per throughput run.
    #[arg(long, default_value_t = 1000)]
    requests: u64,
    /// Throughput run pairs (the median ratio is reported).
    #[arg(long, default_value_t = 41)]
    runs: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ClientKind {
    /// courteous with default settings.
    Polite,
    /// courteous with pacing off: Retry-After only.
    RetryAfterOnly,
    /// Fixed 50 ms after a 429.
    FixedDelay,
    /// Resend at once (bounded at 100,000 requests or 60 s).
    Naive,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum DialectArg {
    IetfSeparate,
    IetfSeparateWithPolicy,
    IetfDictionary,
    IetfList,
    XRatelimit,
    XRatelimitResetAfter,
}

impl DialectArg {
    fn dialect(self) -> Dialect {
        match self {
            Self::IetfSeparate => Dialect::IetfSeparate,
            Self::IetfSeparateWithPolicy => Dialect::IetfSeparateWithPolicy,
            Self::IetfDictionary => Dialect::IetfDictionary,
            Self::IetfList => Dialect::IetfList,
            Self::XRatelimit => Dialect::XRateLimit,
            Self::XRatelimitResetAfter => Dialect::XRateLimitResetAfter,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum HintArg {
    Seconds,
    HttpDate,
    Millis,
    XMsMillis,
    ProblemJsonMillis,
    ProblemJsonSeconds,
}

impl HintArg {
    fn style(self) -> RetryAfterStyle {
        match self {
            Self::Seconds => RetryAfterStyle::Seconds,
            Self::HttpDate => RetryAfterStyle::HttpDate,
            Self::Millis => RetryAfterStyle::Millis,
            Self::XMsMillis => RetryAfterStyle::XMsMillis,
            Self::ProblemJsonMillis => RetryAfterStyle::ProblemJsonMillis,
            Self::ProblemJsonSeconds => RetryAfterStyle::ProblemJsonSeconds,
        }
    }
}

/// What a scenario must achieve.
#[derive(Debug, Clone, Copy)]
enum Target {
    /// At most 101 sent, within 4.2 s.
    Hint,
    /// No 429, and the hint target too.
    NoThrottle,
    /// At most 110 sent.
    Bare,
}

struct Scenario {
    name: &'static str,
    target: Target,
    shape: fn(TokenBucket) -> TokenBucket,
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "Retry-After seconds",
        target: Target::Hint,
        shape: |b| b.retry_after(RetryAfterStyle::Seconds),
    },
    Scenario {
        name: "Retry-After date",
        target: Target::Hint,
        shape: |b| b.retry_after(RetryAfterStyle::HttpDate),
    },
    Scenario {
        name: "retry-after-ms",
        target: Target::Hint,
        shape: |b| b.retry_after(RetryAfterStyle::Millis),
    },
    Scenario {
        name: "problem+json ms",
        target: Target::Hint,
        shape: |b| b.retry_after(RetryAfterStyle::ProblemJsonMillis),
    },
    Scenario {
        name: "IETF -00..-04 fields",
        target: Target::Hint,
        shape: |b| b.dialect(Dialect::IetfSeparate),
    },
    Scenario {
        name: "IETF -05/-06 + policy",
        target: Target::NoThrottle,
        shape: |b| b.dialect(Dialect::IetfSeparateWithPolicy),
    },
    Scenario {
        name: "IETF -07 dictionary",
        target: Target::NoThrottle,
        shape: |b| b.dialect(Dialect::IetfDictionary),
    },
    Scenario {
        name: "IETF -08..-11 lists",
        target: Target::NoThrottle,
        shape: |b| b.dialect(Dialect::IetfList),
    },
    Scenario {
        name: "X-RateLimit epoch",
        target: Target::Hint,
        shape: |b| b.dialect(Dialect::XRateLimit),
    },
    Scenario {
        name: "X-RateLimit-Reset-After",
        target: Target::Hint,
        shape: |b| b.dialect(Dialect::XRateLimitResetAfter),
    },
    Scenario {
        name: "seed server (Limit/Remaining, RA, problem)",
        target: Target::Hint,
        shape: |b| {
            b.dialect(Dialect::IetfSeparate)
                .retry_after(RetryAfterStyle::Seconds)
                .retry_after(RetryAfterStyle::ProblemJsonMillis)
        },
    },
    Scenario {
        name: "demo-server --headers all",
        target: Target::NoThrottle,
        shape: |b| {
            b.dialect(Dialect::IetfSeparate)
                .dialect(Dialect::IetfList)
                .dialect(Dialect::XRateLimit)
                .retry_after(RetryAfterStyle::Seconds)
                .retry_after(RetryAfterStyle::ProblemJsonMillis)
        },
    },
    Scenario {
        name: "bare 429",
        target: Target::Bare,
        shape: |b| b.bare(),
    },
];

const SUCCESSES: u64 = 100;
const HINT_MAX_SENT: u64 = 101;
const HINT_MAX_ELAPSED: Duration = Duration::from_millis(4200);
const BARE_MAX_SENT: u64 = 110;
const THROUGHPUT_MIN_RATIO: f64 = 0.97;

// One thread for the clients (wiremock serves from its own): less
// scheduling noise in the throughput runs on a small machine.
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), String> {
    support::init_tracing();
    let args = Args::parse();
    let mut missed = 0;
    println!(
        "{:<42} {:>2} {:>5} {:>5} {:>5} {:>9} {:>11}  verdict",
        "dialect (bucket 20, 20/s, 100 successes)",
        "C",
        "sent",
        "429s",
        "ok",
        "elapsed",
        "client-sent"
    );
    let custom = !(args.dialect.is_empty() && args.hint.is_empty());
    let chosen = SCENARIOS.iter().filter(|scenario| {
        !custom
            && args
                .only
                .as_ref()
                .is_none_or(|o| scenario.name.contains(o.as_str()))
    });
    let mut rows: Vec<(String, Target, Box<dyn Fn(TokenBucket) -> TokenBucket>)> = chosen
        .map(|s| (s.name.to_owned(), s.target, Box::new(s.shape) as Box<_>))
        .collect();
    if custom {
        let (dialects, hints) = (args.dialect.clone(), args.hint.clone());
        let target = if dialects.iter().any(|d| d.dialect().states_policy()) {
            Target::NoThrottle
        } else if dialects.is_empty() && hints.is_empty() {
            Target::Bare
        } else {
            Target::Hint
        };
        let name = format!("custom {dialects:?} {hints:?}");
        let shape = move |bucket: TokenBucket| {
            let bucket = dialects.iter().fold(bucket, |b, d| b.dialect(d.dialect()));
            hints.iter().fold(bucket, |b, h| b.retry_after(h.style()))
        };
        rows.push((name, target, Box::new(shape)));
    }
    for (name, target, shape) in &rows {
        for &concurrency in &args.concurrency {
            let row = run_scenario(shape, concurrency, args.client).await?;
            let verdict = judge(*target, &row);
            missed += usize::from(verdict.starts_with("MISS"));
            println!(
                "{:<42} {:>2} {:>5} {:>5} {:>5} {:>7.2} s {:>11}  {verdict}",
                name,
                concurrency,
                row.sent,
                row.throttled,
                row.report.ok,
                row.elapsed.as_secs_f64(),
                row.report.sent,
            );
        }
    }
    if !args.no_throughput {
        for concurrency in [1, 4] {
            let ratio = throughput(&args, concurrency).await?;
            if ratio < THROUGHPUT_MIN_RATIO {
                missed += 1;
            }
        }
    }
    println!("{missed} target(s) missed");
    Ok(())
}

struct Row {
    /// Requests the server received.
    sent: u64,
    /// Requests the server rejected.
    throttled: u64,
    elapsed: Duration,
    /// What the client itself reported.
    report: Report,
}

async fn run_scenario(
    shape: &dyn Fn(TokenBucket) -> TokenBucket,
    concurrency: u64,
    kind: ClientKind,
) -> Result<Row, String> {
    let server = MockServer::builder()
        .disable_request_recording()
        .start()
        .await;
    let per_second = NonZeroU32::new(20).expect("non-zero");
    let bucket = shape(TokenBucket::per_second(per_second).burst(per_second));
    Mock::given(any())
        .respond_with(bucket.clone())
        .mount(&server)
        .await;
    let args = CommonArgs {
        url: server.uri(),
        successes: SUCCESSES,
        concurrency,
        client_id: None,
        max_requests: 100_000,
        max_secs: 30.0,
    };
    let started = Instant::now();
    let report = run_client(kind, &args).await?;
    Ok(Row {
        sent: bucket.received(),
        throttled: bucket.rejected(),
        elapsed: started.elapsed(),
        report,
    })
}

async fn run_client(kind: ClientKind, args: &CommonArgs) -> Result<Report, String> {
    match kind {
        ClientKind::Polite => support::polite::run(args, true).await,
        ClientKind::RetryAfterOnly => support::polite::run(args, false).await,
        ClientKind::FixedDelay => support::clients::fixed_delay(args).await,
        ClientKind::Naive => support::clients::naive(args).await,
    }
}

fn judge(target: Target, row: &Row) -> String {
    let mut misses = Vec::new();
    if row.report.ok < SUCCESSES {
        misses.push(format!("only {} ok", row.report.ok));
    }
    match target {
        Target::Hint | Target::NoThrottle => {
            if row.sent > HINT_MAX_SENT {
                misses.push(format!("sent {} > {HINT_MAX_SENT}", row.sent));
            }
            if row.elapsed > HINT_MAX_ELAPSED {
                misses.push(format!("{:.2} s > 4.2 s", row.elapsed.as_secs_f64()));
            }
            if matches!(target, Target::NoThrottle) && row.throttled > 0 {
                misses.push(format!("{} 429s > 0", row.throttled));
            }
        }
        Target::Bare => {
            if row.sent > BARE_MAX_SENT {
                misses.push(format!("sent {} > {BARE_MAX_SENT}", row.sent));
            }
        }
    }
    if misses.is_empty() {
        "ok".to_owned()
    } else {
        format!("MISS: {}", misses.join(", "))
    }
}

/// Wrapped vs bare reqwest: the median over runs of the ratio of their
/// rates, each pair measured back to back in alternating order so a
/// neighbour's load hits both sides alike. An A/A pair (bare vs another bare
/// client) is measured the same way to show the noise floor.
async fn throughput(args: &Args, concurrency: u64) -> Result<f64, String> {
    let server = MockServer::builder()
        .disable_request_recording()
        .start()
        .await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200))
        .mount(&server)
        .await;
    let url = server.uri();
    let bare = Side::Bare(reqwest::Client::new());
    let control = Side::Bare(reqwest::Client::new());
    let wrapped = Side::Wrapped(support::polite::client(reqwest::Client::new(), true)?);
    for side in [&bare, &control, &wrapped] {
        // One unmeasured run each opens connections and warms caches.
        load(side, &url, 200, concurrency).await?;
    }
    let measured = paired(args, &bare, &wrapped, &url, concurrency).await?;
    let noise = paired(args, &bare, &control, &url, concurrency).await?;
    let ratio = measured.median_ratio;
    let verdict = if ratio >= THROUGHPUT_MIN_RATIO {
        "ok"
    } else {
        "MISS"
    };
    println!(
        "throughput C={concurrency} ({} pairs x {} req, no limits): wrapped/bare median ratio {ratio:.3}, \
         best {:.0}/{:.0} req/s = {:.3}; A/A control: median {:.3}, best {:.3}  {verdict}",
        args.runs,
        args.requests,
        measured.b_best,
        measured.a_best,
        measured.best_ratio(),
        noise.median_ratio,
        noise.best_ratio(),
    );
    Ok(ratio)
}

/// Over `--runs` pairs: the median of the `b / a` rate ratios, and each
/// side's best rate (the least disturbed by neighbours on a shared machine).
async fn paired(
    args: &Args,
    a: &Side,
    b: &Side,
    url: &str,
    concurrency: u64,
) -> Result<Paired, String> {
    let mut ratios = Vec::new();
    let (mut a_best, mut b_best) = (0.0_f64, 0.0_f64);
    for run in 0..args.runs {
        let (a_rate, b_rate) = if run % 2 == 0 {
            let a_rate = load(a, url, args.requests, concurrency).await?;
            (a_rate, load(b, url, args.requests, concurrency).await?)
        } else {
            let b_rate = load(b, url, args.requests, concurrency).await?;
            (load(a, url, args.requests, concurrency).await?, b_rate)
        };
        ratios.push(b_rate / a_rate);
        a_best = a_best.max(a_rate);
        b_best = b_best.max(b_rate);
    }
    Ok(Paired {
        median_ratio: median(&mut ratios),
        a_best,
        b_best,
    })
}

struct Paired {
    median_ratio: f64,
    a_best: f64,
    b_best: f64,
}

impl Paired {
    fn best_ratio(&self) -> f64 {
        self.b_best / self.a_best
    }
}

#[derive(Debug, Clone)]
enum Side {
    Bare(reqwest::Client),
    Wrapped(support::polite::Client),
}

/// `requests` GETs from `concurrency` tasks; requests per second.
async fn load(side: &Side, url: &str, requests: u64, concurrency: u64) -> Result<f64, String> {
    let started = Instant::now();
    let tasks: Vec<_> = (0..concurrency)
        .map(|task| {
            let share = requests / concurrency + u64::from(task < requests % concurrency);
            let (side, url) = (side.clone(), url.to_owned());
            tokio::spawn(async move {
                for _ in 0..share {
                    let response = match &side {
                        Side::Bare(client) => {
                            client.get(&url).send().await.map_err(|e| e.to_string())?
                        }
                        Side::Wrapped(client) => {
                            client.get(&url).send().await.map_err(|e| e.to_string())?
                        }
                    };
                    response.bytes().await.map_err(|e| e.to_string())?;
                }
                Ok::<_, String>(())
            })
        })
        .collect();
    for task in tasks {
        task.await.map_err(|e| e.to_string())??;
    }
    Ok(requests as f64 / started.elapsed().as_secs_f64())
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
