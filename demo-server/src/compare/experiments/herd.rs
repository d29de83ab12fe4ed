//! Experiment 4: herds. Polite processes on one client id, so one quota (the
//! bucket of experiment 3: 20, refilled 20/s), about 200 successes per herd:
//! [`SIZES`] processes each learning alone (the local engine) and sharing
//! through a fleet store on its own throw-away Redis (`polite
//! --fleet-redis`); then a fleet herd whose Redis is stopped (`SIGSTOP`)
//! [`STOP_AFTER`] into the run and stays stopped until it ends. The default
//! `compare` run has only the herds of 10 (`--only herd`: all of them).
//!
//! Per herd: what it cost (sent, wasted) and how much of the quota it used,
//! `ok / (capacity + rate × elapsed)`, elapsed running from the herd's first
//! request to its last success as the proxy saw them.

use std::time::Duration;

use serde::Serialize;
use tokio::task::JoinSet;

use super::super::CompareError;
use super::super::clients::{self, ClientKind, ClientProgram, ClientRun, FleetCalls};
use super::super::proxy::RoundRobinProxy;
use super::Lab;
use super::fleet_cost::{self, FleetCost};
use super::waste::{CAPACITY, RATE, policy};
use crate::redis_process::RedisServer;

/// (processes, successes each): about 200 successes per herd.
pub const SIZES: [(usize, u64); 3] = [(10, 20), (30, 7), (100, 2)];
/// The herd whose fleet Redis is stopped mid-run.
pub const STOPPED: (usize, u64) = (30, 7);
/// When the fleet Redis is stopped, from the herd's start.
pub const STOP_AFTER: Duration = Duration::from_secs(2);

/// One herd's result.
#[derive(Debug, Clone, Serialize)]
pub struct HerdRow {
    /// The shared `X-Client-Id`.
    pub client_id: String,
    /// Processes.
    pub clients: usize,
    /// Whether the processes shared a fleet store.
    pub fleet: bool,
    /// The fleet's Redis was stopped this long after the start (and stayed stopped).
    pub redis_stopped_after_ms: Option<u64>,
    /// Successes each needed.
    pub successes_each: u64,
    /// Processes that finished with a report (exit 0, no panic).
    pub finished: usize,
    /// What the others said.
    pub failures: Vec<String>,
    /// Requests sent in all.
    pub sent: u64,
    /// Successes in all.
    pub ok: u64,
    /// 429s in all.
    pub throttled: u64,
    /// `sent - ok` in percent of `sent`.
    pub wasted_percent: f64,
    /// First request to last success, milliseconds (proxy clock).
    pub elapsed_ms: u64,
    /// Successes per second over `elapsed_ms`.
    pub rate_per_s: f64,
    /// `ok / (capacity + rate × elapsed)`: the share of what the server would
    /// have admitted in that time.
    pub quota_used: f64,
    /// The fleet store's calls, summed over the processes (fleet rows only).
    pub fleet_calls: Option<FleetCalls>,
    /// When the refusals came, ms from the herd's first request (the first 20).
    pub refused_at_ms: Vec<u64>,
}

impl HerdRow {
    /// `sent - ok`.
    pub fn wasted(&self) -> u64 {
        self.sent.saturating_sub(self.ok)
    }

    /// What the table and timeline call the store.
    pub fn store_label(&self) -> String {
        match (self.fleet, self.redis_stopped_after_ms) {
            (false, _) => "local engine".to_owned(),
            (true, None) => "fleet (Redis)".to_owned(),
            (true, Some(ms)) => format!("fleet, Redis stopped at {:.0} s", ms as f64 / 1000.0),
        }
    }
}

/// Every herd, and the fleet store's cost.
#[derive(Debug, Clone, Default, Serialize)]
pub struct HerdResults {
    /// One row per (processes, store), then the stopped-Redis run.
    pub rows: Vec<HerdRow>,
    /// The fleet store's calls beside `PING`, on the fleet's Redis.
    pub fleet_cost: Option<FleetCost>,
    /// Why fleet rows are missing, if they are.
    pub fleet_skipped: Option<String>,
}

/// Run the herds: of every size and the stopped-Redis one when `all`, else
/// only the first size's.
pub async fn run(lab: &Lab, all: bool) -> Result<HerdResults, CompareError> {
    let mut out = HerdResults::default();
    let replicas = lab.replicas(&policy()?, 1).await?;
    let proxy = RoundRobinProxy::spawn(vec![replicas[0].url()], lab.recorder.clone()).await?;
    let url = format!("{}/", proxy.url());
    let fleet_redis = match RedisServer::start() {
        Ok(server) => Some(server),
        Err(e) => {
            let why = format!("no throw-away redis-server for the fleet store: {e}");
            lab.progress(format!("herd: fleet rows skipped: {why}"));
            out.fleet_skipped = Some(why);
            None
        }
    };
    let herd = Herd {
        lab,
        program: &lab.clients,
        url: &url,
    };
    let sizes = if all { &SIZES[..] } else { &SIZES[..1] };
    for &(clients, each) in sizes {
        out.rows.push(herd.run(clients, each, None, None).await);
        if let Some(redis) = &fleet_redis {
            out.rows
                .push(herd.run(clients, each, Some(redis), None).await);
        }
    }
    if let Some(redis) = &fleet_redis {
        out.fleet_cost = fleet_cost::measure(lab, &redis.url()).await;
    }
    drop(fleet_redis);
    if !all {
        return Ok(out);
    }
    match RedisServer::start() {
        Ok(doomed) => {
            let (clients, each) = STOPPED;
            out.rows.push(
                herd.run(clients, each, Some(&doomed), Some(STOP_AFTER))
                    .await,
            );
        }
        Err(e) => lab.progress(format!("herd: stopped-Redis run skipped: {e}")),
    }
    Ok(out)
}

struct Herd<'a> {
    lab: &'a Lab,
    program: &'a ClientProgram,
    url: &'a str,
}

impl Herd<'_> {
    /// One herd of `clients` processes needing `each`; with `fleet`, sharing
    /// through that Redis, stopped `stop` into the run when given.
    async fn run(
        &self,
        clients: usize,
        each: u64,
        fleet: Option<&RedisServer>,
        stop: Option<Duration>,
    ) -> HerdRow {
        let lab = self.lab;
        let store = match (fleet, stop) {
            (None, _) => "local",
            (Some(_), None) => "fleet",
            (Some(_), Some(_)) => "fleet-stopped",
        };
        let client_id = lab.client_id(&format!("herd{clients}-{store}"));
        let run = ClientRun {
            url: self.url.to_owned(),
            successes: each,
            concurrency: 1,
            client_id: client_id.clone(),
            extra_args: fleet.map_or_else(Vec::new, |r| vec!["--fleet-redis".to_owned(), r.url()]),
        };
        let mut set = JoinSet::new();
        for _ in 0..clients {
            let (program, run) = (self.program.clone(), run.clone());
            set.spawn(async move { clients::run(&program, ClientKind::Courteous, &run).await });
        }
        let stopper = async {
            match (fleet, stop) {
                (Some(redis), Some(after)) => {
                    tokio::time::sleep(after).await;
                    redis.pause().ok()
                }
                _ => None,
            }
        };
        let (results, paused) = tokio::join!(set.join_all(), stopper);
        if let Some(paused) = paused {
            lab.progress(format!(
                "herd: fleet Redis (pid {}) was stopped until the herd ended",
                paused_pid(fleet)
            ));
            drop(paused);
        }
        let mut row = HerdRow {
            client_id: client_id.clone(),
            clients,
            fleet: fleet.is_some(),
            redis_stopped_after_ms: stop.map(|d| d.as_millis() as u64),
            successes_each: each,
            finished: 0,
            failures: Vec::new(),
            sent: 0,
            ok: 0,
            throttled: 0,
            wasted_percent: 0.0,
            elapsed_ms: 0,
            rate_per_s: 0.0,
            quota_used: 0.0,
            fleet_calls: None,
            refused_at_ms: Vec::new(),
        };
        for result in results {
            match result {
                Ok(report) => {
                    row.finished += 1;
                    row.sent += report.sent;
                    row.ok += report.ok;
                    row.throttled += report.throttled;
                    if let Some(f) = report.fleet {
                        let sum = row.fleet_calls.get_or_insert_with(FleetCalls::default);
                        sum.calls += f.calls;
                        sum.missed_deadline += f.missed_deadline;
                        sum.errors += f.errors;
                    }
                }
                Err(e) => row.failures.push(e.to_string()),
            }
        }
        let events = lab.recorder.events_of(&client_id);
        let first = events.iter().map(|e| e.at).min().unwrap_or_default();
        let last_ok = events
            .iter()
            .filter(|e| e.allowed())
            .map(|e| e.at)
            .max()
            .unwrap_or_default();
        let secs = last_ok.saturating_sub(first).as_secs_f64();
        let mut refused: Vec<u64> = events
            .iter()
            .filter(|e| !e.allowed())
            .map(|e| e.at.saturating_sub(first).as_millis() as u64)
            .collect();
        refused.sort_unstable();
        refused.truncate(20);
        row.refused_at_ms = refused;
        row.elapsed_ms = (secs * 1000.0) as u64;
        row.rate_per_s = if secs > 0.0 {
            row.ok as f64 / secs
        } else {
            0.0
        };
        row.quota_used = row.ok as f64 / (CAPACITY as f64 + RATE * secs);
        row.wasted_percent = if row.sent == 0 {
            0.0
        } else {
            100.0 * row.wasted() as f64 / row.sent as f64
        };
        let calls = row.fleet_calls.map_or_else(String::new, |c| {
            format!(
                "; store calls {}, {} missed the deadline, {} errors",
                c.calls, c.missed_deadline, c.errors
            )
        });
        lab.progress(format!(
            "herd: {clients} processes × {each}, {}: sent {}, ok {}, wasted {} ({:.1} %), {:.2} s, {:.1} % of the quota, {}/{clients} finished{calls}",
            row.store_label(),
            row.sent,
            row.ok,
            row.wasted(),
            row.wasted_percent,
            secs,
            100.0 * row.quota_used,
            row.finished
        ));
        row
    }
}

fn paused_pid(fleet: Option<&RedisServer>) -> u32 {
    fleet.map_or(0, RedisServer::pid)
}
