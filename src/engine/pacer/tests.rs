use std::time::{Duration, Instant};

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn reading(
    remaining: u64,
    limit: u64,
    window: Option<Duration>,
    reset: Option<Duration>,
) -> QuotaReading {
    QuotaReading {
        remaining: Some(remaining),
        limit: Some(limit),
        window,
        reset,
        reset_precision: None,
        seq: None,
        lead: Duration::ZERO,
        age: Duration::ZERO,
        fixed_window: false,
    }
}

#[test]
fn nothing_known_means_no_pacing() {
    let mut pacer = Pacer::default();
    let t0 = Instant::now();
    for _ in 0..1000 {
        assert_eq!(pacer.admit(t0, None), Ok(()));
    }
}

#[test]
fn refills_at_the_policy_rate_up_to_the_limit() {
    let mut pacer = Pacer::default();
    let t0 = Instant::now();
    pacer.sync(t0, reading(0, 20, Some(Duration::from_secs(1)), None), 0);
    // The reserve of 2 comes back first: 3 units at 20/s are 150 ms; waits
    // aim 2 % of a unit past it.
    assert_eq!(pacer.admit(t0, None), Err(ms(151)));
    assert_eq!(pacer.admit(t0 + ms(151), None), Ok(()));
    // After a long idle the burst is capped at the limit.
    let later = t0 + Duration::from_secs(60);
    for _ in 0..20 {
        assert_eq!(pacer.admit(later, None), Ok(()));
    }
    assert!(pacer.admit(later, None).is_err());
}

#[test]
fn sync_keeps_a_consistent_fraction() {
    let mut pacer = Pacer::default();
    let t0 = Instant::now();
    pacer.sync(t0, reading(0, 20, Some(Duration::from_secs(1)), None), 0);
    // 30 ms later we hold 0.6 units (beyond the reserve's −2); a response
    // saying 0 agrees (truth in [0, 1)), so 2.4 units are still missing.
    pacer.sync(
        t0 + ms(30),
        reading(0, 20, Some(Duration::from_secs(1)), None),
        0,
    );
    assert_eq!(pacer.admit(t0 + ms(30), None), Err(ms(121)));
}

#[test]
fn sync_lowers_an_optimistic_estimate_and_raises_a_pessimistic_one() {
    let mut pacer = Pacer::default();
    let t0 = Instant::now();
    let r = |n| reading(n, 100, None, Some(Duration::from_secs(10)));
    pacer.sync(t0, r(50), 0);
    pacer.sync(t0, r(1), 0); // someone else spent the quota
    assert_eq!(pacer.admit(t0, None), Ok(()));
    // Spent: the next unit only when linear refill would bring one (10 s /
    // 100), the probe.
    assert_eq!(pacer.admit(t0, None), Err(ms(100)));
    pacer.sync(t0, r(5), 0); // the server is kinder than we thought
    for _ in 0..5 {
        assert_eq!(pacer.admit(t0, None), Ok(()));
    }
}

#[test]
fn others_in_flight_are_subtracted() {
    let mut pacer = Pacer::default();
    let t0 = Instant::now();
    // 4 left, 1 reserved (a tenth of 10), 2 of ours in flight: 1 for us.
    pacer.sync(t0, reading(4, 10, Some(Duration::from_secs(1)), None), 2);
    assert_eq!(pacer.admit(t0, None), Ok(()));
    assert!(pacer.admit(t0, None).is_err());
}

#[test]
fn without_a_rate_a_long_reset_is_probed_and_refused_the_limit_is_back_at_it() {
    let mut pacer = Pacer::default();
    let t0 = Instant::now();
    pacer.sync(t0, reading(1, 3, None, Some(Duration::from_secs(60))), 0);
    assert_eq!(pacer.admit(t0, None), Ok(()));
    // Linear refill would bring a unit back every 60 s / 3: the probe.
    assert_eq!(pacer.admit(t0 + ms(500), None), Err(ms(19_500)));
    let probe = t0 + Duration::from_secs(20);
    assert_eq!(pacer.admit(probe, None), Ok(()));
    pacer.on_throttle(probe, None, Duration::ZERO);
    // Refused: fixed windows, nothing before the reset.
    assert_eq!(
        pacer.admit(probe + ms(500), None),
        Err(Duration::from_secs(40) - ms(500))
    );
    let reset = t0 + Duration::from_secs(60);
    for _ in 0..3 {
        assert_eq!(pacer.admit(reset, None), Ok(()));
    }
}

#[test]
fn a_short_reset_is_probed_and_a_success_means_continuous_refills() {
    let mut pacer = Pacer::default();
    let t0 = Instant::now();
    let r = |n, reset_ms| reading(n, 20, None, Some(ms(reset_ms)));
    pacer.sync(t0, r(0, 2000), 0);
    pacer.on_success(t0, false);
    // Linear refill would bring a unit back every 2 s / 20.
    assert_eq!(pacer.admit(t0, None), Err(ms(100)));
    assert_eq!(pacer.admit(t0 + ms(100), None), Ok(()));
    // The others look again a unit (1.9 s / 20) later, when its answer is in.
    assert_eq!(pacer.admit(t0 + ms(100), None), Err(ms(95)));
    pacer.sync(t0 + ms(101), r(0, 1899), 0);
    pacer.on_success(t0 + ms(101), false);
    assert_eq!(pacer.rate(), Some(10.0));
    assert_eq!(pacer.admit(t0 + ms(101), None), Err(ms(102)));
    // 600 ms later the server shows 11 units although we spent one more:
    // it refilled at least 11 (each reading is a floor).
    pacer.sync(t0 + ms(701), r(11, 1000), 0);
    pacer.on_success(t0 + ms(701), false);
    let rate = pacer.rate().unwrap_or_default();
    assert!((rate - 11.0 / 0.6).abs() < 1e-9, "{rate}");
    // A refusal halves it.
    pacer.on_throttle(t0 + ms(702), None, Duration::ZERO);
    let halved = pacer.rate().unwrap_or_default();
    assert!((halved - rate / 2.0).abs() < 1e-9, "{halved}");
}

#[test]
fn a_refused_probe_means_fixed_windows() {
    let mut pacer = Pacer::default();
    let t0 = Instant::now();
    let r = |n, reset_ms| reading(n, 20, None, Some(ms(reset_ms)));
    pacer.sync(t0, r(0, 3000), 0);
    assert_eq!(pacer.admit(t0 + ms(150), None), Ok(()));
    pacer.sync(t0 + ms(151), r(0, 2849), 0);
    pacer.on_throttle(t0 + ms(151), None, Duration::ZERO);
    assert_eq!(pacer.rate(), None);
    assert_eq!(pacer.admit(t0 + ms(200), None), Err(ms(2800)));
    // The next window opens whole: spent, it is not probed again; wait
    // for its reset.
    let next = t0 + Duration::from_secs(3);
    pacer.sync(next, r(19, 3000), 0);
    for _ in 0..19 {
        assert_eq!(pacer.admit(next, None), Ok(()));
    }
    pacer.sync(next + ms(1), r(0, 2999), 0);
    assert_eq!(pacer.admit(next + ms(500), None), Err(ms(2500)));
    assert_eq!(pacer.refill, Refill::Windowed);
}

/// Send `seq` at `at`, alone, answered a millisecond later with
/// `remaining` and an epoch reset `reset_ms` away read against an agreeing
/// clock (finer than whole seconds). Returns when it was answered.
fn send_precise(
    pacer: &mut Pacer,
    seq: &mut u64,
    at: Instant,
    remaining: u64,
    reset_ms: u64,
) -> Instant {
    assert_eq!(pacer.admit(at, Some(*seq)), Ok(()), "send {seq}");
    let answered = at + ms(1);
    let mut r = reading(remaining, 20, None, Some(ms(reset_ms) + ms(1) / 3));
    r.seq = Some(*seq);
    pacer.sync(answered, r, 0);
    pacer.answered(*seq, answered, true);
    pacer.on_success(answered, false);
    *seq += 1;
    answered
}

/// A quota without a stated window (20 units, precise resets) up to the
/// reading that opens its third window with 4 units (15 sends of the last
/// burst still held, and `in_flight` of our requests in flight), its probe
/// refused with `hint`. Returns the pacer, the next send's number and when
/// that reading came.
fn third_window_opened(t0: Instant, hint: Duration, in_flight: u32) -> (Pacer, u64, Instant) {
    // The resets name the window of a whole-second hint (else 1 s) and
    // 920 ms more; the probe goes a 20th of the last one later.
    let base = hint.max(Duration::from_secs(1)).as_millis() as u64;
    let (mut pacer, mut seq) = (Pacer::default(), 0);
    for n in 0..20 {
        send_precise(&mut pacer, &mut seq, t0 + ms(n), 19 - n, base + 920 - n);
    }
    let probe = t0 + ms(21 + (base + 901) / 20);
    assert_eq!(pacer.admit(probe, None), Ok(()));
    pacer.sync(probe + ms(1), reading(0, 20, None, Some(ms(base + 803))), 0);
    pacer.on_throttle(probe + ms(1), Some(Hint::stated(hint)), Duration::ZERO);
    assert_eq!(pacer.refill, Refill::Windowed);
    // The next window opens whole (the whole burst has left) where the
    // hint ended: spent.
    let second = probe + ms(2) + hint;
    for n in 0..20 {
        send_precise(&mut pacer, &mut seq, second + ms(n), 19 - n, base + 900);
    }
    assert!(!pacer.window.is_sliding());
    let opening = second + (second - t0);
    assert_eq!(pacer.admit(opening, Some(seq)), Ok(()));
    let at = opening + ms(1);
    let mut r = reading(4, 20, None, Some(ms(base + 900) + ms(1) / 3));
    r.seq = Some(seq);
    pacer.sync(at, r, in_flight);
    pacer.answered(seq, at, true);
    pacer.on_success(at, false);
    (pacer, seq + 1, at)
}

/// A quota without a stated window, read as windows of the length a
/// precise hint measured (`window.rs`), whose next window opens with part
/// of the last burst still held: a sliding log, paced by our own sends
/// from then on. Held to the window's end instead, the units the last
/// burst's later sends give back a moment later were lost: on the demo
/// server's sliding log with `X-RateLimit-*` (c=1), 5.1–6.1 s for 100
/// successes in 5 of 13 runs, 4.0–4.1 s in 22 of 22 with the rule.
#[test]
fn a_window_without_a_stated_rate_opening_short_is_a_sliding_log() {
    let t0 = Instant::now();
    // The probe's precise hint ends as the burst's first send leaves the
    // log, well before the reset: the log's length.
    let (mut log, mut seq, at) = third_window_opened(t0, ms(883), 0);
    assert!(log.window.is_sliding());
    for n in (0..4).rev() {
        send_precise(&mut log, &mut seq, at, n, 1900);
    }
    // Spent: the next unit is back as the last burst's sixth send leaves
    // the log, not at the window's end.
    let wait = log.admit(at, None).expect_err("spent");
    assert!(wait < ms(10), "{wait:?}");
    // A whole-second hint measures nothing finer than whole seconds: not
    // read as a log at its opening (a counter's windows open short too;
    // probed once more instead, `refill.rs`).
    let (rounded, ..) = third_window_opened(t0, Duration::from_secs(1), 0);
    assert!(!rounded.window.is_sliding());
    assert_eq!(rounded.refill, Refill::Unknown);
}

/// A window probed once more (`refill.rs`) that gives units back while
/// we alone spend it, more than a counter's weight decays in the time:
/// the last burst leaving a sliding log (its opening short by a few
/// milliseconds). Read as a log of the measured length from then on, not
/// probed: `must_show`'s sliding log with `X-RateLimit-*` and `Retry-After`
/// seconds, c=1, refused the probe (the log full again) and held the next
/// window to the hint's end: 102 requests in 4.2–4.3 s in 7 of 24 runs;
/// 101 in 4.1–4.2 s in 25 of 25 with the rule.
#[test]
fn a_window_probed_once_more_giving_units_back_at_once_is_a_sliding_log() {
    let t0 = Instant::now();
    // A window of the length a whole-second `hint` measured; `counts`
    // read `step` apart after the opening, alone unless said.
    let spent_with = |hint: u64, in_flight: u32, step: u64, counts: &[u64]| {
        let hint = Duration::from_secs(hint);
        let (mut pacer, mut seq, mut at) = third_window_opened(t0, hint, in_flight);
        assert_eq!(pacer.window.length(), Some(hint));
        for &n in counts {
            at = send_precise(&mut pacer, &mut seq, at + ms(step) - ms(1), n, 1900);
        }
        pacer
    };
    let is_log = |pacer: &Pacer| {
        assert_eq!(pacer.window.is_sliding(), pacer.refill == Refill::Windowed);
        assert!(pacer.window.is_sliding() || pacer.refill == Refill::Unknown);
        pacer.window.is_sliding()
    };
    // Three sends after the opening's, the count 1 lower: two units back
    // in 3 ms, where a counter of 20 per second (the measured length)
    // gives back 1.06 at most (its decay, and one for the floor).
    assert!(is_log(&spent_with(1, 0, 1, &[4, 3, 3])));
    // One back: the floor of a counter's count may explain it; the probe
    // still decides.
    assert!(!is_log(&spent_with(1, 0, 1, &[4, 3])));
    // The count falls by each send: a counter's.
    assert!(!is_log(&spent_with(1, 0, 1, &[3, 2, 1, 0])));
    // With 3 of our requests in flight at the opening, its count may
    // already hold their units: the same readings show none back.
    assert!(!is_log(&spent_with(1, 3, 1, &[4, 3, 3])));
    // Two back in 90 ms: a counter of 20 per 2 s gives back 1.9 at most,
    // one of 20 per second 2.8.
    assert!(is_log(&spent_with(2, 0, 30, &[4, 3, 3])));
    assert!(!is_log(&spent_with(1, 0, 30, &[4, 3, 3])));
    // One back in no time at all: the floor again.
    let (mut same_instant, seq, at) = third_window_opened(t0, Duration::from_secs(1), 0);
    assert_eq!(same_instant.admit(at, Some(seq)), Ok(()));
    same_instant.sync(at, reading(4, 20, None, Some(ms(1900) + ms(1) / 3)), 0);
    assert!(!is_log(&same_instant));
}

/// As above, with whole-second resets (`RateLimit-Reset: 1`, the demo
/// server's sliding log with `ietf-legacy`): they measure no length, but
/// the probe's precise hint, from the burst's first success, does (the
/// log's length, or part of a clock-aligned window, which never opens
/// short alone). A window that opens short is read as a log of that
/// length. Held to each window's end instead, a window whose first
/// request came just after the last burst's first unit was back opened
/// with a few units, and the rest were lost with the second: 5.0–6.2 s
/// for 100 successes in 5 of 10 runs at c=4, 4.0–4.2 s in 20 of 20 with
/// the rule.
#[test]
fn a_window_opening_short_is_a_sliding_log_whatever_the_reset_s_precision() {
    let t0 = Instant::now();
    let second = Duration::from_secs(1);
    let send = |pacer: &mut Pacer, seq: &mut u64, at: Instant, remaining: u64| {
        assert_eq!(pacer.admit(at, Some(*seq)), Ok(()), "send {seq}");
        let answered = at + ms(1);
        let mut r = reading(remaining, 20, None, Some(second));
        r.seq = Some(*seq);
        pacer.sync(answered, r, 0);
        pacer.answered(*seq, answered, true);
        pacer.on_success(answered, false);
        *seq += 1;
        answered
    };
    // A burst answered from 1 ms, its probe refused at 71 ms with `hint`;
    // the next window opens whole where the hint ended, and the one after
    // opens with `third` units.
    let third_window_opened = |hint: Duration, third: u64| {
        let (mut pacer, mut seq) = (Pacer::default(), 0);
        for n in 0..20 {
            send(&mut pacer, &mut seq, t0 + ms(n), 19 - n);
        }
        let probe = t0 + ms(70);
        assert_eq!(pacer.admit(probe, None), Ok(()));
        pacer.sync(probe + ms(1), reading(0, 20, None, Some(second)), 0);
        pacer.on_throttle(probe + ms(1), Some(Hint::stated(hint)), Duration::ZERO);
        assert_eq!(pacer.refill, Refill::Windowed);
        let next = probe + ms(1) + hint;
        for n in 0..20 {
            send(&mut pacer, &mut seq, next + ms(n), 19 - n);
        }
        assert!(!pacer.window.is_sliding());
        // Held to the window's end: its first reading's reset.
        let opening = next + ms(1) + second;
        assert!(pacer.admit(opening - ms(1), None).is_err());
        let at = send(&mut pacer, &mut seq, opening, third);
        (pacer, seq, at)
    };
    // 1.002 s from the burst's first success (1 ms) to the hint's end.
    let (mut log, mut seq, at) = third_window_opened(ms(932), 3);
    assert!(log.window.is_sliding());
    assert_eq!(log.window_of_limit(), Some((20.0, ms(1002))));
    for n in (0..3).rev() {
        send(&mut log, &mut seq, at, n);
    }
    // Spent: the next unit is back as the last burst's fifth send is a
    // log's length old (answered 5 ms after the window opened), not at
    // the window's end a second later.
    let wait = log.admit(at, None).expect_err("spent");
    assert!(wait <= ms(10), "{wait:?}");
    // Opening whole: a fixed window, held to its end.
    let (mut fixed, ..) = third_window_opened(ms(932), 19);
    assert!(!fixed.window.is_sliding());
    for _ in 0..19 {
        assert_eq!(fixed.admit(at, None), Ok(()));
    }
    assert!(fixed.admit(at, None).expect_err("spent") > ms(900));
    // A whole-second hint measures nothing: not read as a log (a counter's
    // windows open short too; `refill.rs` probes them once more).
    let (rounded, ..) = third_window_opened(second, 3);
    assert!(!rounded.window.is_sliding());
}

/// A refused probe whose precise hint ends more than a rounding second
/// before the end a whole-second reset names: no fixed window ends there
/// (the demo server's sliding window counter with `RateLimit-Reset`, whose
/// reset names its two-window end). The next request goes at the hint's
/// end, and its reading opens the next window (here spent: probed again).
/// Held to the reset, 100 successes took 8.0 s, as the plain client;
/// 4.6–4.9 s in 9 of 10 runs (c=1 and c=4) at the hint's end.
#[test]
fn a_precise_hint_well_before_a_whole_second_reset_ends_the_window() {
    let t0 = Instant::now();
    let r = |n| reading(n, 20, None, Some(Duration::from_secs(2)));
    let refused_with = |hint: Duration| burst_then_refused(t0, (2000, 2000), 100, hint);
    let hint_end = t0 + ms(101 + 846);
    let mut counter = refused_with(ms(846));
    assert_eq!(counter.admit(hint_end, None), Ok(()));
    counter.sync(hint_end + ms(1), r(0), 0);
    counter.on_success(hint_end + ms(1), false);
    assert_eq!(counter.refill, Refill::Unknown);
    // A hint within a second of the reset may be a fixed window's end
    // (its reset rounded up): the window is held to the reset.
    let mut window = refused_with(ms(1846));
    assert!(window.admit(hint_end, None).is_err());
    // A whole-second hint as long as its own response's reset is rounded
    // as the reset is: the window is held to the reset.
    let mut rounded = refused_with(Duration::from_secs(2));
    assert!(rounded.admit(t0 + ms(1101), None).is_err());
}

/// A refusal's whole-second hint a second or more shorter than the reset
/// read in the same response ends the window at the hint's end: both are
/// rounded up from one instant, so a fixed window's are equal (less
/// than a second apart: `window.rs`'s test). `must_show`'s sliding window
/// counter with `RateLimit-Reset` and `Retry-After` seconds: each window
/// held to the reset (two seconds), 8.0 s for 100 successes before.
#[test]
fn a_whole_second_hint_shorter_than_its_own_reset_ends_the_window() {
    let t0 = Instant::now();
    let r = |n, reset_ms| reading(n, 20, None, Some(ms(reset_ms)));
    let refused_with =
        |own_reset: u64| burst_then_refused(t0, (2000, own_reset), 100, Duration::from_secs(1));
    let hint_end = t0 + ms(1101);
    // Hint 1, reset 2: a counter's. The request sent at the hint's end
    // opens the next window; it opens short, so it is probed once more.
    let mut counter = refused_with(2000);
    assert!(counter.admit(hint_end - ms(1), None).is_err());
    assert_eq!(counter.admit(hint_end, None), Ok(()));
    counter.sync(hint_end + ms(1), r(2, 2000), 0);
    counter.on_success(hint_end + ms(1), false);
    assert_eq!(counter.refill, Refill::Unknown);
    // The request sent at the hint's end refused (hints rounded down): it
    // opened the window spent, so the quota is probed once more; the probe
    // refused likewise no longer ends the window at its hint.
    let mut rounding_down = refused_with(2000);
    assert_eq!(rounding_down.admit(hint_end, None), Ok(()));
    rounding_down.sync(hint_end + ms(1), r(0, 2000), 0);
    rounding_down.on_throttle(
        hint_end + ms(1),
        Some(Hint::stated(Duration::from_secs(1))),
        Duration::ZERO,
    );
    let probe = t0 + ms(1202);
    assert_eq!(rounding_down.admit(probe, None), Ok(()));
    rounding_down.sync(probe, r(0, 2000), 0);
    rounding_down.on_throttle(
        probe,
        Some(Hint::stated(Duration::from_secs(1))),
        Duration::ZERO,
    );
    assert_eq!(rounding_down.refill, Refill::Windowed);
    assert!(rounding_down.admit(probe + ms(1000), None).is_err());
}

/// A quota without a stated window (20 units, an epoch reset 1.92 s away)
/// spent by a burst at `t0`; its probe, 96 ms later, refused with `hint`.
fn burst_then_probe_refused(t0: Instant, hint: Duration) -> Pacer {
    burst_then_refused(t0, (1920, 1823), 96, hint)
}

/// A quota without a stated window (20 units) spent by a burst at `t0`
/// whose readings say `resets.0` ms; its probe, `probe_ms` later, refused
/// with `hint`, its response saying `resets.1` ms.
fn burst_then_refused(t0: Instant, resets: (u64, u64), probe_ms: u64, hint: Duration) -> Pacer {
    let r = |n, reset_ms| reading(n, 20, None, Some(ms(reset_ms)));
    let mut pacer = Pacer::default();
    for n in (0..20).rev() {
        assert_eq!(pacer.admit(t0, None), Ok(()));
        pacer.sync(t0, r(n, resets.0), 0);
        pacer.on_success(t0, false);
    }
    assert_eq!(pacer.admit(t0 + ms(probe_ms), None), Ok(()));
    pacer.sync(t0 + ms(probe_ms + 1), r(0, resets.1), 0);
    pacer.on_throttle(
        t0 + ms(probe_ms + 1),
        Some(Hint::stated(hint)),
        Duration::ZERO,
    );
    assert_eq!(pacer.refill, Refill::Windowed);
    pacer
}

/// A quota read as fixed windows after its refused probe, whose next
/// window opens with one unit back: probed once more, a unit (1.9 s / 20)
/// after that reading. The demo server's sliding window counter with
/// `X-RateLimit-*`: its probe is refused when the counter's window has not
/// turned since the burst; read as windows, its bursts were refused but
/// one in two windows (10 units a second): 4.5–8.9 s for 100 successes
/// (c=1 and c=4, 19 runs), 4.5–5.1 s once probed again (30 runs).
#[test]
fn a_window_opening_short_after_a_refused_probe_is_probed_once_more() {
    let t0 = Instant::now();
    let r = |n, reset_ms| reading(n, 20, None, Some(ms(reset_ms)));
    // A burst, its probe refused with a precise hint 856 ms away; the
    // retry then finds one unit back.
    let refused_then_short = |probe_back: Option<u64>| {
        let mut pacer = burst_then_probe_refused(t0, ms(856));
        let retry = t0 + ms(953);
        pacer.sync(retry, r(0, 1900), 0);
        pacer.on_success(retry, false);
        assert_eq!(pacer.refill, Refill::Unknown);
        assert_eq!(pacer.admit(retry, None), Err(ms(95)));
        let probe = retry + ms(95);
        assert_eq!(pacer.admit(probe, None), Ok(()));
        assert!(pacer.admit(probe, None).is_err());
        match probe_back {
            Some(n) => {
                pacer.sync(probe + ms(1), r(n, 1804), 0);
                pacer.on_success(probe + ms(1), false);
            }
            None => {
                pacer.sync(probe + ms(1), r(0, 1804), 0);
                pacer.on_throttle(probe + ms(1), Some(Hint::stated(ms(40))), Duration::ZERO);
            }
        }
        pacer
    };
    // Back at about the linear rate: continuous refills, paced at what a
    // counter sustains (19 of 20 per window) of the rate probed.
    let counter = refused_then_short(Some(0));
    assert_eq!(counter.refill, Refill::Continuous { measured: false });
    let rate = counter.rate().unwrap_or_default();
    let probed = 20.0 / 1.9;
    assert!((rate - probed * 0.95).abs() < 1e-9, "{rate}");
    // A refusal then is the pace's (no probe is left to correct a wrong
    // verdict): the rate is halved, not read as windows for good.
    let mut paced = refused_then_short(Some(0));
    paced.on_throttle(t0 + ms(1150), Some(Hint::stated(ms(46))), Duration::ZERO);
    assert_eq!(paced.refill, Refill::Continuous { measured: false });
    let halved = paced.rate().unwrap_or_default();
    assert!((halved - rate / 2.0).abs() < 1e-9, "{halved}");
    // Half the limit back at once (a sliding log's burst leaving it): windows.
    let log = refused_then_short(Some(10));
    assert_eq!(log.refill, Refill::Windowed);
    // Refused again (others spent it): windows for good, no third probe.
    let mut shared = refused_then_short(None);
    assert_eq!(shared.refill, Refill::Windowed);
    let next = t0 + ms(3000);
    shared.sync(next, r(0, 1900), 0);
    assert_eq!(shared.refill, Refill::Windowed);
}

/// The same with a whole-second hint, which measures no log (the log rule
/// needs a precise one): a window opening short of what a fixed window
/// holds at its start (the limit less the request its reading answers) is
/// probed once more, however many units it holds. `must_show`'s sliding
/// window counter with `X-RateLimit-*` and `Retry-After` seconds opens
/// each window with the units its previous one's weight has let go by
/// then (about `limit · φ`, φ its phase in the clock's second): read as
/// windows, 100 successes took 5.1–8.2 s (c=1 and c=4, 18 runs);
/// probed, 4.8–5.0 s (8 runs), the floor 4.3–5.0 s.
#[test]
fn a_window_opening_short_after_a_whole_second_refusal_is_probed_once_more() {
    let t0 = Instant::now();
    let r = |n, reset_ms| reading(n, 20, None, Some(ms(reset_ms)));
    let opened_with = |hint: Duration, back: u64| {
        let mut pacer = burst_then_probe_refused(t0, hint);
        // At the reset's end (the whole-second hint's length ended sooner).
        let retry = t0 + ms(1920);
        assert_eq!(pacer.admit(retry, None), Ok(()));
        pacer.sync(retry + ms(1), r(back, 1919), 0);
        pacer.on_success(retry + ms(1), false);
        pacer.refill
    };
    let secs = Duration::from_secs(1);
    assert_eq!(opened_with(secs, 8), Refill::Unknown);
    assert_eq!(opened_with(secs, 18), Refill::Unknown);
    // Whole but for the request its reading answers: a fixed window's start.
    assert_eq!(opened_with(secs, 19), Refill::Windowed);
    // A precise hint leaves a window opening short to the log rule (here
    // it measured no length: the refusal's hint ends within `OFF_GRID` of
    // the reset).
    assert_eq!(opened_with(ms(1726), 8), Refill::Windowed);
}

/// A quota without a stated window probed once more after a whole-second
/// refusal, its probe answered: a counter, as far as its readings show.
/// Its `remaining` is all it holds, as a stated counter's is
/// (`a_counter_refused_with_whole_seconds_reads_remaining_as_all_it_holds`):
/// read as up to `R + 1`, the unit after its last one was refused now and
/// then, a whole second each (`must_show`'s counter with `RateLimit-Reset`
/// and `Retry-After` seconds, c=1: 103 sent in 5.8 s in 1 run of 12; 101
/// in 4.86–5.11 s in 12 runs after). With precise hints a refusal costs
/// little: `R + 1`, as for any quota.
#[test]
fn a_counter_probed_once_more_after_a_whole_second_refusal_reads_remaining_as_all_it_holds() {
    let t0 = Instant::now();
    let r = |n, reset_ms| reading(n, 20, None, Some(ms(reset_ms)));
    let probed_again = |hint: Duration| {
        let mut pacer = burst_then_probe_refused(t0, hint);
        let retry = t0 + ms(1920);
        assert_eq!(pacer.admit(retry, None), Ok(()));
        // The window opens spent: probed once more, whatever the hint.
        pacer.sync(retry + ms(1), r(0, 1919), 0);
        pacer.on_success(retry + ms(1), false);
        assert_eq!(pacer.refill, Refill::Unknown);
        let mut at = retry + ms(1);
        while let Err(wait) = pacer.admit(at, None) {
            at += wait;
        }
        pacer.sync(at + ms(1), r(0, 1800), 0);
        pacer.on_success(at + ms(1), false);
        assert_eq!(pacer.refill, Refill::Continuous { measured: false });
        pacer
    };
    let later = t0 + ms(5000);
    let mut coarse = probed_again(Duration::from_secs(1));
    coarse.sync(later, r(3, 1000), 0);
    assert_eq!(coarse.available(later), Some(3.0));
    let mut precise = probed_again(ms(856));
    precise.sync(later, r(3, 1000), 0);
    assert!(precise.available(later).is_some_and(|e| e > 3.9 && e < 4.0));
}

/// A probe refused with a whole-second hint teaches a rate of one unit per
/// hint; past the window's end a unit is back all the same, and the reading
/// of the request it lets go says how many more (read at that rate, on
/// `must_show`'s clock-aligned window with `X-RateLimit-*`: a second's wait
/// after every window, 4.1 s for 100 successes against a floor of 3.4 s).
#[test]
fn a_window_without_a_stated_rate_gives_a_unit_back_at_its_end() {
    let mut pacer = Pacer::default();
    let t0 = Instant::now();
    let r = |n, reset_ms| reading(n, 20, None, Some(ms(reset_ms)));
    pacer.sync(t0, r(0, 1000), 0);
    assert_eq!(pacer.admit(t0 + ms(50), None), Ok(()));
    pacer.sync(t0 + ms(51), r(0, 949), 0);
    pacer.on_throttle(
        t0 + ms(51),
        Some(Hint::stated(Duration::from_secs(1))),
        Duration::ZERO,
    );
    assert!(pacer.rate().is_some());
    let end = t0 + ms(1000);
    assert_eq!(pacer.admit(end - ms(1), None), Err(ms(1)));
    // One unit, not the window's limit: a counter's window opens short.
    assert_eq!(pacer.admit(end, None), Ok(()));
    assert!(pacer.admit(end, None).is_err());
    // Its reading says the window opened whole: the rest go at once.
    pacer.sync(end + ms(1), r(19, 999), 0);
    pacer.on_success(end + ms(1), false);
    for _ in 0..19 {
        assert_eq!(pacer.admit(end + ms(1), None), Ok(()));
    }
    assert!(pacer.admit(end + ms(1), None).is_err());
}

#[test]
fn a_reset_far_beyond_the_rate_is_a_fixed_window() {
    let mut pacer = Pacer::default();
    let t0 = Instant::now();
    // 100 per 60 s, nothing left, reset in 30 s: the rate alone would say
    // 0.6 s, but a fixed window gives nothing back before the reset.
    pacer.sync(
        t0,
        reading(
            0,
            100,
            Some(Duration::from_secs(60)),
            Some(Duration::from_secs(30)),
        ),
        0,
    );
    assert_eq!(pacer.admit(t0, None), Err(Duration::from_secs(30)));
    // A token bucket whose reset is "time until full" (1 s at 20/s) is not:
    // the reserve of 2 and one unit are back in 150 ms.
    let mut bucket = Pacer::default();
    bucket.sync(
        t0,
        reading(
            0,
            20,
            Some(Duration::from_secs(1)),
            Some(Duration::from_secs(1)),
        ),
        0,
    );
    assert_eq!(bucket.admit(t0, None), Err(ms(151)));
    // The same "full again" read from an epoch reset, rounded up to the
    // next second (1.9 s): still a bucket, not a window that holds
    // everything for 1.9 s.
    let mut epoch = Pacer::default();
    epoch.sync(
        t0,
        reading(0, 20, Some(Duration::from_secs(1)), Some(ms(1900))),
        0,
    );
    assert_eq!(epoch.admit(t0, None), Err(ms(151)));
    // 5 per second (20 per 4 s): full again in 4.4 s (the reserve of 2
    // included), the epoch reset says 4.9 s: a bucket, its next unit
    // (3 units, the reserve's first) 604 ms away.
    let mut slow = Pacer::default();
    slow.sync(
        t0,
        reading(0, 20, Some(Duration::from_secs(4)), Some(ms(4900))),
        0,
    );
    assert_eq!(slow.admit(t0, None), Err(ms(604)));
}

#[test]
fn refusals_teach_the_rate_then_a_refused_cycle_trickles() {
    let mut pacer = Pacer::default();
    let t0 = Instant::now();
    // 20 successes, then a refusal saying "full again in 1 s".
    for _ in 0..20 {
        pacer.on_success(t0, false);
    }
    pacer.on_throttle(
        t0,
        Some(Hint::stated(Duration::from_secs(1))),
        Duration::ZERO,
    );
    assert_eq!(pacer.rate(), Some(20.0));
    // After the pause the burst is back, then 20/s.
    let resume = t0 + Duration::from_secs(1);
    for _ in 0..20 {
        assert_eq!(pacer.admit(resume, None), Ok(()));
    }
    assert_eq!(pacer.admit(resume, None), Err(ms(51)));
    // The success after the wait confirmed a window of 20 per 1 s; refused
    // 5 successes into the next burst, the burst does not come back whole:
    // one unit at a time at 19/s (the cycle less one unit), no bursts.
    let t1 = resume + ms(100);
    for _ in 0..5 {
        pacer.on_success(resume, false);
    }
    pacer.on_throttle(t1, Some(Hint::stated(ms(400))), Duration::ZERO);
    assert_eq!(pacer.rate(), Some(19.0));
    assert_eq!(pacer.kind(), QuotaKind::SlidingCounter, "it trickles");
    let back = t1 + ms(400);
    assert_eq!(pacer.admit(back, None), Ok(()));
    assert!(pacer.admit(back, None).is_err(), "a burst of one");
    // Refused again: half that, grown back by a burst's share per success,
    // but no further than the refusals measured: 17 successes between hint
    // ends 1.1 s apart (a cycle at least), each known to the 100 ms grain,
    // is 17/s at most.
    for _ in 0..12 {
        pacer.on_success(back, false);
    }
    pacer.on_throttle(back + ms(500), Some(Hint::stated(ms(100))), Duration::ZERO);
    assert_eq!(pacer.rate(), Some(9.5));
    pacer.on_success(back + ms(800), false);
    assert_eq!(pacer.rate(), Some(9.5 + 17.0 / 20.0));
    for _ in 0..20 {
        pacer.on_success(back + ms(800), false);
    }
    assert_eq!(pacer.rate(), Some(17.0), "no further than measured");
    // Refused all along: halved down to one unit per cycle, no further.
    for i in 0..10 {
        pacer.on_throttle(
            back + ms(300 + i),
            Some(Hint::stated(ms(100))),
            Duration::ZERO,
        );
    }
    assert_eq!(pacer.rate(), Some(1.0));
}

#[test]
fn a_refusal_before_any_refill_is_seen_means_fixed_windows() {
    let mut pacer = Pacer::default();
    let t0 = Instant::now();
    let r = |n, reset_ms| reading(n, 20, None, Some(ms(reset_ms)));
    pacer.sync(t0, r(0, 3000), 0);
    assert_eq!(pacer.admit(t0 + ms(150), None), Ok(()));
    // A success that may have been an earlier request's, then a refusal.
    pacer.sync(t0 + ms(151), r(0, 2849), 0);
    pacer.on_success(t0 + ms(151), false);
    assert_eq!(pacer.rate(), Some(20.0 / 3.0));
    pacer.sync(t0 + ms(300), r(0, 2700), 0);
    pacer.on_throttle(t0 + ms(300), None, Duration::ZERO);
    assert_eq!(pacer.rate(), None);
    assert_eq!(pacer.admit(t0 + ms(400), None), Err(ms(2600)));
}

/// `remaining` of a policy of 20 per second.
fn r(remaining: u64) -> QuotaReading {
    reading(remaining, 20, Some(Duration::from_secs(1)), None)
}

#[test]
fn the_last_units_are_left_for_newcomers_until_we_know_we_are_alone() {
    let mut pacer = Pacer::default();
    let t0 = Instant::now();
    pacer.sync(t0, r(20), 0);
    // 18 go at once; the last 2 (a tenth of 20) are left.
    for _ in 0..18 {
        assert_eq!(pacer.admit(t0, None), Ok(()));
    }
    assert!(pacer.admit(t0, None).is_err());
    // `remaining` fell by exactly what we spent: nobody else is seen…
    pacer.sync(t0 + ms(1), r(2), 0);
    // …but for less than a second the reserve stays.
    pacer.sync(t0 + ms(500), r(2), 0);
    assert!(pacer.admit(t0 + ms(500), None).is_err());
    // After a second alone it is ours.
    pacer.sync(t0 + ms(1001), r(2), 0);
    assert_eq!(pacer.admit(t0 + ms(1001), None), Ok(()));
    assert_eq!(pacer.admit(t0 + ms(1001), None), Ok(()));
    assert!(pacer.admit(t0 + ms(1001), None).is_err());
}

#[test]
fn others_spending_restarts_the_second_alone() {
    let mut pacer = Pacer::default();
    let t0 = Instant::now();
    pacer.sync(t0, r(20), 0);
    assert_eq!(pacer.admit(t0, None), Ok(()));
    pacer.sync(t0 + ms(1), r(19), 0); // alone so far
    assert_eq!(pacer.admit(t0 + ms(1), None), Ok(()));
    pacer.sync(t0 + ms(900), r(6), 0); // others spent 12
    pacer.sync(t0 + ms(1100), r(6), 0); // nobody else since
    assert_eq!(pacer.reserve(t0 + ms(1500)), 2.0);
    assert_eq!(pacer.reserve(t0 + ms(2100)), 0.0);
    // No policy rate (a quota that may count in fixed windows): no reserve.
    let mut windowed = Pacer::default();
    windowed.sync(t0, reading(20, 20, None, Some(Duration::from_secs(60))), 0);
    assert_eq!(windowed.reserve(t0), 0.0);
}

#[test]
fn a_quota_filling_up_again_doubles_a_cut_share() {
    let mut pacer = Pacer::default();
    let t0 = Instant::now();
    pacer.sync(t0, r(0), 0);
    pacer.on_throttle(t0, None, Duration::ZERO); // others share it: a tenth of 20/s
    let rate = |p: &Pacer| p.rate().unwrap_or_default();
    assert!((rate(&pacer) - 2.0).abs() < 1e-9, "{}", rate(&pacer));
    // Rising, but under a quarter of the limit: the others may be pausing.
    pacer.sync(t0 + ms(500), r(4), 0);
    assert!((rate(&pacer) - 2.0).abs() < 1e-9, "{}", rate(&pacer));
    // Rising past a quarter: the others slowed down or left.
    pacer.sync(t0 + ms(900), r(12), 0);
    assert!((rate(&pacer) - 4.0).abs() < 1e-9, "{}", rate(&pacer));
    // No longer rising: no more.
    pacer.sync(t0 + ms(1000), r(12), 0);
    assert!((rate(&pacer) - 4.0).abs() < 1e-9, "{}", rate(&pacer));
}

#[test]
fn the_probe_waits_for_the_units_our_requests_in_flight_will_take() {
    let mut pacer = Pacer::default();
    let t0 = Instant::now();
    // Empty, reset in 2 s for 20 units (one per 100 ms), two of ours in flight.
    pacer.sync(t0, reading(0, 20, None, Some(ms(2000))), 2);
    pacer.on_success(t0, false);
    // The first two units back are theirs: the probe goes with the third.
    assert_eq!(pacer.admit(t0, None), Err(ms(300)));
    assert_eq!(pacer.admit(t0 + ms(299), None), Err(ms(1)));
    assert_eq!(pacer.admit(t0 + ms(300), None), Ok(()));
}

/// A scope remembers its sends when a policy is stated (a sliding log may
/// need them) or once a refusal taught a burst; a send the server refused
/// holds no unit and is forgotten.
#[test]
fn sends_are_remembered_with_a_policy_or_a_learned_burst() {
    let t0 = Instant::now();
    let mut quota = Pacer::default();
    quota.sync(t0, r(19), 0);
    for i in 0..5 {
        assert_eq!(quota.admit(t0 + Duration::from_secs(i), Some(i)), Ok(()));
    }
    assert_eq!(quota.cycle.remembered(), 5);
    quota.answered(4, t0 + Duration::from_secs(4), false);
    assert_eq!(quota.cycle.remembered(), 4, "the refused one is forgotten");
    let mut bare = Pacer::default();
    for i in 0..3 {
        assert_eq!(bare.admit(t0 + ms(i), None), Ok(()));
        bare.on_success(t0 + ms(i), false);
    }
    assert_eq!(bare.cycle.remembered(), 0, "nothing refused yet");
    bare.on_throttle(t0 + ms(3), None, Duration::ZERO);
    assert_eq!(bare.admit(t0 + ms(1003), None), Ok(()));
    assert_eq!(bare.cycle.remembered(), 1);
}

/// A burst of 8 ended by a bare refusal, and the success of the one send
/// after the pause (send 8): the pacer, and when that success came.
fn back_after_a_bare_refusal() -> (Pacer, Instant) {
    let t0 = Instant::now();
    let mut pacer = Pacer::default();
    for seq in 0..8 {
        assert_eq!(pacer.admit(t0, Some(seq)), Ok(()));
        pacer.answered(seq, t0 + ms(1), true);
        pacer.on_success(t0 + ms(1), false);
    }
    pacer.on_throttle(t0 + ms(2), None, Duration::ZERO);
    let back = t0 + ms(1002);
    assert_eq!(pacer.admit(back, Some(8)), Ok(()));
    pacer.answered(8, back + ms(1), true);
    pacer.on_success(back + ms(1), false);
    (pacer, back + ms(1))
}

/// A burst a bare refusal ended comes back as the server shows it: the
/// success after the pause lets one more send go at a time, each success
/// after it two, up to the burst. A bucket refilling a unit at a time then
/// refuses one send, not every one in flight; a window shows itself in a
/// few round trips (the doubling reaches a burst of B in log2(B)).
#[test]
fn a_burst_a_bare_refusal_ended_is_shown_back_not_assumed() {
    let (mut pacer, t) = back_after_a_bare_refusal();
    let success = |pacer: &mut Pacer, seq, at| {
        pacer.answered(seq, at, true);
        pacer.on_success(at, false);
    };
    assert_eq!(pacer.admit(t, Some(9)), Ok(()));
    assert!(pacer.admit(t, Some(10)).is_err(), "one at a time");
    success(&mut pacer, 9, t + ms(1));
    let t = t + ms(1);
    assert_eq!(pacer.admit(t, Some(10)), Ok(()));
    assert_eq!(pacer.admit(t, Some(11)), Ok(()));
    assert!(pacer.admit(t, Some(12)).is_err(), "two after a success");
}

/// A send of a burst's return that ends with no verdict on the quota (a
/// server error, a transport error, cancelled) is answered for the return:
/// waiting for it would hold every later send for good.
#[test]
fn a_send_that_ends_without_a_verdict_holds_no_return() {
    let (mut pacer, t) = back_after_a_bare_refusal();
    // Send 9 fails (a 500), send 10 is cancelled: neither is awaited.
    assert_eq!(pacer.admit(t, Some(9)), Ok(()));
    pacer.ended(9, Some(t + ms(1)));
    assert_eq!(pacer.admit(t + ms(1), Some(10)), Ok(()));
    pacer.ended(10, None);
    assert_eq!(pacer.admit(t + ms(1), Some(11)), Ok(()));
}

/// A sliding window counter (the current and the previous window, the
/// previous weighted by its overlap) resets when the current window's count
/// has left the pair: up to two windows away. No fixed window's end is
/// further than one: neither the barrier of a fixed window nor, once a
/// lone client is refused, a window learned from it, but the counter's
/// lasting rate, a unit short of the limit per window.
#[test]
fn a_reset_beyond_one_window_is_no_fixed_window() {
    let t0 = Instant::now();
    let counter = |remaining| {
        reading(
            remaining,
            100,
            Some(Duration::from_secs(10)),
            Some(Duration::from_secs(15)),
        )
    };
    // 100 per 10 s, nothing left, reset in 15 s: paced at the rate (the
    // reserve of 2 and one unit at 10/s, 302 ms), not held for 15 s.
    let mut pacer = Pacer::default();
    pacer.sync(t0, counter(0), 0);
    assert_eq!(pacer.admit(t0, None), Err(ms(302)));
    // The same quota with a reset within its window is a fixed window's
    // (and 10 s, the window itself, is full again at the rate: a bucket's).
    for reset in [Duration::from_secs(5), Duration::from_secs(8)] {
        let mut fixed = Pacer::default();
        fixed.sync(
            t0,
            reading(0, 100, Some(Duration::from_secs(10)), Some(reset)),
            0,
        );
        assert_eq!(fixed.admit(t0, None), Err(reset), "{reset:?}");
    }
    // A fractional window's resets are rounded up: 1.5 s windows end 2 s
    // away at most.
    let mut short = Pacer::default();
    short.sync(
        t0,
        reading(0, 30, Some(ms(1500)), Some(Duration::from_secs(2))),
        0,
    );
    assert!(short.within_a_window(Duration::from_secs(2)));
    assert!(!short.within_a_window(Duration::from_secs(2) + ms(1)));
    // Refused after drawing it down alone (as `first_burst_refused`):
    // with the counter's reset, our own pace, not a window.
    let refused_alone = |reset| {
        let mut pacer = Pacer::default();
        burst_then_refusal(&mut pacer, t0, reset, ms(650));
        pacer
    };
    let counter = refused_alone(Duration::from_secs(2));
    assert!(!counter.window.is_known());
    // Paced at the 19 per window a counter sustains (its share untouched:
    // no others), not cut as if others spent it.
    assert_eq!(counter.rate(), Some(19.0));
    assert_eq!(counter.kind(), QuotaKind::SlidingCounter);
    // Shared with others (a refusal said so): our share of that.
    let mut shared = refused_alone(Duration::from_secs(2));
    shared.sharing.on_refusal();
    let share = shared.sharing.share();
    assert!(share < 1.0);
    assert_eq!(shared.rate(), Some(20.0 * share * 19.0 / 20.0));
    // A fixed window's reset, refused alike, is learned as one, at the
    // policy rate.
    let window = refused_alone(Duration::from_secs(1));
    assert!(window.window.is_known());
    assert_eq!(window.rate(), Some(20.0));
    assert_eq!(window.kind(), QuotaKind::FixedWindow);
}

/// A sliding window counter's reading: 20 per second, its reset two
/// windows away (its current window holds admissions).
fn counter_1s(remaining: u64) -> QuotaReading {
    reading(
        remaining,
        20,
        Some(Duration::from_secs(1)),
        Some(Duration::from_secs(2)),
    )
}

fn policy_1s(remaining: u64) -> QuotaReading {
    let second = Duration::from_secs(1);
    reading(remaining, 20, Some(second), Some(second))
}

/// The first burst of 20 per second, alone, each send answered at once
/// with what a sliding log would say: 18 at once (2 are left for
/// newcomers), 2 more at the policy rate, then the 21st is refused.
fn first_burst_refused(pacer: &mut Pacer, t0: Instant) {
    burst_then_refusal(pacer, t0, Duration::from_secs(1), ms(650));
    assert!(pacer.window.is_known() && !pacer.window.is_sliding());
}

/// As [`first_burst_refused`], with `reset` in every reading and `hint`
/// in the refusal (at 350 ms).
fn burst_then_refusal(pacer: &mut Pacer, t0: Instant, reset: Duration, hint: Duration) {
    let at = |seq: u64| {
        t0 + if seq < 18 {
            ms(seq)
        } else {
            ms(100 * (seq - 17))
        }
    };
    for seq in 0..20 {
        assert_eq!(pacer.admit(at(seq), Some(seq)), Ok(()), "send {seq}");
        let policy = reading(19 - seq, 20, Some(Duration::from_secs(1)), Some(reset));
        pacer.sync(at(seq), policy, 0);
        pacer.answered(seq, at(seq), true);
        pacer.on_success(at(seq), false);
    }
    assert_eq!(pacer.admit(t0 + ms(350), Some(20)), Ok(()));
    pacer.answered(20, t0 + ms(350), false);
    pacer.on_throttle(t0 + ms(350), Some(Hint::stated(hint)), Duration::ZERO);
}

/// After `first_burst_refused`, the next window's first send (seq 21) at
/// 1001 ms, answered with `remaining`; returns when.
fn next_window_reads(pacer: &mut Pacer, t0: Instant, remaining: u64) -> Instant {
    let at = t0 + ms(1001);
    assert_eq!(pacer.admit(at, Some(21)), Ok(()));
    pacer.sync(at, policy_1s(remaining), 0);
    pacer.answered(21, at, true);
    at
}

/// After [`burst_then_refusal`] with whole-second resets (the readings
/// guarantee the window's end at 1000 ms) and a precise hint ending at
/// 500 ms (a clock-aligned window's boundary): the unit promised then is
/// lent to send 21, the next waits; returns when 21 goes.
fn unit_lent_at_the_hint_s_end(pacer: &mut Pacer, t0: Instant) -> Instant {
    burst_then_refusal(pacer, t0, Duration::from_secs(1), ms(150));
    assert!(pacer.window.is_known());
    assert_eq!(pacer.admit(t0 + ms(400), Some(21)), Err(ms(100)));
    let at = t0 + ms(500);
    assert_eq!(pacer.admit(at, Some(21)), Ok(()));
    assert!(pacer.admit(at, Some(22)).is_err());
    at
}

/// [`unit_lent_at_the_hint_s_end`], then its answer 1 ms later reads
/// `remaining`; returns when.
fn lent_unit_answered(pacer: &mut Pacer, t0: Instant, remaining: u64) -> Instant {
    let answer = unit_lent_at_the_hint_s_end(pacer, t0) + ms(1);
    let reading = QuotaReading {
        seq: Some(21),
        fixed_window: false,
        ..policy_1s(remaining)
    };
    pacer.sync(answer, reading, 0);
    pacer.answered(21, answer, true);
    answer
}

#[test]
fn a_precise_hint_before_the_readings_end_lends_a_unit_that_opens_the_next_window() {
    let t0 = Instant::now();
    let mut pacer = Pacer::default();
    // The next window opens whole: its units go at once, not at 1000 ms.
    let answer = lent_unit_answered(&mut pacer, t0, 19);
    for seq in 22..41 {
        assert_eq!(pacer.admit(answer, Some(seq)), Ok(()), "send {seq}");
    }
    assert!(pacer.admit(answer, Some(41)).is_err());
}

#[test]
fn a_lent_unit_that_opens_no_whole_window_holds_to_the_readings_end_for_good() {
    let t0 = Instant::now();
    let mut pacer = Pacer::default();
    // A bucket's unit (or a count off by one): nothing opened, the mirror
    // holds to the end the readings guarantee.
    let answer = lent_unit_answered(&mut pacer, t0, 1);
    assert_eq!(pacer.admit(answer, Some(22)), Err(ms(499)));
    // A later refusal's precise hint lends nothing.
    pacer.on_throttle(t0 + ms(600), Some(Hint::stated(ms(150))), Duration::ZERO);
    assert!(pacer.admit(t0 + ms(750), Some(22)).is_err());
    // Refused, the lent send refutes lending too.
    let mut refused = Pacer::default();
    let at = unit_lent_at_the_hint_s_end(&mut refused, t0);
    refused.answered(21, at + ms(1), false);
    refused.on_throttle(at + ms(1), Some(Hint::stated(ms(150))), Duration::ZERO);
    assert!(refused.admit(at + ms(151), Some(22)).is_err());
}

#[test]
fn a_precise_hint_within_a_unit_s_time_lends_nothing() {
    let t0 = Instant::now();
    let mut pacer = Pacer::default();
    // 50 ms is one unit at 20 per second: a bucket's next unit.
    burst_then_refusal(&mut pacer, t0, Duration::from_secs(1), ms(50));
    assert!(pacer.admit(t0 + ms(400), Some(21)).is_err());
    let mut longer = Pacer::default();
    burst_then_refusal(&mut longer, t0, Duration::from_secs(1), ms(51));
    assert_eq!(longer.admit(t0 + ms(401), Some(21)), Ok(()));
}

#[test]
fn a_window_opening_short_of_its_limit_is_a_sliding_log() {
    let t0 = Instant::now();
    let mut pacer = Pacer::default();
    first_burst_refused(&mut pacer, t0);
    // After the hint, a fixed window would say 19: 17 means the 2 sends
    // at the policy rate (at 100 and 200 ms) still hold their units.
    let at = next_window_reads(&mut pacer, t0, 17);
    assert!(pacer.window.is_sliding());
    // The 17 reported go at once; the next waits for the 19th send of the
    // burst before (answered at 100 ms) to be a second old, the one after
    // for the 20th.
    for seq in 22..39 {
        assert_eq!(pacer.admit(at, Some(seq)), Ok(()), "send {seq}");
    }
    assert_eq!(pacer.admit(at, Some(39)), Err(ms(99)));
    assert_eq!(pacer.admit(t0 + ms(1100), Some(39)), Ok(()));
    assert_eq!(pacer.admit(t0 + ms(1100), Some(40)), Err(ms(100)));
}

#[test]
fn a_window_opening_full_stays_a_fixed_window() {
    let t0 = Instant::now();
    let mut pacer = Pacer::default();
    first_burst_refused(&mut pacer, t0);
    // The next window opens with the limit less the request answered, or
    // less our other requests in flight too.
    pacer.sync(t0 + ms(1001), policy_1s(19), 0);
    pacer.sync(t0 + ms(1002), policy_1s(16), 3);
    assert!(!pacer.window.is_sliding());
    // One unit shorter than that: a log.
    let mut log = Pacer::default();
    first_burst_refused(&mut log, t0);
    log.sync(t0 + ms(1001), policy_1s(15), 3);
    assert!(log.window.is_sliding());
    // Others once seen spending make a short window theirs, not a log.
    let mut shared = Pacer::default();
    shared.sync(t0, policy_1s(19), 0);
    shared.sync(t0 + ms(1), policy_1s(10), 0);
    shared.window.recognise();
    shared.sync(t0 + ms(1001), policy_1s(12), 0);
    assert!(shared.window.fresh() && !shared.window.is_sliding());
}

/// `ready` says what `admit` would, taking nothing, in every kind of
/// state: the engine wakes waiters on it.
#[test]
fn ready_agrees_with_admit() {
    let t0 = Instant::now();
    let agree = |pacer: &Pacer, at: Instant, expected: bool, case: &str| {
        assert_eq!(pacer.ready(at), expected, "{case}: ready");
        assert_eq!(
            pacer.clone().admit(at, None).is_ok(),
            expected,
            "{case}: admit"
        );
    };
    agree(&Pacer::default(), t0, true, "nothing known");
    // A policy rate: a unit now, none after spending it, one 50 ms on.
    let mut policy = Pacer::default();
    policy.sync(t0, reading(3, 20, Some(Duration::from_secs(1)), None), 0);
    agree(&policy, t0, true, "policy, a unit left");
    let mut spent = Pacer::default();
    spent.sync(t0, reading(0, 20, Some(Duration::from_secs(1)), None), 0);
    agree(&spent, t0, false, "policy, spent");
    agree(&spent, t0 + ms(140), false, "policy, 0.8 unit back");
    agree(&spent, t0 + ms(151), true, "policy, a unit back");
    // No rate: spent until the reset (not probed this far), whole after.
    let mut no_rate = Pacer::default();
    no_rate.sync(t0, reading(0, 3, None, Some(Duration::from_secs(60))), 0);
    agree(&no_rate, t0 + ms(500), false, "no rate, before the reset");
    agree(
        &no_rate,
        t0 + Duration::from_secs(60),
        true,
        "no rate, at the reset",
    );
    let mut left = Pacer::default();
    left.sync(t0, reading(1, 3, None, Some(Duration::from_secs(60))), 0);
    agree(&left, t0, true, "no rate, a unit left");
    // Spent, and nothing says when it comes back: send, the server says.
    let mut unknown = Pacer::default();
    let bare = QuotaReading {
        remaining: Some(0),
        ..QuotaReading::default()
    };
    unknown.sync(t0, bare, 0);
    agree(&unknown, t0, true, "no rate, no reset");
    // A sliding log: the units a reading reports, then the cycle's rule.
    let mut log = Pacer::default();
    first_burst_refused(&mut log, t0);
    let at = next_window_reads(&mut log, t0, 2);
    assert!(log.window.is_sliding());
    agree(&log, at, true, "sliding, 2 reported");
    for seq in 22..24 {
        assert_eq!(log.admit(at, Some(seq)), Ok(()));
    }
    agree(&log, at, false, "sliding, none reported, the cycle full");
}

/// A refusal of a quota without a window that the mirror had spent
/// (our own requests in flight took the last units) teaches no rate until
/// a probe says how it refills; one while units were left (another limit)
/// teaches it at once.
#[test]
fn a_refusal_of_a_spent_unprobed_quota_waits_for_the_probe() {
    let t0 = Instant::now();
    let r = |n| reading(n, 20, None, Some(ms(1500)));
    let burst = |pacer: &mut Pacer, last: u64| {
        for n in (last..20).rev() {
            assert_eq!(pacer.admit(t0, None), Ok(()));
            pacer.sync(t0, r(n), 0);
            pacer.on_success(t0, false);
        }
    };
    let mut spent = Pacer::default();
    burst(&mut spent, 0);
    spent.on_throttle(t0 + ms(1), Some(Hint::stated(ms(999))), Duration::ZERO);
    assert_eq!(spent.rate(), None);
    // Its probe refused: a window, and the refusal's rate is used.
    spent.refill = Refill::Windowed;
    assert!(spent.rate().is_some());
    let mut other_limit = Pacer::default();
    burst(&mut other_limit, 10);
    other_limit.on_throttle(t0 + ms(1), Some(Hint::stated(ms(999))), Duration::ZERO);
    assert!(other_limit.rate().is_some());
}

/// A windowed quota (a refused probe) read out of the server's order: a
/// higher count for the same precise end is older news only while others
/// of our requests are in flight; alone, it is units coming back (a
/// sliding log read as windows).
#[test]
fn a_higher_count_is_older_news_only_with_others_in_flight() {
    let t0 = Instant::now();
    let end = |at: u64| Some(ms(900 - at) + Duration::from_micros(300));
    let spendable = |others| {
        let mut pacer = Pacer {
            refill: Refill::Windowed,
            ..Pacer::default()
        };
        pacer.sync(t0, reading(2, 20, None, end(0)), 0);
        pacer.sync(t0 + ms(1), reading(5, 20, None, end(1)), others);
        (0..10)
            .take_while(|_| pacer.admit(t0 + ms(2), None).is_ok())
            .count()
    };
    // Three in flight: the 5 was counted before the 2; what the mirror
    // held (2) stands.
    assert_eq!(spendable(3), 2);
    // Alone: 5 are back.
    assert_eq!(spendable(0), 5);
}

/// A counter (its reset beyond one window) refused with whole-second
/// hints: `remaining` is all it holds, of which only our share is claimed.
/// With a precise hint, up to `R + 1` (a fraction of the next unit) as for
/// a bucket.
#[test]
fn a_counter_refused_with_whole_seconds_reads_remaining_as_all_it_holds() {
    let t0 = Instant::now();
    let refused_alone = |hint: Duration| {
        let mut pacer = Pacer::default();
        burst_then_refusal(&mut pacer, t0, Duration::from_secs(2), hint);
        assert!(
            pacer.counter,
            "refused alone under a reset beyond one window"
        );
        pacer
    };
    let later = t0 + ms(1100);
    // (Less the reserve left to newcomers until a second shows us alone.)
    let mut coarse = refused_alone(Duration::from_secs(1));
    coarse.sync(later, counter_1s(3), 0);
    let held = 3.0 - coarse.reserve(later);
    assert!(held >= 1.0);
    assert_eq!(coarse.available(later), Some(held));
    let mut precise = refused_alone(ms(1050));
    precise.sync(later, counter_1s(3), 0);
    let held = 3.0 - precise.reserve(later);
    assert!(
        precise
            .available(later)
            .is_some_and(|e| e > held + 0.9 && e < held + 1.0)
    );
    // Others spend it too (it fell by 10 while we had 1 in flight): our
    // share of what it reports is ours.
    let mut shared = refused_alone(Duration::from_secs(1));
    shared.sync(t0 + ms(600), counter_1s(15), 1);
    shared.sync(t0 + ms(700), counter_1s(5), 0);
    shared.sync(later, counter_1s(10), 0);
    let ours = shared.available(later).unwrap_or_default();
    let held = 10.0 - shared.reserve(later);
    assert!(
        (ours - held * shared.sharing.share()).abs() < 1e-9,
        "{ours}"
    );
    assert!(shared.sharing.share() < 1.0);
}

/// A counter's `remaining` rising above the mirror is its previous
/// window's weight decaying, at about the pace the mirror refills: the
/// reading lowers the mirror, never lifts it (before a refusal showed it
/// a counter, a rise is units back).
#[test]
fn a_counter_reading_above_the_mirror_does_not_lift_it() {
    let t0 = Instant::now();
    let mut counter = Pacer::default();
    burst_then_refusal(
        &mut counter,
        t0,
        Duration::from_secs(2),
        Duration::from_secs(1),
    );
    assert!(counter.counter);
    // The hint's end: five units shown, spent at once (less any reserve).
    let end = t0 + ms(1350);
    let mut left = 5;
    counter.sync(end, counter_1s(left), 0);
    while counter.admit(end, None).is_ok() {
        left -= 1;
        counter.sync(end, counter_1s(left), 0);
    }
    let spent = counter.available(end).unwrap_or_default();
    assert!(spent < 1.0, "{spent}");
    // 5 ms on (a tenth of a unit at 19/s), the count decayed a unit: not
    // ours to take now; the mirror's own pace lets the next send go.
    let then = end + ms(5);
    counter.sync(then, counter_1s(left + 1), 0);
    let paced = counter.available(then).unwrap_or_default();
    assert!(paced < 1.0, "{paced}");
    assert!(counter.admit(then, None).is_err());
    // Lower than the mirror: read as is.
    counter.sync(then, counter_1s(left), 0);
    let lowered = counter.available(then).unwrap_or_default();
    assert!(lowered < paced, "{lowered} {paced}");
    // Before a refusal showed it a counter, a rise is read as units back
    // (beyond the 2 left to newcomers), taken at once.
    let mut unknown = Pacer::default();
    unknown.sync(end, counter_1s(0), 0);
    unknown.sync(then, counter_1s(3), 0);
    assert!(!unknown.counter);
    assert_eq!(unknown.admit(then, None), Ok(()));
}

/// A lone client at concurrency 1 against a quota of 20 per second that
/// says `RateLimit-Policy: 20;w=1` and `t=1`: each send is admitted when
/// the pacer allows, answered 1 ms later with what `remaining` says
/// (given the sends the server counted so far and the instant it
/// counted the last one), until `sends` went. Returns when each went.
fn paced_alone(
    pacer: &mut Pacer,
    t0: Instant,
    sends: u64,
    mut remaining: impl FnMut(u64, Instant) -> u64,
) -> Vec<Instant> {
    let mut now = t0;
    let mut went = Vec::new();
    for seq in 0..sends {
        loop {
            match pacer.admit(now, Some(seq)) {
                Ok(()) => break,
                Err(wait) => now += wait,
            }
        }
        went.push(now);
        now += ms(1);
        let second = Duration::from_secs(1);
        let left = remaining(seq + 1, now);
        let policy = QuotaReading {
            seq: Some(seq),
            fixed_window: false,
            ..reading(left, 20, Some(second), Some(second))
        };
        pacer.sync(now, policy, 0);
        pacer.answered(seq, now, true);
        pacer.on_success(now, false);
    }
    went
}

#[test]
fn a_window_that_does_not_refill_at_the_policy_rate_is_known_before_a_refusal() {
    let t0 = Instant::now();
    let mut window = Pacer::default();
    let went = paced_alone(&mut window, t0, 20, |counted, _| 20 - counted);
    // 18 at once, then the reserve at the policy rate: the 20th send went
    // 100 ms after the burst and still nothing had come back.
    assert!(went[19] >= t0 + ms(100), "{:?}", went[19] - t0);
    assert!(window.window.is_known());
    // The 21st waits for the window's end (the first reading's `t=1`),
    // not for the policy rate's next unit (and its refusal).
    let wait = window.admit(went[19] + ms(1), Some(20)).unwrap_err();
    assert_eq!(went[19] + ms(1) + wait, t0 + ms(1001));
    // A bucket refilling at the policy rate, paced alike, never shows it.
    // (It starts full and is never left to fill up: no cap to model.)
    let mut bucket = Pacer::default();
    let went = paced_alone(&mut bucket, t0, 60, |counted, now| {
        let refilled = 20.0 * (now - t0).as_secs_f64();
        (20.0 + refilled - counted as f64).min(20.0) as u64
    });
    assert!(!bucket.window.is_known());
    assert!(went[59] >= t0 + Duration::from_secs(2));
}

/// After 20 sends in a window the pacer learned (sends `0..first`), the
/// next window at 1001 ms at concurrency 4 against a quota holding `units`
/// of 20 then, the server counting the sends in order (send `s` reads
/// `units − (s − first + 1)`) and answering each 0.1 ms after the next
/// send, the oldest first; `odd_late`: an odd send's answer only once no
/// later send is out. Returns how many went.
fn next_window_at_c4(
    pacer: &mut Pacer,
    t0: Instant,
    first: u64,
    units: u64,
    odd_late: bool,
) -> u64 {
    let mut now = t0 + ms(1001);
    let (mut next, mut last_synced) = (first, 0);
    let mut out: Vec<u64> = Vec::new();
    loop {
        while out.len() < 4 && pacer.admit(now, Some(next)).is_ok() {
            out.push(next);
            next += 1;
        }
        let held = |seq: u64| odd_late && seq % 2 == 1 && out.iter().any(|s| *s > seq);
        let Some(seq) = out.iter().copied().find(|seq| !held(*seq)) else {
            break;
        };
        out.retain(|s| *s != seq);
        now += Duration::from_micros(100);
        let answer = answer_1s(seq, units - (seq - first + 1));
        if seq >= last_synced {
            last_synced = seq;
            pacer.sync(now, answer, out.len() as u32);
        } else {
            pacer.note_older(now, answer);
        }
        pacer.answered(seq, now, true);
        pacer.on_success(now, false);
    }
    assert!(now < t0 + ms(1100), "the window's units go at once");
    next - first
}

#[test]
fn a_window_that_counted_fewer_of_our_sends_than_its_limit_is_a_sliding_log() {
    let t0 = Instant::now();
    // 19 units back of 20: one send of the last window is still in the log.
    // Its first reading (18, with 3 more in flight) is what a fixed window
    // could say; its last, after 19 of our sends, is not.
    let mut log = Pacer::default();
    paced_alone(&mut log, t0, 20, |counted, _| 20 - counted);
    assert_eq!(next_window_at_c4(&mut log, t0, 20, 19, false), 19);
    assert!(log.window.is_sliding());
    // A fixed window holds all 20 of our sends.
    let mut window = Pacer::default();
    paced_alone(&mut window, t0, 20, |counted, _| 20 - counted);
    assert_eq!(next_window_at_c4(&mut window, t0, 20, 20, false), 20);
    assert!(window.window.is_known() && !window.window.is_sliding());
}

#[test]
fn a_send_counted_before_the_latest_count_gives_its_unit_back() {
    let t0 = Instant::now();
    let mut pacer = Pacer::default();
    first_burst_refused(&mut pacer, t0);
    assert_eq!(next_window_at_c4(&mut pacer, t0, 21, 20, false), 20);
    // Each synced reading (an even send's) keeps a unit for the odd sends
    // before it, still out; their answers, higher counts, say they were
    // counted before and give the units back.
    let mut pacer = Pacer::default();
    first_burst_refused(&mut pacer, t0);
    assert_eq!(next_window_at_c4(&mut pacer, t0, 21, 20, true), 20);
}

#[test]
fn a_count_made_before_the_latest_one_is_not_judged_as_others_spending() {
    let t0 = Instant::now();
    let mut pacer = Pacer::default();
    let second = Duration::from_secs(1);
    let policy = |remaining: u64, seq: u64| QuotaReading {
        seq: Some(seq),
        fixed_window: false,
        ..reading(remaining, 40, Some(second), Some(second))
    };
    // Alone, one at a time: sends 0..15 read 39..25.
    for seq in 0..15 {
        let at = t0 + ms(seq);
        assert_eq!(pacer.admit(at, Some(seq)), Ok(()));
        pacer.sync(at, policy(39 - seq, seq), 0);
        pacer.answered(seq, at, true);
    }
    // Sends 15..19 at once; the server counts 17 (24), 18 (23), 15 (22),
    // 16 (21). 15 answers first, then 19 goes (counted last: 20); 17 and
    // 18 answer late with the counts made before 15's, 16 as an older
    // send.
    let at = t0 + ms(20);
    for seq in 15..19 {
        assert_eq!(pacer.admit(at, Some(seq)), Ok(()));
    }
    let answers: [(u64, u64, u32); 5] = [
        (15, 22, 3),
        (17, 24, 3),
        (16, 21, 2),
        (18, 23, 1),
        (19, 20, 0),
    ];
    for (i, (seq, remaining, others)) in answers.into_iter().enumerate() {
        let at = at + ms(i as u64 + 1);
        if seq == 16 {
            pacer.note_older(at, policy(remaining, seq));
        } else {
            pacer.sync(at, policy(remaining, seq), others);
        }
        pacer.answered(seq, at, true);
        if seq == 15 {
            assert_eq!(pacer.admit(at, Some(19)), Ok(()));
        }
    }
    // From 15's count (22) to 19's (20), 16 and 19 of ours: nobody else.
    // Judged from 18's late 23, with only 19 sent since and 16 answered,
    // the fall of 3 read as two units of others.
    assert!(pacer.sharing.never_saw_others());
    assert_eq!(pacer.sharing.share(), 1.0);
}

/// [`policy_1s`] in the answer to send `seq`.
fn answer_1s(seq: u64, remaining: u64) -> QuotaReading {
    QuotaReading {
        seq: Some(seq),
        fixed_window: false,
        ..policy_1s(remaining)
    }
}

#[test]
fn a_count_made_before_the_latest_one_lifts_no_mirror() {
    let t0 = Instant::now();
    let mut pacer = Pacer::default();
    for seq in 0..4 {
        assert_eq!(pacer.admit(t0, Some(seq)), Ok(()));
    }
    // The server counts 0 (19), 2 (18), 1 (17), 3 (16); 1 answers first.
    let at = t0 + ms(1);
    pacer.sync(at, answer_1s(1, 17), 3);
    pacer.answered(1, at, true);
    let tokens = pacer.estimate.map(|e| e.tokens);
    // 2's 18 is older news: re-synced from, the mirror would hold a unit
    // already gone (18 less the reserve and the two still out: 14).
    pacer.sync(at, answer_1s(2, 18), 2);
    pacer.answered(2, at, true);
    assert_eq!(pacer.estimate.map(|e| e.tokens), tokens);
    // 3's 16 is the latest count.
    pacer.sync(at, answer_1s(3, 16), 1);
    assert_eq!(pacer.estimate.map(|e| e.tokens), Some(16.0 - 2.0 - 1.0));
}

#[test]
fn a_unit_given_back_is_claimed_at_our_share() {
    let t0 = Instant::now();
    let mut pacer = Pacer::default();
    first_burst_refused(&mut pacer, t0);
    let at = t0 + ms(1001);
    for seq in 21..25 {
        assert_eq!(pacer.admit(at, Some(seq)), Ok(()), "send {seq}");
    }
    // Others spend it too: a refusal cut our share to a tenth, the next
    // window's opening doubles it. 22's 18 (21, 23, 24 out) is 3.6 units
    // of ours, 3.8 with the rounding unit.
    pacer.sharing.on_refusal();
    pacer.sync(at + ms(1), answer_1s(22, 18), 3);
    pacer.answered(22, at + ms(1), true);
    let tokens = pacer.estimate.map(|e| e.tokens);
    // 21's 19, counted before: 18 · 0.2 less the two still out (1.6) is
    // less than the mirror holds.
    pacer.note_older(at + ms(2), answer_1s(21, 19));
    assert_eq!(pacer.estimate.map(|e| e.tokens), tokens);
}

#[test]
fn a_counter_of_one_refused_alone_is_paced_as_a_counter_not_as_shared() {
    // One unit per second, a counter's reset two windows away. The first
    // reading (nothing left after our one send) already shows that nobody
    // else spent it: the refusal that follows is the counter's, not
    // others', and a lone counter of one sustains a unit per two windows.
    let t0 = Instant::now();
    let counter = |remaining| {
        reading(
            remaining,
            1,
            Some(Duration::from_secs(1)),
            Some(Duration::from_secs(2)),
        )
    };
    let mut pacer = Pacer::default();
    assert_eq!(pacer.admit(t0, Some(0)), Ok(()));
    pacer.sync(t0, counter(0), 0);
    pacer.answered(0, t0, true);
    pacer.on_success(t0, false);
    let next = pacer.admit(t0, Some(1)).expect_err("spent");
    let refused_at = t0 + next;
    assert_eq!(pacer.admit(refused_at, Some(1)), Ok(()));
    pacer.answered(1, refused_at, false);
    pacer.on_throttle(
        refused_at,
        Some(Hint::stated(Duration::from_secs(1))),
        Duration::ZERO,
    );
    assert_eq!(pacer.kind(), QuotaKind::SlidingCounter);
    let wait = pacer.admit(refused_at, Some(2)).expect_err("refused");
    assert!(wait <= Duration::from_secs(3), "{wait:?}");
}

#[test]
fn a_reset_a_bucket_could_name_is_paced_at_the_rate() {
    // 5 per 10 s, none left, whole again in 10 s: what a bucket refilled
    // at 0.5/s names (GitHub-style resets count to full), so paced at the
    // rate, a unit in 2 s, not held as a window for 10 s.
    let t0 = Instant::now();
    let ten = Duration::from_secs(10);
    let mut pacer = Pacer::default();
    pacer.sync(t0, reading(0, 5, Some(ten), Some(ten)), 0);
    let wait = pacer.admit(t0, None).expect_err("spent");
    assert!(wait < Duration::from_secs(3), "{wait:?}");
}

#[test]
fn a_buckets_reset_is_read_against_its_next_unit_and_full_again() {
    // 10 per 100 s: a bucket at 0.1/s with `R` left is full again in
    // [(9 − R)·10 s, (10 − R)·10 s), its reset rounded by up to a second
    // either way.
    let t0 = Instant::now();
    let hundred = Some(Duration::from_secs(100));
    let wait_after = |remaining: u64, reset: u64| {
        let mut pacer = Pacer::default();
        let reset = Some(Duration::from_secs(reset));
        // Our sends still in flight take what it says is left.
        pacer.sync(t0, reading(remaining, 10, hundred, reset), remaining as u32);
        pacer.admit(t0, None).expect_err("spent")
    };
    // None left, whole again within that range: the bucket's, paced at
    // its rate (a unit in 10 s, one more kept back for newcomers), not
    // held to the reset.
    let wait = wait_after(0, 95);
    assert!(wait < Duration::from_secs(30), "{wait:?}");
    // Short of it: no bucket at that rate names it, a window's end.
    let wait = wait_after(0, 50);
    assert!(wait >= Duration::from_secs(49), "{wait:?}");
    // Its next unit's (10 s): the bucket's too, paced at the rate with a
    // unit kept back, not a window that gives one back in 10 s.
    let wait = wait_after(0, 10);
    assert!(wait >= Duration::from_secs(15), "{wait:?}");
    // One left, taken by a send of ours in flight, whole again in 95 s:
    // beyond what a bucket holding one names (80–90 s), a window's end.
    let wait = wait_after(1, 95);
    assert!(wait >= Duration::from_secs(94), "{wait:?}");
    // One left, 85 s: the bucket's.
    let wait = wait_after(1, 85);
    assert!(wait < Duration::from_secs(30), "{wait:?}");
}

#[test]
fn a_reset_no_bucket_could_name_is_a_window_spent_whole() {
    // 18 per 73 s read 17 with `t=69`: a bucket at that rate is full in
    // 4 s, so this is a window, spent whole (no unit kept back for
    // newcomers: unspent units are lost at its end).
    let t0 = Instant::now();
    let mut pacer = Pacer::default();
    let window = Some(Duration::from_secs(73));
    pacer.sync(
        t0,
        reading(17, 18, window, Some(Duration::from_secs(69))),
        0,
    );
    for sent in 0..17 {
        assert_eq!(pacer.admit(t0, None), Ok(()), "send {sent}");
    }
}

#[test]
fn a_reset_within_what_a_bucket_names_keeps_the_reserve() {
    // 10 per 10 s, 5 left, whole again in 5.5 s: a bucket at 1/s is full
    // in 5 s, and its reset rounds that up by under a second: a bucket,
    // whose last unit is left to newcomers until we know we are alone.
    let t0 = Instant::now();
    let mut pacer = Pacer::default();
    let ten = Some(Duration::from_secs(10));
    pacer.sync(t0, reading(5, 10, ten, Some(ms(5_500))), 0);
    for sent in 0..4 {
        assert_eq!(pacer.admit(t0, None), Ok(()), "send {sent}");
    }
    assert!(pacer.admit(t0, None).is_err());
}

/// A hint that names the next unit brings back one unit at its end, and
/// the burst returns as the server shows it: one more after the first
/// success, two after each later one, up to the burst. A success of a
/// request sent before the refusal is the refused burst's, not the
/// return's: it lets nothing more go.
#[test]
fn a_precise_hint_brings_back_one_unit_then_the_burst_as_it_shows() {
    let t0 = Instant::now();
    let burst = |pacer: &mut Pacer| {
        for i in 0..8 {
            pacer.admit(t0, Some(i)).unwrap();
            pacer.answered(i, t0 + ms(1), true);
            pacer.on_success(t0 + ms(1), false);
        }
        pacer.on_throttle(t0 + ms(2), Some(Hint::stated(ms(998))), Duration::ZERO);
    };
    let end = t0 + ms(1000);
    let mut pacer = Pacer::default();
    burst(&mut pacer);
    // A late success of a request sent before the refusal.
    pacer.on_success(t0 + ms(3), true);
    assert_eq!(pacer.admit(end, Some(10)), Ok(()));
    assert!(pacer.admit(end, Some(11)).is_err(), "one unit at the end");
    // Its success lets one more go; that one's, two.
    pacer.on_success(end + ms(1), false);
    assert_eq!(pacer.admit(end + ms(1), Some(11)), Ok(()));
    assert!(pacer.admit(end + ms(1), Some(12)).is_err());
    pacer.on_success(end + ms(2), false);
    assert_eq!(pacer.admit(end + ms(2), Some(12)), Ok(()));
    assert_eq!(pacer.admit(end + ms(2), Some(13)), Ok(()));
}

/// The return's extra sends stop at the burst: a bucket of two giving its
/// units back one per hint (too slow for a window's return) is credited
/// nothing once both came back.
#[test]
fn a_return_lets_no_more_go_than_the_burst() {
    let t0 = Instant::now();
    let mut pacer = Pacer::default();
    for i in 0..2 {
        pacer.admit(t0, Some(i)).unwrap();
        pacer.answered(i, t0 + ms(1), true);
        pacer.on_success(t0 + ms(1), false);
    }
    pacer.on_throttle(t0 + ms(2), Some(Hint::stated(ms(998))), Duration::ZERO);
    let end = t0 + ms(1000);
    assert_eq!(pacer.admit(end, Some(10)), Ok(()));
    pacer.on_success(end + ms(1), false);
    assert_eq!(pacer.admit(end + ms(1), Some(11)), Ok(()));
    // Its answer 1.2 s later: both units back, the refill one more.
    let later = end + ms(1200);
    pacer.on_success(later, false);
    assert_eq!(pacer.admit(later, Some(12)), Ok(()));
    assert!(pacer.admit(later, Some(13)).is_err());
}

/// A mirror above what a reading allows overestimated the quota: where
/// refusals cost whole seconds (the last hint was whole seconds) it takes
/// the reading's low end, not a unit the server may not have; after a
/// precise hint, the top of the range, as for any reading.
#[test]
fn an_overestimating_mirror_takes_the_low_end_where_refusals_cost_seconds() {
    let t0 = Instant::now();
    let r = |n| reading(n, 10, None, Some(Duration::from_secs(60)));
    let after = |hint: Duration| {
        let mut pacer = Pacer::default();
        pacer.sync(t0, r(5), 0);
        pacer.refused(t0, Some(Hint::stated(hint)), Duration::ZERO);
        let at = t0 + ms(1);
        pacer.sync(at, r(5), 0);
        // The mirror holds 5; the server says none are left.
        pacer.sync(at, r(0), 0);
        pacer.available(at)
    };
    assert_eq!(after(Duration::from_secs(1)), Some(0.0));
    assert!(after(ms(856)).is_some_and(|e| e > 0.9 && e < 1.0));
}

/// A cycle learned from bare refusals between a refused retry (1 s after
/// the burst began) and the success that measured it (3 s after) is
/// narrowed by one probe per cycle at the geometric midpoint (`refine.rs`):
/// refused, it says only that the window is longer, and the burst goes at
/// the cycle measured; admitted, the cycle is that much shorter and the
/// burst follows it.
#[test]
fn a_learned_cycle_is_narrowed_by_one_probe_per_cycle() {
    let t0 = Instant::now();
    let mut pacer = Pacer::default();
    let mut seq = 0;
    // Send `seq` at `at`, answered a millisecond later.
    fn send(pacer: &mut Pacer, seq: &mut u64, at: Instant, ok: bool) {
        assert_eq!(pacer.admit(at, Some(*seq)), Ok(()), "send {seq}");
        pacer.ended(*seq, Some(at + ms(1)));
        pacer.answered(*seq, at + ms(1), ok);
        if ok {
            pacer.on_success(at + ms(1), false);
        } else {
            pacer.on_throttle(at + ms(1), None, Duration::ZERO);
        }
        *seq += 1;
    }
    // A burst of 4, refused; the retry 1 s on refused too; the next, 3 s
    // after the burst began, admitted: a cycle of at most 3 s, at least 1 s.
    for _ in 0..4 {
        send(&mut pacer, &mut seq, t0, true);
    }
    send(&mut pacer, &mut seq, t0 + ms(1), false);
    send(&mut pacer, &mut seq, t0 + ms(1001), false);
    let back = t0 + ms(3000);
    for i in 0..4 {
        send(&mut pacer, &mut seq, back + ms(i), true);
    }
    let (lo, hi): (f64, f64) = (1.001, 3.000);
    // The first probe: √(lo · hi) after the first of that burst answered.
    let probe = back + ms(1) + Duration::from_secs_f64((lo * hi).sqrt());
    assert!(pacer.admit(probe - ms(2), Some(seq)).is_err());
    assert!(pacer.admit(probe + ms(1), Some(seq + 1)).is_ok());
    assert!(pacer.admit(probe + ms(1), Some(seq + 2)).is_err(), "alone");
    pacer.ended(seq + 1, Some(probe + ms(2)));
    pacer.answered(seq + 1, probe + ms(2), false);
    let wait = pacer
        .on_throttle(probe + ms(2), None, Duration::ZERO)
        .expect("the cycle's wait");
    // Refused: no second probe in this cycle, the burst at the cycle.
    let cycle_end = back + ms(1) + ms(3000);
    assert_eq!(probe + ms(2) + wait, cycle_end);
    seq += 2;
    let next = cycle_end + ms(1);
    for i in 0..4 {
        send(&mut pacer, &mut seq, next + ms(i), true);
    }
    // The next probe, at √(√(lo · hi) · hi), is admitted: the cycle is no
    // longer, and the rest of the burst follows at once.
    let lo = (lo * hi).sqrt();
    let probe = next + ms(1) + Duration::from_secs_f64((lo * hi).sqrt());
    assert!(pacer.admit(probe - ms(2), Some(seq)).is_err());
    send(&mut pacer, &mut seq, probe + ms(1), true);
    // (Each a cycle after the send it replaces, a millisecond apart.)
    for i in 0..3 {
        send(&mut pacer, &mut seq, probe + ms(2 + i), true);
    }
    assert!(
        pacer.admit(probe + ms(4), Some(seq)).is_err(),
        "a burst of 4"
    );
}

/// Without quota numbers, a refusal ending half the learned burst or more
/// spent within one learned cycle is a window's end; the same successes
/// spread over more than a cycle (paced at the rate) say the rate erred.
#[test]
fn a_refusal_is_a_window_s_end_only_within_a_cycle_of_the_spent_burst() {
    let t0 = Instant::now();
    let hint = ms(700);
    let back = t0 + hint;
    // A burst of 4 refused with a precise hint (a cycle of 700 ms, known
    // to the hints' 100 ms grain), then two successes one hint apart (no
    // faster than a bucket's units), the second send `apart` after the
    // first, and a refusal 50 ms after it.
    let refused_after = |apart: Duration| {
        let mut pacer = Pacer::default();
        for _ in 0..4 {
            pacer.on_success(t0, false);
        }
        pacer.on_throttle(t0, Some(Hint::stated(hint)), Duration::ZERO);
        for at in [back, back + apart] {
            pacer.cycle.record(at, None);
            pacer.on_success(at, false);
        }
        let end = back + apart + ms(50);
        pacer.on_throttle(end, Some(Hint::stated(ms(650))), Duration::ZERO);
        pacer.kind()
    };
    assert_eq!(refused_after(hint), QuotaKind::FixedWindow);
    assert_ne!(refused_after(ms(900)), QuotaKind::FixedWindow);
}

/// A send in flight when the last refusal came, refused too, gives back
/// the unit the mirror reserved for it, up to the empty quota; a mirror
/// with units left is not lowered.
#[test]
fn a_send_refused_in_flight_gives_its_reserved_unit_back() {
    let t0 = Instant::now();
    let mut pacer = Pacer::default();
    // 2 per 2 s; the reading leaves nothing and 3 of our sends in flight.
    pacer.sync(t0, reading(0, 2, Some(Duration::from_secs(2)), None), 3);
    assert_eq!(pacer.admit(t0, None), Err(ms(4020)));
    pacer.refused_in_flight();
    assert_eq!(pacer.admit(t0, None), Err(ms(3020)));
    pacer.refused_in_flight();
    pacer.refused_in_flight();
    assert_eq!(pacer.admit(t0, None), Err(ms(1020)));
    // No debt left to give back: nothing changes.
    pacer.refused_in_flight();
    assert_eq!(pacer.admit(t0, None), Err(ms(1020)));
    let mut full = Pacer::default();
    full.sync(t0, reading(2, 2, Some(Duration::from_secs(2)), None), 0);
    full.refused_in_flight();
    assert_eq!(full.admit(t0, None), Ok(()));
    assert_eq!(full.admit(t0, None), Ok(()));
}
