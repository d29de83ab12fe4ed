//! What the comparison's proxy saw: one event per request with the client id,
//! the time and the status the replicas answered. The SVG timeline and the
//! server-side counts are built from these.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;

/// One request as seen in front of the replicas.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Event {
    /// The `X-Client-Id` it carried (empty when none).
    pub client: String,
    /// When the answer came back, since the recorder was created.
    pub at: Duration,
    /// HTTP status of the answer (502 when no replica answered).
    pub status: u16,
}

impl Event {
    /// Answered 2xx.
    pub fn allowed(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// Server-side counts of one client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Seen {
    /// Requests received.
    pub received: u64,
    /// Answered 2xx.
    pub allowed: u64,
    /// Answered 429 or 503.
    pub throttled: u64,
}

/// Shared, append-only event log. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Recorder {
    epoch: Instant,
    /// The wall clock at `epoch`, milliseconds since the Unix epoch.
    epoch_wall_ms: u64,
    events: Arc<Mutex<Vec<Event>>>,
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

impl Recorder {
    /// An empty log whose clock starts now.
    pub fn new() -> Self {
        let epoch_wall_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        Self {
            epoch: Instant::now(),
            epoch_wall_ms,
            events: Arc::default(),
        }
    }

    /// The wall clock (ms since the Unix epoch) of an event's `at`.
    pub fn wall_ms(&self, at: Duration) -> u64 {
        self.epoch_wall_ms.saturating_add(at.as_millis() as u64)
    }

    /// Record one answered request.
    pub fn record(&self, client: &str, status: u16) {
        let at = self.epoch.elapsed();
        let event = Event {
            client: client.to_owned(),
            at,
            status,
        };
        self.events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(event);
    }

    /// Every event of `client`, in the order they were recorded.
    pub fn events_of(&self, client: &str) -> Vec<Event> {
        let events = self.events.lock().unwrap_or_else(|p| p.into_inner());
        events
            .iter()
            .filter(|e| e.client == client)
            .cloned()
            .collect()
    }

    /// Counts of `client`.
    pub fn seen(&self, client: &str) -> Seen {
        count(&self.events_of(client))
    }

    /// Counts per client.
    pub fn seen_by_client(&self) -> BTreeMap<String, Seen> {
        let events = self.events.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: BTreeMap<String, Seen> = BTreeMap::new();
        for e in events.iter() {
            add(out.entry(e.client.clone()).or_default(), e);
        }
        out
    }
}

/// Counts of a list of events.
pub fn count(events: &[Event]) -> Seen {
    let mut seen = Seen::default();
    events.iter().for_each(|e| add(&mut seen, e));
    seen
}

fn add(seen: &mut Seen, e: &Event) {
    seen.received += 1;
    if e.allowed() {
        seen.allowed += 1;
    } else if e.status == 429 || e.status == 503 {
        seen.throttled += 1;
    }
}
