//! Experiment 4: a herd. [`CLIENTS`] polite clients with no shared state
//! (separate processes) on one client id, so one quota: each needs
//! [`SUCCESSES_EACH`] successes from the same bucket as experiment 3 (20,
//! refilled 20/s), 100 in all. What it cost (sent, wasted) and how much of the
//! quota the herd used: `ok / (capacity + rate × elapsed)`, where elapsed runs
//! from the herd's first request to its last success as the proxy saw them.

use serde::Serialize;
use tokio::task::JoinSet;

use super::super::CompareError;
use super::super::clients::{self, ClientKind, ClientReport, ClientRun};
use super::super::proxy::RoundRobinProxy;
use super::Lab;
use super::waste::{CAPACITY, RATE, policy};

/// Processes in the herd.
pub const CLIENTS: usize = 10;
/// Successes each process needs.
pub const SUCCESSES_EACH: u64 = 10;

/// What the herd cost and achieved.
#[derive(Debug, Clone, Serialize)]
pub struct HerdResult {
    /// The shared `X-Client-Id`.
    pub client_id: String,
    /// Processes.
    pub clients: usize,
    /// Successes each needed.
    pub successes_each: u64,
    /// Each process's report.
    pub reports: Vec<ClientReport>,
    /// Requests sent in all.
    pub sent: u64,
    /// Successes in all.
    pub ok: u64,
    /// 429s in all.
    pub throttled: u64,
    /// First request to last success, milliseconds (proxy clock).
    pub elapsed_ms: u64,
    /// Successes per second over `elapsed_ms`.
    pub rate_per_s: f64,
    /// `ok / (capacity + rate × elapsed)`: the share of what the server would
    /// have admitted in that time.
    pub quota_used: f64,
}

impl HerdResult {
    /// `sent - ok`.
    pub fn wasted(&self) -> u64 {
        self.sent.saturating_sub(self.ok)
    }
    /// Wasted in percent of sent.
    pub fn wasted_percent(&self) -> f64 {
        if self.sent == 0 {
            0.0
        } else {
            100.0 * self.wasted() as f64 / self.sent as f64
        }
    }
}

/// Run the herd; `Ok(None)` when the polite example is not built.
pub async fn run(lab: &Lab) -> Result<Option<HerdResult>, CompareError> {
    let kind = ClientKind::Courteous;
    let Some(binary) = lab.examples.binary(kind.example()) else {
        lab.progress("herd: skipped: example `polite` not built");
        return Ok(None);
    };
    let replicas = lab.replicas(&policy()?, 1).await?;
    let proxy = RoundRobinProxy::spawn(vec![replicas[0].url()], lab.recorder.clone()).await?;
    let client_id = lab.client_id("herd");
    let run = ClientRun {
        url: format!("{}/", proxy.url()),
        successes: SUCCESSES_EACH,
        concurrency: 1,
        client_id: client_id.clone(),
    };
    let mut set = JoinSet::new();
    for _ in 0..CLIENTS {
        let (binary, run) = (binary.clone(), run.clone());
        set.spawn(async move { clients::run(&binary, kind, &run).await });
    }
    let mut reports = Vec::new();
    for report in set.join_all().await {
        reports.push(report?);
    }
    let events = lab.recorder.events_of(&client_id);
    let first = events.iter().map(|e| e.at).min().unwrap_or_default();
    let last_ok = events
        .iter()
        .filter(|e| e.allowed())
        .map(|e| e.at)
        .max()
        .unwrap_or_default();
    let elapsed = last_ok.saturating_sub(first);
    let ok: u64 = reports.iter().map(|r| r.ok).sum();
    let secs = elapsed.as_secs_f64();
    let result = HerdResult {
        client_id,
        clients: CLIENTS,
        successes_each: SUCCESSES_EACH,
        sent: reports.iter().map(|r| r.sent).sum(),
        throttled: reports.iter().map(|r| r.throttled).sum(),
        ok,
        elapsed_ms: elapsed.as_millis() as u64,
        rate_per_s: if secs > 0.0 { ok as f64 / secs } else { 0.0 },
        quota_used: ok as f64 / (CAPACITY as f64 + RATE * secs),
        reports,
    };
    lab.progress(format!(
        "herd: {CLIENTS} processes × {SUCCESSES_EACH}: sent {}, ok {}, wasted {} ({:.1} %), {:.2} s, {:.0} % of the quota",
        result.sent,
        result.ok,
        result.wasted(),
        result.wasted_percent(),
        secs,
        100.0 * result.quota_used
    ));
    Ok(Some(result))
}
