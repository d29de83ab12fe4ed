//! A simulated token-bucket server (capacity 20, 20/s, as in the original experiment's
//! experiment) driven by the engine through a simulated clock: checks that
//! pacing reaches the server's rate with no or few refusals, per dialect.
//! Deterministic apart from jitter; no sleeping, no sockets.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

use http::StatusCode;

use crate::engine::{Admit, Attempt, Config, Engine, InFlight, Scope, Verdict};
use crate::signal::{HintSource, Quota, QuotaSource, RetryHint, Signal};

const CAPACITY: f64 = 20.0;
const RATE: f64 = 20.0;
const LATENCY: Duration = Duration::from_millis(1);

/// Half the round trip, drawn from `key`: [`LATENCY`] / 2 give or take
/// half (a fixed hash, so runs repeat).
fn leg(key: u64) -> Duration {
    let spread = key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 54; // 0..1024
    (LATENCY / 2 + LATENCY * spread as u32 / 1024) / 2
}

/// The way to the server of the send numbered `seq`, and the way back of
/// its answer, drawn apart: concurrent requests reach the server in another
/// order than they were sent, and their answers come back in a third, as on
/// a real network (a newer send's answer can carry an older count).
fn outbound(seq: u64) -> Duration {
    leg(seq)
}

fn inbound(seq: u64) -> Duration {
    leg(!seq)
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Dialect {
    /// `RateLimit` + `RateLimit-Policy` (20;w=1), reset = next token (ceil s); 429: ms hint.
    Policy,
    /// No quota; 429 carries the exact time to the next token in ms.
    MsHint,
    /// No quota; 429 carries `Retry-After` in whole seconds (rounded up).
    SecondsHint,
    /// `X-RateLimit-Limit/Remaining/Reset` (reset = time until full, ceil s); 429: seconds.
    XRateLimit,
    /// `RateLimit-Limit/Remaining/Reset` (no window; reset = next token, ceil s); 429: ms hint.
    LegacyNextToken,
    /// Nothing at all: bare 429s.
    Bare,
    /// Like `Policy`, but `remaining` counted before this request (off by one).
    PolicyOffByOne,
    /// `Policy` and `XRateLimit` at once (a demo server with every header).
    All,
    /// The demo server's every header as its clients read it on one
    /// machine: `Policy` (`t` = until full, rounded up) and `X-RateLimit-*`
    /// with an epoch reset (full again, rounded up to the epoch's second)
    /// read against a local clock that agrees with `Date`: a wait to the
    /// nanosecond, though the instant it names is a whole second (the
    /// epoch is sim time plus `phase_ms`). 429: the exact time to the next
    /// token in ms.
    AllLocalEpoch { phase_ms: u64 },
    /// `X-RateLimit-*` with an epoch reset (time until full) read against a
    /// whole-second `Date`: the client sees `ceil(epoch + reset) −
    /// floor(epoch)`; the epoch is sim time plus `phase_ms`. 429: the
    /// exact time to the next token in ms with `ms_hint` (the demo
    /// server's problem body), else no hint.
    XRateLimitEpoch { phase_ms: u64, ms_hint: bool },
    /// GitHub-like: a fixed window of 20 per `WINDOW` (no refill within it),
    /// `X-RateLimit-*` with an epoch reset at the window's end as above.
    /// 429: no hint.
    FixedWindowEpoch { phase_ms: u64 },
    /// A fixed window of 20 per second with `RateLimit-Policy: 20;w=1` and
    /// `RateLimit: r;t` (t = time to the window's end, rounded up); 429:
    /// `Retry-After` in whole seconds, rounded up. The window opens with the
    /// first request after the previous one ended (`first_request`), or at
    /// each whole second of sim time plus `phase_ms`.
    PolicyWindow { first_request: bool, phase_ms: u64 },
    /// The same windows with no quota fields: a 429 says `Retry-After` in
    /// whole seconds rounded up (`hint`), or nothing at all.
    HintWindow {
        first_request: bool,
        hint: bool,
        phase_ms: u64,
    },
    /// A sliding log of 20 admissions per second (each admitted request
    /// counts for one second after it) with no quota fields: a 429 says
    /// `Retry-After` in whole seconds rounded up until the oldest entry
    /// leaves (`hint`), or nothing at all.
    SlidingLog { hint: bool },
    /// The windows of `PolicyWindow` with `X-RateLimit-*` (an epoch reset
    /// at the window's end, whole seconds, read against a local clock that
    /// agrees with `Date`; no window length); a 429 says `retry_after_ms`
    /// until the window's end.
    EpochWindow { first_request: bool, phase_ms: u64 },
    /// The sliding log with IETF fields: `RateLimit-Policy: 20;w=1`,
    /// `RateLimit: r;t` (t = until the newest send leaves, rounded up);
    /// a 429 says `retry_after_ms` (until the oldest leaves).
    SlidingLogPolicy,
    /// The demo server's sliding window counter (`sliding_window.lua`):
    /// windows of 1 s at each whole second of sim time plus `phase_ms`,
    /// admitting while `prev · overlap + cur + 1 ≤ 20`; IETF fields
    /// (`t` = until the current window's count leaves the pair, rounded
    /// up: up to 2 s); a 429 says `retry_after_ms`, or, with `seconds`,
    /// `Retry-After` in whole seconds (rounded up, at least 1).
    CounterPolicy { phase_ms: u64, seconds: bool },
    /// The same counter with no quota fields: a 429 says `Retry-After` in
    /// whole seconds as `CounterPolicy`'s `seconds` (the demo server's
    /// `retry-after` style), or nothing at all (`bare`).
    CounterHints { phase_ms: u64, hint: bool },
}

/// The fixed window of `Dialect::FixedWindowEpoch`.
const WINDOW: f64 = 3.0;

struct Bucket {
    tokens: f64,
    at: f64,
    /// When the current window opened (`PolicyWindow`).
    opened: f64,
    /// Admission times of the last second (`SlidingLog`).
    log: std::collections::VecDeque<f64>,
    /// The counter's window number, current and previous counts
    /// (`CounterPolicy`).
    counter: (i64, f64, f64),
}

impl Bucket {
    fn refill(&mut self, t: f64, dialect: Dialect) {
        if let Dialect::FixedWindowEpoch { .. } = dialect {
            if (t / WINDOW).floor() > (self.at / WINDOW).floor() {
                self.tokens = CAPACITY;
            }
        } else if let Dialect::PolicyWindow {
            first_request,
            phase_ms,
        }
        | Dialect::HintWindow {
            first_request,
            hint: _,
            phase_ms,
        }
        | Dialect::EpochWindow {
            first_request,
            phase_ms,
        } = dialect
        {
            let phase = phase_ms as f64 / 1000.0;
            let opened = if first_request {
                if t >= self.opened + 1.0 {
                    t
                } else {
                    self.opened
                }
            } else {
                (t + phase).floor() - phase
            };
            if opened > self.opened {
                self.tokens = CAPACITY;
                self.opened = opened;
            }
        } else {
            self.tokens = (self.tokens + (t - self.at) * RATE).min(CAPACITY);
        }
        self.at = t;
    }

    fn respond_log(&mut self, t: f64, hint: bool, policy: bool) -> (StatusCode, Signal) {
        while self.log.front().is_some_and(|&at| at <= t - 1.0) {
            self.log.pop_front();
        }
        let allowed = (self.log.len() as f64) < CAPACITY;
        if allowed {
            self.log.push_back(t);
        }
        let oldest = self.log.front().copied().unwrap_or(t);
        let newest = self.log.back().copied().unwrap_or(t);
        let policies = if policy {
            vec![
                Quota::new(QuotaSource::IetfList)
                    .with_limit(CAPACITY as u64)
                    .with_window(Duration::from_secs(1))
                    .with_remaining((CAPACITY as usize).saturating_sub(self.log.len()) as u64)
                    .with_reset(Duration::from_secs(
                        (newest + 1.0 - t).ceil().max(0.0) as u64
                    )),
            ]
        } else {
            Vec::new()
        };
        if allowed {
            return (StatusCode::OK, Signal::from_parts(None, policies));
        }
        let hint = if policy {
            Some(RetryHint::new(
                Duration::from_secs_f64((oldest + 1.0 - t).max(0.001)),
                HintSource::ProblemRetryAfterMs,
            ))
        } else {
            hint.then(|| {
                let secs = (oldest + 1.0 - t).ceil().max(1.0);
                RetryHint::new(
                    Duration::from_secs(secs as u64),
                    HintSource::RetryAfterSeconds,
                )
            })
        };
        (
            StatusCode::TOO_MANY_REQUESTS,
            Signal::from_parts(hint, policies),
        )
    }

    fn respond_counter(&mut self, t: f64, phase_ms: u64, seconds: bool) -> (StatusCode, Signal) {
        let now = t + phase_ms as f64 / 1000.0;
        let index = now.floor() as i64;
        let (stored, cur, prev) = self.counter;
        let (mut cur, prev) = match stored {
            _ if stored == index => (cur, prev),
            _ if stored == index - 1 => (0.0, cur),
            _ => (0.0, 0.0),
        };
        let into = now - index as f64;
        let mut estimate = prev * (1.0 - into) + cur;
        let allowed = estimate + 1.0 <= CAPACITY;
        if allowed {
            cur += 1.0;
            estimate += 1.0;
        }
        self.counter = (index, cur, prev);
        let to_end = 1.0 - into;
        let reset = if cur > 0.0 {
            to_end + 1.0
        } else if prev > 0.0 {
            to_end
        } else {
            0.0
        };
        let policy = Quota::new(QuotaSource::IetfList)
            .with_limit(CAPACITY as u64)
            .with_window(Duration::from_secs(1))
            .with_remaining((CAPACITY - estimate).max(0.0).floor() as u64)
            .with_reset(Duration::from_secs(reset.ceil() as u64));
        if allowed {
            return (StatusCode::OK, Signal::from_parts(None, vec![policy]));
        }
        let retry = if cur + 1.0 <= CAPACITY {
            1.0 - (CAPACITY - cur - 1.0) / prev - into
        } else {
            to_end + (1.0 - (CAPACITY - 1.0) / cur).max(0.0)
        };
        let hint = if seconds {
            RetryHint::new(
                Duration::from_secs(retry.max(0.001).ceil().max(1.0) as u64),
                HintSource::RetryAfterSeconds,
            )
        } else {
            RetryHint::new(
                Duration::from_secs_f64(retry.max(0.001)),
                HintSource::ProblemRetryAfterMs,
            )
        };
        (
            StatusCode::TOO_MANY_REQUESTS,
            Signal::from_parts(Some(hint), vec![policy]),
        )
    }

    fn respond(&mut self, t: f64, dialect: Dialect) -> (StatusCode, Signal) {
        if let Dialect::CounterPolicy { phase_ms, seconds } = dialect {
            return self.respond_counter(t, phase_ms, seconds);
        }
        if let Dialect::CounterHints { phase_ms, hint } = dialect {
            // The `Retry-After` seconds of `CounterPolicy`, without the fields.
            let (status, signal) = self.respond_counter(t, phase_ms, true);
            let seconds = signal.retry_after().copied().filter(|_| hint);
            return (status, Signal::from_parts(seconds, Vec::new()));
        }
        if let Dialect::SlidingLog { hint } = dialect {
            return self.respond_log(t, hint, false);
        }
        if dialect == Dialect::SlidingLogPolicy {
            return self.respond_log(t, false, true);
        }
        self.refill(t, dialect);
        let allowed = self.tokens >= 1.0;
        if allowed {
            self.tokens -= 1.0;
        }
        let remaining = if dialect == Dialect::PolicyOffByOne && allowed {
            (self.tokens + 1.0).floor() as u64
        } else {
            self.tokens.floor() as u64
        };
        let next_token = if self.tokens >= 1.0 {
            0.0
        } else {
            (1.0 - self.tokens) / RATE
        };
        let until_full = (CAPACITY - self.tokens) / RATE;
        let ceil_secs = |s: f64| Duration::from_secs(s.ceil() as u64);
        // An epoch `reset` seconds away, as read against a second-truncated `Date`.
        let epoch_reset = |phase_ms: u64, reset: f64| {
            let epoch = t + phase_ms as f64 / 1000.0;
            Duration::from_secs(((epoch + reset).ceil() - epoch.floor()) as u64)
        };
        let x_ratelimit = |reset: Duration| {
            Quota::new(QuotaSource::XRateLimit)
                .with_limit(CAPACITY as u64)
                .with_remaining(remaining)
                .with_reset(reset)
        };
        let mut policies = Vec::new();
        let mut hint = None;
        match dialect {
            Dialect::All => {
                policies.push(
                    Quota::new(QuotaSource::IetfList)
                        .with_limit(CAPACITY as u64)
                        .with_window(Duration::from_secs(1))
                        .with_remaining(remaining)
                        .with_reset(ceil_secs(until_full)),
                );
                policies.push(
                    Quota::new(QuotaSource::XRateLimit)
                        .with_limit(CAPACITY as u64)
                        .with_remaining(remaining)
                        .with_reset(ceil_secs(until_full) + Duration::from_secs(1)),
                );
                if !allowed {
                    hint = Some(RetryHint::new(
                        Duration::from_secs_f64(next_token),
                        HintSource::ProblemRetryAfterMs,
                    ));
                }
            }
            Dialect::AllLocalEpoch { phase_ms } => {
                let epoch = t + phase_ms as f64 / 1000.0;
                let local_epoch = (epoch + until_full).ceil() - epoch;
                policies.push(
                    Quota::new(QuotaSource::IetfList)
                        .with_limit(CAPACITY as u64)
                        .with_window(Duration::from_secs(1))
                        .with_remaining(remaining)
                        .with_reset(ceil_secs(until_full)),
                );
                policies.push(x_ratelimit(Duration::from_secs_f64(local_epoch)));
                if !allowed {
                    hint = Some(RetryHint::new(
                        Duration::from_secs_f64(next_token),
                        HintSource::ProblemRetryAfterMs,
                    ));
                }
            }
            Dialect::Policy | Dialect::PolicyOffByOne => {
                policies.push(
                    Quota::new(QuotaSource::IetfList)
                        .with_limit(CAPACITY as u64)
                        .with_window(Duration::from_secs(1))
                        .with_remaining(remaining)
                        .with_reset(ceil_secs(next_token)),
                );
                if !allowed {
                    hint = Some(RetryHint::new(
                        Duration::from_secs_f64(next_token),
                        HintSource::ProblemRetryAfterMs,
                    ));
                }
            }
            Dialect::MsHint if !allowed => {
                hint = Some(RetryHint::new(
                    Duration::from_secs_f64(next_token),
                    HintSource::ProblemRetryAfterMs,
                ));
            }
            Dialect::SecondsHint if !allowed => {
                hint = Some(RetryHint::new(
                    ceil_secs(next_token),
                    HintSource::RetryAfterSeconds,
                ));
            }
            Dialect::XRateLimitEpoch { phase_ms, ms_hint } => {
                policies.push(x_ratelimit(epoch_reset(phase_ms, until_full)));
                if ms_hint && !allowed {
                    hint = Some(RetryHint::new(
                        Duration::from_secs_f64(next_token),
                        HintSource::ProblemRetryAfterMs,
                    ));
                }
            }
            Dialect::FixedWindowEpoch { phase_ms } => {
                let window_end = ((t / WINDOW).floor() + 1.0) * WINDOW;
                policies.push(x_ratelimit(epoch_reset(phase_ms, window_end - t)));
            }
            Dialect::PolicyWindow { .. } => {
                let to_end = (self.opened + 1.0 - t).max(0.0);
                policies.push(
                    Quota::new(QuotaSource::IetfList)
                        .with_limit(CAPACITY as u64)
                        .with_window(Duration::from_secs(1))
                        .with_remaining(remaining)
                        .with_reset(ceil_secs(to_end)),
                );
                if !allowed {
                    hint = Some(RetryHint::new(
                        ceil_secs(to_end),
                        HintSource::RetryAfterSeconds,
                    ));
                }
            }
            Dialect::EpochWindow { phase_ms, .. } => {
                let to_end = (self.opened + 1.0 - t).max(0.0);
                let epoch = t + phase_ms as f64 / 1000.0;
                let reset = (epoch + to_end).ceil() - epoch;
                policies.push(x_ratelimit(Duration::from_secs_f64(reset)));
                if !allowed {
                    hint = Some(RetryHint::new(
                        Duration::from_secs_f64(to_end.max(0.001)),
                        HintSource::ProblemRetryAfterMs,
                    ));
                }
            }
            Dialect::HintWindow { hint: true, .. } if !allowed => {
                let to_end = (self.opened + 1.0 - t).max(0.0);
                hint = Some(RetryHint::new(
                    ceil_secs(to_end),
                    HintSource::RetryAfterSeconds,
                ));
            }
            Dialect::XRateLimit => {
                policies.push(
                    Quota::new(QuotaSource::XRateLimit)
                        .with_limit(CAPACITY as u64)
                        .with_remaining(remaining)
                        .with_reset(ceil_secs(until_full)),
                );
                if !allowed {
                    hint = Some(RetryHint::new(
                        ceil_secs(next_token),
                        HintSource::RetryAfterSeconds,
                    ));
                }
            }
            Dialect::LegacyNextToken => {
                policies.push(
                    Quota::new(QuotaSource::IetfSeparate)
                        .with_limit(CAPACITY as u64)
                        .with_remaining(remaining)
                        .with_reset(ceil_secs(next_token)),
                );
                if !allowed {
                    hint = Some(RetryHint::new(
                        Duration::from_secs_f64(next_token),
                        HintSource::ProblemRetryAfterMs,
                    ));
                }
            }
            _ => {}
        }
        let status = if allowed {
            StatusCode::OK
        } else {
            StatusCode::TOO_MANY_REQUESTS
        };
        (status, Signal::from_parts(hint, policies))
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Outcome {
    pub(super) sent: u64,
    pub(super) throttled: u64,
    pub(super) errors: u64,
    pub(super) elapsed: Duration,
}

struct Worker {
    client: usize,
    attempt: u32,
    started: Instant,
    pending: Option<Pending>,
}

/// Where a worker's send is.
enum Pending {
    /// On its way to the server (sent as send number `seq`).
    Out { ticket: InFlight, seq: u64 },
    /// Answered by the server, on its way back.
    Back(InFlight, StatusCode, Signal),
}

/// Runs `concurrency` workers until `successes` responses are 2xx.
pub(super) fn run(dialect: Dialect, config: Config, concurrency: usize, successes: u64) -> Outcome {
    run_herd(dialect, config, 1, concurrency, successes)
}

/// Runs `clients` independent engines (no shared state) with `concurrency`
/// workers each against one bucket until `successes` responses in total are 2xx.
pub(super) fn run_herd(
    dialect: Dialect,
    config: Config,
    clients: usize,
    concurrency: usize,
    successes: u64,
) -> Outcome {
    run_herd_until(
        dialect,
        config,
        clients,
        concurrency,
        Goal::Total(successes),
    )
}

/// When a herd run is over.
#[derive(Debug, Clone, Copy)]
pub(super) enum Goal {
    /// This many 2xx responses in total, from whichever client.
    Total(u64),
    /// This many 2xx responses for every client (as the comparison's herd of
    /// processes, each needing its own successes: the last one finishes alone).
    Each(u64),
}

pub(super) fn run_herd_until(
    dialect: Dialect,
    config: Config,
    clients: usize,
    concurrency: usize,
    goal: Goal,
) -> Outcome {
    run_staggered_herd(dialect, config, clients, concurrency, goal, Duration::ZERO)
}

/// As [`run_herd_until`], client `i` starting at `i × stagger` (processes
/// started one after another).
pub(super) fn run_staggered_herd(
    dialect: Dialect,
    config: Config,
    clients: usize,
    concurrency: usize,
    goal: Goal,
    stagger: Duration,
) -> Outcome {
    let engines: Vec<Engine> = (0..clients).map(|_| Engine::new(config.clone())).collect();
    let scope = Scope::new("sim");
    let base = Instant::now();
    let at = |d: Duration| base + d;
    let mut bucket = Bucket {
        tokens: CAPACITY,
        at: 0.0,
        opened: f64::NEG_INFINITY,
        log: std::collections::VecDeque::new(),
        counter: (i64::MIN, 0.0, 0.0),
    };
    let mut events: BinaryHeap<Reverse<(Duration, u64, usize)>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut workers: Vec<Worker> = (0..clients * concurrency)
        .map(|i| Worker {
            client: i % clients,
            attempt: 1,
            started: base,
            pending: None,
        })
        .collect();
    for (w, worker) in workers.iter().enumerate() {
        let start = stagger * worker.client as u32;
        events.push(Reverse((start, seq, w)));
        seq += 1;
    }
    let mut out = Outcome::default();
    let mut ok = 0;
    let mut ok_by_client = vec![0u64; clients];
    let mut steps = 0;
    while let Some(Reverse((now, _, w))) = events.pop() {
        steps += 1;
        assert!(
            steps < 1_000_000 && now < Duration::from_secs(120),
            "simulation ran away"
        );
        let worker = &mut workers[w];
        if let Goal::Each(n) = goal
            && ok_by_client[worker.client] >= n
            && worker.pending.is_none()
        {
            continue; // this client's process is done
        }
        let engine = &engines[worker.client];
        let next = match worker.pending.take() {
            None => match engine.admit(&scope, at(now)) {
                Admit::After { wait, .. } => {
                    // tokio's timer wakes on the next millisecond tick.
                    now + Duration::from_millis(wait.as_nanos().div_ceil(1_000_000) as u64)
                }
                Admit::Now(ticket) => {
                    out.sent += 1;
                    worker.pending = Some(Pending::Out { ticket, seq });
                    now + outbound(seq)
                }
            },
            Some(Pending::Out { ticket, seq: sent }) => {
                let (status, signal) = bucket.respond(now.as_secs_f64(), dialect);
                worker.pending = Some(Pending::Back(ticket, status, signal));
                now + inbound(sent)
            }
            Some(Pending::Back(ticket, status, signal)) => {
                if status == StatusCode::TOO_MANY_REQUESTS {
                    out.throttled += 1;
                }
                let attempt = Attempt::new(worker.attempt, true, worker.started);
                match engine.on_response(ticket, at(now), status, &signal, &attempt) {
                    Verdict::Return if status.is_success() => {
                        ok += 1;
                        ok_by_client[worker.client] += 1;
                        let done = match goal {
                            Goal::Total(n) => ok == n,
                            Goal::Each(n) => ok_by_client.iter().all(|&k| k >= n),
                        };
                        if done {
                            out.elapsed = now;
                            return out;
                        }
                        worker.attempt = 1;
                        worker.started = at(now);
                        now
                    }
                    Verdict::Retry { after, .. } => {
                        worker.attempt += 1;
                        now + after
                    }
                    _ => {
                        out.errors += 1;
                        worker.attempt = 1;
                        worker.started = at(now);
                        now
                    }
                }
            }
        };
        events.push(Reverse((next, seq, w)));
        seq += 1;
    }
    out
}

/// The original experiment's experiment (bucket of 20 refilled at 20/s, 100 successes)
/// in simulated time; the bounds are the must-show's where the dialect makes
/// them reachable (see the module docs of `pacer`).
#[test]
fn simulated_bucket_with_quota_headers_gets_no_refusal() {
    use Dialect::*;
    for dialect in [Policy, XRateLimit, LegacyNextToken, All] {
        for (concurrency, seed) in [1, 4].into_iter().flat_map(|c| (0..4).map(move |s| (c, s))) {
            let out = run(dialect, Config::default().rng_seed(seed), concurrency, 100);
            let case = format!("{dialect:?} c={concurrency} seed {seed}: {out:?}");
            // Out-of-order answers at c=4 can race for the last unit of the
            // first burst (each reading lags the others' sends): at most one
            // per worker, as the must-show allows.
            let refused = if concurrency == 1 {
                0
            } else {
                concurrency as u64
            };
            assert!(out.throttled <= refused, "{case}");
            assert_eq!(out.sent, 100 + out.throttled, "{case}");
            assert!(
                out.elapsed <= Duration::from_millis(4200),
                "{dialect:?} c={concurrency}: {out:?}"
            );
        }
    }
}

#[test]
fn simulated_bucket_with_hints_only_wastes_little() {
    use Dialect::*;
    for dialect in [MsHint, SecondsHint] {
        for seed in 0..8 {
            let config = || Config::default().rng_seed(seed);
            let out = run(dialect, config(), 1, 100);
            let case = format!("{dialect:?} seed {seed} c=1: {out:?}");
            assert!(out.sent <= 102, "{case}");
            assert!(out.elapsed <= Duration::from_millis(4200), "{case}");
            let out = run(dialect, config(), 4, 100);
            assert!(out.sent <= 108, "{dialect:?} seed {seed} c=4: {out:?}");
        }
    }
}

/// Bare 429s on the bucket: one refusal (or one per worker at c=4), then
/// the burst once per learned cycle, about as fast as the floor (4.0 s)
/// plus the first unhinted second's jitter.
#[test]
fn simulated_bucket_with_bare_refusals_wastes_one_per_worker() {
    for concurrency in [1, 4] {
        for seed in 0..4 {
            let out = run(
                Dialect::Bare,
                Config::default().rng_seed(seed),
                concurrency,
                100,
            );
            let case = format!("c={concurrency} seed {seed}: {out:?}");
            assert!(out.sent <= 100 + concurrency as u64, "{case}");
            assert_eq!(out.errors, 0, "{case}");
            assert!(out.elapsed <= Duration::from_millis(4600), "{case}");
        }
    }
}

#[test]
fn simulated_pacing_is_no_slower_than_retry_after_only() {
    for concurrency in [1, 4] {
        let polite = run(
            Dialect::Policy,
            Config::default().rng_seed(0),
            concurrency,
            100,
        );
        let hints_only = run(
            Dialect::Policy,
            Config::default().rng_seed(0).pacing(false),
            concurrency,
            100,
        );
        assert!(hints_only.throttled > 0, "{hints_only:?}");
        assert!(
            polite.elapsed <= hints_only.elapsed + Duration::from_millis(50),
            "{polite:?} vs {hints_only:?}"
        );
    }
}

/// Ten clients with no shared state on one quota (the comparison's herd):
/// they learn from refusals that they share it.
#[test]
fn simulated_herd_wastes_under_ten_percent_at_the_full_rate() {
    let out = run_herd(Dialect::Policy, Config::default().rng_seed(0), 10, 1, 1000);
    let wasted = (out.sent - 1000) as f64 / out.sent as f64;
    let rate = 1000.0 / out.elapsed.as_secs_f64();
    assert!(wasted <= 0.10, "{out:?}: {:.1} % wasted", wasted * 100.0);
    assert!(rate >= 0.9 * 20.0, "{out:?}: {rate:.1}/s");
}

/// A server whose `remaining` is counted before the request (off by one)
/// makes the mirror a unit optimistic; refusals must not starve the client.
#[test]
fn simulated_off_by_one_server_keeps_the_full_rate() {
    for concurrency in [1, 4] {
        let out = run(
            Dialect::PolicyOffByOne,
            Config::default().rng_seed(0),
            concurrency,
            200,
        );
        assert!(out.sent <= 210, "c={concurrency}: {out:?}");
        assert!(
            out.elapsed <= Duration::from_millis(9500),
            "c={concurrency}: {out:?}"
        );
    }
}

/// A short herd run: the transient while ten clients learn they share.
#[test]
fn simulated_short_herd_wastes_under_ten_percent() {
    let out = run_herd(Dialect::Policy, Config::default().rng_seed(0), 10, 1, 200);
    let wasted = (out.sent - 200) as f64 / out.sent as f64;
    assert!(wasted <= 0.10, "{out:?}: {:.1} % wasted", wasted * 100.0);
}

/// The comparison's herd: ten processes on one quota, each needing its own
/// ten successes, started one after another (milliseconds apart, as
/// processes are). Those started after the bucket ran dry find it empty
/// unless the first ones left a reserve; the last ones to finish are alone
/// on the quota and must take it back rather than keep pacing at the share
/// they were cut to. How the starts interleave with the refusals moves the
/// result by a few points (today 87–96 % of the quota, 103–109 sent), so the
/// bound is on the mean over many spacings, each run keeping its waste
/// bound.
#[test]
fn simulated_herd_of_processes_each_needing_ten() {
    for dialect in [
        Dialect::Policy,
        Dialect::All,
        Dialect::AllLocalEpoch { phase_ms: 0 },
        Dialect::AllLocalEpoch { phase_ms: 500 },
    ] {
        let spacings = [0, 2, 5, 8, 10, 15, 20, 30, 50, 80, 120, 200];
        let mut used = Vec::new();
        for stagger_ms in spacings {
            let stagger = Duration::from_millis(stagger_ms);
            let out = run_staggered_herd(
                dialect,
                Config::default().rng_seed(0),
                10,
                1,
                Goal::Each(10),
                stagger,
            );
            let case = format!("{dialect:?}, {stagger_ms} ms apart: {out:?}");
            let wasted = (out.sent - 100) as f64 / out.sent as f64;
            assert!(wasted <= 0.10, "{case}: {:.1} % wasted", wasted * 100.0);
            // What the bucket allowed in that time: its burst plus its refill.
            let allowed = CAPACITY + RATE * out.elapsed.as_secs_f64();
            used.push(100.0 / allowed);
            assert!(used[used.len() - 1] >= 0.85, "{case}: {used:?}");
        }
        let mean = used.iter().sum::<f64>() / used.len() as f64;
        assert!(mean >= 0.9, "{dialect:?}: {used:?}");
    }
}

/// The comparison's herd as it runs: ten processes needing twenty each
/// (about 200 successes). A client spending in step with one, a unit
/// between each two of its readings, once hid under the rounding's slack
/// at every reading: its units counted as drawn alone, the refusal read as
/// a window's end, the next reading short as a sliding log, paced by its
/// own sends only. The demo server's epoch reset, read as exact, had every
/// process take the bucket for a window at its first reading. The bound
/// is the must-show's, pooled over the spacings: one spacing alone may
/// still pass it by a little, most of that as the newcomers start (the
/// figures are in `docs/sweep.md`, step 14).
#[test]
fn simulated_herd_of_processes_each_needing_twenty() {
    for dialect in [
        Dialect::Policy,
        Dialect::All,
        Dialect::AllLocalEpoch { phase_ms: 0 },
        Dialect::AllLocalEpoch { phase_ms: 300 },
        Dialect::AllLocalEpoch { phase_ms: 700 },
    ] {
        let (mut sent, mut ok) = (0, 0);
        for stagger_ms in [0, 1, 2, 5, 8, 10, 15, 20, 30, 50] {
            let out = run_staggered_herd(
                dialect,
                Config::default().rng_seed(0),
                10,
                1,
                Goal::Each(20),
                Duration::from_millis(stagger_ms),
            );
            assert_eq!(out.errors, 0, "{dialect:?}, {stagger_ms} ms apart: {out:?}");
            sent += out.sent;
            ok += 200;
        }
        let wasted = (sent - ok) as f64 / sent as f64;
        assert!(
            wasted <= 0.10,
            "{dialect:?}: {sent} sent for {ok}: {:.1} % wasted",
            wasted * 100.0
        );
    }
}

/// `X-RateLimit-*` with an epoch reset and no window: the probe finds the
/// bucket refills continuously, so the client paces instead of waiting for
/// each (rounded-up) reset, whatever the phase of the second.
#[test]
fn simulated_bucket_with_epoch_reset_is_paced_after_a_probe() {
    for phase_ms in [0, 300, 700, 990] {
        for (concurrency, ms_hint) in [(1, false), (4, false), (1, true), (4, true)] {
            let dialect = Dialect::XRateLimitEpoch { phase_ms, ms_hint };
            let out = run(dialect, Config::default().rng_seed(0), concurrency, 100);
            let case = format!("phase {phase_ms} ms, c={concurrency}, ms hint {ms_hint}: {out:?}");
            assert!(out.sent <= 101, "{case}");
            assert_eq!(out.errors, 0, "{case}");
            assert!(out.elapsed <= Duration::from_millis(4300), "{case}");
        }
    }
}

/// A GitHub-like fixed window: the probe is refused once, then the client
/// waits for each window's reset (at most one refusal per window).
#[test]
fn simulated_fixed_window_refuses_at_most_once_per_window() {
    for phase_ms in [0, 300, 700] {
        for concurrency in [1, 4] {
            for seed in 0..8 {
                let dialect = Dialect::FixedWindowEpoch { phase_ms };
                let out = run(dialect, Config::default().rng_seed(seed), concurrency, 100);
                let case = format!("phase {phase_ms} ms, c={concurrency}, seed {seed}: {out:?}");
                let windows = (out.elapsed.as_secs_f64() / WINDOW).ceil() as u64;
                assert!(out.throttled <= windows, "{case}");
                assert_eq!(out.errors, 0, "{case}");
                // 100 at 20 per window: the fifth window is the last needed.
                // At c=4 a reading taken while our other requests are in
                // flight cannot tell whether the server counted them (it
                // may count concurrent requests in any order), so the last
                // unit of a window is sometimes left: one window more.
                let windows = if concurrency == 1 { 5.0 } else { 6.0 };
                assert!(out.elapsed.as_secs_f64() < WINDOW * windows, "{case}");
            }
        }
    }
}

/// The sliding log with IETF fields: one refusal (it shows the window),
/// then the next window opening short of the limit shows the log, and the
/// client sends as its own sends leave it. Before: read as a fixed window,
/// each wait for a reset found part of the last burst still in the log,
/// about 5.0 s at every seed. The floor is 4.0 s (the 81st request can go
/// when the first leaves, 4 windows later); the first burst's last units,
/// paced at the policy rate before the refusal, keep their spacing in
/// every window after it (about 0.1 s). At c=4 a newer send's answer can
/// carry an older count (the server counted it first), a unit the log has
/// not given back: up to the 100 + C (104 at seed 1, measured).
#[test]
fn simulated_sliding_log_with_policy_fields_refuses_once() {
    for concurrency in [1, 4] {
        for seed in 0..4 {
            let out = run(
                Dialect::SlidingLogPolicy,
                Config::default().rng_seed(seed),
                concurrency,
                100,
            );
            let case = format!("c={concurrency} seed {seed}: {out:?}");
            let most = if concurrency == 1 {
                101
            } else {
                100 + concurrency as u64
            };
            assert!(out.sent <= most, "{case}");
            assert!(out.elapsed <= Duration::from_millis(4200), "{case}");
        }
    }
}

/// Windows with `X-RateLimit-*` (epoch reset read against the local clock,
/// no window length) and a precise hint on a 429. Opened by the client's
/// first request, each window ends up to a second before its whole-second
/// reset: the first refusal's hint shows it off the grid and measures its
/// length, so every window after it is met at its end (before: up to a
/// second late each). On the clock's grid, the hint agrees with the reset:
/// nothing changes. A window opened just before a whole second (phases
/// 920–990 ms) is on the grid by chance: its length is tried once a later
/// window's reset shows the rounding (before: 7.0–7.1 s, 2 s per window).
#[test]
fn simulated_epoch_windows_are_met_at_their_end() {
    let mut missed = Vec::new();
    for first_request in [true, false] {
        for phase_ms in [0, 300, 700, 920, 960, 990] {
            for concurrency in [1, 4] {
                for seed in 0..4 {
                    let dialect = Dialect::EpochWindow {
                        first_request,
                        phase_ms,
                    };
                    let out = run(dialect, Config::default().rng_seed(seed), concurrency, 100);
                    // 101 sent; aligned windows entered 10 ms before a
                    // boundary by 4 tasks at once send 103 (measured),
                    // within the 100 + C.
                    let most = if first_request || phase_ms < 990 {
                        101
                    } else {
                        100 + concurrency as u64
                    };
                    if out.sent > most || out.elapsed > Duration::from_millis(4300) {
                        missed.push(format!("{dialect:?} c={concurrency} seed {seed}: {out:?}"));
                    }
                }
            }
        }
    }
    assert!(missed.is_empty(), "{missed:#?}");
}

/// The sliding window counter with IETF fields: its reset (up to two
/// windows) is no fixed window's end, and after one refusal the client
/// paces at the 19 per window the counter sustains. Before: held until each
/// 2 s reset as a fixed window (10.0 s on the demo server), then, paced at
/// the policy rate, 105 sent. The floor (a client sending the instant the
/// counter admits) is the first window's rest plus 4.16 s. Entered at a
/// window's start (phase 0), the first refusal's hint ends at the next
/// boundary, where the mirror, refilled while the retry waited, sends
/// more than the counter's first unit: one more refusal (102, measured).
#[test]
fn simulated_sliding_window_counter_is_paced_below_its_limit() {
    let mut missed = Vec::new();
    for phase_ms in [0, 300, 700, 950] {
        for concurrency in [1, 4] {
            for seed in 0..4 {
                let dialect = Dialect::CounterPolicy {
                    phase_ms,
                    seconds: false,
                };
                let out = run(dialect, Config::default().rng_seed(seed), concurrency, 100);
                let floor = Duration::from_millis(1000 - phase_ms + 4158);
                let most = if phase_ms == 0 { 102 } else { 101 };
                if out.sent > most || out.elapsed > floor.mul_f64(1.1) {
                    missed.push(format!("{dialect:?} c={concurrency} seed {seed}: {out:?}"));
                }
            }
        }
    }
    assert!(missed.is_empty(), "{missed:#?}");
}

/// The sliding window counter with no quota fields. Its first refusal's
/// whole-second hint is a fixed window's (`ceil(to_end + 50 ms)`), so the
/// learned cycle bursts; the counter refuses the next burst partway (the
/// previous window's count weighs on it), and from then on the client
/// trickles at the cycle's burst less one unit (19/s). Before: a burst per
/// cycle, refused partway every cycle (past phase 0, seeds 0 and 1:
/// 105–107 sent at c=1, 110–128 at c=4, 5.0–8.0 s). Two refusals (up to C requests each in flight at c=4)
/// are the least a client that bursts on a fixed window spends here: up to
/// its second refusal the counter answers as a fixed window would. Entered
/// at a window's start (phase 0) the first hint is 2 s and the counter
/// comes back whole every 2 s: a cycle it never refuses (8.1 s, as the
/// plain `Retry-After` client's 8.0 s on the demo server), and bare, the
/// first retry 1 s later is refused too: the retry 2 s after that measures
/// a 3 s cycle, which was paced for good (12.4–12.8 s). A probe per cycle
/// now narrows it between the 1 s refused and the 3 s measured
/// (`pacer/refine.rs`): one refusal more, 8.6–9.0 s.
#[test]
fn simulated_sliding_window_counter_without_fields_trickles_after_a_refused_burst() {
    let mut missed = Vec::new();
    for hint in [true, false] {
        for phase_ms in [0, 300, 700, 950] {
            for concurrency in [1, 4] {
                for seed in 0..3 {
                    let dialect = Dialect::CounterHints { phase_ms, hint };
                    let out = run(dialect, Config::default().rng_seed(seed), concurrency, 100);
                    let narrowing = u64::from(phase_ms == 0 && !hint);
                    let most = 100 + 2 * concurrency as u64 + narrowing;
                    let slowest = match (phase_ms, hint) {
                        (0, true) => Duration::from_millis(8300),
                        (0, false) => Duration::from_millis(9300),
                        _ => Duration::from_millis(6500),
                    };
                    if out.sent > most || out.elapsed > slowest {
                        missed.push(format!("{dialect:?} c={concurrency} seed {seed}: {out:?}"));
                    }
                }
            }
        }
    }
    assert!(missed.is_empty(), "{missed:#?}");
}

/// The same counter with IETF fields but `Retry-After` in whole seconds (a
/// common pairing): each refusal costs a whole second. Read as up to
/// `R + 1` (a bucket's fraction), `remaining: 0` let one more go a moment
/// later, refused, every window: 101–110 requests (mean 106.6 over these
/// 24 runs). With `R` alone after such a refusal: mean 102.4, and 101 in
/// 15 of 24 runs. The rest are refusals of the first send after a burst
/// of reported units: the counter's room then comes back at the previous
/// window's weight, which the client cannot see (the 101 / 100 + C
/// is missed there; on the demo server and `must_show`'s mock the plain
/// `Retry-After` client sent 107–132).
#[test]
fn simulated_sliding_window_counter_with_whole_second_hints_reads_remaining_as_a_floor() {
    let mut sent = Vec::new();
    for phase_ms in [0, 300, 700, 950] {
        for concurrency in [1, 4] {
            for seed in 0..3 {
                let dialect = Dialect::CounterPolicy {
                    phase_ms,
                    seconds: true,
                };
                let out = run(dialect, Config::default().rng_seed(seed), concurrency, 100);
                assert!(
                    out.sent <= 108,
                    "{dialect:?} c={concurrency} seed {seed}: {out:?}"
                );
                sent.push(out.sent);
            }
        }
    }
    let mean = sent.iter().sum::<u64>() as f64 / sent.len() as f64;
    assert!(mean <= 103.0, "mean {mean}: {sent:?}");
}
