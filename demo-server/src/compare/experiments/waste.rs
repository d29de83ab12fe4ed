//! Experiment 3: wasted requests. Each client needs [`SUCCESSES`] successes
//! from a token bucket of [`CAPACITY`] refilled [`RATE`]/s (the original experiment's server),
//! at concurrency 1 and 4, and with 3 replicas sharing the store behind a
//! per-request round-robin proxy. Every setup has the proxy in front (one
//! upstream for one replica), so all clients pay the same extra hop and
//! every request is recorded for the timeline.

use serde::Serialize;

use crate::{Algorithm, Policy};

use super::super::CompareError;
use super::super::clients::{self, ClientKind, ClientReport, ClientRun};
use super::super::proxy::RoundRobinProxy;
use super::super::recorder::Seen;
use super::Lab;

/// Successes each client needs (the original experiment's 100).
pub const SUCCESSES: u64 = 100;
/// Bucket capacity (the original experiment's 20).
pub const CAPACITY: u64 = 20;
/// Refill per second (the original experiment's 20).
pub const RATE: f64 = 20.0;

/// Replicas behind the proxy and client concurrency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Setup {
    /// Demo-server replicas sharing the store.
    pub replicas: usize,
    /// The client's `--concurrency`.
    pub concurrency: u64,
}

impl Setup {
    /// `1 replica, c=1`.
    pub fn label(&self) -> String {
        let s = if self.replicas == 1 { "" } else { "s" };
        format!("{} replica{s}, c={}", self.replicas, self.concurrency)
    }
}

/// The setups, in table order.
pub const SETUPS: [Setup; 3] = [
    Setup {
        replicas: 1,
        concurrency: 1,
    },
    Setup {
        replicas: 1,
        concurrency: 4,
    },
    Setup {
        replicas: 3,
        concurrency: 4,
    },
];

/// One client in one setup.
#[derive(Debug, Clone, Serialize)]
pub struct WasteRow {
    /// Which client.
    pub client: ClientKind,
    /// Where it ran.
    pub setup: Setup,
    /// Its `X-Client-Id`.
    pub client_id: String,
    /// What the client reported, when it ran.
    pub report: Option<ClientReport>,
    /// What the proxy in front of the replicas counted.
    pub seen: Seen,
    /// Why there is no report (client missing, failed, timed out).
    pub error: Option<String>,
}

impl WasteRow {
    /// `sent - ok` in percent of `sent`.
    pub fn wasted_percent(&self) -> Option<f64> {
        let r = self.report.as_ref()?;
        Some(if r.sent == 0 {
            0.0
        } else {
            100.0 * r.wasted() as f64 / r.sent as f64
        })
    }
}

/// The policy every client of this experiment meets.
pub fn policy() -> Result<Policy, CompareError> {
    Ok(Policy::bucket(Algorithm::TokenBucket, CAPACITY, RATE)?)
}

/// Every client in every setup.
pub async fn run(lab: &Lab) -> Result<Vec<WasteRow>, CompareError> {
    let policy = policy()?;
    let mut rows = Vec::new();
    for setup in SETUPS {
        let replicas = lab.replicas(&policy, setup.replicas).await?;
        let proxy = RoundRobinProxy::spawn(
            replicas.iter().map(|r| r.url()).collect(),
            lab.recorder.clone(),
        )
        .await?;
        for kind in ClientKind::ALL {
            let client_id = lab.client_id(&format!(
                "{}-r{}-c{}",
                kind.slug(),
                setup.replicas,
                setup.concurrency
            ));
            let run = ClientRun {
                url: format!("{}/", proxy.url()),
                successes: SUCCESSES,
                concurrency: setup.concurrency,
                client_id: client_id.clone(),
                extra_args: Vec::new(),
            };
            let (report, error) = clients::try_run(&lab.clients, kind, &run).await;
            let row = WasteRow {
                client: kind,
                setup,
                seen: lab.recorder.seen(&client_id),
                client_id,
                report,
                error,
            };
            lab.progress(progress_line(&row));
            rows.push(row);
        }
    }
    Ok(rows)
}

fn progress_line(row: &WasteRow) -> String {
    let what = format!("waste: {} ({})", row.client.label(), row.setup.label());
    match (&row.report, &row.error) {
        (Some(r), _) => format!(
            "{what}: sent {}, ok {}, wasted {}, 429s {}, {:.2} s",
            r.sent,
            r.ok,
            r.wasted(),
            r.throttled,
            r.elapsed_ms as f64 / 1000.0
        ),
        (None, Some(e)) => format!("{what}: skipped: {e}"),
        (None, None) => format!("{what}: no result"),
    }
}
