//! The simulated server: a limiter, its header dialect, its timer, and what
//! else happens to the quota (another client spending it, a limit that
//! drops mid-run), all on case time in `f64` seconds.

use super::case::Case;
use super::limiter::{Kind, Limiter, View};

/// What the server did with one arrival.
#[derive(Debug, Clone, Copy)]
pub struct Answer {
    pub admitted: bool,
    pub view: View,
    /// When the response leaves the server (service time elapsed).
    pub departs: f64,
}

#[derive(Debug)]
pub struct Server {
    limiter: Limiter,
    /// The server reads its clock to this resolution (0: exactly).
    tick: f64,
    /// Another client's next arrival and the gap between its arrivals.
    other: Option<(f64, f64)>,
    /// The limit drops to `.1` at `.0`.
    change: Option<(f64, u32)>,
    /// Server time the state was last brought to.
    now: f64,
}

impl Server {
    pub fn new(case: &Case) -> Self {
        let limiter = Limiter::new(case.kind, case.limit, case.window, case.phase);
        let other = case.other.map(|share| {
            let gap = case.window / (f64::from(case.limit) * share);
            (gap / 2.0, gap)
        });
        Self {
            limiter,
            tick: case.server_tick,
            other,
            change: case.change,
            now: 0.0,
        }
    }

    /// The server's reading of its clock at `t`.
    fn clock(&self, t: f64) -> f64 {
        if self.tick > 0.0 {
            (t / self.tick).floor() * self.tick
        } else {
            t
        }
    }

    /// Applies what happens to the quota before `t`, in time order.
    fn advance(&mut self, t: f64) {
        loop {
            let change = self.change.map_or(f64::INFINITY, |(at, _)| at);
            let other = self.other.map_or(f64::INFINITY, |(at, _)| at);
            let next = change.min(other);
            if next > t {
                break;
            }
            if change <= other {
                let (at, limit) = self.change.take().expect("the change is due");
                self.limiter.change_limit(at, limit);
            } else {
                let (at, gap) = self.other.expect("another client");
                self.limiter.arrive(at);
                self.other = Some((at + gap, gap));
            }
        }
        self.now = self.now.max(t);
    }

    /// Our request arrives at `t`.
    pub fn arrive(&mut self, t: f64) -> Answer {
        let at = self.clock(t).max(self.now);
        self.advance(at);
        let admitted = self.limiter.arrive(at);
        let view = self.limiter.view(at);
        let service = if admitted && self.limiter.kind() == Kind::Concurrency {
            self.limiter.window()
        } else {
            0.0
        };
        Answer {
            admitted,
            view,
            departs: t + service,
        }
    }

    /// The oracle's send: the earliest arrival at or after `t` that is
    /// admitted, taken. Returns the arrival and when its response leaves.
    pub fn take_next(&mut self, t: f64) -> (f64, f64) {
        let mut at = t.max(self.now);
        for _ in 0..1_000_000 {
            self.advance(self.clock(at));
            let admit = self.limiter.next_admit(self.clock(at).max(self.now));
            // The first instant the server's clock reads `admit`.
            let arrival = if self.tick > 0.0 && admit > self.clock(at) {
                at.max(((admit / self.tick) - 1e-9).ceil() * self.tick)
            } else {
                at.max(admit)
            };
            let due = self
                .other
                .map_or(f64::INFINITY, |(t, _)| t)
                .min(self.change.map_or(f64::INFINITY, |(t, _)| t));
            if due <= self.clock(arrival) {
                at = at.max(due);
                self.advance(due);
                continue;
            }
            let answer = self.arrive(arrival);
            if answer.admitted {
                return (arrival, answer.departs);
            }
            at = arrival + 1e-6;
        }
        panic!("the oracle found no admission");
    }
}
