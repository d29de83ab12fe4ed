//! Absurd server numbers and absurd configurations: no panic, no overflow,
//! and a typed give-up where a wait is beyond reach.

use super::*;

fn quota(limit: u64, remaining: u64, window: Duration, reset: Duration) -> Signal {
    Signal::from_parts(
        None,
        vec![
            Quota::new(QuotaSource::IetfList)
                .with_limit(limit)
                .with_remaining(remaining)
                .with_window(window)
                .with_reset(reset),
        ],
    )
}

fn throttled(engine: &Engine, scope: &Scope, now: Instant, signal: &Signal) -> Verdict {
    let ticket = admit_now(engine, scope, now);
    engine.on_response(
        ticket,
        now,
        StatusCode::TOO_MANY_REQUESTS,
        signal,
        &Attempt::new(1, true, now),
    )
}

#[test]
fn a_hint_of_duration_max_gives_up_at_once_without_overflow() {
    let engine = Engine::new(Config::default());
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let verdict = throttled(&engine, &scope, t0, &hint_signal(Duration::MAX));
    assert_eq!(
        verdict,
        Verdict::GiveUp(GiveUpReason::WaitTooLong {
            wait: Duration::MAX
        })
    );
    // The scope is paused for the clamped day, not forever and not never.
    let (wait, reason) = admit_wait(&engine, &scope, t0 + ms(1));
    assert_eq!(reason, WaitReason::Paused);
    assert!(wait > Duration::from_secs(86_000) && wait <= MAX_SERVER_WAIT + Duration::from_secs(1));
}

#[test]
fn unbounded_max_wait_and_deadline_do_not_overflow() {
    let config = Config::default()
        .max_wait(Duration::MAX)
        .deadline(Duration::MAX);
    let engine = Engine::new(config);
    let scope = Scope::new("s");
    let t0 = Instant::now();
    // The day-long hint is now within max_wait: it is honoured.
    let verdict = throttled(&engine, &scope, t0, &hint_signal(Duration::MAX));
    assert!(
        matches!(verdict, Verdict::Retry { after, .. } if after >= MAX_SERVER_WAIT),
        "{verdict:?}"
    );
    let attempt = Attempt::new(1, true, t0);
    assert!(!attempt.would_pass_deadline(engine.config(), t0, Duration::MAX));
    let finite = Config::default().deadline(Duration::from_secs(1));
    assert!(attempt.would_pass_deadline(&finite, t0, Duration::MAX));
}

#[test]
fn absurd_quota_numbers_pace_without_overflow() {
    let t0 = Instant::now();
    let cases = [
        (1, 0, Duration::MAX, Duration::MAX),
        (u64::MAX, 0, Duration::from_nanos(1), Duration::MAX),
        (1, 0, Duration::from_nanos(1), Duration::from_nanos(1)),
        (u64::MAX, u64::MAX, Duration::MAX, Duration::ZERO),
        (0, 0, Duration::MAX, Duration::MAX),
        (1, 0, Duration::ZERO, Duration::MAX),
    ];
    for (limit, remaining, window, reset) in cases {
        let engine = Engine::new(Config::default());
        let scope = Scope::new("s");
        let signal = quota(limit, remaining, window, reset);
        let ticket = admit_now(&engine, &scope, t0);
        let attempt = Attempt::new(1, true, t0);
        engine.on_response(ticket, t0, StatusCode::OK, &signal, &attempt);
        // Whatever the numbers, admission answers (at most the clamped day).
        for step in [0, 1, 1_000, 86_400_000] {
            let now = t0 + ms(step);
            match engine.admit(&scope, now) {
                Admit::Now(ticket) => drop(ticket),
                Admit::After { wait, .. } => {
                    assert!(
                        wait <= MAX_SERVER_WAIT + Duration::from_secs(1),
                        "{limit} {remaining} {window:?} {reset:?}: {wait:?}"
                    );
                }
            }
        }
        let later = t0 + ms(86_400_001);
        if let Admit::Now(ticket) = engine.admit(&scope, later) {
            let attempt = Attempt::new(1, true, later);
            let refused = StatusCode::TOO_MANY_REQUESTS;
            let verdict = engine.on_response(ticket, later, refused, &signal, &attempt);
            assert!(!matches!(verdict, Verdict::Return));
        }
    }
}
