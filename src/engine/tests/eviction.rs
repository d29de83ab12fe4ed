//! Idle scopes are dropped; busy, paused or quota-bound ones are kept.

use super::*;

const IDLE: Duration = Duration::from_secs(60);

fn settled(engine: &Engine, key: &str, now: Instant, status: StatusCode, signal: &Signal) {
    let ticket = admit_now(engine, &Scope::new(key), now);
    let attempt = Attempt::new(1, false, now);
    let _ = engine.on_response(ticket, now, status, signal, &attempt);
}

fn ok(engine: &Engine, key: &str, now: Instant) {
    settled(engine, key, now, StatusCode::OK, &Signal::default());
}

/// Creates scopes until the next one triggers a sweep (the map is at its
/// sweep threshold), all used at `now`.
fn fill_to_sweep(engine: &Engine, prefix: &str, now: Instant) {
    let mut i = 0;
    let below_threshold = || {
        let scopes = lock(&engine.shared.scopes);
        scopes.all.len() < scopes.sweep_at
    };
    while below_threshold() {
        ok(engine, &format!("{prefix}{i}"), now);
        i += 1;
    }
}

fn known(engine: &Engine, key: &str) -> bool {
    engine.scope_stats(&Scope::new(key)).is_some()
}

#[test]
fn idle_scopes_are_evicted_when_the_map_doubles() {
    let engine = Engine::new(Config::default().evict_idle_scopes(IDLE));
    let t0 = Instant::now();
    ok(&engine, "first", t0);
    fill_to_sweep(&engine, "old-", t0);
    let before = engine.stats().len();
    assert!(before >= SWEEP_FLOOR, "{before}");
    // Not idle long enough yet: the sweep keeps everything.
    ok(&engine, "early", t0 + IDLE - ms(1));
    assert_eq!(engine.stats().len(), before + 1);
    fill_to_sweep(&engine, "more-", t0 + IDLE - ms(1));
    let full = engine.stats().len();
    // A minute later every scope used at t0 goes; those used a moment
    // before the minute stay.
    ok(&engine, "late", t0 + IDLE);
    let after = engine.stats().len();
    assert!(!known(&engine, "first") && !known(&engine, "old-0"));
    assert!(known(&engine, "early") && known(&engine, "late"));
    assert_eq!(after, full + 1 - before, "{full} then {after}");
    assert_eq!(engine.scope_count(), after);
}

#[test]
fn busy_paused_and_quota_bound_scopes_survive_the_sweep() {
    let engine = Engine::new(Config::default().evict_idle_scopes(IDLE));
    let t0 = Instant::now();
    // In flight for ever (never answered).
    let in_flight = admit_now(&engine, &Scope::new("in-flight"), t0);
    // Paused by a hint of an hour (beyond max_wait: given up, still paused).
    let hour = Duration::from_secs(3600);
    settled(
        &engine,
        "paused",
        t0,
        StatusCode::TOO_MANY_REQUESTS,
        &hint_signal(hour),
    );
    // A quota that resets in an hour.
    let quota = Signal::from_parts(
        None,
        vec![
            Quota::new(QuotaSource::XRateLimit)
                .with_limit(5000)
                .with_remaining(0)
                .with_reset(hour),
        ],
    );
    settled(&engine, "quota", t0, StatusCode::OK, &quota);
    ok(&engine, "idle", t0);
    fill_to_sweep(&engine, "filler-", t0);
    ok(&engine, "trigger", t0 + IDLE * 2);
    assert!(!known(&engine, "idle"));
    for key in ["in-flight", "paused", "quota", "trigger"] {
        assert!(known(&engine, key), "{key} was evicted");
    }
    assert_eq!(
        engine.scope_stats(in_flight.scope()).map(|s| s.in_flight()),
        Some(1)
    );
    drop(in_flight);
    // Once released, unpaused and past its reset, each goes at the next sweep.
    let later = t0 + hour + IDLE * 2;
    fill_to_sweep(&engine, "filler2-", later - IDLE);
    ok(&engine, "trigger2", later);
    for key in ["in-flight", "paused", "quota"] {
        assert!(!known(&engine, key), "{key} was kept");
    }
}

#[test]
fn eviction_off_keeps_every_scope() {
    let engine = Engine::new(Config::default().evict_idle_scopes(None));
    let t0 = Instant::now();
    fill_to_sweep(&engine, "s-", t0);
    let before = engine.stats().len();
    ok(&engine, "late", t0 + Duration::from_secs(86_400));
    assert_eq!(engine.stats().len(), before + 1);
}

#[test]
fn the_last_scope_is_kept_and_found_after_a_sweep() {
    let engine = Engine::new(Config::default().evict_idle_scopes(IDLE));
    let t0 = Instant::now();
    ok(&engine, "hot", t0);
    fill_to_sweep(&engine, "s-", t0);
    // "hot" becomes the fast path's last scope (found, not created)…
    drop(engine.handle("hot", t0));
    // …so the sweep a new scope triggers, although "hot" is idle, keeps it
    // rather than strand the fast path on a detached state.
    ok(&engine, "new", t0 + IDLE * 2);
    assert!(!known(&engine, "s-0"));
    ok(&engine, "hot", t0 + IDLE * 2);
    assert_eq!(
        engine.scope_stats(&Scope::new("hot")).map(|s| s.sent()),
        Some(2)
    );
}
