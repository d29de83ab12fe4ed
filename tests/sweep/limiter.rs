//! The server side's limiters, one small model each, on a clock of `f64`
//! seconds since the case started. Each admits or refuses an arrival, says
//! what it would put in its headers (`View`), and when it would next admit
//! (`next_admit`, for the oracle client that computes a case's floor).

use std::collections::VecDeque;

/// A kind of limiter the sweep puts in front of the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A bucket of `limit` refilled continuously at `limit / window`.
    TokenBucket,
    /// `limit` per window, windows on the clock's grid shifted by a phase.
    FixedWindowAligned,
    /// `limit` per window, a window opened by the first arrival after the
    /// previous one ended.
    FixedWindowFirst,
    /// At most `limit` admissions in any span of `window`.
    SlidingLog,
    /// Two fixed windows, the previous weighted by its overlap with the
    /// span of `window` ending now (the demo server's `sliding_window.lua`).
    SlidingCounter,
    /// A meter of size `limit` draining `limit / window` per second: the
    /// same arithmetic as the bucket, stated as `used/size`.
    LeakyBucket,
    /// At most `limit` requests in service, each served for `window`.
    Concurrency,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::TokenBucket,
        Kind::FixedWindowAligned,
        Kind::FixedWindowFirst,
        Kind::SlidingLog,
        Kind::SlidingCounter,
        Kind::LeakyBucket,
        Kind::Concurrency,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::TokenBucket => "token bucket",
            Kind::FixedWindowAligned => "fixed window (clock)",
            Kind::FixedWindowFirst => "fixed window (first request)",
            Kind::SlidingLog => "sliding log",
            Kind::SlidingCounter => "sliding window counter",
            Kind::LeakyBucket => "leaky bucket",
            Kind::Concurrency => "concurrency limit",
        }
    }
}

/// What the limiter would say about itself at an instant.
#[derive(Debug, Clone, Copy)]
pub struct View {
    pub limit: u32,
    /// The window the policy states (the bucket's time to fill, the
    /// concurrency limit's service time).
    pub window: f64,
    /// Units left, rounded down.
    pub remaining: u32,
    /// Units in use (`limit − remaining`, for `used/size` headers).
    pub used: u32,
    /// Seconds until the quota is whole again (a window's end, a bucket's
    /// time to fill, the log's oldest entry leaving, the counter's current
    /// count leaving the weighted pair).
    pub reset: f64,
    /// Seconds until the next arrival would be admitted (0 when one would).
    pub retry_after: f64,
}

#[derive(Debug, Clone)]
pub struct Limiter {
    kind: Kind,
    limit: u32,
    window: f64,
    phase: f64,
    /// Bucket tokens and when they were counted.
    tokens: f64,
    at: f64,
    /// Fixed window: when the current window opened and its count.
    opened: f64,
    count: u32,
    /// Sliding log: admission times; concurrency: service end times.
    log: VecDeque<f64>,
    /// Counter: window index, current and previous counts.
    counter: (i64, f64, f64),
}

impl Limiter {
    pub fn new(kind: Kind, limit: u32, window: f64, phase: f64) -> Self {
        Self {
            kind,
            limit,
            window,
            phase,
            tokens: f64::from(limit),
            at: 0.0,
            opened: f64::NEG_INFINITY,
            count: 0,
            log: VecDeque::new(),
            counter: (i64::MIN, 0.0, 0.0),
        }
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    pub fn window(&self) -> f64 {
        self.window
    }

    /// The limit changes to `limit` at `t` (a server re-configured mid-run).
    pub fn change_limit(&mut self, t: f64, limit: u32) {
        self.settle(t);
        if matches!(self.kind, Kind::TokenBucket | Kind::LeakyBucket) {
            self.tokens = self.tokens.min(f64::from(limit));
        }
        self.limit = limit;
    }

    fn rate(&self) -> f64 {
        f64::from(self.limit) / self.window
    }

    /// Brings the state to `t` (refills, window roll-overs, log expiry).
    fn settle(&mut self, t: f64) {
        match self.kind {
            Kind::TokenBucket | Kind::LeakyBucket => {
                if t > self.at {
                    self.tokens =
                        (self.tokens + (t - self.at) * self.rate()).min(f64::from(self.limit));
                    self.at = t;
                }
            }
            Kind::FixedWindowAligned => {
                let start = self.aligned_start(t);
                if start > self.opened {
                    self.opened = start;
                    self.count = 0;
                }
            }
            Kind::FixedWindowFirst => {
                if t >= self.opened + self.window {
                    // Opened by the arrival (if any) at `t`; a view at `t`
                    // sees a whole window either way.
                    self.opened = f64::NEG_INFINITY;
                    self.count = 0;
                }
            }
            Kind::SlidingLog => {
                while self.log.front().is_some_and(|&at| at <= t - self.window) {
                    self.log.pop_front();
                }
            }
            Kind::Concurrency => {
                // A slot is free at its end, float dust aside: an arrival
                // over legs of 0 ms comes at that very instant.
                self.log.retain(|&end| end > t + 1e-9);
            }
            Kind::SlidingCounter => {
                let index = ((t - self.phase) / self.window).floor() as i64;
                let (current, count, _) = self.counter;
                if index != current {
                    let previous = if index == current + 1 { count } else { 0.0 };
                    self.counter = (index, 0.0, previous);
                }
            }
        }
    }

    fn aligned_start(&self, t: f64) -> f64 {
        ((t - self.phase) / self.window).floor() * self.window + self.phase
    }

    /// The counter's weighted count at `t` (after `settle(t)`).
    fn estimate(&self, t: f64) -> f64 {
        let (index, current, previous) = self.counter;
        let start = index as f64 * self.window + self.phase;
        let overlap = 1.0 - (t - start) / self.window;
        previous * overlap.clamp(0.0, 1.0) + current
    }

    /// An arrival at `t`: admitted (`true`) or refused. `service` is how
    /// long an admitted request stays in service (the concurrency limit's).
    pub fn arrive(&mut self, t: f64) -> bool {
        self.settle(t);
        let limit = f64::from(self.limit);
        match self.kind {
            Kind::TokenBucket | Kind::LeakyBucket => {
                // A server keeps fractions to a microsecond's worth: no
                // float dust refuses an arrival at the refill instant.
                if self.tokens >= 1.0 - 1e-9 {
                    self.tokens = (self.tokens - 1.0).max(0.0);
                    return true;
                }
            }
            Kind::FixedWindowAligned | Kind::FixedWindowFirst => {
                if self.kind == Kind::FixedWindowFirst && self.opened == f64::NEG_INFINITY {
                    self.opened = t;
                }
                if self.count < self.limit {
                    self.count += 1;
                    return true;
                }
            }
            Kind::SlidingLog => {
                if (self.log.len() as u32) < self.limit {
                    self.log.push_back(t);
                    return true;
                }
            }
            Kind::Concurrency => {
                if (self.log.len() as u32) < self.limit {
                    self.log.push_back(t + self.window);
                    return true;
                }
            }
            // Exact, unlike the bucket: any tolerance admits a window's
            // last unit in the sliver before its end where the previous
            // window's weight has not quite run out, an instant no client
            // can aim at and a server counting in milliseconds (the demo
            // server's `sliding_window.lua`) never admits in.
            Kind::SlidingCounter => {
                if self.estimate(t) + 1.0 <= limit {
                    self.counter.1 += 1.0;
                    return true;
                }
            }
        }
        false
    }

    /// What the limiter says of itself at `t`.
    pub fn view(&mut self, t: f64) -> View {
        self.settle(t);
        let limit = self.limit;
        let (remaining, reset) = match self.kind {
            Kind::TokenBucket | Kind::LeakyBucket => (
                self.tokens.floor() as u32,
                (f64::from(limit) - self.tokens) / self.rate(),
            ),
            Kind::FixedWindowAligned => (
                limit.saturating_sub(self.count),
                self.opened + self.window - t,
            ),
            Kind::FixedWindowFirst => {
                let end = if self.opened == f64::NEG_INFINITY {
                    t + self.window
                } else {
                    self.opened + self.window
                };
                (limit.saturating_sub(self.count), end - t)
            }
            Kind::SlidingLog => (
                limit.saturating_sub(self.log.len() as u32),
                self.log.front().map_or(0.0, |&at| at + self.window - t),
            ),
            Kind::Concurrency => (
                limit.saturating_sub(self.log.len() as u32),
                self.log
                    .iter()
                    .copied()
                    .fold(f64::INFINITY, f64::min)
                    .min(t + self.window)
                    - t,
            ),
            Kind::SlidingCounter => {
                let (index, current, _) = self.counter;
                let start = index as f64 * self.window + self.phase;
                let left = (f64::from(limit) - self.estimate(t)).max(0.0);
                let reset = if current > 0.0 {
                    start + 2.0 * self.window - t
                } else {
                    start + self.window - t
                };
                (left.floor() as u32, reset)
            }
        };
        View {
            limit,
            window: self.window,
            remaining,
            used: limit.saturating_sub(remaining),
            reset: reset.max(0.0),
            retry_after: self.next_admit(t) - t,
        }
    }

    /// The earliest instant at or after `t` at which an arrival would be
    /// admitted, if nothing else arrives in between.
    pub fn next_admit(&mut self, t: f64) -> f64 {
        self.settle(t);
        match self.kind {
            Kind::TokenBucket | Kind::LeakyBucket => {
                if self.tokens >= 1.0 - 1e-9 {
                    t
                } else {
                    t + (1.0 - self.tokens) / self.rate()
                }
            }
            Kind::FixedWindowAligned => {
                if self.count < self.limit {
                    t
                } else {
                    self.opened + self.window
                }
            }
            Kind::FixedWindowFirst => {
                if self.count < self.limit {
                    t
                } else {
                    self.opened + self.window
                }
            }
            Kind::SlidingLog => {
                let full = self.log.len() as u32 >= self.limit;
                match self.log.front() {
                    Some(&oldest) if full => oldest + self.window,
                    _ => t,
                }
            }
            Kind::Concurrency => {
                if (self.log.len() as u32) < self.limit {
                    t
                } else {
                    self.log.iter().copied().fold(f64::INFINITY, f64::min)
                }
            }
            Kind::SlidingCounter => {
                let limit = f64::from(self.limit);
                // The weighted count is continuous and does not rise
                // without arrivals: bisect within the next two windows.
                let fits = |me: &mut Self, at: f64| {
                    me.settle(at);
                    me.estimate(at) + 1.0 <= limit
                };
                let mut probe = self.clone();
                if fits(&mut probe, t) {
                    return t;
                }
                let (mut lo, mut hi) = (t, t + 2.0 * self.window);
                for _ in 0..60 {
                    let mid = (lo + hi) / 2.0;
                    let mut probe = self.clone();
                    if fits(&mut probe, mid) {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                hi
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_admits_its_burst_then_one_per_refill() {
        let mut bucket = Limiter::new(Kind::TokenBucket, 4, 1.0, 0.0);
        assert!((0..4).all(|_| bucket.arrive(0.0)));
        assert!(!bucket.arrive(0.0));
        assert!((bucket.next_admit(0.0) - 0.25).abs() < 1e-9);
        assert!(bucket.arrive(0.25));
    }

    #[test]
    fn a_counter_weighs_the_previous_window() {
        let mut counter = Limiter::new(Kind::SlidingCounter, 10, 1.0, 0.0);
        assert!((0..10).all(|_| counter.arrive(0.5)));
        assert!(
            !counter.arrive(1.0),
            "the whole previous count weighs at 1.0"
        );
        let next = counter.next_admit(1.0);
        assert!((next - 1.1).abs() < 1e-6, "{next}");
    }

    #[test]
    fn a_counter_full_in_both_windows_admits_its_last_unit_only_in_the_next() {
        let mut counter = Limiter::new(Kind::SlidingCounter, 2, 1.0, 0.0);
        assert!(counter.arrive(0.0) && counter.arrive(0.0));
        assert!(counter.arrive(1.5), "half the previous weight is left");
        assert!(!counter.arrive(2.0 - 1e-12), "a sliver of it is left");
        assert_eq!(counter.next_admit(2.0 - 1e-12), 2.0);
        assert!(counter.arrive(2.0));
    }

    #[test]
    fn a_concurrency_limit_frees_a_slot_when_service_ends() {
        let mut limit = Limiter::new(Kind::Concurrency, 2, 0.2, 0.0);
        assert!(limit.arrive(0.0) && limit.arrive(0.1));
        assert!(!limit.arrive(0.15));
        assert!((limit.next_admit(0.15) - 0.2).abs() < 1e-9);
        assert!(limit.arrive(0.2));
    }
}
