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
    errors_in_a_row: u64,
}

enum Next {
    Go,
    Wait,
    Stop,
}

/// Run `attempt` from `--concurrency` workers until `--successes` attempts
/// succeeded, `--max-requests` attempts started, `--max-errors-in-a-row`
/// attempts in a row ended in an error or `--max-secs` passed.
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
    let limits = Limits {
        target: args.successes,
        max_requests: args.max_requests,
        max_errors_in_a_row: args.max_errors_in_a_row,
        deadline,
    };
    let workers: Vec<_> = (0..args.concurrency)
        .map(|_| {
            let (shared, changed, attempt) = (shared.clone(), changed.clone(), attempt.clone());
            tokio::spawn(async move {
                loop {
                    let notified = changed.notified();
                    let next = claim(&shared, &limits);
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

/// When the loop stops.
#[derive(Debug, Clone, Copy)]
struct Limits {
    target: u64,
    max_requests: u64,
    max_errors_in_a_row: u64,
    deadline: Instant,
}

fn claim(shared: &Mutex<Shared>, limits: &Limits) -> Next {
    let mut state = lock(shared);
    let done = state.tally.ok >= limits.target;
    let exhausted = state.tally.attempts >= limits.max_requests
        || state.errors_in_a_row >= limits.max_errors_in_a_row
        || Instant::now() >= limits.deadline;
    if done || exhausted {
        return Next::Stop;
    }
    if state.tally.ok + state.in_flight >= limits.target {
        return Next::Wait;
    }
    state.tally.attempts += 1;
    state.in_flight += 1;
    Next::Go
}

fn finish(shared: &Mutex<Shared>, outcome: Outcome) {
    let mut state = lock(shared);
    state.in_flight -= 1;
    state.errors_in_a_row = match outcome {
        Outcome::Error => state.errors_in_a_row + 1,
        Outcome::Ok | Outcome::Throttled => 0,
    };
    let counter = match outcome {
        Outcome::Ok => &mut state.tally.ok,
        Outcome::Throttled => &mut state.tally.throttled,
        Outcome::Error => &mut state.tally.errors,
    };
    *counter += 1;
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    fn args(concurrency: u64, max_errors_in_a_row: u64) -> CommonArgs {
        CommonArgs {
            url: super::super::DEFAULT_URL.to_owned(),
            successes: 3,
            concurrency,
            client_id: None,
            max_requests: 1_000,
            max_secs: 60.0,
            max_errors_in_a_row,
        }
    }

    #[tokio::test]
    async fn a_loop_whose_every_attempt_fails_stops_after_the_errors_in_a_row() {
        let tally = drive(&args(1, 5), || async { Outcome::Error }).await;
        assert_eq!((tally.attempts, tally.errors, tally.ok), (5, 5, 0));
    }

    #[tokio::test]
    async fn workers_in_flight_when_the_errors_run_out_are_all_that_goes_past_them() {
        let tally = drive(&args(4, 5), || async {
            tokio::task::yield_now().await;
            Outcome::Error
        })
        .await;
        assert!(
            (5..=8).contains(&tally.attempts),
            "{} attempts",
            tally.attempts
        );
    }

    #[tokio::test]
    async fn a_success_or_a_throttled_attempt_ends_a_run_of_errors() {
        let n = Arc::new(AtomicU64::new(0));
        // Two errors, a refusal, one error, a success: three errors in a row
        // only if either of them failed to end the run.
        let tally = drive(&args(1, 3), move || {
            let n = n.clone();
            async move {
                match n.fetch_add(1, Ordering::Relaxed) % 5 {
                    2 => Outcome::Throttled,
                    4 => Outcome::Ok,
                    _ => Outcome::Error,
                }
            }
        })
        .await;
        assert_eq!((tally.attempts, tally.ok, tally.throttled), (15, 3, 3));
    }
}
