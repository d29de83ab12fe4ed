//! One operating point, drawn from a seed.

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

use super::limiter::Kind;
use super::style::{Rounding, Style};

#[derive(Debug, Clone)]
pub struct Case {
    pub seed: u64,
    pub kind: Kind,
    pub style: Style,
    pub rounding: Rounding,
    pub limit: u32,
    /// The window (a bucket's time to fill; the concurrency limit's
    /// service time), seconds.
    pub window: f64,
    /// Where a clock-aligned window's grid starts, seconds.
    pub phase: f64,
    /// The network's round trip, seconds, and its spread (each leg is
    /// half of it, give or take `jitter` of that half).
    pub rtt: f64,
    pub jitter: f64,
    /// The server's clock resolution, seconds (0: exact).
    pub server_tick: f64,
    /// Concurrent tasks of the client.
    pub concurrency: usize,
    /// The job: this many successes.
    pub successes: u64,
    /// The limit drops at `.0` to `.1`.
    pub change: Option<(f64, u32)>,
    /// Another client spends this share of the quota's rate.
    pub other: Option<f64>,
    /// A concurrency limit's refusals take its service time too (a server
    /// that refuses after the work, or adds its latency to every answer),
    /// instead of coming back at once.
    pub slow_refusals: bool,
    /// How long a rate limiter's server serves a request it admitted,
    /// seconds (0: at once; a concurrency limit's is its `window`). Its
    /// refusals come back at once: refusing does no work.
    pub service: f64,
    /// A second quota, in tokens, that every request spends too.
    pub tokens: Option<Tokens>,
}

/// A quota in tokens beside the requests quota: each request costs
/// `cost` tokens; it holds `units` requests' worth (`units × cost`
/// tokens) per `window`, refilled as `kind`.
#[derive(Debug, Clone, Copy)]
pub struct Tokens {
    pub kind: Kind,
    pub units: u32,
    pub window: f64,
    pub cost: u32,
}

fn log_uniform(rng: &mut SmallRng, lo: f64, hi: f64) -> f64 {
    (rng.random_range(lo.ln()..hi.ln())).exp()
}

impl Case {
    /// The case drawn from `seed`.
    pub fn draw(seed: u64) -> Self {
        let mut rng = SmallRng::seed_from_u64(seed);
        let kind = Kind::ALL[rng.random_range(0..Kind::ALL.len())];
        let styles: &[Style] = match kind {
            // Nothing states a concurrency limit as a quota the parser
            // reads; servers refuse with a hint or nothing.
            Kind::Concurrency => &[
                Style::RetryAfterSeconds,
                Style::RetryAfterDate,
                Style::ProblemMs,
                Style::Bare,
            ],
            _ => &Style::ALL,
        };
        let style = styles[rng.random_range(0..styles.len())];
        let rounding = [Rounding::Up, Rounding::Nearest, Rounding::Down][rng.random_range(0..3)];
        let (limit, window) = if kind == Kind::Concurrency {
            (
                rng.random_range(1..=16u32),
                log_uniform(&mut rng, 0.01, 2.0),
            )
        } else {
            (
                log_uniform(&mut rng, 1.0, 1000.0).round() as u32,
                log_uniform(&mut rng, 0.1, 3600.0),
            )
        };
        let phase = rng.random_range(0.0..window);
        let rtt = if rng.random_bool(0.2) {
            0.0
        } else {
            log_uniform(&mut rng, 0.0005, 0.3)
        };
        let jitter = if rng.random_bool(0.3) {
            0.0
        } else {
            rng.random_range(0.0..0.5)
        };
        let server_tick = [0.0, 0.0, 0.001, 0.01][rng.random_range(0..4)];
        let concurrency = [1, 1, 2, 4, 4, 8, 16][rng.random_range(0..7)];
        // Three windows' worth, within what a test can afford.
        let successes = (u64::from(limit) * 3).clamp(10, 240);
        let quota_kind = kind != Kind::Concurrency;
        let other = (quota_kind && rng.random_bool(0.15)).then(|| rng.random_range(0.1..0.5));
        let change = (quota_kind && limit >= 2 && rng.random_bool(0.15))
            .then(|| (window * rng.random_range(0.5..1.5), limit / 2));
        // Drawn last, so the axes above draw as before.
        let slow_refusals = !quota_kind && rng.random_bool(0.5);
        Self {
            seed,
            kind,
            style,
            rounding,
            limit,
            window,
            phase,
            rtt,
            jitter,
            server_tick,
            concurrency,
            successes,
            change,
            other,
            slow_refusals,
            service: 0.0,
            tokens: None,
        }
    }

    /// A case with two quotas, requests and tokens, both stated in IETF
    /// fields (`qu="tokens"` for the second): the requests quota drawn as
    /// in [`Self::draw`] (a rate limit, not a concurrency limit; windows on
    /// the clock), the tokens refilled as a bucket or in windows on the
    /// clock, binding or not (their
    /// rate 0.2–5 times the requests'), 1–2,000 tokens a request.
    pub fn draw_two_quotas(seed: u64) -> Self {
        let mut case = Self::draw(seed);
        let mut rng = SmallRng::seed_from_u64(seed ^ 0x746f_6b65_6e73);
        if case.kind == Kind::Concurrency {
            case.kind = Kind::TokenBucket;
            case.limit = log_uniform(&mut rng, 1.0, 1000.0).round() as u32;
            case.window = log_uniform(&mut rng, 0.1, 3600.0);
            case.phase = rng.random_range(0.0..case.window);
            case.successes = (u64::from(case.limit) * 3).clamp(10, 240);
        }
        // A window opened by the first request makes the oracle's greedy
        // schedule no floor: with a second quota binding, opening the
        // requests window later can fit more of it (seed 54 did 12 in
        // 288 s, the greedy oracle 423 s). Windows here are on the clock.
        if case.kind == Kind::FixedWindowFirst {
            case.kind = Kind::FixedWindowAligned;
        }
        case.style = Style::Ietf;
        case.change = None;
        case.other = None;
        case.slow_refusals = false;
        let kinds = [Kind::TokenBucket, Kind::FixedWindowAligned];
        let kind = kinds[rng.random_range(0..kinds.len())];
        let window = case.window * log_uniform(&mut rng, 0.5, 2.0);
        let share = log_uniform(&mut rng, 0.2, 5.0);
        let units = (f64::from(case.limit) * share * window / case.window)
            .round()
            .max(1.0) as u32;
        let cost = log_uniform(&mut rng, 1.0, 2000.0).round() as u32;
        case.tokens = Some(Tokens {
            kind,
            units,
            window,
            cost,
        });
        case
    }

    /// A rate limit whose server serves each admitted request for a while
    /// (20 ms – 2 s, as real APIs do: a model's completion takes seconds),
    /// the other axes as in [`Self::draw`]. Refusals still come back at
    /// once, so sends served take longer than those refused: the timing a
    /// concurrency limit shows, which must not be read as one here.
    pub fn draw_slow_service(seed: u64) -> Self {
        let mut case = Self::draw(seed);
        let mut rng = SmallRng::seed_from_u64(seed ^ 0x0073_6572_7669_6365);
        if case.kind == Kind::Concurrency {
            let kinds = [
                Kind::TokenBucket,
                Kind::FixedWindowAligned,
                Kind::SlidingLog,
                Kind::SlidingCounter,
            ];
            case.kind = kinds[rng.random_range(0..kinds.len())];
            case.limit = log_uniform(&mut rng, 1.0, 1000.0).round() as u32;
            case.window = log_uniform(&mut rng, 0.1, 3600.0);
            case.phase = rng.random_range(0.0..case.window);
            case.successes = (u64::from(case.limit) * 3).clamp(10, 240);
            case.slow_refusals = false;
        }
        case.service = log_uniform(&mut rng, 0.02, 2.0);
        case
    }

    /// `limit` per `window` of `kind` behind `style`, as the demo lab
    /// runs it: a 1 ms round trip (±20 %), an exact timer, phase 0,
    /// whole seconds rounded up, nothing changing and nobody else.
    pub fn plain(
        seed: u64,
        kind: Kind,
        style: Style,
        limit: u32,
        window: f64,
        concurrency: usize,
        successes: u64,
    ) -> Self {
        Case {
            seed,
            kind,
            style,
            rounding: Rounding::Up,
            limit,
            window,
            phase: 0.0,
            rtt: 0.001,
            jitter: 0.2,
            server_tick: 0.0,
            concurrency,
            successes,
            change: None,
            other: None,
            slow_refusals: false,
            service: 0.0,
            tokens: None,
        }
    }

    /// The time one unit of the quota takes to come back at its rate.
    pub fn unit_time(&self) -> f64 {
        self.window / f64::from(self.limit)
    }
}

/// One leg of a network whose round trip is `rtt`, `spread` ∈ (−`jitter`,
/// `jitter`) of the half round trip off its mean, rounded up to whole
/// milliseconds: tokio's paused timer wakes only on them, so the harness
/// slept a finer leg that long anyway (a 0.35 ms leg took 1 ms), and the
/// oracle (`oracle.rs`), walking the exact legs, did not charge itself for
/// it. Now both walk the same legs.
pub fn leg(rtt: f64, spread: f64) -> f64 {
    (rtt / 2.0 * (1.0 + spread) * 1000.0).ceil().max(0.0) / 1000.0
}

/// The operating points a user reported (issue 32's table), as cases.
pub fn reported() -> Vec<(&'static str, Case)> {
    let base = Case::plain;
    vec![
        (
            "concurrency 2, 200 ms service, Retry-After 1 s; c=4",
            base(
                1_000_001,
                Kind::Concurrency,
                Style::RetryAfterSeconds,
                2,
                0.2,
                4,
                30,
            ),
        ),
        (
            "the same, refusals served 200 ms too (the demo lab's route); c=4",
            Case {
                slow_refusals: true,
                ..base(
                    1_000_006,
                    Kind::Concurrency,
                    Style::RetryAfterSeconds,
                    2,
                    0.2,
                    4,
                    30,
                )
            },
        ),
        (
            "fixed window 20/1 s from the first request, X-RateLimit-*, 100 ms round trip; c=4",
            Case {
                rtt: 0.1,
                ..base(
                    1_000_002,
                    Kind::FixedWindowFirst,
                    Style::XRateLimitEpoch,
                    20,
                    1.0,
                    4,
                    80,
                )
            },
        ),
        (
            "token bucket 20/s, problem+json retry_after_ms only, a 10 ms server timer; c=1",
            Case {
                server_tick: 0.01,
                rtt: 0.02,
                ..base(
                    1_000_003,
                    Kind::TokenBucket,
                    Style::ProblemMs,
                    20,
                    1.0,
                    1,
                    100,
                )
            },
        ),
        (
            "token bucket 20/s, Retry-After HTTP-date only; c=1",
            Case {
                rtt: 0.02,
                ..base(
                    1_000_004,
                    Kind::TokenBucket,
                    Style::RetryAfterDate,
                    20,
                    1.0,
                    1,
                    100,
                )
            },
        ),
        (
            "leaky bucket of 10 draining 5/s, used/size and Retry-After; c=1",
            base(
                1_000_005,
                Kind::LeakyBucket,
                Style::UsedSize,
                10,
                2.0,
                1,
                30,
            ),
        ),
        (
            "two quotas, requests 20/s and tokens 1,000/s at 100 a request; c=4",
            Case {
                tokens: Some(Tokens {
                    kind: Kind::TokenBucket,
                    units: 10,
                    window: 1.0,
                    cost: 100,
                }),
                ..base(1_000_007, Kind::TokenBucket, Style::Ietf, 20, 1.0, 4, 50)
            },
        ),
    ]
}
