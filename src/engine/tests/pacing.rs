//! Pacing from quota headers, through the engine.

use super::*;

/// A response stating `remaining` of a policy of `limit` per second.
fn per_second(limit: u64, remaining: u64) -> Signal {
    Signal::from_parts(
        None,
        vec![
            Quota::new(QuotaSource::IetfList)
                .with_limit(limit)
                .with_window(Duration::from_secs(1))
                .with_remaining(remaining),
        ],
    )
}

#[test]
fn remaining_and_policy_pace_instead_of_bursting() {
    let engine = Engine::new(no_jitter());
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let quota = |remaining| per_second(10, remaining);
    let ticket = admit_now(&engine, &scope, t0);
    engine.on_response(
        ticket,
        t0,
        StatusCode::OK,
        &quota(2),
        &Attempt::new(1, true, t0),
    );
    // One unit left beyond the reserve (a tenth of 10): spend it, then wait
    // one refill interval (1/10 s).
    drop_settled(&engine, admit_now(&engine, &scope, t0), t0);
    let (wait, reason) = admit_wait(&engine, &scope, t0);
    assert_eq!(reason, WaitReason::Pacing);
    assert!(wait >= ms(100) && wait <= ms(103), "{wait:?}");
}

fn drop_settled(engine: &Engine, ticket: InFlight, now: Instant) {
    engine.on_response(
        ticket,
        now,
        StatusCode::OK,
        &Signal::default(),
        &Attempt::new(1, true, now),
    );
}

#[test]
fn in_flight_requests_are_reserved() {
    let engine = Engine::new(no_jitter());
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let signal = per_second(5, 2);
    let ticket = admit_now(&engine, &scope, t0);
    engine.on_response(
        ticket,
        t0,
        StatusCode::OK,
        &signal,
        &Attempt::new(1, true, t0),
    );
    // Two left: two concurrent sends go, the third waits (0.2 s per unit).
    let a = admit_now(&engine, &scope, t0);
    let b = admit_now(&engine, &scope, t0);
    let (wait, _) = admit_wait(&engine, &scope, t0);
    assert!(wait >= ms(199), "{wait:?}");
    drop((a, b));
}

#[test]
fn stale_responses_do_not_overwrite_newer_quota() {
    let engine = Engine::new(no_jitter());
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let quota = |remaining| {
        Signal::from_parts(
            None,
            vec![
                Quota::new(QuotaSource::XRateLimit)
                    .with_limit(100)
                    .with_remaining(remaining)
                    .with_reset(Duration::from_secs(60)),
            ],
        )
    };
    let old = admit_now(&engine, &scope, t0);
    let new = admit_now(&engine, &scope, t0);
    engine.on_response(
        new,
        t0,
        StatusCode::OK,
        &quota(0),
        &Attempt::new(1, true, t0),
    );
    engine.on_response(
        old,
        t0,
        StatusCode::OK,
        &quota(50),
        &Attempt::new(1, true, t0),
    );
    // Spent (not 50 left): the probe goes when linear refill would bring
    // a unit back (60 s / 100 each), the second one: the zero was read with
    // the older send in flight, which may take the first.
    let (wait, reason) = admit_wait(&engine, &scope, t0 + Duration::from_millis(100));
    assert_eq!(
        (wait, reason),
        (Duration::from_millis(1100), WaitReason::Pacing)
    );
}

#[test]
fn pacing_off_ignores_quota_but_honours_hints() {
    let engine = Engine::new(no_jitter().pacing(false));
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let empty = per_second(10, 0);
    let ticket = admit_now(&engine, &scope, t0);
    engine.on_response(
        ticket,
        t0,
        StatusCode::OK,
        &empty,
        &Attempt::new(1, true, t0),
    );
    drop_settled(&engine, admit_now(&engine, &scope, t0), t0);
    let ticket = admit_now(&engine, &scope, t0);
    engine.on_response(
        ticket,
        t0,
        StatusCode::TOO_MANY_REQUESTS,
        &hint_signal(ms(50)),
        &Attempt::new(1, true, t0),
    );
    assert_eq!(admit_wait(&engine, &scope, t0).1, WaitReason::Paused);
}

#[test]
fn a_cancelled_send_releases_its_reservation() {
    let engine = Engine::new(no_jitter());
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let signal = per_second(5, 3);
    drop(admit_now(&engine, &scope, t0)); // cancelled before any response
    let ticket = admit_now(&engine, &scope, t0);
    // No phantom in-flight request is subtracted: 3 remaining means 3 sends.
    engine.on_response(
        ticket,
        t0,
        StatusCode::OK,
        &signal,
        &Attempt::new(1, true, t0),
    );
    for _ in 0..3 {
        drop_settled(&engine, admit_now(&engine, &scope, t0), t0);
    }
    assert_eq!(admit_wait(&engine, &scope, t0).1, WaitReason::Pacing);
}
