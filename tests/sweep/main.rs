//! The operating-point sweep: seeded cases over limiter kind × limit
//! (1–1,000) × window (100 ms – 1 h) × round trip (0–300 ms, with jitter
//! and so reordering) × concurrency (1–16) × header style and rounding ×
//! the server's timer × a limit that drops mid-run × another client
//! spending the same quota. Each case runs the real tower layer over a
//! simulated server on paused tokio time, and is judged against its floor:
//! what a client that knows the limiter exactly could do (`oracle.rs`).
//!
//! Beside it: two quotas at once (`two_quota_sweep`), and rate limits
//! whose server serves for 20 ms – 2 s (`slow_service_sweep`).
//!
//! `COURTEOUS_SWEEP_CASES` sets how many cases (default below),
//! `COURTEOUS_SWEEP_SEED` the first seed; the table is printed (run with
//! `--nocapture` to see it). `COURTEOUS_SWEEP_CASES_OUT=1` prints every
//! case; `COURTEOUS_SWEEP_BASELINE=FILE`, the output of an earlier run
//! that printed them, compares this run with it case by case
//! (`baseline.rs`).

mod baseline;
mod case;
mod client;
mod judge;
mod limiter;
mod oracle;
mod server;
mod style;

use std::sync::Mutex;

use case::Case;
use judge::Result;

/// Cases a default run sweeps: enough for every kind × style row to hold
/// a few, within a minute of a debug build on two cores.
const DEFAULT_CASES: u64 = 400;

/// Cases within bounds per kind in the default run, as measured when the
/// kind's model last changed: a change that lowers one fails. Raise them as
/// models land (the figures of each step are in `docs/sweep.md`).
const WITHIN_AT_LEAST: [(limiter::Kind, usize); 7] = [
    (limiter::Kind::TokenBucket, 39),
    (limiter::Kind::FixedWindowAligned, 37),
    (limiter::Kind::FixedWindowFirst, 35),
    (limiter::Kind::SlidingLog, 40),
    (limiter::Kind::SlidingCounter, 35),
    (limiter::Kind::LeakyBucket, 45),
    (limiter::Kind::Concurrency, 52),
];

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn judge(case: Case) -> Result {
    let floor = oracle::floor(&case, oracle::mean_leg(&case));
    let bound = oracle::floor(&case, oracle::shortest_leg(&case));
    let cap = 10.0 * floor.max(case.unit_time()) + 60.0;
    let outcome = client::run(&case, cap, 10 * case.successes + 100);
    Result {
        case,
        outcome,
        floor,
        bound,
    }
}

fn sweep(first: u64, cases: u64, draw: fn(u64) -> Case) -> Vec<Result> {
    let next = Mutex::new(first);
    let results = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let seed = {
                        let mut next = next.lock().unwrap();
                        if *next >= first + cases {
                            return;
                        }
                        *next += 1;
                        *next - 1
                    };
                    let result = judge(draw(seed));
                    results.lock().unwrap().push(result);
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|result| result.case.seed);
    results
}

#[test]
fn operating_point_sweep() {
    let first = env_number("COURTEOUS_SWEEP_SEED", 1);
    let cases = env_number("COURTEOUS_SWEEP_CASES", DEFAULT_CASES);
    let results = sweep(first, cases, Case::draw);
    report(&results);
    let by_kind = judge::within_by_kind(&results);
    for (kind, (cases, within)) in &by_kind {
        println!("{}: {within} of {cases} within bounds", kind.name());
    }
    println!("{}", judge::identification(&results));
    if first == 1 && cases == DEFAULT_CASES {
        for (kind, least) in WITHIN_AT_LEAST {
            let within = by_kind.get(&kind).map_or(0, |(_, within)| *within);
            assert!(
                within >= least,
                "{}: {within} cases within bounds, {least} before this change",
                kind.name()
            );
        }
    }
}

/// Cases the two-quota sweep runs by default.
const DEFAULT_TWO_QUOTA_CASES: u64 = 100;
/// Of those, within bounds, as measured when the metered model last
/// changed (a ratchet, as [`WITHIN_AT_LEAST`]).
const TWO_QUOTAS_WITHIN_AT_LEAST: usize = 61;

/// Requests and tokens at once (`Case::draw_two_quotas`): every request
/// spends both; the client must pace by the binding one.
/// `COURTEOUS_SWEEP_TWO_QUOTA_CASES` sets how many.
#[test]
fn two_quota_sweep() {
    let first = env_number("COURTEOUS_SWEEP_SEED", 1);
    let cases = env_number("COURTEOUS_SWEEP_TWO_QUOTA_CASES", DEFAULT_TWO_QUOTA_CASES);
    let results = sweep(first, cases, Case::draw_two_quotas);
    report(&results);
    let within = results.iter().filter(|r| r.within_bounds()).count();
    println!("two quotas: {within} of {} within bounds", results.len());
    if first == 1 && cases == DEFAULT_TWO_QUOTA_CASES {
        assert!(
            within >= TWO_QUOTAS_WITHIN_AT_LEAST,
            "two quotas: {within} cases within bounds, {TWO_QUOTAS_WITHIN_AT_LEAST} before this change"
        );
    }
}

/// Cases the slow-service sweep runs by default.
const DEFAULT_SLOW_SERVICE_CASES: u64 = 200;
/// Of those, within bounds, as measured when it was added (a ratchet, as
/// [`WITHIN_AT_LEAST`]).
const SLOW_SERVICE_WITHIN_AT_LEAST: usize = 143;

/// Rate limits whose server serves each admitted request for 20 ms – 2 s
/// (`Case::draw_slow_service`): every other axis as the main sweep, the
/// concurrency limit's cases drawn again as rate limits. Sends served
/// then take longer than refusals, the timing a concurrency limit shows,
/// and a client's slots, not only the quota, bound its pace.
/// `COURTEOUS_SWEEP_SLOW_SERVICE_CASES` sets how many.
#[test]
fn slow_service_sweep() {
    let first = env_number("COURTEOUS_SWEEP_SEED", 1);
    let cases = env_number(
        "COURTEOUS_SWEEP_SLOW_SERVICE_CASES",
        DEFAULT_SLOW_SERVICE_CASES,
    );
    let results = sweep(first, cases, Case::draw_slow_service);
    report(&results);
    let within = results.iter().filter(|r| r.within_bounds()).count();
    println!("slow service: {within} of {} within bounds", results.len());
    println!("{}", judge::identification(&results));
    if first == 1 && cases == DEFAULT_SLOW_SERVICE_CASES {
        assert!(
            within >= SLOW_SERVICE_WITHIN_AT_LEAST,
            "slow service: {within} cases within bounds, {SLOW_SERVICE_WITHIN_AT_LEAST} before this change"
        );
    }
}

/// Prints the table (and every case if asked) and asserts that no client
/// beat the oracle's bound.
fn report(results: &[Result]) {
    println!("{}", judge::table(results));
    if let Some(path) = std::env::var_os("COURTEOUS_SWEEP_BASELINE") {
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("COURTEOUS_SWEEP_BASELINE {}: {e}", path.display()));
        println!("{}", baseline::compare(results, &text));
    }
    if std::env::var_os("COURTEOUS_SWEEP_CASES_OUT").is_some() {
        for result in results {
            println!(
                "{:?} floor {:.3} sent {} refused {} elapsed {:.3} ratio {:.2} within {} identified {:?} gross {}",
                result.case,
                result.floor,
                result.outcome.sent,
                result.outcome.refused,
                result.outcome.elapsed,
                result.ratio(),
                result.within_bounds(),
                result.outcome.identified,
                result.gross(),
            );
        }
    }
    // The oracle is a floor: no client finishes before it (else the
    // oracle, not the client, is wrong).
    let beaten: Vec<_> = results
        .iter()
        .filter(|result| result.outcome.finished && result.outcome.elapsed < result.bound - 1e-6)
        .map(|result| (result.case.seed, result.bound, result.outcome.elapsed))
        .collect();
    assert!(
        beaten.is_empty(),
        "floors beaten (seed, floor, elapsed): {beaten:?}"
    );
}

/// The operating points users reported, each against its floor.
/// `COURTEOUS_SWEEP_REPORTED=text` runs only the rows whose name holds
/// `text` (with `COURTEOUS_SWEEP_TRACE=1`, to trace one).
#[test]
fn reported_operating_points() {
    let only = std::env::var("COURTEOUS_SWEEP_REPORTED").ok();
    for (name, case) in case::reported() {
        if only.as_deref().is_some_and(|only| !name.contains(only)) {
            continue;
        }
        let result = judge(case);
        println!(
            "{name}: {} sent for {}, {:.2} s, floor {:.2} s ({:.2}x), within bounds: {}",
            result.outcome.sent,
            result.case.successes,
            result.outcome.elapsed,
            result.floor,
            result.ratio(),
            result.within_bounds()
        );
        assert!(
            !result.outcome.finished || result.outcome.elapsed >= result.bound - 1e-6,
            "{name}: the floor was beaten"
        );
        // The rows a model claims: two quotas (`metered.rs`), the bucket
        // whose millisecond hints come from a coarser timer (the rate
        // learned between refusals allows for the grain its hints show),
        // and the bucket whose hints are HTTP-dates (the server's clock
        // located from its `Date` headers: `server_clock.rs`; 1.29x when
        // each date was read against its own response's `Date`), and the
        // leaky bucket read as `used/size` (1.24x at a192149, before the
        // parser read its header: `docs/sweep.md`, steps 1 and 3).
        if result.case.tokens.is_some()
            || name.contains("10 ms server timer")
            || name.contains("HTTP-date")
            || name.contains("used/size")
        {
            assert!(
                result.within_bounds(),
                "{name}: {} sent, {:.2}x the floor",
                result.outcome.sent,
                result.ratio()
            );
        }
        // The concurrency limit's (issue 32 asks for 1.2x its floor).
        if result.case.kind == limiter::Kind::Concurrency {
            assert!(
                result.within_bounds() && result.ratio() <= 1.2,
                "{name}: {} sent, {:.2}x the floor",
                result.outcome.sent,
                result.ratio()
            );
        }
        // The window opened by the first request, its reset an epoch read
        // against a whole-second `Date`, 100 ms round trips: within bounds
        // (1.08x, 81 sent). The refused probe's `Retry-After: 1` is rounded
        // up by 0.6 s, but its whole-second hint measured the window's
        // length, which guarantees its end sooner: only the refused request
        // waits its hint, the scope resumes at that end (1.29x when the
        // whole scope waited the hint). And each window's first send leaves
        // the legs of a round trip before its end, not once a reading
        // could have come back from it (1.12x without that).
        if result.case.kind == limiter::Kind::FixedWindowFirst {
            assert!(
                result.within_bounds(),
                "{name}: {} sent, {:.2}x the floor",
                result.outcome.sent,
                result.ratio()
            );
        }
    }
}

/// Runs the cases drawn from `seeds`, each of `kind` and `style` when
/// given, and asserts each within bounds.
fn assert_within_bounds(seeds: &[u64], kind: Option<limiter::Kind>, style: Option<style::Style>) {
    for &seed in seeds {
        let result = judge(Case::draw(seed));
        assert!(
            kind.is_none_or(|kind| result.case.kind == kind),
            "seed {seed}"
        );
        assert!(
            style.is_none_or(|style| result.case.style == style),
            "seed {seed}"
        );
        assert!(
            result.within_bounds(),
            "seed {seed}: {} sent for {}, {:.2} s, floor {:.2} s",
            result.outcome.sent,
            result.case.successes,
            result.outcome.elapsed,
            result.floor
        );
    }
}

/// A clock-aligned window behind `X-RateLimit-*` whose first window was
/// partial: seed 96, 2 per 127 s at c=1, the first request 59 s into a
/// window. The probe that shows it a window is refused with `Retry-After`
/// seconds, whose end, 68 s after the burst, was taken for the window's
/// length; every later window's reset said 126 s, and each was probed at
/// 68 s and refused (14 sent for 10 successes). A reading whose reset says
/// the window is surely open past the length's end refutes the length
/// (`pacer/window.rs`). Seeds 1399 (a window opened by the first request,
/// 30 per 46 s, then 15) and 1575 (a clock's window of 20 per 3.6 s, then
/// 10), both at c=1 with a limit that drops mid-run, were out of bounds
/// the same way (93 and 62 sent for 90 and 60).
#[test]
fn a_length_the_readings_outlast_is_refuted() {
    assert_within_bounds(&[96, 1399, 1575], None, Some(style::Style::XRateLimitEpoch));
}

/// A sliding window counter of 36 per 373 s behind problem+json
/// `retry_after_ms`, c=4, 108 successes (seed 1040): its first burst is
/// refused with a 95 s hint, a cycle of 95 s; then paced at the rate
/// measured between refusals (one send per 10.4 s), a send a unit's time
/// too fast is refused 400 s later with a 0.28 s hint. That refusal was
/// read as a window's end, and the cycle's burst of 38 went at once, to
/// nine more refusals (118 sent). A window refuses only sends within one
/// cycle of a burst that spent it; successes spread over four cycles say
/// the rate erred (`pacer/mod.rs`, `Pacer::refused`). Seeds 458 (17 per
/// 750 s, c=4: 66 sent for 51) and 1019 (6 per 3,153 s, c=4: 26 sent for
/// 18) were out of bounds the same way.
#[test]
fn a_refusal_after_a_paced_run_is_no_window() {
    assert_within_bounds(
        &[458, 1019, 1040],
        Some(limiter::Kind::SlidingCounter),
        Some(style::Style::ProblemMs),
    );
}

/// A token bucket of 2 per 1,345 s in IETF fields, c=8, 10 successes
/// (seed 956): the first burst sends 8, 2 are admitted, and the first
/// reading reserves a unit for each of the 7 sends then in flight. The
/// first refusal pauses the scope and keeps that debt; the other five
/// refusals, of sends already in flight, told the pacer nothing, so the
/// mirror went on reserving units for sends that took none and the next
/// send waited five units' time too long (1.26x the floor). A send refused
/// after the refusal that paused the scope gives its unit back
/// (`Pacer::refused_in_flight`). Seeds 1084 (2 per 186 s, IETF legacy
/// fields, c=8: 1.20x) and 1275 (a sliding window counter of 1 per 13 s,
/// IETF fields, c=16: 1.39x) were out of bounds the same way.
#[test]
fn sends_refused_in_flight_give_back_their_units() {
    assert_within_bounds(&[956, 1084, 1275], None, None);
}

/// A clock-aligned window of 18 per 73 s in IETF fields, c=1, 54
/// successes (seed 1714): its first reading, `17` and `t=69`, names a
/// reset no bucket refilled at 18 per 73 s could (it is full in 4 s). Read
/// as a window from there, every window is spent whole and the job ends in
/// its third; read as a bucket, a unit was kept in reserve and the job
/// took a fourth (215 s against a floor of 143 s).
#[test]
fn a_reset_no_bucket_could_name_is_a_window_spent_whole() {
    assert_within_bounds(&[1714], Some(limiter::Kind::FixedWindowAligned), None);
}

/// A token bucket of 173 per 543 s (a third of a unit a second) in IETF
/// fields, 225 ms round trips, c=2, its limit halved mid-run (seed 160):
/// its resets are the time to refill at that rate, so no reading refutes
/// a bucket. Taken for a window, the job waits for a window's end (2.6x
/// the floor); read as the bucket it is, it ends at the floor.
#[test]
fn a_slow_bucket_is_not_taken_for_a_window() {
    assert_within_bounds(&[160], Some(limiter::Kind::TokenBucket), None);
}

/// Slow token buckets behind whole-second hints (`Retry-After` as an
/// HTTP-date), c=1: the first hint is the next unit's (a unit per 16 s
/// to 23 s), read as a cycle of the whole burst, and the trickle after it
/// grew back to the burst's pace after every success (refusals past the
/// measurement's 30 s horizon re-learned the burst from one trickled
/// success), so every other send was refused:
///
/// - seed 1342, 45 per 741 s: 225 sent for 135, 90 refused; now 143, 8;
/// - seed 1022, 138 per 3,135 s: 342 sent for 240, 102 refused; now 245, 5;
/// - seed 1915, 13 per 124 s: 65 sent for 39, 26 refused; now 43, 4.
///
/// Now the trickle grows back no further than the rate the refusals
/// measured (`learned.rs`): under a tenth refused, no slower.
#[test]
fn a_slow_bucket_behind_whole_second_hints_is_not_hammered() {
    for seed in [1342, 1022, 1915] {
        let result = judge(Case::draw(seed));
        assert_eq!(result.case.kind, limiter::Kind::TokenBucket, "seed {seed}");
        assert!(
            !result.gross(),
            "seed {seed}: {} sent for {}, {} refused, {:.2}x the floor",
            result.outcome.sent,
            result.case.successes,
            result.outcome.refused,
            result.ratio()
        );
    }
}

/// Buckets behind bare 429s: a success after the first refusal's wait
/// reads as a cycle of the whole burst (bare refusals cannot tell a bucket
/// from a window), the cycle's burst is refused, and the trickle after it
/// halved at each refusal and grew back to that cycle's pace, twice the
/// bucket's rate or more, because a bare refusal measured nothing. Now the
/// span between bare refusals measures what the server sustained, and the
/// trickle grows back no further (`learned.rs`). Sent for N successes:
///
/// - seed 1200, a token bucket of 85 per 68 s, c=8, 240: 353, now 259;
/// - seed 1020, 102 per 68 s, c=4, 240: 320, now 251;
/// - seed 1523, 86 per 28 s, c=2, 240: 294, now 247;
/// - seed 431, a leaky bucket of 78 per 48 s, c=1, 234: 306, now 241;
/// - seed 1656, a token bucket of 44 per 17 s, c=4, 132: 186, now 145.
#[test]
fn a_bucket_behind_bare_refusals_is_trickled_at_its_measured_rate() {
    for seed in [1200, 1020, 1523, 431, 1656] {
        let result = judge(Case::draw(seed));
        assert_eq!(result.case.style, style::Style::Bare, "seed {seed}");
        assert!(
            !result.gross() && result.ratio() < 1.25,
            "seed {seed}: {} sent for {}, {} refused, {:.2}x the floor",
            result.outcome.sent,
            result.case.successes,
            result.outcome.refused,
            result.ratio()
        );
    }
}

/// A `used/size` meter of one unit reads full after every send, so only
/// its refusals' waits time it. The drain model took none of them and
/// kept the parser's prior (two a second): every unit after the first was
/// probed half a second after the last and refused, one refusal per
/// success, each a unit's time early. The wait's end now bounds the drain
/// (`drain.rs`). Seeds (a meter of one unit per window, c = 4 or 8, ten
/// successes): 1329, a clock-aligned window of 1,037 s; 1188 and 1542,
/// windows from the first request of 1,124 s and 487 s; 1306 and 377,
/// sliding window counters of 75 s and 28 s.
#[test]
fn a_meter_of_one_unit_is_paced_by_its_refusals_waits() {
    let seeds = [1329, 1188, 1542, 1306, 377];
    for seed in seeds {
        assert_eq!(Case::draw(seed).limit, 1, "seed {seed}");
    }
    assert_within_bounds(&seeds, None, Some(style::Style::UsedSize));
}

/// A bucket's reset counts to full again, from what the server holds.
/// It was compared with the time to fill from what the mirror leaves us,
/// less the reserve for newcomers: two units short of the server's count,
/// the reset read as a window's end, and a slow bucket was waited on until
/// full instead of paced a unit at a time (seed 80, a leaky bucket of 167
/// per 2,374 s with IETF fields at c=16, stopped at two units left for
/// 2,346 s against a floor of 1,038 s). The count is `[R, R + 1)`, so the
/// time to full is an interval, and the reset is compared with that.
/// Seeds: 14 (a leaky bucket whose limit drops mid-run), 80, 729 (leaky
/// buckets), 1248 (a token bucket whose limit drops), all with IETF fields.
#[test]
fn a_buckets_reset_is_read_against_what_the_server_holds() {
    assert_within_bounds(&[14, 80, 729, 1248], None, Some(style::Style::Ietf));
}

/// A first burst sent before any reading (at concurrency above the limit)
/// is refused for our own sends. With a policy stated, every refusal
/// "despite the policy rate" was read as others sharing the quota, and the
/// share cut to a tenth: seed 1139, a window of 8 per 80 s from the first
/// request with IETF fields at c=16, had its 8 refusals cut the rate to a
/// hundredth of the policy and waited 835 s for the second window (6.19x
/// its floor). A refusal of a blind send with `limit` of ours out or
/// admitted beside it now says nothing of others or of the quota's kind.
/// Seeds, all IETF fields: 1139; 1403, a token bucket at c=16; 1793, a
/// sliding log at c=16; 953, a sliding window counter at c=4.
#[test]
fn a_first_burst_refused_for_our_own_sends_is_not_others() {
    assert_within_bounds(&[1139, 1403, 1793, 953], None, Some(style::Style::Ietf));
}

/// Bare refusals of a rate limit's first burst, at concurrency above its
/// burst, look like a concurrency limit by counting: a limit goes on
/// trial, and a send refused alone refutes it. The trial set the pacer
/// aside, and the refutation left it empty: the burst the refusals ended
/// was never learned, and every later cycle was sent unpaced. Before the
/// refuted trial gave the pacer back (sent for N successes at C):
///
/// - seed 62, a leaky bucket of 2 per 0.1 s, c=8, 10 successes: 146 sent;
///   now 35;
/// - seed 1591, a clock-aligned window of 2, c=4, 10: 41 sent; now 27;
/// - seed 1632, a sliding window counter of 2 changing mid-run, c=4, 10:
///   42 sent; now 21.
#[test]
fn a_refuted_concurrency_trial_leaves_the_burst_to_learn() {
    for seed in [62, 1591, 1632] {
        assert_sent_at_most_twice_the_job(&judge(Case::draw(seed)));
    }
}

/// Asserts that a case finished its job with at most `2 (N + C)`
/// requests: whatever else it got wrong, it did not hammer the server.
fn assert_sent_at_most_twice_the_job(result: &Result) {
    let allowed = 2 * (result.case.successes + result.case.concurrency as u64);
    assert_finished_sending_at_most(result, allowed);
}

/// Asserts that a case finished its job with at most `allowed` requests.
fn assert_finished_sending_at_most(result: &Result, allowed: u64) {
    assert!(
        result.outcome.finished && result.outcome.sent <= allowed,
        "seed {}: {} sent for {} at c={} (at most {allowed})",
        result.case.seed,
        result.outcome.sent,
        result.case.successes,
        result.case.concurrency,
    );
}

/// A sliding log of one request per 62 s behind `Retry-After` seconds,
/// its server serving 1.2 s (`Case::draw_slow_service`, seed 154), c=8,
/// 10 successes. After each pause the first send goes alone and the
/// others wait for its answer; they waited 1 s at most, so all seven went
/// blind while it was served and were refused, every window: 51 sent.
/// Now they wait as long as a served answer may take (RFC 6298's timeout
/// of the served round trips, `engine/round_trip.rs`): 27.
#[test]
fn the_first_send_after_a_pause_is_awaited_as_long_as_the_server_serves() {
    assert_sent_at_most_twice_the_job(&judge(Case::draw_slow_service(154)));
}

/// `used/size` cases (Shopify's call-limit header, no reset) whose drain
/// is not the parser's assumed two calls a second: the drain the readings
/// measure paces them (`engine/drain.rs`). Before it, each paced at 2/s:
///
/// - seed 1821, a leaky bucket of 21 draining 8/s, c=4, 63 successes:
///   63 sent in 12.36 s (2.37x its floor of 5.22 s); now 5.25 s;
/// - seed 1790, a leaky bucket of 7 draining 0.69/s, c=4, 21 successes:
///   67 sent, 46 refused; now 25 sent;
/// - seed 973, a token bucket of 35 refilled 0.86/s, c=8, 105 successes:
///   545 sent, 440 refused; now 109 sent.
#[test]
fn a_used_size_meter_is_paced_at_the_drain_its_readings_measure() {
    assert_within_bounds(&[1821, 1790, 973], None, Some(style::Style::UsedSize));
}

/// A window's count stated as `used/size` drops to 0 at its boundary: no
/// drain, and the readings across it and within the next window disagree
/// on any one rate, so the drain model starts again and the window is
/// paced by the pacer's own rules. Before (read as a bucket draining 2/s,
/// its reset the time to drain at that rate): seed 905, a window of 71 per 2.4 s opened by the
/// first request, c=16, 213 successes, 229 sent in 38.68 s (8.02x its
/// floor); now 215 in 5.23 s. Seed 763, a clock-aligned window of 25 per
/// 137 s, c=8, 75 successes: 91 sent; now 77.
#[test]
fn a_used_size_window_is_not_read_as_a_drain() {
    assert_within_bounds(&[905, 763], None, Some(style::Style::UsedSize));
}

/// The demo lab's `concurrency-2` route (2 in service, 200 ms each, 429 +
/// `Retry-After: 1` after the same 200 ms, c=4, 30 successes) under many
/// draws of the network's legs. Four sends that go at once reach the
/// server in any order (on sockets: each on a connection of its own), so
/// the two it serves are not always the first two sent: the count of
/// sends in flight as each went then reads a send served beside three and
/// refusals beside one. Every draw must still follow the limit: about
/// N + 2 sent, within 1.2× the floor. The legs here are 1–19 ms (a 20 ms
/// round trip, ±90 %): tokio's paused timer wakes on whole milliseconds,
/// so the row's 1 ms round trip never reorders on it.
#[test]
fn a_concurrency_limit_is_followed_whatever_order_its_first_burst_arrives_in() {
    let (_, row) = case::reported()
        .into_iter()
        .find(|(name, _)| name.contains("the demo lab's route"))
        .expect("the demo lab's row");
    let mut missed = Vec::new();
    for seed in 1..=40 {
        let result = judge(Case {
            seed,
            rtt: 0.02,
            jitter: 0.9,
            ..row.clone()
        });
        if !(result.within_bounds() && result.ratio() <= 1.2) {
            missed.push((seed, result.outcome.sent, result.outcome.elapsed));
        }
    }
    assert!(missed.is_empty(), "(seed, sent, elapsed): {missed:?}");
}

/// `X-RateLimit-*` with epoch resets, the server's clock far from ours so
/// each is read against its response's `Date` (whole seconds): located
/// from every response's `Date` (`engine/server_clock.rs`), a reset is
/// known to about a leg. Out of bounds before (seeds 459, 474, 590, 1201:
/// fixed windows, a bucket and a sliding log).
#[test]
fn an_epoch_reset_is_located_on_the_servers_clock() {
    assert_within_bounds(
        &[459, 474, 590, 1201],
        None,
        Some(style::Style::XRateLimitEpoch),
    );
}

/// A window with precise hints (Google's `retryDelay`, problem+json
/// `retry_after_ms`) whose burst comes back whole at its refusal's hint:
/// no bucket refilling one unit per hint gives that, so it is paced as
/// the window it is from that return on, not at the rate of its first
/// cycle, whose next unit a second refusal used to show. A window of 5
/// per 1 s opened by the first request (Google's mock), 12 successes:
/// c=1 14 sent, now 13; c=4 17, now 16. Seed 1892, a clock-aligned
/// window of 20 per 0.22 s, c=8, 60 successes: 76 sent, now 68. A window
/// whose first was partial is longer than that first cycle: the next
/// cycle opens with one send alone, whose refusal shows the window's end
/// (seed 1286, a clock window of 4 per 809 s, c=4, 12 successes: 17 sent,
/// one refusal past N + C; the whole next burst sent at once: 19).
#[test]
fn a_window_is_known_when_its_burst_comes_back_whole() {
    let google = |concurrency| Case {
        seed: 1_000_101,
        kind: limiter::Kind::FixedWindowFirst,
        style: style::Style::ProblemMs,
        rounding: style::Rounding::Up,
        limit: 5,
        window: 1.0,
        phase: 0.0,
        rtt: 0.001,
        jitter: 0.2,
        server_tick: 0.0,
        concurrency,
        successes: 12,
        change: None,
        other: None,
        slow_refusals: false,
        service: 0.0,
        tokens: None,
    };
    let cases = [
        (google(1), 0),
        (google(4), 0),
        (Case::draw(1892), 0),
        (Case::draw(1286), 1),
    ];
    for (case, probes) in cases {
        let result = judge(case);
        let allowed = result.case.successes + result.case.concurrency as u64 + probes;
        assert_finished_sending_at_most(&result, allowed);
    }
}

/// A precise hint promises the next unit, not the burst: a token bucket
/// whose refusal said when its next unit was due got the whole learned
/// burst at that instant (all but one refused at c=16). The burst now comes
/// back as the server shows it, two more sends per success (`pacer`
/// module docs, 2). Before, with problem+json hints: seed 104, a bucket of
/// 7 per 583 s, c=16, 21 successes: 41 sent; now 37. Seed 1090, 18 per
/// 37 s, c=16, 54 successes: 84 sent; now 70. Seed 1078, 35 per 228 s, c=8,
/// 105 successes: 121; now 115. Seed 15, 21 per 167 s, c=8, 63 successes,
/// 124 ms round trips: 79; now 73.
#[test]
fn a_precise_hint_brings_back_one_unit_and_the_burst_as_it_shows() {
    assert_within_bounds(
        &[104, 1090, 1078, 15],
        Some(limiter::Kind::TokenBucket),
        Some(style::Style::ProblemMs),
    );
}

/// A whole-second hint two seconds long or more names the next unit's
/// instant as surely as a precise one (`Hint::names_next_unit`): the
/// unit is at least a second away. Read as the time until the whole
/// burst was back, it sent the burst at each hint's end and all but one
/// were refused. Before: seed 1782, a token bucket of 40 per 3,586 s with
/// HTTP-date hints, c=2, 120 successes: 183 sent, 63 refused; now 123.
/// Seed 989, 19 per 3,411 s, c=4, 57 successes: 93 sent; now 62. Seed
/// 1470, 15 per 490 s, c=4, 45 successes: 74; now 50. Seed 1254, a leaky
/// bucket of 8 per 912 s with `Retry-After` seconds, c=4, 24 successes:
/// 43; now 29.
#[test]
fn a_long_whole_second_hint_names_the_next_unit() {
    assert_within_bounds(&[1782, 989, 1470, 1254], None, None);
}

/// A mirror above the range a reading allows overestimated the quota: the
/// fraction it held is not the server's, and the top of the range (a unit
/// less a hair when the reading says none are left) is a guess. Taken, a
/// send on it was refused whenever the server's fraction was low, and a
/// whole-second hint then cost a second. `used/size` meters whose drain is
/// slower than the parser's prior showed it: seed 1106, a leaky bucket of 4
/// per 1,035 s at c=4, 12 successes: 17 sent, now 15; seed 1263, a bucket
/// of 3 per 125 s at c=8: 1.13× its floor, now 1.03×; seeds 579, 583 and
/// 966, 240 successes: 246, 250 and 251 sent, now 241, 247 and 244.
#[test]
fn an_overestimating_mirror_takes_what_a_reading_surely_holds() {
    assert_within_bounds(&[1106, 1263, 579, 583, 966], None, None);
}

/// The demo server's sliding window counter (20 per 1 s, clock-aligned)
/// behind bare 429s at c=1, the first request 5 ms before a boundary: the
/// burst is refused, and so is the retry a second later, 2 ms short of the
/// counter's next unit (its previous window still weighs). The retry 2 s
/// after that measured a cycle of 3.2 s, which was paced for good: 13.0 s
/// for 100 successes, 2.52× the floor (8 of 100 phases 10 ms apart were
/// out of bounds, this one the furthest; `compare --matrix` lost the cell
/// at such a phase). A probe per cycle now narrows the cycle between the
/// 1 s refused and the 3.2 s measured (`pacer/refine.rs`): within the
/// issue's 2× the floor.
#[test]
fn a_cycle_found_by_a_long_search_is_narrowed() {
    let result = judge(Case {
        phase: 0.995,
        ..Case::plain(
            7_000_995,
            limiter::Kind::SlidingCounter,
            style::Style::Bare,
            20,
            1.0,
            1,
            100,
        )
    });
    assert_sent_at_most_twice_the_job(&result);
    assert!(
        result.ratio() <= 2.0,
        "{:.2}× the floor ({} sent)",
        result.ratio(),
        result.outcome.sent
    );
}
