//! The bounds a case is judged by, and the table of a sweep.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::case::Case;
use super::client::Outcome;
use super::limiter::Kind;
use super::style::Style;

/// One case's result against its floor.
#[derive(Debug, Clone)]
pub struct Result {
    pub case: Case,
    pub outcome: Outcome,
    /// The oracle's finish over the network's mean legs, case seconds.
    pub floor: f64,
    /// Its finish over the shortest legs: no client finishes before.
    pub bound: f64,
}

impl Result {
    /// The floor a ratio is taken against: the oracle's, and at least one
    /// unit's time at the quota's rate (a job within the burst has a floor
    /// of a round trip, possibly zero; a client is allowed that unit).
    pub fn floor_for_ratio(&self) -> f64 {
        self.floor.max(self.case.unit_time())
    }

    pub fn ratio(&self) -> f64 {
        self.outcome.elapsed / self.floor_for_ratio()
    }

    /// Requests beyond the job and one per task.
    pub fn excess(&self) -> i64 {
        self.outcome.sent as i64 - self.case.successes as i64 - self.case.concurrency as i64
    }

    pub fn waste(&self) -> f64 {
        self.outcome.refused as f64 / self.outcome.sent.max(1) as f64
    }

    /// The bounds: with quota headers at most N + C sent and
    /// 1.10× the floor; hints only N + C + 2 and 1.25×.
    pub fn within_bounds(&self) -> bool {
        let (extra, ratio) = if self.case.style.states_quota() {
            (0, 1.10)
        } else {
            (2, 1.25)
        };
        self.outcome.finished && self.excess() <= extra && self.ratio() <= ratio
    }

    /// Beyond what no case may do: twice the floor, or 10 % refused.
    pub fn gross(&self) -> bool {
        !self.outcome.finished || self.ratio() > 2.0 || self.waste() > 0.10
    }
}

#[derive(Default)]
struct Row {
    cases: usize,
    within: usize,
    gross: usize,
    worst_ratio: f64,
    worst_excess: i64,
    ratios: Vec<f64>,
}

/// The table: per limiter kind and header style, cases run, share within
/// bounds, cases beyond the gross bounds, median and worst ratio, worst
/// excess of requests.
pub fn table(results: &[Result]) -> String {
    let mut rows: BTreeMap<(Kind, Style), Row> = BTreeMap::new();
    let mut all = Row::default();
    for result in results {
        for row in [
            rows.entry((result.case.kind, result.case.style))
                .or_default(),
            &mut all,
        ] {
            row.cases += 1;
            row.within += usize::from(result.within_bounds());
            row.gross += usize::from(result.gross());
            row.worst_ratio = row.worst_ratio.max(result.ratio());
            row.worst_excess = row.worst_excess.max(result.excess());
            row.ratios.push(result.ratio());
        }
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| limiter | header style | cases | within bounds | > 2x or > 10 % refused | median ratio | worst ratio | worst sent − N − C |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|---:|---:|---:|");
    let mut line = |kind: &str, style: &str, row: &mut Row| {
        row.ratios.sort_by(f64::total_cmp);
        let median = row.ratios.get(row.ratios.len() / 2).copied().unwrap_or(0.0);
        let _ = writeln!(
            out,
            "| {kind} | {style} | {} | {} ({:.0} %) | {} | {median:.2} | {:.2} | {} |",
            row.cases,
            row.within,
            100.0 * row.within as f64 / row.cases.max(1) as f64,
            row.gross,
            row.worst_ratio,
            row.worst_excess,
        );
    };
    for ((kind, style), row) in &mut rows {
        line(kind.name(), style.name(), row);
    }
    line("**all**", "", &mut all);
    out
}

/// Per limiter kind: cases run and cases within bounds.
pub fn within_by_kind(results: &[Result]) -> BTreeMap<Kind, (usize, usize)> {
    let mut kinds: BTreeMap<Kind, (usize, usize)> = BTreeMap::new();
    for result in results {
        let entry = kinds.entry(result.case.kind).or_default();
        entry.0 += 1;
        entry.1 += usize::from(result.within_bounds());
    }
    kinds
}

/// What the engine took each limiter kind for at the end of its cases: a
/// markdown table, limiter kinds down, the engine's kinds across.
pub fn identification(results: &[Result]) -> String {
    let mut seen: BTreeMap<Kind, BTreeMap<&'static str, usize>> = BTreeMap::new();
    let mut names: Vec<&'static str> = Vec::new();
    for result in results {
        let name = result.outcome.identified.name();
        if !names.contains(&name) {
            names.push(name);
        }
        *seen
            .entry(result.case.kind)
            .or_default()
            .entry(name)
            .or_default() += 1;
    }
    names.sort_unstable();
    let mut table = format!("| limiter | {} |\n|---|", names.join(" | "));
    table.push_str(&"---:|".repeat(names.len()));
    for (kind, counts) in &seen {
        table.push_str(&format!("\n| {} |", kind.name()));
        for name in &names {
            table.push_str(&format!(" {} |", counts.get(name).copied().unwrap_or(0)));
        }
    }
    table
}
