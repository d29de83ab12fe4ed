//! Per-client counters for `GET /stats`: what each client cost the server.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::identity::ClientIdentity;

/// Clients tracked individually; the rest are summed under `(other)` so that
/// random client ids cannot grow the map without bound.
pub const MAX_TRACKED_CLIENTS: usize = 10_000;

/// Counters of one client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ClientStats {
    /// Requests received on the limited endpoint.
    pub received: u64,
    /// Answered 200 within the quota.
    pub allowed: u64,
    /// Answered 429: the wasted requests.
    pub rejected: u64,
    /// Served without a check because the store failed (fail open).
    pub failed_open: u64,
    /// Answered 503 because the store failed (fail closed).
    pub unavailable: u64,
}

impl ClientStats {
    fn add(&mut self, other: &ClientStats) {
        self.received += other.received;
        self.allowed += other.allowed;
        self.rejected += other.rejected;
        self.failed_open += other.failed_open;
        self.unavailable += other.unavailable;
    }
}

/// What happened to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// 200.
    Allowed,
    /// 429.
    Rejected,
    /// 200 without a check.
    FailedOpen,
    /// 503.
    Unavailable,
}

/// Shared counters. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    inner: Arc<Mutex<HashMap<String, (String, ClientStats)>>>,
}

impl Stats {
    /// Count one request of `client`.
    pub fn record(&self, client: &ClientIdentity, outcome: Outcome) {
        let mut map = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let key = if map.contains_key(client.hash()) || map.len() < MAX_TRACKED_CLIENTS {
            client.hash()
        } else {
            "(other)"
        };
        let (_, s) = map.entry(key.to_owned()).or_insert_with(|| {
            (
                if key == "(other)" {
                    key
                } else {
                    client.label()
                }
                .to_owned(),
                ClientStats::default(),
            )
        });
        s.received += 1;
        match outcome {
            Outcome::Allowed => s.allowed += 1,
            Outcome::Rejected => s.rejected += 1,
            Outcome::FailedOpen => s.failed_open += 1,
            Outcome::Unavailable => s.unavailable += 1,
        }
    }

    /// Counters by client label (labels of distinct clients that look alike are merged).
    pub fn snapshot(&self) -> HashMap<String, ClientStats> {
        let map = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: HashMap<String, ClientStats> = HashMap::new();
        for (label, s) in map.values() {
            out.entry(label.clone()).or_default().add(s);
        }
        out
    }

    /// The counters of the client shown as `label`, if it was seen.
    pub fn client(&self, label: &str) -> Option<ClientStats> {
        self.snapshot().remove(label)
    }

    /// Sum over all clients.
    pub fn total(&self) -> ClientStats {
        let mut total = ClientStats::default();
        self.snapshot().values().for_each(|s| total.add(s));
        total
    }
}
