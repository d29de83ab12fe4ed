//! `demo-server compare`: the original experiment's experiments (docs/background.md)
//! in one command, with the example clients as separate processes of this
//! same executable (`demo-server client …`, nothing more to build), and an
//! SVG timeline of what each client cost the server.
//!
//! 0. operating points (the headline): the polite client beside the
//!    "Retry-After seconds" reference on every point of the lab
//!    ([`crate::lab::POINTS`]), each against its floor ([`floor`]);
//! 1. race: 50 concurrent requests at a bucket of 20, racy vs Lua bucket;
//! 2. window edge: fixed window vs sliding log vs sliding window counter;
//! 3. wasted requests: naive, fixed 50 ms, Retry-After seconds (the seed's
//!    reference), Retry-After ms, courteous
//!    defaults — at concurrency 1 and 4 and across 3 replicas;
//!
//!    3b. (`--only limiters`, not in the default run) the same job on every
//!    kind of limiter (fixed windows aligned to the clock or opened by the
//!    first request; `--matrix`: token bucket, sliding log, sliding window
//!    counter, every header style), against each algorithm's floor;
//! 4. herds of 10 polite processes on one client id, each learning alone
//!    and sharing a fleet store (`--only herd`: also 30 and 100, and a
//!    fleet whose Redis is stopped mid-run);
//! 5. the cost of one check per algorithm.
//!
//! Quotas live in Redis when `REDIS_URL` is set or `redis-server` is on `PATH`
//! (started on a free loopback port and stopped at the end), otherwise in
//! the embedded store.

pub mod clients;
mod error;
pub mod experiments;
pub mod floor;
mod herd_targets;
pub mod proxy;
pub mod recorder;
pub mod report;
pub mod seed;
mod tables;
pub mod timeline;

use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, ValueEnum};

use crate::HeaderStyle;

pub use error::CompareError;
pub use report::{CompareReport, Target};

use crate::local_store::LocalStore;
use clients::ClientProgram;
use experiments::Lab;
use timeline::Lane;

/// `demo-server compare`.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Redis URL; without it a throw-away `redis-server` from PATH is started,
    /// or the embedded store is used when there is none.
    #[arg(long, env = "REDIS_URL")]
    pub redis: Option<String>,
    /// Print the results as JSON on stdout (progress stays on stderr).
    #[arg(long)]
    pub json: bool,
    /// Where to write the SVG timeline [default: <target dir>/compare-timeline.svg].
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// Header dialect of the replicas (default: every dialect at once, the
    /// demo server's default; the original experiment's server spoke `ietf-legacy`).
    #[arg(long, value_enum, default_value_t = HeaderStyle::All)]
    pub headers: HeaderStyle,
    /// Run the limiters experiment (3b, not in the default run) on the
    /// whole matrix: token bucket, both fixed windows, the sliding log and
    /// the sliding window counter × five header styles × c=1, 4, with four
    /// clients (about 14 minutes). `--only limiters` without it: the fixed
    /// windows only.
    #[arg(long)]
    pub matrix: bool,
    /// Limit the limiters experiment to these algorithms (comma-separated;
    /// default: those of the run, see `--matrix`).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub algorithms: Vec<crate::Algorithm>,
    /// Limit the limiters experiment to these header styles (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub styles: Vec<HeaderStyle>,
    /// Limit the limiters experiment to these concurrencies (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub concurrency: Vec<u64>,
    /// Run only these experiments (comma-separated).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub only: Vec<Experiment>,
}

/// The experiments, for `--only`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Experiment {
    /// 0. Operating points.
    Grid,
    /// 1. Racy vs atomic bucket.
    Race,
    /// 2. Window edge.
    Edge,
    /// 3. Wasted requests.
    Waste,
    /// 3b. Every kind of limiter (not in the default run).
    Limiters,
    /// 4. Herd of polite processes.
    Herd,
    /// 5. Cost of one check.
    Cost,
}

impl CompareArgs {
    /// Whether `experiment` runs: those named by `--only`, else all but 3b
    /// (also run by `--matrix` and its filters).
    fn runs(&self, experiment: Experiment) -> bool {
        if !self.only.is_empty() {
            return self.only.contains(&experiment);
        }
        experiment != Experiment::Limiters
            || self.matrix
            || !self.algorithms.is_empty()
            || !self.styles.is_empty()
    }
}

/// Run the experiments with this executable as the clients' program, write
/// the timeline, return the result.
pub async fn main(args: CompareArgs) -> Result<CompareReport, CompareError> {
    run_with(args, ClientProgram::this_executable()?).await
}

/// [`main`], the clients run by `clients` (`PROGRAM client NAME …`).
pub async fn run_with(
    args: CompareArgs,
    clients: ClientProgram,
) -> Result<CompareReport, CompareError> {
    let local = LocalStore::auto(args.redis.as_deref()).await?;
    eprintln!("compare: store: {}", local.describe());
    let store = local.connect().await?.describe();
    let lab = Lab::new(local, clients, args.headers);
    let started = Instant::now();
    let mut report = CompareReport {
        store,
        headers: args.headers,
        ..CompareReport::default()
    };
    if args.runs(Experiment::Grid) {
        lab.progress(format!(
            "0/5 operating points: {} points × {} clients, about 2-3 s each (one 10 s window)",
            crate::lab::POINTS.len(),
            experiments::grid::CLIENTS.len()
        ));
        report.grid = experiments::grid::run(&lab, &crate::lab::POINTS).await?;
    }
    if args.runs(Experiment::Race) {
        lab.progress("1/5 race: 50 concurrent requests at a bucket of 20, three runs each");
        report.race = experiments::race::run(&lab).await?;
    }
    if args.runs(Experiment::Edge) {
        lab.progress("2/5 window edge: N before and N after an edge");
        report.edge = experiments::edge::run(&lab).await?;
    }
    if args.runs(Experiment::Waste) {
        lab.progress("3/5 wasted requests: 4 clients × 3 setups, about 4 s each");
        report.waste = experiments::waste::run(&lab).await?;
    }
    if args.runs(Experiment::Limiters) {
        let selection = experiments::limiters::Selection {
            matrix: args.matrix,
            algorithms: args.algorithms.clone(),
            styles: args.styles.clone(),
            concurrency: args.concurrency.clone(),
        };
        let cells = selection.cells().len();
        let clients = experiments::limiters::clients(args.matrix).len();
        lab.progress(format!(
            "3b/5 every limiter: {clients} clients × {cells} limiter, header and concurrency cells"
        ));
        report.limiters = experiments::limiters::run(&lab, &selection).await?;
    }
    if args.runs(Experiment::Herd) {
        let all = args.only.contains(&Experiment::Herd);
        lab.progress(if all {
            "4/5 herds: 10, 30, 100 polite processes on one client id, local and fleet"
        } else {
            "4/5 herds: 10 polite processes on one client id, local and fleet"
        });
        let herds = experiments::herd::run(&lab, all).await?;
        report.herd = herds.rows;
        report.fleet_cost = herds.fleet_cost;
        report.fleet_skipped = herds.fleet_skipped;
    }
    if args.runs(Experiment::Cost) {
        lab.progress("5/5 cost of one check per algorithm");
        report.cost = Some(experiments::cost::run(&lab).await?);
    }
    report.seconds = started.elapsed().as_secs_f64();
    report.evaluate();
    if !report.grid.is_empty()
        || !report.waste.is_empty()
        || !report.limiters.is_empty()
        || !report.herd.is_empty()
    {
        let path = args
            .svg
            .clone()
            .unwrap_or_else(|| lab.clients.target_dir().join("compare-timeline.svg"));
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, timeline_svg(&lab, &report))
            .map_err(|e| CompareError::setup(format!("writing {}: {e}", path.display())))?;
        report.svg = Some(path.display().to_string());
    }
    lab.progress("done");
    Ok(report)
}

/// The timeline of the operating points, experiment 3 (and 3b, the herd),
/// from what the proxy recorded.
fn timeline_svg(lab: &Lab, report: &CompareReport) -> String {
    let mut lanes = Vec::new();
    for row in &report.grid {
        let note = match (&row.report, row.floor_ms) {
            (Some(r), Some(floor)) => format!(
                "{} {} {} ms c={} · sent {} of N+C {} · {:.2} s, floor {:.2} s ({:.2}×)",
                row.point.name,
                row.point.limit_label(),
                row.point.latency_ms,
                row.point.concurrency,
                r.sent,
                row.max_sent(),
                r.elapsed_ms as f64 / 1000.0,
                floor as f64 / 1000.0,
                row.ratio.unwrap_or(0.0)
            ),
            _ => format!("{} · no result", row.point.name),
        };
        lanes.push(lane(lab, &row.client_id, row.client.label(), note));
    }
    for row in &report.waste {
        let note = match &row.report {
            Some(r) => format!(
                "{} · sent {} · wasted {} · {:.2} s",
                row.setup.label(),
                r.sent,
                r.wasted(),
                r.elapsed_ms as f64 / 1000.0
            ),
            None => format!("{} · {}", row.setup.label(), "no result"),
        };
        lanes.push(lane(lab, &row.client_id, row.client.label(), note));
    }
    for row in &report.limiters {
        let note = match &row.report {
            Some(r) => format!(
                "{} {} c={} · sent {} · {:.2} s (floor {:.2} s)",
                row.cell.algorithm.name(),
                row.cell.headers.name(),
                row.cell.concurrency,
                r.sent,
                r.elapsed_ms as f64 / 1000.0,
                row.floor_ms.unwrap_or(0) as f64 / 1000.0
            ),
            None => "no result".to_owned(),
        };
        lanes.push(lane(lab, &row.client_id, row.client.label(), note));
    }
    for h in &report.herd {
        let note = format!(
            "{} · sent {} · wasted {} · {:.2} s · {:.0} % of the quota",
            h.store_label(),
            h.sent,
            h.wasted(),
            h.elapsed_ms as f64 / 1000.0,
            100.0 * h.quota_used
        );
        let label = format!("herd of {} × {}", h.clients, h.successes_each);
        lanes.push(lane(lab, &h.client_id, &label, note));
    }
    timeline::render(
        "What each client cost the server: requests per 100 ms",
        &format!(
            "operating points: each its own limiter and job (see the notes); the rest: token bucket of {} refilled {}/s, headers {}, {} successes needed per client; store: {}",
            experiments::waste::CAPACITY,
            experiments::waste::RATE,
            report::header_style_name(report.headers),
            experiments::waste::SUCCESSES,
            report.store
        ),
        &lanes,
    )
}

fn lane(lab: &Lab, client_id: &str, label: &str, note: String) -> Lane {
    let events = lab.recorder.events_of(client_id);
    let start = events.iter().map(|e| e.at).min().unwrap_or_default();
    Lane {
        label: label.to_owned(),
        note,
        requests: events
            .iter()
            .map(|e| (e.at.saturating_sub(start), e.allowed()))
            .collect(),
    }
}

/// Print `report` as a table, or as JSON.
pub fn print(report: &CompareReport, json: bool) {
    if json {
        match serde_json::to_string_pretty(report) {
            Ok(text) => println!("{text}"),
            Err(e) => eprintln!("compare: cannot serialize the report: {e}"),
        }
    } else {
        print!("{report}");
    }
}
