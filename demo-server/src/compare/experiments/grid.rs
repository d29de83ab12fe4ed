//! The operating-point experiment: the polite client beside the seed's
//! "Retry-After seconds" reference on every point of the lab
//! ([`crate::lab::POINTS`]: limits of 5 to 200, windows of 1 to 10 s,
//! latencies of 0 to 200 ms, c = 1, 4 and 8, a concurrency limit, a leaky
//! bucket, hints only in a problem body or an HTTP-date), each row against
//! its floor ([`super::super::floor`]).
//!
//! One replica serves every point as a route of its own (`/api/<name>`)
//! behind the recording proxy; each client run has a fresh client id, so a
//! fresh quota. A run is stopped at 3 × its floor + 3 s (`--max-secs`):
//! a client that would take longer is reported with the successes it had.

use std::time::Duration;

use serde::Serialize;

use crate::lab::{self, OperatingPoint};
use crate::{Algorithm, Policy, ServerConfig};

use super::super::CompareError;
use super::super::clients::{self, ClientKind, ClientReport, ClientRun};
use super::super::floor::Job;
use super::super::proxy::RoundRobinProxy;
use super::super::recorder::Seen;
use super::Lab;

/// How far above its floor a row may be before it is named (issue 32's
/// bound with quota headers).
pub const FLOOR_FACTOR: f64 = 1.10;

/// The clients of the grid, the reference first.
pub const CLIENTS: [ClientKind; 2] = [ClientKind::RetryAfterSeconds, ClientKind::Courteous];

/// One client on one operating point.
#[derive(Debug, Clone, Serialize)]
pub struct GridRow {
    /// Where it ran.
    pub point: OperatingPoint,
    /// Which client.
    pub client: ClientKind,
    /// Its `X-Client-Id`.
    pub client_id: String,
    /// What the client reported, when it ran.
    pub report: Option<ClientReport>,
    /// What the proxy counted.
    pub seen: Seen,
    /// The floor of this run, milliseconds.
    pub floor_ms: Option<u64>,
    /// Elapsed over the floor.
    pub ratio: Option<f64>,
    /// Why there is no report.
    pub error: Option<String>,
}

impl GridRow {
    /// N + C: the most requests a client may send here before it is named.
    pub fn max_sent(&self) -> u64 {
        self.point.successes + self.point.concurrency
    }

    /// Why this row is named (above [`FLOOR_FACTOR`] × its floor, more than
    /// N + C sent, short of N successes), or `None`.
    pub fn named(&self) -> Option<String> {
        let report = self.report.as_ref()?;
        let mut why = Vec::new();
        if report.ok < self.point.successes {
            why.push(format!(
                "stopped with {} of {} successes",
                report.ok, self.point.successes
            ));
        }
        if let Some(ratio) = self.ratio.filter(|r| *r > FLOOR_FACTOR) {
            why.push(format!("{ratio:.2}× the floor"));
        }
        if report.sent > self.max_sent() {
            why.push(format!(
                "{} sent > N + C = {}",
                report.sent,
                self.max_sent()
            ));
        }
        (!why.is_empty()).then(|| why.join(", "))
    }
}

/// The job of `point`, for its floor.
pub fn job(point: &OperatingPoint) -> Job {
    Job {
        algorithm: point.algorithm,
        limit: point.limit,
        window_ms: point.window_ms,
        successes: point.successes,
        concurrency: point.concurrency,
        latency_ms: point.latency_ms,
    }
}

/// The time bound of one run: 3 × the floor (computed without a phase) + 3 s.
fn run_bound(point: &OperatingPoint) -> Duration {
    Duration::from_millis(3 * job(point).floor_ms(0) + 3000)
}

/// Every client on every point of `points`.
pub async fn run(lab: &Lab, points: &[OperatingPoint]) -> Result<Vec<GridRow>, CompareError> {
    let base = Policy::bucket(Algorithm::TokenBucket, 20, 20.0)?;
    let config = lab::mount(ServerConfig::new(base), points)?;
    let replicas = lab.replicas_of(config, 1).await?;
    let proxy = RoundRobinProxy::spawn(
        replicas.iter().map(|r| r.url()).collect(),
        lab.recorder.clone(),
    )
    .await?;
    let mut rows = Vec::new();
    for point in points {
        for kind in CLIENTS {
            let client_id = lab.client_id(&format!("grid-{}-{}", kind.slug(), point.name));
            let bound = run_bound(point);
            let run = ClientRun {
                url: format!("{}/api/{}", proxy.url(), point.name),
                successes: point.successes,
                concurrency: point.concurrency,
                client_id: client_id.clone(),
                extra_args: vec!["--max-secs".to_owned(), bound.as_secs_f64().to_string()],
            };
            let (report, error) = clients::try_run(&lab.clients, kind, &run).await;
            let first_sent_ms = lab
                .recorder
                .events_of(&client_id)
                .first()
                .map(|e| lab.recorder.wall_ms(e.at).saturating_sub(point.latency_ms));
            let floor_ms = first_sent_ms.map(|first| job(point).floor_ms(first));
            let ratio = match (&report, floor_ms) {
                (Some(r), Some(floor)) if floor > 0 => Some(r.elapsed_ms as f64 / floor as f64),
                _ => None,
            };
            let row = GridRow {
                point: *point,
                client: kind,
                seen: lab.recorder.seen(&client_id),
                client_id,
                report,
                floor_ms,
                ratio,
                error,
            };
            lab.progress(progress_line(&row));
            rows.push(row);
        }
    }
    Ok(rows)
}

fn progress_line(row: &GridRow) -> String {
    let what = format!("grid: {} {}", row.point.name, row.client.label());
    super::against_floor(
        &what,
        row.report.as_ref(),
        row.error.as_deref(),
        row.floor_ms,
    )
}
