//! A case's floor: the earliest a client that knows the limiter exactly
//! could finish the job. It sends each request to arrive at the first
//! instant the server admits it (so it is never refused and needs no
//! hint), with at most `concurrency` requests in flight, every leg of the
//! network taking `leg`: its mean (`rtt / 2` rounded up to whole milliseconds:
//! [`leg`]) for the floor a client is
//! judged by, its shortest for a bound no client can beat.

use super::case::{Case, leg};
use super::server::Server;

/// The mean leg (the floor's): the mean of [`leg`] over its
/// uniform spread, by the midpoint rule.
pub fn mean_leg(case: &Case) -> f64 {
    const STEPS: u32 = 1000;
    let sum: f64 = (0..STEPS)
        .map(|i| {
            let at = (f64::from(i) + 0.5) / f64::from(STEPS);
            leg(case.rtt, case.jitter * (2.0 * at - 1.0))
        })
        .sum();
    sum / f64::from(STEPS)
}

/// The shortest leg the network draws.
pub fn shortest_leg(case: &Case) -> f64 {
    leg(case.rtt, -case.jitter)
}

/// The instant (case seconds) the oracle receives its last success.
pub fn floor(case: &Case, leg: f64) -> f64 {
    let mut server = Server::new(case);
    let mut free = vec![0.0_f64; case.concurrency];
    let mut last_arrival = 0.0_f64;
    let mut finish = 0.0_f64;
    for _ in 0..case.successes {
        let (slot, ready) = free
            .iter()
            .copied()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("at least one task");
        let (arrival, departs) = server.take_next((ready + leg).max(last_arrival));
        last_arrival = arrival;
        let done = departs + leg;
        free[slot] = done;
        finish = finish.max(done);
    }
    finish
}
