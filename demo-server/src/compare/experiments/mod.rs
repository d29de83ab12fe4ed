//! The five experiments of the original write-up (docs/background.md), each on fresh
//! keys and fresh client ids so runs never share a quota.

pub mod cost;
pub mod edge;
pub mod fleet_cost;
pub mod grid;
pub mod herd;
pub mod limiters;
pub mod race;
pub mod waste;

use std::time::Instant;

use crate::{HeaderStyle, KeySpace, Policy, RunningServer, ServerConfig, spawn};

use super::CompareError;
use super::clients::{ClientProgram, ClientReport};
use super::recorder::Recorder;
use crate::local_store::LocalStore;

/// What every experiment shares.
#[derive(Debug)]
pub struct Lab {
    /// The store.
    pub store: LocalStore,
    /// What runs the example clients.
    pub clients: ClientProgram,
    /// Events of every request that went through a proxy.
    pub recorder: Recorder,
    headers: HeaderStyle,
    keys: KeySpace,
    nonce: String,
    started: Instant,
}

impl Lab {
    /// A lab over `store` with a key namespace no earlier run used.
    pub fn new(store: LocalStore, clients: ClientProgram, headers: HeaderStyle) -> Self {
        let nonce = format!("{:08x}", rand::random::<u32>());
        Self {
            store,
            clients,
            recorder: Recorder::new(),
            headers,
            keys: KeySpace::new(&format!("compare-{nonce}"), 1).expect("a valid namespace"),
            nonce,
            started: Instant::now(),
        }
    }

    /// A client id unique to this invocation.
    pub fn client_id(&self, name: &str) -> String {
        format!("{name}-{}", self.nonce)
    }

    /// `replicas` replicas of `policy` sharing the store.
    pub async fn replicas(
        &self,
        policy: &Policy,
        replicas: usize,
    ) -> Result<Vec<RunningServer>, CompareError> {
        self.replicas_speaking(policy, replicas, self.headers).await
    }

    /// `replicas` replicas of `policy` speaking `headers`.
    pub async fn replicas_speaking(
        &self,
        policy: &Policy,
        replicas: usize,
        headers: HeaderStyle,
    ) -> Result<Vec<RunningServer>, CompareError> {
        let config = ServerConfig::new(policy.clone()).headers(headers);
        self.replicas_of(config, replicas).await
    }

    /// `replicas` replicas of `config`, in this run's key space.
    pub async fn replicas_of(
        &self,
        config: ServerConfig,
        replicas: usize,
    ) -> Result<Vec<RunningServer>, CompareError> {
        let config = config.keys(self.keys.clone());
        let mut out = Vec::with_capacity(replicas);
        for _ in 0..replicas {
            out.push(spawn(config.clone(), self.store.connect().await?).await?);
        }
        Ok(out)
    }

    /// One progress line on stderr, with the time since the start.
    pub fn progress(&self, message: impl AsRef<str>) {
        eprintln!(
            "compare [{:5.1} s] {}",
            self.started.elapsed().as_secs_f64(),
            message.as_ref()
        );
    }
}

/// One progress line for a client run held to a floor: what it cost, or
/// why it did not run.
fn against_floor(
    what: &str,
    report: Option<&ClientReport>,
    error: Option<&str>,
    floor_ms: Option<u64>,
) -> String {
    match (report, error) {
        (Some(r), _) => format!(
            "{what}: sent {}, ok {}, {:.2} s (floor {:.2} s)",
            r.sent,
            r.ok,
            r.elapsed_ms as f64 / 1000.0,
            floor_ms.unwrap_or(0) as f64 / 1000.0
        ),
        (None, Some(e)) => format!("{what}: skipped: {e}"),
        (None, None) => format!("{what}: no result"),
    }
}
