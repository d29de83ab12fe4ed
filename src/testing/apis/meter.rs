//! The quotas behind the API mocks: a fixed window or a continuously
//! refilled bucket, several checked and spent together.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::super::counters::Counters;

/// How a quota comes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refill {
    /// All at once when the window ends; the first window opens with the
    /// first request, later ones follow back to back.
    Window,
    /// Continuously, `limit / window` units a second, up to `limit` (a
    /// token bucket; a leaky bucket seen from the other side).
    Continuous,
}

/// One quota: `limit` units per `window`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spec {
    pub(crate) name: &'static str,
    pub(crate) limit: u64,
    pub(crate) window: Duration,
    pub(crate) refill: Refill,
}

impl Spec {
    /// `limit` units (at least one) per fixed `window` (at least 1 ms).
    pub(crate) fn window(name: &'static str, limit: u64, window: Duration) -> Self {
        Self::new(name, limit, window, Refill::Window)
    }

    /// A bucket `limit` deep (at least one) refilled in full over `window`.
    pub(crate) fn continuous(name: &'static str, limit: u64, window: Duration) -> Self {
        Self::new(name, limit, window, Refill::Continuous)
    }

    /// A bucket `depth` deep refilled `per_sec` units a second (at least one).
    pub(crate) fn bucket(name: &'static str, depth: u64, per_sec: u64) -> Self {
        let depth = depth.max(1);
        let window = Duration::from_secs_f64(depth as f64 / per_sec.max(1) as f64);
        Self::continuous(name, depth, window)
    }

    fn new(name: &'static str, limit: u64, window: Duration, refill: Refill) -> Self {
        Self {
            name,
            limit: limit.max(1),
            window: window.max(Duration::from_millis(1)),
            refill,
        }
    }
}

/// One quota's state after a request, as the headers describe it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reading {
    pub(crate) limit: u64,
    pub(crate) remaining: u64,
    /// Until the quota is whole again.
    pub(crate) reset: Duration,
}

#[derive(Debug)]
struct Meter {
    spec: Spec,
    /// Window: when the current one opened. Continuous: when `level` was read.
    at: Option<Instant>,
    /// Window: units used. Continuous: units available.
    level: f64,
}

impl Meter {
    fn new(spec: Spec) -> Self {
        let level = match spec.refill {
            Refill::Window => 0.0,
            Refill::Continuous => spec.limit as f64,
        };
        Self {
            spec,
            at: None,
            level,
        }
    }

    fn rate(&self) -> f64 {
        self.spec.limit as f64 / self.spec.window.as_secs_f64().max(1e-9)
    }

    /// Brings the state to `now`.
    fn advance(&mut self, now: Instant) {
        let Some(at) = self.at else {
            self.at = Some(now);
            return;
        };
        match self.spec.refill {
            Refill::Window => {
                let elapsed = now.saturating_duration_since(at);
                if elapsed >= self.spec.window {
                    let windows = elapsed.as_nanos() / self.spec.window.as_nanos().max(1);
                    let skip = self
                        .spec
                        .window
                        .saturating_mul(windows.min(u32::MAX as u128) as u32);
                    self.at = Some(at + skip);
                    self.level = 0.0;
                }
            }
            Refill::Continuous => {
                let elapsed = now.saturating_duration_since(at).as_secs_f64();
                self.level = (self.level + elapsed * self.rate()).min(self.spec.limit as f64);
                self.at = Some(now);
            }
        }
    }

    fn available(&self) -> f64 {
        match self.spec.refill {
            Refill::Window => self.spec.limit as f64 - self.level,
            Refill::Continuous => self.level,
        }
    }

    /// The wait until `cost` fits (zero when it does now).
    fn wait_for(&self, now: Instant, cost: f64) -> Duration {
        let missing = cost - self.available();
        if missing <= 0.0 {
            return Duration::ZERO;
        }
        match self.spec.refill {
            Refill::Window => self.window_left(now),
            Refill::Continuous => Duration::from_secs_f64(missing / self.rate()),
        }
    }

    fn window_left(&self, now: Instant) -> Duration {
        let at = self.at.unwrap_or(now);
        (at + self.spec.window).saturating_duration_since(now)
    }

    fn spend(&mut self, cost: f64) {
        match self.spec.refill {
            Refill::Window => self.level += cost,
            Refill::Continuous => self.level -= cost,
        }
    }

    fn reading(&self, now: Instant) -> Reading {
        let available = self.available().max(0.0);
        let reset = match self.spec.refill {
            Refill::Window => self.window_left(now),
            Refill::Continuous => {
                Duration::from_secs_f64((self.spec.limit as f64 - available).max(0.0) / self.rate())
            }
        };
        Reading {
            limit: self.spec.limit,
            remaining: available.floor() as u64,
            reset,
        }
    }
}

/// What the quotas decided for one request.
#[derive(Debug, Clone)]
pub(crate) struct Decision {
    /// `None` when admitted; else the wait until every quota has room.
    pub(crate) rejected_for: Option<Duration>,
    /// Every quota after the request, in the order given.
    pub(crate) readings: Vec<Reading>,
}

/// Several quotas a request must fit all of, and the counters; shared by
/// clones.
#[derive(Debug, Clone)]
pub(crate) struct Quotas {
    meters: Arc<Mutex<Vec<Meter>>>,
    pub(crate) counters: Counters,
}

impl Quotas {
    pub(crate) fn new(specs: &[Spec]) -> Self {
        Self {
            meters: Arc::new(Mutex::new(specs.iter().copied().map(Meter::new).collect())),
            counters: Counters::default(),
        }
    }

    /// Admits a request costing `costs[i]` of quota `i` if all fit, spending
    /// them; records it in the counters.
    pub(crate) fn decide(&self, now: Instant, costs: &[u64]) -> Decision {
        let mut meters = self.meters.lock().unwrap_or_else(PoisonError::into_inner);
        meters.iter_mut().for_each(|meter| meter.advance(now));
        let cost = |index: usize| costs.get(index).copied().unwrap_or(1) as f64;
        let wait = meters
            .iter()
            .enumerate()
            .map(|(index, meter)| meter.wait_for(now, cost(index)))
            .max()
            .unwrap_or_default();
        let admitted = wait.is_zero();
        if admitted {
            for (index, meter) in meters.iter_mut().enumerate() {
                meter.spend(cost(index));
            }
        }
        let readings = meters.iter().map(|meter| meter.reading(now)).collect();
        drop(meters);
        self.counters.record(admitted);
        Decision {
            rejected_for: (!admitted).then_some(wait),
            readings,
        }
    }

    /// The specs, in order.
    pub(crate) fn specs(&self) -> Vec<Spec> {
        let meters = self.meters.lock().unwrap_or_else(PoisonError::into_inner);
        meters.iter().map(|meter| meter.spec).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(limit: u64, refill: Refill) -> Spec {
        Spec {
            name: "q",
            limit,
            window: Duration::from_secs(1),
            refill,
        }
    }

    #[test]
    fn a_request_must_fit_every_quota() {
        let quotas = Quotas::new(&[spec(10, Refill::Window), spec(100, Refill::Continuous)]);
        let now = Instant::now();
        let first = quotas.decide(now, &[1, 60]);
        assert!(first.rejected_for.is_none());
        assert_eq!(first.readings[0].remaining, 9);
        assert_eq!(first.readings[1].remaining, 40);
        // 60 more tokens do not fit: refused, nothing spent.
        let second = quotas.decide(now, &[1, 60]);
        assert_eq!(second.rejected_for, Some(Duration::from_millis(200)));
        assert_eq!(second.readings[0].remaining, 9);
        let later = quotas.decide(now + Duration::from_millis(200), &[1, 60]);
        assert!(later.rejected_for.is_none());
        assert_eq!(quotas.counters.rejected(), 1);
    }

    #[test]
    fn windows_reset_back_to_back() {
        let quotas = Quotas::new(&[spec(1, Refill::Window)]);
        let now = Instant::now();
        assert!(quotas.decide(now, &[1]).rejected_for.is_none());
        let refused = quotas.decide(now + Duration::from_millis(400), &[1]);
        assert_eq!(refused.rejected_for, Some(Duration::from_millis(600)));
        let next = quotas.decide(now + Duration::from_millis(2500), &[1]);
        assert!(next.rejected_for.is_none());
        assert_eq!(next.readings[0].reset, Duration::from_millis(500));
    }
}
