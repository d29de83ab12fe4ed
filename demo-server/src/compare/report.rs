//! Everything the comparison measured, the targets it checks, and the
//! terminal tables (JSON is the same struct through serde).

use std::fmt;

use serde::Serialize;

use crate::{Algorithm, HeaderStyle};

use super::clients::ClientKind;
use super::experiments::cost::CostResult;
use super::experiments::edge::EdgeRow;
use super::experiments::fleet_cost::FleetCost;
use super::experiments::grid::GridRow;
use super::experiments::herd::HerdRow;
use super::experiments::limiters::LimiterRow;
use super::experiments::race::RaceRow;
use super::experiments::waste::{SETUPS, WasteRow};

/// The whole result.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CompareReport {
    /// Which store held the quotas.
    pub store: String,
    /// The replicas' header dialect.
    pub headers: HeaderStyle,
    /// Seconds the experiments took.
    pub seconds: f64,
    /// Experiment 0: the operating points.
    pub grid: Vec<GridRow>,
    /// Experiment 1.
    pub race: Vec<RaceRow>,
    /// Experiment 2.
    pub edge: Vec<EdgeRow>,
    /// Experiment 3.
    pub waste: Vec<WasteRow>,
    /// Experiment 3b.
    pub limiters: Vec<LimiterRow>,
    /// Experiment 4: one row per (processes, store), then the stopped-Redis run.
    pub herd: Vec<HerdRow>,
    /// Experiment 4: the fleet store's calls beside `PING` on the same Redis.
    pub fleet_cost: Option<FleetCost>,
    /// Experiment 4: why the fleet rows are missing, if they are.
    pub fleet_skipped: Option<String>,
    /// Experiment 5.
    pub cost: Option<CostResult>,
    /// Where the SVG timeline was written.
    pub svg: Option<String>,
    /// What the comparison must show, and whether it did.
    pub targets: Vec<Target>,
}

/// One claim and whether this run met it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Target {
    /// The claim.
    pub claim: String,
    /// `Some(true)` met, `Some(false)` missed, `None` not measured in this run.
    pub met: Option<bool>,
    /// The figures behind the verdict.
    pub measured: String,
}

impl CompareReport {
    /// The row of `client` in the setup at `index` of [`SETUPS`].
    pub fn waste_row(&self, client: ClientKind, index: usize) -> Option<&WasteRow> {
        let setup = SETUPS.get(index)?;
        self.waste
            .iter()
            .find(|r| r.client == client && r.setup == *setup)
    }

    /// Evaluate the "must show" list against the measurements.
    pub fn evaluate(&mut self) {
        let mut targets = Vec::new();
        targets.push(race_target(&self.race));
        targets.push(edge_target(&self.edge));
        targets.push(self.courteous_target());
        for index in [1, 2] {
            targets.push(self.spread_target(index));
        }
        targets.extend(self.limiter_targets());
        targets.extend(super::herd_targets::all(
            &self.herd,
            self.fleet_cost.as_ref(),
        ));
        self.targets = targets;
    }

    fn courteous_target(&self) -> Target {
        let claim = "courteous defaults, 1 replica, c=1: 100 sent for 100 successes, \
                     no slower than Retry-After only (1 % allowance for timer noise)"
            .to_owned();
        let polite = self
            .waste_row(ClientKind::Courteous, 0)
            .and_then(|r| r.report.as_ref());
        let retry = self
            .waste_row(ClientKind::RetryAfterOnly, 0)
            .and_then(|r| r.report.as_ref());
        match (polite, retry) {
            (Some(p), Some(r)) => Target {
                claim,
                met: Some(p.sent == p.ok && p.ok >= 100 && no_slower(p.elapsed_ms, r.elapsed_ms)),
                measured: format!(
                    "courteous {} sent / {} ok in {} ms; Retry-After only {} sent in {} ms",
                    p.sent, p.ok, p.elapsed_ms, r.sent, r.elapsed_ms
                ),
            },
            _ => not_measured(claim),
        }
    }

    fn spread_target(&self, index: usize) -> Target {
        let claim = format!(
            "courteous defaults, {}: at most 1 % wasted",
            SETUPS[index].label()
        );
        match self.waste_row(ClientKind::Courteous, index) {
            Some(row) => match (&row.report, row.wasted_percent()) {
                (Some(r), Some(pct)) => Target {
                    claim,
                    met: Some(pct <= 1.0 && r.ok >= 100),
                    measured: format!(
                        "{} sent, {} ok, {} wasted ({pct:.1} %)",
                        r.sent,
                        r.ok,
                        r.wasted()
                    ),
                },
                _ => not_measured(claim),
            },
            None => not_measured(claim),
        }
    }
}

/// Elapsed may be at most this multiple of the "Retry-After seconds"
/// reference's in the same cell (issue 10).
pub const REFERENCE_FACTOR: f64 = 1.05;
/// Where the headers locate the boundary, elapsed may be at most this
/// multiple of the floor (issue 10).
pub const FLOOR_FACTOR: f64 = 1.10;

impl CompareReport {
    /// The row of `client` in the same cell as `row`.
    fn limiter_row(&self, row: &LimiterRow, client: ClientKind) -> Option<&LimiterRow> {
        self.limiters
            .iter()
            .find(|r| r.cell == row.cell && r.client == client)
    }

    /// One target per courteous row of experiment 3b.
    fn limiter_targets(&self) -> Vec<Target> {
        let polite = self
            .limiters
            .iter()
            .filter(|r| r.client == ClientKind::Courteous);
        polite.map(|row| self.limiter_target(row)).collect()
    }

    fn limiter_target(&self, row: &LimiterRow) -> Target {
        let cell = row.cell;
        let locates = cell.locates_boundary();
        let claim = format!(
            "{} {} c={}: ≤ {} sent, ≤ {REFERENCE_FACTOR}× Retry-After seconds{}",
            cell.algorithm.name(),
            header_style_name(cell.headers),
            cell.concurrency,
            cell.max_sent(),
            if locates { ", ≤ 1.1× the floor" } else { "" }
        );
        let reference = self
            .limiter_row(row, ClientKind::RetryAfterSeconds)
            .and_then(|r| r.report.as_ref());
        let (Some(p), Some(r), Some(floor)) = (row.report.as_ref(), reference, row.floor_ms) else {
            return not_measured(claim);
        };
        let elapsed = p.elapsed_ms as f64;
        let met = p.ok >= 100
            && p.sent <= cell.max_sent()
            && elapsed <= r.elapsed_ms as f64 * REFERENCE_FACTOR
            && (!locates || elapsed <= floor as f64 * FLOOR_FACTOR);
        Target {
            claim,
            met: Some(met),
            measured: format!(
                "courteous {} sent in {} ms; Retry-After seconds {} sent in {} ms; floor {floor} ms",
                p.sent, p.elapsed_ms, r.sent, r.elapsed_ms
            ),
        }
    }
}

/// Both clients are paced by the server (the floor is 4.0 s for both), so a
/// few milliseconds either way are process scheduling, not the client:
/// `elapsed` may exceed `reference` by at most [`TIMER_NOISE`].
fn no_slower(elapsed_ms: u64, reference_ms: u64) -> bool {
    elapsed_ms as f64 <= reference_ms as f64 * (1.0 + TIMER_NOISE)
}

/// Allowance for scheduling noise when comparing two elapsed times (1 %).
pub const TIMER_NOISE: f64 = 0.01;

pub(super) fn not_measured(claim: String) -> Target {
    Target {
        claim,
        met: None,
        measured: "not measured".to_owned(),
    }
}

fn race_target(race: &[RaceRow]) -> Target {
    let claim =
        "race: the Lua token bucket admits 20/50 every run, the racy bucket more".to_owned();
    let of = |a: Algorithm| race.iter().find(|r| r.algorithm == a);
    match (of(Algorithm::TokenBucket), of(Algorithm::RacyBucket)) {
        (Some(atomic), Some(racy)) => Target {
            claim,
            met: Some(
                atomic.admitted.iter().all(|&n| n as u64 == atomic.capacity)
                    && racy.admitted.iter().any(|&n| n as u64 > racy.capacity),
            ),
            measured: format!(
                "token-bucket {:?}, racy-bucket {:?}",
                atomic.admitted, racy.admitted
            ),
        },
        _ => not_measured(claim),
    }
}

fn edge_target(edge: &[EdgeRow]) -> Target {
    let claim =
        "window edge: fixed window admits 2N, sliding log N, sliding window ≤ N + N·f".to_owned();
    let of = |a: Algorithm| edge.iter().find(|r| r.algorithm == a);
    match (
        of(Algorithm::FixedWindow),
        of(Algorithm::SlidingLog),
        of(Algorithm::SlidingWindow),
    ) {
        (Some(fixed), Some(log), Some(sliding)) => {
            let bound = sliding.limit + (sliding.limit as f64 * sliding.f).ceil() as u64;
            Target {
                claim,
                met: Some(
                    fixed.total() == 2 * fixed.limit
                        && log.total() == log.limit
                        && sliding.total() <= bound,
                ),
                measured: format!(
                    "N = {}: fixed {}, sliding log {}, sliding window {} (bound {bound})",
                    fixed.limit,
                    fixed.total(),
                    log.total(),
                    sliding.total()
                ),
            }
        }
        _ => not_measured(claim),
    }
}

/// The CLI name of a header style (`all`, `ietf-legacy`, …).
pub fn header_style_name(style: HeaderStyle) -> String {
    clap::ValueEnum::to_possible_value(&style)
        .map(|v| v.get_name().to_owned())
        .unwrap_or_else(|| format!("{style:?}"))
}

fn verdict(met: Option<bool>) -> &'static str {
    match met {
        Some(true) => "met   ",
        Some(false) => "MISSED",
        None => "n/a   ",
    }
}

impl fmt::Display for CompareReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "store: {}; headers: {}; experiments took {:.1} s",
            self.store,
            header_style_name(self.headers),
            self.seconds
        )?;
        super::tables::grid(f, &self.grid)?;
        super::tables::race(f, &self.race)?;
        super::tables::edge(f, &self.edge)?;
        super::tables::waste(f, &self.waste)?;
        super::tables::limiters(f, &self.limiters)?;
        super::tables::herd(
            f,
            &self.herd,
            self.fleet_cost.as_ref(),
            self.fleet_skipped.as_deref(),
        )?;
        super::tables::cost(f, self.cost.as_ref())?;
        if let Some(svg) = &self.svg {
            writeln!(f, "\ntimeline: {svg}")?;
        }
        writeln!(f, "\nmust show")?;
        for t in &self.targets {
            writeln!(f, "  {}  {} — {}", verdict(t.met), t.claim, t.measured)?;
        }
        Ok(())
    }
}
