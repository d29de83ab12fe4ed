//! The fleet store's scripts against a real `redis-server`: probing, GCRA
//! slots at the learned rate, the shared pause, merging, fairness, TTLs.

mod fleet_support;

use std::time::Duration;

use courteous::fleet::{RedisFleet, Reservation};
use fleet_support::*;

const MS: Duration = Duration::from_millis(1);

#[tokio::test]
async fn one_probe_at_a_time_until_the_server_has_spoken() {
    let server = redis();
    let (a, b) = (member(&server.url()).await, member(&server.url()).await);
    let s = scope("probe");
    let first = a.reserve(&s).await.unwrap();
    assert!(matches!(first, Reservation::Go { probe: true, after, .. } if after.is_zero()));
    let second = b.reserve(&s).await.unwrap();
    assert!(
        matches!(second, Reservation::AskAgain { after } if after <= 20 * MS && !after.is_zero()),
        "{second:?}"
    );
    // A plain answer (no quota at all) still ends the probe.
    a.publish(&s, &courteous::fleet::Lesson::default())
        .await
        .unwrap();
    let third = b.reserve(&s).await.unwrap();
    assert!(
        matches!(third, Reservation::Go { probe: false, after, .. } if after.is_zero()),
        "{third:?}"
    );
}

#[tokio::test]
async fn slots_follow_the_learned_rate_after_the_burst_the_server_reported() {
    let server = redis();
    let fleet = member(&server.url()).await;
    let s = scope("gcra");
    go_after(fleet.reserve(&s).await.unwrap());
    // 10 per second, 9 left after the probe, one slot (102 ms ≥ the 100 ms
    // headroom) held back: 8 go at once, then one per 102 ms.
    let mut clock = RedisClock::connect(&server.url()).await;
    let published_from = clock.now().await;
    let interval = fleet.publish(&s, &ok_lesson(10, 1, 9)).await.unwrap();
    let published_by = clock.now().await;
    assert_eq!(interval, Some(Duration::from_micros(102_000)));
    let iv = interval.unwrap();
    let mut dues = Vec::new();
    for _ in 0..13 {
        dues.push(reserve_timed(&mut clock, &fleet, &s).await);
    }
    // Times are Redis TIME read around each call: how much passes between
    // calls on a loaded machine does not matter, only the spacing does.
    for (i, d) in dues[..8].iter().enumerate() {
        assert!(d.after <= d.hi - d.lo + MS, "burst slot {i}: {d:?}");
    }
    for k in 1..=5u32 {
        let d = dues[7 + k as usize];
        // The k-th slot after the burst is due k intervals after the publish:
        // never earlier, and no later than that or the call itself.
        assert!(
            d.hi + MS >= published_from + iv * k,
            "slot {k} early: {d:?}, published from {published_from:?}"
        );
        assert!(
            d.lo <= (published_by + iv * k).max(d.hi) + MS,
            "slot {k} late: {d:?}, published by {published_by:?}"
        );
    }
    for pair in dues[8..].windows(2) {
        assert!(pair[1].lo + MS >= pair[0].lo, "slots are ordered: {pair:?}");
        if !pair[0].after.is_zero() && !pair[1].after.is_zero() {
            assert!(
                spaced_by(pair[0], pair[1], iv, MS),
                "one interval apart: {pair:?}"
            );
        }
    }
}

#[tokio::test]
async fn one_refusal_pauses_every_member_and_they_leave_one_interval_apart() {
    let server = redis();
    let s = scope("pause");
    let mut members = Vec::new();
    for _ in 0..5 {
        members.push(member(&server.url()).await);
    }
    go_after(members[0].reserve(&s).await.unwrap());
    let iv = members[0]
        .publish(&s, &ok_lesson(20, 1, 19))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(iv, Duration::from_micros(51_000));
    let mut clock = RedisClock::connect(&server.url()).await;
    let refused_from = clock.now().await;
    members[1]
        .publish(&s, &refusal(Duration::from_millis(400)))
        .await
        .unwrap();
    let refused_by = clock.now().await;
    let mut dues = Vec::new();
    for m in &members {
        dues.push(reserve_timed(&mut clock, m, &s).await);
    }
    // The first leaves when the 400 ms pause ends (on Redis' clock)...
    let pause = Duration::from_millis(400);
    assert!(
        dues[0].hi + MS >= refused_from + pause && dues[0].lo <= refused_by + pause + MS,
        "{dues:?}, refused {refused_from:?}..{refused_by:?}"
    );
    // ...and the others one interval (51 ms) apart each: no stampede.
    for pair in dues.windows(2) {
        assert!(spaced_by(pair[0], pair[1], iv, MS), "no stampede: {dues:?}");
    }
}

#[tokio::test]
async fn stale_readings_only_tighten() {
    let server = redis();
    let fleet = member(&server.url()).await;
    let s = scope("merge");
    go_after(fleet.reserve(&s).await.unwrap());
    fleet.publish(&s, &ok_lesson(10, 1, 2)).await.unwrap();
    // A late answer to an older request says 9 left: ignored.
    fleet.publish(&s, &ok_lesson(10, 1, 9)).await.unwrap();
    let mut quick = 0;
    for _ in 0..5 {
        if go_after(fleet.reserve(&s).await.unwrap()) < 5 * MS {
            quick += 1;
        }
    }
    assert_eq!(
        quick, 1,
        "only the 2 the tighter reading allowed, less the held-back slot, go at once"
    );
    // A reading tighter than the shared state (another spender) moves it.
    let before = go_after(fleet.reserve(&s).await.unwrap());
    fleet.publish(&s, &ok_lesson(10, 1, 0)).await.unwrap();
    let after = go_after(fleet.reserve(&s).await.unwrap());
    assert!(after >= before, "{before:?} then {after:?}");
}

#[tokio::test]
async fn a_late_joiner_waits_at_most_one_interval_per_slot_already_held() {
    let server = redis();
    let s = scope("fair");
    let mut herd = Vec::new();
    for _ in 0..8 {
        herd.push(member(&server.url()).await);
    }
    go_after(herd[0].reserve(&s).await.unwrap());
    let interval = herd[0]
        .publish(&s, &ok_lesson(20, 1, 0))
        .await
        .unwrap()
        .unwrap();
    // Each of 8 members holds one slot (concurrency 1), as in a busy fleet.
    let mut held = Vec::new();
    for m in &herd {
        held.push(go_after(m.reserve(&s).await.unwrap()));
    }
    let late = member(&server.url()).await;
    let wait = go_after(late.reserve(&s).await.unwrap());
    // One interval per slot held, plus the headroom (2 slots of 51 ms).
    let bound = interval * (herd.len() as u32 + 1 + 2);
    assert!(wait <= bound, "late joiner waits {wait:?}, bound {bound:?}");
    assert!(
        wait > *held.last().unwrap(),
        "first come, first served: {held:?} then {wait:?}"
    );
}

#[tokio::test]
async fn every_key_has_a_ttl_and_both_keys_share_a_hash_tag() {
    let server = redis();
    let fleet = member(&server.url()).await;
    let s = scope("ttl");
    go_after(fleet.reserve(&s).await.unwrap());
    fleet.publish(&s, &ok_lesson(20, 1, 19)).await.unwrap();
    let client = redis::Client::open(server.url()).unwrap();
    let mut con = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("courteous:v1:*")
        .query_async(&mut con)
        .await
        .unwrap();
    assert_eq!(keys.len(), 2, "{keys:?}");
    let tag = |k: &str| k[k.find('{').unwrap()..=k.find('}').unwrap()].to_owned();
    assert_eq!(tag(&keys[0]), tag(&keys[1]));
    for key in &keys {
        let ttl: i64 = redis::cmd("PTTL")
            .arg(key)
            .query_async(&mut con)
            .await
            .unwrap();
        assert!(ttl > 0 && ttl <= 600_000 + 5_000, "{key}: PTTL {ttl}");
    }
}

#[tokio::test]
async fn a_stopped_redis_misses_the_deadline_and_an_empty_one_relearns() {
    let mut server = redis();
    let fleet = courteous::fleet::RedisFleet::builder(server.url())
        .connect()
        .await
        .unwrap();
    assert_eq!(fleet.deadline(), 20 * MS, "the documented default");
    let s = scope("stop");
    go_after(fleet.reserve(&s).await.unwrap());
    let paused = server.pause().unwrap();
    let err = fleet.reserve(&s).await.unwrap_err();
    assert!(err.is_deadline(), "{err}");
    assert_eq!(fleet.counters().missed_deadline, 1);
    drop(paused);
    let port = server.port();
    server.kill();
    assert!(
        fleet.reserve(&s).await.is_err(),
        "killed: an error, no panic"
    );
    let _fresh = RedisServer::start_on_port(port).unwrap();
    // The connection manager reconnects; the empty server means probing again
    // (NOSCRIPT is handled by loading the script anew).
    let mut answer = None;
    for _ in 0..50 {
        if let Ok(r) = fleet.reserve(&s).await {
            answer = Some(r);
            break;
        }
        tokio::time::sleep(20 * MS).await;
    }
    assert!(
        matches!(answer, Some(Reservation::Go { probe: true, .. })),
        "{answer:?}"
    );
}

#[tokio::test]
async fn a_slot_further_than_the_caller_waits_is_not_reserved() {
    let server = redis();
    let (fleet, other) = (member(&server.url()).await, member(&server.url()).await);
    let s = scope("too-far");
    go_after(fleet.reserve(&s).await.unwrap());
    // 10 per second, none left: the next slot is over an interval away.
    let iv = fleet
        .publish(&s, &ok_lesson(10, 1, 0))
        .await
        .unwrap()
        .unwrap();
    let mut clock = RedisClock::connect(&server.url()).await;
    let first = reserve_timed(&mut clock, &other, &s).await;
    assert!(first.after > iv, "{first:?}");
    // Many callers that would wait at most one interval: each is told how
    // far the slot is, and none of them takes it.
    for _ in 0..20 {
        match fleet.reserve_within(&s, Some(iv)).await.unwrap() {
            Reservation::TooFar { after } => assert!(after > iv, "{after:?}"),
            other => panic!("expected TooFar, got {other:?}"),
        }
    }
    // So the next slot is still exactly one interval after the first one.
    let next = reserve_timed(&mut clock, &other, &s).await;
    assert!(spaced_by(first, next, iv, MS), "{first:?} then {next:?}");
    // A caller willing to wait that long gets a slot.
    let within = fleet
        .reserve_within(&s, Some(Duration::from_secs(10)))
        .await
        .unwrap();
    assert!(matches!(within, Reservation::Go { .. }), "{within:?}");
}

#[tokio::test]
async fn a_looser_policy_is_ignored_until_the_shared_one_goes_unconfirmed_for_a_ttl() {
    let server = redis();
    let fleet = RedisFleet::builder(server.url())
        .deadline(Duration::from_secs(2))
        .key_ttl(Duration::from_secs(1))
        .connect()
        .await
        .unwrap();
    let s = scope("policy");
    go_after(fleet.reserve(&s).await.unwrap());
    let tight = fleet.publish(&s, &ok_lesson(10, 1, 9)).await.unwrap();
    assert_eq!(tight, Some(Duration::from_micros(102_000)));
    // A stale or foreign reading says 20 per second: the fleet stays at 10.
    let merged = fleet.publish(&s, &ok_lesson(20, 1, 19)).await.unwrap();
    assert_eq!(merged, tight, "a looser reading does not loosen the rate");
    // A tighter one (5 per second) moves it at once.
    let tighter = fleet.publish(&s, &ok_lesson(5, 1, 4)).await.unwrap();
    assert_eq!(tighter, Some(Duration::from_micros(204_000)));
    // Nothing confirms 5 per second for longer than the key TTL (1 s) while
    // the scope stays in use: the looser reading is the server's new policy.
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(250)).await;
        fleet.reserve(&s).await.unwrap();
    }
    let adopted = fleet.publish(&s, &ok_lesson(20, 1, 19)).await.unwrap();
    assert_eq!(adopted, Some(Duration::from_micros(51_000)));
}

#[tokio::test]
async fn a_probe_that_failed_before_any_answer_hands_probing_on() {
    let server = redis();
    let (a, b) = (member(&server.url()).await, member(&server.url()).await);
    let s = scope("release");
    assert!(matches!(
        a.reserve(&s).await.unwrap(),
        Reservation::Go { probe: true, .. }
    ));
    assert!(matches!(
        b.reserve(&s).await.unwrap(),
        Reservation::AskAgain { .. }
    ));
    // A's send failed at the transport level: it releases its probe lease,
    // and B probes next instead of waiting the lease out; still one at a time.
    a.release_probe(&s).await.unwrap();
    let next = b.reserve(&s).await.unwrap();
    assert!(
        matches!(next, Reservation::Go { probe: true, .. }),
        "{next:?}"
    );
    let third = a.reserve(&s).await.unwrap();
    assert!(matches!(third, Reservation::AskAgain { .. }), "{third:?}");
}

#[tokio::test]
async fn a_kept_lesson_merges_with_the_next_reservation_in_the_same_call() {
    let server = redis();
    let (a, b) = (member(&server.url()).await, member(&server.url()).await);
    let s = scope("defer");
    go_after(a.reserve(&s).await.unwrap());
    a.publish(&s, &ok_lesson(20, 1, 19)).await.unwrap();
    // A's next response says the bucket is empty; A keeps it for later.
    a.defer(&s, ok_lesson(20, 1, 0));
    let calls = a.counters().calls;
    assert!(
        go_after(b.reserve(&s).await.unwrap()).is_zero(),
        "not shared yet"
    );
    // A's next reservation carries it: an empty bucket refills one send per
    // interval (51 ms), and the fleet keeps two slots of headroom and
    // tolerates one send of rounding: A's slot is 2 intervals away, where
    // without the lesson it would have gone at once (B did).
    let after = go_after(a.reserve(&s).await.unwrap());
    assert_eq!(a.counters().calls, calls + 1, "one round trip");
    assert!(after >= 2 * 51 * MS - 5 * MS, "{after:?}");
    assert!(after <= 3 * 51 * MS, "{after:?}");
    // And it was merged once, not again with the call after.
    let next = go_after(a.reserve(&s).await.unwrap());
    assert!(next <= after + 52 * MS, "{next:?} after {after:?}");
}

#[tokio::test]
async fn a_process_releases_only_its_own_probe_lease() {
    let server = redis();
    let short = |url: String| async move {
        RedisFleet::builder(url)
            .deadline(Duration::from_secs(2))
            .probe_lease(Duration::from_millis(50))
            .connect()
            .await
            .unwrap()
    };
    let (a, b, c) = (
        short(server.url()).await,
        short(server.url()).await,
        short(server.url()).await,
    );
    let s = scope("owner");
    assert!(matches!(
        a.reserve(&s).await.unwrap(),
        Reservation::Go { probe: true, .. }
    ));
    // A's lease runs out before its send fails; B probes now.
    tokio::time::sleep(Duration::from_millis(60)).await;
    assert!(matches!(
        b.reserve(&s).await.unwrap(),
        Reservation::Go { probe: true, .. }
    ));
    // A gives up the lease it was granted: B's is not A's to release.
    assert!(!a.release_probe(&s).await.unwrap());
    assert!(
        matches!(c.reserve(&s).await.unwrap(), Reservation::AskAgain { .. }),
        "B's probe still holds"
    );
    assert!(b.release_probe(&s).await.unwrap());
    assert!(matches!(
        c.reserve(&s).await.unwrap(),
        Reservation::Go { probe: true, .. }
    ));
}

#[tokio::test]
async fn a_fleet_idle_for_a_whole_refill_probes_again_before_a_burst() {
    let server = redis();
    let (a, b) = (member(&server.url()).await, member(&server.url()).await);
    let s = scope("idle");
    assert!(matches!(
        a.reserve(&s).await.unwrap(),
        Reservation::Go { probe: true, .. }
    ));
    // 10 per second: a refill is 10 intervals of 102 ms.
    let mut clock = RedisClock::connect(&server.url()).await;
    let heard = clock.now().await;
    let iv = a.publish(&s, &ok_lesson(10, 1, 9)).await.unwrap().unwrap();
    let refill = iv * 10;
    let fresh = b.reserve(&s).await.unwrap();
    // Only meaningful if the machine did not stall for a whole refill
    // between the publish and this call (Redis' clock says).
    if clock.now().await < heard + refill {
        assert!(
            matches!(fresh, Reservation::Go { probe: false, .. }),
            "the fleet heard the server just now: no probe, {fresh:?}"
        );
    }
    // Nothing granted and nothing read for a whole refill: the server's
    // bucket is full again whatever happened, and the fleet probes before
    // letting a burst out, as at first contact.
    let idle_from = clock.now().await;
    while clock.now().await < idle_from + refill + iv * 2 {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let probe = b.reserve(&s).await.unwrap();
    assert!(
        matches!(probe, Reservation::Go { probe: true, after, .. } if after.is_zero()),
        "{probe:?}"
    );
    let waiting = a.reserve(&s).await.unwrap();
    assert!(
        matches!(waiting, Reservation::AskAgain { .. }),
        "one probe at a time: {waiting:?}"
    );
    // The probe's answer lets the others go.
    b.publish(&s, &ok_lesson(10, 1, 9)).await.unwrap();
    let after = a.reserve(&s).await.unwrap();
    assert!(
        matches!(after, Reservation::Go { probe: false, .. }),
        "{after:?}"
    );
}

#[tokio::test]
async fn a_probe_lease_granted_to_a_reservation_answered_too_late_is_given_back() {
    let server = redis();
    let a = RedisFleet::builder(server.url())
        .deadline(Duration::from_millis(20))
        .connect()
        .await
        .unwrap();
    let b = member(&server.url()).await;
    let s = scope("late");
    // A has been answered once (its deadline now follows its round trips,
    // from 20 ms) and Redis holds the script, so a call sent to a stopped
    // Redis runs in full once Redis resumes.
    go_after(a.reserve(&scope("warm-up")).await.unwrap());
    let paused = server.pause().unwrap();
    let lost = a.reserve(&s).await.unwrap_err();
    assert!(lost.is_deadline(), "{lost}");
    paused.resume().unwrap();
    // Same connection, so in order: once this answers, the lost call ran.
    a.ping().await.unwrap();
    assert!(
        matches!(b.reserve(&s).await.unwrap(), Reservation::AskAgain { .. }),
        "the lost call was granted the probe lease, unawares"
    );
    // A's next reservation carries the lost call's token: the lease it was
    // granted unawares is given up (the fleet does not wait it out), and
    // the probe is this call's now.
    let next = a.reserve(&s).await.unwrap();
    assert!(
        matches!(next, Reservation::Go { probe: true, .. }),
        "{next:?}"
    );
    assert!(
        matches!(b.reserve(&s).await.unwrap(), Reservation::AskAgain { .. }),
        "still one probe at a time"
    );
    assert!(a.release_probe(&s).await.unwrap(), "and it is A's own");
}

#[tokio::test]
async fn a_long_pause_keeps_queuing_slots_rather_than_probing_when_idle() {
    let server = redis();
    let (a, b) = (member(&server.url()).await, member(&server.url()).await);
    let s = scope("idle-pause");
    go_after(a.reserve(&s).await.unwrap());
    let iv = a.publish(&s, &ok_lesson(10, 1, 9)).await.unwrap().unwrap();
    // A refusal pauses the fleet for longer than a whole refill.
    let pause = Duration::from_secs(5);
    let mut clock = RedisClock::connect(&server.url()).await;
    let refused = clock.now().await;
    a.publish(&s, &refusal(pause)).await.unwrap();
    while clock.now().await < refused + iv * 12 {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Idle for a refill, but the pause holds: a slot after it, not a poll.
    for m in [&a, &b] {
        let r = m.reserve(&s).await.unwrap();
        assert!(
            matches!(r, Reservation::Go { probe: false, after, .. } if after > 2 * iv),
            "{r:?}"
        );
    }
}
