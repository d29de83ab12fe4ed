//! The bounded load loop: C workers share one target count of successes.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::CommonArgs;

/// How one attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A 2xx response.
    Ok,
    /// A 429 or 503 response (or an error saying the client gave up on one).
    Throttled,
    /// Anything else: transport error, other status, timeout.
    Error,
}

/// What the loop counted.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// Attempts started (one request each for naive clients).
    pub attempts: u64,
    /// Attempts that ended in a 2xx.
    pub ok: u64,
    /// Attempts that ended throttled.
    pub throttled: u64,
    /// Attempts that ended in an error.
    pub errors: u64,
    /// Wall time from start to the last attempt's end.
    pub elapsed: Duration,
}

#[derive(Debug, Default)]
struct Shared {
    tally: Tally,
    in_flight: u64,
}

enum Next {
    Go,
    Wait,
    Stop,
}

/// Run `attempt` from `--concurrency` workers until `--successes` attempts
/// succeeded, `--max-requests` attempts started or `--max-secs` passed.
///
/// A worker starts an attempt only while successes plus attempts in flight
/// fall short of the target, so the last successes are not overshot by
/// workers racing for them; it waits for an in-flight attempt to end otherwise.
pub async fn drive<F, Fut>(args: &CommonArgs, attempt: F) -> Tally
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Outcome> + Send,
{
    let started = Instant::now();
    let deadline = started + args.max_duration();
    let shared = Arc::new(Mutex::new(Shared::default()));
    let changed = Arc::new(Notify::new());
    let workers: Vec<_> = (0..args.concurrency)
        .map(|_| {
            let (shared, changed, attempt) = (shared.clone(), changed.clone(), attempt.clone());
            let (target, max_requests) = (args.successes, args.max_requests);
            tokio::spawn(async move {
                loop {
                    let notified = changed.notified();
                    let next = claim(&shared, target, max_requests, deadline);
                    match next {
                        Next::Stop => break,
                        Next::Wait => {
                            // Recheck at least every 10 ms in case the wake-up was missed.
                            let _ = tokio::time::timeout(Duration::from_millis(10), notified).await;
                            continue;
                        }
                        Next::Go => {}
                    }
                    let left = deadline.saturating_duration_since(Instant::now());
                    let outcome = tokio::time::timeout(left, attempt())
                        .await
                        .unwrap_or(Outcome::Error);
                    finish(&shared, outcome);
                    changed.notify_waiters();
                }
            })
        })
        .collect();
    for worker in workers {
        let _ = worker.await;
    }
    let mut tally = lock(&shared).tally.clone();
    tally.elapsed = started.elapsed();
    tally
}

fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

fn claim(shared: &Mutex<Shared>, target: u64, max_requests: u64, deadline: Instant) -> Next {
    let mut state = lock(shared);
    let done = state.tally.ok >= target;
    let exhausted = state.tally.attempts >= max_requests || Instant::now() >= deadline;
    if done || exhausted {
        return Next::Stop;
    }
    if state.tally.ok + state.in_flight >= target {
        return Next::Wait;
    }
    state.tally.attempts += 1;
    state.in_flight += 1;
    Next::Go
}

fn finish(shared: &Mutex<Shared>, outcome: Outcome) {
    let mut state = lock(shared);
    state.in_flight -= 1;
    let counter = match outcome {
        Outcome::Ok => &mut state.tally.ok,
        Outcome::Throttled => &mut state.tally.throttled,
        Outcome::Error => &mut state.tally.errors,
    };
    *counter += 1;
}
