//! Engine rules under an injected clock, and a simulated token-bucket
//! server that checks pacing end to end without sleeping.

use std::time::{Duration, Instant};

use http::StatusCode;

use super::*;
use crate::signal::{HintSource, Quota, QuotaSource, RetryHint, Signal};

mod eviction;
mod hostile;
mod named;
mod pacing;
mod sim;
mod windows;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn hint_signal(delay: Duration) -> Signal {
    Signal::from_parts(
        Some(RetryHint::new(delay, HintSource::RetryAfterSeconds)),
        vec![],
    )
}

fn admit_now(engine: &Engine, scope: &Scope, now: Instant) -> InFlight {
    match engine.admit(scope, now) {
        Admit::Now(ticket) => ticket,
        other => panic!("expected Admit::Now, got {other:?}"),
    }
}

fn admit_wait(engine: &Engine, scope: &Scope, now: Instant) -> (Duration, WaitReason) {
    match engine.admit(scope, now) {
        Admit::After { wait, reason } => (wait, reason),
        Admit::Now(_) => panic!("expected a wait"),
    }
}

fn no_jitter() -> Config {
    Config::default().hint_jitter(0.0, Duration::ZERO)
}

/// A backoff that never waits: the hint alone sets the pause.
fn no_backoff() -> Backoff {
    Backoff::new(Duration::ZERO, Duration::ZERO)
}

fn retry_after(verdict: &Verdict) -> Duration {
    match verdict {
        Verdict::Retry { after, .. } => *after,
        other => panic!("expected a retry, got {other:?}"),
    }
}

#[test]
fn a_hint_pauses_the_whole_scope_and_is_honoured() {
    let engine = Engine::new(no_jitter());
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let first = admit_now(&engine, &scope, t0);
    let second = admit_now(&engine, &scope, t0);
    let attempt = Attempt::new(1, true, t0);
    let verdict = engine.on_response(
        first,
        t0,
        StatusCode::TOO_MANY_REQUESTS,
        &hint_signal(ms(1500)),
        &attempt,
    );
    assert_eq!(
        verdict,
        Verdict::Retry {
            after: ms(1500),
            reason: RetryReason::Throttled {
                status: StatusCode::TOO_MANY_REQUESTS,
                hint: Some(ms(1500)),
            },
        }
    );
    // Everyone else waits too, never earlier than the hint.
    assert_eq!(
        admit_wait(&engine, &scope, t0 + ms(100)),
        (ms(1400), WaitReason::Paused)
    );
    assert_eq!(admit_wait(&engine, &scope, t0 + ms(1499)).0, ms(1));
    // Asked without admitting (a fleet asks before reserving a slot).
    let handle = engine.handle("s", t0);
    assert_eq!(engine.paused_for_in(&handle, t0 + ms(1000)), Some(ms(500)));
    assert_eq!(engine.paused_for_in(&handle, t0 + ms(1500)), None);
    drop(admit_now(&engine, &scope, t0 + ms(1500)));
    // Another scope is not affected.
    drop(admit_now(&engine, &Scope::new("other"), t0 + ms(100)));
    drop(second);
}

#[test]
fn hint_jitter_only_ever_adds() {
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let engine = Engine::new(Config::default());
    let ticket = admit_now(&engine, &scope, t0);
    match engine.on_response(
        ticket,
        t0,
        StatusCode::TOO_MANY_REQUESTS,
        &hint_signal(ms(2000)),
        &Attempt::new(1, true, t0),
    ) {
        Verdict::Retry { after, .. } => {
            assert!(after >= ms(2000) && after <= ms(2200), "{after:?}")
        }
        other => panic!("{other:?}"),
    }
}

/// Refused again and again with `hint`: the pauses, the scope admitting
/// the next send only once each is over.
fn pauses_after_refusals(config: Config, hint: Duration, refusals: u32) -> Vec<Duration> {
    let engine = Engine::new(config.max_attempts(100).retry_budget(None));
    let scope = Scope::new("s");
    let mut now = Instant::now();
    let mut pauses = Vec::new();
    for n in 0..refusals {
        let ticket = admit_now(&engine, &scope, now);
        let verdict = engine.on_response(
            ticket,
            now,
            StatusCode::TOO_MANY_REQUESTS,
            &hint_signal(hint),
            &Attempt::new(n + 1, true, now),
        );
        let after = retry_after(&verdict);
        if !after.is_zero() {
            assert_eq!(
                admit_wait(&engine, &scope, now),
                (after, WaitReason::Paused)
            );
        }
        pauses.push(after);
        now += after;
    }
    pauses
}

#[test]
fn a_zero_hint_falls_back_to_the_backoff() {
    let backoff = Backoff::default();
    for seed in 0..20 {
        let config = Config::default().rng_seed(seed);
        let pauses = pauses_after_refusals(config, Duration::ZERO, 10);
        for (n, pause) in pauses.iter().enumerate() {
            assert!(
                *pause < backoff.ceiling(n as u32),
                "seed {seed}, {n}: {pause:?}"
            );
        }
        // Ten refusals in a row: the backoff has grown (ceilings 0.1 s …
        // 20 s; all ten draws under 1 s together is a miss).
        let total: Duration = pauses.iter().sum();
        assert!(total > Duration::from_secs(1), "seed {seed}: {pauses:?}");
    }
}

#[test]
fn a_hint_is_a_floor_and_the_backoff_takes_over_when_it_is_not_kept() {
    let hint = ms(500);
    for seed in 0..20 {
        let pauses = pauses_after_refusals(no_jitter().rng_seed(seed), hint, 10);
        assert!(pauses.iter().all(|p| *p >= hint), "seed {seed}: {pauses:?}");
        assert!(pauses.iter().any(|p| *p > hint), "seed {seed}: {pauses:?}");
        assert!(
            pauses.iter().all(|p| *p <= Backoff::DEFAULT_CAP),
            "seed {seed}: {pauses:?}"
        );
    }
}

#[test]
fn a_success_resets_the_backoff() {
    let config = no_jitter()
        .rng_seed(3)
        .max_attempts(100)
        .retry_budget(None)
        .unhinted_wait(Duration::ZERO)
        .backoff(Backoff::new(ms(100), ms(50_000)));
    let engine = Engine::new(config);
    let scope = Scope::new("s");
    let mut now = Instant::now();
    let refuse = |now: Instant, n: u32| {
        let ticket = admit_now(&engine, &scope, now);
        let verdict = engine.on_response(
            ticket,
            now,
            StatusCode::TOO_MANY_REQUESTS,
            &Signal::default(),
            &Attempt::new(n, true, now),
        );
        retry_after(&verdict)
    };
    for n in 1..=12 {
        now += refuse(now, n);
    }
    let ticket = admit_now(&engine, &scope, now);
    let attempt = Attempt::new(1, true, now);
    let ok = engine.on_response(ticket, now, StatusCode::OK, &Signal::default(), &attempt);
    assert_eq!(ok, Verdict::Return);
    // The first refusal after a success backs off from the base again.
    assert!(refuse(now, 1) < ms(100));
}

#[test]
fn same_seed_same_pauses() {
    let config = || Config::default().rng_seed(42);
    let a = pauses_after_refusals(config(), ms(20), 8);
    let b = pauses_after_refusals(config(), ms(20), 8);
    let c = pauses_after_refusals(Config::default().rng_seed(43), ms(20), 8);
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn bare_throttles_back_off_exponentially_with_full_jitter() {
    let backoff = Backoff::new(ms(100), Duration::from_secs(20));
    let engine = Engine::new(
        Config::default()
            .backoff(backoff)
            .unhinted_wait(Duration::ZERO)
            .max_attempts(50)
            .retry_budget(None),
    );
    let scope = Scope::new("s");
    let mut now = Instant::now();
    for n in 0..8u32 {
        let ticket = admit_now(&engine, &scope, now);
        let verdict = engine.on_response(
            ticket,
            now,
            StatusCode::SERVICE_UNAVAILABLE,
            &Signal::default(),
            &Attempt::new(n + 1, true, now),
        );
        let Verdict::Retry { after, .. } = verdict else {
            panic!("{verdict:?}")
        };
        assert!(after < backoff.ceiling(n), "retry {n}: {after:?}");
        now += after;
    }
    // A success resets the growth.
    let ticket = admit_now(&engine, &scope, now);
    assert_eq!(
        engine.on_response(
            ticket,
            now,
            StatusCode::OK,
            &Signal::default(),
            &Attempt::new(1, true, now)
        ),
        Verdict::Return
    );
}

/// An attempt reads back what it was made with, and its own limits
/// replace the configuration's where given (at least one attempt).
#[test]
fn an_attempt_reads_back_its_number_and_limits() {
    let config = no_jitter().max_attempts(4).max_wait(Duration::from_secs(9));
    let t0 = Instant::now();
    let attempt = Attempt::new(3, false, t0);
    assert_eq!((attempt.number(), attempt.retryable()), (3, false));
    assert_eq!(attempt.started(), t0);
    assert_eq!(attempt.max_attempts(&config), 4);
    assert_eq!(attempt.max_wait(&config), Duration::from_secs(9));
    let own = Attempt::new(1, true, t0).with_limits(Some(0), Some(Duration::ZERO), None);
    assert_eq!((own.number(), own.retryable()), (1, true));
    assert_eq!(own.max_attempts(&config), 1);
    assert_eq!(own.max_wait(&config), Duration::ZERO);
}

/// A refusal asking `asked` of a request allowed 10 s at most, at `t0`:
/// the verdict, and what the next admission is told a second later.
fn refused_beyond_max_wait(asked: Duration) -> (Verdict, (Duration, WaitReason)) {
    let engine = Engine::new(no_jitter().max_wait(Duration::from_secs(10)));
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let ticket = admit_now(&engine, &scope, t0);
    let verdict = engine.on_response(
        ticket,
        t0,
        StatusCode::TOO_MANY_REQUESTS,
        &hint_signal(asked),
        &Attempt::new(1, true, t0),
    );
    (
        verdict,
        admit_wait(&engine, &scope, t0 + Duration::from_secs(1)),
    )
}

#[test]
fn a_hint_beyond_max_wait_gives_up_at_once_with_the_hint() {
    let asked = Duration::from_secs(3600);
    let (verdict, next) = refused_beyond_max_wait(asked);
    assert_eq!(
        verdict,
        Verdict::GiveUp(GiveUpReason::WaitTooLong { wait: asked })
    );
    // The scope still obeys the server: the next admission is told the wait.
    assert_eq!(next, (Duration::from_secs(3599), WaitReason::Paused));
}

/// A hint beyond any quota's reset (a thousand days) pauses the scope no
/// longer than [`MAX_SERVER_WAIT`], while the give-up still reports what
/// the server asked.
#[test]
fn an_absurd_hint_pauses_the_scope_no_longer_than_max_server_wait() {
    let asked = Duration::from_secs(1_000 * 24 * 3600);
    let (verdict, next) = refused_beyond_max_wait(asked);
    assert_eq!(
        verdict,
        Verdict::GiveUp(GiveUpReason::WaitTooLong { wait: asked })
    );
    let second = Duration::from_secs(1);
    assert_eq!(next, (MAX_SERVER_WAIT - second, WaitReason::Paused));
}

#[test]
fn the_deadline_is_never_slept_past() {
    let engine = Engine::new(no_jitter().deadline(Duration::from_secs(5)));
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let ticket = admit_now(&engine, &scope, t0 + Duration::from_secs(3));
    let verdict = engine.on_response(
        ticket,
        t0 + Duration::from_secs(3),
        StatusCode::TOO_MANY_REQUESTS,
        &hint_signal(Duration::from_secs(3)),
        &Attempt::new(1, true, t0),
    );
    assert_eq!(
        verdict,
        Verdict::GiveUp(GiveUpReason::Deadline {
            wait: Duration::from_secs(3)
        })
    );
    let ticket = admit_now(
        &Engine::new(no_jitter().deadline(Duration::from_secs(5))),
        &scope,
        t0,
    );
    drop(ticket);
}

#[test]
fn attempts_are_bounded() {
    let engine = Engine::new(no_jitter().max_attempts(2).backoff(no_backoff()));
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let ticket = admit_now(&engine, &scope, t0);
    assert!(matches!(
        engine.on_response(
            ticket,
            t0,
            StatusCode::TOO_MANY_REQUESTS,
            &hint_signal(ms(10)),
            &Attempt::new(1, true, t0)
        ),
        Verdict::Retry { .. }
    ));
    let ticket = admit_now(&engine, &scope, t0 + ms(10));
    assert_eq!(
        engine.on_response(
            ticket,
            t0 + ms(10),
            StatusCode::TOO_MANY_REQUESTS,
            &hint_signal(ms(10)),
            &Attempt::new(2, true, t0)
        ),
        Verdict::GiveUp(GiveUpReason::AttemptsExhausted)
    );
}

#[test]
fn the_budget_stops_retries_when_spent() {
    let budget = RetryBudget::new(Duration::from_secs(1), 2, 0.0);
    let engine = Engine::new(
        no_jitter()
            .retry_budget(budget)
            .max_attempts(100)
            .backoff(no_backoff()),
    );
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let mut verdicts = Vec::new();
    for n in 1..=3 {
        let ticket = admit_now(&engine, &scope, t0);
        verdicts.push(engine.on_response(
            ticket,
            t0,
            StatusCode::TOO_MANY_REQUESTS,
            &hint_signal(Duration::ZERO),
            &Attempt::new(n, true, t0),
        ));
    }
    assert!(matches!(verdicts[0], Verdict::Retry { .. }));
    assert!(matches!(verdicts[1], Verdict::Retry { .. }));
    assert_eq!(verdicts[2], Verdict::GiveUp(GiveUpReason::BudgetExhausted));
    assert_eq!(
        engine
            .scope_stats(&scope)
            .map(|s| (s.sent(), s.throttled(), s.retries(), s.gave_up())),
        Some((3, 3, 2, 1))
    );
}

#[test]
fn not_retryable_requests_come_back_but_still_pause_the_scope() {
    let engine = Engine::new(no_jitter());
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let ticket = admit_now(&engine, &scope, t0);
    let verdict = engine.on_response(
        ticket,
        t0,
        StatusCode::TOO_MANY_REQUESTS,
        &hint_signal(ms(300)),
        &Attempt::new(1, false, t0),
    );
    assert_eq!(verdict, Verdict::GiveUp(GiveUpReason::NotRetryable));
    assert_eq!(admit_wait(&engine, &scope, t0).0, ms(300));
}

#[test]
fn transport_errors_retry_with_backoff_only_when_transient() {
    let engine = Engine::new(no_jitter());
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let ticket = admit_now(&engine, &scope, t0);
    let verdict = engine.on_transport_error(ticket, t0, true, &Attempt::new(1, true, t0));
    let Verdict::Retry { after, reason } = verdict else {
        panic!("{verdict:?}")
    };
    assert!(after < Backoff::DEFAULT_BASE);
    assert_eq!(reason, RetryReason::Transport);
    let ticket = admit_now(&engine, &scope, t0);
    assert_eq!(
        engine.on_transport_error(ticket, t0, false, &Attempt::new(1, true, t0)),
        Verdict::GiveUp(GiveUpReason::NotRetryable)
    );
}

#[test]
fn waits_and_give_ups_before_sending_are_counted() {
    let engine = Engine::default();
    let scope = Scope::new("http://counted");
    let now = Instant::now();
    let handle = engine.handle(scope.as_str(), now);
    engine.record_wait(&scope, ms(30));
    engine.record_wait_in(&handle, ms(20));
    engine.record_give_up_in(&handle);
    engine.record_give_up_in(&handle);
    let stats = engine.scope_stats(&scope).expect("the scope was seen");
    assert_eq!(stats.waits(), 2);
    assert_eq!(stats.waited(), ms(50));
    assert_eq!(stats.gave_up(), 2);
    assert_eq!(stats.gave_up_before_send(), 2);
}

/// A refusal with no hint at all, before anything was learned, is read as
/// `Retry-After: 1`, doubling per refusal in a row (plus the hint jitter),
/// and a success starts again from 1 s.
#[test]
fn bare_refusals_wait_the_unhinted_wait_doubling() {
    let engine = Engine::new(
        Config::default()
            .rng_seed(5)
            .max_attempts(100)
            .retry_budget(None),
    );
    let scope = Scope::new("s");
    let mut now = Instant::now();
    let refuse = |now: Instant, n: u32| {
        let ticket = admit_now(&engine, &scope, now);
        retry_after(&engine.on_response(
            ticket,
            now,
            StatusCode::TOO_MANY_REQUESTS,
            &Signal::default(),
            &Attempt::new(n, true, now),
        ))
    };
    assert_eq!(refuse(now, 1), Duration::from_secs(1), "the first is exact");
    now += Duration::from_secs(1);
    for (n, secs) in [(2, 2), (3, 4), (4, 8), (5, 16), (6, 20), (7, 20)] {
        let wait = refuse(now, n);
        let floor = Duration::from_secs(secs);
        assert!(wait >= floor, "refusal {n}: {wait:?}");
        assert!(wait <= floor + floor / 10, "refusal {n}: {wait:?}");
        now += wait;
    }
    let ticket = admit_now(&engine, &scope, now);
    let ok = Attempt::new(1, true, now);
    assert_eq!(
        engine.on_response(ticket, now, StatusCode::OK, &Signal::default(), &ok),
        Verdict::Return
    );
    let wait = refuse(now, 1);
    assert!(
        wait >= Duration::from_secs(1) && wait <= ms(1100),
        "{wait:?}"
    );
}

/// Refusals of requests that were already in flight when the first one
/// paused the scope are not news: they neither lengthen the pause nor
/// count as refusals in a row.
#[test]
fn refusals_of_requests_sent_before_the_pause_do_not_escalate() {
    let engine = Engine::new(no_jitter().max_attempts(100).retry_budget(None));
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let tickets: Vec<_> = (0..4).map(|_| admit_now(&engine, &scope, t0)).collect();
    let mut waits = Vec::new();
    for (i, ticket) in tickets.into_iter().enumerate() {
        let at = t0 + ms(i as u64);
        waits.push(retry_after(&engine.on_response(
            ticket,
            at,
            StatusCode::TOO_MANY_REQUESTS,
            &Signal::default(),
            &Attempt::new(1, true, at),
        )));
    }
    // One pause of 1 s from the first refusal; the others wait out the rest.
    for (i, wait) in waits.iter().enumerate() {
        assert_eq!(*wait, Duration::from_secs(1) - ms(i as u64), "{waits:?}");
    }
    // The retry after the pause is the second refusal in a row: 2 s.
    let at = t0 + Duration::from_secs(1);
    let ticket = admit_now(&engine, &scope, at);
    let wait = retry_after(&engine.on_response(
        ticket,
        at,
        StatusCode::TOO_MANY_REQUESTS,
        &Signal::default(),
        &Attempt::new(2, true, at),
    ));
    assert_eq!(wait, Duration::from_secs(2));
}

/// A stale refusal whose hint reaches further than the pause still
/// lengthens it: the server may know better than our first reading.
#[test]
fn a_stale_refusal_with_a_longer_hint_extends_the_pause() {
    let engine = Engine::new(no_jitter().max_attempts(100).retry_budget(None));
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let a = admit_now(&engine, &scope, t0);
    let b = admit_now(&engine, &scope, t0);
    let refuse = |ticket, hint| {
        retry_after(&engine.on_response(
            ticket,
            t0,
            StatusCode::TOO_MANY_REQUESTS,
            &hint_signal(hint),
            &Attempt::new(1, true, t0),
        ))
    };
    assert_eq!(refuse(a, ms(500)), ms(500));
    assert_eq!(refuse(b, ms(3000)), ms(3000));
    assert_eq!(
        admit_wait(&engine, &scope, t0),
        (ms(3000), WaitReason::Paused)
    );
}

/// A pause ends with one request: the others wait for its answer (so a
/// wrong guess of what came back costs one refusal, not one per task), and
/// go at once when it succeeds, is cancelled, or is out too long.
#[test]
fn a_pause_ends_with_one_request() {
    let engine = Engine::new(no_jitter().max_attempts(100).retry_budget(None));
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let first = admit_now(&engine, &scope, t0);
    let refused = engine.on_response(
        first,
        t0,
        StatusCode::TOO_MANY_REQUESTS,
        &hint_signal(ms(100)),
        &Attempt::new(1, true, t0),
    );
    assert_eq!(retry_after(&refused), ms(100));
    let end = t0 + ms(100);
    let probe = admit_now(&engine, &scope, end);
    // Out for 3 ms: look again in 3 ms.
    assert_eq!(
        admit_wait(&engine, &scope, end + ms(3)),
        (ms(3), WaitReason::Paused)
    );
    let ok = Attempt::new(2, true, end);
    let verdict = engine.on_response(probe, end + ms(4), StatusCode::OK, &Signal::default(), &ok);
    assert_eq!(verdict, Verdict::Return);
    let _a = admit_now(&engine, &scope, end + ms(4));
    let _b = admit_now(&engine, &scope, end + ms(4));

    // A cancelled probe releases the others too.
    let (engine, scope) = (Engine::new(no_jitter()), Scope::new("s"));
    let ticket = admit_now(&engine, &scope, t0);
    let attempt = Attempt::new(1, true, t0);
    let signal = hint_signal(ms(100));
    let _ = engine.on_response(ticket, t0, StatusCode::TOO_MANY_REQUESTS, &signal, &attempt);
    drop(admit_now(&engine, &scope, end));
    let _c = admit_now(&engine, &scope, end);

    // A probe out for a second no longer holds anyone.
    let (engine, scope) = (Engine::new(no_jitter()), Scope::new("s"));
    let ticket = admit_now(&engine, &scope, t0);
    let _ = engine.on_response(ticket, t0, StatusCode::TOO_MANY_REQUESTS, &signal, &attempt);
    let _slow = admit_now(&engine, &scope, end);
    assert_eq!(
        admit_wait(&engine, &scope, end + ms(999)).1,
        WaitReason::Paused
    );
    let _d = admit_now(&engine, &scope, end + ms(1000));
}

/// A refusal without a hint from a server that reports its quota waits for
/// what the quota says (here its reset, 300 ms away), not the unhinted
/// second.
#[test]
fn a_bare_refusal_with_a_reported_quota_waits_for_the_quota() {
    let engine = Engine::new(no_jitter().backoff(no_backoff()));
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let quota = Quota::new(QuotaSource::XRateLimit)
        .with_limit(20)
        .with_remaining(0)
        .with_reset(ms(300));
    let signal = Signal::from_parts(None, vec![quota]);
    let ticket = admit_now(&engine, &scope, t0);
    let attempt = Attempt::new(1, true, t0);
    let verdict = engine.on_response(ticket, t0, StatusCode::TOO_MANY_REQUESTS, &signal, &attempt);
    let wait = retry_after(&verdict);
    assert!(wait <= ms(300), "{wait:?}");
}

/// A request told to wait is woken when a response makes a send possible
/// before its wait is over (here a window that opened early), and not by
/// one that changes nothing.
#[test]
fn a_response_that_brings_units_back_wakes_the_waiters() {
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    let engine = Engine::new(no_jitter().backoff(no_backoff()));
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let reading = |remaining| {
        let quota = Quota::new(QuotaSource::XRateLimit)
            .with_limit(20)
            .with_remaining(remaining)
            .with_reset(Duration::from_secs(5));
        Signal::from_parts(None, vec![quota])
    };
    let attempt = Attempt::new(1, true, t0);
    let first = admit_now(&engine, &scope, t0);
    let second = admit_now(&engine, &scope, t0);
    let third = admit_now(&engine, &scope, t0);
    // Spent: the next send waits (for the reset, or a probe).
    engine.on_response(first, t0, StatusCode::OK, &reading(0), &attempt);
    admit_wait(&engine, &scope, t0 + ms(1));
    let handle = engine.handle("s", t0);
    let mut woken = pin!(handle.ready());
    woken.as_mut().enable();
    let mut cx = Context::from_waker(Waker::noop());
    // Nothing new: still asleep.
    engine.on_response(second, t0 + ms(2), StatusCode::OK, &reading(0), &attempt);
    assert_eq!(woken.as_mut().poll(&mut cx), Poll::Pending);
    // The window opened early: woken, and the send goes.
    engine.on_response(third, t0 + ms(3), StatusCode::OK, &reading(19), &attempt);
    assert_eq!(woken.as_mut().poll(&mut cx), Poll::Ready(()));
    admit_now(&engine, &scope, t0 + ms(3));
}

/// A scope is ready to send when no pause holds (one ending now has
/// ended) and the first send after a pause is answered or has been out
/// `PROBE_PATIENCE` (no send served yet: the least patience): the
/// instants `admit` uses.
#[test]
fn a_scope_is_ready_when_its_pause_and_probe_are_over() {
    let config = no_jitter().backoff(no_backoff()).pacing(false);
    let t0 = Instant::now();
    let mut scope = state::ScopeState::new(&config, "s", t0);
    assert!(scope.ready(&config, t0));
    let seq = scope
        .admit(&config, t0, true, &[])
        .expect("nothing holds it");
    let attempt = Attempt::new(1, true, t0);
    let class = ResponseClass::Throttled { wait: None };
    let signal = hint_signal(Duration::from_secs(1));
    let status = StatusCode::TOO_MANY_REQUESTS;
    scope.on_response(&config, seq, t0, status, class, &signal, &attempt);
    let end = t0 + Duration::from_secs(1);
    assert!(!scope.ready(&config, end - ms(1)));
    assert!(scope.ready(&config, end));
    // The first send after the pause goes alone, until answered or patient.
    scope
        .admit(&config, end, true, &[])
        .expect("the pause is over");
    assert!(!scope.ready(&config, end + ms(10)));
    assert!(!scope.ready(&config, end + PROBE_PATIENCE - ms(1)));
    assert!(scope.ready(&config, end + PROBE_PATIENCE));
}

/// A server that serves for seconds answers the first send after a pause
/// in seconds: the others wait as long as a served answer may take
/// (RFC 6298's timeout of the served round trips: 2 s, then `2 + 4 · 1`),
/// not the least patience, after which they would all go blind.
#[test]
fn the_probe_is_awaited_as_long_as_a_served_answer_may_take() {
    let config = no_jitter().backoff(no_backoff()).pacing(false);
    let t0 = Instant::now();
    let mut scope = state::ScopeState::new(&config, "s", t0);
    let attempt = Attempt::new(1, true, t0);
    let served = scope.admit(&config, t0, true, &[]).expect("first");
    let two = Duration::from_secs(2);
    let ok = ResponseClass::Final;
    let nothing = Signal::default();
    scope.on_response(
        &config,
        served,
        t0 + two,
        StatusCode::OK,
        ok,
        &nothing,
        &attempt,
    );
    let refused = scope.admit(&config, t0 + two, true, &[]).expect("second");
    let class = ResponseClass::Throttled { wait: None };
    let signal = hint_signal(Duration::from_secs(1));
    let status = StatusCode::TOO_MANY_REQUESTS;
    scope.on_response(&config, refused, t0 + two, status, class, &signal, &attempt);
    let end = t0 + Duration::from_secs(3);
    scope
        .admit(&config, end, true, &[])
        .expect("the pause is over");
    assert!(!scope.ready(&config, end + PROBE_PATIENCE));
    assert!(!scope.ready(&config, end + Duration::from_secs(6) - ms(1)));
    assert!(scope.ready(&config, end + Duration::from_secs(6)));
}

/// A declared quota of 2 a second: a third send waits for the first to
/// leave the second, plus the spread of the round trips measured (here
/// 10 ms and 50 ms: `4·RTTVAR` = 50 ms), so the server, counting at
/// arrival, never sees three in one second.
#[test]
fn a_declared_quota_spaces_sends_by_its_window_and_the_round_trips_spread() {
    let config = no_jitter().declared_quota((2, Duration::from_secs(1)));
    let engine = Engine::new(config);
    let scope = Scope::new("declared");
    let t0 = Instant::now();
    let attempt = Attempt::new(1, true, t0);
    let ok = Signal::default();
    let first = admit_now(&engine, &scope, t0);
    engine.on_response(first, t0 + ms(10), StatusCode::OK, &ok, &attempt);
    let second = admit_now(&engine, &scope, t0 + ms(10));
    engine.on_response(second, t0 + ms(60), StatusCode::OK, &ok, &attempt);
    let (wait, reason) = admit_wait(&engine, &scope, t0 + ms(60));
    assert_eq!(reason, WaitReason::Pacing);
    // SRTT 10 → 15 ms, RTTVAR 5 → 0.75·5 + 0.25·40 = 13.75 ms: 55 ms.
    assert_eq!(wait, Duration::from_millis(1_000 - 60 + 55));
}

/// A token quota exhausted binds the response (`Signal::quota`), yet the
/// requests quota beside it is what the pacer reads: 9 requests left
/// admit the next send. (The token quota's cost is not known yet, so it
/// holds nothing back either; read as requests, its `0` would hold the
/// scope for its minute.)
#[test]
fn an_exhausted_token_quota_does_not_stand_for_the_requests_quota() {
    let engine = Engine::new(no_jitter());
    let scope = Scope::new("tokens");
    let t0 = Instant::now();
    let requests = Quota::new(QuotaSource::IetfList)
        .with_limit(10)
        .with_window(Duration::from_secs(1))
        .with_remaining(9)
        .with_reset(Duration::from_secs(1));
    let tokens = Quota::new(QuotaSource::OpenAi)
        .with_unit(crate::signal::QuotaUnit::Tokens)
        .with_limit(500)
        .with_remaining(0)
        .with_reset(Duration::from_secs(60));
    let signal = Signal::from_parts(None, vec![requests, tokens]);
    assert_eq!(
        signal.quota().map(Quota::unit),
        Some(crate::signal::QuotaUnit::Tokens),
        "the exhausted token quota binds"
    );
    let ticket = admit_now(&engine, &scope, t0);
    let attempt = Attempt::new(1, true, t0);
    engine.on_response(ticket, t0 + ms(1), StatusCode::OK, &signal, &attempt);
    admit_now(&engine, &scope, t0 + ms(1));
}

/// The scope's kind of quota is read from the evidence: nothing at first,
/// a bucket once a policy states a rate.
#[test]
fn the_quota_kind_follows_the_evidence() {
    let engine = Engine::new(no_jitter());
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let ticket = admit_now(&engine, &scope, t0);
    let attempt = Attempt::new(1, true, t0);
    engine.on_response(ticket, t0, StatusCode::OK, &Signal::default(), &attempt);
    let kind = |engine: &Engine| engine.scope_stats(&scope).map(|s| s.quota_kind());
    assert_eq!(kind(&engine), Some(QuotaKind::Unknown));
    let quota = Quota::new(QuotaSource::IetfList)
        .with_limit(20)
        .with_remaining(19)
        .with_reset(ms(1_000))
        .with_window(ms(1_000));
    let ticket = admit_now(&engine, &scope, t0);
    let signal = Signal::from_parts(None, vec![quota]);
    engine.on_response(ticket, t0 + ms(5), StatusCode::OK, &signal, &attempt);
    assert_eq!(kind(&engine), Some(QuotaKind::Bucket));
    assert_eq!(QuotaKind::Bucket.name(), "bucket");
}
