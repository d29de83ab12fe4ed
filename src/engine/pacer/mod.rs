//! Pacing: a local mirror of the server's quota, so a client slows down
//! *before* the server has to refuse it.
//!
//! | kind of quota | recognised by | paced by |
//! |---|---|---|
//! | bucket refilled continuously, policy stated (`q`/`w`) | the policy fields; no refusal while alone | the mirror refilled at `q / w` (below, 1), less a reserve for newcomers (`sharing.rs`) |
//! | the same quota spent by others too | `remaining` falling faster than we spend, or a refusal once others were seen | our share of the rate (`sharing.rs`) |
//! | fixed window, policy stated | readings that show no refill at the policy rate while we alone drew it down (`drawdown.rs`), or a refusal then (`window.rs`) | spend the window, then wait for the earliest end its readings guarantee (`window.rs`), or a refusal's precise hint's end, where one unit is lent (`promise.rs`) |
//! | sliding log, policy stated or a window length measured by a precise hint | a window as above, whose next one opens short of the limit, or counts fewer of our sends than it, while nobody else was ever seen | at most `limit` of our sends in any `w`, each counted from its answer, and the units a reading reports (below, 7; `cycle.rs`) |
//! | sliding window counter, policy stated (two fixed windows, the previous weighted by its overlap) | a reset further than one window (`within_a_window`): no fixed window's end | the mirror refilled at `q / w`; once a lone client is refused, at `(q − 1) / w`, what the counter sustains (module docs, 6) |
//! | quota without a window (`X-RateLimit-*`, legacy fields) | a probe at the linear-refill instant (`refill.rs`; a refusal once we had spent the quota teaches no rate before it) | the observed refill rate; a refused probe: fixed windows, as above, and, when the refusal's precise hint ends well before the whole-second reset (or a later window's reset shows that it agreed by chance), windows of the length it measured (`window.rs`); a window ends at a refusal's precise hint ending over a second before the reset, or at its whole-second hint a second or more shorter than its own reset; a window opening spent (after a whole-second hint, any window opening short: no log is measured then): probed once more, a success paced at `limit − 1` per `limit` of the observed rate (a counter) |
//! | no quota, hints that name the next unit (`retry_after_ms`, `Retry-After` of two seconds or more) | refusals only | the rate and burst learned from refusals (below, 2); a window once a second refusal ends a burst spent within the learned cycle, or once the burst comes back faster than one unit per hint (`learned.rs`) |
//! | no quota, `Retry-After` of one second or bare 429s | a refused burst, then a success after the wait | the burst once per learned cycle, from the first success of each (below, 2; `learned.rs`) |
//! | concurrency limit: at most K requests in service (the engine's `concurrency.rs`, beside this pacer) | refusals outlasted by sends of ours served longer than a refusal's round trip allows; refuted by a lone send refused, or by a precise hint outlasting every service of ours | at most K of ours in flight; a refusal it explains waits its own hint, pausing nobody; a rate learned only from its refusals is dropped |
//! | a leaky bucket read as `used/size` (Shopify's call limit; the engine's `drain.rs`, beside this pacer) | its header | a policy of `size` per `size / r`, `r` the drain the readings measure (the parser's assumed drain a prior), no reset; while a drain is measured, a fixed window or sliding log recognised before is set aside |
//! | a quota in another unit (tokens, points, bytes; the engine's `metered.rs`, beside this pacer) | its unit | each send reserves its cost, declared or estimated from the quota's fall per request; a window until the readings show a bucket |
//! | no quota, a burst that does not come back whole (a sliding window counter, a window longer than the cycle, others spending) | a refusal while the learned cycle let the send go | one unit at a time at the cycle's burst less one per cycle, halved by each refusal after that, down to one unit per cycle (below, 2; `learned.rs`) |
//!
//! The mirror is a token estimate `E` that refills at a rate and is spent one
//! unit per send (so requests in flight are reserved: C concurrent tasks do
//! not all spend the last unit). A refusal empties it; a send that was in
//! flight then and is refused too took no unit, and gives back the one
//! reserved for it, up to that empty quota (`Pacer::refused_in_flight`:
//! after a first burst of 8 at a limit of 2, five units reserved for
//! sends that took none held the next send five units' time too long).
//! Where the numbers come from, best first:
//!
//! 1. **The server's quota.** `remaining` re-syncs `E` after each response;
//!    the policy (`limit` per `window`, e.g. `RateLimit-Policy: 20;w=1`)
//!    gives the refill rate `limit / window` and the capacity `limit`.
//!    Because a server rounds its fractional tokens down, the truth after a
//!    response saying `R` lies in `[R − n, R + 1)` (n = our other requests in
//!    flight, which it may not have counted yet: a server handling requests
//!    concurrently may count an older one after a newer one); `E` is
//!    clamped into that range rather than overwritten, so the fraction we
//!    know survives and timer lateness does not accumulate. The price, at
//!    concurrency 4, is a window's last unit left unspent now and then. A
//!    mirror above the range knew no fraction (it overestimated), and
//!    where a refusal costs a whole-second hint it takes the range's low
//!    end, not a unit the server may not have (`used/size` meters draining
//!    slower than the parser's prior: 17 requests for 12 successes, 15).
//! 2. **The server's refusals**, when it states no policy. A throttled
//!    response means the bucket is empty *now*. Between two refusals every
//!    success spent a unit refilled in between, so `successes / span` is the
//!    rate (span measured between the instants each hint pointed to). The
//!    first refusal alone gives `successes before it / hint` when its hint
//!    is too coarse to name the next unit's instant (`Retry-After: 1`: a
//!    bucket's next unit and a window's end look alike then). A hint that
//!    names it (finer than a second, or at least two seconds of whole
//!    seconds: `Hint::names_next_unit`) promises one unit, the
//!    next: one unit per hint, and the burst comes back as the server shows
//!    it while its return is awaited: the first success lets one more go
//!    (is more than the promised unit back?), each after it two more (TCP's
//!    slow start), up to the burst, until the return outruns any bucket and
//!    is paced as a window (`learned.rs`). A bucket refilling one unit per
//!    hint costs one refusal then, not the burst less one at once.
//!    A refusal that ends a spent burst also bounds the quota's *cycle*:
//!    the burst came back whole by the instant the hint pointed to (or, for
//!    a bare refusal, by the next success), counted from the burst's first
//!    success. A whole-second hint cannot tell a bucket's next unit from a
//!    window's end, and a bare refusal tells nothing, so once the success
//!    after it confirms the cycle the burst is spent once per cycle (point
//!    6's learned windows). Its first return is shown, not assumed: the
//!    success after the pause shows one unit back, no more (a bucket's
//!    burst is not back whole), so one more send goes per success, then
//!    two (slow start, as after a precise hint), until the whole burst is
//!    back; a bucket refuses one send of it, not every one in flight, and
//!    is trickled (below). A bare refusal before any
//!    cycle is known waits [`Config::unhinted_wait`](crate::Config::unhinted_wait).
//!    A refusal while the cycle let the send go says the burst does not
//!    come back whole (a sliding window counter refuses a burst at a
//!    window's start, its previous window's count weighing on it): from
//!    then on the client trickles, one unit at a time at `(burst − 1) /
//!    cycle` (what a counter sustains), halved by each refusal after that
//!    (down to one unit per cycle) and grown back by a burst's share of
//!    it per success. On the demo server's counter with `Retry-After`
//!    only: 105/116 requests for 100 successes (c=1/c=4) before, 102/105–107
//!    after; bare 429s: 108/126 before, 102/108 after.
//!
//! 3. **Sharing.** A refusal although the policy rate said a unit was there
//!    means others spend the same quota (other processes on one API key).
//!    The share of the policy rate used to refill `E` is then cut to a tenth
//!    and grows back additively with each success (AIMD, as TCP and the AWS
//!    SDKs' adaptive mode do), and only that share of a reported `remaining`
//!    is claimed (the rounding unit included, so ten clients that each read
//!    `remaining: 5` do not all take "the last one"). Sharing also shows
//!    before any refusal: when `remaining` fell by more than we spent between
//!    two responses, others spent the rest, and our share is at most what our
//!    spending was of the whole. A client that is alone loses little:
//!    `remaining` re-syncs `E` upward as the server refills. When
//!    `remaining` rises between two responses although we spent from it and
//!    the quota is at least a quarter full, the others slowed down or left:
//!    the share doubles (else the clients cut hardest would pace at a
//!    twentieth of the rate long after the others are gone). The constants
//!    were chosen on the simulated herd (ten clients, one bucket of 20 at
//!    20/s): a cut to 0.5 wastes 20 % of 250 requests, 0.1 wastes 7 %; an
//!    off-by-one server (`remaining` counted before the request) still gets
//!    its full rate. Only the latest count is compared: the answer to one
//!    of our sends that was in flight when the latest count came, reading
//!    higher, is a count made before it (`counted.rs`).
//!
//! 4. **A reserve for newcomers.** A process that starts knows nothing, so
//!    its first request is refused whenever the others have spent the last
//!    unit. So a continuously refilled quota (a policy rate) is spent down
//!    to [`RESERVE`] units only (at most a tenth of the limit), until one
//!    second of `remaining` showing nobody else spending says the client is
//!    alone; then the reserve is spent too. That costs a lone client nothing
//!    but the wait for that second (the reserve refills meanwhile). With the
//!    doubling above, it spared the comparison's herd of ten processes
//!    refused requests and let it use more of the quota.
//!
//! 5. **Probing, then observed refills**, for a quota without a window
//!    (`X-RateLimit-Limit/Remaining/Reset`): nothing says whether the server
//!    refills continuously (a token bucket whose reset is "full again") or in
//!    fixed windows (GitHub's hourly limit). When `E` is spent with `limit`
//!    L and reset R, the linear-refill hypothesis says one unit comes back
//!    every R / L: one request (the probe) is sent then, the others wait. If
//!    it succeeds, refills are continuous: the client paces at L / R (an
//!    epoch reset against a whole-second `Date` overstates R by up to 2 s,
//!    so this errs slow; units it leaves in the bucket show up in `remaining`
//!    and are spent at once), and then at the rate its readings show: between
//!    two readings at least a span apart, the server refilled `r2 − r1 +
//!    successes − 1` units or more (each reading is a floor). A refusal
//!    halves that rate. If the probe is refused, or a refusal comes before
//!    any refill was seen (the success taken for the probe's may have been
//!    an earlier request's), the server counts in fixed windows: the client
//!    waits for each reset, as without probing. That costs at most one or
//!    two refused requests, once per scope. A window read so that opens
//!    with a unit left at most did not come back at a boundary (a sliding
//!    window counter's previous window weighs on it): it is probed once
//!    more, and paced at what a counter sustains of the rate observed
//!    (`limit − 1` per window) if units come back at about the linear
//!    rate (`refill.rs`). A refusal after that probe's success halves the
//!    rate: no probe is left to undo a verdict of windows. After a
//!    whole-second hint, any window opening short of what a fixed window
//!    holds at its start is probed so (such a hint measures no log; as on
//!    `must_show`'s counter with `X-RateLimit-*` and `Retry-After`
//!    seconds). A refusal's precise hint ending over a second before the
//!    end a whole-second reset names ends the window there: no fixed
//!    window ends so early (`window.rs`; as on the counter with
//!    `RateLimit-Reset`, whose reset names its two-window end). A reset of any
//!    length is probed: a sliding window counter's reset names the end of
//!    its two-window weight, and waiting for it loses up to a window
//!    however long the window is; a fixed window pays one refused probe
//!    per scope, unless its dialect documents it as one
//!    ([`Quota::fixed_window`](crate::signal::Quota::fixed_window):
//!    GitHub's hourly limit), which is waited out unprobed.
//!
//! 6. **Fixed windows.** A window refills all at once at a boundary; a
//!    mirror refilled at `limit / window` runs into the window's end and
//!    reads the refusal as others sharing the quota (cutting its share to a
//!    tenth: 1.6–2× slower than a plain `Retry-After` client). Two things
//!    show the quota's kind once we alone drew down half the limit or
//!    more: readings with fewer units back than the policy rate guarantees
//!    a bucket (`drawdown.rs`: bounds that hold in whatever order the
//!    server counted our requests; only while nobody else was ever seen
//!    spending), before the refusal a window's last paced units run into,
//!    and that refusal (every reading in between showing nobody else).
//!    Then the window
//!    is spent at once (no reserve: unspent units are lost at the boundary),
//!    then the client waits for the earliest `received + reset` among the
//!    window's readings (`window.rs`), less the legs of a round trip (a
//!    refusal's, which no service lengthens): the send that opens the next
//!    window arrives at its end, not a round trip after it. A refusal whose
//!    whole-second hint ends later than that pauses the scope to that end
//!    only; its own request waits its hint (the engine's `state.rs`; a 1 s
//!    window opened by the first request with `X-RateLimit-*`, 100 ms
//!    round trips, c=4: 4.53 s for 80 successes, 1.29× its floor; 3.79 s,
//!    1.08×, after). Whole-second resets make that the
//!    window's end plus under a second for a clock-aligned window, and plus
//!    a round trip for one opened by our own first request; an epoch reset
//!    read against a local clock that agrees with `Date` (see
//!    `signal::fields::Clock`) locates a clock-aligned boundary to a round
//!    trip too. A refusal's precise hint (`retry_after_ms`) ending before
//!    that end and more than one unit's time at the rate away names a
//!    clock-aligned boundary to the millisecond, which whole-second resets
//!    do not: one unit is lent then, and the answer to the send it lets go
//!    opens the next window if it reads whole; any other answer ends
//!    lending for the scope (`promise.rs`; as on the demo server's
//!    clock-aligned window with IETF fields). Where several dialects
//!    describe one quota, the tightest reset is used. Within a window
//!    `remaining` only falls (as the mirror
//!    assumes until a probe shows a refill): at concurrency above one, a
//!    higher count whose precise reset names the same end as the lowest
//!    read (even in the answer to an older send) was counted before it and
//!    answered late; re-synced from, it would lift the mirror a unit above
//!    what is left (`window.rs`). The other way round, the mirror synced
//!    from the latest count keeps a unit back for each of our sends then
//!    in flight; one answered since with a higher count was counted before
//!    it, and its unit is given back (`counted.rs`). A reset further than one
//!    stated window (rounded up to whole seconds) is no fixed window's end:
//!    a sliding window counter's quota is whole again only once the current
//!    window's count has left the weighted pair, up to two windows away.
//!    Such a quota is neither held until its reset nor learned as a window
//!    from a refusal (read as one, 100 successes at 20 per second took
//!    10.0 s on the demo server, where the plain `Retry-After` client took
//!    8.0 s and the floor is about 5 s). A refusal while we alone drew it down
//!    shows the counter's own limit instead: a full window weighs its whole
//!    count into the next one at its start, which admits its last unit only
//!    at its very end, so `limit − 1` per window is what lasts, and the
//!    mirror refills at that (on the demo server, 105 sent for 100
//!    successes at the policy rate, 101 at this one). Refused with a
//!    whole-second hint, a counter's `remaining` is read as all it holds,
//!    not up to a unit more as a bucket's fraction: there a refusal costs
//!    a second.
//!
//! 7. **Sliding logs.** A log of the last `w`'s requests gives each unit
//!    back `w` after the request that took it, not all at once: read as a
//!    fixed window (point 6), the client waits for the first reading's
//!    `reset`, finds part of the quota still held by the rest of the last
//!    burst, and waits a whole `w` again (5 s instead of 4 for 100 requests
//!    at 20 per second). A fixed window's next window opens with the limit
//!    less the request it answers ([`SLIDING_SLACK`]) and those in flight,
//!    and ends having counted as many of our sends as its limit; one that
//!    opens shorter than that, or reads fewer units than the limit less
//!    every send of ours it may have counted, with
//!    nobody else ever seen spending, is a sliding log: from then on the
//!    client keeps at most `limit` of its own sends in any span of `w`
//!    (each counted from its success, when the server surely counted it; a
//!    refused send holds no unit), and spends at once the units a reading
//!    reports, less those its requests in flight may take (nothing refills
//!    in between). Without a stated window, `w` is the length a refusal's
//!    precise hint measured (`window.rs`; on the demo server's log with
//!    `X-RateLimit-*` at c=1, a window opened a few milliseconds before
//!    most of the last burst had left, and holding it to its end could cost
//!    a second). Beside whole-second resets, which cannot tell a window off
//!    the clock's grid, the first precise hint's span from its burst's
//!    first success (a clock-aligned window opens whole alone, so only a
//!    log's is used; with `RateLimit-Reset` at c=4, a second could be lost
//!    without it).
//!
//! With no rate at all otherwise, `E` is spent down and then the client waits
//! for the reset. When the reset is far later than the rate explains (more
//! than one second of rounding beyond the next unit, and beyond the time to
//! full again: GitHub-style resets count to full), or a probe was
//! refused, the server counts in fixed windows: nothing refills before the
//! reset.
//!
//! A wait the pacer computes is a bound from what it knew then: the engine
//! wakes the requests waiting on a scope when a response makes a send
//! possible that was not before it (`Pacer::ready`).
//!
//! Spreading "what remains over the time to reset" is what refilling at
//! `limit / window` does; doing it without a window would pace a token bucket
//! (whose reset is often "time until full") ten times slower than it allows.

use std::time::{Duration, Instant};

mod counted;
mod cycle;
mod drawdown;
mod learned;
mod promise;
mod refill;
mod refine;
mod sharing;
mod window;

use super::hint::Hint;
use super::kind::QuotaKind;
use super::time::{is_whole_seconds, later, wait_from_secs};
use counted::Counted;
use cycle::Cycle;
use drawdown::Drawdown;
use learned::Learned;
use promise::Promise;
use refill::{AgainOpened, Reading, Refill};
use refine::Refine;
use sharing::Sharing;
use window::Window;

/// Tolerance on token arithmetic (float rounding at slot boundaries).
const EPSILON: f64 = 1e-6;
/// Waits aim for one unit plus this much (1 ms at 20/s): a mirror exactly in
/// step with the server would otherwise arrive a hair before its refill.
const SAFETY: f64 = 0.02;
/// A reset this much beyond what the rate explains means fixed windows
/// (`Retry-After`/`t` are whole seconds, so up to 1 s of rounding is normal).
const ROUNDING: Duration = Duration::from_secs(1);
/// The claim ceiling `(remaining + 1) · share` is exclusive: a server
/// saying `R` has strictly less than `R + 1` units.
const HIGH_MARGIN: f64 = 1e-3;
/// Without quota numbers, a refusal after this fraction of the learned burst
/// was spent since the previous one means the quota comes back in windows.
const BURST_SPENT: f64 = 0.5;
/// A window's first reading short of the limit by more than our requests in
/// flight plus this many units (the request it answers) means the units did
/// not come back at once: a sliding log (module docs, 7). A window's
/// counter is an integer: no rounding to allow for.
const SLIDING_SLACK: u64 = 1;
/// Refusals further apart than this start a new rate measurement.
const MEASURE_HORIZON: Duration = Duration::from_secs(30);

/// Quota numbers of one response, already reduced to what pacing needs.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct QuotaReading {
    pub(crate) remaining: Option<u64>,
    pub(crate) limit: Option<u64>,
    pub(crate) window: Option<Duration>,
    pub(crate) reset: Option<Duration>,
    /// How far `reset` may be from the truth when coarser than its own
    /// unit (an epoch read against a whole-second `Date`: two seconds);
    /// `None`: its unit (a second for whole seconds).
    pub(crate) reset_precision: Option<Duration>,
    /// The engine's number for the send this reading answers.
    pub(crate) seq: Option<u64>,
    /// The dialect says the quota comes back whole at its reset
    /// (`Quota::fixed_window`).
    pub(crate) fixed_window: bool,
    /// How much earlier than a window's end a send may leave and still
    /// reach the server after it: the legs of a round trip (the reading
    /// came back one leg after the server counted, and a send takes one
    /// to arrive), less their spread; zero before a refusal measured them
    /// (the engine's `ScopeState::window_lead`).
    pub(crate) lead: Duration,
    /// How long before it was received the server may have stated it: the
    /// round trip of the send it answers (zero when unknown).
    pub(crate) age: Duration,
}

impl QuotaReading {
    /// How far the reset may be from the truth: the precision stated, else
    /// its unit (whole seconds are rounded by up to [`ROUNDING`], a finer
    /// reset is taken as exact).
    fn precision(&self) -> Duration {
        self.reset_precision.unwrap_or(match self.reset {
            Some(reset) if is_whole_seconds(reset) => ROUNDING,
            _ => Duration::ZERO,
        })
    }
}

#[derive(Debug, Clone, Copy)]
struct Estimate {
    tokens: f64,
    at: Instant,
    reset_at: Option<Instant>,
    /// No refill before `reset_at` (fixed-window semantics).
    barrier: bool,
}

/// The per-scope pacing state.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pacer {
    estimate: Option<Estimate>,
    policy_rate: Option<f64>,
    policy_capacity: Option<f64>,
    learned: Learned,
    cycle: Cycle,
    /// The learned cycle's lower bound, and the probe narrowing it.
    refine: Refine,
    drawdown: Drawdown,
    sharing: Sharing,
    window: Window,
    /// The latest count read and our sends in flight then (`counted.rs`).
    counted: Counted,
    refill: Refill,
    /// The rate of a continuously refilled quota without a window.
    observed_rate: Option<f64>,
    /// Where the current measurement of observed refills starts.
    first_reading: Option<Reading>,
    /// The last `remaining` read, until its response's status is known.
    last_reading: Option<(Instant, u64)>,
    /// The last refusal came when the mirror of a quota without a window
    /// had spent it, before a probe told how it refills (see [`Self::rate`]).
    spent_unprobed: bool,
    /// A quota read as fixed windows after its refused probe was probed
    /// once more, its next window having opened short: the reading that
    /// opened that window (`refill.rs`; see [`Self::probed_again`]).
    again_opened: Option<AgainOpened>,
    /// The last reading's reset was further than one stated window: no
    /// fixed window's end (see [`Self::within_a_window`]).
    reset_beyond_window: bool,
    /// A lone client was refused while the reset was beyond one window: a
    /// sliding window counter, which sustains one unit less than its limit
    /// per window (see [`Self::rate`]).
    counter: bool,
    /// The last refusal's hint was whole seconds, or none: a refusal costs
    /// at least a second (see [`Self::sync`]).
    coarse_hints: bool,
    /// The unit a refusal's precise hint promised at its end
    /// (`promise.rs`).
    promise: Promise,
    successes: u64,
    /// The most units a reading showed, with the sends of ours then out
    /// (the server may have counted them) and its fraction: a bucket may
    /// hold that many (`reset_refutes_bucket`).
    most_read: u64,
    /// The stated rate is a drain the engine measured (`drain.rs`): units
    /// come back at it, so a refusal is no window's end.
    drains: bool,
    /// The first send admitted once a policy was read: the ones before it
    /// left blind (`Self::own_burst`).
    paced_from: Option<u64>,
    /// The send the latest refusal answered.
    refused_seq: Option<u64>,
    /// Sends admitted, and refused, ever.
    sends: u64,
    refusals: u64,
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// Whether a window's first reading, `remaining` with `others` of our
/// requests in flight, shows fewer units than a fixed window holds at its
/// start: the limit less the request it answers ([`SLIDING_SLACK`]) and
/// those in flight.
fn opens_short(remaining: u64, others: u32, limit: u64) -> bool {
    remaining
        .saturating_add(u64::from(others))
        .saturating_add(SLIDING_SLACK)
        < limit
}

impl Pacer {
    /// Units per second: from the policy, else observed (a probed quota
    /// without a window, read from its own numbers), else learned from
    /// refusals. A quota without a window (`X-RateLimit-*`) refused once
    /// the mirror had spent it is probed before a rate is learned from
    /// that refusal: it ended our own burst in flight (concurrent requests
    /// spending the last units) and says nothing of how units come back; a
    /// rate from its hint would pace a window as a bucket, or wait out a
    /// bucket's "full again" as a window's end. (A refusal while the quota
    /// showed units left, such as GitHub's secondary limit, teaches the
    /// rate at once.)
    pub(crate) fn rate(&self) -> Option<f64> {
        match self.policy_rate {
            // A full window weighs its whole count into the next one at its
            // start, and less as it ends: the next admits its last unit only
            // at its very end, so `limit − 1` per window is what lasts.
            Some(policy) if self.counter => {
                Some(policy * self.sharing.share() * self.counter_sustains())
            }
            Some(policy) => Some(policy * self.sharing.share()),
            // A quota without a window that came back piecemeal after its
            // refused probe (`Self::judge_refill`) is a counter's, as far as
            // its readings show: its observed rate includes a window that
            // followed a short one, more than it sustains.
            None => self
                .observed_rate
                .map(|rate| {
                    if self.probed_again() {
                        rate * self.counter_sustains()
                    } else {
                        rate
                    }
                })
                .or(self.learned.trickle())
                .or(self
                    .learned
                    .rate()
                    .filter(|_| !self.spent_unprobed || self.refill.windowed())),
        }
    }

    /// Whether the stated rate is a drain the engine measured
    /// (`drain.rs`), not a policy that may hide fixed windows.
    pub(crate) fn set_drains(&mut self, drains: bool) {
        self.drains = drains;
    }

    /// Whether a response stated the quota's limit: the pacer then knows
    /// more than what refusals taught it.
    pub(crate) fn reads_quota(&self) -> bool {
        self.policy_capacity.is_some()
    }

    /// Whether the quota was probed once more (`refill.rs`).
    fn probed_again(&self) -> bool {
        self.again_opened.is_some()
    }

    /// The fraction of its limit per window a sliding window counter
    /// sustains: `limit − 1` (a limit of 1: half).
    fn counter_sustains(&self) -> f64 {
        let limit = self.policy_capacity.unwrap_or(1.0).max(1.0);
        (limit - 1.0).max(0.5) / limit
    }

    /// The most units the mirror holds: the policy's limit, else one
    /// while trickling (no bursts: `learned.rs`), else the learned burst.
    fn capacity(&self) -> Option<f64> {
        self.policy_capacity
            .or(self.learned.trickle().map(|_| 1.0))
            .or(self.learned.capacity())
    }

    fn capped(&self, tokens: f64) -> f64 {
        match self.capacity() {
            Some(cap) => tokens.min(cap.max(1.0)),
            None => tokens,
        }
    }

    /// The estimated units available at `now`; `None` when nothing is known.
    fn available(&self, now: Instant) -> Option<f64> {
        let est = self.estimate?;
        match self.rate() {
            Some(rate) => {
                let barrier = est.reset_at.filter(|_| est.barrier);
                if barrier.is_some_and(|r| now < r) {
                    return Some(if self.promise.due(now) {
                        est.tokens.max(1.0)
                    } else {
                        est.tokens
                    });
                }
                let refill = rate * secs(now.saturating_duration_since(est.at));
                let refilled = self.capped(est.tokens + refill).max(est.tokens);
                // Past a barrier (a fixed window's end) of a quota without a
                // stated rate, a unit is surely back: the request it lets go
                // brings the new window's reading, which re-syncs the mirror.
                // A rate learned from refusals (one unit per whole-second
                // hint after a refused probe) says nothing of a window's
                // size and alone held the first unit back up to a second.
                // Not the whole limit: a sliding window counter's next
                // window opens short (its previous one weighs on it) and
                // refuses the burst (as `must_show`'s counter with
                // `X-RateLimit-*` did at concurrency 4). With a
                // stated policy the mirror refills a window's worth per
                // window, and does not burst units a sliding log gives back
                // one by one.
                let one_back = barrier.is_some() && self.policy_rate.is_none();
                Some(if one_back {
                    refilled.max(1.0)
                } else {
                    refilled
                })
            }
            None => match est.reset_at {
                Some(reset) if now >= reset => self.capacity(),
                _ => Some(est.tokens),
            },
        }
    }

    /// Takes one unit at `now`, or says how long until one is there.
    /// `seq`: the engine's number for the send, if it goes (to match its
    /// answer in [`Self::answered`]).
    pub(crate) fn admit(&mut self, now: Instant, seq: Option<u64>) -> Result<(), Duration> {
        let admitted = match self.learned_cycle() {
            Some(_) if self.take_reported_unit() => Ok(()),
            Some((burst, period)) => self.cycle_go(now, burst, period).map(|probe| {
                if let (Some(span), Some(seq)) = (probe, seq) {
                    self.refine.sent(seq, span);
                }
            }),
            None => self.take_unit(now),
        };
        if admitted.is_ok() {
            self.sends += 1;
            if self.policy_capacity.is_some() && self.paced_from.is_none() {
                self.paced_from = seq;
            }
            self.promise.sent(seq);
            self.drawdown.sent(now, seq);
            self.counted.sent(seq);
            // The sends a learned cycle is counted against: with a policy
            // (a sliding log's, module docs 7), or, without, once a refusal
            // started learning.
            if self.policy_capacity.is_some() || self.learned.capacity().is_some() {
                self.cycle.record(now, seq);
            }
        }
        admitted
    }

    /// Whether the mirror is spent and nothing says when a unit comes back
    /// (no rate, no reset ahead, no learned cycle): the next send would go
    /// blind (`take_unit` lets it, and the server tells). Asked after a
    /// send took a unit, it says that send's answer is the only news.
    pub(crate) fn next_unit_unknown(&self, now: Instant) -> bool {
        self.learned_cycle().is_none()
            && self.rate().is_none()
            && self.estimate.is_some_and(|est| {
                est.tokens < 1.0 - EPSILON && est.reset_at.is_none_or(|reset| reset <= now)
            })
    }

    /// Whether [`Self::admit`] at `now` would let a send go, taking
    /// nothing. A probe due at `now` (`refill.rs`) is not counted: it is
    /// timed, not news.
    pub(crate) fn ready(&self, now: Instant) -> bool {
        match self.learned_cycle() {
            Some(_) if self.reported_unit() => true,
            Some((burst, period)) => self.cycle_wait(now, burst, period).is_none(),
            None => match self.available(now) {
                None => true,
                Some(available) if available >= 1.0 - EPSILON => true,
                Some(_) if self.rate().is_some() => false,
                Some(_) => self
                    .estimate
                    .is_none_or(|e| e.reset_at.is_none_or(|reset| reset <= now)),
            },
        }
    }

    /// In a sliding log, a unit the last reading reported and nobody took
    /// since (units come back only as sends leave the log, so no refill is
    /// added): a unit the server says is back goes before the cycle rule,
    /// which counts each send from its answer, would let it.
    fn take_reported_unit(&mut self) -> bool {
        let reported = self.reported_unit();
        if let Some(est) = self.estimate.as_mut().filter(|_| reported) {
            est.tokens -= 1.0;
        }
        reported
    }

    /// Whether a sliding log's last reading reported a unit nobody took.
    fn reported_unit(&self) -> bool {
        self.sliding() && self.estimate.is_some_and(|e| e.tokens >= 1.0 - EPSILON)
    }

    /// How long the learned cycle holds the next send. While the cycle is
    /// only a lower bound of the window (`learned.rs`), a cycle opens with
    /// one send alone: refused, its hint shows the window's true end at the
    /// price of one refusal, not of every request in flight.
    fn cycle_wait(&self, now: Instant, burst: f64, period: Duration) -> Option<Duration> {
        self.cycle_go(now, burst, period).err()
    }

    /// [`Self::cycle_wait`] as a verdict: `Ok` with the span when the send
    /// may go as a probe narrowing the cycle (`refine.rs`).
    fn cycle_go(
        &self,
        now: Instant,
        burst: f64,
        period: Duration,
    ) -> Result<Option<Duration>, Duration> {
        let returning = self.learned.coarse_return().filter(|&(since, back)| {
            self.cycle.unanswered_count_since(since) as u64 >= back.max(1)
        });
        if returning.is_some() {
            return Err(period);
        }
        let wait = self.cycle.wait(now, burst, period).or_else(|| {
            self.learned
                .unconfirmed_cycle_end()
                .filter(|&end| self.cycle.unanswered_since(end))
                .map(|_| period)
        });
        let Some(wait) = wait else {
            return Ok(None);
        };
        // A probe is timed only from sends that left after the last one
        // refused: one per cycle.
        let probe = self.refine.span(period, burst).filter(|_| {
            self.policy_capacity.is_none()
                && self
                    .refine
                    .refused_at()
                    .is_none_or(|at| self.cycle.sent_since(burst, at))
        });
        let Some(span) = probe else {
            return Err(wait);
        };
        match self.cycle.wait(now, burst, span) {
            None => Ok(Some(span)),
            Some(sooner) => Err(sooner.min(wait)),
        }
    }

    /// The burst and cycle learned from refusals, once they are known to
    /// pace this quota (no policy stated; module docs, 2).
    fn learned_cycle(&self) -> Option<(f64, Duration)> {
        if self.sliding() {
            return self.window_of_limit();
        }
        if self.policy_capacity.is_some()
            || !self.window.is_known()
            || self.learned.trickle().is_some()
        {
            return None;
        }
        Some((self.learned.capacity()?, self.learned.period()?))
    }

    fn take_unit(&mut self, now: Instant) -> Result<(), Duration> {
        let Some(available) = self.available(now) else {
            return Ok(());
        };
        if available >= 1.0 - EPSILON {
            self.spend(now, available);
            return Ok(());
        }
        let Some(est) = self.estimate else {
            return Ok(());
        };
        match self.rate() {
            Some(rate) => {
                if let Some(reset) = est.reset_at.filter(|r| est.barrier && now < *r) {
                    if let Some(promised) = self.promise.before(reset) {
                        return Err(promised.saturating_duration_since(now));
                    }
                    let at_reset = self.available(reset).unwrap_or(0.0);
                    let extra = if at_reset >= 1.0 {
                        0.0
                    } else {
                        (1.0 + SAFETY - at_reset) / rate
                    };
                    Err(reset
                        .saturating_duration_since(now)
                        .saturating_add(wait_from_secs(extra)))
                } else {
                    Err(wait_from_secs((1.0 + SAFETY - available) / rate))
                }
            }
            None => match est.reset_at {
                Some(reset) if reset > now => self.probe_or_wait(now, est.at, reset),
                _ => {
                    // Nothing says when units come back: send and let the
                    // server tell us (its refusal carries a hint or starts a
                    // backoff).
                    self.estimate = None;
                    Ok(())
                }
            },
        }
    }

    fn spend(&mut self, now: Instant, available: f64) {
        let promised = self.promise.due(now);
        let Some(est) = self.estimate.as_mut() else {
            return;
        };
        let before_barrier = est.barrier && est.reset_at.is_some_and(|r| now < r);
        if before_barrier {
            if promised && est.tokens < 1.0 {
                est.tokens = 1.0;
                self.promise.lend();
            }
            est.tokens -= 1.0;
        } else {
            est.tokens = available - 1.0;
            est.at = now;
            est.barrier = false;
            if est.reset_at.is_some_and(|r| now >= r) {
                est.reset_at = None;
            }
        }
    }

    /// Re-syncs from a response's quota, received at `now`, with `others`
    /// of our requests still in flight.
    pub(crate) fn sync(&mut self, now: Instant, reading: QuotaReading, others: u32) {
        self.promise.read(now);
        if reading.fixed_window {
            self.refill = Refill::Stated;
        }
        if let Some(limit) = reading.limit {
            self.policy_capacity = Some(limit as f64);
            if let Some(window) = reading.window.filter(|w| !w.is_zero()) {
                self.policy_rate = Some(limit as f64 / secs(window)).filter(|r| *r > 0.0);
            }
        }
        let Some(remaining) = reading.remaining else {
            return;
        };
        // In a fixed window, or while nothing refills the mirror before the
        // reset (a quota without a window, not yet probed), a higher count
        // for the same end is older news than the mirror holds: lifting it
        // to `remaining − others` would take a unit already gone. Only with
        // other requests of ours in flight, though: alone, no count can be
        // older than the last one read, and a rise is units coming back (a
        // sliding log read as windows: held back, they cost a whole reset).
        // Whatever the reset's precision, a count no higher than our
        // requests in flight at the lowest reading could hold is theirs,
        // answered late (`Window::stale_in_flight`).
        let counts_fall = self.windowed() || self.rate().is_none();
        let falls_only = counts_fall && others > 0;
        if self.window.stale(falls_only, now, remaining, reading.reset)
            || self.window.stale_in_flight(counts_fall, now, remaining)
        {
            self.counted_before_latest(now, reading);
            return;
        }
        // The answer to the send a refusal's hint let go before the
        // window's guaranteed end: unless it reads a whole window (the
        // limit less the send it answers and those in flight), it
        // tells nothing of the window (a bucket's unit, or a count off by
        // one), and the mirror holds to that end (`promise.rs`).
        let opened_whole = self
            .policy_capacity
            .is_some_and(|limit| !opens_short(remaining, others, limit as u64));
        if self.promise.answered(reading.seq, opened_whole) && !opened_whole {
            return;
        }
        // A count the server made before the latest one read (the answer
        // to a send then in flight, reading higher) is older news: with a
        // stated rate (which refills the mirror anyway) or in a fixed
        // window, it re-syncs nothing, is no base to judge others' spending
        // from, and in a fixed window gives back the unit kept for its send
        // (`counted.rs`). Past the quota's reset, counts start again.
        let reset_passed = self.window.ends_at().is_some_and(|end| now >= end);
        let older_news = !reset_passed && self.counted.older_news(reading.seq, remaining);
        if older_news && (self.policy_rate.is_some() || self.windowed()) {
            self.note_older(now, reading);
            return;
        }
        self.last_reading = Some((now, remaining));
        let could_hold = remaining
            .saturating_add(u64::from(others))
            .saturating_add(1);
        self.most_read = self.most_read.max(could_hold);
        self.reset_beyond_window = reading.reset.is_some_and(|r| !self.within_a_window(r));
        let raw_remaining = remaining;
        let policy_limit = self.policy_rate.and(self.policy_capacity);
        let admitted = self.drawdown.admitted();
        self.sharing
            .notice_others(now, remaining, others, policy_limit, admitted);
        if !older_news {
            self.counted.read(remaining, reading.seq, others, admitted);
        }
        if !self.drains
            && (self.unrefilled(now, reading.seq, raw_remaining)
                || self.reset_refutes_bucket(raw_remaining, &reading))
        {
            self.window.recognise();
        }
        // Leave the reserve to newcomers; when someone spent from it, wait
        // until it is back.
        let remaining = remaining as f64 - self.reserve(now);
        // Sharing a quota with others (a refusal said so), claim only our
        // share of what is left.
        let share = self.sharing.share();
        let low = remaining * share - f64::from(others);
        // A counter's `remaining` is the floor of a weighted count that
        // decays at its own pace, not a bucket's fraction refilling at
        // ours: `R` is all it surely holds. Read as up to `R + 1`, the
        // unit after its last one goes a moment later and may be refused:
        // cheap when the refusal's hint is precise, a whole second when it
        // is `Retry-After` (on `must_show`'s counter with IETF fields and
        // `Retry-After` seconds, a refusal per window: 106 requests in
        // 6.5 s for 100 successes; with `R` alone, 101 in 4.7 s, the floor).
        // So is a quota without a window probed once more (`refill.rs`):
        // a counter, as far as its readings show.
        let high = if (self.counter || self.probed_again()) && self.coarse_hints {
            remaining * share
        } else {
            (remaining + 1.0) * share - HIGH_MARGIN
        };
        let tokens = match self.available(now) {
            // A counter's count falls as its previous window's weight
            // decays, by about the units it admitted, the pace the mirror
            // already refills at: a unit it shows above the mirror is that
            // decay, not a unit to spare. Taken at once (the `1` a window's
            // first reading shows), the sends after it at the pace find the
            // count a unit higher each window until one is refused (on
            // `must_show`'s counter with IETF fields and `Retry-After`
            // seconds, c=4, a refusal that costs a whole second).
            Some(current) if self.counter => current.min(high),
            // Above what the reading allows, the mirror overestimated: the
            // fraction it held is not the server's, and the top of the
            // range (a unit less a hair, when the reading says none) is a
            // guess. A send on it is refused when the server's fraction is
            // low; where refusals cost whole seconds (the last hint was
            // whole seconds, or none) the low end is taken, which costs at
            // most a unit's time, once. With precise hints a refusal costs
            // little: the top, as for any reading.
            Some(current) if current > high && self.coarse_hints => low,
            Some(current) => current.clamp(low, high),
            None => low,
        };
        self.window.precision(reading.precision());
        self.window.aged(reading.age);
        let window_end = self.window.read(now, raw_remaining, reading.reset, others);
        self.drawdown.read(reading.seq, self.window.surely_fresh());
        // First: a window without a stated rate that opens spent is probed
        // again (a counter's), not read as a log.
        self.judge_refill(now, raw_remaining, others);
        self.notice_sliding(raw_remaining, others);
        if self.sliding() {
            // What the server reports, less what our requests in flight may
            // take: nothing refills until a send leaves the log.
            self.estimate = Some(Estimate {
                tokens: (raw_remaining as f64 - f64::from(others)).max(0.0),
                at: now,
                reset_at: None,
                barrier: true,
            });
            return;
        }
        // A window is over at its end on the server: the send that opens
        // the next one leaves a leg before it, not once a reading could
        // have come back from it (a round trip per window, 100 ms late
        // in each of 1 s windows over 100 ms round trips).
        let reset_at = if self.windowed() {
            window_end.map(|end| end.checked_sub(reading.lead).unwrap_or(end).max(now))
        } else {
            reading.reset.map(|d| later(now, d))
        };
        let barrier = match (self.rate(), reading.reset) {
            _ if matches!(self.refill, Refill::Continuous { .. }) => false,
            (Some(_), Some(_)) if tokens < 1.0 && self.windowed() => true,
            (Some(rate), Some(reset)) if tokens < 1.0 => {
                // A bucket's reset counts to its next unit, or to full
                // again (GitHub-style `X-RateLimit-Reset`), each rounded up:
                // full from what the server holds, `[R, R + 1)`, not from
                // what the mirror leaves us (less the reserve for
                // newcomers and the others' share).
                let next_unit = wait_from_secs((1.0 - tokens) / rate);
                let held = raw_remaining as f64;
                let full = self.capacity().map(|capacity| {
                    let soonest = wait_from_secs((capacity - held - 1.0).max(0.0) / rate);
                    let latest = wait_from_secs((capacity - held).max(0.0) / rate);
                    (
                        soonest.saturating_sub(ROUNDING),
                        latest.saturating_add(ROUNDING),
                    )
                });
                reset > next_unit.saturating_add(ROUNDING)
                    && full.is_none_or(|(soonest, latest)| reset < soonest || reset > latest)
                    && self.within_a_window(reset)
            }
            _ => false,
        };
        self.estimate = Some(Estimate {
            tokens,
            at: now,
            reset_at,
            barrier,
        });
    }

    /// A reading of `remaining` received at `now` in the answer to an
    /// older send than the last one synced: too old to re-sync from, but in
    /// a fixed window the lowest count read is the newest (`window.rs`).
    pub(crate) fn note_older(&mut self, now: Instant, reading: QuotaReading) {
        if let Some(remaining) = reading.remaining {
            self.window.precision(reading.precision());
            self.window.note(now, remaining, reading.reset);
        }
        self.counted_before_latest(now, reading);
    }

    /// A reading of a fixed window received at `now` that re-synced
    /// nothing (older news): the answer to a send of ours in flight at the
    /// latest count, counted before it, gives back the unit the mirror kept
    /// for it (`counted.rs`).
    fn counted_before_latest(&mut self, now: Instant, reading: QuotaReading) {
        let Some(remaining) = reading.remaining else {
            return;
        };
        if !self.windowed() || self.sliding() {
            return;
        }
        let admitted = self.drawdown.admitted();
        let Some((latest, held)) = self
            .counted
            .counted_before(reading.seq, remaining, admitted)
        else {
            return;
        };
        // As synced from the latest count, with fewer sends in doubt.
        let left = latest as f64 * self.sharing.share() - held as f64;
        if let Some(est) = self
            .estimate
            .as_mut()
            .filter(|e| e.reset_at.is_some_and(|end| now < end))
        {
            est.tokens = est.tokens.max(left);
        }
    }

    /// A known window whose next one opens short of the limit, with nobody
    /// else ever seen spending: our own sends of the last window still
    /// hold the missing units (a sliding log; module docs, 7). Short at
    /// its first reading (less the request it answers and those in
    /// flight), or at any reading in it, against every send of ours it may
    /// have counted (an upper bound, `drawdown.rs`: no slack). At
    /// concurrency 4 the requests sent with the first one hide a unit or
    /// two there; a window of 20 that held 19 of our sends shows it at its
    /// last reading.
    fn notice_sliding(&mut self, remaining: u64, others: u32) {
        // Without a stated window, only by a length a precise hint
        // measured: a whole-second hint's end is rounded. (Read by one,
        // `must_show`'s counter with `X-RateLimit-*` and `Retry-After`
        // seconds, whose windows open short too, was taken for a log and
        // its sends ran past `remaining: 0`: 104–108 requests for 100
        // successes at c=1.)
        let measured = self.policy_rate.is_some() || !self.coarse_hints;
        let Some((limit, _)) = self.window_of_limit().filter(|_| measured) else {
            return;
        };
        let limit = limit as u64;
        let short_at_opening = self.window.fresh() && opens_short(remaining, others, limit);
        let short_of_ours = self
            .drawdown
            .window_counts_at_most()
            .is_some_and(|ours| remaining.saturating_add(ours) < limit);
        if self.windowed() && (short_at_opening || short_of_ours) && self.sharing.never_saw_others()
        {
            self.window.slide();
        }
    }

    /// The limit and the window it holds for: the stated policy's, else
    /// the length a refusal's hint measured (`window.rs`: only for a quota
    /// without a stated window whose refused probe made it read as fixed
    /// windows), else, beside whole-second resets, the span the first
    /// precise hint measured (a log's length, for a window opening short).
    fn window_of_limit(&self) -> Option<(f64, Duration)> {
        let limit = self.policy_capacity?;
        let window = self.policy_window().or(self.window.length());
        Some((limit, window.or(self.window.span())?))
    }

    /// A reading of `remaining` in the answer to send `seq`, received at
    /// `now`, shows a quota with a stated rate that did not refill at it
    /// while we alone drew it down, before any refusal: a window
    /// (`drawdown.rs`). A client that ever saw others spending leaves this
    /// to the refusal (a herd's readings mix their spending with ours); a
    /// reset beyond one window is a counter's, not a window's end.
    fn unrefilled(&mut self, now: Instant, seq: Option<u64>, remaining: u64) -> bool {
        let (Some(rate), Some(limit)) = (self.policy_rate, self.policy_capacity) else {
            return false;
        };
        // Known once, known for good: no reading to keep after that.
        if self.windowed() {
            return false;
        }
        let unrefilled = self.drawdown.unrefilled(now, seq, remaining, rate, limit);
        unrefilled
            && !self.counter
            && !self.reset_beyond_window
            && self.sharing.never_saw_others()
            && self.sharing.drew_alone(now, limit)
    }

    /// A reading whose reset is further than any bucket refilled at the
    /// stated rate could name: such a bucket is whole again within
    /// `(capacity − remaining) / rate` (GitHub-style resets count to full; a
    /// next unit's is sooner), and the reset is that, at most, within its
    /// precision. Units come back at a boundary, not at the rate: a window
    /// (a reset beyond one window is a counter's: `within_a_window`).
    /// Seen at the first reading that leaves a unit unspent, before the
    /// drawdown shows it (a window of 18 per 73 s read `17` and `t=69`: a
    /// bucket at that rate is full in 4 s; read as one, its last unit was
    /// kept in reserve and the job took a window more).
    fn reset_refutes_bucket(&self, remaining: u64, reading: &QuotaReading) -> bool {
        let (Some(rate), Some(limit), Some(reset)) =
            (self.policy_rate, self.policy_capacity, reading.reset)
        else {
            return false;
        };
        if self.windowed() || self.reset_beyond_window || !self.sharing.never_saw_others() {
            return false;
        }
        // A bucket may hold more than the policy's quota per window: as
        // much as any reading may have shown.
        let capacity = limit.max(self.most_read as f64);
        let full = wait_from_secs((capacity - remaining as f64).max(0.0) / rate);
        // A bucket's reset rounds that up to a whole second, whatever
        // locates it: an epoch read against a local clock in step with
        // `Date` is a wait to the nanosecond naming a whole second (read
        // as exact, every bucket of the demo server's headers was a window
        // at its first reading, and a herd's late starters then a log).
        reset > full.saturating_add(reading.precision().max(ROUNDING))
    }

    /// Whether the latest refusal answered a send that left blind (before
    /// any policy was read) while `limit` other sends of ours, admitted or
    /// out, may have been counted before it (in whatever order the server
    /// took them): our own first burst overran the quota, which says
    /// nothing of others or of the quota's kind. (A newcomer refused with
    /// fewer out finds the quota spent by others.)
    fn own_burst(&self, limit: f64) -> bool {
        let blind = self
            .refused_seq
            .is_some_and(|refused| self.paced_from.is_none_or(|from| refused < from));
        blind && self.sends.saturating_sub(self.refusals) as f64 >= limit
    }

    /// The stated window: `limit` units per this.
    fn policy_window(&self) -> Option<Duration> {
        Some(wait_from_secs(self.policy_capacity? / self.policy_rate?))
    }

    /// Whether `reset` fits in one stated window, rounded up to whole
    /// seconds as resets are: a fixed window's end is never further. (A
    /// sliding window counter's reset, when its current window's count has
    /// left the weighted pair, is up to two windows away.)
    fn within_a_window(&self, reset: Duration) -> bool {
        let Some(window) = self.policy_window() else {
            return true;
        };
        let whole = window.as_secs() + u64::from(window.subsec_nanos() > 0);
        reset <= Duration::from_secs(whole)
    }

    /// Whether the quota refills at boundaries: a refusal while alone said
    /// so (with a policy), or a refused probe (without one).
    /// The kind of quota this mirror paces now (`engine/kind.rs`; the rows
    /// of the table above).
    pub(crate) fn kind(&self) -> QuotaKind {
        if self.sliding() {
            QuotaKind::SlidingLog
        } else if self.counter || self.learned.trickle().is_some() {
            QuotaKind::SlidingCounter
        } else if self.windowed() {
            QuotaKind::FixedWindow
        } else if self.rate().is_some() {
            QuotaKind::Bucket
        } else {
            QuotaKind::Unknown
        }
    }

    /// When the current fixed window is surely over, as its readings
    /// guarantee (`window.rs`), if it is one and that is ahead of `now`.
    pub(crate) fn window_end(&self, now: Instant) -> Option<Instant> {
        self.window
            .ends_at()
            .filter(|end| *end > now && self.windowed() && !self.sliding())
    }

    fn windowed(&self) -> bool {
        (self.window.is_known() && !self.drains) || self.refill.windowed()
    }

    /// Whether the quota is paced as a sliding log: recognised as one,
    /// and no drain measured since (`drain.rs`).
    fn sliding(&self) -> bool {
        self.window.is_sliding() && !self.drains
    }

    /// The units of a continuously refilled quota left for newcomers: none
    /// once we know we are alone (see the module docs).
    fn reserve(&self, now: Instant) -> f64 {
        match (self.policy_capacity, self.policy_rate) {
            // A window's units left unspent are lost at its boundary.
            _ if self.windowed() => 0.0,
            (Some(limit), Some(_)) => self.sharing.reserve(now, limit),
            _ => 0.0,
        }
    }

    /// Send `seq` ended, at `at` when known: answered (a verdict may
    /// follow, [`Self::answered`]), failed or cancelled. Nothing waits for
    /// its answer any more (`cycle.rs`).
    pub(crate) fn ended(&mut self, seq: u64, at: Option<Instant>) {
        self.cycle.ended(seq, at);
        self.refine.ended(seq);
    }

    /// Send `seq` was answered at `now`: a success holds a unit until the
    /// quota gives it back, a refusal none (the cycle rule counts only
    /// units held; `cycle.rs`).
    pub(crate) fn answered(&mut self, seq: u64, now: Instant, success: bool) {
        self.drawdown.answered(seq);
        if let Some(span) = self.refine.answered(seq, now, success) {
            self.learned.narrowed(span);
        }
        if success {
            self.cycle.answered(seq, now);
        } else {
            self.refused_seq = Some(seq);
            self.refusals += 1;
            self.promise.answered(Some(seq), false);
            self.cycle.forget(seq);
        }
    }

    /// A send that was in flight when the last refusal came, refused too
    /// (no news of the quota: that refusal said it was spent). It took no
    /// unit, so the one the mirror still reserves for it comes back, up
    /// to the empty quota that refusal left.
    pub(crate) fn refused_in_flight(&mut self) {
        if let Some(est) = self.estimate.as_mut().filter(|e| e.tokens < 0.0) {
            est.tokens = (est.tokens + 1.0).min(0.0);
        }
    }

    /// A non-throttled response received at `now`: one more unit the
    /// server granted (to a request sent before the last refusal, if
    /// `sent_before_refusal`: its unit belongs to the burst refused).
    pub(crate) fn on_success(&mut self, now: Instant, sent_before_refusal: bool) {
        // The first success after a bare (or one-second) refusal, or a
        // return faster than a bucket gives, confirms the window: from now
        // on, spend the burst and wait for its end (`learned.rs`).
        let returning = self.learned.awaiting_return() && !sent_before_refusal;
        if self.learned.on_success(now, sent_before_refusal) && self.policy_capacity.is_none() {
            self.window.recognise();
        }
        if returning {
            self.ramp_return();
        }
        self.successes += 1;
        self.sharing.on_success();
        if let Refill::Probing { rate, .. } = self.refill {
            self.refill = Refill::Continuous { measured: false };
            self.observed_rate = Some(rate);
        }
        self.observe_refills();
    }

    /// A success of a spent burst's return after a precise hint (no
    /// policy stated): one more unit after the first (the promised one),
    /// two after each later one, up to the burst, so the return doubles
    /// each round trip while the server keeps giving (module docs, 2). A
    /// bucket giving one unit per hint refuses the first extra only.
    fn ramp_return(&mut self) {
        if self.policy_capacity.is_some() || !self.learned.awaiting_return() {
            return;
        }
        let burst = self.capacity().unwrap_or(1.0).max(1.0);
        let back = self.learned.successes_since_throttle() as f64;
        let step = if back <= 1.0 { 1.0 } else { 2.0 };
        let more = (burst - back).clamp(0.0, step);
        if let Some(est) = self.estimate.as_mut() {
            est.tokens = (est.tokens + more).min(burst);
        }
    }

    /// A throttled response received at `now`, with the server's hint if
    /// any, and `spread`: how much two of the scope's round trips differ by
    /// chance (`round_trip.rs`; the precision of a hint's end, `learned.rs`).
    /// Returns how long until the mirror expects a unit back, when it
    /// knows (a window's end, a rate, a reset; zero when one may be back
    /// already): the wait to use when the server gave no hint.
    pub(crate) fn on_throttle(
        &mut self,
        now: Instant,
        hint: Option<Hint>,
        spread: Duration,
    ) -> Option<Duration> {
        if self.refine.was_probe(self.refused_seq) {
            // A probe narrowing the learned cycle, refused: the window is
            // longer than its span, and that is all it says; the cycle
            // goes on (`refine.rs`).
            self.last_reading = None;
            let (burst, period) = self.learned_cycle()?;
            return self.cycle_wait(now, burst, period);
        }
        if let Some(span) = self.learned.searched_span(now) {
            self.refine.shorter_than(span);
        }
        self.refused(now, hint, spread);
        if let Some((burst, period)) = self.learned_cycle() {
            return self.cycle_wait(now, burst, period);
        }
        if self.rate().is_none() && self.estimate.is_none_or(|e| e.reset_at.is_none()) {
            return None;
        }
        // What `admit` would answer now, without taking a unit or a probe
        // (now: the backoff alone spaces the retry).
        Some(self.clone().take_unit(now).err().unwrap_or(Duration::ZERO))
    }

    fn refused(&mut self, now: Instant, stated: Option<Hint>, spread: Duration) {
        self.last_reading = None;
        self.window.refused(now);
        self.coarse_hints = stated.is_none_or(|h| h.is_coarse());
        let hint = stated.map(|h| h.wait);
        // Refused although the learned cycle (or the trickle after it) let
        // the send go: the burst does not come back whole (`learned.rs`).
        if self.policy_capacity.is_none()
            && (self.learned_cycle().is_some() || self.learned.trickle().is_some())
        {
            self.learned.refused_in_cycle(now, stated, spread);
        }
        self.spent_unprobed = self.policy_rate.is_none()
            && self.policy_capacity.is_some()
            && self.refill == Refill::Unknown
            && self
                .available(now)
                .is_some_and(|units| units < 1.0 - EPSILON);
        match self.refill {
            // Refills seen, or after the second probe's success
            // (`Self::judge_refill`): the pace was too fast, not the quota
            // of another kind. No probe is left then to correct a wrong
            // verdict, and a sliding window counter's reset names the end
            // of its two-window weight: read as windows for good, it is
            // spent once per two windows (as the demo server's counter with
            // `X-RateLimit-*` was at c=4).
            Refill::Continuous { measured } if measured || self.probed_again() => {
                self.observed_rate = self.observed_rate.map(|r| r / 2.0);
                self.first_reading = None;
            }
            // The probe refused, or a refusal before any refill was seen
            // (the success taken for the probe's may have been an earlier
            // request's): fixed windows.
            Refill::Probing { .. } | Refill::Continuous { .. } => {
                self.refill = Refill::Windowed;
                self.observed_rate = None;
            }
            Refill::Unknown | Refill::Windowed | Refill::Stated => {}
        }
        // Without quota numbers: refused again (with a hint) after spending
        // most of the burst learned from the first refusal within the
        // learned cycle, the units come back at once (a window), not at the
        // rate; from now on, burst then wait. The cycle bounds the window's
        // length (to the hints' grain and the round trip's spread), so a
        // window refuses only sends within one cycle of a burst that spent
        // it: a refusal after that burst was spread over more than a cycle
        // (paced at a measured rate, a unit's time too fast) says the rate
        // erred, not that a window came. (Bare refusals: see `on_success`.)
        let burst_spent = self.learned.capacity().is_some_and(|c| {
            let spent = self.learned.successes_since_throttle() as f64 >= c * BURST_SPENT;
            let in_cycle = self.learned.period().is_none_or(|period| {
                let span = period
                    .saturating_add(self.learned.grain())
                    .saturating_add(spread);
                self.cycle.sent_within(now, c * BURST_SPENT, span)
            });
            spent && in_cycle
        });
        if self.policy_capacity.is_none() && hint.is_some() && burst_spent {
            self.window.recognise();
        }
        if let (Some(_), Some(limit)) = (self.policy_rate, self.policy_capacity)
            && !self.own_burst(limit)
        {
            // Refused after drawing the quota down alone: not others, the
            // quota's kind (its units come back at a boundary).
            if self.sharing.drew_alone(now, limit) {
                if self.reset_beyond_window {
                    self.counter = true;
                } else if !self.drains {
                    self.window.recognise();
                }
            } else {
                self.sharing.on_refusal();
            }
        }
        // A quota without a stated window (`X-RateLimit-*`) refused its
        // probe: its hint may show it off the second grid (window.rs).
        if let Some(h) = hint.filter(|h| !h.is_zero())
            && self.policy_rate.is_none()
            && self.refill.windowed()
        {
            self.window
                .hinted(now, h, self.coarse_hints, self.learned.burst_start());
            if self.coarse_hints {
                self.window.ends_by_rounded_hint(now, h);
            } else {
                self.window.ends_by_hint(later(now, h));
            }
        }
        self.learned
            .on_throttle(now, stated, self.policy_capacity.is_some(), spread);
        let unit = self
            .policy_rate
            .or(self.observed_rate)
            .map(|rate| wait_from_secs(1.0 / rate));
        self.promise.refused(now, hint, self.coarse_hints, unit);
        // The bucket is empty now, whatever we thought.
        let tokens = self.available(now).unwrap_or(0.0).min(0.0);
        let windowed = self.windowed();
        let window_end = self.window.ends_at().filter(|_| windowed);
        let (reset_at, barrier) = self.estimate.map_or((window_end, false), |e| {
            let reset_at = window_end.or(e.reset_at);
            (reset_at, e.barrier || (windowed && reset_at.is_some()))
        });
        self.estimate = Some(Estimate {
            tokens,
            at: now,
            reset_at,
            barrier,
        });
    }
}

#[cfg(test)]
mod tests;
