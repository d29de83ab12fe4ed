//! The fleet as the request loop sees it: reserve before each send, publish
//! after each response, and pace locally while Redis is away.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::breaker::{Breaker, Fallback, Shared};
use super::lesson::Lesson;
use super::store::{RedisFleet, Reservation};
use crate::engine::{Admit, Cost, Engine, ScopeHandle, WaitReason};
use crate::signal::Signal;

/// A [`RedisFleet`] with this process's breaker and fallback pacing.
#[derive(Debug, Clone)]
pub(crate) struct FleetGate {
    store: RedisFleet,
    local: Arc<Mutex<Local>>,
}

#[derive(Debug)]
struct Local {
    breaker: Breaker,
    fallback: Fallback,
}

/// One request's standing with the fleet: the slot it holds, and whether
/// its send probes for the fleet.
#[derive(Debug, Default)]
pub(crate) struct Turn {
    held: Option<Instant>,
    probe: bool,
}

impl FleetGate {
    pub(crate) fn new(store: RedisFleet) -> Self {
        let breaker = Breaker::new(store.breaker_settings());
        Self {
            store,
            local: Arc::new(Mutex::new(Local {
                breaker,
                fallback: Fallback::default(),
            })),
        }
    }

    fn local(&self) -> MutexGuard<'_, Local> {
        self.local.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Before a send at `at`: the fleet's slot when Redis answers in time,
    /// the local engine (and a cut share of the last shared rate) when not.
    /// `longest` is the longest wait the caller accepts: a slot further
    /// away is not reserved, and its wait is returned for the caller to
    /// give up on.
    pub(crate) async fn admit(
        &self,
        engine: &Engine,
        handle: &ScopeHandle,
        at: Instant,
        longest: Duration,
        turn: &mut Turn,
        costs: &[Cost],
    ) -> Admit {
        if let Some(slot) = turn.held {
            if slot > at {
                return Admit::After {
                    wait: slot - at,
                    reason: WaitReason::Pacing,
                };
            }
            turn.held = None;
            return engine.admit_unpaced_in(handle, at, costs);
        }
        // A local pause (this process was refused, or learned one) is asked
        // first: a slot reserved now could not be used, and would be thrown
        // away and reserved again on every turn of the loop.
        if let Some(wait) = engine.paused_for_in(handle, at) {
            return Admit::After {
                wait,
                reason: WaitReason::Paused,
            };
        }
        let scope = handle.scope().as_str();
        // A failed call is tried again until the breaker opens (2 failures
        // in a row by default), so one late answer on a busy machine costs
        // one more call, not a blind send.
        while self.local().breaker.allows(crate::service::now()) {
            let answer = self.store.reserve_within(scope, Some(longest)).await;
            let now = crate::service::now();
            let reservation = match answer {
                Ok(reservation) => reservation,
                Err(error) => {
                    tracing::debug!(%error, "courteous: fleet store call failed");
                    self.local().breaker.failure(now);
                    continue;
                }
            };
            self.answered();
            return match reservation {
                Reservation::Go {
                    after,
                    members,
                    interval,
                    probe,
                } => {
                    if let Some(interval) = interval {
                        let slot = crate::engine::later(now, after);
                        self.local()
                            .fallback
                            .remember(scope, Shared { interval, members }, slot);
                    }
                    turn.probe = probe;
                    if after.is_zero() {
                        return engine.admit_unpaced_in(handle, now, costs);
                    }
                    turn.held = Some(crate::engine::later(now, after));
                    Admit::After {
                        wait: after,
                        reason: WaitReason::Pacing,
                    }
                }
                Reservation::AskAgain { after } => {
                    let until = crate::engine::later(now, self.store.probe_lease());
                    self.local().fallback.probing(scope, until);
                    Admit::After {
                        wait: after,
                        reason: WaitReason::Paused,
                    }
                }
                // Beyond `longest`: the caller gives up on this wait.
                Reservation::TooFar { after } => Admit::After {
                    wait: after,
                    reason: WaitReason::Pacing,
                },
            };
        }
        tracing::debug!("courteous: fleet store unavailable; pacing locally");
        let now = crate::service::now();
        let wait = self.local().fallback.take(scope, now, self.store.poll());
        if !wait.is_zero() {
            return Admit::After {
                wait,
                reason: WaitReason::Pacing,
            };
        }
        engine.admit_in(handle, now, costs)
    }

    /// After a response: share what it taught. A probe's answer, a
    /// refusal or news ([`Lesson::is_news`]) is published at once (one
    /// round trip per probe or refusal); a reading that only confirms what
    /// the fleet knows rides along with this process's next reservation
    /// ([`RedisFleet::defer`]), so a steady process makes one round trip
    /// per send. A lesson that cannot be published now (breaker open, call
    /// failed) is kept the same way, and merges when Redis answers again.
    pub(crate) async fn learn(
        &self,
        handle: &ScopeHandle,
        turn: &mut Turn,
        refused: bool,
        signal: &Signal,
        pause: Option<Duration>,
    ) {
        let lesson = Lesson::from_response(refused, signal, pause);
        let probe = std::mem::take(&mut turn.probe);
        if !lesson.teaches() && !probe {
            return;
        }
        let scope = handle.scope().as_str();
        let shared = self.local().fallback.interval(scope);
        if !probe && !lesson.is_news(shared, self.store.margin()) {
            self.store.defer(scope, lesson);
            return;
        }
        if !self.local().breaker.allows(crate::service::now()) {
            self.store.defer(scope, lesson);
            return;
        }
        match self.store.publish(scope, &lesson).await {
            Ok(_) => self.answered(),
            Err(error) => {
                tracing::debug!(%error, "courteous: fleet store unavailable; lesson kept for the next call");
                self.store.defer(scope, lesson);
                self.local().breaker.failure(crate::service::now());
            }
        }
    }

    /// After a send that failed before any response (transport error): a
    /// probe releases its lease, so the others need not wait it out.
    pub(crate) async fn abandon(&self, handle: &ScopeHandle, turn: &mut Turn) {
        if !std::mem::take(&mut turn.probe) || !self.local().breaker.allows(crate::service::now()) {
            return;
        }
        match self.store.release_probe(handle.scope().as_str()).await {
            Ok(_) => self.answered(),
            Err(error) => {
                tracing::debug!(%error, "courteous: fleet store unavailable; probe lease left to expire");
                self.local().breaker.failure(crate::service::now());
            }
        }
    }

    fn answered(&self) {
        let mut local = self.local();
        if local.breaker.success() {
            tracing::debug!("courteous: fleet store answers again; rejoining");
            local.fallback.rejoin();
        }
    }
}
