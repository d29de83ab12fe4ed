use super::*;

const MS: Duration = Duration::from_millis(1);

fn tokens(remaining: u64, reset_ms: u64) -> MeterReading<'static> {
    MeterReading {
        unit: QuotaUnit::Tokens,
        name: Some("tokens"),
        limit: Some(500),
        remaining,
        reset: Some(MS * reset_ms as u32),
        window: None,
        precision: None,
    }
}

/// A scope that sent `seq` at `t` and read `reading` in its answer `rtt`
/// later.
fn send_and_read(m: &mut Metered, t: Instant, seq: u64, rtt: Duration, reading: MeterReading) {
    m.take(t, seq, &[]);
    m.answered(seq, Some(t + rtt));
    m.sync(t + rtt, seq, &reading);
}

#[test]
fn knows_nothing_holds_nothing_back() {
    let m = Metered::default();
    let now = Instant::now();
    assert_eq!(m.wait(now, &[Cost::tokens(10_000)]), None);
    assert!(m.ready(now));
}

/// Two sends of 100 tokens each, read 400 then 300 left of 500 in a window
/// ending 1 s after the first answer: the cost is learned, 300 left.
fn learned(m: &mut Metered, t0: Instant) -> Instant {
    send_and_read(m, t0, 0, MS, tokens(400, 1_000));
    send_and_read(m, t0 + MS, 1, MS, tokens(300, 999));
    t0 + 2 * MS
}

#[test]
fn the_fall_between_two_readings_is_the_cost_and_a_window_holds_until_its_reset() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    let now = learned(&mut m, t0);
    // Three more undeclared sends fit (100 each), the fourth waits.
    for seq in 2..=4 {
        assert_eq!(m.wait(now, &[]), None, "send {seq}");
        m.take(now, seq, &[]);
    }
    let wait = m.wait(now, &[]).expect("the quota is spent");
    assert_eq!(
        wait,
        Duration::from_millis(999),
        "until the reset, nothing comes back"
    );
    assert!(!m.ready(now));
    assert!(m.ready(now + wait));
}

#[test]
fn a_first_reading_alone_prices_nothing() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    // 400 left of 500 may be others' spending: no cost is learned.
    send_and_read(&mut m, t0, 0, MS, tokens(400, 1_000));
    assert_eq!(fits(&mut m, t0 + MS, 1), 1_000, "nothing held back");
}

#[test]
fn a_declared_cost_replaces_the_estimate() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    let now = learned(&mut m, t0);
    assert!(m.wait(now, &[Cost::tokens(301)]).is_some());
    assert_eq!(m.wait(now, &[Cost::tokens(300)]), None);
    // A cost in another unit does not apply to tokens: the estimate does.
    let other = Cost::new(QuotaUnit::Points, 10_000);
    assert_eq!(m.wait(now, &[other]), None);
    // A cost above the limit waits for a whole quota, not forever.
    let whole = m.wait(now, &[Cost::tokens(1_000_000)]).expect("not now");
    assert_eq!(whole, Duration::from_millis(999));
}

#[test]
fn sends_out_are_not_counted_twice_nor_forgotten() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    let now = learned(&mut m, t0);
    // Two out, 100 each: 100 left.
    m.take(now, 2, &[]);
    m.take(now, 3, &[]);
    // The answer to send 2 says 200: send 3 is not counted yet.
    m.answered(2, Some(now + MS));
    m.sync(now + MS, 2, &tokens(200, 997));
    assert_eq!(m.wait(now + MS, &[]), None, "one more fits: 200 − 100");
    m.take(now + MS, 4, &[]);
    assert!(m.wait(now + MS, &[]).is_some(), "and no more");
}

#[test]
fn sends_out_before_the_cost_was_known_are_priced_at_it() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    // Four go before any reading, then the answers to 0 and 1 come.
    for seq in 0..4 {
        m.take(t0, seq, &[]);
    }
    m.answered(0, Some(t0 + MS));
    m.sync(t0 + MS, 0, &tokens(400, 1_000));
    m.answered(1, Some(t0 + 2 * MS));
    m.sync(t0 + 2 * MS, 1, &tokens(300, 999));
    // 300 left less sends 2 and 3 at 100 each: one more fits.
    assert_eq!(fits(&mut m, t0 + 2 * MS, 4), 1);
}

#[test]
fn an_older_sends_answer_does_not_resync() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    m.take(t0, 0, &[]);
    m.take(t0, 1, &[]);
    m.answered(1, Some(t0 + MS));
    m.sync(t0 + MS, 1, &tokens(0, 1_000));
    // Send 0's answer, counted before send 1, says 100 left: old news.
    m.answered(0, Some(t0 + 2 * MS));
    m.sync(t0 + 2 * MS, 0, &tokens(100, 999));
    assert!(m.wait(t0 + 2 * MS, &[Cost::tokens(1)]).is_some());
}

/// A bucket of 500 refilled at 500/s, 100 a request (its reset is the time
/// to refill what is missing): read 400, then 350 100 ms later (50 came
/// back before the reset), then three more sent: 50 left. Returns when.
fn bucket_spent(m: &mut Metered, t0: Instant) -> Instant {
    send_and_read(m, t0, 0, MS, tokens(400, 200));
    let t1 = t0 + Duration::from_millis(100);
    send_and_read(m, t1, 1, MS, tokens(350, 300));
    let now = t1 + MS;
    for seq in 2..=4 {
        m.take(now, seq, &[]);
    }
    now
}

#[test]
fn units_back_before_the_reset_show_a_bucket_paced_at_its_rate() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    let now = bucket_spent(&mut m, t0);
    // 50 left, 100 needed: 50 more at 500/s is 100 ms, well before the
    // reading's reset; ready after it, not before.
    let wait = m.wait(now, &[]).expect("short");
    assert!(
        wait > Duration::from_millis(95) && wait < Duration::from_millis(105),
        "{wait:?}"
    );
    assert!(!m.ready(now + Duration::from_millis(90)));
    assert!(m.ready(now + Duration::from_millis(110)));
}

#[test]
fn a_refusal_the_level_explains_is_the_quotas_and_a_bucket_becomes_a_window() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    let now = bucket_spent(&mut m, t0);
    // Refused: the answer to send 4 says 20 left, a request costs about
    // 100.
    let t2 = now + Duration::from_millis(10);
    m.answered(2, Some(t2));
    m.answered(3, Some(t2));
    m.answered(4, Some(t2 + MS));
    m.sync(t2 + MS, 4, &tokens(20, 960));
    assert!(m.refused(t2 + MS));
    // Read as a window now: nothing back before the reset.
    let wait = m.wait(t2 + MS, &[]).expect("short");
    assert_eq!(wait, Duration::from_millis(960));
}

#[test]
fn a_refusal_with_room_left_is_not_the_quotas() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    send_and_read(&mut m, t0, 0, MS, tokens(400, 200));
    assert!(!m.refused(t0 + MS));
}

#[test]
fn without_a_reset_nothing_is_held_back() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    let reading = MeterReading {
        reset: None,
        ..tokens(0, 0)
    };
    send_and_read(&mut m, t0, 0, MS, reading);
    assert_eq!(m.wait(t0 + MS, &[]), None);
}

/// Undeclared sends admitted at `now` before the quota asks to wait.
fn fits(m: &mut Metered, now: Instant, first_seq: u64) -> u64 {
    let mut seq = first_seq;
    while m.wait(now, &[]).is_none() && seq < first_seq + 1_000 {
        m.take(now, seq, &[]);
        seq += 1;
    }
    seq - first_seq
}

#[test]
fn the_cost_follows_the_fall_per_request_and_declared_sends_count_as_declared() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    // A window of 10,000: first 100, then 300 a request.
    let reading = |remaining| MeterReading {
        limit: Some(10_000),
        ..tokens(remaining, 60_000)
    };
    send_and_read(&mut m, t0, 0, MS, reading(9_900));
    send_and_read(&mut m, t0 + MS, 1, MS, reading(9_600));
    send_and_read(&mut m, t0 + 2 * MS, 2, MS, reading(9_300));
    // The latest fall, 300, is the cost: 31 of 9,300.
    assert_eq!(fits(&mut m.clone(), t0 + 3 * MS, 3), 31);
    // A declared send of 1,000 and an undeclared one: 1,300 fell, 300 of
    // it the undeclared send's (26 of 8,000 fit, not 6 at 1,300).
    m.take(t0 + 3 * MS, 3, &[Cost::tokens(1_000)]);
    m.answered(3, Some(t0 + 4 * MS));
    send_and_read(&mut m, t0 + 4 * MS, 4, MS, reading(8_000));
    assert_eq!(fits(&mut m, t0 + 5 * MS, 5), 26);
}

#[test]
fn hostile_numbers_neither_panic_nor_hold_forever() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    let reading = MeterReading {
        unit: QuotaUnit::Tokens,
        name: None,
        limit: Some(u64::MAX),
        remaining: 0,
        reset: Some(Duration::from_secs(24 * 60 * 60)),
        window: None,
        precision: None,
    };
    send_and_read(&mut m, t0, 0, MS, reading);
    let wait = m.wait(t0 + MS, &[Cost::tokens(u64::MAX)]).expect("spent");
    assert!(wait <= Duration::from_secs(24 * 60 * 60));
    // Many quotas: at most MAX_QUOTAS followed.
    for i in 0..100 {
        let name = format!("q{i}");
        let named = MeterReading {
            name: Some(&name),
            ..tokens(1, 1)
        };
        m.sync(t0 + MS, 1, &named);
    }
    assert_eq!(m.quotas.len(), MAX_QUOTAS);
}

#[test]
fn a_stated_window_gives_the_rate_and_a_degenerate_one_does_not() {
    // 500 per second stated; the resets (time to full) say far slower.
    let reading = |remaining, reset_ms: u64, window| MeterReading {
        window,
        ..tokens(remaining, reset_ms)
    };
    for (window, expected) in [
        (Some(Duration::from_secs(1)), 100),
        // A zero window states no rate: the reset's, (500 − 350) / 15 s.
        (Some(Duration::ZERO), 5_000),
        (None, 5_000),
    ] {
        let t0 = Instant::now();
        let mut m = Metered::default();
        send_and_read(&mut m, t0, 0, MS, reading(400, 10_000, window));
        let t1 = t0 + Duration::from_millis(100);
        // The end moved 5 s later as we spent: a bucket.
        send_and_read(&mut m, t1, 1, MS, reading(350, 15_000, window));
        let now = t1 + MS;
        // Three sends of 100 declared: 50 left, 50 to wait for.
        let hundred = [Cost::tokens(100)];
        for seq in 2..=4 {
            m.take(now, seq, &hundred);
        }
        let wait = m.wait(now, &hundred).map(|w| w.as_millis());
        let Some(wait) = wait else {
            panic!("{window:?}: no wait")
        };
        assert!(
            wait.abs_diff(expected) <= 5,
            "{window:?}: {wait} ms, not {expected}"
        );
    }
}

#[test]
fn a_whole_quota_states_no_rate_and_keeps_the_one_known() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    // 400 of 500, full in 200 ms: 500 a second.
    send_and_read(&mut m, t0, 0, MS, tokens(400, 200));
    // Whole again 100 ms later, before that reset (a rise: a bucket), its
    // reset zero: it states no rate, the one known stays.
    send_and_read(
        &mut m,
        t0 + Duration::from_millis(100),
        1,
        MS,
        tokens(500, 0),
    );
    let now = t0 + Duration::from_millis(101);
    let hundred = [Cost::tokens(100)];
    for seq in 2..=7 {
        m.take(now, seq, &hundred);
    }
    // 100 short, 100 more needed: 400 ms at 500 a second.
    let wait = m.wait(now, &hundred).expect("short");
    assert_eq!(wait, Duration::from_millis(400));
}

#[test]
fn a_count_that_rose_before_the_end_shows_a_bucket_and_no_more_than_ours_out_does_not() {
    let hundred = [Cost::tokens(100)];
    // 1,000 per 2 s stated (500 a second); the end stays put (no
    // evidence from it).
    let reading = |remaining, reset_ms| MeterReading {
        limit: Some(1_000),
        window: Some(Duration::from_secs(2)),
        ..tokens(remaining, reset_ms)
    };
    // Rose by 50 with nothing of ours out: units came back, a bucket.
    let t0 = Instant::now();
    let mut m = Metered::default();
    send_and_read(&mut m, t0, 0, MS, reading(400, 1_000));
    let t1 = t0 + Duration::from_millis(100);
    m.answered(1, Some(t1));
    m.sync(t1, 1, &reading(450, 901));
    for seq in 2..=5 {
        m.take(t1, seq, &hundred);
    }
    let wait = m.wait(t1, &hundred).expect("short");
    assert_eq!(wait, Duration::from_millis(100), "50 more at 500 a second");
    // Rose by 100 with a send of 100 out then (counted late): a window.
    let mut m = Metered::default();
    m.take(t0, 0, &hundred);
    m.take(t0, 1, &hundred);
    m.answered(0, Some(t0 + MS));
    m.sync(t0 + MS, 0, &reading(300, 1_000));
    m.answered(1, Some(t0 + 2 * MS));
    m.sync(t0 + 2 * MS, 1, &reading(400, 999));
    for seq in 2..=5 {
        m.take(t0 + 2 * MS, seq, &hundred);
    }
    let wait = m.wait(t0 + 2 * MS, &hundred).expect("short");
    assert_eq!(wait, Duration::from_millis(999), "until the window's end");
}

/// Undeclared sends at `now` until the quota asks to wait: that wait.
fn spend_then_wait(m: &mut Metered, now: Instant, first_seq: u64) -> Duration {
    fits(m, now, first_seq);
    m.wait(now, &[]).expect("short")
}

#[test]
fn a_fall_with_the_end_put_is_a_window_again_and_an_end_sooner_is_no_evidence() {
    let t0 = Instant::now();
    // A bucket, then a reading 50 ms later: fell, its end where it was.
    let mut m = Metered::default();
    let now = bucket_spent(&mut m, t0);
    let t2 = now + Duration::from_millis(50);
    m.answered(2, Some(t2));
    m.sync(t2, 2, &tokens(300, 250));
    // Spent, it waits for the end, not for the rate.
    assert_eq!(spend_then_wait(&mut m, t2, 5), Duration::from_millis(250));
    // The same fall with an end 100 ms sooner: neither kind's evidence,
    // still a bucket (paced at its rate).
    let mut m = Metered::default();
    bucket_spent(&mut m, t0);
    m.answered(2, Some(t2));
    m.sync(t2, 2, &tokens(300, 150));
    let wait = spend_then_wait(&mut m, t2, 5);
    assert!(wait < Duration::from_millis(150), "{wait:?}");
}

#[test]
fn the_cost_is_per_send_between_readings_and_the_mean_when_the_latest_is_lower() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    let reading = |remaining| MeterReading {
        limit: Some(10_000),
        ..tokens(remaining, 60_000)
    };
    send_and_read(&mut m, t0, 0, MS, reading(9_900));
    // Two sends between the readings, 600 fell: 300 each.
    m.take(t0 + MS, 1, &[]);
    m.answered(1, Some(t0 + 2 * MS));
    send_and_read(&mut m, t0 + MS, 2, MS, reading(9_300));
    assert_eq!(fits(&mut m.clone(), t0 + 3 * MS, 3), 31);
    // Then 100: the mean, 200, is the cost (46 of 9,200).
    send_and_read(&mut m, t0 + 3 * MS, 3, MS, reading(9_200));
    assert_eq!(fits(&mut m, t0 + 4 * MS, 4), 46);
}

#[test]
fn a_refusal_with_just_a_sends_worth_left_is_not_the_quotas() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    let now = learned(&mut m, t0);
    // A send of 200 declared; 100 left after it, what a send costs.
    m.take(now, 2, &[Cost::tokens(200)]);
    m.answered(2, Some(now + MS));
    m.sync(now + MS, 2, &tokens(100, 997));
    assert!(!m.refused(now + MS), "100 left, a send costs 100");
}

/// The answer to send `seq`, at `now`, says it spent `spent` tokens and
/// carries no reading.
fn settled(m: &mut Metered, now: Instant, seq: u64, spent: u64) {
    m.settle(now, seq, &[Cost::tokens(spent)]);
    m.answered(seq, Some(now));
}

#[test]
fn a_declared_over_estimate_is_given_back_when_its_answer_says_what_it_spent() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    let now = learned(&mut m, t0);
    // 300 left: a send declaring 300 (its `max_tokens`) takes them all.
    m.take(now, 2, &[Cost::tokens(300)]);
    assert_eq!(fits(&mut m, now, 3), 0);
    // It spent 100: 200 left, two undeclared sends of 100 fit.
    settled(&mut m, now + MS, 2, 100);
    assert_eq!(fits(&mut m, now + MS, 3), 2);
}

#[test]
fn a_send_that_spent_more_than_it_reserved_holds_what_it_spent() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    let now = learned(&mut m, t0);
    // 300 left; an undeclared send reserves 100 but spent 250: 50 left,
    // and no undeclared send fits (the estimate is now 250).
    m.take(now, 2, &[]);
    settled(&mut m, now + MS, 2, 250);
    assert_eq!(fits(&mut m, now + MS, 3), 0);
    assert_eq!(m.wait(now + MS, &[Cost::tokens(50)]), None);
    assert!(m.wait(now + MS, &[Cost::tokens(51)]).is_some());
}

#[test]
fn an_exact_cost_prices_the_sends_before_two_readings_do() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    // Four go before any reading; the first answer reads 400 left of 500
    // and says it spent 100: the three still out hold 300, 100 is left.
    for seq in 0..4 {
        m.take(t0, seq, &[]);
    }
    m.settle(t0 + MS, 0, &[Cost::tokens(100)]);
    m.answered(0, Some(t0 + MS));
    m.sync(t0 + MS, 0, &tokens(400, 1_000));
    assert_eq!(fits(&mut m, t0 + MS, 4), 1);
    // Without the usage, the first reading alone prices nothing
    // (`a_first_reading_alone_prices_nothing`).
}

#[test]
fn a_quota_first_read_after_settled_answers_starts_from_them() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    // Two answers without a reading say 120 and 80; the third reads 400.
    for seq in 0..3 {
        m.take(t0, seq, &[]);
    }
    settled(&mut m, t0 + MS, 0, 120);
    settled(&mut m, t0 + MS, 1, 80);
    m.answered(2, Some(t0 + 2 * MS));
    m.sync(t0 + 2 * MS, 2, &tokens(400, 1_000));
    // ĉ = max(c̄, latest) = max(100, 80) = 100: four fit in 400.
    assert_eq!(fits(&mut m, t0 + 2 * MS, 3), 4);
}

#[test]
fn a_reading_in_the_same_answer_is_what_the_mirror_holds() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    let now = learned(&mut m, t0);
    // Send 2 declared 300 and spent 100; its answer reads 200 left (the
    // server counted what it spent): the reading wins, 200 left.
    m.take(now, 2, &[Cost::tokens(300)]);
    m.settle(now + MS, 2, &[Cost::tokens(100)]);
    m.answered(2, Some(now + MS));
    m.sync(now + MS, 2, &tokens(200, 997));
    assert_eq!(fits(&mut m, now + MS, 3), 2);
}

#[test]
fn a_quota_whole_again_holds_no_send_of_before() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    // A bucket at 500/s, 50 left, sends 2 to 4 out (100 each), full by
    // now + 300 ms if nobody spent.
    let now = bucket_spent(&mut m, t0);
    // Past it the level is whole: send 5 takes 100 of 500, and sends 2 to
    // 4, of before, are no longer held…
    let after = now + Duration::from_millis(400);
    m.take(after, 5, &[]);
    // …so what send 2 spent (400, not 100) takes nothing more: 400 left.
    settled(&mut m, after, 2, 400);
    let wait = m.wait(after, &[Cost::tokens(500)]).expect("400 left");
    assert!(wait.abs_diff(Duration::from_millis(200)) < MS, "{wait:?}");
    // Send 5 is still held: its usage settles it.
    settled(&mut m, after, 5, 200);
    let wait = m.wait(after, &[Cost::tokens(500)]).expect("300 left");
    assert!(wait.abs_diff(Duration::from_millis(400)) < MS, "{wait:?}");
}

#[test]
fn a_settled_declared_send_counts_what_it_spent_in_the_fall() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    let reading = |remaining| MeterReading {
        limit: Some(10_000),
        ..tokens(remaining, 60_000)
    };
    send_and_read(&mut m, t0, 0, MS, reading(9_900));
    // Send 1 declares 1,000 and spent 200, send 2 declares nothing; the
    // next reading says 9,900 − 200 − 300: the undeclared one cost 300.
    m.take(t0 + MS, 1, &[Cost::tokens(1_000)]);
    m.take(t0 + MS, 2, &[]);
    settled(&mut m, t0 + 2 * MS, 1, 200);
    m.answered(2, Some(t0 + 3 * MS));
    m.sync(t0 + 3 * MS, 2, &reading(9_400));
    // 9,400 left at 300 a send: 31 fit.
    assert_eq!(fits(&mut m, t0 + 3 * MS, 3), 31);
}

#[test]
fn usage_in_another_unit_or_of_an_unknown_send_changes_nothing() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    let now = learned(&mut m, t0);
    m.take(now, 2, &[]);
    m.settle(now + MS, 2, &[Cost::new(QuotaUnit::OutputTokens, 10_000)]);
    m.settle(now + MS, 2, &[Cost::new(QuotaUnit::Requests, 10_000)]);
    m.settle(now + MS, 99, &[Cost::tokens(10_000)]);
    m.answered(2, Some(now + MS));
    // 300 − send 2's 100: two more fit, as without any usage.
    assert_eq!(fits(&mut m, now + MS, 3), 2);
}

#[test]
fn a_later_send_answered_before_an_older_reading_is_not_counted_twice() {
    let t0 = Instant::now();
    let mut m = Metered::default();
    let now = learned(&mut m, t0);
    // 300 left; sends 2 and 3 go. Send 3's answer, without a reading,
    // comes first and says 100; send 2's reads 200 left, counted before
    // send 3: 100 left, one more fits.
    m.take(now, 2, &[]);
    m.take(now, 3, &[]);
    settled(&mut m, now + MS, 3, 100);
    m.answered(2, Some(now + 2 * MS));
    m.sync(now + 2 * MS, 2, &tokens(200, 997));
    assert_eq!(fits(&mut m, now + 2 * MS, 4), 1);
    // Without its usage, send 3 counts at the estimate.
    let mut m = Metered::default();
    let now = learned(&mut m, t0);
    m.take(now, 2, &[]);
    m.take(now, 3, &[]);
    m.answered(3, Some(now + MS));
    m.answered(2, Some(now + 2 * MS));
    m.sync(now + 2 * MS, 2, &tokens(200, 997));
    assert_eq!(fits(&mut m, now + 2 * MS, 4), 1);
}
