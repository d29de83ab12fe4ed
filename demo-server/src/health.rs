//! `GET /healthz`: which store a replica uses and whether it answers now.
//!
//! The probe is one `PING` bounded by the replica's per-check deadline
//! (`--deadline-ms`, default [`Limiter::DEFAULT_DEADLINE`]): the store is
//! healthy when a check sent now could make its deadline. The embedded store
//! lives in the process and always answers. The probe bypasses the bound on
//! checks in flight, so an overloaded replica still reports its store.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::Store;
#[cfg(doc)]
use crate::limiter::Limiter;

/// What one probe found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Health {
    /// Whether the store answered within the deadline.
    pub healthy: bool,
    /// Which store (`redis at HOST:PORT` or the embedded store).
    pub store: String,
    /// Why it is (un)healthy, in words.
    pub reason: String,
    /// The deadline of the probe, in milliseconds.
    pub deadline_ms: u64,
    /// How long the store took to answer, when it did.
    pub latency_ms: Option<f64>,
}

/// `PING` the store with `deadline`.
pub async fn probe(store: &Store, deadline: Duration) -> Health {
    let deadline_ms = u64::try_from(deadline.as_millis()).unwrap_or(u64::MAX);
    let started = Instant::now();
    let answer = tokio::time::timeout(deadline, store.ping()).await;
    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
    let (healthy, reason, latency_ms) = match (store, answer) {
        (Store::Memory(_), _) => (
            true,
            "the embedded store lives in this process and always answers".to_owned(),
            None,
        ),
        (Store::Redis(_), Ok(Ok(()))) => (
            true,
            format!("PING answered in {latency_ms:.1} ms (deadline {deadline_ms} ms)"),
            Some(latency_ms),
        ),
        (Store::Redis(_), Ok(Err(e))) => (false, format!("PING failed: {e}"), None),
        (Store::Redis(_), Err(_)) => (
            false,
            format!("PING not answered within the {deadline_ms} ms deadline"),
            None,
        ),
    };
    Health {
        healthy,
        store: store.describe(),
        reason,
        deadline_ms,
        latency_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_embedded_store_is_always_healthy() {
        let health = probe(&Store::memory(), Duration::ZERO).await;
        assert!(health.healthy, "{health:?}");
        assert!(health.store.contains("embedded"));
    }
}
