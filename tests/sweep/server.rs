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
    /// The token quota's view and a request's cost, if the case has one.
    pub tokens: Option<(View, u32)>,
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
    /// Refusals take the service time too.
    slow_refusals: bool,
    /// A rate limiter's service time for a request it admitted.
    service: f64,
    /// The token quota (in requests' worth of tokens) and a request's cost.
    tokens: Option<(Limiter, u32)>,
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
            slow_refusals: case.slow_refusals,
            service: case.service,
            tokens: case.tokens.map(|tokens| {
                let phase = case.phase % tokens.window;
                let limiter = Limiter::new(tokens.kind, tokens.units, tokens.window, phase);
                (limiter, tokens.cost)
            }),
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
        let admitted = match &mut self.tokens {
            None => self.limiter.arrive(at),
            // Both quotas must admit it; a refusal spends neither (tried
            // on copies: one may refuse what the other took).
            Some((tokens, _)) => {
                let (mut requests, mut spent) = (self.limiter.clone(), tokens.clone());
                let both = requests.arrive(at) && spent.arrive(at);
                if both {
                    (self.limiter, *tokens) = (requests, spent);
                }
                both
            }
        };
        let mut view = self.limiter.view(at);
        let tokens = self
            .tokens
            .as_mut()
            .map(|(tokens, cost)| (tokens.view(at), *cost));
        if let Some((tokens, _)) = &tokens {
            view.retry_after = view.retry_after.max(tokens.retry_after);
        }
        let served = admitted || self.slow_refusals;
        let service = if !served {
            0.0
        } else if self.limiter.kind() == Kind::Concurrency {
            self.limiter.window()
        } else if admitted {
            self.service
        } else {
            0.0
        };
        Answer {
            admitted,
            view,
            tokens,
            departs: t + service,
        }
    }

    /// The earliest instant at or after `t` both quotas admit an arrival.
    fn next_admit(&mut self, t: f64) -> f64 {
        let mut at = t;
        for _ in 0..1_000 {
            let requests = self.limiter.next_admit(at);
            let both = match &mut self.tokens {
                Some((tokens, _)) => tokens.next_admit(requests),
                None => requests,
            };
            if both <= requests {
                return requests;
            }
            at = both;
        }
        at
    }

    /// The oracle's send: the earliest arrival at or after `t` that is
    /// admitted, taken. Returns the arrival and when its response leaves.
    pub fn take_next(&mut self, t: f64) -> (f64, f64) {
        let mut at = t.max(self.now);
        for _ in 0..1_000_000 {
            self.advance(self.clock(at));
            let admit = self.next_admit(self.clock(at).max(self.now));
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
