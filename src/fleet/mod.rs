//! A fleet of processes sharing one quota through Redis (feature `redis`).
//!
//! Many workers on one API key each learn alone unless they share what the
//! server said. With a [`RedisFleet`] every process that names a scope alike
//! shares, through one Redis (or Redis Cluster):
//!
//! - **the pause**: one 429 anywhere pauses the whole fleet until its hint;
//! - **what was learned**: the policy's limit and window (so its rate), the
//!   kind of quota, and the last `remaining`, merged so that a stale
//!   reading only ever tightens (the longer interval and the smaller burst
//!   win); a looser policy replaces the shared one only once that went
//!   unconfirmed by any reading for a whole key TTL ([`RedisFleetBuilder::key_ttl`]), the
//!   sign that the server's policy really changed;
//! - **send slots**: a GCRA reservation (a theoretical arrival time) made by
//!   one Lua script, one round trip per send. Time is Redis `TIME` only, so
//!   processes on skewed clocks agree. Waiting processes hold distinct slots
//!   one interval apart, so nobody stampedes when a pause ends.
//!
//! Every slot is held back by a headroom (100 ms in whole intervals,
//! [`RedisFleetBuilder::headroom`]): a send reaches the server a little
//! after its slot, and a full bucket loses the refill of that time.
//!
//! Until the server has said anything, one process probes and the others
//! ask again every 20 ms: a fleet starting together does not send blind into
//! an empty bucket. The same holds after the fleet went idle on a scope for a
//! whole refill (nothing granted and nothing read for `burst` intervals):
//! the server's bucket is full again, and a burst from a full bucket loses
//! the refill of every moment its sends spend on the way. Those are first
//! sends on cold connections, often from processes that just started, and
//! a stalled path or a host busy starting them delays them all together (a
//! herd of 100 processes on 2 cores saw its first sends answered about
//! 650 ms late, all at once, and a third of them refused). So one probe
//! goes first, and the burst follows its answer, when the path has shown
//! that it answers. This costs an idle fleet's first send one more store
//! call (the probe publishes its answer) and the others one round trip of
//! waiting; a scope used less often than once per refill pays the extra
//! call on every send. The probe lease is held under the reservation's token,
//! so a process gives up only its own lease; a lease granted to a
//! reservation whose answer came too late is given up by that process's
//! next reservation.
//!
//! # One round trip per send
//! A steady process makes one store call per send: the reservation. What a
//! response taught rides along with the next reservation (merged by the
//! same rules first, its age taken into account), unless the others must
//! hear it at once: a probe's answer, a refusal (its pause holds the whole
//! fleet), an empty quota, or a policy tighter than the shared one. A kept
//! lesson whose process never sends again on that scope is not shared; it
//! only confirmed what the fleet knew.
//!
//! # Redis trouble never stops a request
//! Each store call has a deadline ([`DEFAULT_DEADLINE`], 20 ms; 1 s,
//! [`FIRST_CALL_DEADLINE`], until the store has answered this process
//! once, since a process that knows nothing can only fall back blind),
//! stretched on a loaded host to the round trips the calls really take
//! (TCP's retransmission timer, RFC 6298, doubled after a missed deadline
//! for the retry before the breaker opens, never beyond the first-call
//! deadline:
//! [`RedisFleet::current_deadline`]). On a
//! timeout or an error the request goes on, paced by the local engine as
//! without a fleet *and* at [`FALLBACK_SHARE`] of an equal share of the last
//! shared rate (a scope the fleet never rated goes on alone, unless this
//! process last heard that another one probes it: then it holds back until
//! that probe lease would have ended, 2 s at most); after 2 failures in a
//! row a breaker skips Redis for 1 s
//! ([`BreakerSettings`]), then one call tries again. When Redis answers, the
//! process rejoins: the next reservation is the fleet's again, and the next
//! response's reading merges into the shared state (tightening it if the
//! processes overspent while apart).
//!
//! # Fairness
//! Slots go first come, first served (GCRA on one key). Each process holds
//! at most one slot per request in flight, so a process joining late waits
//! at most one interval per slot already held (`processes × concurrency ×
//! interval`, plus the headroom of about 100 ms, and on a scope the fleet
//! left idle the probe's round trip) before its first send, and processes
//! asking equally often get equal shares. There is no priority and no
//! starvation: a slot, once reserved, is never taken back.
//!
//! # Keys
//! `courteous:v1:{<digest of the scope>}:state` (a hash) and `…:members` (a
//! sorted set of the processes seen in the last 10 s); the braces are a
//! Redis Cluster hash tag, so both keys of a scope live in one slot. Every
//! key has a TTL (10 min after its last use by default, longer while a
//! pause or a slot queue reaches further).

mod breaker;
mod carry;
mod deadline;
mod error;
mod gate;
mod keys;
mod lesson;
mod store;

pub use breaker::{BreakerSettings, FALLBACK_SHARE, MAX_FAILURES_TO_OPEN, MAX_OPEN_FOR};
pub use error::FleetError;
pub use lesson::{Lesson, QuotaKind};
pub use store::{
    DEFAULT_DEADLINE, DEFAULT_PREFIX, FIRST_CALL_DEADLINE, FleetCounters, MAX_KEY_TTL, RedisFleet,
    RedisFleetBuilder, Reservation, cluster_nodes,
};

pub(crate) use gate::{FleetGate, Turn};
