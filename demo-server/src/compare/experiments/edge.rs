//! Experiment 2: a limit of N per window, N requests just before a window edge
//! and N just after.
//!
//! The seed used 100 per 10 s with bursts at 9.5 s and 10.1 s. Here the window
//! is [`WINDOW_MS`] (1 s, so the experiment takes about a second): N = 100,
//! the first burst [`BEFORE_MS`] before an edge, the second [`AFTER_MS`] after
//! it. Bursts are placed with the store's clock (Redis `TIME`) and every
//! decision reports the store time it was taken at, so an attempt whose
//! bursts did not straddle the edge (a loaded machine) is detected and
//! repeated rather than reported.

use std::time::Duration;

use serde::Serialize;
use tokio::task::JoinSet;

use crate::{Algorithm, Decision, KeySpace, Policy, Store};

use super::super::CompareError;
use super::Lab;

/// Requests per burst and limit per window (the original experiment's 100).
pub const N: u64 = 100;
/// Window length.
pub const WINDOW_MS: u64 = 1000;
/// The first burst starts this long before the edge.
pub const BEFORE_MS: u64 = 300;
/// The second burst starts this long after the edge.
pub const AFTER_MS: u64 = 50;
/// The second burst must be over within this long after the edge.
const MAX_AFTER_MS: u64 = 600;
/// The algorithms compared.
pub const ALGORITHMS: [Algorithm; 3] = [
    Algorithm::FixedWindow,
    Algorithm::SlidingLog,
    Algorithm::SlidingWindow,
];

/// What one algorithm admitted.
#[derive(Debug, Clone, Serialize)]
pub struct EdgeRow {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Admitted of the burst before the edge.
    pub before: u64,
    /// Admitted of the burst after the edge.
    pub after: u64,
    /// Milliseconds from the first to the last admitted request.
    pub span_ms: u64,
    /// How far into the new window the last request landed (0..1): the
    /// sliding window counter may admit up to `N * f` after the edge.
    pub f: f64,
    /// Limit per window.
    pub limit: u64,
    /// Window in milliseconds.
    pub window_ms: u64,
}

impl EdgeRow {
    /// Admitted in both bursts.
    pub fn total(&self) -> u64 {
        self.before + self.after
    }
}

/// Run the experiment (up to three attempts).
pub async fn run(lab: &Lab) -> Result<Vec<EdgeRow>, CompareError> {
    let store = lab.store.connect().await?;
    for attempt_no in 1..=3 {
        let keys = KeySpace::new(&format!("edge-{:08x}", rand::random::<u32>()), 1)?;
        if let Some(rows) = attempt(&store, &keys).await? {
            for r in &rows {
                lab.progress(format!(
                    "edge: {}: {} before + {} after = {} admitted in {} ms",
                    r.algorithm,
                    r.before,
                    r.after,
                    r.total(),
                    r.span_ms
                ));
            }
            return Ok(rows);
        }
        lab.progress(format!(
            "edge: attempt {attempt_no} missed the window edge; again"
        ));
    }
    Err(CompareError::setup(
        "edge: three attempts missed the window edge; the machine is too loaded",
    ))
}

async fn attempt(store: &Store, keys: &KeySpace) -> Result<Option<Vec<EdgeRow>>, CompareError> {
    let policies = ALGORITHMS
        .iter()
        .map(|&a| {
            Policy::new(a, N, Duration::from_millis(WINDOW_MS)).map(|p| (p, keys.key("edge", a)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let now = store.now_ms().await?;
    let mut edge = (now / WINDOW_MS + 1) * WINDOW_MS;
    if edge - now < BEFORE_MS + 50 {
        edge += WINDOW_MS;
    }
    sleep_until(store, edge - BEFORE_MS).await?;
    let before = bursts(store, &policies).await?;
    sleep_until(store, edge + AFTER_MS).await?;
    let after = bursts(store, &policies).await?;
    let early = before.iter().flatten().any(|d| d.now_ms >= edge);
    let late = after
        .iter()
        .flatten()
        .any(|d| d.now_ms < edge || d.now_ms >= edge + MAX_AFTER_MS);
    if early || late {
        return Ok(None);
    }
    let rows = policies
        .iter()
        .zip(before.iter().zip(&after))
        .map(|((policy, _), (b, a))| {
            let admitted: Vec<u64> = b
                .iter()
                .chain(a)
                .filter(|d| d.allowed)
                .map(|d| d.now_ms)
                .collect();
            let span_ms = admitted.iter().max().unwrap_or(&0) - admitted.iter().min().unwrap_or(&0);
            let last = a.iter().map(|d| d.now_ms).max().unwrap_or(edge);
            EdgeRow {
                algorithm: policy.algorithm(),
                before: b.iter().filter(|d| d.allowed).count() as u64,
                after: a.iter().filter(|d| d.allowed).count() as u64,
                span_ms,
                f: (last - edge) as f64 / WINDOW_MS as f64,
                limit: N,
                window_ms: WINDOW_MS,
            }
        })
        .collect();
    Ok(Some(rows))
}

async fn sleep_until(store: &Store, at_ms: u64) -> Result<(), CompareError> {
    let now = store.now_ms().await?;
    tokio::time::sleep(Duration::from_millis(at_ms.saturating_sub(now))).await;
    Ok(())
}

/// N concurrent checks per algorithm, all algorithms at once.
async fn bursts(
    store: &Store,
    policies: &[(Policy, String)],
) -> Result<Vec<Vec<Decision>>, CompareError> {
    let mut set = JoinSet::new();
    for (i, (policy, key)) in policies.iter().enumerate() {
        for _ in 0..N {
            let (store, policy, key) = (store.clone(), policy.clone(), key.clone());
            set.spawn(async move { (i, store.check(&policy, &key).await) });
        }
    }
    let mut out = vec![Vec::new(); policies.len()];
    for (i, decision) in set.join_all().await {
        out[i].push(decision?);
    }
    Ok(out)
}
