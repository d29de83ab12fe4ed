//! Refusals that name their quota, and sends the mirror cannot time: what
//! the scope does next.

use std::time::{Duration, Instant};

use http::{HeaderMap, HeaderValue, StatusCode};

use super::{admit_now, admit_wait, ms, no_jitter, retry_after};
use crate::engine::{Admit, Attempt, Engine, Scope, Verdict, WaitReason};
use crate::signal::{Signal, parse};

fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for &(name, value) in pairs {
        map.insert(name, HeaderValue::from_str(value).unwrap());
    }
    map
}

/// Four sends at once to a rate of two (AWS's mock, staggered): two are
/// served, then the third is refused beside two while the fourth, which
/// went beside three, is out, and the fourth is refused. Returns whether
/// a fifth send may go just after.
fn two_served_two_refused(refusal: &Signal) -> bool {
    let engine = Engine::new(no_jitter());
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let tickets: Vec<_> = (0..4).map(|_| admit_now(&engine, &scope, t0)).collect();
    let mut tickets = tickets.into_iter();
    for ticket in tickets.by_ref().take(2) {
        let at = t0 + ms(1);
        engine.on_response(
            ticket,
            at,
            StatusCode::OK,
            &Signal::default(),
            &Attempt::new(1, true, at),
        );
    }
    for ticket in tickets {
        let at = t0 + ms(2);
        let verdict = engine.on_response(
            ticket,
            at,
            StatusCode::TOO_MANY_REQUESTS,
            refusal,
            &Attempt::new(1, true, at),
        );
        assert!(matches!(verdict, Verdict::Retry { .. }), "{verdict:?}");
    }
    matches!(engine.admit(&scope, t0 + ms(3)), Admit::Now(_))
}

/// The first of those refusals is undecided (the fourth send is out): it
/// pauses the scope, and its request waits its own backoff, not nothing.
#[test]
fn an_undecided_refusal_waits_its_own_backoff() {
    let engine = Engine::new(no_jitter().rng_seed(3));
    let scope = Scope::new("s");
    let t0 = Instant::now();
    let tickets: Vec<_> = (0..4).map(|_| admit_now(&engine, &scope, t0)).collect();
    let mut tickets = tickets.into_iter();
    for ticket in tickets.by_ref().take(2) {
        let at = t0 + ms(1);
        let attempt = Attempt::new(1, true, at);
        engine.on_response(ticket, at, StatusCode::OK, &Signal::default(), &attempt);
    }
    let at = t0 + ms(2);
    let verdict = engine.on_response(
        tickets.next().unwrap(),
        at,
        StatusCode::TOO_MANY_REQUESTS,
        &Signal::default(),
        &Attempt::new(1, true, at),
    );
    let wait = retry_after(&verdict);
    assert!(
        wait > Duration::ZERO && wait < Duration::from_secs(1),
        "{wait:?}"
    );
    assert_eq!(admit_wait(&engine, &scope, at).1, WaitReason::Paused);
}

/// Two refusals beside two sends served could be a concurrency limit of
/// two on trial, sends going as slots free. A refusal that names a rate
/// (an AWS throttling code) or reads its requests quota exhausted says
/// the units come back with time: the scope pauses, as for any rate.
#[test]
fn a_refusal_that_names_a_rate_pauses_the_scope() {
    let bare = Signal::default();
    assert!(two_served_two_refused(&bare), "a limit of two on trial");
    let aws = parse(
        StatusCode::TOO_MANY_REQUESTS,
        &headers(&[("content-type", "application/x-amz-json-1.0")]),
        Some(br#"{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException"}"#),
    );
    assert!(!two_served_two_refused(&aws), "AWS: paused");
    let exhausted = parse(
        StatusCode::TOO_MANY_REQUESTS,
        &headers(&[("x-ratelimit-limit", "2"), ("x-ratelimit-remaining", "0")]),
        None,
    );
    assert!(
        !two_served_two_refused(&exhausted),
        "read exhausted: paused"
    );
    // Units left: the quota read did not refuse (GitHub's secondary limits
    // refuse beside a primary with room).
    let room = parse(
        StatusCode::TOO_MANY_REQUESTS,
        &headers(&[("x-ratelimit-limit", "10"), ("x-ratelimit-remaining", "5")]),
        None,
    );
    assert!(
        two_served_two_refused(&room),
        "units left: a limit of two on trial"
    );
}

/// A quota of `limit` units whose reading states a reset of 10 s but no
/// window, read at `t0` spent: the engine, its scope, the reading, and
/// the instant just past the reset.
fn spent_until_reset(limit: &str, t0: Instant) -> (Engine, Scope, Signal, Instant) {
    let engine = Engine::new(no_jitter());
    let scope = Scope::new("s");
    let reading = parse(
        StatusCode::OK,
        &headers(&[
            ("ratelimit-limit", limit),
            ("ratelimit-remaining", "0"),
            ("ratelimit-reset", "10"),
        ]),
        None,
    );
    let ticket = admit_now(&engine, &scope, t0);
    let attempt = Attempt::new(1, true, t0);
    engine.on_response(ticket, t0, StatusCode::OK, &reading, &attempt);
    (engine, scope, reading, t0 + Duration::from_secs(11))
}

/// A quota of one unit whose reading states a reset but no window: once
/// the reset is past, the mirror has one unit and nothing says when the
/// next comes. The send that takes it goes; a second waits for its answer
/// (the reading that says when), not blind into a spent quota.
#[test]
fn the_send_that_takes_the_last_known_unit_goes_alone() {
    let (engine, scope, reading, after) = spent_until_reset("1", Instant::now());
    let first = admit_now(&engine, &scope, after);
    let (_, reason) = admit_wait(&engine, &scope, after);
    assert_eq!(reason, WaitReason::Paused, "waits for the first's answer");
    let answered = after + ms(2);
    let attempt = Attempt::new(1, true, answered);
    engine.on_response(first, answered, StatusCode::OK, &reading, &attempt);
    let (wait, reason) = admit_wait(&engine, &scope, answered);
    assert_eq!(reason, WaitReason::Pacing);
    assert!(wait >= Duration::from_secs(9), "the reset read: {wait:?}");
}

/// The same with a quota of two: both units go at once past the reset,
/// and only a third send waits for the second's answer.
#[test]
fn units_the_mirror_knows_of_go_together() {
    let (engine, scope, _, after) = spent_until_reset("2", Instant::now());
    let _both = [
        admit_now(&engine, &scope, after),
        admit_now(&engine, &scope, after),
    ];
    assert_eq!(admit_wait(&engine, &scope, after).1, WaitReason::Paused);
}
