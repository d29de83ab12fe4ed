//! Experiment 3b: every kind of limiter. The waste experiment's job (100
//! successes, 20 per second) against each algorithm in each header style,
//! at concurrency 1 and 4, for courteous and the seed's "Retry-After
//! seconds" reference in the same run, each against the algorithm's floor.
//!
//! The default run covers the two fixed windows (clock-aligned and opened by
//! the client's first request) with every header at once; `--matrix` runs
//! token bucket, both fixed windows, the sliding log and the sliding window
//! counter × ietf, ietf-legacy, x-ratelimit, retry-after and bare × c=1, 4,
//! with "Retry-After ms" and fixed 50 ms too.
//!
//! **The floor** is the earliest a perfect client (zero round trips, every
//! unit spent the instant it exists) can have its 100th success:
//! - token bucket (burst B = 20, rate r = 20/s): (100 − B) / r = 4.0 s;
//! - sliding log and a window opened by the first request (L = 20 per
//!   W = 1 s): the 100th unit is the first of the 5th window, 4 W = 4.0 s;
//! - a clock-aligned window: the first window ends φ after the first request
//!   (φ measured from the proxy's record of it), then 3 more whole windows:
//!   φ + 3 W, between 3.0 and 4.0 s;
//! - the sliding window counter (aligned windows, the previous one weighted
//!   by its overlap): computed by admitting each request the instant the
//!   Lua script's rule would (`compare::floor`), φ + 4.16 s: a
//!   full window lets the next one admit 19, not 20.

use serde::Serialize;

use crate::{Algorithm, HeaderStyle, Policy};

use super::super::CompareError;
use super::super::clients::{self, ClientKind, ClientReport, ClientRun};
use super::super::proxy::RoundRobinProxy;
use super::super::recorder::Seen;
use super::Lab;
use super::waste::SUCCESSES;

/// Units per window (bucket capacity), as in the waste experiment.
pub const LIMIT: u64 = 20;
/// The window (time for a bucket to refill from empty).
pub const WINDOW_MS: u64 = 1000;

/// One limiter, header style and concurrency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Cell {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// The header style of the replica.
    pub headers: HeaderStyle,
    /// The client's `--concurrency`.
    pub concurrency: u64,
}

impl Cell {
    /// Whether the headers describe the quota.
    pub fn has_quota(&self) -> bool {
        !matches!(self.headers, HeaderStyle::RetryAfter | HeaderStyle::Bare)
    }

    /// Whether the headers locate the window's boundary (or the bucket's
    /// refill) well enough to be held to the floor: quota fields, except on
    /// clock-aligned windows (the fixed window's, the sliding window
    /// counter's) whose whole-second delta reset (`t=1` at every instant of
    /// a 1 s window) says nothing of their phase.
    pub fn locates_boundary(&self) -> bool {
        self.has_quota()
            && !(matches!(
                self.algorithm,
                Algorithm::FixedWindowLua | Algorithm::SlidingWindow
            ) && matches!(self.headers, HeaderStyle::Ietf | HeaderStyle::IetfLegacy))
    }

    /// Most requests courteous may send here (issue 10's must-show).
    pub fn max_sent(&self) -> u64 {
        let c = self.concurrency;
        match self.headers {
            HeaderStyle::Bare if c == 1 => SUCCESSES + 5,
            HeaderStyle::Bare => SUCCESSES + 8,
            HeaderStyle::RetryAfter => SUCCESSES + c,
            _ if c == 1 => SUCCESSES + 1,
            _ => SUCCESSES + c,
        }
    }
}

/// One client in one cell.
#[derive(Debug, Clone, Serialize)]
pub struct LimiterRow {
    /// Where it ran.
    pub cell: Cell,
    /// Which client.
    pub client: ClientKind,
    /// Its `X-Client-Id`.
    pub client_id: String,
    /// What the client reported, when it ran.
    pub report: Option<ClientReport>,
    /// What the proxy counted.
    pub seen: Seen,
    /// The algorithm's floor for this run, milliseconds (see the module docs).
    pub floor_ms: Option<u64>,
    /// Why there is no report.
    pub error: Option<String>,
}

/// The algorithms of the matrix.
pub const MATRIX_ALGORITHMS: [Algorithm; 5] = [
    Algorithm::TokenBucket,
    Algorithm::FixedWindowLua,
    Algorithm::ClientWindow,
    Algorithm::SlidingLog,
    Algorithm::SlidingWindow,
];

/// The header styles of the matrix.
pub const MATRIX_STYLES: [HeaderStyle; 5] = [
    HeaderStyle::Ietf,
    HeaderStyle::IetfLegacy,
    HeaderStyle::XRatelimit,
    HeaderStyle::RetryAfter,
    HeaderStyle::Bare,
];

/// Which cells run: the fixed windows with every header by default, the
/// whole matrix with `matrix`, narrowed by any non-empty filter.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// The whole matrix (every algorithm × style) before filtering.
    pub matrix: bool,
    /// Only these algorithms (empty: all of the run).
    pub algorithms: Vec<Algorithm>,
    /// Only these header styles (empty: all of the run).
    pub styles: Vec<HeaderStyle>,
    /// Only these concurrencies (empty: 1 and 4).
    pub concurrency: Vec<u64>,
}

impl Selection {
    /// The cells of the run, in order.
    pub fn cells(&self) -> Vec<Cell> {
        let (algorithms, styles): (&[Algorithm], &[HeaderStyle]) =
            if self.matrix || !self.algorithms.is_empty() || !self.styles.is_empty() {
                (&MATRIX_ALGORITHMS, &MATRIX_STYLES)
            } else {
                (
                    &[Algorithm::FixedWindowLua, Algorithm::ClientWindow],
                    &[HeaderStyle::All],
                )
            };
        let algorithms = filtered(algorithms, &self.algorithms);
        let styles = filtered(styles, &self.styles);
        let concurrencies = filtered(&[1, 4], &self.concurrency);
        let mut out = Vec::new();
        for &algorithm in &algorithms {
            for &headers in &styles {
                for &concurrency in &concurrencies {
                    out.push(Cell {
                        algorithm,
                        headers,
                        concurrency,
                    });
                }
            }
        }
        out
    }
}

/// `only` when given (it may name values `all` does not list), else `all`.
fn filtered<T: Copy>(all: &[T], only: &[T]) -> Vec<T> {
    if only.is_empty() {
        all.to_vec()
    } else {
        only.to_vec()
    }
}

/// The clients of a run.
pub fn clients(matrix: bool) -> &'static [ClientKind] {
    if matrix {
        &[
            ClientKind::FixedDelay,
            ClientKind::RetryAfterSeconds,
            ClientKind::RetryAfterOnly,
            ClientKind::Courteous,
        ]
    } else {
        &[ClientKind::RetryAfterSeconds, ClientKind::Courteous]
    }
}

/// The policy of a cell: 20 per second, as a bucket or as windows.
pub fn policy(algorithm: Algorithm) -> Result<Policy, CompareError> {
    Ok(Policy::new(
        algorithm,
        LIMIT,
        std::time::Duration::from_millis(WINDOW_MS),
    )?)
}

/// The floor in milliseconds (module docs, [`super::super::floor`]);
/// `first_ms` is the wall clock of the client's first answered request,
/// for the clock-aligned windows.
pub fn floor_ms(algorithm: Algorithm, first_ms: u64) -> u64 {
    super::super::floor::unit_ms(algorithm, LIMIT, WINDOW_MS, SUCCESSES, first_ms)
}

/// Every client in every cell.
pub async fn run(lab: &Lab, selection: &Selection) -> Result<Vec<LimiterRow>, CompareError> {
    let mut rows = Vec::new();
    for cell in selection.cells() {
        let policy = policy(cell.algorithm)?;
        let replicas = lab.replicas_speaking(&policy, 1, cell.headers).await?;
        let proxy = RoundRobinProxy::spawn(
            replicas.iter().map(|r| r.url()).collect(),
            lab.recorder.clone(),
        )
        .await?;
        for &kind in clients(selection.matrix) {
            let client_id = lab.client_id(&format!(
                "{}-{}-{}-c{}",
                kind.slug(),
                cell.algorithm.name(),
                cell.headers.name(),
                cell.concurrency
            ));
            let run = ClientRun {
                url: format!("{}/", proxy.url()),
                successes: SUCCESSES,
                concurrency: cell.concurrency,
                client_id: client_id.clone(),
                extra_args: Vec::new(),
            };
            let (report, error) = clients::try_run(&lab.clients, kind, &run).await;
            let events = lab.recorder.events_of(&client_id);
            let floor_ms = events
                .first()
                .map(|e| floor_ms(cell.algorithm, lab.recorder.wall_ms(e.at)));
            let row = LimiterRow {
                cell,
                client: kind,
                seen: lab.recorder.seen(&client_id),
                client_id,
                report,
                floor_ms,
                error,
            };
            lab.progress(progress_line(&row));
            rows.push(row);
        }
    }
    Ok(rows)
}

fn progress_line(row: &LimiterRow) -> String {
    let what = format!(
        "limiters: {} {} c={} {}",
        row.cell.algorithm.name(),
        row.cell.headers.name(),
        row.cell.concurrency,
        row.client.label()
    );
    super::against_floor(
        &what,
        row.report.as_ref(),
        row.error.as_deref(),
        row.floor_ms,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floors() {
        assert_eq!(floor_ms(Algorithm::TokenBucket, 123_456), 4000);
        assert_eq!(floor_ms(Algorithm::ClientWindow, 123_456), 4000);
        assert_eq!(floor_ms(Algorithm::SlidingLog, 123_456), 4000);
        // 544 ms to the clock's next second, then 3 whole windows.
        assert_eq!(floor_ms(Algorithm::FixedWindowLua, 123_456), 3544);
        // 544 ms to the boundary, then 4 windows of 19 and 4 of the 5th
        // (at 0, 53, 106 and 158 ms: `prev = 19`), by the Lua script's rule.
        assert_eq!(floor_ms(Algorithm::SlidingWindow, 123_456), 4702);
        assert_eq!(floor_ms(Algorithm::SlidingWindow, 999), 4159);
    }

    #[test]
    fn targets_per_style() {
        let cell = |headers, concurrency| Cell {
            algorithm: Algorithm::ClientWindow,
            headers,
            concurrency,
        };
        assert_eq!(cell(HeaderStyle::Ietf, 1).max_sent(), 101);
        assert_eq!(cell(HeaderStyle::Ietf, 4).max_sent(), 104);
        assert_eq!(cell(HeaderStyle::RetryAfter, 1).max_sent(), 101);
        assert_eq!(cell(HeaderStyle::Bare, 1).max_sent(), 105);
        assert_eq!(cell(HeaderStyle::Bare, 4).max_sent(), 108);
        assert!(cell(HeaderStyle::XRatelimit, 1).locates_boundary());
        assert!(!cell(HeaderStyle::Bare, 1).locates_boundary());
        let aligned = Cell {
            algorithm: Algorithm::FixedWindowLua,
            ..cell(HeaderStyle::Ietf, 1)
        };
        assert!(!aligned.locates_boundary());
    }
}
